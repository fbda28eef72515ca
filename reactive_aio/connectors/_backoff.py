"""`Backoff`: how a connector retries a lost connection or a failed write.

Every broker connector takes one. The delay before retry *k* (1-based) is
``min(first * factor ** (k - 1), max_delay)``; after *attempts* failed retries the connector
gives up with `ConnectionLostError` naming the endpoint, the attempts and the last error.
"""

from __future__ import annotations

__all__ = ("DEFAULT_BACKOFF", "Backoff", "ConnectionLostError", "retrying")

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar, final

import attrs

R = TypeVar("R")


class ConnectionLostError(ConnectionError):
    """A connector could not (re)connect within its `Backoff`'s attempts."""


@final
@attrs.frozen
class Backoff:
    """Exponential backoff with a cap and a number of attempts."""

    first: float = 0.1
    """Seconds before the first retry."""
    factor: float = 2.0
    max_delay: float = 5.0
    attempts: int = 8
    """Retries after the first failure; 0 fails at once."""

    def __attrs_post_init__(self) -> None:
        if self.first < 0 or self.max_delay < 0 or self.factor < 1 or self.attempts < 0:
            raise ValueError(f"invalid backoff {self!r}")

    def delay(self, attempt: int) -> float:
        """Seconds to wait before retry number *attempt* (1-based)."""
        delay: float = self.first * self.factor ** (attempt - 1)
        return delay if delay < self.max_delay else self.max_delay


DEFAULT_BACKOFF = Backoff()
"""0.1 s, doubling, at most 5 s apart, 8 retries (about 20 s in all)."""


async def retrying(
    action: Callable[[], Awaitable[R]],
    backoff: Backoff,
    what: str,
    retry_on: tuple[type[BaseException], ...] = (OSError, ConnectionError, TimeoutError),
) -> R:
    """Run *action*, retrying on *retry_on* errors with *backoff*; `ConnectionLostError` after.

    *what* names the endpoint in the error ("nats://127.0.0.1:4222", "postgresql://…").
    """
    attempt = 0
    while True:
        try:
            return await action()
        except retry_on as exc:
            attempt += 1
            if attempt > backoff.attempts:
                raise ConnectionLostError(
                    f"{what}: gave up after {backoff.attempts} reconnect attempts: "
                    f"{type(exc).__name__}: {exc}"
                ) from exc
            await asyncio.sleep(backoff.delay(attempt))
