"""`TestSubscriber`: a subscriber that records every signal and asserts on them."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Generic, Self, TypeVar, final

import attrs

from .._core import Subscriber, Subscription, require_not_none

__all__ = ("TestSubscriber",)

T = TypeVar("T")


@final
@attrs.define(eq=False)
class TestSubscriber(Subscriber[T], Generic[T]):
    """Records items, errors, completion, signal depth and threads; requests *initial_request*.

    Every ``assert_*`` method returns ``self`` so checks chain; ``await wait_*`` waits on the
    running loop without sleeping.
    """

    __test__ = False  # a class named Test… is not a pytest test case

    initial_request: int = 0
    on_next_callback: Callable[[T], object] | None = attrs.field(default=None, kw_only=True)
    """Called after each item is recorded, e.g. to request more from inside ``on_next``."""
    values: list[T] = attrs.field(factory=list, init=False)
    errors: list[BaseException] = attrs.field(factory=list, init=False)
    completions: int = attrs.field(default=0, init=False)
    subscriptions: int = attrs.field(default=0, init=False)
    max_depth: int = attrs.field(default=0, init=False)
    """Deepest nesting of signals seen; 1 means no signal ever ran inside another."""
    threads: set[int] = attrs.field(factory=set, init=False)
    subscription: Subscription | None = attrs.field(default=None, init=False)
    timeline: list[tuple[float, str, object]] = attrs.field(factory=list, init=False)
    """Every signal as ``(loop time, kind, value)``, kind being ``"subscribe"``, ``"next"``,
    ``"error"`` or ``"complete"`` (value ``None`` for subscribe and complete); the time is
    the running loop's clock (virtual on a `VirtualTimeLoop`), 0.0 outside a loop."""
    _depth: int = attrs.field(default=0, init=False)
    _changed: asyncio.Event | None = attrs.field(default=None, init=False)

    # -- Subscriber ---------------------------------------------------------------------

    def on_subscribe(self, subscription: Subscription) -> None:
        require_not_none(subscription, "2.13", "on_subscribe's subscription")
        self._enter()
        self._record("subscribe", None)
        try:
            self.subscriptions += 1
            if self.subscription is not None:
                subscription.cancel()  # rule 2.5
                return
            self.subscription = subscription
            if self.initial_request:
                subscription.request(self.initial_request)
        finally:
            self._exit()

    def on_next(self, item: T) -> None:
        require_not_none(item, "2.13", "on_next's item")
        self._enter()
        self._record("next", item)
        try:
            self.values.append(item)
            if self.on_next_callback is not None:
                self.on_next_callback(item)
        finally:
            self._exit()

    def on_error(self, error: BaseException) -> None:
        require_not_none(error, "2.13", "on_error's error")
        self._enter()
        self._record("error", error)
        self.errors.append(error)
        self._exit()

    def on_complete(self) -> None:
        self._enter()
        self._record("complete", None)
        self.completions += 1
        self._exit()

    # -- driving ------------------------------------------------------------------------

    def request(self, n: int) -> Self:
        """Request *n* more items."""
        assert self.subscription is not None, "not subscribed"
        self.subscription.request(n)
        return self

    def cancel(self) -> Self:
        """Cancel the subscription."""
        assert self.subscription is not None, "not subscribed"
        self.subscription.cancel()
        return self

    @property
    def terminated(self) -> bool:
        """True once ``on_complete`` or ``on_error`` arrived."""
        return bool(self.completions or self.errors)

    # -- waiting ------------------------------------------------------------------------

    async def wait_until(self, condition: Callable[[], bool], timeout: float = 5.0) -> Self:
        """Wait until ``condition()`` is true, re-checking after every signal."""
        async with asyncio.timeout(timeout):
            while not condition():
                self._changed = asyncio.Event()
                await self._changed.wait()
        return self

    async def wait_for_values(self, count: int, timeout: float = 5.0) -> Self:
        """Wait until at least *count* items arrived."""
        return await self.wait_until(lambda: len(self.values) >= count or self.terminated, timeout)

    async def wait_terminated(self, timeout: float = 5.0) -> Self:
        """Wait for ``on_complete`` or ``on_error``."""
        return await self.wait_until(lambda: self.terminated, timeout)

    # -- asserting ----------------------------------------------------------------------

    def assert_values(self, *expected: T) -> Self:
        """The items received so far are exactly *expected*."""
        assert self.values == list(expected), f"values {self.values!r} != {list(expected)!r}"
        return self

    def assert_value_count(self, count: int) -> Self:
        """Exactly *count* items arrived."""
        assert len(self.values) == count, f"{len(self.values)} items, expected {count}"
        return self

    def assert_no_values(self) -> Self:
        """No item arrived."""
        return self.assert_value_count(0)

    def assert_complete(self) -> Self:
        """Exactly one ``on_complete`` and no error."""
        assert self.completions == 1, f"{self.completions} completions; errors {self.errors!r}"
        assert not self.errors, f"unexpected errors {self.errors!r}"
        return self

    def assert_not_terminated(self) -> Self:
        """Neither ``on_complete`` nor ``on_error`` arrived."""
        assert not self.terminated, (
            f"terminated: completions={self.completions}, errors={self.errors!r}"
        )
        return self

    def assert_error(self, kind: type[BaseException], match: str | None = None) -> Self:
        """Exactly one error, of type *kind*, whose message contains *match*; no completion."""
        assert len(self.errors) == 1, f"errors {self.errors!r}"
        assert not self.completions, "completed as well as failed"
        error = self.errors[0]
        assert isinstance(error, kind), f"{error!r} is not a {kind.__name__}"
        if match is not None:
            assert match in str(error), f"{match!r} not in {str(error)!r}"
        return self

    def assert_max_depth(self, depth: int = 1) -> Self:
        """Signals never nested deeper than *depth* (rule 3.3)."""
        assert self.max_depth <= depth, f"signal depth reached {self.max_depth}"
        return self

    # -- internals ----------------------------------------------------------------------

    def _record(self, kind: str, value: object) -> None:
        loop = asyncio._get_running_loop()
        self.timeline.append((loop.time() if loop is not None else 0.0, kind, value))

    def _enter(self) -> None:
        self._depth += 1
        if self._depth > self.max_depth:
            self.max_depth = self._depth
        self.threads.add(threading.get_ident())

    def _exit(self) -> None:
        self._depth -= 1
        changed = self._changed
        if changed is not None:
            self._changed = None
            changed.set()
