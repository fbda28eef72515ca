"""The stages of the pipeline's stream, counted at their boundaries for the live page.

A `Meter` sits after a stage, between it and the next: it counts the requests that pass up
through it (the demand the next stage signalled) and the chunks and rows that pass down. The
records travel in chunks of up to 8,192, so that is one call per chunk and one per request,
never one per record. `Stages` holds the meters of a run with the source itself (a
JetStream source reports its own figures) and the sink's bound.
"""

from __future__ import annotations

__all__ = ("Meter", "Stages")

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar, final

import attrs

if TYPE_CHECKING:
    from reactive_aio import Flux
    from reactive_aio.connectors.nats import JetStreamSource

T = TypeVar("T")

UNBOUNDED = 2**62
"""Demand at or above this is shown as unbounded (the kit's "as much as you have")."""


@final
@attrs.define(eq=False)
class Meter:
    """The counts at one stage boundary; see the module docs."""

    requested: int = 0
    """Chunks the next stage asked this one for."""
    chunks: int = 0
    rows: int = 0

    def through(self, flux: Flux[T], rows: Callable[[T], int]) -> Flux[T]:
        """*flux*, counted here: *rows* tells a chunk's rows."""

        def request(n: int) -> None:
            self.requested = min(self.requested + n, UNBOUNDED)

        def passed(chunk: T) -> None:
            self.chunks += 1
            self.rows += rows(chunk)

        return flux.do_on_request(request).do_on_next(passed)

    @property
    def outstanding(self) -> int | None:
        """Chunks asked for and not delivered yet; None for unbounded demand."""
        if self.requested >= UNBOUNDED:
            return None
        return self.requested - self.chunks


@final
@attrs.define(eq=False)
class Stages:
    """What the stream of a run is made of, for `._ui`'s figures."""

    meters: dict[str, Meter]
    """By stage: ``source``, ``validation``, ``enrichment``."""
    rejected: Callable[[], int]
    """Records rejected so far (validation's)."""
    batch_rows: int
    """The sink's batch: the bound of what it gathers."""
    source: JetStreamSource[Any] | None = None
    """The stream the records come from, when they do."""
