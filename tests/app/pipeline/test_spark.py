"""The pipeline's session, begun before a run imports what it needs, and taken by the run."""

from __future__ import annotations

import asyncio
from typing import Any

from reactive_aio_app.pipeline import _spark
from tests.imports import imported_after


def test_a_run_takes_the_session_begun_early_on_its_master(spark: Any) -> None:
    loop = asyncio.new_event_loop()
    try:
        _spark.start_early(loop, "local[2]", False)
        _spark.start_early(loop, "local[2]", True)
        early = _spark._early["local[2]", False]
        taken = loop.run_until_complete(_spark.session("local[2]", False))
        assert taken is spark  # (one session per process: the tests' own)
        assert early.result() is taken
        # the one begun for a run with the web UI is not taken by a run without it
        assert list(_spark._early) == [("local[2]", True)]
        loop.run_until_complete(_spark.session("local[2]", True))
        assert not _spark._early
    finally:
        loop.run_until_complete(loop.shutdown_default_executor())
        loop.close()


def test_the_command_line_imports_no_part_of_a_run_before_spark_starts() -> None:
    heavy = ("nats", "pyarrow", "pyspark", "reactive_aio._flux", "reactive_aio_app.pipeline._run")
    assert imported_after("import reactive_aio_app.pipeline._cli", heavy) == []


def test_adaptive_execution_is_off_only_in_a_local_session() -> None:
    # Locally it would coalesce a few shuffle partitions onto one core; on a cluster it turns
    # the default 200 into a few tasks.
    assert _spark.session_conf("local[*]")["spark.sql.adaptive.enabled"] == "false"
    for master in ("spark://127.0.0.1:7077", "sc://127.0.0.1:15002", "yarn"):
        assert "spark.sql.adaptive.enabled" not in _spark.session_conf(master)
        assert _spark.session_conf(master)["spark.sql.codegen.wholeStage"] == "false"
