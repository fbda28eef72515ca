"""TCK cases for the publishers the registry used to exempt: ``empty``, ``never``, ``pipe``,
the ``on_backpressure_*`` operators and `ConnectableFlux`'s ``ref_count``/``auto_connect``.

The ``on_backpressure_*`` operators ask upstream for everything and drop (or keep the latest
of, or fail on) what their subscriber did not request, so a source that emits at its own pace
cannot make them emit exactly n items. Their cases feed them from a hot source paced by the
demand at the end of the chain (`_Paced`): each request lets that many items into the source
one loop turn later, once the operator knows about the demand, so nothing is ever dropped and
every test of the publisher verification applies.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from reactive_aio import Flux, FluxSink, Overflow, Publisher

BATCH = 1024
"""Items the paced source emits per loop turn (the yield check asks for 2**31 - 1)."""


class _Paced:
    """A hot source of ``0 … n - 1`` that emits only what was requested downstream."""

    def __init__(self, n: int) -> None:
        self._n = n
        self._next = 0
        self._owed = 0
        self._sink: FluxSink[int] | None = None
        self._scheduled = False

    def attach(self, sink: FluxSink[int]) -> None:
        self._sink = sink
        if self._n == 0:
            sink.complete()

    def requested(self, n: int) -> None:
        if type(n) is not int or n <= 0:
            return  # the operator signals the rule 3.9 error
        self._owed = min(self._owed + n, self._n - self._next)
        self._schedule()

    def _schedule(self) -> None:
        if not self._scheduled and self._owed:
            self._scheduled = True
            asyncio.get_running_loop().call_soon(self._emit)

    def _emit(self) -> None:
        self._scheduled = False
        sink = self._sink
        if sink is None or sink.cancelled:
            return
        batch = min(self._owed, BATCH)
        self._owed -= batch
        for _ in range(batch):
            sink.next(self._next)
            self._next += 1
        if self._next == self._n:
            sink.complete()
        else:
            self._schedule()


def _paced(operator: Callable[[Flux[int]], Flux[int]]) -> Callable[[int], Publisher[int]]:
    def create(n: int) -> Publisher[int]:
        def chain() -> Flux[int]:
            source = _Paced(n)
            hot = Flux.create(source.attach, overflow=Overflow.ERROR)
            return operator(hot).do_on_request(source.requested)

        return Flux.defer(chain)

    return create


CASES: dict[str, Callable[[int], Publisher[int]]] = {
    "empty": lambda n: Flux.empty(),
    "never": lambda n: Flux.never(),
    "pipe": lambda n: Flux.range(0, n).pipe(lambda flux: flux.map(lambda x: x)),
    "on_backpressure_drop": _paced(lambda flux: flux.on_backpressure_drop()),
    "on_backpressure_latest": _paced(lambda flux: flux.on_backpressure_latest()),
    "on_backpressure_error": _paced(lambda flux: flux.on_backpressure_error()),
    "ConnectableFlux.auto_connect": lambda n: (
        Flux.range(0, n).publish(buffer_size=16).auto_connect()
    ),
    "ConnectableFlux.ref_count": lambda n: Flux.range(0, n).publish(buffer_size=16).ref_count(),
}
"""Cases the TCK's library verification runs."""

LIMITS: dict[str, int] = {
    "empty": 0,  # the zero-element case: tests that need elements skip
    "never": 0,  # emits nothing (and never completes): tests that need elements skip
}
"""max_elements_from_publisher() of cases that cannot make n items."""


def _failing() -> Flux[int]:
    return Flux.error(RuntimeError("failed publisher"))


FAILED: dict[str, Callable[[], Publisher[int]]] = {
    # one failing case per base of the kit, besides the ones in the other cases modules
    "map": lambda: _failing().map(lambda x: x + 1),  # OperatorSubscriber
    "filter": lambda: _failing().filter(lambda x: x > 0),  # DroppingSubscriber
    "take": lambda: _failing().take(3),  # OperatorSubscriber with request-side state
    "scan": lambda: _failing().scan(lambda a, x: a + x, 0),
    "start_with": lambda: _failing().start_with(),  # ArbiterSubscriber
    "debounce": lambda: _failing().debounce(1.0),  # BufferDrain, upstream side
    "buffer_timeout": lambda: _failing().buffer_timeout(4, 1.0).map(len),
    "delay_elements": lambda: _failing().delay_elements(0.0),
    "pipe": lambda: _failing().pipe(lambda flux: flux.map(lambda x: x)),
    "on_backpressure_drop": lambda: _failing().on_backpressure_drop(),
}
"""Publishers that signal on_subscribe then on_error."""
