"""Every `Flux` operator has a curried twin in `reactive_aio.pipe`, and both spellings agree."""

from __future__ import annotations

import inspect

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


def _pipe_forms() -> list[str]:
    return [
        name
        for name, value in vars(pipe).items()
        if inspect.isfunction(value) and value.__module__ == pipe.__name__ and name[0] != "_"
    ]


def test_pipe_forms_are_the_operators_in_alphabetical_order() -> None:
    assert _pipe_forms() == sorted(_operator_names())


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
    assert await (Flux.range(0, 5) | pipe.buffer(2, skip=3)).to_list() == [[0, 1], [3, 4]]
    assert await (Flux.range(0, 2) | pipe.element_at(5, default=-1)).to_list() == [-1]


@pytest.mark.parametrize("name", _pipe_forms())
def test_every_pipe_form_has_its_methods_signature(name: str) -> None:
    curried = inspect.signature(getattr(pipe, name)).parameters.values()
    method = list(inspect.signature(getattr(Flux, name)).parameters.values())[1:]  # no self
    assert [(p.name, p.kind, p.default, p.annotation) for p in curried] == [
        (p.name, p.kind, p.default, p.annotation) for p in method
    ]
