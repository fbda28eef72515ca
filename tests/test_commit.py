"""PositionSet: the compact set of source positions a commit record keeps."""

from __future__ import annotations

import json
from collections.abc import Hashable

from hypothesis import given, strategies as st

from reactive_aio import CommitListener, PositionSet

positions = st.sets(
    st.one_of(st.integers(-5, 80), st.sampled_from(["a", "b", ("s", 1), ("s", 2)])), max_size=40
)


@given(positions, positions)
def test_behaves_as_a_set(a: set[Hashable], b: set[Hashable]) -> None:
    x, y = PositionSet(a), PositionSet(b)
    assert set(x) == a
    assert len(x) == len(a)
    assert bool(x) == bool(a)
    assert set(x | y) == a | b
    assert set(x - y) == a - b
    assert set(x.intersection(y)) == a & b
    assert x.issuperset(y) == (a >= b)
    assert x.issuperset(b) == (a >= b)
    for value in range(-7, 83):
        assert (value in x) == (value in a)
        assert x.overlaps(value, value + 3) == bool({value, value + 1, value + 2} & a)
        assert x.contains_range(value, value + 3) == ({value, value + 1, value + 2} <= a)


@given(positions)
def test_is_a_sequence_that_survives_json(a: set[Hashable]) -> None:
    x = PositionSet(a)
    listed = list(x)
    assert [x[i] for i in range(len(x))] == listed
    assert x[::3] == listed[::3]
    assert PositionSet.from_json(json.loads(json.dumps(x.to_json()))) == x


def test_runs_are_stored_compactly() -> None:
    x = PositionSet([*range(1_000), *range(2_000, 3_000), "m-7"])
    assert x.ranges() == [(0, 1_000), (2_000, 3_000)]
    assert x.to_json() == {"ranges": [[0, 1_000], [2_000, 3_000]], "values": ["m-7"]}
    assert x.describe() == "0..999, 2000..2999, 'm-7'"
    assert PositionSet(range(0, 40, 2)).describe(limit=2) == "0, 2 and 18 more runs"
    assert True not in PositionSet([1])  # bool is not an integer position
    assert PositionSet.from_ranges([(5, 9), (0, 3), (2, 6)]) == PositionSet(range(9))


def test_a_plain_object_with_committed_is_a_listener() -> None:
    class Acks:
        def committed(self, batch_id: int, positions: object) -> None:
            pass

    assert isinstance(Acks(), CommitListener)
