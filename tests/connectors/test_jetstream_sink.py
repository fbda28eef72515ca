"""to_jetstream against a real nats-server: acked publishes, bounded in flight, retries."""

from __future__ import annotations

import json
from typing import Any

import pytest
from nats.aio.client import Client
from nats.aio.msg import Msg
from nats.js import JetStreamContext

from reactive_aio import Flux
from reactive_aio.connectors import Backoff
from reactive_aio.connectors.nats import JetStreamSink, PublishError, from_jetstream, to_jetstream
from reactive_aio.connectors.servers import LocalNatsServer

from .conftest import unique


async def test_publishes_everything_with_acks_and_bounded_in_flight(
    nats_server: LocalNatsServer, js: JetStreamContext, stream: str
) -> None:
    sink: JetStreamSink[dict[str, int]] = to_jetstream(
        nats_server.url,
        f"{stream}.events",
        encode=lambda item: json.dumps(item).encode(),
        max_in_flight=32,
    )
    Flux.range(0, 2_000).map(lambda i: {"i": i}).subscribe(sink)
    assert await sink == 2_000
    assert 0 < sink.most_in_flight <= 32
    info = await js.stream_info(stream)
    assert info.state.messages == 2_000
    source = from_jetstream(
        nats_server.url,
        stream,
        unique("check"),
        ack="on_delivery",
        parse=json.loads,
        stop_when_drained=True,
        fetch_timeout=0.3,
    )
    seen = await Flux.from_publisher(source).map(lambda m: m.value["i"]).to_list()
    assert sorted(seen) == list(range(2_000))


async def test_routes_by_item_and_keeps_a_given_message_id(
    nats_server: LocalNatsServer, js: JetStreamContext, stream: str
) -> None:
    items = ["a1", "b2", "a3", "a1"]  # the repeated "a1" has the same id: the stream drops it
    sink: JetStreamSink[str] = to_jetstream(
        nats_server.url, lambda item: f"{stream}.{item[0]}", msg_id=lambda item: item
    )
    Flux.from_iterable(items).subscribe(sink)
    assert await sink == 4  # four acknowledged publishes...
    assert (await js.stream_info(stream)).state.messages == 3  # ...three distinct messages


async def test_a_publish_nobody_stores_is_retried_then_reported_with_its_sequence(
    nats_server: LocalNatsServer,
) -> None:
    cancelled: list[bool] = []
    sink: JetStreamSink[bytes] = to_jetstream(
        nats_server.url,
        unique("nowhere"),
        ack_timeout=0.5,
        backoff=Backoff(first=0.01, attempts=2),
    )
    Flux.just(b"x").do_on_cancel(lambda: cancelled.append(True)).subscribe(sink)
    with pytest.raises(
        PublishError, match=r"message 0 to nowhere_\w+ was not acknowledged after 2 retries"
    ) as caught:
        await sink
    assert caught.value.sequence == 0
    assert caught.value.item == b"x"
    assert sink.retries == 2


async def test_items_it_cannot_encode_fail_the_sink(nats_server: LocalNatsServer) -> None:
    sink: JetStreamSink[Any] = to_jetstream(nats_server.url, "x")
    Flux.just(1).subscribe(sink)
    with pytest.raises(TypeError, match="pass encode="):
        await sink


async def test_a_publish_whose_ack_never_comes_is_swept_and_retried(
    nats_server: LocalNatsServer, nc: Client
) -> None:
    subject = unique("silent")
    heard: list[bytes] = []

    async def swallow(msg: Msg) -> None:  # a listener that never answers: no 503 either
        heard.append(msg.data)

    await nc.subscribe(subject, cb=swallow)
    await nc.flush()  # the server knows the listener before the sink's first publish (no 503)
    sink: JetStreamSink[bytes] = to_jetstream(
        nats_server.url, subject, ack_timeout=0.3, backoff=Backoff(first=0.01, attempts=2)
    )
    Flux.just(b"a", b"b").subscribe(sink)
    with pytest.raises(PublishError, match=r"after 2 retries: TimeoutError: no ack within 0.3 s"):
        await sink
    assert sorted(heard) == [b"a"] * 3 + [b"b"] * 3  # sent, then retried twice each
    assert sink.in_flight == 0
