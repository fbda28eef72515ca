"""Position dedupe for ``to_spark``: which source positions a target has committed, and in
which batch, so that a redelivered record is reported under its batch instead of landing twice.

Positions come per item in one of three shapes: an Arrow array (a positions column), a list
(what a positions function returned), or ``(stream offset, rows)`` when the sink has no
positions (these say nothing about the target and are never checked). An integer column is
checked against the committed ranges at once with numpy, not row by row.
"""

from __future__ import annotations

__all__ = ("CommittedIndex", "PartlyCommitted", "Positions", "runs")

import math
from bisect import bisect_right, insort
from collections.abc import Callable, Hashable, Iterable
from typing import Any

import attrs

from .._commit import PositionSet
from ._landing import CommitRecord

Positions = Callable[[Any], Iterable[Hashable]] | str


class PartlyCommitted(ValueError):
    """An item whose positions (a list) are committed in part: it cannot be split."""

    def __init__(self, part: PositionSet, committed: PositionSet) -> None:
        super().__init__(
            f"to_spark: an item at positions {part.describe()} is only partly committed "
            f"({committed.describe()}); landing it would land some records twice"
        )
        self.part = part


def runs(values: Any) -> PositionSet:
    """The positions in an Arrow array; runs of integers are found without a Python loop."""
    import numpy as np
    import pyarrow as pa

    if not pa.types.is_integer(values.type) or values.null_count:
        return PositionSet(values.to_pylist())
    ints = np.unique(values.to_numpy().astype(np.int64, copy=False))
    if len(ints) == 0:
        return PositionSet()
    breaks = np.flatnonzero(np.diff(ints) != 1) + 1
    starts = ints[np.concatenate(([0], breaks))]
    stops = ints[np.concatenate((breaks - 1, [len(ints) - 1]))] + 1
    return PositionSet.from_ranges(zip(starts.tolist(), stops.tolist(), strict=True))


@attrs.define(eq=False)
class CommittedIndex:
    """Every position committed in a target, by any writer, and the batch that committed it."""

    positions: PositionSet = attrs.field(factory=PositionSet)
    batches: int = 0
    """Committed batches known, from any writer."""
    _bounds: tuple[Any, Any] | None = None
    """`positions`' ranges as numpy arrays, for checking a positions column at once."""
    _runs: list[tuple[int, int, int]] = attrs.field(factory=list)
    """Sorted (start, stop, batch) of every committed integer run."""
    _values: dict[Hashable, int] = attrs.field(factory=dict)

    def remember(self, record: CommitRecord) -> None:
        self.batches += 1
        positions = record.positions
        if not positions:
            return
        self.positions |= positions
        self._bounds = None
        for start, stop in positions.ranges():
            insort(self._runs, (start, stop, record.batch))
        for value in positions.values:
            self._values[value] = record.batch

    def split(self, item: Any, rows: int, positions: Any) -> tuple[Any, PositionSet, int]:
        """``(item, rows, positions)`` without what is committed (None when nothing is left),
        the committed positions and their rows.

        Raises:
            PartlyCommitted: a list of positions is committed in part.
        """
        committed = self.positions
        kept = (item, rows, positions)
        if isinstance(positions, tuple) or not committed:
            return kept, PositionSet(), 0
        if isinstance(positions, list):
            inside = [p in committed for p in positions]
            if not any(inside):
                return kept, PositionSet(), 0
            part = PositionSet(positions)
            if not all(inside):
                raise PartlyCommitted(part, part.intersection(committed))
            return None, part, rows
        import numpy as np
        import pyarrow as pa

        if pa.types.is_integer(positions.type) and not positions.null_count:
            if self._bounds is None:
                ranges = committed.ranges()
                self._bounds = (
                    np.array([a for a, _ in ranges], dtype=np.int64),
                    np.array([b for _, b in ranges], dtype=np.int64),
                )
            starts, stops = self._bounds
            ints = positions.to_numpy()
            run = np.searchsorted(starts, ints, side="right") - 1
            mask = run >= 0
            mask[mask] = ints[mask] < stops[run[mask]]
        else:
            mask = np.fromiter((p in committed for p in positions.to_pylist()), bool)
        done = int(mask.sum())
        if done == 0:
            return kept, PositionSet(), 0
        skipped = runs(positions.filter(pa.array(mask)))
        if done == rows:
            return None, skipped, done
        keep = pa.array(~mask)
        return (item.filter(keep), rows - done, positions.filter(keep)), skipped, done

    def by_batch(self, positions: PositionSet) -> list[tuple[int, PositionSet]]:
        """Committed *positions* grouped under the batches that committed them, in batch order."""
        ranges: dict[int, list[tuple[int, int]]] = {}
        committed = self._runs
        for start, stop in positions.ranges():
            i = max(0, bisect_right(committed, (start, math.inf, math.inf)) - 1)
            while i < len(committed) and committed[i][0] < stop:
                run_start, run_stop, batch = committed[i]
                if max(start, run_start) < min(stop, run_stop):
                    ranges.setdefault(batch, []).append(
                        (max(start, run_start), min(stop, run_stop))
                    )
                i += 1
        values: dict[int, list[Hashable]] = {}
        for value in positions.values:
            values.setdefault(self._values[value], []).append(value)
        return [
            (batch, PositionSet.from_ranges(ranges.get(batch, ()), values.get(batch, ())))
            for batch in sorted(ranges.keys() | values.keys())
        ]
