"""Bridge between reactive_aio streams and Apache Spark (the ``[spark]`` extra).

Spark → stream: `from_dataframe`, `from_streaming_query`. Stream → Spark: `to_spark`,
`to_spark_stream`; reading what `to_spark` committed: `read_committed`, `committed_positions`,
`recover_target`. Spark as a stage: `spark_map`. Helpers: `spark_session` (with
`session_settings`, the settings it builds a session with, and `build_class_archive`, which
halves a local session's start), `StandaloneCluster` and `SparkConnectServer` (local services
for trials and tests), `to_thread` (a blocking Spark call off the loop, releasing the thread's
py4j connection).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._batches import ArrowBatchReader, SparkJobCancelled
    from ._cluster import SparkConnectServer, StandaloneCluster
    from ._committed import committed_positions, read_committed, recover_target
    from ._map import spark_map
    from ._session import build_class_archive, session_settings, spark_session
    from ._sink import SinkStatistics, SparkSink, SparkWriteError, to_spark
    from ._source import from_dataframe
    from ._stream_feed import SparkStreamFeed, to_spark_stream
    from ._stream_source import from_streaming_query
    from ._threads import to_thread

__all__ = (
    "ArrowBatchReader",
    "SinkStatistics",
    "SparkConnectServer",
    "SparkJobCancelled",
    "SparkSink",
    "SparkStreamFeed",
    "SparkWriteError",
    "StandaloneCluster",
    "build_class_archive",
    "committed_positions",
    "from_dataframe",
    "from_streaming_query",
    "read_committed",
    "recover_target",
    "session_settings",
    "spark_map",
    "spark_session",
    "to_spark",
    "to_spark_stream",
    "to_thread",
)

_HOMES = {
    "._batches": ("ArrowBatchReader", "SparkJobCancelled"),
    "._cluster": ("SparkConnectServer", "StandaloneCluster"),
    "._committed": ("committed_positions", "read_committed", "recover_target"),
    "._map": ("spark_map",),
    "._session": ("build_class_archive", "session_settings", "spark_session"),
    "._sink": ("SinkStatistics", "SparkSink", "SparkWriteError", "to_spark"),
    "._source": ("from_dataframe",),
    "._stream_feed": ("SparkStreamFeed", "to_spark_stream"),
    "._stream_source": ("from_streaming_query",),
    "._threads": ("to_thread",),
}
"""The private module each public name lives in: the imports above, which type checkers read
(`tests/test_exports.py` keeps the two the same)."""

if not TYPE_CHECKING:  # each part is imported when one of its names is first read
    from .._names import lazy_namespace

    __getattr__, __dir__ = lazy_namespace(__name__, _HOMES)
