"""The validator, the Arrow fast path's agreement with it, loading and dead-letter reasons."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from reactive_aio_app.pipeline._flights import (
    FIELDS,
    REQUIRED_FIELDS,
    airline_names,
    load_raw,
    validate_chunk,
    validate_record,
    write_corrupted_copy,
)

GOOD = {
    "year": "2013", "month": "1", "day": "1", "dep_time": "517", "sched_dep_time": "515",
    "dep_delay": "2", "arr_time": "830", "sched_arr_time": "819", "arr_delay": "11",
    "carrier": "UA", "flight": "1545", "tailnum": "N14228", "origin": "EWR", "dest": "IAH",
    "air_time": "227", "distance": "1400", "hour": "5", "minute": "15",
    "time_hour": "2013-01-01T10:00:00Z",
}  # fmt: skip


def test_a_good_record_is_typed() -> None:
    event = validate_record(GOOD, airline_names())
    assert not isinstance(event, str)
    assert event["dep_delay"] == 2.0
    assert event["sched_dep_time"] == 515
    assert event["time_hour"].isoformat() == "2013-01-01T10:00:00+00:00"


def test_missing_optional_values_are_none() -> None:
    event = validate_record({**GOOD, "dep_time": "NA", "dep_delay": "NA", "tailnum": ""})
    assert not isinstance(event, str)
    assert event["dep_time"] is None
    assert event["dep_delay"] is None
    assert event["tailnum"] is None


@pytest.mark.parametrize(
    ("field", "value", "reason"),
    [
        ("dep_delay", "abc", "dep_delay: not a number ('abc')"),
        ("month", "13", "month: 13 is outside 1..12"),
        ("carrier", "ZZ", "carrier: unknown code 'ZZ'"),
        ("sched_dep_time", "1275", "sched_dep_time: 1275 is not an hhmm time"),
        ("time_hour", "yesterday", "time_hour: not an ISO timestamp ('yesterday')"),
        ("day", "30", None),  # February has no 30th
        ("origin", "", "origin: missing ('')"),
        ("flight", "1.5", "flight: not an integer ('1.5')"),
    ],
)
def test_a_bad_field_is_named(field: str, value: str, reason: str | None) -> None:
    record = {**GOOD, field: value}
    if field == "day":
        record["month"] = "2"
    result = validate_record(record, airline_names())
    assert isinstance(result, str)
    assert result.startswith(f"{field}:")
    if reason is not None:
        assert result == reason


@pytest.mark.parametrize("field", FIELDS)
def test_only_the_required_fields_are_required(field: str) -> None:
    record = dict(GOOD)
    del record[field]
    result = validate_record(record)
    if field in REQUIRED_FIELDS:
        assert result == f"{field}: missing"
    else:
        assert not isinstance(result, str)


def test_the_arrow_path_agrees_with_the_validator(raw_flights: Any) -> None:
    carriers = airline_names()
    batch = raw_flights.slice(0, 20_000).combine_chunks().to_batches()[0]
    chunk = validate_chunk(batch, carriers)
    names = [n for n in batch.schema.names if n != "_line"]
    columns = [batch.column(n).to_pylist() for n in names]
    expected = [
        validate_record(dict(zip(names, v, strict=True)), carriers)
        for v in zip(*columns, strict=False)
    ]
    assert chunk.rejected.num_rows == 0
    assert chunk.accepted.drop_columns(["airline"]).to_pylist() == expected
    assert set(chunk.accepted.column("airline").to_pylist()) <= set(carriers.values())


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("month", "\u0663"),  # ARABIC-INDIC DIGIT THREE: a digit, but not an ASCII one
        ("flight", "1234567890"),  # ten digits: past the plain form
        ("dep_time", "0517"),
        ("year", "+2013"),
        ("day", ""),
        ("time_hour", "2013-02-30T05:00:00Z"),  # the parser rolls it over to March 2
        ("time_hour", "2013-01-01T05:00:00+00:00"),
        ("time_hour", "2013-01-01 05:00:00Z"),
        ("time_hour", "2013-1-1T05:00:00Z"),
        ("time_hour", "2013-01-01T05:00:00.000Z"),
        ("time_hour", "2013-01-01T05:00:60Z"),
    ],
)
def test_the_arrow_path_agrees_with_the_validator_on_unusual_values(field: str, value: str) -> None:
    import pyarrow as pa

    carriers = airline_names()
    records = [GOOD, {**GOOD, field: value}, GOOD]
    batch = pa.RecordBatch.from_pylist(
        [{**record, "_line": line} for line, record in enumerate(records)],
        schema=pa.schema([*(pa.field(n, pa.string()) for n in FIELDS), ("_line", pa.int64())]),
    )
    chunk = validate_chunk(batch, carriers)
    expected = [validate_record(record, carriers) for record in records]
    assert chunk.rejected.column("source_line").to_pylist() == [
        line for line, result in enumerate(expected) if isinstance(result, str)
    ]
    assert chunk.rejected.column("reason").to_pylist() == [
        result for result in expected if isinstance(result, str)
    ]
    assert chunk.accepted.drop_columns(["airline"]).to_pylist() == [
        result for result in expected if not isinstance(result, str)
    ]


def test_the_whole_data_set_is_ordered_and_loads(raw_flights: Any) -> None:
    assert raw_flights.num_rows == 336_776
    head = raw_flights.slice(0, 3).to_pylist()
    assert next((r["month"], r["day"], r["sched_dep_time"]) for r in head) == ("1", "1", "515")


def test_corrupted_lines_are_all_rejected_with_reasons(raw_flights: Any, tmp_path: Path) -> None:
    path = tmp_path / "corrupt.csv"
    bad_lines = write_corrupted_copy(raw_flights.slice(0, 5_000), path, 200)
    table, parse_rejects = load_raw(path)
    carriers = airline_names()
    accepted = 0
    lines = set(parse_rejects.column("source_line").to_pylist())
    for batch in table.to_batches(max_chunksize=1_000):
        chunk = validate_chunk(batch, carriers)
        accepted += chunk.accepted.num_rows
        lines |= set(chunk.rejected.column("source_line").to_pylist())
        for reason, raw in zip(
            chunk.rejected.column("reason").to_pylist(),
            chunk.rejected.column("raw").to_pylist(),
            strict=True,
        ):
            assert reason.split(":")[0] in FIELDS
            assert json.loads(raw)  # the raw record is kept for the dead-letter
    assert lines == set(bad_lines)
    assert accepted == 5_000 - 200


def test_jsonl_input(tmp_path: Path) -> None:
    path = tmp_path / "flights.jsonl"
    path.write_text(json.dumps(GOOD) + "\nnot json\n" + json.dumps({**GOOD, "month": 0}) + "\n")
    table, parse_rejects = load_raw(path)
    assert parse_rejects.column("source_line").to_pylist() == [2]
    chunk = validate_chunk(table.to_batches()[0], airline_names())
    assert chunk.accepted.num_rows == 1
    assert chunk.rejected.column("reason").to_pylist() == ["month: 0 is outside 1..12"]
