"""A virtual-time event loop: ``loop.time()`` moves only when a test lets it.

`VirtualTimeLoop` is an asyncio selector loop whose clock starts at 0.0 and advances only

* in *auto* mode (the default): whenever the loop has nothing ready to run, no I/O arrives
  within *autojump_threshold* real seconds, and a timer is scheduled, the clock jumps to that
  timer (like trio's ``autojump_clock``), so an hour of debounce runs in microseconds;
* through ``await advance(seconds)`` (or ``loop.advance(seconds)`` from outside the loop),
  which lets the clock run up to ``now + seconds``, firing every timer due on the way in
  order. In manual mode (``auto=False``) this is the only way time moves.

Real I/O (sockets, ``call_soon_threadsafe`` from other threads) still works: the loop really
waits for it whenever the clock may not move.
"""

from __future__ import annotations

import asyncio
import math
import selectors
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from typing import Any, TypeVar, final

__all__ = ("VirtualTimeLoop", "advance", "run_virtual", "virtual_loop_factories")

T = TypeVar("T")


@final
class _VirtualSelector(selectors.BaseSelector):
    """Wraps the real selector; a wait with a timeout may be replaced by a clock jump."""

    def __init__(self, real: selectors.BaseSelector) -> None:
        self._real = real
        self.loop: VirtualTimeLoop | None = None

    def register(self, fileobj: Any, events: int, data: Any = None) -> selectors.SelectorKey:
        return self._real.register(fileobj, events, data)

    def unregister(self, fileobj: Any) -> selectors.SelectorKey:
        return self._real.unregister(fileobj)

    def modify(self, fileobj: Any, events: int, data: Any = None) -> selectors.SelectorKey:
        return self._real.modify(fileobj, events, data)

    def get_map(self) -> Mapping[Any, selectors.SelectorKey]:
        return self._real.get_map()

    def close(self) -> None:
        self._real.close()

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        loop = self.loop
        if loop is None or (timeout is not None and timeout <= 0):
            return self._real.select(timeout)
        horizon = loop.horizon
        now = loop.time()
        if horizon <= now or timeout is None:
            # The clock may not move (or nothing is scheduled): really wait for I/O.
            return self._real.select(None if horizon <= now else timeout)
        events = self._real.select(loop.autojump_threshold)
        if events:
            return events
        # Idle: jump to the next timer, but never past the horizon.
        loop.jump(min(now + timeout, horizon))
        return []


@final
class VirtualTimeLoop(asyncio.SelectorEventLoop):
    """An asyncio event loop on a virtual clock (see the module docstring).

    Args:
        auto: jump to the next timer whenever the loop is idle; when False, only
            `advance` moves the clock.
        autojump_threshold: real seconds the loop waits for I/O before it jumps.
    """

    def __init__(self, *, auto: bool = True, autojump_threshold: float = 0.0) -> None:
        selector = _VirtualSelector(selectors.DefaultSelector())
        super().__init__(selector)
        selector.loop = self
        self._now = 0.0
        self.autojump_threshold = autojump_threshold
        self.horizon = math.inf if auto else 0.0
        """The clock never jumps past this point on its own."""

    @property
    def auto(self) -> bool:
        """True when the clock jumps to the next timer whenever the loop is idle."""
        return self.horizon == math.inf

    @auto.setter
    def auto(self, value: bool) -> None:
        self.horizon = math.inf if value else self._now

    def time(self) -> float:
        """The virtual clock, in seconds since the loop was created."""
        return self._now

    def jump(self, when: float) -> None:
        """Set the clock to *when* (never backwards) without running anything."""
        if when > self._now:
            self._now = when

    async def advance_by(self, seconds: float) -> None:
        """Let the clock run *seconds* further, firing every timer due on the way, in order."""
        if seconds < 0:
            raise ValueError(f"cannot advance by a negative duration: {seconds}")
        target = self._now + seconds
        if target > self.horizon:
            self.horizon = target
        try:
            await asyncio.sleep(seconds)
            # Let callbacks that the last timers made ready run before returning.
            for _ in range(3):
                await asyncio.sleep(0)
        finally:
            if not self.auto and self.horizon > self._now:
                self.horizon = self._now

    def advance(self, seconds: float) -> None:
        """From outside the running loop: run it until the clock has moved *seconds*."""
        if self.is_running():
            raise RuntimeError("the loop is running: use 'await advance(seconds)' instead")
        self.run_until_complete(self.advance_by(seconds))


async def advance(seconds: float) -> None:
    """Advance the running `VirtualTimeLoop` by *seconds* (see `VirtualTimeLoop.advance_by`)."""
    loop = asyncio.get_running_loop()
    if not isinstance(loop, VirtualTimeLoop):
        raise RuntimeError(f"advance() needs a VirtualTimeLoop, not {type(loop).__name__}")
    await loop.advance_by(seconds)


def run_virtual(
    main: Coroutine[Any, Any, T] | Callable[[], Awaitable[T]],
    *,
    auto: bool = True,
    autojump_threshold: float = 0.0,
) -> T:
    """Run *main* (a coroutine or an async function) to completion on a new `VirtualTimeLoop`."""
    coro: Any = main() if callable(main) else main

    def factory() -> VirtualTimeLoop:
        return VirtualTimeLoop(auto=auto, autojump_threshold=autojump_threshold)

    with asyncio.Runner(loop_factory=factory) as runner:
        result: T = runner.run(coro)
        return result


def virtual_loop_factories() -> dict[str, Callable[[], asyncio.AbstractEventLoop]]:
    """``{"virtual": VirtualTimeLoop}`` to merge into a ``pytest_asyncio_loop_factories`` hook.

    Tests then choose it with ``@pytest.mark.asyncio(loop_factories=["virtual"])``.
    """
    return {"virtual": VirtualTimeLoop}
