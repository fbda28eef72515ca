"""``metrics``: record what a stream does through the OpenTelemetry metrics API.

The instruments of Reactor's ``Flux.metrics()``, in our namespace, each recorded with the
attribute ``reactive_aio.name`` (the nearest ``name()`` upstream, else ``"reactive_aio"``)
and the ``tag()`` s upstream (see `labels_of`):

* ``reactive_aio.subscribed`` (counter): subscriptions;
* ``reactive_aio.requested`` (counter): the sum of the amounts requested (an unbounded
  request adds ``MAX_DEMAND``);
* ``reactive_aio.items`` (counter): items;
* ``reactive_aio.on_next.delay`` (histogram, s): from the subscription to the first item,
  then between items;
* ``reactive_aio.flow.duration`` (histogram, s): from the subscription to its end, with
  ``status`` = ``completed``, ``cancelled`` or ``error`` (and ``exception``, the error's
  type name).

The instruments come from the meter ``reactive_aio`` of the given meter provider (the global
one by default), made when ``metrics()`` is called: OpenTelemetry is imported then, and
only then (the ``otel`` extra). Unlike a label, this stage costs two instrument calls per
item (microseconds each with the OpenTelemetry SDK): it belongs where items are few.

Backpressure: pass-through; each ``request(n)`` is counted, then goes upstream unchanged.
Errors: upstream errors pass through (recorded with status ``error``); ``metrics()`` raises
ImportError when the OpenTelemetry API is not installed.
"""

from __future__ import annotations

from collections.abc import Callable
from time import perf_counter
from typing import TYPE_CHECKING, Generic, TypeVar, final

import attrs

from .._core import OperatorSubscriber, Publisher, Subscriber, Subscription, require_not_none
from ._name import DEFAULT_NAME, labels_of

if TYPE_CHECKING:
    from opentelemetry.metrics import Counter, Histogram, MeterProvider
    from opentelemetry.util.types import Attributes

__all__ = ("MetricsPublisher", "metrics_publisher")

T = TypeVar("T")

NAME_ATTRIBUTE = "reactive_aio.name"

_SECONDS = (1e-6, 1e-5, 1e-4, 1e-3, 0.005, 0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 10.0, 60.0, 600.0)
"""Histogram buckets: an item's delay may be microseconds, a flow's duration hours."""


@final
@attrs.frozen
class _Instruments:
    subscribed: Counter
    requested: Counter
    items: Counter
    on_next_delay: Histogram
    flow_duration: Histogram


def _instruments(meter_provider: MeterProvider | None) -> _Instruments:
    try:
        from opentelemetry import metrics
    except ImportError as exc:  # the extra is not installed
        raise ImportError(
            "metrics() records through the OpenTelemetry metrics API: "
            "pip install reactive_aio[otel]"
        ) from exc
    provider = metrics.get_meter_provider() if meter_provider is None else meter_provider
    meter = provider.get_meter("reactive_aio")
    return _Instruments(
        subscribed=meter.create_counter("reactive_aio.subscribed", "1", "subscriptions"),
        requested=meter.create_counter("reactive_aio.requested", "1", "items requested"),
        items=meter.create_counter("reactive_aio.items", "1", "items received"),
        on_next_delay=meter.create_histogram(
            "reactive_aio.on_next.delay",
            "s",
            "time from the subscription to the first item, then between items",
            explicit_bucket_boundaries_advisory=_SECONDS,
        ),
        flow_duration=meter.create_histogram(
            "reactive_aio.flow.duration",
            "s",
            "time from the subscription to its completion, error or cancellation",
            explicit_bucket_boundaries_advisory=_SECONDS,
        ),
    )


def metrics_publisher(
    source: Publisher[T], meter_provider: MeterProvider | None
) -> MetricsPublisher[T]:
    """What `Flux.metrics` wraps: the instruments made now, the labels read now."""
    instruments = _instruments(meter_provider)
    name, tags = labels_of(source)
    attributes = {**dict(tags), NAME_ATTRIBUTE: name or DEFAULT_NAME}
    return MetricsPublisher(source, instruments, attributes)


@final
@attrs.frozen
class MetricsPublisher(Publisher[T], Generic[T]):
    """What `Flux.metrics` returns."""

    source: Publisher[T]
    instruments: _Instruments
    attributes: dict[str, str] = attrs.field(eq=False)  # (a dict hashes not)

    def subscribe(self, subscriber: Subscriber[T]) -> None:
        require_not_none(subscriber, "1.9", "the subscriber")
        self.source.subscribe(
            _MetricsSubscriber(subscriber, instruments=self.instruments, attributes=self.attributes)
        )


@final
@attrs.define(eq=False)
class _MetricsSubscriber(OperatorSubscriber[T, T]):
    _instruments: _Instruments = attrs.field(kw_only=True, alias="instruments")
    _attributes: dict[str, str] = attrs.field(kw_only=True, alias="attributes")
    _started: float = attrs.field(default=0.0, init=False)
    _last: float = attrs.field(default=0.0, init=False)
    """When the last item came (the subscription, before the first)."""
    _record_delay: Callable[[float, Attributes], None] = attrs.field(init=False)
    _count_item: Callable[[int, Attributes], None] = attrs.field(init=False)
    """The per-item calls, bound once."""

    def __attrs_post_init__(self) -> None:
        super().__attrs_post_init__()
        self._record_delay = self._instruments.on_next_delay.record
        self._count_item = self._instruments.items.add

    def on_subscribe(self, subscription: Subscription) -> None:
        if self._upstream is None and not self._done:  # (a second one is only cancelled)
            self._instruments.subscribed.add(1, self._attributes)
            self._started = self._last = perf_counter()
        super().on_subscribe(subscription)

    def on_next(self, item: T) -> None:
        now = perf_counter()
        self._record_delay(now - self._last, self._attributes)
        self._count_item(1, self._attributes)
        self._last = now
        self._next(item)

    def on_error(self, error: BaseException) -> None:
        if not self._done:
            self._ended({"status": "error", "exception": type(error).__name__})
        super().on_error(error)

    def on_complete(self) -> None:
        if not self._done:
            self._ended({"status": "completed"})
        super().on_complete()

    def _request(self, n: int) -> None:
        if n > 0 and not self._done:  # (upstream fails the stream on the others, rule 3.9)
            self._instruments.requested.add(n, self._attributes)
        super()._request(n)

    def cancel(self) -> None:
        if self._hand_over_cancel():
            return
        if not self._done:
            self._ended({"status": "cancelled"})
        super().cancel()

    def _ended(self, status: dict[str, str]) -> None:
        attributes: Attributes = {**self._attributes, **status}
        self._instruments.flow_duration.record(perf_counter() - self._started, attributes)
