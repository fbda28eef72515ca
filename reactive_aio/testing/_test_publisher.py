"""`TestPublisher`: a publisher a test drives by hand, that can also break the rules on purpose.

A well-behaved `TestPublisher` refuses (with `AssertionError`) to emit beyond demand, to
emit ``None`` or to signal after termination, so a test that tries finds its own mistake.
One made with `TestPublisher.create_noncompliant` does exactly what it is told for the
chosen `Misbehavior` kinds, to check an operator's defences.
"""

from __future__ import annotations

import enum
from typing import Any, Generic, Self, TypeVar, final

import attrs

from .._core import NonPositiveRequestError, Publisher, Subscriber, require_not_none

__all__ = ("Misbehavior", "TestPublisher")

T = TypeVar("T")


class Misbehavior(enum.Enum):
    """Rules a non-compliant `TestPublisher` may break."""

    IGNORE_DEMAND = "emit items nobody requested (rule 1.1)"
    EMIT_NONE = "emit None as an item (rule 2.13)"
    AFTER_TERMINATION = "signal after on_complete/on_error, including twice (rule 1.7)"
    IGNORE_CANCEL = "keep signalling a subscriber that cancelled (rule 3.6/3.13)"


@final
@attrs.define(eq=False)
class _TestSubscription:
    """One subscriber's link; records demand and cancellation for the publisher."""

    publisher: TestPublisher[Any]
    subscriber: Subscriber[Any]
    demand: int = 0
    cancelled: bool = False

    def request(self, n: int) -> None:
        self.publisher.requests.append(n)
        if self.cancelled:
            return
        if n <= 0:
            self.cancelled = True
            self.subscriber.on_error(NonPositiveRequestError(n))
            return
        self.demand += n

    def cancel(self) -> None:
        if not self.cancelled:
            self.cancelled = True
            self.publisher.cancels += 1


@final
@attrs.define(eq=False)
class TestPublisher(Publisher[T], Generic[T]):
    """Emits ``next``/``complete``/``error`` on command to every current subscriber.

    Attributes:
        requests: every ``request(n)`` received, in order, from all subscribers.
        cancels: how many subscribers cancelled.
        subscribers: how many subscribed so far.
        violations: the rules this publisher breaks on command (empty: well-behaved).
    """

    __test__ = False  # a class named Test… is not a pytest test case

    violations: frozenset[Misbehavior] = attrs.field(factory=frozenset)
    requests: list[int] = attrs.field(factory=list, init=False)
    cancels: int = attrs.field(default=0, init=False)
    subscribers: int = attrs.field(default=0, init=False)
    _links: list[_TestSubscription] = attrs.field(factory=list, init=False)
    _terminated: bool = attrs.field(default=False, init=False)

    @classmethod
    def create(cls) -> TestPublisher[T]:
        """A well-behaved publisher: misuse by the test raises `AssertionError`."""
        return cls()

    @classmethod
    def create_noncompliant(cls, *violations: Misbehavior) -> TestPublisher[T]:
        """A publisher that breaks the given rules when told to."""
        if not violations:
            raise ValueError("name at least one Misbehavior")
        return cls(frozenset(violations))

    # -- Publisher ----------------------------------------------------------------------

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        self.subscribers += 1
        link = _TestSubscription(self, subscriber)
        self._links.append(link)
        subscriber.on_subscribe(link)

    # -- commands -----------------------------------------------------------------------

    def next(self, *items: T | None) -> Self:
        """Emit *items* in order to every subscriber that has not cancelled."""
        for item in items:
            if item is None and Misbehavior.EMIT_NONE not in self.violations:
                raise AssertionError("TestPublisher: None is not a valid item (rule 2.13)")
            self._check_open("next")
            for link in self._targets():
                if link.demand <= 0 and Misbehavior.IGNORE_DEMAND not in self.violations:
                    raise AssertionError(
                        f"TestPublisher: cannot emit {item!r}: the subscriber has no demand "
                        "(rule 1.1); request first"
                    )
                link.demand -= 1
                link.subscriber.on_next(item)
        return self

    def emit(self, *items: T) -> Self:
        """Emit *items*, then complete."""
        return self.next(*items).complete()

    def complete(self) -> Self:
        """Signal ``on_complete`` to every subscriber."""
        self._check_open("complete")
        self._terminated = True
        for link in self._targets():
            link.subscriber.on_complete()
        return self

    def error(self, error: BaseException) -> Self:
        """Signal ``on_error(error)`` to every subscriber."""
        require_not_none(error, "1.9", "the error")
        self._check_open("error")
        self._terminated = True
        for link in self._targets():
            link.subscriber.on_error(error)
        return self

    # -- inspecting ---------------------------------------------------------------------

    @property
    def demand(self) -> int:
        """Outstanding demand of the most recent subscriber (0 before any)."""
        return self._links[-1].demand if self._links else 0

    @property
    def cancelled(self) -> bool:
        """True once every subscriber so far has cancelled (and there was one)."""
        return bool(self._links) and all(link.cancelled for link in self._links)

    def assert_requested(self, at_least: int) -> Self:
        """The most recent subscriber's outstanding demand is at least *at_least*."""
        assert self.demand >= at_least, (
            f"demand {self.demand} < {at_least}; requests {self.requests}"
        )
        return self

    def assert_cancelled(self) -> Self:
        """Every subscriber cancelled."""
        assert self.cancelled, f"not cancelled ({self.cancels} of {self.subscribers} subscribers)"
        return self

    def assert_not_cancelled(self) -> Self:
        """Nobody cancelled."""
        assert self.cancels == 0, f"{self.cancels} subscribers cancelled"
        return self

    def assert_subscribers(self, count: int) -> Self:
        """Exactly *count* subscribers so far."""
        assert self.subscribers == count, f"{self.subscribers} subscribers, expected {count}"
        return self

    # -- internals ----------------------------------------------------------------------

    def _check_open(self, signal: str) -> None:
        if self._terminated and Misbehavior.AFTER_TERMINATION not in self.violations:
            raise AssertionError(f"TestPublisher: {signal} after termination (rule 1.7)")

    def _targets(self) -> list[_TestSubscription]:
        if Misbehavior.IGNORE_CANCEL in self.violations:
            return list(self._links)
        return [link for link in self._links if not link.cancelled]
