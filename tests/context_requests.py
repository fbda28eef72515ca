"""Two concurrent "requests" on one sharing point: what each sees of its own `ContextVar`.

A service keeps a request id (or a tracing span) in a `contextvars.ContextVar`. Each request
is a task that sets its own value and subscribes to the same shared stream; every callback run
on its behalf downstream (a ``map`` function, the ``on_next`` and ``on_complete`` callbacks of
``subscribe``) records the value it sees. The rule under test: each request sees only its own.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Callable

from reactive_aio import Flux

REQUEST: contextvars.ContextVar[str] = contextvars.ContextVar("REQUEST", default="none")


async def values_seen(
    shared: Flux[int],
    *,
    start: Callable[[], object] | None = None,
    names: tuple[str, ...] = ("a", "b"),
    prefetch: int | None = None,
) -> dict[str, set[str]]:
    """Run one request per name on *shared*; then, once all subscribed, *start* (in a
    context of its own, where ``REQUEST`` is "producer"). Returns the values of ``REQUEST``
    each request's callbacks saw, and checks every request got items and completed."""
    seen: dict[str, set[str]] = {name: set() for name in names}
    counts = dict.fromkeys(names, 0)

    async def request(name: str) -> None:
        REQUEST.set(name)
        done = asyncio.get_running_loop().create_future()

        def mapped(x: int) -> int:
            seen[name].add(REQUEST.get())
            return x

        def on_next(_: int) -> None:
            seen[name].add(REQUEST.get())
            counts[name] += 1

        def on_complete() -> None:
            seen[name].add(REQUEST.get())
            done.set_result(None)

        shared.map(mapped).subscribe(
            on_next=on_next, on_error=done.set_exception, on_complete=on_complete, prefetch=prefetch
        )
        await done

    tasks = [asyncio.create_task(request(name)) for name in names]
    await asyncio.sleep(0)  # every request subscribed, in its own task
    if start is not None:
        producer = contextvars.copy_context()
        producer.run(REQUEST.set, "producer")
        producer.run(start)
    await asyncio.wait_for(asyncio.gather(*tasks), 10)
    assert all(counts.values()), counts
    return seen


def own_values(names: tuple[str, ...] = ("a", "b")) -> dict[str, set[str]]:
    """What `values_seen` returns when the rule holds."""
    return {name: {name} for name in names}
