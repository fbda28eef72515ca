"""name and tag: labels that cost nothing per item, seen through by fusion, read by log."""

from __future__ import annotations

import logging
import subprocess
import sys
from typing import Any

import attrs
import pytest

from reactive_aio import Flux, Publisher, Subscriber
from reactive_aio._operators._name import LabelSubscriber
from reactive_aio.lowlevel import LoopBound
from reactive_aio.testing import TestPublisher, TestSubscriber


@attrs.define(eq=False)
class _Recording(Publisher[int], LoopBound):
    """``range(0, count)``, keeping the subscriber it was given."""

    count: int
    subscriber: Subscriber[int] | None = None

    def subscribe(self, subscriber: Subscriber[int]) -> None:
        self.subscriber = subscriber
        Flux.range(0, self.count).subscribe(subscriber)


def test_the_label_stands_in_the_chain_but_items_go_past_it() -> None:
    source = _Recording(3)
    ts = TestSubscriber[int]()
    Flux.from_publisher(source).name("ingest").tag("env", "test").subscribe(ts)
    label = source.subscriber
    assert isinstance(label, LabelSubscriber)
    assert label.stage_name == "ingest"
    assert label.stage_tags == (("env", "test"),)
    assert label.on_next == ts.on_next  # upstream calls downstream itself: no frame per item
    ts.request(2)
    ts.assert_values(0, 1).assert_not_terminated()
    ts.cancel()
    assert label.on_next != ts.on_next  # done: it holds downstream no more (rule 3.13)


def test_requests_cancel_and_terminal_signals_pass_through() -> None:
    source = TestPublisher[int].create()
    ts = TestSubscriber[int]()
    Flux.from_publisher(source).name("x").subscribe(ts)
    ts.request(3).request(4)
    source.assert_requested(7)
    source.next(1, 2)
    ts.assert_values(1, 2)
    ts.cancel()
    source.assert_cancelled()

    failing = TestSubscriber[int](initial_request=1)
    Flux.error(OSError("x")).tag("k", "v").subscribe(failing)
    failing.assert_error(OSError)
    completed = TestSubscriber[int](initial_request=1)
    Flux.empty().name("e").subscribe(completed)
    completed.assert_complete()


def test_a_tag_or_name_after_a_label_merges_into_it() -> None:
    flux = Flux.range(0, 3).name("a").tag("k", "1").tag("j", "2").tag("k", "3").name("b")
    source = _Recording(3)
    Flux.from_publisher(source).name("a").tag("k", "1").tag("k", "3").name("b").subscribe(
        TestSubscriber[int]()
    )
    assert "LabelPublisher(source=RangePublisher" in repr(flux)  # one stage
    assert "name='b', tags=(('j', '2'), ('k', '3'))" in repr(flux)
    assert isinstance(source.subscriber, LabelSubscriber)
    assert source.subscriber.stage_tags == (("k", "3"),)


def test_a_map_after_a_name_fuses_with_the_stages_before_it() -> None:
    flux = Flux.range(0, 5).map(lambda x: x + 1).name("x").tag("k", "v").filter(bool)
    chain = flux.fused_chain()
    assert chain is not None
    assert chain.shape == (True, False)
    assert type(chain.source).__name__ == "RangePublisher"


async def test_named_chains_fold_and_iterate_as_plain_chains_do() -> None:
    callers: set[str] = set()

    def double(x: int) -> int:
        callers.add(sys._getframe(1).f_code.co_filename)
        return x * 2

    flux = Flux.range(0, 10_000).name("x").map(double).tag("k", "v")
    assert await flux.reduce(lambda a, b: a + b, 0) == sum(range(0, 20_000, 2))
    assert callers == {"<reactive_aio fusion: fold, shape (True,)>"}  # one loop, no subscriber
    callers.clear()
    flux.subscribe(TestSubscriber[int](initial_request=3))
    assert callers == {"<reactive_aio fusion: emit loop, shape (True,)>"}  # range's own loop
    assert [x async for x in Flux.range(0, 3).name("y")] == [0, 1, 2]
    assert await Flux.range(0, 4).name("z").take(2).to_list() == [0, 1]
    inner = Flux.just(1, 2).flat_map(lambda x: Flux.range(0, x).name("inner"))
    assert sorted(await inner.to_list()) == [0, 0, 1]


async def test_an_async_boundary_before_a_name_still_fuses_with_async_for() -> None:
    source = _Recording(300)
    flux = Flux.from_publisher(source).publish_on(buffer_size=16).name("x")
    assert [x async for x in flux] == list(range(300))
    # the reader's buffer took publish_on's place: the label is subscribed to the source itself
    assert isinstance(source.subscriber, LabelSubscriber)


def test_names_and_tags_are_strings() -> None:
    number: Any = 3
    with pytest.raises(TypeError, match="name must be a str"):
        Flux.range(0, 1).name(number)
    with pytest.raises(TypeError, match="a tag is a str key and a str value"):
        Flux.range(0, 1).tag("k", number)


def test_log_prints_the_name_upstream(caplog: pytest.LogCaptureFixture) -> None:
    ts = TestSubscriber[int](initial_request=1)
    with caplog.at_level(logging.INFO, logger="reactive_aio"):
        Flux.range(0, 1).name("ingest").take(1).log().subscribe(ts)
        Flux.range(0, 1).log().subscribe(TestSubscriber[int](initial_request=1))
        Flux.range(0, 1).name("ingest").log("own").subscribe(TestSubscriber[int]())
    names = [r.getMessage().partition(" | ")[0] for r in caplog.records]
    # the name upstream (through take); none upstream: the default; a name given: that one
    assert names == ["ingest"] * 4 + ["reactive_aio"] * 4 + ["own"]
    ts.assert_values(0).assert_complete()


def test_chains_without_metrics_never_load_opentelemetry() -> None:
    probe = (
        "import asyncio, sys\n"
        "from reactive_aio import Flux\n"
        "flux = Flux.range(0, 100).name('x').tag('k', 'v').map(str).take(5).log()\n"
        "assert asyncio.run(flux.to_list()) == ['0', '1', '2', '3', '4']\n"
        "print(sorted(n for n in sys.modules if n.startswith('opentelemetry')))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
