"""checkpoint: an error passing it carries a note naming the checkpoint and the operators it came
through, each with the line that assembled it; debug mode notes every error's stages."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import traceback
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest

from reactive_aio import Flux, pipe
from reactive_aio.testing import TestSubscriber

HERE = Path(__file__).resolve()
SOURCE = HERE.read_text(encoding="utf-8").splitlines()


def line_of(marker: str) -> str:
    """``file:line`` of the line of this file that ends with *marker*."""
    number = next(n for n, text in enumerate(SOURCE, 1) if text.endswith(marker))
    return f"{HERE}:{number}"


def printed(error: BaseException) -> str:
    return "".join(traceback.format_exception(error))


def fail_on_two(x: int) -> int:
    if x == 2:
        raise ValueError("two")
    return x


async def numbers() -> AsyncIterator[int]:
    for x in range(5):
        yield x


def fused() -> Flux[int]:
    return Flux.range(0, 5)


def awaited() -> Flux[int]:
    return Flux.from_async_iterable(numbers()).publish_on()


async def by_to_list(flux: Flux[object]) -> BaseException:
    try:
        await flux.to_list()
    except ValueError as error:
        return error
    raise AssertionError("the stream did not fail")


async def by_async_for(flux: Flux[object]) -> BaseException:
    try:
        async for _ in flux:
            pass
    except ValueError as error:
        return error
    raise AssertionError("the stream did not fail")


async def by_subscribe(flux: Flux[object]) -> BaseException:
    failed: asyncio.Future[BaseException] = asyncio.get_running_loop().create_future()
    flux.subscribe(on_error=failed.set_result)
    return await failed


@pytest.mark.parametrize("source", [fused, awaited])
@pytest.mark.parametrize("consume", [by_to_list, by_async_for, by_subscribe])
async def test_the_note_names_the_checkpoint_and_the_failing_operators_line(
    source: Callable[[], Flux[int]],
    consume: Callable[[Flux[object]], Awaitable[BaseException]],
) -> None:
    flux = (
        source()
        .map(fail_on_two)  # the failing map
        .filter(lambda x: x >= 0)  # the filter
        .map(lambda x: x + 1)  # the last map
        .checkpoint("numbers parsed")  # the checkpoint
    )
    text = printed(await consume(flux))
    assert "reactive_aio checkpoint 'numbers parsed'" in text
    assert f"map assembled at {line_of('# the failing map')}  <- its function raised" in text
    note = text[text.index("reactive_aio checkpoint") :]
    assert note.index(line_of("# the filter")) < note.index(line_of("# the last map"))
    assert line_of("# the checkpoint") in note


async def test_a_builtin_that_raises_in_a_fused_loop_is_named_by_its_stage() -> None:
    flux = Flux.just("1", "x", "3").map(int).map(lambda x: x * 2).checkpoint("ints")  # ints
    text = printed(await by_to_list(flux))
    assert f"map assembled at {line_of('# ints')}  <- its function raised" in text


async def test_an_error_from_upstream_of_every_operator_is_said_to_be() -> None:
    flux = Flux.error(ValueError("source")).map(str).checkpoint("after the source")
    text = printed(await by_to_list(flux))
    assert "none of their functions is in the error's traceback" in text


async def test_two_checkpoints_note_once_each_however_often_the_error_passes() -> None:
    same = ValueError("the same error")

    def fail(_: int) -> int:
        raise same

    flux = Flux.range(0, 3).map(fail).checkpoint("first").map(str).checkpoint("second").retry(3)
    error = await by_to_list(flux)
    assert error is same
    notes = error.__notes__
    assert len(notes) == 2
    assert "'first'" in notes[0]
    assert "'second'" in notes[1]
    assert "checkpoint assembled at" in notes[1]  # the first, on the way


async def test_items_and_completion_pass_unchanged() -> None:
    ts = TestSubscriber[int](initial_request=2)
    Flux.range(0, 3).checkpoint("c").subscribe(ts)
    ts.assert_values(0, 1)
    ts.request(5)
    ts.assert_values(0, 1, 2).assert_complete()


async def test_the_pipe_form_records_the_users_line() -> None:
    flux = Flux.range(0, 5) | pipe.map(fail_on_two) | pipe.checkpoint("piped")  # piped
    text = printed(await by_to_list(flux))
    assert f"map assembled at {line_of('# piped')}  <- its function raised" in text


DEBUG_SCRIPT = """
import asyncio, json, sys
from reactive_aio import Flux

def fail_on_two(x):
    if x == 2:
        raise ValueError("two")
    return x

class Numbers:  # read afresh by every subscriber
    async def __aiter__(self):
        for x in range(5):
            yield x

def chains():
    yield (Flux.range(0, 5)
        .map(fail_on_two)
        .filter(bool)
        .map(str))
    yield (Flux.from_async_iterable(Numbers())
        .publish_on()
        .map(fail_on_two)
        .map(str))

async def main():
    for flux in chains():
        try:
            await flux.to_list()
        except ValueError as error:
            print(json.dumps(error.__notes__))
        try:
            async for _ in flux:
                pass
        except ValueError as error:
            print(json.dumps(error.__notes__))
        failed = asyncio.get_running_loop().create_future()
        flux.subscribe(on_error=failed.set_result)
        print(json.dumps((await failed).__notes__))

if sys.argv[1] == "uvloop":
    import uvloop
    uvloop.run(main())
else:
    asyncio.run(main())
"""


@pytest.mark.parametrize("loop", ["asyncio", "uvloop"])
def test_in_debug_mode_every_error_lists_the_stages_it_passed(loop: str) -> None:
    env = {**os.environ, "REACTIVE_AIO_DEBUG": "1"}
    result = subprocess.run(
        [sys.executable, "-c", DEBUG_SCRIPT, loop],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    printed_notes = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(printed_notes) == 6
    fused = [
        "  range assembled at <string>:16",
        "  map assembled at <string>:17",
        "  filter assembled at <string>:18",
        "  map assembled at <string>:19",
    ]
    awaited = [
        "  from_async_iterable assembled at <string>:20",
        "  publish_on assembled at <string>:21",
        "  map assembled at <string>:22",
        "  map assembled at <string>:23",
    ]
    failing = {True: fused[1], False: awaited[2]}  # the maps whose function raises
    for notes, stages in zip(printed_notes, [fused] * 3 + [awaited] * 3, strict=True):
        assert len(notes) == 1
        header, *lines = notes[0].split("\n")
        assert header.startswith("reactive_aio debug: the error arose in the first")
        assert lines == stages[stages.index(failing[stages is fused]) :], lines
