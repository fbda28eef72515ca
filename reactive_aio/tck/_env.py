"""The TCK's test environment: timeouts, the shared async-error channel and waiting.

One `TestEnvironment` lives for one test. Everything that goes wrong outside the test's own
stack is *flopped* into `TestEnvironment.async_errors`: assertion failures found inside
signals, and every error a TCK subscriber receives in ``on_error``. ``expect_error`` looks for
expected errors in that same list, and every test ends by checking that it is empty.

Timeouts are read from the same environment variables as the JVM TCK (milliseconds) and then
multiplied by the scale factor (``REACTIVE_AIO_TCK_TIMEOUT_SCALE`` or ``--tck-timeout-scale``),
so a slow CI machine can stretch every window at once.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Callable
from typing import NoReturn, TypeVar, TypeVarTuple, Unpack, final

__all__ = (
    "ENV_GC_TIMEOUT",
    "ENV_NO_SIGNALS_TIMEOUT",
    "ENV_POLL_TIMEOUT",
    "ENV_TIMEOUT",
    "ENV_TIMEOUT_SCALE",
    "TestEnvironment",
    "set_timeout_scale",
    "timeout_scale",
)

E = TypeVar("E", bound=BaseException)
Ts = TypeVarTuple("Ts")

ENV_TIMEOUT = "DEFAULT_TIMEOUT_MILLIS"
"""T: how long to wait for an expected signal (default 100 ms)."""
ENV_NO_SIGNALS_TIMEOUT = "DEFAULT_NO_SIGNALS_TIMEOUT_MILLIS"
"""N: the window in which no signal may arrive (default: T)."""
ENV_POLL_TIMEOUT = "DEFAULT_POLL_TIMEOUT_MILLIS"
"""P: the poll interval of ``expect_error`` (default: T). The README name of the JVM TCK,
not the ``…_ENV`` spelling its code reads."""
ENV_GC_TIMEOUT = "PUBLISHER_REFERENCE_GC_TIMEOUT_MILLIS"
"""G: the pause before the garbage collection of rule 3.13 (default 300 ms)."""
ENV_TIMEOUT_SCALE = "REACTIVE_AIO_TCK_TIMEOUT_SCALE"
"""A multiplier applied to T, N, P and G (default 1.0)."""

_scale_override: float | None = None


def set_timeout_scale(scale: float | None) -> None:
    """Override the scale factor for this process (the ``--tck-timeout-scale`` option)."""
    global _scale_override
    if scale is not None and scale <= 0:
        raise ValueError(f"the TCK timeout scale must be > 0, got {scale}")
    _scale_override = scale


def timeout_scale() -> float:
    """The factor every timeout is multiplied by."""
    if _scale_override is not None:
        return _scale_override
    return _read_float(ENV_TIMEOUT_SCALE, 1.0)


def _read_float(name: str, default: float) -> float:
    raw = os.environ.get(name)
    if raw is None or not raw.strip():
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"environment variable {name}={raw!r} is not a number") from None
    if value <= 0:
        raise ValueError(f"environment variable {name}={raw!r} must be > 0")
    return value


@final
class TestEnvironment:
    """Timeouts (in seconds) and the list of asynchronous errors of one test.

    Args:
        timeout: T in seconds; default from ``DEFAULT_TIMEOUT_MILLIS`` or 0.1.
        no_signals_timeout: N in seconds; default from ``DEFAULT_NO_SIGNALS_TIMEOUT_MILLIS`` or T.
        poll_timeout: P in seconds; default from ``DEFAULT_POLL_TIMEOUT_MILLIS`` or T.
        gc_timeout: G in seconds; default from ``PUBLISHER_REFERENCE_GC_TIMEOUT_MILLIS`` or 0.3.
        scale: multiplier for all four; default `timeout_scale()`. Explicit values are scaled too.
    """

    __test__ = False  # not a pytest test class despite its name

    def __init__(
        self,
        *,
        timeout: float | None = None,
        no_signals_timeout: float | None = None,
        poll_timeout: float | None = None,
        gc_timeout: float | None = None,
        scale: float | None = None,
    ) -> None:
        factor = timeout_scale() if scale is None else scale
        base = timeout if timeout is not None else _read_float(ENV_TIMEOUT, 100.0) / 1000
        none = (
            no_signals_timeout
            if no_signals_timeout is not None
            else _read_float(ENV_NO_SIGNALS_TIMEOUT, base * 1000) / 1000
        )
        poll = (
            poll_timeout
            if poll_timeout is not None
            else _read_float(ENV_POLL_TIMEOUT, base * 1000) / 1000
        )
        gc = gc_timeout if gc_timeout is not None else _read_float(ENV_GC_TIMEOUT, 300.0) / 1000
        self.timeout = base * factor
        self.no_signals_timeout = none * factor
        self.poll_timeout = poll * factor
        self.gc_timeout = gc * factor
        self.async_errors: list[BaseException] = []
        self._lock = threading.Lock()
        self.loop = asyncio.get_running_loop()
        self.thread = threading.get_ident()

    def __repr__(self) -> str:
        return (
            f"TestEnvironment(T={self.timeout:.3f}s, N={self.no_signals_timeout:.3f}s, "
            f"P={self.poll_timeout:.3f}s, G={self.gc_timeout:.3f}s)"
        )

    # -- the flop channel ----------------------------------------------------------------

    def flop(self, error: str | BaseException) -> None:
        """Record a failure (a message or an error) without raising; thread-safe."""
        if isinstance(error, str):
            error = AssertionError(error)
        with self._lock:
            self.async_errors.append(error)

    def flop_and_fail(self, message: str) -> NoReturn:
        """Record a failure and raise it."""
        error = AssertionError(message)
        self.flop(error)
        raise error

    def drop_async_error(self) -> BaseException | None:
        """Remove and return the oldest recorded error, if any."""
        with self._lock:
            return self.async_errors.pop(0) if self.async_errors else None

    def verify_no_async_errors_no_delay(self) -> None:
        """Fail with the first recorded error, if any."""
        with self._lock:
            first = self.async_errors[0] if self.async_errors else None
            count = len(self.async_errors)
        if first is None:
            return
        more = f" (and {count - 1} more)" if count > 1 else ""
        if isinstance(first, AssertionError):
            raise AssertionError(f"{first}{more}") from None
        raise AssertionError(f"async error during the test: {first!r}{more}") from first

    async def verify_no_async_errors(self, delay: float | None = None) -> None:
        """Check, wait *delay* (default N), and check again."""
        self.verify_no_async_errors_no_delay()
        await asyncio.sleep(self.no_signals_timeout if delay is None else delay)
        self.verify_no_async_errors_no_delay()

    async def expect_error(
        self, kind: type[E], timeout: float | None = None, message: str | None = None
    ) -> E:
        """Wait (polling every P, up to *timeout*, default T) for a flopped error of *kind*.

        The error is removed from the list; a flopped error of another kind fails at once.
        """
        loop = self.loop
        deadline = loop.time() + (self.timeout if timeout is None else timeout)
        while True:
            error = self.drop_async_error()
            if error is not None:
                if isinstance(error, kind):
                    return error
                self.flop_and_fail(
                    f"{message or 'expected an error'}: expected {kind.__name__} but got {error!r}"
                )
            remaining = deadline - loop.time()
            if remaining <= 0:
                self.flop_and_fail(
                    f"{message or 'expected an error'}: no {kind.__name__} "
                    f"within {self.timeout * 1000:.0f} ms"
                )
            await asyncio.sleep(min(self.poll_timeout, remaining))

    # -- threads -------------------------------------------------------------------------

    def hand_over(self, fn: Callable[[Unpack[Ts]], object], *args: *Ts) -> bool:
        """Run ``fn(*args)`` on the test's loop when called from another thread.

        Returns True when the call was handed over; False means "run it yourself".
        """
        if threading.get_ident() == self.thread:
            return False
        try:
            self.loop.call_soon_threadsafe(fn, *args)
        except RuntimeError:
            pass  # the test is over and its loop is closed: nobody is listening
        return True
