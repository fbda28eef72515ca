"""What every verification shares: the per-test environment and the test categories.

Categories, as in the JVM TCK:

* ``required``: a failure fails the test;
* ``optional``: a failure skips the test with the reason (the behaviour is allowed but not
  supported);
* ``stochastic``: required, but probabilistic, and skipped when ``skip_stochastic_tests()``;
* ``untested``: the rule cannot be checked mechanically; always skipped.

Each test method is a coroutine marked ``pytest.mark.asyncio`` plus its category marker, so
the verifications also work in projects that run pytest-asyncio in strict mode.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import NoReturn, TypeVar, cast

import pytest

from ._env import TestEnvironment

__all__ = (
    "Verification",
    "extra",
    "optional",
    "required",
    "skip_optional",
    "stochastic",
    "untested",
)

F = TypeVar("F", bound=Callable[..., Awaitable[None]])


def _category(name: str, *, spec: bool = True) -> Callable[[F], F]:
    def mark(test: F) -> F:
        test = cast(F, getattr(pytest.mark, name)(test))
        if spec:
            test.__tck_category__ = name  # type: ignore[attr-defined]
        return cast(F, pytest.mark.asyncio(test))

    return mark


required = _category("required")
"""A test whose failure fails the verification."""
optional = _category("optional")
"""A test whose failure only skips: the publisher does not support an optional behaviour."""
stochastic = _category("stochastic")
"""A probabilistic required test; ``skip_stochastic_tests()`` skips it."""
untested = _category("untested")
"""A rule the TCK cannot check; the test always skips."""


def extra(test: F) -> F:
    """A reactive_aio check beyond the official TCK (``test_extra_…``); a failure fails."""
    test = cast(F, pytest.mark.extra(test))
    test.__tck_category__ = "extra"  # type: ignore[attr-defined]
    return cast(F, pytest.mark.asyncio(test))


def skip_untested(reason: str) -> NoReturn:
    """Skip an untested rule."""
    pytest.skip(f"untested: {reason}")


def skip_optional(error: BaseException) -> NoReturn:
    """Turn an optional test's failure into a skip that names the reason."""
    pytest.skip(f"optional behaviour not supported: {error}")


class Verification:
    """Base of the four verifications: a fresh `TestEnvironment` per test.

    Override `create_env` to fix timeouts for one verification class (for example a smaller
    no-signals window for a large suite of fast publishers).
    """

    __tck_env: TestEnvironment | None = None

    def create_env(self) -> TestEnvironment:
        """The environment of one test; by default from the environment variables."""
        return TestEnvironment()

    @property
    def env(self) -> TestEnvironment:
        """The current test's environment (created inside the running test)."""
        env = self.__tck_env
        if env is None or env.loop.is_closed():
            env = self.__tck_env = self.create_env()
        return env

    def reset_env(self) -> None:
        """Forget the environment, so the next test gets a fresh one."""
        self.__tck_env = None
