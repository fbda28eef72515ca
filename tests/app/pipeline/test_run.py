"""The main job on slices of the real data, with injected malformed records, locally and on a
standalone cluster."""

from __future__ import annotations

import asyncio
import gc
import io
import json
import os
import subprocess
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.dataset as ds
import pytest

from benchmarks.bench_pipeline import _floor
from reactive_aio import Flux
from reactive_aio.spark import to_spark
from reactive_aio.spark._cluster import StandaloneCluster
from reactive_aio_app.pipeline import (
    CARRIER_HOURS_SQL,
    OutputExists,
    Progress,
    run_pipeline,
    session_conf,
)
from reactive_aio_app.pipeline._flights import airline_names, validate_chunk, write_corrupted_copy
from reactive_aio_app.pipeline._run import _COLLECTOR, _landed_beside
from tests.app.test_publish import head_of_the_data_set
from tests.spark.processes import crash_when

from .files import snapshot
from .test_chart import png_size

HOURLY_COLUMNS = [
    "carrier",
    "time_hour",
    "flights",
    "cancelled",
    "dep_delay_mean",
    "arr_delay_mean",
]


def _hourly(spark: Any, out: Path) -> list[dict[str, Any]]:
    df = spark.read.parquet(str(out / "carrier_hourly"))
    assert df.columns == HOURLY_COLUMNS
    rows: list[dict[str, Any]] = df.orderBy("time_hour", "carrier").toArrow().to_pylist()
    for row in rows:  # means are floating point sums: compare them rounded
        for key in ("dep_delay_mean", "arr_delay_mean"):
            if row[key] is not None:
                row[key] = round(row[key], 6)
    return rows


def _run(out: Path, spark: Any, log: io.StringIO | None = None, **options: Any) -> Any:
    """The main job in this process on *spark*, without chart or progress."""
    return asyncio.run(
        run_pipeline(
            out=out, spark=spark, chart=False, progress=False, log=log or io.StringIO(), **options
        )
    )


# The pipeline tests are plain functions running their own loop: the job is end to end and
# heavy, so it runs once rather than once per loop (the bridge tests cover both loops).


def test_a_slice_lands_whole(spark: Any, tmp_path: Path) -> None:
    log = io.StringIO()
    result = asyncio.run(
        run_pipeline(
            out=tmp_path, limit=12_000, spark=spark, batch_rows=5_000, progress=False, log=log
        )
    )
    assert (result.read, result.landed, result.rejected) == (12_000, 12_000, 0)
    assert png_size(tmp_path / "delays.png") == (1100, 900)
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        ".lock",  # held while a run uses the folder (see _outputs)
        "carrier_hourly",
        "delays.png",
        "events",
        "rejected",
        "summary.json",  # what the log got, as data
    ]  # and no staging folder left behind
    summary = json.loads((tmp_path / "summary.json").read_text(encoding="utf-8"))
    assert (summary["read"], summary["landed"], summary["rejected"]) == (12_000, 12_000, 0)
    assert summary["writes"] == result.writes
    assert list(summary["phases"]) == list(result.phases)
    hourly = _hourly(spark, tmp_path)
    assert sum(r["flights"] for r in hourly) == 12_000
    events = spark.read.parquet(str(tmp_path / "events"))
    assert events.filter("airline IS NULL").count() == 0
    assert "landed 12,000, rejected 0" in log.getvalue()


def test_corrupted_records_go_to_dead_letter(spark: Any, raw_flights: Any, tmp_path: Path) -> None:
    source = tmp_path / "corrupted.csv"
    bad_lines = write_corrupted_copy(raw_flights.slice(0, 10_000), source, 1_000)
    result = asyncio.run(
        run_pipeline(
            out=tmp_path / "out",
            input_path=source,
            spark=spark,
            batch_rows=20_000,
            chart=False,
            progress=False,
            log=io.StringIO(),
        )
    )
    assert (result.read, result.landed, result.rejected) == (10_000, 9_000, 1_000)
    rejected = spark.read.parquet(str(tmp_path / "out" / "rejected")).toArrow()
    assert sorted(rejected.column("source_line").to_pylist()) == bad_lines
    assert all(":" in reason for reason in rejected.column("reason").to_pylist())


def test_the_phase_line_and_the_summary_count_the_same_records(spark: Any, tmp_path: Path) -> None:
    # 199 flights and a line that cannot be read: 200 records, read, streamed and accounted for.
    source = head_of_the_data_set(tmp_path / "flights.csv", 199)
    phases, summary = io.StringIO(), io.StringIO()
    asyncio.run(
        run_pipeline(
            out=tmp_path / "out",
            input_path=source,
            spark=spark,
            chart=False,
            progress=Progress("off", copy_to=phases),
            log=summary,
        )
    )
    assert f"] streaming 200 records into {tmp_path / 'out' / 'events'}" in phases.getvalue()
    text = summary.getvalue()
    assert "streamed 200 records in " in text
    assert ": landed 199, rejected 1 " in text
    assert "rejected records, by what was wrong: unreadable record 1\n" in text


@pytest.fixture(scope="module")
def local_hourly(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    """``carrier_hourly`` of a local run over the first 4,000 records: what a run of the same
    records on a cluster or through Spark Connect must give."""
    out = tmp_path_factory.mktemp("local")
    result = _run(out, spark, limit=4_000)
    assert (result.read, result.landed, result.rejected) == (4_000, 4_000, 0)
    return _hourly(spark, out)


def test_standalone_cluster_gives_the_same_results(
    spark: Any,
    standalone_cluster: StandaloneCluster,
    local_hourly: list[dict[str, Any]],
    tmp_path: Path,
) -> None:
    # One SparkContext per process: the cluster run is the console script in a child process.
    remote = tmp_path / "cluster"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "reactive_aio_app",
            "pipeline",
            "--master",
            standalone_cluster.master_url,
            "--limit",
            "4000",
            "--out",
            str(remote),
            "--no-chart",
            "--no-progress",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    assert "landed 4,000, rejected 0" in completed.stdout
    assert _hourly(spark, remote) == local_hourly


def _multiset(table: Any) -> Counter[tuple[Any, ...]]:
    names = sorted(table.column_names)
    return Counter(zip(*(table.column(name).to_pylist() for name in names), strict=True))


def test_a_killed_run_resumes_and_lands_every_flight_once(
    spark: Any, raw_flights: Any, tmp_path: Path
) -> None:
    limit, batch = 30_000, 5_000
    out = tmp_path / "out"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    command = [
        *(sys.executable, "-m", "reactive_aio_app", "pipeline", "--out", str(out)),
        *("--limit", str(limit), "--batch-rows", str(batch), "--no-chart", "--no-progress"),
    ]
    commits = out / "events" / "_reactive_aio" / "commits"
    # About 28 days of departures at 200,000x real time: a stream of ~12 s, so the kill
    # lands mid-stream. The reruns replay at full speed: where they start, not how fast they
    # go, is what they test.
    crash_when(
        [*command, "--speed", "200000"],
        env,
        tmp_path / "first.log",
        lambda: len(list(commits.glob("*.json"))) >= 2,
    )
    landed_before = len(list(commits.glob("*.json")))
    assert landed_before < limit // batch, "the kill came after the stream"

    landed_files = snapshot(out)
    refused = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    assert refused.returncode == 2
    assert refused.stderr.count("\n") == 1
    assert "--resume" in refused.stderr
    assert snapshot(out) == landed_files  # refused before touching anything

    resumed = subprocess.run(
        [*command, "--resume"], env=env, capture_output=True, text=True, timeout=600, check=False
    )
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    # A local run replays while its Spark context starts, then waits for what is left of it.
    assert json.loads((out / "summary.json").read_text())["phases"].keys() == {
        "start",
        "stream",
        "spark",
        "aggregate",
    }
    skipped = resumed.stdout.split("resumed: skipped ", 1)[1].split(" records", 1)[0]
    assert int(skipped.replace(",", "")) >= 2 * batch - 1
    assert f"landed {limit:,}, rejected 0" in resumed.stdout

    events = spark.read.parquet(str(out / "events")).toArrow()
    raw = raw_flights.slice(0, limit).combine_chunks().to_batches()[0]
    expected = validate_chunk(raw, airline_names()).accepted
    assert events.num_rows == limit
    assert _multiset(events) == _multiset(expected)

    # Starting over replaces the resumed target (the command line's --overwrite: the Ctrl-C test).
    log = io.StringIO()
    replaced = _run(out, spark, log, limit=limit, overwrite=True)
    assert (replaced.skipped, replaced.landed, replaced.rejected) == (0, limit, 0)
    assert "resumed" not in log.getvalue()
    assert f"landed {limit:,}, rejected 0" in log.getvalue()
    assert _multiset(spark.read.parquet(str(out / "events")).toArrow()) == _multiset(expected)


def test_a_rerun_refuses_a_landed_target_unless_told(spark: Any, tmp_path: Path) -> None:
    def run(**options: Any) -> Any:
        return _run(tmp_path, spark, limit=2_000, **options)

    run()
    with pytest.raises(OutputExists, match="--resume continues that run, --overwrite replaces it"):
        run()
    again = run(resume=True)
    assert (again.skipped, again.landed) == (2_000, 2_000)
    with pytest.raises(OutputExists, match="holds records this input does not have"):
        _run(tmp_path, spark, limit=1_000, resume=True)
    fresh = run(overwrite=True)
    assert (fresh.skipped, fresh.landed) == (0, 2_000)


def test_the_main_job_runs_through_spark_connect(
    spark: Any, connect_spark: Any, local_hourly: list[dict[str, Any]], tmp_path: Path
) -> None:
    result = _run(tmp_path, connect_spark, limit=4_000)
    assert (result.read, result.landed, result.rejected) == (4_000, 4_000, 0)
    assert _hourly(spark, tmp_path) == local_hourly


@pytest.mark.asyncio(loop_factories=["asyncio", "uvloop"])
async def test_spark_failing_beside_the_replay_stops_it_and_keeps_what_landed(
    tmp_path: Path,
) -> None:
    session: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
    stopped = asyncio.Event()

    async def endless() -> Any:
        try:
            n = 0
            while True:
                yield pa.record_batch([pa.array(range(n, n + 10), pa.int64())] * 2, ["n", "v"])
                n += 10
                await asyncio.sleep(0.005)
        finally:
            stopped.set()

    class FailTheSessionAtTheSecondCommit:
        def committed(self, batch_id: int, positions: Sequence[int]) -> None:
            if batch_id == 1:
                session.set_exception(RuntimeError("the JVM went away"))

    sink = to_spark(
        tmp_path / "events",
        batch_rows=50,
        max_latency=0.05,
        positions="n",
        on_commit=FailTheSessionAtTheSecondCommit(),
    )
    Flux.from_async_iterable(endless()).subscribe(sink)
    with pytest.raises(RuntimeError, match="the JVM went away"):
        await _landed_beside(sink, session)
    assert stopped.is_set()
    files = ds.dataset(tmp_path / "events", format="parquet")
    assert files.count_rows() == sink.rows_written >= 100  # what was committed stayed


def test_the_collector_is_eased_until_the_last_stream_phase_ends() -> None:
    before = gc.get_threshold()
    gc.unfreeze()  # (this session's freeze, taken again at the end)
    try:
        with _COLLECTOR.eased():
            eased = gc.get_threshold()
            assert eased[0] > before[0]
            assert gc.get_freeze_count() > 0
            with _COLLECTOR.eased():  # a second run in the same process
                pass
            assert gc.get_threshold() == eased  # the first runs on
            assert gc.get_freeze_count() > 0
        assert (gc.get_freeze_count(), gc.get_threshold()) == (0, before)
        gc.freeze()
        with _COLLECTOR.eased():  # frozen by someone else: left to them
            assert not _COLLECTOR.froze
        assert gc.get_freeze_count() > 0
        assert gc.get_threshold() == before
    finally:
        gc.freeze()


def test_the_benchmark_floor_starts_the_session_the_pipeline_starts() -> None:
    from reactive_aio.spark import session_settings

    program = _floor()
    assert "import reactive_aio" not in program
    assert "from reactive_aio" not in program
    assert repr(session_settings("local[*]", session_conf("local[*]"))) in program
    assert "spark.sql(" not in program
    compile(program, "floor", "exec")


def test_the_query_floor_runs_the_pipelines_aggregate_in_that_session(tmp_path: Path) -> None:
    program = _floor(tmp_path / "events")
    assert program.startswith(_floor().removesuffix("spark.stop()\n"))
    assert repr(str(tmp_path / "events")) in program
    assert repr(CARRIER_HOURS_SQL) in program
    compile(program, "query floor", "exec")
