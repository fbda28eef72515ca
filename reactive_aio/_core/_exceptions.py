"""Errors whose messages name the specification rule they enforce."""

from __future__ import annotations

__all__ = (
    "MissingBackpressureError",
    "NoSuchElementError",
    "NonPositiveRequestError",
    "NullSignalError",
    "ProtocolViolationError",
)


class NullSignalError(TypeError):
    """``None`` was passed where the specification forbids it (rules 1.9 and 2.13)."""


class NonPositiveRequestError(ValueError):
    """``request(n)`` was called with ``n <= 0`` (rule 3.9); delivered through ``on_error``."""

    def __init__(self, n: int) -> None:
        super().__init__(
            f"rule 3.9: non-positive subscription request: request({n}) must ask for n > 0"
        )
        self.n = n


class MissingBackpressureError(RuntimeError):
    """A source produced more than was requested and its overflow policy is to fail."""


class NoSuchElementError(LookupError):
    """A terminal operation that needs an element (``first``, ``last``) saw an empty stream."""


class ProtocolViolationError(RuntimeError):
    """A component broke a Reactive Streams rule; the message names the rule."""
