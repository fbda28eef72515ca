"""`ManualPublisher`: a publisher of another library that a test drives by hand.

It subscribes whoever comes with itself as the subscription, records every request (and the
task it came from: ``None`` for a loop callback or outside a loop) and whether it was
cancelled, and sends the items a test `push` es, within demand or not: the test decides.
"""

from __future__ import annotations

import asyncio

from reactive_aio import Subscriber


class ManualPublisher:
    """One subscriber at a time; `push` sends items to the latest one."""

    def __init__(self) -> None:
        self.requests: list[int] = []
        self.requesting_tasks: list[asyncio.Task[object] | None] = []
        self.cancelled = False
        self.subscriber: Subscriber[int] | None = None

    def subscribe(self, subscriber: Subscriber[int]) -> None:
        self.subscriber = subscriber
        subscriber.on_subscribe(self)

    def request(self, n: int) -> None:
        self.requests.append(n)
        running = asyncio._get_running_loop() is not None
        self.requesting_tasks.append(asyncio.current_task() if running else None)

    def cancel(self) -> None:
        self.cancelled = True

    def push(self, *items: int) -> None:
        """Send *items* with ``on_next``, one after the other."""
        assert self.subscriber is not None
        for item in items:
            self.subscriber.on_next(item)
