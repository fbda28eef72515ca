"""Argument checks whose errors name the rule they enforce."""

from __future__ import annotations

from typing import TypeVar

from ._exceptions import NullSignalError

__all__ = ("require_not_none",)

V = TypeVar("V")


def require_not_none(value: V | None, rule: str, what: str) -> V:
    """Return *value*, or raise `NullSignalError` naming *rule* when it is ``None``."""
    if value is None:
        raise NullSignalError(f"rule {rule}: {what} must not be None")
    return value
