"""to_spark: exactly-once landing, resume, failures that name their records, Spark reading it."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

from reactive_aio import Flux, PositionSet
from reactive_aio.spark import (
    SparkSink,
    SparkWriteError,
    _lander as lander_module,
    committed_positions,
    read_committed,
    recover_target,
    to_spark,
)
from reactive_aio.spark._landing import LOG_DIR, CommitRecord, TargetLog
from reactive_aio.testing import TestPublisher

BOTH_LOOPS = ["asyncio", "uvloop"]


def _batches(start: int, stop: int, size: int) -> list[pa.RecordBatch]:
    return [
        pa.record_batch(
            {"id": list(range(i, min(i + size, stop))), "tag": ["x"] * (min(i + size, stop) - i)}
        )
        for i in range(start, stop, size)
    ]


def _with_pos(batches: list[pa.RecordBatch]) -> list[pa.RecordBatch]:
    return [b.append_column("pos", b.column("id")) for b in batches]


def _ids(path: Path) -> list[int]:
    ids: list[int] = ds.dataset(path, format="parquet").to_table().column("id").to_pylist()
    return sorted(ids)


class Recorder:
    """A CommitListener keeping every report."""

    def __init__(self) -> None:
        self.reports: list[tuple[int, list[Any]]] = []

    def committed(self, batch_id: int, positions: Sequence[Any]) -> None:
        self.reports.append((batch_id, list(positions)))


async def test_lands_every_batch_once_and_spark_reads_it(spark: Any, tmp_path: Path) -> None:
    out = tmp_path / "landed"
    recorder = Recorder()
    sink = to_spark(out, batch_rows=3_000, positions="pos", on_commit=recorder)
    Flux.from_iterable(_with_pos(_batches(0, 10_000, 500))).subscribe(sink)
    assert await sink == 10_000
    assert sink.writes == 4  # 3 full batches of 3,000 rows and the 1,000 left at completion
    assert [(b, p[0], p[-1]) for b, p in recorder.reports] == [
        (0, 0, 2_999),
        (1, 3_000, 5_999),
        (2, 6_000, 8_999),
        (3, 9_000, 9_999),
    ]
    # One file per batch, named by batch; the positions column is not landed.
    assert sorted(p.name.split("-")[1] for p in out.glob("part-*.parquet")) == [
        "000000",
        "000001",
        "000002",
        "000003",
    ]
    back = await asyncio.to_thread(lambda: spark.read.parquet(str(out)).orderBy("id").toArrow())
    assert back.column_names == ["id", "tag"]
    assert back.column("id").to_pylist() == list(range(10_000))
    (name,) = (out / LOG_DIR / "commits").glob("0000000001-*.json")
    record = json.loads(name.read_text())
    assert record["rows"] == 3_000
    assert record["positions"] == {"ranges": [[3_000, 6_000]], "values": []}


async def test_a_rerun_lands_only_what_is_not_committed(tmp_path: Path) -> None:
    first = to_spark(tmp_path, batch_rows=1_000, positions="pos")
    Flux.from_iterable(_with_pos(_batches(0, 2_500, 250))).subscribe(first)
    assert await first == 2_500
    assert await committed_positions(tmp_path) == PositionSet(range(2_500))

    recorder = Recorder()
    again = to_spark(tmp_path, batch_rows=1_000, positions="pos", on_commit=recorder)
    # Items straddling the committed range are cut row by row; the rest lands.
    Flux.from_iterable(_with_pos(_batches(2_000, 4_000, 300))).subscribe(again)
    assert await again == 1_500
    assert again.rows_skipped == 500
    assert _ids(tmp_path) == list(range(4_000))
    # The skipped rows are reported under the batch that committed them, then the new batches.
    assert [(b, p[0], p[-1]) for b, p in recorder.reports[:2]] == [
        (2, 2_000, 2_299),
        (2, 2_300, 2_499),
    ]
    skipped = [p for b, p in recorder.reports if b == 2]
    assert sorted(x for p in skipped for x in p) == list(range(2_000, 2_500))
    assert [b for b, _ in recorder.reports if b > 2] == [3, 4]


async def test_redelivered_items_are_reported_not_landed(tmp_path: Path) -> None:
    """Items named by a function (a broker's message sequence): all-or-nothing per item."""
    recorder = Recorder()
    rows = [{"seq": i, "body": f"m{i}"} for i in range(10)]
    sink = to_spark(tmp_path, batch_rows=4, positions=lambda row: [row["seq"]], on_commit=recorder)
    Flux.from_iterable(rows).subscribe(sink)
    assert await sink == 10
    redelivery = Recorder()
    sink = to_spark(
        tmp_path, batch_rows=4, positions=lambda row: [row["seq"]], on_commit=redelivery
    )
    Flux.from_iterable([rows[6], rows[1], {"seq": 10, "body": "m10"}]).subscribe(sink)
    assert await sink == 1
    assert redelivery.reports == [(1, [6]), (0, [1]), (3, [10])]

    partly = to_spark(tmp_path, positions=lambda row: [row["seq"], 99])
    Flux.from_iterable([rows[0]]).subscribe(partly)
    with pytest.raises(SparkWriteError, match="only partly committed"):
        await partly


@pytest.mark.asyncio(loop_factories=BOTH_LOOPS)
async def test_a_failing_write_names_every_record_that_did_not_land(tmp_path: Path) -> None:
    # Parquet for Spark holds microseconds: a timestamp with nanoseconds cannot be written.
    def item(i: int, nanos: int = 0) -> pa.RecordBatch:
        stamps = pa.array([10**15 + (j * 1_000) + nanos for j in range(100)], pa.timestamp("ns"))
        return pa.record_batch({"t": stamps, "pos": list(range(i * 100, i * 100 + 100))})

    items = [item(i, nanos=7 if i == 3 else 0) for i in range(12)]
    sink = to_spark(tmp_path, batch_rows=300, positions="pos")
    Flux.from_iterable(items).subscribe(sink)
    with pytest.raises(SparkWriteError) as caught:
        await sink
    error = caught.value
    # Batch 0 (items 0-2) landed; batch 1 (items 3-5) failed while batch 2 (6-8) was gathered.
    assert sink.rows_written == 300
    assert error.not_landed == PositionSet(range(300, 900))
    assert error.rows_not_landed == 600
    assert "600 rows did not land: source positions 300..899" in str(error)
    assert sink.rows_written + error.rows_not_landed + sink.rows_skipped == sink.rows_received
    landed = ds.dataset(tmp_path, format="parquet").to_table()
    assert landed.num_rows == 300
    assert not list((tmp_path / LOG_DIR / "staging").glob("*"))


async def test_a_drifting_batch_names_the_column_after_the_good_ones_landed(tmp_path: Path) -> None:
    good = _batches(0, 600, 200)
    bad = pa.record_batch({"id": [600, 601], "tag": [1, 2]})
    sink = to_spark(tmp_path, batch_rows=10_000)
    Flux.from_iterable([*good, bad, *_batches(602, 700, 50)]).subscribe(sink)
    with pytest.raises(SparkWriteError, match="column 'tag' is int64 in this batch but string"):
        await sink
    assert _ids(tmp_path) == list(range(600))
    # The target's schema stays fixed for later sinks too.
    later = to_spark(tmp_path)
    Flux.just(pa.record_batch({"id": [1]})).subscribe(later)
    with pytest.raises(SparkWriteError, match="column 'tag' of the target is missing"):
        await later


async def test_rows_with_nulls_land_in_the_given_schema_on_time(tmp_path: Path) -> None:
    schema = pa.schema([("id", pa.int64()), ("note", pa.string())])
    sink = to_spark(tmp_path, batch_rows=1_000_000, max_latency=0.2, schema=schema)
    rows = [{"id": i, "note": None if i % 2 else "even"} for i in range(50)]
    publisher = TestPublisher[Any].create()
    publisher.subscribe(sink)
    while publisher.demand == 0:  # the log is read first  # noqa: ASYNC110
        await asyncio.sleep(0.01)
    publisher.next(rows[0])
    publisher.next(*rows[1:25])
    while sink.writes == 0:  # written by the latency timer, not by size or completion  # noqa: ASYNC110
        await asyncio.sleep(0.01)
    publisher.next(*rows[sink.rows_received :]).complete()
    assert await sink == 50
    table = ds.dataset(tmp_path, format="parquet").to_table()
    assert table.schema == schema
    assert table.column("note").null_count == 25

    extra = to_spark(tmp_path, schema=schema)
    Flux.just({"id": 1, "note": "a", "more": 2}).subscribe(extra)
    with pytest.raises(SparkWriteError, match="column 'more'"):
        await extra


async def test_modes_refuse_or_empty_a_target(tmp_path: Path) -> None:
    sink = to_spark(tmp_path)
    Flux.from_iterable(_batches(0, 10, 10)).subscribe(sink)
    await sink
    refused = to_spark(tmp_path, mode="error")
    Flux.from_iterable(_batches(0, 10, 10)).subscribe(refused)
    with pytest.raises(SparkWriteError, match="is not empty") as caught:
        await refused
    assert caught.value.rows_not_landed == 0
    fresh = to_spark(tmp_path, mode="overwrite")
    Flux.from_iterable(_batches(100, 105, 10)).subscribe(fresh)
    assert await fresh == 5
    assert _ids(tmp_path) == list(range(100, 105))
    with pytest.raises(ValueError, match="exactly one target"):
        to_spark()
    with pytest.raises(ValueError, match="exactly one target"):
        to_spark(tmp_path, table="t")


async def test_an_empty_stream_leaves_a_readable_target(spark: Any, tmp_path: Path) -> None:
    schema = pa.schema([("id", pa.int64())])
    sink = to_spark(tmp_path, schema=schema)
    Flux.empty().subscribe(sink)
    assert await sink == 0
    assert await asyncio.to_thread(lambda: spark.read.parquet(str(tmp_path)).count()) == 0


async def test_readers_never_see_part_of_a_batch(tmp_path: Path) -> None:
    seen: set[int] = set()
    stop = threading.Event()

    def read() -> None:
        while not stop.is_set():
            try:
                seen.add(ds.dataset(tmp_path, format="parquet").count_rows())
            except FileNotFoundError as error:
                # pyarrow lists the log's directory before it skips it: a staging directory
                # deleted meanwhile fails that listing, which a reader retries (the guide).
                if f"/{LOG_DIR}/staging/" not in str(error):
                    raise

    reader = threading.Thread(target=read)
    reader.start()
    try:
        # One file per batch. A partitioned batch (a file per partition value) becomes
        # visible a file at a time: see the next test.
        sink = to_spark(tmp_path, batch_rows=1_000)
        Flux.from_iterable(_batches(0, 20_000, 100)).subscribe(sink)
        assert await sink == 20_000
    finally:
        stop.set()
        await asyncio.to_thread(reader.join)
    assert all(count % 1_000 == 0 for count in seen), sorted(seen)


def _crash_after_the_commit_of_batch_2(target: Path) -> None:
    """What a writer killed after batch 2's commit record, before its rename, leaves, while
    it was staging its next batch: no live lock, two staging directories."""
    log = TargetLog.open(target)
    for stage in ("crashed/0", "crashed/1"):
        staging = Path(log.staging(stage))
        staging.mkdir(parents=True)
        pq.write_table(pa.table({"tag": ["x"] * 100}), staging / f"part-{stage[-1]}.parquet")
    record = CommitRecord(
        2, 100, ("part-0.parquet",), PositionSet(range(200, 300)), "crashed", "crashed/0"
    )
    log.write_atomically(
        log.path(LOG_DIR, "commits", record.name), json.dumps(record.to_json()).encode()
    )
    (target / LOG_DIR / "writers").mkdir(exist_ok=True)
    (target / LOG_DIR / "writers" / "crashed.lock").touch()


async def test_recovery_publishes_committed_and_drops_uncommitted(tmp_path: Path) -> None:
    sink = to_spark(tmp_path, batch_rows=100, positions="id")
    Flux.from_iterable(_batches(0, 200, 100)).subscribe(sink)
    await sink
    _crash_after_the_commit_of_batch_2(tmp_path)
    staging = tmp_path / LOG_DIR / "staging" / "crashed"
    # Reading only reads: the staged files stay where they are.
    assert await committed_positions(tmp_path) == PositionSet(range(300))
    assert sorted(p.name for p in staging.iterdir()) == ["0", "1"]
    again = to_spark(tmp_path, batch_rows=100, positions="id")
    Flux.from_iterable(_batches(0, 400, 100)).subscribe(again)
    assert await again == 100
    assert again.rows_skipped == 300
    assert (tmp_path / "part-0.parquet").exists()
    assert not staging.exists()
    assert not (tmp_path / LOG_DIR / "writers" / "crashed.lock").exists()
    assert ds.dataset(tmp_path, format="parquet").count_rows() == 400


class _Held:
    """Holds the first batch that one sink stages, between its staging and its commit: the
    interleaving where another hand touches the target while a writer is about to commit."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.run = ""
        self.staged = threading.Event()
        self.released = threading.Event()
        write = lander_module._write_arrow

        def held_write(log: TargetLog, staging: str, *args: Any) -> tuple[list[str], list[Any]]:
            files = write(log, staging, *args)
            if f"/{self.run}/" in staging and not self.staged.is_set():
                self.staged.set()
                self.released.wait(60)
            return files

        monkeypatch.setattr(lander_module, "_write_arrow", held_write)

    async def hold(self, sink: SparkSink, items: list[pa.RecordBatch]) -> None:
        """Subscribe *sink* to *items* and return once its first batch is staged."""
        self.run = sink.run
        Flux.from_iterable(items).subscribe(sink)
        assert await asyncio.to_thread(self.staged.wait, 60)


@pytest.mark.asyncio(loop_factories=BOTH_LOOPS)
async def test_readers_and_a_second_sink_leave_a_writers_staged_batch_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    held = _Held(monkeypatch)
    first = to_spark(tmp_path, batch_rows=100, positions="pos")
    await held.hold(first, _with_pos(_batches(0, 100, 100)))
    assert await committed_positions(tmp_path) == PositionSet()
    second = to_spark(tmp_path, batch_rows=100, positions="pos")
    Flux.from_iterable(_with_pos(_batches(100, 300, 100))).subscribe(second)
    assert await second == 200
    held.released.set()
    assert await first == 100
    assert _ids(tmp_path) == list(range(300))
    assert await committed_positions(tmp_path) == PositionSet(range(300))
    reopened = to_spark(tmp_path, positions="pos")
    Flux.empty().subscribe(reopened)
    assert await reopened == 0
    assert list((tmp_path / LOG_DIR / "writers").iterdir()) == []


@pytest.mark.asyncio(loop_factories=BOTH_LOOPS)
async def test_what_another_writer_committed_meanwhile_is_reported_not_landed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    held = _Held(monkeypatch)
    recorder = Recorder()
    first = to_spark(tmp_path, batch_rows=200, positions="pos", on_commit=recorder)
    await held.hold(first, _with_pos(_batches(0, 200, 50)))
    second = to_spark(tmp_path, batch_rows=200, positions="pos")
    Flux.from_iterable(_with_pos(_batches(100, 300, 50))).subscribe(second)
    assert await second == 200
    held.released.set()
    assert await first == 100
    assert (first.rows_written, first.rows_skipped) == (100, 100)
    assert _ids(tmp_path) == list(range(300))
    # The second writer's batch 0 carried 100..199; the first's own batch became batch 1.
    assert [(b, p[0], p[-1], len(p)) for b, p in recorder.reports] == [
        (0, 100, 149, 50),
        (0, 150, 199, 50),
        (1, 0, 99, 100),
    ]


async def test_overwrite_waits_for_no_writer_it_would_wipe_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    held = _Held(monkeypatch)
    first = to_spark(tmp_path, batch_rows=100, positions="pos")
    await held.hold(first, _with_pos(_batches(0, 100, 100)))
    wiping = to_spark(tmp_path, mode="overwrite")
    Flux.from_iterable(_batches(500, 600, 100)).subscribe(wiping)
    with pytest.raises(SparkWriteError, match="another writer"):
        await wiping
    held.released.set()
    assert await first == 100
    assert _ids(tmp_path) == list(range(100))


async def test_listener_reports_in_order_one_at_a_time(tmp_path: Path) -> None:
    log: list[str] = []

    class Slow:
        async def committed(self, batch_id: int, positions: Sequence[Any]) -> None:
            log.append(f"start {batch_id}")
            await asyncio.sleep(0.02)
            log.append(f"end {batch_id}")

    sink = to_spark(tmp_path, batch_rows=100, positions="id", on_commit=Slow())
    Flux.from_iterable(_batches(0, 500, 100)).subscribe(sink)
    assert await sink == 500
    assert log == [f"{edge} {b}" for b in range(5) for edge in ("start", "end")]


async def test_a_table_target(spark: Any, tmp_path: Path) -> None:
    location = tmp_path / "events_table"
    await asyncio.to_thread(
        spark.sql,
        f"CREATE TABLE sink_events (id BIGINT, tag STRING) USING parquet LOCATION '{location}'",
    )
    try:
        for start in (0, 1_000):  # the second run overlaps the first by 500 rows
            sink = to_spark(
                table="sink_events",
                spark=spark,
                batch_rows=400,
                positions=lambda b: b.column("id").to_pylist(),
            )
            Flux.from_iterable(_batches(start // 2, start + 1_000, 100)).subscribe(sink)
            await sink
        count = await asyncio.to_thread(lambda: spark.table("sink_events").count())
        assert count == 2_000
    finally:
        await asyncio.to_thread(spark.sql, "DROP TABLE sink_events")


async def test_the_spark_engine_lands_other_formats(spark: Any, tmp_path: Path) -> None:
    sink = to_spark(tmp_path, spark=spark, format="json", batch_rows=400, positions="id")
    Flux.from_iterable(_batches(0, 1_200, 200)).subscribe(sink)
    assert await sink == 1_200
    assert sink.writes == 3
    back = await asyncio.to_thread(lambda: spark.read.json(str(tmp_path)).count())
    assert back == 1_200
    assert await committed_positions(tmp_path) == PositionSet(range(1_200))


async def test_lands_through_spark_connect(connect_spark: Any, tmp_path: Path) -> None:
    """Both engines, through a Connect server that shares this machine's filesystem."""
    arrow = to_spark(tmp_path / "arrow", batch_rows=500, positions="pos")
    Flux.from_iterable(_with_pos(_batches(0, 1_200, 200))).subscribe(arrow)
    assert await arrow == 1_200
    through = to_spark(
        tmp_path / "spark", spark=connect_spark, engine="spark", batch_rows=500, positions="pos"
    )
    Flux.from_iterable(_with_pos(_batches(0, 1_200, 200))).subscribe(through)
    assert await through == 1_200
    for name in ("arrow", "spark"):
        df = connect_spark.read.parquet(str(tmp_path / name))
        count = await asyncio.to_thread(df.count)
        assert count == 1_200
        assert await committed_positions(tmp_path / name) == PositionSet(range(1_200))


class _Requests:
    """A subscription that only records what was asked of it."""

    def __init__(self) -> None:
        self.requested = 0
        self.cancelled = False

    def request(self, n: int) -> None:
        self.requested += n

    def cancel(self) -> None:
        self.cancelled = True


async def test_items_in_flight_after_the_cancel_are_named_too(tmp_path: Path) -> None:
    sink = to_spark(tmp_path, batch_rows=1_000, positions="pos")
    subscription = _Requests()
    sink.on_subscribe(subscription)
    while subscription.requested == 0:  # the log is read first  # noqa: ASYNC110
        await asyncio.sleep(0.01)
    good, drifting, late = _with_pos(_batches(0, 300, 100))
    sink.on_next(good)
    sink.on_next(
        drifting.cast(pa.schema([("id", pa.float64()), ("tag", pa.string()), ("pos", pa.int64())]))
    )
    assert subscription.cancelled
    sink.on_next(late)  # allowed in flight after a cancel (rule 3.13): it does not land
    with pytest.raises(SparkWriteError) as caught:
        await sink
    assert caught.value.not_landed == PositionSet(range(100, 300))
    assert _ids(tmp_path) == list(range(100))
    assert sink.rows_written + caught.value.rows_not_landed == sink.rows_received


async def test_spark_reads_a_partitioned_target_natively(spark: Any, tmp_path: Path) -> None:
    batches = [
        pa.record_batch({"id": list(range(i, i + 100)), "day": [f"d{j % 3}" for j in range(100)]})
        for i in range(0, 1_000, 100)
    ]
    sink = to_spark(tmp_path, batch_rows=400, partition_by=["day"])
    Flux.from_iterable(batches).subscribe(sink)
    assert await sink == 1_000
    df = spark.read.parquet(str(tmp_path))
    counts = await asyncio.to_thread(lambda: df.groupBy("day").count().orderBy("day").collect())
    assert [(row["day"], row["count"]) for row in counts] == [("d0", 340), ("d1", 330), ("d2", 330)]


def _dictionary_columns(path: Path) -> set[str]:
    row_group = pq.read_metadata(path).row_group(0)
    chunks = map(row_group.column, range(row_group.num_columns))
    return {chunk.path_in_schema for chunk in chunks if chunk.has_dictionary_page}


@pytest.mark.parametrize("partition_by", [[], ["day"]])
async def test_columns_a_dictionary_did_not_shrink_are_written_plain_after_the_first_batch(
    tmp_path: Path, partition_by: list[str]
) -> None:
    rows = lander_module.SETTLING_ROWS
    batches = [
        pa.record_batch(
            {
                "id": range(start, start + rows),  # distinct: no dictionary pays
                "name": [f"flight {i}" for i in range(start, start + rows)],
                "delay": [float(i % 50) for i in range(rows)],  # few values: it pays
                "carrier": [None if i % 9 == 0 else f"c{i % 7}" for i in range(rows)],
                "day": [f"d{i % 2}" for i in range(rows)],
            }
        )
        for start in range(0, 3 * rows, rows)
    ]
    sink = to_spark(tmp_path, batch_rows=rows, partition_by=partition_by)
    Flux.from_iterable(batches).subscribe(sink)
    assert await sink == 3 * rows
    files = sorted(
        await asyncio.to_thread(lambda: list(tmp_path.glob("**/part-*.parquet"))),
        key=lambda path: path.name,
    )
    everything = {"id", "name", "delay", "carrier", "day"} - set(partition_by)
    # The first batch has pyarrow's defaults; the second may be written alongside it.
    assert _dictionary_columns(files[0]) == everything
    assert _dictionary_columns(files[-1]) == everything - {"id", "name"}
    assert _ids(tmp_path) == list(range(3 * rows))


async def test_a_writer_whose_target_was_overwritten_meanwhile_fails_at_its_commit(
    tmp_path: Path,
) -> None:
    first = to_spark(tmp_path, batch_rows=100, positions="pos")
    Flux.from_iterable(_with_pos(_batches(0, 100, 100))).subscribe(first)
    assert await first == 100
    idle = to_spark(tmp_path, batch_rows=100, positions="pos")
    publisher = TestPublisher[Any].create()
    publisher.subscribe(idle)
    while publisher.demand == 0:  # it has read the log  # noqa: ASYNC110
        await asyncio.sleep(0.01)
    # It has staged nothing, so it holds no lock, and an overwrite may go ahead.
    wiping = to_spark(tmp_path, batch_rows=100, positions="pos", mode="overwrite")
    Flux.from_iterable(_with_pos(_batches(500, 600, 100))).subscribe(wiping)
    assert await wiping == 100
    publisher.next(*_with_pos(_batches(100, 200, 100))).complete()
    with pytest.raises(SparkWriteError, match="overwritten by another writer"):
        await idle
    assert _ids(tmp_path) == list(range(500, 600))
    assert await committed_positions(tmp_path) == PositionSet(range(500, 600))


@pytest.mark.asyncio(loop_factories=BOTH_LOOPS)
async def test_read_committed_never_shows_part_of_a_partitioned_batch(
    spark: Any, tmp_path: Path
) -> None:
    batches = [
        pa.record_batch({"id": list(range(i, i + 100)), "day": [f"d{j % 4}" for j in range(100)]})
        for i in range(0, 800, 100)
    ]
    sink = to_spark(tmp_path, batch_rows=400, partition_by=["day"], positions="pos")
    Flux.from_iterable(_with_pos(batches)).subscribe(sink)
    assert await sink == 800
    # What a writer killed between the renames of its last batch leaves: two of the batch's
    # four files still staged.
    log = TargetLog.open(tmp_path)
    last = log.read_records()[-1]
    assert len(last.files) == 4
    for name in last.files[:2]:
        staged = Path(log.staging(last.stage)) / name
        staged.parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).rename(staged)
    plain = ds.dataset(tmp_path, format="parquet", partitioning="hive").to_table()
    assert 400 < plain.num_rows < 800  # a directory reader sees part of the batch

    def ids() -> list[int]:
        frame = read_committed(spark, tmp_path)
        return sorted(row["id"] for row in frame.select("id").collect())

    assert await asyncio.to_thread(ids) == list(range(400))
    await recover_target(tmp_path)
    assert await asyncio.to_thread(ids) == list(range(800))
    assert ds.dataset(tmp_path, format="parquet", partitioning="hive").count_rows() == 800


def _typed_batch(start: int, naive: bool) -> pa.RecordBatch:
    """Two rows of every type `read_committed` gives Spark the schema of (one of them null),
    and, if *naive*, a timestamp without a time zone, whose schema Spark infers."""
    import datetime as dt
    import decimal

    rows = [start, start + 1]
    day = dt.date(2013, 1, 1)
    at = dt.datetime(2013, 1, 1, 5, tzinfo=dt.UTC)
    columns = {
        "id": pa.array(rows, pa.int64()),
        "b": pa.array([True, None]),
        "i8": pa.array([1, None], pa.int8()),
        "i16": pa.array([2, None], pa.int16()),
        "i32": pa.array([3, None], pa.int32()),
        "f32": pa.array([0.5, None], pa.float32()),
        "f64": pa.array([1.5, None], pa.float64()),
        "dec": pa.array([decimal.Decimal("1.25"), None], pa.decimal128(10, 2)),
        "s": pa.array(["x", None], pa.string()),
        "ls": pa.array(["y", None], pa.large_string()),
        "bin": pa.array([b"z", None], pa.binary()),
        "d": pa.array([day, None], pa.date32()),
        "ts": pa.array([at, None], pa.timestamp("us", tz="UTC")),
        "ts_ms": pa.array([at, None], pa.timestamp("ms", tz="Europe/Paris")),
    }
    if naive:
        columns["local"] = pa.array([at.replace(tzinfo=None), None], pa.timestamp("us"))
    schema = pa.schema(
        [pa.field(name, array.type, nullable=name != "id") for name, array in columns.items()]
    )
    return pa.record_batch(list(columns.values()), schema=schema)


@pytest.mark.parametrize("engine", ["arrow", "spark"])
@pytest.mark.parametrize("naive", [False, True])
async def test_read_committed_reads_what_spark_infers_without_a_job_where_it_can(
    spark: Any, tmp_path: Path, engine: Literal["arrow", "spark"], naive: bool
) -> None:
    """A target of plain types is read with the schema of its log, which is the one Spark
    infers from its files, without Spark's job that reads a footer; other targets as before."""
    sink = to_spark(tmp_path, spark=spark, engine=engine, batch_rows=4, positions="pos")
    batches = _with_pos([_typed_batch(i, naive) for i in range(0, 8, 2)])
    Flux.from_iterable(batches).subscribe(sink)
    assert await sink == 8

    def read() -> tuple[Any, Any, list[int]]:
        files = [str(path) for path in tmp_path.glob("part-*")]
        context = spark.sparkContext
        context.setJobGroup("read_committed", "the read only")
        try:
            frame = read_committed(spark, tmp_path)
        finally:
            context.setJobGroup("rest", "the rest")
        inferred = spark.read.parquet(*files)
        rows = [tuple(row) for row in frame.orderBy("id").collect()]
        assert rows == [tuple(row) for row in inferred.orderBy("id").collect()]
        assert len(rows) == 8
        return (
            frame.schema,
            inferred.schema,
            context.statusTracker().getJobIdsForGroup("read_committed"),
        )

    schema, inferred, jobs = await asyncio.to_thread(read)
    assert schema == inferred
    assert (jobs == []) is not naive


async def test_read_committed_infers_the_partition_columns_of_a_partitioned_target(
    spark: Any, tmp_path: Path
) -> None:
    batch = pa.record_batch({"id": list(range(100)), "day": [j % 4 for j in range(100)]})
    sink = to_spark(tmp_path, batch_rows=100, partition_by=["day"], positions="pos")
    Flux.from_iterable(_with_pos([batch])).subscribe(sink)
    assert await sink == 100

    def read() -> tuple[str, list[int]]:
        frame = read_committed(spark, tmp_path)
        rows = frame.groupBy("day").count().orderBy("day").collect()
        return frame.schema["day"].dataType.simpleString(), [row["count"] for row in rows]

    # The directory names say 0 to 3: Spark makes the column an int, as reading it plainly.
    assert await asyncio.to_thread(read) == ("int", [25, 25, 25, 25])
