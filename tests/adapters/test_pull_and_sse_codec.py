"""The adapters' writer-side subscriber and the SSE codec, without a network."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from reactive_aio import Flux
from reactive_aio.adapters._pull import IDLE, WRITE_BYTES, pull, write_all
from reactive_aio.adapters._sse import (
    ServerSentEvent,
    SSEEncoder,
    SSEParser,
    encode_error,
    encode_event,
)

from ._support import Probe


class Boom(Exception):
    pass


async def test_pull_requests_nothing_until_asked_then_one_at_a_time() -> None:
    probe = Probe()
    subscriber = pull(probe.endless(lambda i: i))
    assert probe.produced == 0  # request 0: nothing until the writer asks
    assert await subscriber.next() == 0
    assert probe.produced == 1  # window 1: the next is requested only at the next ask
    assert await subscriber.next() == 1
    assert probe.produced == 2
    subscriber.cancel()
    assert probe.live == 0
    with pytest.raises(StopAsyncIteration):
        await subscriber.next()


async def test_pull_window_bounds_what_is_held() -> None:
    probe = Probe()
    subscriber = pull(probe.endless(lambda i: i), window=8)
    for expected in range(20):
        assert await subscriber.next() == expected
        assert probe.produced <= expected + 1 + 8
    subscriber.cancel()
    with pytest.raises(ValueError, match="window must be > 0"):
        pull(Flux.just(1), window=0)


async def test_pull_idle_timeout_and_error_after_items() -> None:
    subscriber = pull(Flux.never())
    assert await subscriber.next(0.01) is IDLE
    subscriber.cancel()

    def fail(i: int) -> int:
        if i == 2:
            raise Boom("source failed")
        return i

    failing = pull(Flux.range(0, 5).map(fail), window=4)
    assert [await failing.next(), await failing.next()] == [0, 1]
    with pytest.raises(Boom):
        await failing.next()


async def test_write_all_paces_writes_and_reports_encode_errors() -> None:
    probe = Probe()
    written: list[str] = []

    async def write(chunk: str) -> None:
        assert probe.produced == len(written) + 1  # the item being written, nothing more
        written.append(chunk)

    def encode(items: list[int]) -> str:
        (i,) = items
        if i == 5:
            raise Boom("cannot encode 5")
        return str(i)

    error = await write_all(pull(probe.endless(lambda i: i)), encode, write)
    assert isinstance(error, Boom)
    assert written == ["0", "1", "2", "3", "4"]
    assert probe.live == 0  # the raising encode cancelled the source


async def test_write_all_in_batches_requests_the_next_window_while_each_write_waits() -> None:
    probe = Probe()
    window = 8
    written: list[list[int]] = []

    async def write(chunk: list[int]) -> None:
        done = sum(map(len, written)) + len(chunk)
        assert probe.produced == done  # nothing made before this chunk is on its way
        await asyncio.sleep(0)  # the write waits for the transport
        # The next window is on its way while this chunk is written, and no more than that.
        assert probe.produced == done + window
        written.append(chunk)
        if done >= 40:
            raise ConnectionResetError  # the client left

    with pytest.raises(ConnectionResetError):
        await write_all(pull(probe.endless(lambda i: i), window=window), list, write, batch=window)
    assert written == [list(range(start, start + window)) for start in range(0, 40, window)]
    assert probe.live == 0


LINE = b"x" * 99 + b"\n"


async def test_write_all_gathers_the_batches_ready_at_once_into_one_write() -> None:
    # A synchronous source refills the window on the spot: one write carries batch after
    # batch up to WRITE_BYTES, where one write per window would carry 800 bytes.
    window = 8
    lines = 3 * WRITE_BYTES // len(LINE)
    writes: list[bytes] = []

    async def write(chunk: bytes) -> None:
        writes.append(chunk)

    source = Flux.range(0, lines).map(lambda i: LINE)
    assert await write_all(pull(source, window=window), b"".join, write, batch=window) is None
    assert b"".join(writes) == LINE * lines
    batch_bytes = window * len(LINE)
    for chunk in writes[:-1]:
        assert WRITE_BYTES <= len(chunk) < WRITE_BYTES + batch_bytes


async def test_write_all_writes_a_large_batch_alone_and_waits_for_no_batch() -> None:
    big = b"y" * WRITE_BYTES
    writes: list[bytes] = []

    async def write(chunk: bytes) -> None:
        writes.append(chunk)

    source = Flux.range(0, 3).map(lambda i: big)
    assert await write_all(pull(source, window=2), b"".join, write, batch=2) is None
    assert writes == [big * 2, big]  # a batch that fills a write goes out as it is

    # A source that delivers later is not waited for: what is ready goes out. This one makes
    # each line only once the one before was written, so a writer that waited to gather more
    # would wait for ever (the timeout fails it).
    written = asyncio.Event()

    async def record(chunk: bytes) -> None:
        writes.append(chunk)
        written.set()

    async def after_each_write() -> AsyncIterator[bytes]:
        for _ in range(3):
            written.clear()
            yield LINE
            await written.wait()

    writes.clear()
    subscriber = pull(Flux.from_async_iterable(after_each_write()), window=8)
    async with asyncio.timeout(5):
        assert await write_all(subscriber, b"".join, record, batch=8) is None
    assert writes == [LINE, LINE, LINE]


async def test_write_all_writes_what_it_gathered_before_an_encode_error() -> None:
    window = 8
    probe = Probe()

    def encode(items: list[int]) -> bytes:
        if 100 in items:
            raise Boom("cannot encode 100")
        return b"".join(b"%d\n" % i for i in items)

    writes: list[bytes] = []

    async def write(chunk: bytes) -> None:
        writes.append(chunk)

    error = await write_all(
        pull(probe.endless(lambda i: i), window=window), encode, write, batch=window
    )
    assert isinstance(error, Boom)
    # Every batch before the one that failed, gathered into one write, then nothing more.
    assert writes == [b"".join(b"%d\n" % i for i in range(100 // window * window))]
    assert probe.live == 0  # the source is cancelled


def test_sse_encoding() -> None:
    assert encode_event(ServerSentEvent("a\r\nb", "e", "1", 300)) == (
        b"event: e\nid: 1\nretry: 300\ndata: a\ndata: b\n\n"
    )
    assert encode_event(ServerSentEvent("")) == b"data: \n\n"
    assert encode_error(Boom("x")) == b"event: error\ndata: Boom: x\n\n"
    with pytest.raises(ValueError, match="single line"):
        encode_event(ServerSentEvent("a", event="x\ny"))
    encoder = SSEEncoder[dict[str, int]](None, lambda d: f"k{d['k']}", lambda d: d["k"])
    assert encoder({"k": 3}) == b'event: k3\nid: 3\ndata: {"k":3}\n\n'


def test_sse_parser_handles_the_wire_format() -> None:
    raw = (
        "\ufeff: a comment\n"
        "retry: 1000\n"
        "event: greet\n"
        "id: 7\n"
        "data: hello\n"
        "data:  world\n"
        "\n"
        "data:no space\r\n"
        "retry: soon\r\n"
        "\r\n"
        "id\n"
        "data\n"
        "\n"
        "event: ignored-without-data\n"
        "\n"
        "data: tail\r"
        "\r\n"  # a lone CR ends a line too; the CRLF is the blank line
    ).encode()
    parser = SSEParser()
    events = [event for i in range(len(raw)) for event in parser.feed(raw[i : i + 1])]
    assert events == [
        ServerSentEvent("hello\n world", "greet", "7", 1000),
        ServerSentEvent("no space", None, "7"),
        ServerSentEvent("", None, ""),
        ServerSentEvent("tail", None, ""),
    ]
    assert parser.retry == 1000
    assert parser.last_event_id == ""
