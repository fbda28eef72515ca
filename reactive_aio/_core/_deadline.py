"""`Deadline`: one re-armable timer on the loop clock, for operators that schedule.

Moving a deadline later (``debounce`` on every item, ``timeout`` on every item) does not
cancel and re-create a timer handle: the armed handle fires, sees the deadline moved and
re-arms once for the new time. Moving it earlier replaces the handle. So a stream of items
costs at most one timer handle per elapsed window, never one per item.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import final

import attrs

__all__ = ("RESOLUTION", "Deadline", "require_running_loop")

RESOLUTION = time.get_clock_info("monotonic").resolution
"""Timers may fire this much early (asyncio's own tolerance); earlier than that is re-armed."""


def require_running_loop(what: str) -> asyncio.AbstractEventLoop:
    """The running loop; a time source or operator subscribed outside one is a usage error."""
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        raise RuntimeError(f"{what} must be subscribed on a running event loop") from None


@final
@attrs.define(eq=False)
class Deadline:
    """Calls *callback* once the loop clock reaches the armed time.

    Attributes:
        loop: the loop whose clock and timers are used.
    """

    loop: asyncio.AbstractEventLoop
    _callback: Callable[[], object]
    _when: float | None = attrs.field(default=None, init=False)
    _handle: asyncio.Handle | None = attrs.field(default=None, init=False)
    """The pending timer (uvloop returns a plain `asyncio.Handle` for a time already past)."""
    _handle_when: float = attrs.field(default=0.0, init=False)

    @property
    def armed(self) -> bool:
        """True while a call is pending."""
        return self._when is not None

    def arm_at(self, when: float) -> None:
        """Call back at loop time *when* (replacing any earlier arming)."""
        self._when = when
        handle = self._handle
        if handle is None or self._handle_when > when:
            if handle is not None:
                handle.cancel()
            self._handle_when = when
            self._handle = self.loop.call_at(when, self._fire)

    def arm_in(self, delay: float) -> float:
        """Call back *delay* seconds from now; returns the loop time armed for."""
        when = self.loop.time() + delay
        self.arm_at(when)
        return when

    def disarm(self) -> None:
        """Cancel the pending call and drop the timer handle (it references the owner)."""
        self._when = None
        handle = self._handle
        if handle is not None:
            self._handle = None
            handle.cancel()

    def _fire(self) -> None:
        self._handle = None
        when = self._when
        if when is None:
            return
        if when - self.loop.time() > RESOLUTION:  # moved later since this handle was armed
            self._handle_when = when
            self._handle = self.loop.call_at(when, self._fire)
            return
        self._when = None
        self._callback()
