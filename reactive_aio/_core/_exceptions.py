"""Errors whose messages name the specification rule they enforce."""

from __future__ import annotations

import reprlib

__all__ = (
    "InvalidRequestError",
    "MissingBackpressureError",
    "NoSuchElementError",
    "NonPositiveRequestError",
    "NullSignalError",
    "ProtocolViolationError",
    "read_once_error",
    "short_repr",
    "stream_error",
)

_SHORT = reprlib.Repr()
_SHORT.maxstring = _SHORT.maxother = 60
_SHORT.maxlong = 40


def short_repr(value: object) -> str:
    """``type: repr`` of *value*, its repr cut to a few dozen characters, for messages that
    name an item (an item may be a megabyte of bytes)."""
    return f"{type(value).__name__} {_SHORT.repr(value)}"


def stream_error(error: BaseException) -> BaseException:
    """*error* as a stream may carry it: a StopIteration or StopAsyncIteration that user code
    raised becomes a RuntimeError chained from it, as PEP 479 and PEP 525 do for generators.

    Passed on as it is, it would end the iteration of whoever raises it next (``async for``
    stops silently, a generator turns it into a RuntimeError of its own) and an asyncio
    future refuses StopIteration, leaving its awaiter waiting forever.
    """
    if not isinstance(error, (StopIteration, StopAsyncIteration)):
        return error
    converted = RuntimeError(f"user code raised {type(error).__name__}")
    converted.__cause__ = error
    return converted


def read_once_error(source: str, dunder: str, iterable: object) -> RuntimeError:
    """What a second subscriber of *source* over a one-shot *iterable* gets: an iterator (a
    generator too) is its own *dunder* result, so the first subscriber used it up."""
    return RuntimeError(
        f"{source}({short_repr(iterable)}) can be read once and was subscribed already: a "
        f"generator or iterator (its {dunder} returns itself) serves one subscriber. For a "
        f"source every subscriber reads afresh, make one per subscription: "
        f"Flux.defer(lambda: {source}(gen()))"
    )


class NullSignalError(TypeError):
    """``None`` was passed where the specification forbids it (rules 1.9 and 2.13)."""


class InvalidRequestError(ValueError):
    """``request(n)`` was called with an *n* that is not an int greater than 0 (rule 3.9):
    a float, a str, a bool, ``None``...; delivered through ``on_error``."""

    def __init__(self, n: object, message: str | None = None) -> None:
        super().__init__(message or f"rule 3.9: request(n) takes an int n > 0, not {short_repr(n)}")
        self.n = n


class NonPositiveRequestError(InvalidRequestError):
    """``request(n)`` was called with ``n <= 0`` (rule 3.9); delivered through ``on_error``."""

    def __init__(self, n: int) -> None:
        super().__init__(
            n, f"rule 3.9: non-positive subscription request: request({n}) must ask for n > 0"
        )


class MissingBackpressureError(RuntimeError):
    """A source produced more than was requested and its overflow policy is to fail."""


class NoSuchElementError(LookupError):
    """A terminal operation that needs an element (``first``, ``last``) saw an empty stream."""


class ProtocolViolationError(RuntimeError):
    """A component broke a Reactive Streams rule; the message names the rule."""
