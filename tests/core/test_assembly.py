"""Assembly traces: the notes checkpoints and checked stages add to errors."""

from __future__ import annotations

import functools
import traceback
from collections.abc import Callable

import pytest

from reactive_aio import Flux
from reactive_aio._core import note_stage


def test_a_stage_note_grows_once_per_stage_and_is_the_only_one() -> None:
    error = ValueError("x")
    note_stage(error, "map assembled at a.py:1")
    note_stage(error, "filter assembled at a.py:2")
    note_stage(error, "map assembled at a.py:1")  # passed again (a retry): not listed twice
    assert len(error.__notes__) == 1
    assert error.__notes__[0].split("\n")[1:] == [
        "  map assembled at a.py:1",
        "  filter assembled at a.py:2",
    ]


def test_an_error_whose_notes_are_no_list_is_left_alone() -> None:
    error = ValueError("x")
    vars(error)["__notes__"] = ("frozen",)
    note_stage(error, "map assembled at a.py:1")
    assert vars(error)["__notes__"] == ("frozen",)


class Doubler:
    def __call__(self, x: float) -> float:
        return 2 * x

    def fail(self, x: int) -> int:
        raise ValueError(x)


def divide(x: int, by: int) -> float:
    return x / by


async def test_functions_are_found_through_partials_bound_methods_and_instances() -> None:
    checks: list[tuple[Callable[[int], float], type[Exception]]] = [
        (functools.partial(divide, by=0), ZeroDivisionError),
        (Doubler().fail, ValueError),
    ]
    for function, kind in checks:
        flux = Flux.just(1).map(function).publish_on().map(Doubler()).checkpoint("found")
        try:
            await flux.to_list()
        except kind as error:
            lines = error.__notes__[-1].split("\n")
        assert lines[1].endswith("  <- its function raised the error"), lines
        assert lines[1].startswith("  map assembled at"), lines
        assert lines[2].startswith("  publish_on assembled at"), lines
        assert lines[3].startswith("  map assembled at"), lines
        assert "raised" not in lines[3], lines


async def test_a_long_chain_shows_the_raising_operator_and_the_nearest() -> None:
    flux = Flux.range(0, 3).map(lambda x: 1 // (x - 1))
    for _ in range(40):
        flux = flux.map(lambda x: x)
    with pytest.raises(ZeroDivisionError, match="division") as caught:
        await flux.checkpoint("long").to_list()
    assert "saw this error" in "".join(traceback.format_exception(caught.value))
    lines = caught.value.__notes__[-1].split("\n")
    assert lines[1].endswith("<- its function raised the error")
    assert lines[2] == "  ... 21 more"
    assert len(lines) == 2 + 1 + 19
