"""Argument checks whose errors name the rule they enforce."""

from __future__ import annotations

from typing import TypeVar

from ._exceptions import (
    InvalidRequestError,
    NonPositiveRequestError,
    NullSignalError,
    short_repr,
)

__all__ = ("request_error", "require_not_none", "require_publisher")

V = TypeVar("V")


def require_not_none(value: V | None, rule: str, what: str) -> V:
    """Return *value*, or raise `NullSignalError` naming *rule* when it is ``None``."""
    if value is None:
        raise NullSignalError(f"rule {rule}: {what} must not be None")
    return value


def request_error(n: object) -> InvalidRequestError:
    """The rule 3.9 error for a bad ``request(n)``: `NonPositiveRequestError` for an int
    ``n <= 0``, `InvalidRequestError` for anything that is not an int (a bool included).

    Callers test ``type(n) is not int or n <= 0`` first: the only valid request is an int > 0.
    """
    if type(n) is int:
        return NonPositiveRequestError(n)
    return InvalidRequestError(n)


def require_publisher(value: object, operator: str) -> None:
    """Reject what *operator* got in place of a publisher: ``None`` (rule 1.9) or an object
    without ``subscribe``, naming its type (and how to pass a collection of publishers)."""
    if value is None:
        raise NullSignalError(f"rule 1.9: {operator}'s publishers must not be None")
    if not callable(getattr(value, "subscribe", None)):
        hint = ""
        if isinstance(value, list | tuple | set | frozenset):
            hint = f"; to {operator} a collection of publishers, unpack it: {operator}(*publishers)"
        raise TypeError(f"{operator} takes publishers, not {short_repr(value)}{hint}")
