"""TCK cases for boundaries, demand shaping, backpressure, sharing, push sources, processors."""

from __future__ import annotations

from collections.abc import Callable

from reactive_aio import Flux, FluxSink, Overflow, Publisher


def _emit_on_demand(n: int) -> Callable[[FluxSink[int]], object]:
    """An emitter that pushes only what is requested, lazily, from a task."""

    def emitter(sink: FluxSink[int]) -> None:
        import asyncio

        async def run() -> None:
            for i in range(n):
                await sink.send(i)
                if sink.cancelled:
                    return
            sink.complete()

        task = asyncio.get_running_loop().create_task(run())
        sink.on_cancel(task.cancel)

    return emitter


CASES: dict[str, Callable[[int], Publisher[int]]] = {
    "publish_on": lambda n: Flux.range(0, n).publish_on(buffer_size=16),
    "limit_rate": lambda n: Flux.range(0, n).limit_rate(8),
    "on_backpressure_buffer": lambda n: Flux.range(0, n).on_backpressure_buffer(
        2**31, overflow="error"
    ),
    "create": lambda n: Flux.create(_emit_on_demand(n), overflow=Overflow.ERROR),
}
"""Cases the TCK's library verification runs; sizes up to 2**31 - 1 must stay lazy."""

FAILED: dict[str, Callable[[], Publisher[int]]] = {
    "publish_on": lambda: Flux.error(RuntimeError("failed publisher")).publish_on(),
    "create": lambda: Flux.create(lambda sink: sink.error(RuntimeError("failed publisher"))),
}
"""Publishers that signal on_subscribe then on_error."""
