"""Argument checks whose errors name the rule they enforce."""

from __future__ import annotations

from typing import TypeVar

from ._exceptions import InvalidRequestError, NonPositiveRequestError, NullSignalError

__all__ = ("request_error", "require_not_none")

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
