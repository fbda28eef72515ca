"""from_jetstream against a real nats-server: demand → fetch, ack policies, dead letters, faults."""

from __future__ import annotations

import asyncio
import gc
import json
import os
import signal
from collections.abc import Callable
from typing import Any

import nats
import pytest
from nats.js import JetStreamContext
from nats.js.api import AckPolicy as AckPolicyConfig, ConsumerConfig, ConsumerInfo

from reactive_aio import Flux, Subscriber, Subscription
from reactive_aio.connectors import Backoff, ConnectionLostError
from reactive_aio.connectors.nats import (
    DEAD_LETTER_REASON,
    DEAD_LETTER_SEQUENCE,
    AckPolicy,
    ConsumerAcksError,
    JetStreamMessage,
    JetStreamSource,
    MessageParseError,
    PullRequestError,
    from_jetstream,
)
from reactive_aio.connectors.servers import LocalNatsServer

from .conftest import unique


async def publish(js: JetStreamContext, subject: str, count: int, start: int = 0) -> None:
    for i in range(start, start + count):
        ack = await js.publish_async(subject, json.dumps({"i": i}).encode())
        if i % 500 == 499:
            await ack
    await js.publish_async_completed()


async def fill(server: LocalNatsServer, stream: str, count: int, start: int = 0) -> None:
    """Publish *count* messages to ``<stream>.x`` on a server of the test's own, making the
    stream if it is not there."""
    client = await nats.connect(server.url)
    js = client.jetstream()
    await js.add_stream(name=stream, subjects=[f"{stream}.>"])  # (the same again: no change)
    await publish(js, f"{stream}.x", count, start)
    await client.close()


async def eventually(check: Any, timeout: float = 10.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not check():
        assert asyncio.get_running_loop().time() < deadline, "condition not met in time"
        await asyncio.sleep(0.02)


async def acknowledged(js: JetStreamContext, stream: str, durable: str) -> ConsumerInfo:
    """The consumer's info once it holds no message awaiting acknowledgement: the server
    applies an ack to the consumer after answering the flush that carried it, so a request
    on another connection right after the flush may not see it yet."""
    deadline = asyncio.get_running_loop().time() + 10
    while True:
        info: ConsumerInfo = await js.consumer_info(stream, durable)
        if not info.num_ack_pending:
            return info
        assert asyncio.get_running_loop().time() < deadline, "not acknowledged"
        await asyncio.sleep(0.05)


def acked_up_to(info: ConsumerInfo) -> int:
    """The stream sequence of the consumer's ack floor."""
    assert info.ack_floor is not None
    return info.ack_floor.stream_seq or 0


def acks_sent(source: JetStreamSource[Any]) -> list[str]:
    """The ack subjects *source* publishes from now on, on its subscription's connection,
    where the acks leave (the pull requests meanwhile are not counted)."""
    client = source._subscriptions[0]._client
    publish_one = client.publish
    sent: list[str] = []

    async def counted(subject: str, payload: bytes = b"", **kwargs: Any) -> None:
        if payload == b"+ACK":
            sent.append(subject)
        await publish_one(subject, payload, **kwargs)

    client.publish = counted
    return sent


def to_the_end(
    server: LocalNatsServer, stream: str, durable: str, ack: AckPolicy, **options: Any
) -> JetStreamSource[Any]:
    """A source of JSON messages that completes once the consumer is drained."""
    return from_jetstream(
        server.url,
        stream,
        durable,
        ack=ack,
        parse=json.loads,
        stop_when_drained=True,
        fetch_timeout=0.3,
        **options,
    )


class SlowSubscriber(Subscriber[JetStreamMessage[Any]]):
    """Requests *step* at a time and pauses before each request; checks the in-hand bound."""

    def __init__(self, source: Any, total: int, step: int, max_batch: int) -> None:
        self.source = source
        self.total = total
        self.step = step
        self.max_batch = max_batch
        self.values: list[int] = []
        self.requested = 0
        self.worst_in_hand = 0
        self.worst_fetched_ahead = 0
        self.done = asyncio.get_running_loop().create_future()
        self.subscription: Subscription | None = None
        self.credit = 0

    def on_subscribe(self, subscription: Subscription) -> None:
        self.subscription = subscription
        self.ask()

    def ask(self) -> None:
        assert self.subscription is not None
        self.requested += self.step
        self.credit = self.step
        self.subscription.request(self.step)

    def on_next(self, item: JetStreamMessage[Any]) -> None:
        self.values.append(item.value["i"])
        stats = self.source.statistics()
        self.worst_in_hand = max(self.worst_in_hand, stats.in_hand - stats.outstanding)
        self.worst_fetched_ahead = max(self.worst_fetched_ahead, stats.fetched - self.requested)
        self.credit -= 1
        if len(self.values) == self.total:
            assert self.subscription is not None
            self.subscription.cancel()
            self.done.set_result(None)
        elif self.credit == 0:
            asyncio.get_running_loop().call_later(0.002, self.ask)

    def on_error(self, error: BaseException) -> None:
        self.done.set_exception(error)

    def on_complete(self) -> None:
        self.done.set_result(None)


@pytest.mark.parametrize("ack", ["on_delivery", "after_landing"])
async def test_messages_in_hand_never_exceed_demand_plus_one_batch(
    nats_server: LocalNatsServer, js: JetStreamContext, stream: str, ack: AckPolicy
) -> None:
    await publish(js, f"{stream}.x", 3_000)
    max_batch = 64
    source = from_jetstream(
        nats_server.url,
        stream,
        unique("d"),
        ack=ack,
        parse=json.loads,
        max_batch=max_batch,
    )
    subscriber = SlowSubscriber(source, total=1_500, step=7, max_batch=max_batch)
    source.subscribe(subscriber)
    await asyncio.wait_for(subscriber.done, 60)
    assert subscriber.values == list(range(1_500))
    # what the source holds beyond the outstanding demand, and what it pulled beyond what
    # was requested, both stay within one batch (fetches are sized by demand: 0 here)
    assert subscriber.worst_in_hand <= max_batch
    assert subscriber.worst_fetched_ahead <= max_batch
    assert source.statistics().fetched <= subscriber.requested + max_batch
    print(
        f"\n{ack}: worst in hand beyond demand {subscriber.worst_in_hand}, "
        f"fetched ahead {subscriber.worst_fetched_ahead} (max_batch {max_batch})"
    )


async def test_no_demand_no_fetch(
    nats_server: LocalNatsServer, js: JetStreamContext, stream: str
) -> None:
    await publish(js, f"{stream}.x", 100)
    source: JetStreamSource[Any] = from_jetstream(
        nats_server.url, stream, unique("d"), ack="on_delivery", max_batch=16
    )
    subscriptions: list[Subscription] = []
    got: list[Any] = []

    class Idle(Subscriber[Any]):
        def on_subscribe(self, subscription: Subscription) -> None:
            subscriptions.append(subscription)
            subscription.request(5)

        def on_next(self, item: Any) -> None:
            got.append(item)

        def on_error(self, error: BaseException) -> None:
            raise AssertionError(error)

        def on_complete(self) -> None:
            raise AssertionError("completed")

    source.subscribe(Idle())
    await eventually(lambda: len(got) == 5)
    await asyncio.sleep(0.3)
    assert len(got) == 5
    assert source.statistics().fetched == 5
    subscriptions[0].cancel()
    await eventually(lambda: all(s.closed for s in source._subscriptions))


async def test_ack_after_processing_redelivers_what_was_not_acked(
    nats_server: LocalNatsServer, js: JetStreamContext, stream: str
) -> None:
    await publish(js, f"{stream}.x", 40)
    durable = unique("d")
    source = to_the_end(nats_server, stream, durable, "after_processing", ack_wait=1.0)

    async def ack_evens(message: JetStreamMessage[Any]) -> JetStreamMessage[Any]:
        if message.value["i"] % 2 == 0:
            await message.ack()
        return message

    await Flux.from_publisher(source).take(40).map_async(ack_evens).to_list()
    # the odd ones were never acked: the durable consumer delivers them again
    again = await Flux.from_publisher(source).map_async(_acked).to_list()
    assert sorted(m.value["i"] for m in again) == list(range(1, 40, 2))
    assert all(m.delivered == 2 for m in again)
    assert (await acknowledged(js, stream, durable)).num_pending == 0


async def _acked(message: JetStreamMessage[Any]) -> JetStreamMessage[Any]:
    await message.ack()
    return message


async def test_ack_after_landing_acks_only_committed_positions(
    nats_server: LocalNatsServer, js: JetStreamContext, stream: str
) -> None:
    await publish(js, f"{stream}.x", 20)
    durable = unique("d")
    source: JetStreamSource[bytes] = from_jetstream(
        nats_server.url, stream, durable, ack="after_landing", ack_wait=1.0, fetch_timeout=0.3
    )
    first = await Flux.from_publisher(source).take(20).to_list()
    sequences = [m.sequence for m in first]
    assert source.statistics().awaiting_commit == 20
    acked = source.committed(1, sequences[:15])
    assert acked is not None
    await acked
    assert source.committed(2, [10_000]) is None  # not ours: nothing to ack
    assert source.statistics().awaiting_commit == 5
    again = await Flux.from_publisher(source).take(5).to_list()
    assert [m.sequence for m in again] == sequences[15:]


async def test_what_awaits_a_commit_is_out_of_the_cyclic_collectors_reach(
    nats_server: LocalNatsServer, js: JetStreamContext, stream: str
) -> None:
    # A sink's batch keeps 100,000s of messages awaiting their commit: a full collection
    # walking an entry for each was a fifth to a third of the collector's time in the main job.
    await publish(js, f"{stream}.x", 20)
    source: JetStreamSource[bytes] = from_jetstream(
        nats_server.url, stream, unique("d"), ack="after_landing"
    )
    await Flux.from_publisher(source).take(20).to_list()
    gc.collect()  # (a tuple of untracked values is untracked at the first collection)
    assert source.statistics().awaiting_commit == 20
    assert not any(map(gc.is_tracked, source._awaiting_commit.values()))


async def test_a_large_commit_is_acked_whole_in_slices_with_the_loop_served_between(
    nats_server: LocalNatsServer, js: JetStreamContext, stream: str
) -> None:
    count = 5_000  # more than one slice of acks
    await publish(js, f"{stream}.x", count)
    durable = unique("d")
    source: JetStreamSource[bytes] = from_jetstream(
        nats_server.url, stream, durable, ack="after_landing", max_batch=1_000
    )
    handed: list[JetStreamMessage[bytes]] = []
    subscription = Flux.from_publisher(source).subscribe(on_next=handed.append)
    await eventually(lambda: len(handed) == count)
    sent = acks_sent(source)
    acked = source.committed(1, [m.sequence for m in handed])
    assert acked is not None
    acking = asyncio.ensure_future(acked)
    sent_when_served: list[int] = []
    asyncio.get_running_loop().call_soon(lambda: sent_when_served.append(len(sent)))
    await acking
    subscription.dispose()
    assert len(sent) == count
    assert 0 < sent_when_served[0] < count  # the loop ran something in between
    await acknowledged(js, stream, durable)


async def test_a_redelivery_awaiting_its_commit_is_not_handed_out_twice(
    nats_server: LocalNatsServer, js: JetStreamContext, stream: str
) -> None:
    await publish(js, f"{stream}.x", 10)
    durable = unique("d")
    source: JetStreamSource[bytes] = from_jetstream(
        nats_server.url, stream, durable, ack="after_landing", ack_wait=0.5, fetch_timeout=0.2
    )
    handed: list[JetStreamMessage[bytes]] = []
    subscription = Flux.from_publisher(source).subscribe(on_next=handed.append)
    await eventually(lambda: len(handed) == 10)
    # The sink is slower than ack_wait: the server delivers every message again meanwhile.
    deadline = asyncio.get_running_loop().time() + 20
    while ((await js.consumer_info(stream, durable)).num_redelivered or 0) < 10:
        assert asyncio.get_running_loop().time() < deadline, "no redelivery"
        await asyncio.sleep(0.05)
    await asyncio.sleep(0.5)  # a fetch or two after the redeliveries
    # Ended before the commit: a delivery that crosses the commit's acks on the wire is not
    # awaiting any more, and is handed out again for the sink to skip (the module docs).
    subscription.dispose()
    assert sorted(m.sequence for m in handed) == list(range(1, 11))  # each once
    acked = source.committed(0, [m.sequence for m in handed])
    assert acked is not None
    await acked
    assert source.statistics().awaiting_commit == 0
    # The acks (through the newest delivery's subject) left on the source's connection.
    await acknowledged(js, stream, durable)


async def test_a_message_rejected_downstream_goes_to_the_dead_letter_then_is_acked(
    nats_server: LocalNatsServer, js: JetStreamContext, stream: str
) -> None:
    await publish(js, f"{stream}.x", 5)
    durable = unique("d")
    source = from_jetstream(
        nats_server.url,
        stream,
        durable,
        ack="after_landing",
        parse=json.loads,
        dead_letter=f"{stream}.dead",
        subject=f"{stream}.x",
    )
    messages = await Flux.from_publisher(source).take(5).to_list()
    await source.dead_letter_messages([(messages[1], "i: too odd"), (messages[3], "i: odd")])
    assert source.statistics().awaiting_commit == 3  # the rejects are settled
    acked = source.committed(0, [messages[i].sequence for i in (0, 2, 4)])
    assert acked is not None
    await acked  # on a connection of its own (the subscription ended): flushed and closed
    assert (await acknowledged(js, stream, durable)).num_pending == 0
    letters = await (await js.pull_subscribe(f"{stream}.dead", stream=stream)).fetch(5, timeout=2)
    assert [(m.headers or {}).get(DEAD_LETTER_REASON) for m in letters] == ["i: too odd", "i: odd"]
    assert [m.data for m in letters] == [messages[1].data, messages[3].data]
    assert source.statistics().dead_letters == 2
    without: JetStreamSource[bytes] = from_jetstream(nats_server.url, stream, durable)
    with pytest.raises(ValueError, match="needs dead_letter="):
        await without.dead_letter_messages([(messages[0], "no")])


async def test_dead_letters_carry_the_reason_and_the_rest_flows_on(
    nats_server: LocalNatsServer, js: JetStreamContext, stream: str
) -> None:
    for i in range(30):
        payload = b"not json" if i in (3, 17) else json.dumps({"i": i}).encode()
        await js.publish(f"{stream}.x", payload)
    dead = unique("DL")
    await js.add_stream(name=dead, subjects=[f"{dead}.>"])
    source = from_jetstream(
        nats_server.url,
        stream,
        unique("d"),
        ack="on_delivery",
        parse=json.loads,
        dead_letter=f"{dead}.flights",
        stop_when_drained=True,
        fetch_timeout=0.3,
    )
    values = await Flux.from_publisher(source).map(lambda m: m.value["i"]).to_list()
    assert values == [i for i in range(30) if i not in (3, 17)]
    letters = await js.pull_subscribe(f"{dead}.>", stream=dead)
    msgs = await letters.fetch(10, timeout=2)
    assert [m.data for m in msgs] == [b"not json", b"not json"]
    assert [m.headers[DEAD_LETTER_SEQUENCE] for m in msgs] == ["4", "18"]  # type: ignore[index]
    assert all("JSONDecodeError" in m.headers[DEAD_LETTER_REASON] for m in msgs)  # type: ignore[index]
    assert source.statistics().dead_letters == 2
    await js.delete_stream(dead)


@pytest.mark.parametrize("ack", ["on_delivery", "after_processing", "after_landing"])
async def test_a_drained_replay_ends_with_its_last_message_not_a_request_expiry(
    js: JetStreamContext, nats_server: LocalNatsServer, stream: str, ack: AckPolicy
) -> None:
    # 1,000 messages in requests of 300: the last asks for only the 100 left and fills, and
    # the last message's pending count of 0 leads to the drained check at once. Waiting out
    # a request's 60 s expiry instead (twice: the short one, then an empty one) runs into
    # the bound.
    await publish(js, f"{stream}.x", 1_000)
    source = from_jetstream(
        nats_server.url,
        stream,
        unique("d"),
        ack=ack,
        parse=json.loads,
        max_batch=300,
        stop_when_drained=True,
        fetch_timeout=60.0,
    )
    flux = Flux.from_publisher(source).map(lambda m: m.value["i"])
    values = await asyncio.wait_for(flux.to_list(), 20)
    assert values == list(range(1_000))


@pytest.mark.parametrize("ack", ["on_delivery", "after_processing", "after_landing"])
async def test_a_consumer_with_nothing_to_deliver_ends_at_once_without_a_request(
    js: JetStreamContext, nats_server: LocalNatsServer, stream: str, ack: AckPolicy
) -> None:
    # An empty dead letter read to its end: the consumer's state at the connection's open
    # says nothing is left, so the drained check comes before any pull request, instead of
    # one waiting out its 60 s expiry (which runs into the bound).
    await publish(js, f"{stream}.x", 3)
    requests: list[str] = []

    async def requested(msg: Any) -> None:
        requests.append(msg.subject)

    watcher = await nats.connect(nats_server.url)
    await watcher.subscribe(f"$JS.API.CONSUMER.MSG.NEXT.{stream}.>", cb=requested)
    await watcher.flush()

    async def read_to_the_end() -> list[JetStreamMessage[bytes]]:
        source: JetStreamSource[bytes] = from_jetstream(
            nats_server.url,
            stream,
            unique("d"),
            subject=f"{stream}.nothing",
            ack=ack,
            stop_when_drained=True,
            fetch_timeout=60.0,
        )
        return await asyncio.wait_for(Flux.from_publisher(source).to_list(), 20)

    try:
        assert await read_to_the_end() == []
        await watcher.flush()
        assert requests == []
        # The watcher does see the requests of a consumer with something to deliver.
        await publish(js, f"{stream}.nothing", 1)
        assert [message.data for message in await read_to_the_end()] == [b'{"i": 0}']
        await watcher.flush()
        assert len(requests) == 1
    finally:
        await watcher.close()


async def test_without_a_dead_letter_a_bad_message_fails_the_stream_by_sequence(
    nats_server: LocalNatsServer, js: JetStreamContext, stream: str
) -> None:
    await js.publish(f"{stream}.x", b'{"i": 0}')
    await js.publish(f"{stream}.x", b"{")
    source = from_jetstream(
        nats_server.url, stream, unique("d"), ack="on_delivery", parse=json.loads
    )
    with pytest.raises(MessageParseError, match=f"stream {stream} sequence 2"):
        await Flux.from_publisher(source).to_list()


def through_outages(
    server: LocalNatsServer, ack: AckPolicy, **options: Any
) -> JetStreamSource[Any]:
    """A source of the 400 messages of ``OUT`` that rides out a server restart or two."""
    return from_jetstream(
        server.url,
        "OUT",
        "durable",
        parse=json.loads,
        ack=ack,
        max_batch=50,
        ack_wait=2.0,
        fetch_timeout=0.3,
        stop_when_drained=True,
        backoff=Backoff(first=0.1, max_delay=0.5, attempts=40),
        **options,
    )


async def restart(server: LocalNatsServer) -> None:
    server.kill()
    await asyncio.sleep(0.5)
    server.start()


@pytest.mark.timeout(120)
async def test_a_broker_outage_loses_nothing() -> None:
    with LocalNatsServer() as server:
        await fill(server, "OUT", 400)
        source = through_outages(server, "after_processing")
        seen: list[int] = []

        async def process(message: JetStreamMessage[Any]) -> int:
            if len(seen) == 150:
                await restart(server)  # mid-stream: acks of what is in hand are lost with it
            seen.append(message.value["i"])
            await message.ack()
            return int(message.value["i"])

        await Flux.from_publisher(source).map_async(process).to_list()
        assert set(seen) == set(range(400))  # redelivery: nothing lost, maybe some twice


@pytest.mark.timeout(120)
async def test_a_broker_outage_under_an_exclusive_source_lands_all_and_acks_all() -> None:
    # The connection drops with messages on their way and acks unsent: the source may no
    # longer ack at its floor until the server's pending count shows none it never saw.
    with LocalNatsServer() as server:
        await fill(server, "OUT", 400)
        source = through_outages(server, "after_landing", exclusive=True)
        landed: set[int] = set()
        outages: list[int] = []

        async def land(batch: list[JetStreamMessage[Any]]) -> int:
            if len(landed) >= 150 and not outages:
                outages.append(len(landed))
                await restart(server)  # mid-stream
            landed.update(m.value["i"] for m in batch)
            acked = source.committed(0, [m.sequence for m in batch])
            if acked is not None:
                await acked
            return len(batch)

        await Flux.from_publisher(source).buffer(40).map_async(land).to_list()
        assert landed == set(range(400))  # redelivery: nothing lost, maybe some twice
        client = await nats.connect(server.url)
        try:
            info = await acknowledged(client.jetstream(), "OUT", "durable")
        finally:
            await client.close()
        assert (acked_up_to(info), info.config.ack_policy) == (400, AckPolicyConfig.ALL)


async def test_a_broker_that_stays_away_fails_with_a_clear_error() -> None:
    server = LocalNatsServer()
    with pytest.raises(ConnectionLostError, match=r"127\.0\.0\.1.*2 reconnect attempts"):
        await Flux.from_publisher(
            from_jetstream(server.url, "S", "d", backoff=Backoff(first=0.01, attempts=2))
        ).to_list()
    server.stop()


async def test_cancel_gives_back_what_was_fetched_and_not_delivered(
    nats_server: LocalNatsServer, js: JetStreamContext, stream: str
) -> None:
    await publish(js, f"{stream}.x", 20)
    source: JetStreamSource[Any] = from_jetstream(
        nats_server.url,
        stream,
        unique("d"),
        parse=json.loads,
        ack="after_processing",
        ack_wait=60.0,  # only a nak brings them back within this test
        max_batch=20,
        fetch_timeout=0.3,
        stop_when_drained=True,
    )
    first: list[JetStreamMessage[Any]] = []

    class CancelAtFirst(Subscriber[JetStreamMessage[Any]]):
        def on_subscribe(self, subscription: Subscription) -> None:
            self.subscription = subscription
            subscription.request(20)

        def on_next(self, item: JetStreamMessage[Any]) -> None:
            first.append(item)
            self.subscription.cancel()  # 19 fetched messages were never handed out

        def on_error(self, error: BaseException) -> None:
            raise AssertionError(error)

        def on_complete(self) -> None:
            raise AssertionError("completed")

    source.subscribe(CancelAtFirst())
    await eventually(lambda: len(first) == 1 and all(s.closed for s in source._subscriptions))
    await first[0].ack()
    rest = await asyncio.wait_for(Flux.from_publisher(source).map_async(_acked).to_list(), 20)
    assert sorted(m.value["i"] for m in rest) == list(range(1, 20))
    assert all(m.delivered == 2 for m in rest)


async def test_create_consumer_makes_the_durable_once_and_later_sources_bind_it(
    nats_server: LocalNatsServer, js: JetStreamContext, stream: str
) -> None:
    await publish(js, f"{stream}.x", 3)
    durable = unique("d")
    first: JetStreamSource[bytes] = from_jetstream(
        nats_server.url, stream, durable, ack="after_landing", ack_wait=7.0, max_ack_pending=99
    )
    await first.create_consumer()
    info = await js.consumer_info(stream, durable)
    assert (info.config.ack_wait, info.config.max_ack_pending) == (7.0, 99)
    # Another process's settings do not replace the first's: it binds the consumer as it is.
    second: JetStreamSource[bytes] = from_jetstream(
        nats_server.url,
        stream,
        durable,
        ack="after_landing",
        ack_wait=2.0,
        stop_when_drained=True,
        fetch_timeout=0.2,
    )
    await second.create_consumer()
    messages = await Flux.from_publisher(second).take(3).to_list()
    assert [m.sequence for m in messages] == [1, 2, 3]
    assert (await js.consumer_info(stream, durable)).config.ack_wait == 7.0


async def test_on_delivery_acks_each_burst_once_through_an_ack_all_consumer(
    nats_server: LocalNatsServer, js: JetStreamContext, stream: str
) -> None:
    await publish(js, f"{stream}.x", 1_000)
    durable = unique("d")
    source = to_the_end(nats_server, stream, durable, "on_delivery", max_batch=64)
    values = await Flux.from_publisher(source).map(lambda m: m.value["i"]).to_list()
    assert values == list(range(1_000))
    info = await acknowledged(js, stream, durable)
    assert info.config.ack_policy == AckPolicyConfig.ALL
    assert (info.num_pending, info.num_redelivered) == (0, 0)


async def test_on_delivery_acks_every_message_of_a_consumer_that_acks_each(
    nats_server: LocalNatsServer, js: JetStreamContext, stream: str
) -> None:
    await publish(js, f"{stream}.x", 300)
    durable = unique("d")
    await js.add_consumer(
        stream, ConsumerConfig(durable_name=durable, ack_policy=AckPolicyConfig.EXPLICIT)
    )
    source = to_the_end(nats_server, stream, durable, "on_delivery")
    assert len(await Flux.from_publisher(source).to_list()) == 300
    assert (await acknowledged(js, stream, durable)).num_pending == 0


async def test_an_ack_all_consumer_is_refused_where_each_message_is_acked_on_its_own(
    nats_server: LocalNatsServer, js: JetStreamContext, stream: str
) -> None:
    durable = unique("d")
    await js.add_consumer(
        stream, ConsumerConfig(durable_name=durable, ack_policy=AckPolicyConfig.ALL)
    )
    source: JetStreamSource[bytes] = from_jetstream(
        nats_server.url, stream, durable, ack="after_landing"
    )
    refusal = r"acknowledges all up to a message; .* or exclusive=True"
    with pytest.raises(ConsumerAcksError, match=refusal):
        await source.create_consumer()
    with pytest.raises(ConsumerAcksError, match=refusal):
        await Flux.from_publisher(source).to_list()


async def test_an_exclusive_source_acks_each_commit_with_one_ack_at_the_floor(
    nats_server: LocalNatsServer, js: JetStreamContext, stream: str
) -> None:
    await publish(js, f"{stream}.x", 30)
    durable = unique("d")
    source: JetStreamSource[bytes] = from_jetstream(
        nats_server.url, stream, durable, ack="after_landing", exclusive=True
    )
    handed: list[JetStreamMessage[bytes]] = []
    subscription = Flux.from_publisher(source).subscribe(on_next=handed.append)
    await eventually(lambda: len(handed) == 30)
    assert (await js.consumer_info(stream, durable)).config.ack_policy == AckPolicyConfig.ALL
    sent = acks_sent(source)
    sequences = [m.sequence for m in handed]
    # The middle third lands first: the first is still open below it, so nothing is acked.
    assert source.committed(1, sequences[10:20]) is None
    acked = source.committed(2, sequences[:10])  # now one ack covers both
    assert acked is not None
    await acked
    assert sent == [handed[19]._reply]
    deadline = asyncio.get_running_loop().time() + 10
    info = await js.consumer_info(stream, durable)
    while acked_up_to(info) != sequences[19]:  # (applied after the flush's answer)
        assert asyncio.get_running_loop().time() < deadline, "not acknowledged"
        await asyncio.sleep(0.05)
        info = await js.consumer_info(stream, durable)
    assert info.num_ack_pending == 10
    acked = source.committed(3, sequences[20:])
    assert acked is not None
    await acked
    subscription.dispose()
    assert len(sent) == 2
    assert acked_up_to(await acknowledged(js, stream, durable)) == sequences[-1]


async def test_an_exclusive_source_acks_nothing_over_what_a_crashed_reader_left_pending(
    nats_server: LocalNatsServer, js: JetStreamContext, stream: str
) -> None:
    # One ack acks every message before it: had the second reader acked what it landed, the
    # first reader's messages, never landed, would have been acked with them and lost.
    await publish(js, f"{stream}.x", 20)
    durable = unique("d")

    def reader() -> JetStreamSource[bytes]:
        return from_jetstream(
            nats_server.url,
            stream,
            durable,
            ack="after_landing",
            exclusive=True,
            ack_wait=1.5,
            max_batch=10,
            fetch_timeout=0.3,
        )

    crashed = await Flux.from_publisher(reader()).take(10).to_list()  # never committed
    assert [m.sequence for m in crashed] == list(range(1, 11))
    source = reader()
    handed: list[JetStreamMessage[bytes]] = []
    subscription = Flux.from_publisher(source).subscribe(on_next=handed.append)
    await eventually(lambda: len(handed) == 10)
    assert [m.sequence for m in handed] == list(range(11, 21))
    sent = acks_sent(source)
    acked = source.committed(1, [m.sequence for m in handed])
    assert acked is not None
    await acked  # the server still counts the first reader's ten: no ack
    assert sent == []
    info = await js.consumer_info(stream, durable)
    assert (acked_up_to(info), info.num_ack_pending) == (0, 20)
    # After ack_wait the server delivers the first reader's ten again, and the second's, not
    # acked (a sink would find those committed already and report them again); each once,
    # since a message awaiting its commit is not handed out again.
    await eventually(lambda: len(handed) == 30)
    assert sorted(m.sequence for m in handed[10:]) == list(range(1, 21))
    acked = source.committed(2, [m.sequence for m in handed[10:]])
    assert acked is not None
    await acked
    subscription.dispose()
    assert len(sent) == 1  # one ack at the floor, once the server's count allowed it
    assert acked_up_to(await acknowledged(js, stream, durable)) == 20


async def test_under_an_exclusive_source_a_dead_letter_waits_for_the_commits_before_it(
    nats_server: LocalNatsServer, js: JetStreamContext, stream: str
) -> None:
    for i in range(10):
        await js.publish(f"{stream}.x", b"{" if i == 5 else json.dumps({"i": i}).encode())
    durable = unique("d")
    source = from_jetstream(
        nats_server.url,
        stream,
        durable,
        subject=f"{stream}.x",
        ack="after_landing",
        exclusive=True,
        parse=json.loads,
        dead_letter=f"{stream}.dead",
    )
    handed: list[JetStreamMessage[Any]] = []
    subscription = Flux.from_publisher(source).subscribe(on_next=handed.append)
    await eventually(lambda: len(handed) == 9)
    await eventually(lambda: source.statistics().dead_letters == 1)
    info = await js.consumer_info(stream, durable)
    assert (acked_up_to(info), info.num_ack_pending) == (0, 10)
    acked = source.committed(1, [m.sequence for m in handed])
    assert acked is not None
    await acked
    subscription.dispose()
    assert acked_up_to(await acknowledged(js, stream, durable)) == 10


async def test_the_floor_stays_below_every_message_still_open(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    source: JetStreamSource[bytes] = from_jetstream(
        URL, "S", "d", ack="after_landing", exclusive=True
    )
    sent: list[list[str]] = []

    async def send(_: object, replies: list[str], payload: bytes, *, flush: bool = True) -> None:
        assert payload == b"+ACK"
        sent.append(replies)

    monkeypatch.setattr(JetStreamSource, "_send", send)
    source._acks_all = True  # (as bound to the ack-all consumer it creates)
    source._awaiting_commit.update({s: (f"r{s}", 0) for s in (1, 2, 3, 5, 6)})
    source._given_back.add(4)  # (given back at a cancel)
    assert source.committed(0, [2, 3]) is None  # 1 is awaiting its commit
    landed = source.committed(1, [1])
    assert landed is not None
    await landed
    assert sent == [["r3"]]
    assert source.committed(2, [5, 6]) is None  # 4 is open
    source._given_back.clear()
    source._awaiting_commit[4] = ("r4", 0)  # (delivered again)
    message = JetStreamMessage(b"", 4, "S.x", 2, None, b"", "r4", source)
    await message.ack()  # lands, instead of acking everything before it
    assert sent == [["r3"], ["r6"]]
    assert source.statistics().awaiting_commit == 0


URL = "nats://127.0.0.1:4222"


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: from_jetstream(URL, "my stream", "d"), "stream 'my stream' is not a JetStream"),
        (lambda: from_jetstream(URL, "s", "a.b"), "durable 'a.b' is not a JetStream name"),
        (lambda: from_jetstream(URL, "s", ""), "durable '' is not a JetStream name"),
        (
            lambda: from_jetstream(URL, "s", "d", subject="orders..new"),
            "subject 'orders..new' is not a NATS subject",
        ),
        (
            lambda: from_jetstream(URL, "s", "d", dead_letter="dead letters"),
            "dead_letter 'dead letters' is not a NATS subject",
        ),
    ],
)
def test_names_and_subjects_are_checked_when_the_source_is_made(
    make: Callable[[], object], message: str
) -> None:
    # The source's connections publish without the client's check of each subject: a name
    # with a space would otherwise make a request the server cannot parse.
    with pytest.raises(ValueError, match=message):
        make()


async def test_a_deleted_consumer_fails_the_stream_after_what_it_delivered(
    nats_server: LocalNatsServer, js: JetStreamContext, stream: str
) -> None:
    await publish(js, f"{stream}.x", 10)
    durable = unique("d")
    source: JetStreamSource[bytes] = from_jetstream(
        nats_server.url, stream, durable, ack="on_delivery", fetch_timeout=5.0
    )
    got: list[JetStreamMessage[bytes]] = []
    failed: list[BaseException] = []
    Flux.from_publisher(source).subscribe(on_next=got.append, on_error=failed.append)
    await eventually(lambda: len(got) == 10)
    # the next request waits for messages (up to 5 s) when the consumer goes
    await js.delete_consumer(stream, durable)
    await eventually(lambda: bool(failed))
    assert isinstance(failed[0], PullRequestError)
    assert "409 Consumer Deleted" in str(failed[0])
    with pytest.raises(nats.js.errors.NotFoundError):  # not made again behind our back
        await js.consumer_info(stream, durable)


@pytest.mark.timeout(60)
async def test_a_server_that_stops_answering_counts_as_a_lost_connection() -> None:
    with LocalNatsServer() as server:
        await fill(server, "STALL", 5)
        source: JetStreamSource[Any] = from_jetstream(
            server.url,
            "STALL",
            "d",
            parse=json.loads,
            ack="on_delivery",
            fetch_timeout=0.4,
            backoff=Backoff(first=0.1, max_delay=0.5, attempts=40),
        )
        got: list[int] = []
        subscription = Flux.from_publisher(source).subscribe(
            on_next=lambda m: got.append(m.value["i"])
        )
        await eventually(lambda: len(got) == 5)
        first = source._subscriptions[0]._client
        assert server.pid is not None
        os.kill(server.pid, signal.SIGSTOP)  # the connection stays open, nothing comes
        try:
            # no message, heartbeat or end of the request within the watchdog's time
            await eventually(lambda: source._subscriptions[0]._client is not first, 20)
        finally:
            os.kill(server.pid, signal.SIGCONT)
        await fill(server, "STALL", 5, start=5)
        await eventually(lambda: len(got) == 10, 20)
        assert got == list(range(10))
        subscription.dispose()
