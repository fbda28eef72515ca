"""How a sink that lands items in batches tells the sources what has landed.

A batching sink (the Spark sink, the PostgreSQL COPY sink) numbers every batch it writes. Once a
batch is durable, the sink calls `CommitListener.committed` with the batch's number and the
source positions of the items it carried, in the source's own terms: record indices for a
data-set replay, stream sequences for a broker. A source that acknowledges or checkpoints only
what has landed (a broker's ack-after-landing, a replay's resume) implements the listener. One
protocol serves every pairing of sink and source, so no connector needs its own.

The sink keeps the positions of every batch in its commit record, as a `PositionSet`: runs of
consecutive integers are stored as ranges, anything else as itself, because redelivery can be
out of order and a high-water mark alone proves nothing. A sink reopened over an existing
target gives the union of what it committed (its ``committed_positions()``), which is what a
replayable source needs to resume.

The protocol belongs to those sinks and sources, not to the streams' engine in ``_core``: it
imports nothing of the package and no extra, so ``reactive_aio.CommitListener`` and
``reactive_aio.PositionSet`` are there without Spark or a broker client installed.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Awaitable, Hashable, Iterable, Iterator, Sequence
from itertools import accumulate, islice
from typing import Any, Protocol, TypeVar, final, overload, runtime_checkable

__all__ = ("CommitListener", "PositionSet")

P_contra = TypeVar("P_contra", contravariant=True)


@runtime_checkable
class CommitListener(Protocol[P_contra]):
    """Told by a sink which source positions are durable.

    Positions are whatever the sink's ``positions`` option extracts from an item: values a
    commit record can store (ints, strings, or tuples of them). Redelivery can be out of order,
    so a batch reports every position it carried, never only the highest.
    """

    __slots__ = ()

    def committed(self, batch_id: int, positions: Sequence[P_contra]) -> Awaitable[None] | None:
        """Batch *batch_id*, carrying the items at *positions*, is durable in the sink.

        The sink calls this on its event loop, after the commit and never before. Each batch
        the sink writes is reported once, in batch order. Items found already committed when
        they arrive (a broker's redelivery, a replay after a restart) are not landed again but
        reported again, under the number of the batch that committed them and with just their
        positions, so a source that crashed before hearing of them can still acknowledge them;
        such a report can name a batch reported before. Reports never overlap: an awaitable
        result is awaited before the next report. An error raised here fails the sink's
        stream, and the batch stays committed.
        """
        ...


def _is_int(value: object) -> bool:
    return type(value) is int or (isinstance(value, int) and not isinstance(value, bool))


def _frozen(value: Any) -> Hashable:
    """A position as stored: lists (how JSON returns tuples) become tuples, recursively."""
    if isinstance(value, list | tuple):
        return tuple(_frozen(v) for v in value)
    return value  # type: ignore[no-any-return]


@final
class PositionSet(Sequence[Hashable]):
    """An immutable set of source positions, compact for runs of integers.

    Integers are kept as sorted, disjoint half-open ranges ``[start, stop)``; any other
    hashable position (a string, a tuple) as itself. ``bool`` is not treated as an integer.
    Membership is a binary search; ``len`` counts positions, not ranges. As a sequence it
    holds the integers in ascending order, then the other values.
    """

    __slots__ = ("_ends", "_len", "_starts", "_stops", "_values", "_values_seq")

    _starts: list[int]
    _stops: list[int]
    _values: frozenset[Hashable]
    _len: int
    _ends: list[int] | None
    _values_seq: list[Hashable] | None

    def __init__(self, positions: Iterable[Hashable] = ()) -> None:
        ints: list[int] = []
        values: set[Hashable] = set()
        for position in positions:
            if _is_int(position):
                ints.append(int(position))  # type: ignore[call-overload]
            else:
                values.add(_frozen(position))
        ints.sort()
        starts: list[int] = []
        stops: list[int] = []
        for value in ints:
            if stops and value <= stops[-1]:
                if value == stops[-1]:
                    stops[-1] = value + 1
                continue
            starts.append(value)
            stops.append(value + 1)
        self._set(starts, stops, frozenset(values))

    def _set(self, starts: list[int], stops: list[int], values: frozenset[Hashable]) -> None:
        self._starts = starts
        self._stops = stops
        self._values = values
        self._len = sum(b - a for a, b in zip(starts, stops, strict=True)) + len(values)
        self._ends = None  # cumulative run sizes, built on the first index lookup
        self._values_seq = None

    @classmethod
    def from_ranges(
        cls, ranges: Iterable[tuple[int, int]], values: Iterable[Hashable] = ()
    ) -> PositionSet:
        """Build from half-open integer ranges (in any order, possibly overlapping) and values."""
        loose = PositionSet(values)  # integers among *values* join the ranges
        starts: list[int] = []
        stops: list[int] = []
        for start, stop in sorted([(int(a), int(b)) for a, b in ranges if b > a] + loose.ranges()):
            if stops and start <= stops[-1]:
                stops[-1] = max(stops[-1], stop)
            else:
                starts.append(start)
                stops.append(stop)
        result = cls.__new__(cls)
        result._set(starts, stops, loose._values)
        return result

    # -- reading -------------------------------------------------------------------------

    def ranges(self) -> list[tuple[int, int]]:
        """The integer positions as sorted, disjoint half-open ranges."""
        return list(zip(self._starts, self._stops, strict=True))

    @property
    def values(self) -> frozenset[Hashable]:
        """The positions that are not integers."""
        return self._values

    def __contains__(self, position: object) -> bool:
        if isinstance(position, int) and not isinstance(position, bool):
            i = bisect_right(self._starts, position) - 1
            return i >= 0 and position < self._stops[i]
        try:
            return _frozen(position) in self._values
        except TypeError:  # unhashable: never stored
            return False

    def contains_range(self, start: int, stop: int) -> bool:
        """Whether every integer in ``[start, stop)`` is in the set (an empty range is)."""
        if stop <= start:
            return True
        i = bisect_right(self._starts, start) - 1
        return i >= 0 and stop <= self._stops[i]

    def issuperset(self, positions: Iterable[Hashable]) -> bool:
        """Whether every one of *positions* is in the set."""
        if isinstance(positions, PositionSet):
            return positions._values <= self._values and all(
                self.contains_range(a, b) for a, b in positions.ranges()
            )
        return all(p in self for p in positions)

    def __len__(self) -> int:
        return self._len

    def __bool__(self) -> bool:
        return self._len > 0

    def __iter__(self) -> Iterator[Hashable]:
        for start, stop in zip(self._starts, self._stops, strict=True):
            yield from range(start, stop)
        yield from self._ordered_values()

    def _ordered_values(self) -> list[Hashable]:
        if self._values_seq is None:
            self._values_seq = sorted(self._values, key=repr)
        return self._values_seq

    @overload
    def __getitem__(self, index: int) -> Hashable: ...

    @overload
    def __getitem__(self, index: slice) -> list[Hashable]: ...

    def __getitem__(self, index: int | slice) -> Hashable | list[Hashable]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self._len))]
        if index < 0:
            index += self._len
        if not 0 <= index < self._len:
            raise IndexError("PositionSet index out of range")
        if self._ends is None:
            self._ends = list(
                accumulate(b - a for a, b in zip(self._starts, self._stops, strict=True))
            )
        run = bisect_right(self._ends, index)
        if run < len(self._starts):
            before = self._ends[run - 1] if run else 0
            return self._starts[run] + index - before
        return self._ordered_values()[index - (self._ends[-1] if self._ends else 0)]

    def count(self, value: object) -> int:
        return 1 if value in self else 0

    def index(self, value: object, start: int = 0, stop: int | None = None) -> int:
        for i, position in enumerate(self):  # only for Sequence's contract; not a hot path
            if position == value and start <= i and (stop is None or i < stop):
                return i
        raise ValueError(f"{value!r} is not in the PositionSet")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PositionSet):
            return NotImplemented
        return (self._starts, self._stops, self._values) == (
            other._starts,
            other._stops,
            other._values,
        )

    def __hash__(self) -> int:
        return hash((tuple(self._starts), tuple(self._stops), self._values))

    # -- combining -----------------------------------------------------------------------

    def __or__(self, other: PositionSet) -> PositionSet:
        return self.union(other)

    def union(self, *others: PositionSet) -> PositionSet:
        """The positions in this set or any of *others*."""
        if not any(others):
            return self
        if not self and len(others) == 1:
            return others[0]
        ranges = [r for s in (self, *others) for r in s.ranges()]
        values = frozenset().union(*(s._values for s in (self, *others)))
        return PositionSet.from_ranges(ranges, values)

    def __sub__(self, other: PositionSet) -> PositionSet:
        return self.difference(other)

    def difference(self, other: PositionSet) -> PositionSet:
        """The positions in this set and not in *other*."""
        if not other or not self:
            return self
        ranges: list[tuple[int, int]] = []
        for start, stop in self.ranges():
            cursor = start
            i = bisect_right(other._stops, start)  # the first run of *other* ending after start
            while cursor < stop and i < len(other._starts) and other._starts[i] < stop:
                if other._starts[i] > cursor:
                    ranges.append((cursor, other._starts[i]))
                cursor = max(cursor, other._stops[i])
                i += 1
            if cursor < stop:
                ranges.append((cursor, stop))
        result = PositionSet.__new__(PositionSet)
        result._set([a for a, _ in ranges], [b for _, b in ranges], self._values - other._values)
        return result

    def intersection(self, other: PositionSet) -> PositionSet:
        """The positions in both sets."""
        return self - (self - other)

    def overlaps(self, start: int, stop: int) -> bool:
        """Whether any integer in ``[start, stop)`` is in the set."""
        i = bisect_right(self._stops, start)
        return i < len(self._starts) and self._starts[i] < stop

    # -- storing -------------------------------------------------------------------------

    def to_json(self) -> dict[str, list[Any]]:
        """A JSON-storable form: ``{"ranges": [[start, stop], ...], "values": [...]}``."""
        return {
            "ranges": [[a, b] for a, b in self.ranges()],
            "values": self._ordered_values(),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> PositionSet:
        """Read back what `to_json` wrote (tuples come back as tuples)."""
        return cls.from_ranges(
            ((int(a), int(b)) for a, b in data.get("ranges", ())),
            (_frozen(v) for v in data.get("values", ())),
        )

    def describe(self, limit: int = 8) -> str:
        """A short human form: ``0..99, 120, 'x'``, with the count of what *limit* left out."""
        parts = [
            str(a) if b == a + 1 else f"{a}..{b - 1}"
            for a, b in islice(zip(self._starts, self._stops, strict=True), limit)
        ]
        parts += [repr(v) for v in islice(self._ordered_values(), limit - len(parts))]
        shown = len(parts)
        hidden = len(self._starts) + len(self._values) - shown
        text = ", ".join(parts) if parts else "none"
        return text + (f" and {hidden} more runs" if hidden > 0 else "")

    def __repr__(self) -> str:
        return f"PositionSet({self.describe()})"
