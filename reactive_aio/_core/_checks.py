"""Argument checks whose errors name the rule they enforce."""

from __future__ import annotations

import reprlib
from typing import TypeVar

from ._exceptions import NullSignalError

__all__ = ("require_not_none", "require_publisher")

V = TypeVar("V")


def require_not_none(value: V | None, rule: str, what: str) -> V:
    """Return *value*, or raise `NullSignalError` naming *rule* when it is ``None``."""
    if value is None:
        raise NullSignalError(f"rule {rule}: {what} must not be None")
    return value


def require_publisher(value: object, operator: str) -> None:
    """Reject what *operator* got in place of a publisher: ``None`` (rule 1.9) or an object
    without ``subscribe``, naming its type (and how to pass a collection of publishers)."""
    if value is None:
        raise NullSignalError(f"rule 1.9: {operator}'s publishers must not be None")
    if not callable(getattr(value, "subscribe", None)):
        hint = ""
        if isinstance(value, list | tuple | set | frozenset):
            hint = f"; to {operator} a collection of publishers, unpack it: {operator}(*publishers)"
        raise TypeError(
            f"{operator} takes publishers, not {type(value).__name__} {reprlib.repr(value)}{hint}"
        )
