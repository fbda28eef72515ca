"""The pipeline's Spark session: its options, and a start that can begin before the run.

Most of a local session's start is its JVM loading Spark, seconds in which the run needs none
of it. The command line (`._cli`) begins the session as soon as the options are checked
(`start_early`), before it imports what the run needs (half a second), and the run then takes
that session (`session`) instead of starting one.
"""

from __future__ import annotations

__all__ = ("session", "session_conf", "start_early")

import asyncio
import contextlib
from typing import Any


def session_conf(master: str) -> dict[str, str]:
    """The options of the session the pipeline starts on *master*, besides `spark_session`'s
    own."""
    conf = {
        # The results are a few roll-ups of a few hundred thousand rows, once: on a cold JVM,
        # compiling whole-stage code costs more than it saves there (the first aggregate was
        # faster without it in every paired probe; see the Spark guide for bench_pipeline's).
        "spark.sql.codegen.wholeStage": "false",
    }
    if master.startswith("local"):
        # Adaptive execution would coalesce the few shuffle partitions of a local session
        # into one task, run on one core while the other waits, after planning the query a
        # second time. Elsewhere it stays on: it coalesces the 200 shuffle partitions of a
        # cluster's default into a few tasks instead of scheduling each (without it, the
        # aggregate took 2.5 times as long on a 2-worker standalone cluster).
        conf["spark.sql.adaptive.enabled"] = "false"
    return conf


_early: dict[tuple[str, bool], asyncio.Task[Any]] = {}
"""Sessions `start_early` began, by master and web UI, until a run takes one."""


def start_early(loop: asyncio.AbstractEventLoop, master: str, spark_ui: bool) -> None:
    """Begin the session that a run on *master* (with Spark's web UI if *spark_ui*) will take
    in *loop*, which is not running yet: its thread has started when this returns."""
    # Imported before the thread starts, so that the thread does not contend for the GIL with
    # the imports the caller makes next: the JVM's launch comes first. (Missing, the run that
    # takes the session reports it.)
    with contextlib.suppress(ImportError):
        import pyspark.sql  # noqa: F401

    task = loop.create_task(_start(master, spark_ui))
    # A run that fails before it takes the session has its own error to report.
    task.add_done_callback(lambda done: done.cancelled() or done.exception())
    _early[master, spark_ui] = task
    loop.run_until_complete(asyncio.sleep(0))  # the task's first step hands it to its thread


async def session(master: str, spark_ui: bool) -> Any:
    """The pipeline's session on *master*: the one `start_early` began, else a new one."""
    early = _early.pop((master, spark_ui), None)
    return await (early if early is not None else _start(master, spark_ui))


async def _start(master: str, spark_ui: bool) -> Any:
    from reactive_aio.spark import spark_session, to_thread

    conf = dict(session_conf(master), **{"spark.ui.enabled": "true"} if spark_ui else {})
    return await to_thread(spark_session, master, app_name="reactive-aio pipeline", conf=conf)
