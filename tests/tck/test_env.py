"""The TCK environment: timeouts from the environment, the scale, and the flop channel."""

from __future__ import annotations

import pytest

from reactive_aio import MAX_DEMAND, NonPositiveRequestError
from reactive_aio.tck import HelperPublisher, TestEnvironment
from reactive_aio.tck._env import set_timeout_scale
from reactive_aio.testing import TestSubscriber


async def test_defaults_match_the_jvm_tck(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (
        "DEFAULT_TIMEOUT_MILLIS",
        "DEFAULT_NO_SIGNALS_TIMEOUT_MILLIS",
        "DEFAULT_POLL_TIMEOUT_MILLIS",
        "PUBLISHER_REFERENCE_GC_TIMEOUT_MILLIS",
        "REACTIVE_AIO_TCK_TIMEOUT_SCALE",
    ):
        monkeypatch.delenv(name, raising=False)
    env = TestEnvironment()
    assert (env.timeout, env.no_signals_timeout, env.poll_timeout) == (0.1, 0.1, 0.1)
    assert env.gc_timeout == 0.3


async def test_variables_and_scale(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEFAULT_TIMEOUT_MILLIS", "200")
    monkeypatch.setenv("DEFAULT_POLL_TIMEOUT_MILLIS", "10")
    monkeypatch.setenv("PUBLISHER_REFERENCE_GC_TIMEOUT_MILLIS", "50")
    monkeypatch.setenv("REACTIVE_AIO_TCK_TIMEOUT_SCALE", "2")
    env = TestEnvironment()
    assert env.timeout == pytest.approx(0.4)
    assert env.no_signals_timeout == pytest.approx(0.4)  # N defaults to T
    assert env.poll_timeout == pytest.approx(0.02)
    assert env.gc_timeout == pytest.approx(0.1)
    set_timeout_scale(3)
    try:
        assert TestEnvironment().timeout == pytest.approx(0.6)  # the option wins
    finally:
        set_timeout_scale(None)


async def test_bad_values_are_rejected(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEFAULT_TIMEOUT_MILLIS", "soon")
    with pytest.raises(ValueError, match="DEFAULT_TIMEOUT_MILLIS"):
        TestEnvironment()
    with pytest.raises(ValueError, match="> 0"):
        set_timeout_scale(0)


async def test_flopped_errors_fail_the_check_and_feed_expect_error() -> None:
    env = TestEnvironment(timeout=0.5, poll_timeout=0.01)
    env.verify_no_async_errors_no_delay()
    error = ValueError("rule 3.9")
    env.flop(error)
    assert await env.expect_error(ValueError) is error
    env.flop("something went wrong")
    with pytest.raises(AssertionError, match="something went wrong"):
        env.verify_no_async_errors_no_delay()


async def test_expect_error_fails_on_a_different_error() -> None:
    env = TestEnvironment(timeout=0.5, poll_timeout=0.01)
    env.flop(RuntimeError("other"))
    with pytest.raises(AssertionError, match="expected ValueError"):
        await env.expect_error(ValueError)


async def test_helper_publisher_never_emits_on_the_callers_stack() -> None:
    sub: TestSubscriber[int] = TestSubscriber()
    HelperPublisher(5, lambda i: i * 10).subscribe(sub)
    assert sub.subscriptions == 0  # on_subscribe comes from a loop callback
    await sub.wait_until(lambda: sub.subscriptions == 1)
    sub.request(2)
    sub.assert_no_values()  # and so do the items
    await sub.wait_for_values(2)
    sub.assert_values(0, 10)
    sub.request(MAX_DEMAND)
    await sub.wait_terminated()
    sub.assert_values(0, 10, 20, 30, 40).assert_complete().assert_max_depth(1)


async def test_helper_publisher_signals_rule_309() -> None:
    sub: TestSubscriber[int] = TestSubscriber()
    HelperPublisher(MAX_DEMAND, lambda i: i).subscribe(sub)
    await sub.wait_until(lambda: sub.subscriptions == 1)
    sub.request(0)
    await sub.wait_terminated()
    sub.assert_error(NonPositiveRequestError, match="3.9")
