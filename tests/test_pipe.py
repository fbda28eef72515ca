"""Every `Flux` operator has a curried twin in `reactive_aio.pipe`, and both spellings agree."""

from __future__ import annotations

import inspect
import re

import pytest

from reactive_aio import Flux, pipe

NOT_OPERATORS = frozenset(
    {"subscribe", "pipe", "iterate", "sync_iterator", "sync_inner", "fused_chain"}
)
"""Public `Flux` methods that are neither sources (static) nor async terminals."""


def _operator_names() -> set[str]:
    names = set()
    for name in dir(Flux):
        if name.startswith("_") or name in NOT_OPERATORS:
            continue
        attribute = inspect.getattr_static(Flux, name)
        if isinstance(attribute, (staticmethod, classmethod, property)):
            continue  # sources and accessors
        if inspect.iscoroutinefunction(attribute) or not callable(attribute):
            continue  # awaitable terminals
        names.add(name)
    return names


def test_every_operator_has_a_pipe_function() -> None:
    missing = sorted(name for name in _operator_names() if not hasattr(pipe, name))
    assert not missing, f"reactive_aio.pipe lacks: {', '.join(missing)}"


def test_pipe_module_is_alphabetic_and_exports_all() -> None:
    functions = [
        name
        for name, value in vars(pipe).items()
        if inspect.isfunction(value) and value.__module__ == pipe.__name__
    ]
    assert functions == sorted(functions)
    assert sorted(pipe.__all__) == sorted(functions)


async def test_pipe_and_or_match_the_methods() -> None:
    via_pipe = Flux.range(0, 10).pipe(
        pipe.map(lambda x: x * 2),
        pipe.filter(lambda x: x % 3 != 0),
        pipe.scan(lambda a, x: a + x, 0),
        pipe.take(3),
    )
    via_methods = Flux.range(0, 10).map(lambda x: x * 2).filter(lambda x: x % 3 != 0)
    expected = await via_methods.scan(lambda a, x: a + x, 0).take(3).to_list()
    assert await via_pipe.to_list() == expected
    assert await (Flux.range(0, 4) | pipe.pairwise()).to_list() == [(0, 1), (1, 2), (2, 3)]


def _shape(annotation: object) -> str:
    # Type variables and Any are placeholders: the curried form names its input T where the
    # method says T_co, and its output R where the method says U.
    return re.sub(r"\b(?:[A-Z](?:_co)?|Any)\b", "_", str(annotation))


@pytest.mark.parametrize("name", sorted(pipe.__all__))
def test_every_pipe_form_has_its_methods_signature(name: str) -> None:
    curried = inspect.signature(getattr(pipe, name)).parameters.values()
    method = list(inspect.signature(getattr(Flux, name)).parameters.values())[1:]  # no self
    assert [(p.name, p.kind, p.default, _shape(p.annotation)) for p in curried] == [
        (p.name, p.kind, p.default, _shape(p.annotation)) for p in method
    ]


def test_the_deprecated_pipe_spark_map_points_at_the_bridge() -> None:
    with pytest.warns(DeprecationWarning, match=r"reactive_aio\.spark\.spark_map"):
        pipe.spark_map(lambda df: df, spark=None)
