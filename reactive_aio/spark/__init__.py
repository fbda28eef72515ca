"""Bridge between reactive_aio streams and Apache Spark (the ``[spark]`` extra).

Spark → stream: `from_dataframe`. Stream → Spark: `to_spark`. Spark as a stage:
`spark_map`. Helpers: `spark_session`, `StandaloneCluster`.
"""

from __future__ import annotations

from ._batches import ArrowBatchReader, SparkJobCancelled
from ._cluster import StandaloneCluster
from ._map import spark_map
from ._session import spark_session
from ._sink import SinkStatistics, SparkSink, SparkWriteError, to_spark
from ._source import from_dataframe

__all__ = (
    "ArrowBatchReader",
    "SinkStatistics",
    "SparkJobCancelled",
    "SparkSink",
    "SparkWriteError",
    "StandaloneCluster",
    "from_dataframe",
    "spark_map",
    "spark_session",
    "to_spark",
)
