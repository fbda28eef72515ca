"""The runtime protocol checker: wraps a publisher and reports every rule its signals break.

Each checked link sits between a publisher and one subscriber, sees every signal in both
directions and records a `Violation` (rule id, what happened, and where the publisher was
assembled) instead of letting a broken stage corrupt the stream silently. Signals are always
passed on unchanged, so checking never alters behaviour; an error passing a link gets its stage
added to a note (PEP 678, see `note_stage`) that lists every checked stage the error passed.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable
from typing import Generic, TypeVar, final

import attrs

from ._assembly import caller_outside, note_stage
from ._attach import attach
from ._checks import require_not_none
from ._demand import MAX_DEMAND, add_demand
from ._exceptions import ProtocolViolationError, short_repr
from ._report import report_error
from ._spec import Publisher, Subscriber, Subscription

__all__ = (
    "DEBUG",
    "DEBUG_CHECKER",
    "CheckedPublisher",
    "ProtocolChecker",
    "Violation",
    "assembly_site",
)

T = TypeVar("T")


def assembly_site() -> str:
    """``file:line`` of the first caller outside reactive_aio: where a stage was assembled."""
    frame = caller_outside(sys._getframe(1))
    if frame is None:
        return "<unknown>"
    return f"{frame.f_code.co_filename}:{frame.f_lineno}"


@final
@attrs.frozen
class Violation:
    """One broken rule, seen at runtime."""

    rule: str
    """The specification rule, e.g. ``"1.1"``."""
    message: str
    stage: str
    """What was checked and where it was assembled."""

    def __str__(self) -> str:
        return f"rule {self.rule}: {self.message} [{self.stage}]"


@final
@attrs.define(eq=False)
class ProtocolChecker:
    """Collects the violations of every publisher it wraps.

    Args:
        report: also send each violation to the ``reactive_aio`` logger and the loop's
            exception handler (as a `ProtocolViolationError`).
    """

    report: bool = True
    violations: list[Violation] = attrs.field(factory=list, init=False)
    _lock: threading.Lock = attrs.field(factory=threading.Lock, init=False)

    def wrap(
        self, publisher: Publisher[T], name: str | None = None, site: str | None = None
    ) -> CheckedPublisher[T]:
        """Check every subscription made to *publisher*."""
        label = f"{name or type(publisher).__name__} assembled at {site or assembly_site()}"
        return CheckedPublisher(publisher, self, label)

    def record(self, rule: str, message: str, stage: str) -> None:
        """Add a violation (thread-safe) and report it."""
        violation = Violation(rule, message, stage)
        with self._lock:
            self.violations.append(violation)
        if self.report:
            report_error(ProtocolViolationError(str(violation)), "protocol violation")

    def assert_clean(self) -> None:
        """Raise `ProtocolViolationError` listing every violation seen, if any."""
        if self.violations:
            listing = "\n".join(f"  {v}" for v in self.violations)
            raise ProtocolViolationError(
                f"{len(self.violations)} protocol violation(s):\n{listing}"
            )


@final
@attrs.frozen
class CheckedPublisher(Publisher[T], Generic[T]):
    """A publisher whose every subscription is checked; behaviour is unchanged."""

    source: Publisher[T]
    checker: ProtocolChecker
    stage: str

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        self.source.subscribe(_CheckedLink(subscriber, self.checker, self.stage))


@final
@attrs.define(eq=False)
class _CheckedLink(Subscriber[T], Subscription, Generic[T]):
    """Stands between the publisher and the subscriber, in both directions."""

    _downstream: Subscriber[T]
    _checker: ProtocolChecker
    _stage: str
    _upstream: Subscription | None = attrs.field(default=None, init=False)
    _demand: int = attrs.field(default=0, init=False)
    _terminated: bool = attrs.field(default=False, init=False)
    _in_signal: int = attrs.field(default=0, init=False)
    _signal_thread: int = attrs.field(default=0, init=False)
    _in_terminal: bool = attrs.field(default=False, init=False)
    _cancelled: bool = attrs.field(default=False, init=False)

    @property
    def _done(self) -> bool:
        return self._terminated or self._cancelled

    def _violation(self, rule: str, message: str) -> None:
        self._checker.record(rule, message, self._stage)

    def _enter(self, signal: str) -> None:
        if self._in_signal:
            if self._signal_thread != threading.get_ident():
                self._violation(
                    "1.3", f"{signal} from another thread while a signal is in progress"
                )
            else:
                self._violation(
                    "1.3", f"{signal} while another signal to the subscriber is on the stack"
                )
        self._in_signal += 1
        self._signal_thread = threading.get_ident()

    def _exit(self) -> None:
        self._in_signal -= 1

    def _run(self, signal: str, call: Callable[[], None]) -> None:
        self._enter(signal)
        try:
            call()
        finally:
            self._exit()

    # -- the publisher's signals --------------------------------------------------------

    def on_subscribe(self, subscription: Subscription | None) -> None:
        if subscription is None:
            self._violation("2.13", "on_subscribe(None)")
            return
        if self._upstream is not None:
            self._violation("2.12", "on_subscribe signalled a second time")
            self._downstream.on_subscribe(subscription)
            return
        self._upstream = subscription
        if attach(self._downstream, self):  # as unchecked, a subscriber subscribed twice is refused
            self._run("on_subscribe", lambda: self._downstream.on_subscribe(self))
        else:
            self.cancel()

    def on_next(self, item: T) -> None:
        if self._upstream is None:
            self._violation("1.9", "on_next before on_subscribe")
        if self._terminated:
            self._violation("1.7", f"on_next({short_repr(item)}) after a terminal signal")
        if item is None:
            self._violation("2.13", "on_next(None)")
        if self._demand == 0:
            self._violation("1.1", f"on_next({short_repr(item)}) beyond the requested demand")
        elif self._demand != MAX_DEMAND:
            self._demand -= 1
        self._run("on_next", lambda: self._downstream.on_next(item))

    def on_error(self, error: BaseException | None) -> None:
        self._terminal("on_error")
        if error is None:
            self._violation("2.13", "on_error(None)")
        else:
            note_stage(error, self._stage)
        self._run_terminal("on_error", lambda: self._downstream.on_error(error))  # type: ignore[arg-type]

    def on_complete(self) -> None:
        self._terminal("on_complete")
        self._run_terminal("on_complete", self._downstream.on_complete)

    def _terminal(self, signal: str) -> None:
        if self._upstream is None:
            self._violation("1.9", f"{signal} before on_subscribe")
        if self._terminated:
            self._violation("1.7", f"{signal} after a terminal signal")
        self._terminated = True

    def _run_terminal(self, signal: str, call: Callable[[], None]) -> None:
        self._in_terminal = True
        try:
            self._run(signal, call)
        finally:
            self._in_terminal = False

    # -- the subscriber's calls ---------------------------------------------------------

    def request(self, n: int) -> None:
        if self._in_terminal:
            self._violation("2.3", f"request({n}) from inside on_complete/on_error")
        if type(n) is int and n > 0:
            self._demand = add_demand(self._demand, n)
        upstream = self._upstream
        if upstream is not None:
            upstream.request(n)

    def cancel(self) -> None:
        if self._in_terminal:
            self._violation("2.3", "cancel() from inside on_complete/on_error")
        self._cancelled = True
        upstream = self._upstream
        if upstream is not None:
            upstream.cancel()


DEBUG = os.environ.get("REACTIVE_AIO_DEBUG", "") not in ("", "0")
"""Set by ``REACTIVE_AIO_DEBUG=1``: every `Flux` stage is checked as it is assembled."""

DEBUG_CHECKER = ProtocolChecker()
"""Where the violations of debug mode are collected."""
