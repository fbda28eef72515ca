"""Marbles: parsing, cold playback on the loop clock, recording and rendering."""

from __future__ import annotations

import pytest

from reactive_aio import Flux
from reactive_aio.testing import (
    TestSubscriber,
    cold,
    expect_marbles,
    parse_marbles,
    record,
    render_marbles,
    run_virtual,
)

virtual = pytest.mark.asyncio(loop_factories=["virtual"])


def test_parse_frames_groups_and_origin() -> None:
    failure = ValueError("x")
    assert parse_marbles("-a-b-|") == [(1, "next", "a"), (3, "next", "b"), (5, "complete", None)]
    assert parse_marbles("a(bc)-#", {"a": 1, "b": 2, "c": 3}, error=failure) == [
        (0, "next", 1),
        (1, "next", 2),
        (1, "next", 3),
        (3, "error", failure),
    ]
    assert parse_marbles("a-^-b|") == [(2, "next", "b"), (3, "complete", None)]
    assert parse_marbles(" - a ") == [(1, "next", "a")]


@pytest.mark.parametrize("bad", ["(a", "a)", "((a))"])
def test_parse_rejects_unbalanced_groups(bad: str) -> None:
    with pytest.raises(ValueError, match="marbles"):
        parse_marbles(bad)


@pytest.mark.parametrize("marbles", ["-a-b-|", "ab(c|)", "--#", "-(ab)-c"])
def test_render_is_the_inverse_of_parse(marbles: str) -> None:
    assert render_marbles(parse_marbles(marbles)) == marbles


@virtual
async def test_cold_plays_on_the_clock() -> None:
    await expect_marbles(cold("-a-b-|"), "-a-b-|")
    await expect_marbles(cold("-a-#", error=KeyError("k")), "-a-#", error=KeyError("k"))


@virtual
async def test_cold_holds_items_until_requested() -> None:
    ts = TestSubscriber[str]()
    cold("ab|").subscribe(ts)
    await record(Flux.timer(5))  # let five seconds pass
    ts.assert_no_values().assert_not_terminated()
    ts.request(2)
    ts.assert_values("a", "b").assert_complete()


@virtual
async def test_cold_cancel_stops_playback() -> None:
    ts = TestSubscriber[str](initial_request=10)
    cold("a-b-c|").subscribe(ts)
    await ts.wait_for_values(1)
    ts.assert_values("a")
    ts.cancel()
    await record(Flux.timer(10))
    ts.assert_values("a").assert_not_terminated()


@virtual
async def test_record_returns_tuples_and_marbles() -> None:
    recording = await record(Flux.interval(1.0).take(3))
    assert recording.timeline == (
        (1.0, "next", 0),
        (2.0, "next", 1),
        (3.0, "next", 2),
        (3.0, "complete", None),
    )
    assert recording.to_marbles({"a": 0, "b": 1, "c": 2}) == "-ab(c|)"


@virtual
async def test_record_for_a_duration_cancels() -> None:
    recording = await record(Flux.interval(2.0), duration=5.0, frame=2.0)
    assert recording.to_marbles({"a": 0, "b": 1}) == "-ab"


@virtual
async def test_frame_scales_time() -> None:
    await expect_marbles(cold("-a|", frame=0.25), "-a|", frame=0.25)


@virtual
async def test_mismatch_shows_both_timelines() -> None:
    with pytest.raises(AssertionError, match=r"expected '-a--b\|'\n actual   '-a-b-\|'"):
        await expect_marbles(cold("-a-b-|"), "-a--b|")


def test_cold_needs_a_positive_frame() -> None:
    with pytest.raises(ValueError, match="frame"):
        cold("a", frame=0)


def test_non_terminating_expectation_records_up_to_its_last_frame() -> None:
    async def main() -> None:
        await expect_marbles(Flux.interval(1.0), "-abc", {"a": 0, "b": 1, "c": 2})

    run_virtual(main)
