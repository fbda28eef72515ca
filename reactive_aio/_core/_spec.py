"""The four Reactive Streams interfaces, in the fixed Python mapping.

Signals are plain synchronous methods that return ``None`` and never block.
The interfaces are runtime-checkable protocols, so third-party objects with
the right methods satisfy them without inheriting from anything here.
"""

from __future__ import annotations

from typing import Protocol, TypeVar, runtime_checkable

__all__ = ("Processor", "Publisher", "Subscriber", "Subscription")

T_co = TypeVar("T_co", covariant=True)
T_contra = TypeVar("T_contra", contravariant=True)
R_co = TypeVar("R_co", covariant=True)


@runtime_checkable
class Subscription(Protocol):
    """The link between one publisher and one subscriber (spec section 3)."""

    __slots__ = ()

    def request(self, n: int) -> None:
        """Add *n* (> 0) to the outstanding demand; ``n <= 0`` is reported via ``on_error`` (rule 3.9)."""
        ...

    def cancel(self) -> None:
        """Ask the publisher to stop signalling and drop its reference to the subscriber."""
        ...


@runtime_checkable
class Subscriber(Protocol[T_contra]):
    """Receives ``on_subscribe``, then ``on_next*``, then at most one terminal signal (spec section 2)."""

    __slots__ = ()

    def on_subscribe(self, subscription: Subscription) -> None:
        """Called once, before any other signal."""
        ...

    def on_next(self, item: T_contra) -> None:
        """One element, never more than requested."""
        ...

    def on_error(self, error: BaseException) -> None:
        """Terminal failure; the subscription is cancelled."""
        ...

    def on_complete(self) -> None:
        """Terminal success; the subscription is cancelled."""
        ...


@runtime_checkable
class Publisher(Protocol[T_co]):
    """A provider of a possibly unbounded sequence of elements (spec section 1)."""

    __slots__ = ()

    def subscribe(self, subscriber: Subscriber[T_co]) -> None:
        """Attach *subscriber*; a ``None`` subscriber raises ``TypeError`` (rule 1.9)."""
        ...


@runtime_checkable
class Processor(Subscriber[T_contra], Publisher[R_co], Protocol[T_contra, R_co]):
    """A stage that is both a subscriber of ``T`` and a publisher of ``R`` (spec section 4)."""

    __slots__ = ()
