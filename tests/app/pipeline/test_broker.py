"""raw_chunk: JetStream payloads as raw records, parsed in one call when that is exact;
stream_positions: how far a consumer is behind its stream."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

import pytest
from nats.js import JetStreamContext

from reactive_aio.connectors.nats import JetStreamSource, from_jetstream
from reactive_aio.connectors.servers import LocalNatsServer
from reactive_aio_app.pipeline._broker import (
    StreamPositions,
    _parse_records,
    _record,
    dead_letter_subject,
    raw_chunk,
    records_subject,
    stream_positions,
)
from reactive_aio_app.pipeline._flights import FIELDS
from tests.connectors.conftest import unique

RECORD = {name: str(index) for index, name in enumerate(FIELDS)}
GOOD = json.dumps({**RECORD, "_line": 7}).encode()


def _messages(payloads: list[bytes]) -> list[Any]:
    return [
        SimpleNamespace(value=payload, data=payload, sequence=100 + index)
        for index, payload in enumerate(payloads)
    ]


def _expected(payloads: list[bytes]) -> tuple[list[dict[str, Any]], list[tuple[int, str]]]:
    """What `_record` says of each payload on its own."""
    rows, rejects = [], []
    for index, payload in enumerate(payloads):
        record = _record(payload)
        if isinstance(record, str):
            rejects.append((100 + index, record))
        else:
            rows.append({**record, "_line": 100 + index, "pos": 100 + index})
    return rows, rejects


CASES = {
    "all records": [GOOD] * 5,
    "a null and a missing field": [
        json.dumps({**RECORD, "carrier": None}).encode(),
        json.dumps({k: v for k, v in RECORD.items() if k != "dest"}).encode(),
    ],
    "an extra field": [json.dumps({**RECORD, "extra": 1}).encode(), GOOD],
    "a number where a string goes": [GOOD, json.dumps({**RECORD, "year": 2013}).encode()],
    "not JSON": [GOOD, b"\x00 not a record", GOOD],
    "not an object": [GOOD, b"[1, 2]"],
    "empty": [GOOD, b"", GOOD],
    "a repeated key": [GOOD, b'{"year": "1", "year": "2"}'],
    # Row i must be payload i: a payload of two objects beside an empty one keeps the count.
    "two objects and an empty payload": [GOOD + GOOD, b"", GOOD],
    "two objects and a blank payload": [GOOD + b" " + GOOD, b" ", GOOD],
    "an object over two lines and two objects": [b'{"year":\n"1"}', GOOD + GOOD],
    "an object split over two payloads": [b'{"zz":', b'{"year": "1"}}', GOOD + GOOD],
    "a split object whose parts end in braces": [b'{"zz":{}', b'{"y":{}}}', GOOD + GOOD],
    "a trailing blank": [GOOD, GOOD + b" "],
    "escapes": [json.dumps({**RECORD, "dest": "\u00e9\n\\"}).encode()],
}


@pytest.mark.parametrize("payloads", CASES.values(), ids=CASES.keys())
async def test_each_payload_is_read_as_on_its_own(payloads: list[bytes]) -> None:
    raw, rejected, unreadable = await raw_chunk(_messages(payloads), "pos")
    rows, rejects = _expected(payloads)
    assert raw.to_pylist() == rows
    reasons = zip(rejected["source_line"].to_pylist(), rejected["reason"].to_pylist(), strict=True)
    assert list(reasons) == rejects
    assert [(message.sequence, reason) for message, reason in unreadable] == rejects


FAST = ("all records", "a null and a missing field", "an extra field", "escapes")


@pytest.mark.parametrize("name", CASES.keys())
async def test_records_of_strings_are_parsed_in_one_call(name: str) -> None:
    import pyarrow as pa

    fields = pa.schema([pa.field(field, pa.string()) for field in FIELDS])
    parsed = await _parse_records(CASES[name], fields)
    assert (parsed is not None) == (name in FAST)


async def test_no_messages() -> None:
    raw, rejected, unreadable = await raw_chunk([], "pos")
    assert (raw.num_rows, rejected.num_rows, unreadable) == (0, 0, [])
    assert raw.schema.names == [*FIELDS, "_line", "pos"]


async def test_stream_positions_say_how_far_the_consumer_is_behind(
    js: JetStreamContext, nats_server: LocalNatsServer
) -> None:
    name = unique("LAG")
    await js.add_stream(name=name, subjects=[f"{name}.>"])
    try:
        for _ in range(5):
            await js.publish(records_subject(name), b"{}")
        await js.publish(dead_letter_subject(name), b"{}")  # on the stream, not the consumer's
        taking = await js.pull_subscribe(records_subject(name), durable="lagging")
        assert len(await taking.fetch(2, timeout=5)) == 2
        source: JetStreamSource[bytes] = from_jetstream(
            nats_server.url, name, "lagging", subject=records_subject(name)
        )
        positions = stream_positions(source, 0.01)
        first = await anext(positions)
        await taking.fetch(1, timeout=5)
        second = await anext(positions)
        await positions.aclose()
    finally:
        await js.delete_stream(name)
    assert first == StreamPositions(stream=6, consumer=2, pending=3)
    assert second == StreamPositions(stream=6, consumer=3, pending=2)
