"""Marble diagrams recorded from real runs, one per operator, for the generated docs pages.

An overload with a diagram of its own is keyed ``"<operator>/<form>"`` (``"buffer/boundary"``);
its diagram follows the operator's first one.

Each example names its input timelines (marble strings played by `reactive_aio.testing.cold`
on a virtual-time loop) and builds the operator under test from them; the output timeline is
what a subscriber really received, recorded by `reactive_aio.testing.record`. The box between
them shows the example's own code, read from this file (`call_texts`). A diagram can therefore
never disagree with the code: if an operator or an example changes, its picture changes too.
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import Any

from marble_svg import render

from reactive_aio import Flux, Overflow, Retry
from reactive_aio.testing import cold, record, run_virtual

Build = Callable[[Sequence[Flux[Any]]], Any]
VALUES = {str(i): i for i in range(10)}
INPUT_NAMES = "abc"
"""How a diagram's label names the input timelines of an example with more than one."""


def _v(marbles: str) -> Flux[Any]:
    return cold(marbles, VALUES, error=ValueError("boom"), frame=1.0)


EXAMPLES: dict[str, tuple[tuple[str, ...], Build]] = {
    # sources: no inputs; synchronous ones emit everything at time zero
    "just": ((), lambda _: Flux.just(1, 2, 3)),
    "from_iterable": ((), lambda _: Flux.from_iterable([4, 5, 6])),
    "range": ((), lambda _: Flux.range(1, 4)),
    "empty": ((), lambda _: Flux.empty()),
    "error": ((), lambda _: Flux.error(ValueError("boom"))),
    "never": ((), lambda _: Flux.never().take_for(5.0)),
    "defer": ((), lambda _: Flux.defer(lambda: Flux.just(7, 8))),
    "from_async_iterable": ((), lambda _: Flux.from_async_iterable(ticks(3))),
    "from_publisher": (("-1-2-3|",), lambda s: Flux.from_publisher(s[0])),
    "create": ((), lambda _: Flux.create(emit_three, overflow=Overflow.BUFFER(8))),
    "interval": ((), lambda _: Flux.interval(2.0).take(4)),
    "timer": ((), lambda _: Flux.timer(3.0)),
    "using": ((), lambda _: Flux.using(lambda: [1, 2], Flux.from_iterable, lambda r: None)),
    "using_async": ((), lambda _: Flux.using_async(acquire, Flux.from_iterable, release)),
    "using_context": ((), lambda _: Flux.using_context(open_pair, Flux.from_iterable)),
    # transform and filter
    "map": (("-1-2-3-|",), lambda s: s[0].map(lambda x: x * 10)),
    "map_async": (("-1-2-3-|",), lambda s: s[0].map_async(slow_double)),
    "map_in_thread": (("-1-2-3-|",), lambda s: s[0].map_in_thread(lambda x: x + 1)),
    "map_skip_errors": (("-1-0-2-|",), lambda s: s[0].map_skip_errors(lambda x: 6 // x)),
    "filter": (("-1-2-3-4-|",), lambda s: s[0].filter(lambda x: x % 2 == 0)),
    "take": (("-1-2-3-4-|",), lambda s: s[0].take(2)),
    "scan": (("-1-2-3-|",), lambda s: s[0].scan(lambda a, x: a + x, 0)),
    "index": (("-5-6-7-|",), lambda s: s[0].index().map(lambda p: p[0])),
    "take_last": (("-1-2-3-4-|",), lambda s: s[0].take_last(2)),
    "take_while": (("-1-2-5-1-|",), lambda s: s[0].take_while(lambda x: x < 3)),
    "take_until": (("-1-2-3-4-|", "----0|"), lambda s: s[0].take_until(s[1])),
    "skip": (("-1-2-3-4-|",), lambda s: s[0].skip(2)),
    "skip_last": (("-1-2-3-4-|",), lambda s: s[0].skip_last(2)),
    "skip_while": (("-1-2-5-1-|",), lambda s: s[0].skip_while(lambda x: x < 3)),
    "skip_until": (("-1-2-3-4-|", "----0|"), lambda s: s[0].skip_until(s[1])),
    "distinct": (("-1-2-1-3-2-|",), lambda s: s[0].distinct()),
    "distinct_until_changed": (("-1-1-2-2-1-|",), lambda s: s[0].distinct_until_changed()),
    "element_at": (("-1-2-3-|",), lambda s: s[0].element_at(1)),
    "default_if_empty": (("---|",), lambda s: s[0].default_if_empty(9)),
    "start_with": (("---1-2-|",), lambda s: s[0].start_with(8, 9)),
    "materialize": (("-1-2-|",), lambda s: s[0].materialize().map(lambda note: note.kind[0])),
    "dematerialize": (("-1-2-|",), lambda s: s[0].materialize().dematerialize()),
    "ignore_elements": (("-1-2-3-|",), lambda s: s[0].ignore_elements()),
    "then": (("-1-2-|", "-8-9|"), lambda s: s[0].then(s[1])),
    "pairwise": (("-1-2-3-|",), lambda s: s[0].pairwise().map(lambda p: p[0] * 10 + p[1])),
    "buffer": (("-1-2-3-4-5-|",), lambda s: s[0].buffer(2).map(len)),
    "buffer/boundary": (("-1-2-3-4-5-|", "---0---0-|"), lambda s: s[0].buffer(s[1]).map(len)),
    "buffer_until": (("-1-2-3-4-5-|",), lambda s: s[0].buffer_until(lambda x: x % 2 == 0).map(len)),
    "buffer_while": (("-1-2-3-4-5-|",), lambda s: s[0].buffer_while(lambda x: x != 3).map(len)),
    "window": (
        ("-1-2-3-4-5-|",),
        lambda s: s[0].window(2).flat_map(lambda w: w.to_list()).map(len),
    ),
    "window/skip": (
        ("-1-2-3-4-5-|",),
        lambda s: s[0].window(2, 3).flat_map(lambda w: w.to_list()).map(len),
    ),
    "window/boundary": (
        ("-1-2-3-4-5-|", "---0---0-|"),
        lambda s: s[0].window(s[1]).flat_map(lambda w: w.to_list()).map(len),
    ),
    "window_until": (
        ("-1-2-3-4-5-|",),
        lambda s: s[0].window_until(lambda x: x % 2 == 0).flat_map(lambda w: w.to_list()).map(len),
    ),
    "window_while": (
        ("-1-2-3-4-5-|",),
        lambda s: s[0].window_while(lambda x: x != 3).flat_map(lambda w: w.to_list()).map(len),
    ),
    "window_until_changed": (
        ("-1-1-2-2-2-3-|",),
        lambda s: s[0].window_until_changed().flat_map(lambda w: w.to_list()).map(len),
    ),
    "retry_when": (("-1-#",), lambda s: s[0].retry_when(Retry.backoff(2, 1.0))),
    "repeat_when": (
        ("-1-|",),
        lambda s: s[0].repeat_when(lambda rounds: rounds.take_while(lambda r: r < 3)),
    ),
    "switch_on_first": (
        ("-1-2-3-|",),
        lambda s: s[0].switch_on_first(lambda first, rest: rest.map(lambda x: x * 10)),
    ),
    "group_by": (
        ("-1-2-3-4-|",),
        lambda s: (
            s[0].group_by(lambda x: x % 2).flat_map(lambda g: g[1].map(lambda x: g[0] * 10 + x))
        ),
    ),
    "flat_map_iterable": (("-1-2-|",), lambda s: s[0].flat_map_iterable(lambda x: [x, x])),
    "of_type": (("-1-2-3-|",), lambda s: s[0].map(lambda x: x if x != 2 else "b").of_type(int)),
    "do_on_next": (("-1-2-|",), lambda s: s[0].do_on_next(lambda x: None)),
    "do_on_error": (("-1-#",), lambda s: s[0].do_on_error(lambda e: None)),
    "do_on_complete": (("-1-|",), lambda s: s[0].do_on_complete(lambda: None)),
    "do_on_subscribe": (("-1-|",), lambda s: s[0].do_on_subscribe(lambda sub: None)),
    "do_on_request": (("-1-|",), lambda s: s[0].do_on_request(lambda n: None)),
    "do_on_cancel": (("-1-2-3-|",), lambda s: s[0].do_on_cancel(lambda: None).take(2)),
    "do_finally": (("-1-2-|",), lambda s: s[0].do_finally(lambda signal: None)),
    "log": (("-1-2-|",), lambda s: s[0].log("docs")),
    "metrics": (("-1-2-|",), lambda s: s[0].name("ingest").metrics()),
    "name": (("-1-2-|",), lambda s: s[0].name("ingest")),
    "tag": (("-1-2-|",), lambda s: s[0].tag("env", "docs")),
    "checkpoint": (("-1-2-#",), lambda s: s[0].checkpoint("parsed")),
    # errors
    "on_error_resume": (("-1-#", "-8-9|"), lambda s: s[0].on_error_resume(lambda e: s[1])),
    "on_error_return": (("-1-#",), lambda s: s[0].on_error_return(0)),
    "on_error_map": (("-1-#",), lambda s: s[0].on_error_map(lambda e: KeyError(str(e)))),
    "retry": (("-1-#",), lambda s: s[0].retry(2)),
    "repeat": (("-1-2|",), lambda s: s[0].repeat(1)),
    "retry_backoff": (
        ("-1-#",),
        lambda s: s[0].retry_backoff(2, first_backoff=1.0, max_backoff=4.0, jitter=0.0),
    ),
    # flatten and combine
    "flat_map": (("-1--2---|",), lambda s: s[0].flat_map(lambda x: _v("-0--0|").map(lambda _: x))),
    "flat_map_sequential": (
        ("-1-2-|",),
        lambda s: s[0].flat_map_sequential(lambda x: _v("--0-0|").map(lambda _: x)),
    ),
    "concat_map": (("-1-2-|",), lambda s: s[0].concat_map(lambda x: _v("-0-0|").map(lambda _: x))),
    "switch_map": (
        ("-1---2----|",),
        lambda s: s[0].switch_map(lambda x: _v("-0-0-0|").map(lambda _: x)),
    ),
    "switch_on_next": (
        ("-1---2----|",),
        lambda s: s[0].map(lambda x: _v("-0-0-0|").map(lambda _: x)).switch_on_next(),
    ),
    "filter_when": (
        ("-1-2-3-4-|",),
        lambda s: s[0].filter_when(lambda x: _v("-0|").map(lambda _: x % 2 == 0)),
    ),
    "delay_until": (("-1-2-|",), lambda s: s[0].delay_until(lambda x: _v("--|"))),
    "expand": (
        ("-1-|",),
        lambda s: s[0].expand(lambda x: _v("-0-0|").map(lambda _: x + 1).take(3 - x)),
    ),
    "expand_deep": (
        ("-1-|",),
        lambda s: s[0].expand_deep(lambda x: _v("-0-0|").map(lambda _: x + 1).take(3 - x)),
    ),
    "merge": (("-1---3-|", "--2---4|"), lambda s: Flux.merge(s[0], s[1])),
    "merge_with": (("-1---3-|", "--2---4|"), lambda s: s[0].merge_with(s[1])),
    "concat": (("-1-2|", "-3-4|"), lambda s: Flux.concat(s[0], s[1])),
    "concat_with": (("-1-2|", "-3-4|"), lambda s: s[0].concat_with(s[1])),
    "zip": (
        ("-1--2---3|", "--4-5-6|"),
        lambda s: Flux.zip(s[0], s[1]).map(lambda p: p[0] * 10 + p[1]),
    ),
    "zip_with": (
        ("-1--2---3|", "--4-5-6|"),
        lambda s: s[0].zip_with(s[1]).map(lambda p: p[0] * 10 + p[1]),
    ),
    "combine_latest": (
        ("-1---2--|", "--3-4---|"),
        lambda s: Flux.combine_latest(s[0], s[1]).map(lambda p: p[0] * 10 + p[1]),
    ),
    "with_latest_from": (
        ("-1---2-3|", "--5--6--|"),
        lambda s: s[0].with_latest_from(s[1]).map(lambda p: p[0] * 10 + p[1]),
    ),
    "race": (("---1-2|", "-3-4|"), lambda s: Flux.race(s[0], s[1])),
    # boundaries, demand shaping, backpressure, sharing
    "publish_on": (("-1-2-3-|",), lambda s: s[0].publish_on(buffer_size=4)),
    "batch": (("-1-2-3-|",), lambda s: s[0].batch(4).map(len)),
    "limit_rate": (("-1-2-3-|",), lambda s: s[0].limit_rate(2)),
    "on_backpressure_buffer": (("-1-2-3-|",), lambda s: s[0].on_backpressure_buffer(8)),
    "on_backpressure_drop": (("-1-2-3-|",), lambda s: s[0].on_backpressure_drop()),
    "on_backpressure_latest": (("-1-2-3-|",), lambda s: s[0].on_backpressure_latest()),
    "on_backpressure_error": (("-1-2-3-|",), lambda s: s[0].on_backpressure_error()),
    "share": (("-1-2-3-|",), lambda s: s[0].share()),
    "publish": (("-1-2-3-|",), lambda s: s[0].publish().auto_connect(1)),
    "replay": (("-1-2-3-|",), lambda s: s[0].replay(2)),
    # time
    "delay": (("-1-2-|",), lambda s: s[0].delay(2.0)),
    "delay_elements": (("12-3|",), lambda s: s[0].delay_elements(2.0)),
    "delay_subscription": (("-1-2|",), lambda s: s[0].delay_subscription(3.0)),
    "debounce": (("-1-2-----3--|",), lambda s: s[0].debounce(2.5)),
    "debounce/selector": (
        ("-1-2-----3--|",),
        lambda s: s[0].debounce(lambda x: Flux.timer(float(x))),
    ),
    "throttle_first": (("-12-3--4-5|",), lambda s: s[0].throttle_first(3.0)),
    "throttle_last": (("-12-3--4-5--|",), lambda s: s[0].throttle_last(3.0)),
    "sample": (("-12-3--4-5--|",), lambda s: s[0].sample(3.0)),
    "sample/sampler": (("-12-3--4-5--|", "--0---0--0---|"), lambda s: s[0].sample(s[1])),
    "timeout": (("-1-2-----3|",), lambda s: s[0].timeout(3.0, fallback=Flux.just(9))),
    "buffer_timeout": (("-12---3-----4|",), lambda s: s[0].buffer_timeout(2, 3.0).map(len)),
    "window_timeout": (
        ("-12---3-----4|",),
        lambda s: s[0].window_timeout(2, 3.0).flat_map(lambda w: w.to_list()).map(len),
    ),
    "elapsed": (("-1--2---3|",), lambda s: s[0].elapsed().map(lambda pair: int(pair[0]))),
    "timestamp": (("-1--2---3|",), lambda s: s[0].timestamp().map(lambda pair: int(pair[0]))),
    "take_for": (("-1-2-3-4-|",), lambda s: s[0].take_for(4.5)),
    "skip_for": (("-1-2-3-4-|",), lambda s: s[0].skip_for(4.5)),
}


async def ticks(count: int) -> Any:
    for i in range(count):
        await asyncio.sleep(1.0)
        yield i


def emit_three(sink: Any) -> None:
    for item in (1, 2, 3):
        sink.next(item)
    sink.complete()


async def slow_double(x: int) -> int:
    await asyncio.sleep(0.5)
    return x * 2


async def acquire() -> list[int]:
    return [1, 2]


async def release(resource: object, error: BaseException | None) -> None:
    return None


@contextlib.asynccontextmanager
async def open_pair() -> AsyncIterator[list[int]]:
    yield [3, 4]


class _CallText(ast.NodeTransformer):
    """Turns an example's builder into the code a reader would write: ``s[1]`` → ``b``, and the
    helper ``_v(marbles)`` → ``cold(marbles)`` (it is `cold` with digit values)."""

    def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
        if isinstance(node.value, ast.Name) and node.value.id == "s":
            index = node.slice
            assert isinstance(index, ast.Constant)
            return ast.Name(INPUT_NAMES[index.value])
        return self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> ast.AST:
        return ast.Name("cold") if node.id == "_v" else node


def call_texts() -> dict[str, str]:
    """Each example's code as its diagram's label: ``map(lambda x: x * 10)`` for one input
    (the input is the receiver), ``a.take_until(b)`` or ``Flux.merge(a, b)`` for several."""
    tree = ast.parse(Path(__file__).read_text(encoding="utf-8"))
    table = next(
        node.value
        for node in tree.body
        if isinstance(node, ast.AnnAssign)
        and isinstance(node.target, ast.Name)
        and node.target.id == "EXAMPLES"
    )
    assert isinstance(table, ast.Dict)
    texts: dict[str, str] = {}
    for key, value in zip(table.keys, table.values, strict=True):
        assert isinstance(key, ast.Constant)
        assert isinstance(value, ast.Tuple)
        inputs, build = value.elts
        assert isinstance(inputs, ast.Tuple)
        assert isinstance(build, ast.Lambda)
        text = ast.unparse(_CallText().visit(build.body))
        if len(inputs.elts) == 1:
            text = text.removeprefix(f"{INPUT_NAMES[0]}.")
        texts[key.value] = text
    return texts


async def _record_example(inputs: tuple[str, ...], build: Build) -> tuple[list[Any], Any]:
    recorded_inputs = [list((await record(_v(m), duration=40.0)).timeline) for m in inputs]
    result = build([_v(m) for m in inputs])
    recording = await record(result, duration=40.0)
    return recorded_inputs, list(recording.timeline)


def record_all(target: Path) -> dict[str, list[str]]:
    """Record every example, write ``<key>.svg`` under *target* (``/`` becoming ``-``); return
    operator name -> the docs paths of its diagrams, in table order."""
    target.mkdir(parents=True, exist_ok=True)
    paths: dict[str, list[str]] = {}
    labels = call_texts()
    # log(), map_skip_errors() and friends report to the library logger; not into the build log
    logging.getLogger("reactive_aio").disabled = True

    async def main() -> None:
        for name, (inputs, build) in EXAMPLES.items():
            recorded_inputs, output = await _record_example(inputs, build)
            names = INPUT_NAMES[: len(inputs)] if len(inputs) > 1 else ""
            svg = render(recorded_inputs, labels[name], output, input_names=names)
            stem = name.replace("/", "-")
            (target / f"{stem}.svg").write_text(svg, encoding="utf-8")
            paths.setdefault(name.partition("/")[0], []).append(f"/_static/marbles/{stem}.svg")

    try:
        run_virtual(main())
    finally:
        logging.getLogger("reactive_aio").disabled = False
    return paths
