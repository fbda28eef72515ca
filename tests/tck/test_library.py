"""Every public source, operator and processor of reactive_aio, verified by the TCK.

Cases come from every ``tests/tck/cases_*.py`` module (one per branch): ``CASES`` (name →
factory of a publisher of exactly n items), ``LIMITS`` (name → its
``max_elements_from_publisher()``, for cases that cannot make n items), ``FAILED`` (name →
failing publisher), ``PROCESSORS`` (name → identity processor factory given a buffer size) and
``COORDINATED`` (processors that emit in lockstep to all subscribers).

To fit CI (about 70 cases on 2 cores) this runs on the asyncio loop only (see conftest.py) and
with a shorter no-signals window N and GC pause G than the defaults, and a longer T (how long
to wait for an expected signal; it costs nothing when the signal comes), so a loaded CI machine
does not cause false failures.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

import reactive_aio
from reactive_aio import ConnectableFlux, Flux, Processor, Publisher
from reactive_aio.tck import (
    IdentityProcessorVerification,
    PublisherVerification,
    TestEnvironment,
)
from reactive_aio.tck._runner import run_verification

LIBRARY_TIMEOUT = 0.5
"""T for the library run: generous, since a wait for an expected signal ends when it arrives."""
LIBRARY_POLL_TIMEOUT = 0.01
"""P for the library run: ``expect_error`` notices the error soon after it arrives."""
LIBRARY_NO_SIGNALS_TIMEOUT = 0.025
"""N for the library run, in seconds (before the timeout scale)."""
LIBRARY_GC_TIMEOUT = 0.02
"""G for the library run: CPython frees on the last reference, the pause is for callbacks."""


def _collect() -> tuple[
    dict[str, Callable[[int], Publisher[int]]],
    dict[str, Callable[[], Publisher[int]]],
    dict[str, Callable[[int], Processor[int, int]]],
    set[str],
    dict[str, Callable[[], Publisher[int]]],
    dict[str, int],
]:
    cases: dict[str, Callable[[int], Publisher[int]]] = {}
    limits: dict[str, int] = {}
    failed: dict[str, Callable[[], Publisher[int]]] = {}
    processors: dict[str, Callable[[int], Processor[int, int]]] = {}
    single: dict[str, Callable[[], Publisher[int]]] = {}
    coordinated: set[str] = set()
    here = Path(__file__).parent
    for info in sorted(pkgutil.iter_modules([str(here)]), key=lambda m: m.name):
        if not info.name.startswith("cases_"):
            continue
        module = importlib.import_module(f"{__package__}.{info.name}")
        targets = (
            (cases, "CASES"),
            (failed, "FAILED"),
            (processors, "PROCESSORS"),
            (single, "SINGLE"),
            (limits, "LIMITS"),
        )
        for target, attr in targets:
            for key, factory in getattr(module, attr, {}).items():
                assert key not in target, f"{info.name}.{attr}: {key!r} registered twice"
                target[key] = factory
        coordinated |= set(getattr(module, "COORDINATED", set()))
    return cases, failed, processors, coordinated, single, limits


CASES, FAILED, PROCESSORS, COORDINATED, SINGLE, CASE_LIMITS = _collect()
"""``SINGLE``: publishers of exactly one item, for operators that cannot make n lazy items;
``CASE_LIMITS``: max_elements_from_publisher() of the cases that cannot make n items."""


KNOWN_FINDINGS: dict[str, dict[str, str]] = {}
"""Real findings of the kit in other branches' components, xfail (strict) until fixed: a fix
makes the test pass, the strict xfail then fails, and the entry must be removed."""


def _library_env() -> TestEnvironment:
    return TestEnvironment(
        timeout=LIBRARY_TIMEOUT,
        no_signals_timeout=LIBRARY_NO_SIGNALS_TIMEOUT,
        poll_timeout=LIBRARY_POLL_TIMEOUT,
        gc_timeout=LIBRARY_GC_TIMEOUT,
    )


def _publisher_class(name: str, factory: Callable[[int], Publisher[int]]) -> type[Any]:
    class Case(PublisherVerification[int]):
        def create_env(self) -> TestEnvironment:
            return _library_env()

        def create_publisher(self, elements: int) -> Publisher[int]:
            return factory(elements)

        def max_elements_from_publisher(self) -> int:
            return CASE_LIMITS.get(name, super().max_elements_from_publisher())

    for test_name, reason in KNOWN_FINDINGS.get(name, {}).items():
        setattr(Case, test_name, _known_finding(getattr(PublisherVerification, test_name), reason))
    Case.__name__ = Case.__qualname__ = f"TestPublisher_{name}"
    return Case


def _known_finding(test: Callable[[Any], Awaitable[None]], reason: str) -> Any:
    async def known(self: Any) -> None:
        await test(self)

    known.__name__ = test.__name__
    return pytest.mark.xfail(reason=reason, strict=True)(pytest.mark.asyncio(known))


def _processor_class(name: str, factory: Callable[[int], Processor[int, int]]) -> type[Any]:
    class Case(IdentityProcessorVerification[int]):
        def create_env(self) -> TestEnvironment:
            return _library_env()

        def create_identity_processor(self, buffer_size: int) -> Processor[int, int]:
            return factory(buffer_size)

        def create_element(self, element: int) -> int:
            return element

        def does_coordinated_emission(self) -> bool:
            return name in COORDINATED

    Case.__name__ = Case.__qualname__ = f"TestProcessor_{name}"
    return Case


def _single_case(make: Callable[[], Publisher[int]]) -> Callable[[int], Publisher[int]]:
    def create(elements: int) -> Publisher[int]:
        if elements != 1:  # the operator emits exactly one item: tests of 0 items don't apply
            pytest.skip("this operator always emits exactly one item")
        return make()

    return create


for _name, _make in SINGLE.items():
    CASE_LIMITS[_name] = 1
    CASES[_name] = _single_case(_make)
for _name, _factory in CASES.items():
    globals()[f"TestPublisher_{_name}"] = _publisher_class(_name, _factory)
for _name, _processor in PROCESSORS.items():
    globals()[f"TestProcessor_{_name}"] = _processor_class(_name, _processor)


FAILED_TESTS = [
    "test_optional_spec104_must_signal_on_error_when_fails",
    "test_required_spec109_may_reject_calls_to_subscribe_if_publisher_is_unable_or_unwilling_to_serve_them_rejection_must_trigger_on_error_after_on_subscribe",
    "test_extra_spec106_must_drop_the_subscriber_after_on_error",
    "test_extra_spec107_must_not_emit_further_signals_once_on_error_has_been_signalled",
]


@pytest.mark.parametrize("name", sorted(FAILED))
async def test_failed_publisher(name: str) -> None:
    factory = FAILED[name]

    class Failed(PublisherVerification[int]):
        def create_env(self) -> TestEnvironment:
            return _library_env()

        def create_publisher(self, elements: int) -> Publisher[int]:
            return Flux.range(0, elements)

        def create_failed_publisher(self) -> Publisher[int] | None:
            return factory()

    outcomes = await run_verification(Failed, FAILED_TESTS)
    assert [o.status for o in outcomes] == ["passed"] * len(FAILED_TESTS), outcomes


# -- every public publisher has a case -------------------------------------------------------

AWAITING_CASES: set[str] = set()
# Names that landed on main before their tests/tck/cases_*.py entries go here until the owner
# adds the cases (the test below fails once they appear).


def _returns_flux(annotation: str) -> bool:
    return annotation == "Flux" or annotation.startswith("Flux[")


def _returns_w(annotation: str) -> bool:
    return annotation == "W"  # ConnectableFlux's ref_count/auto_connect: the Flux it wraps in


def public_publishers() -> set[str]:
    """Public `Flux` and `ConnectableFlux` methods that return a publisher, and the exported
    processor classes."""
    names = set()
    for owner, prefix, returns_publisher in (
        (Flux, "", _returns_flux),
        (ConnectableFlux, "ConnectableFlux.", _returns_w),
    ):
        for name, member in vars(owner).items():
            if name.startswith("_"):
                continue
            function = member.__func__ if isinstance(member, staticmethod) else member
            if not inspect.isfunction(function):
                continue
            returns = inspect.signature(function).return_annotation
            if isinstance(returns, str) and returns_publisher(returns):
                names.add(prefix + name)
    for name in reactive_aio.__all__:
        obj = getattr(reactive_aio, name)
        if inspect.isclass(obj) and name.endswith("Processor") and obj is not Processor:
            names.add(name)
    return names


def test_every_public_publisher_has_a_tck_case() -> None:
    registered = set(CASES) | set(FAILED) | set(PROCESSORS)
    missing = public_publishers() - registered - AWAITING_CASES
    assert not missing, f"public publishers without a TCK case in tests/tck/cases_*.py: {missing}"


def test_awaiting_cases_are_still_missing() -> None:
    arrived = AWAITING_CASES & (set(CASES) | set(FAILED) | set(PROCESSORS))
    assert not arrived, f"cases arrived; remove them from AWAITING_CASES: {arrived}"
    assert public_publishers() >= AWAITING_CASES, "AWAITING_CASES names something not public"
