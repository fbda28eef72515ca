"""NATS JetStream connectors (the ``[nats]`` extra): `from_jetstream` and `to_jetstream`."""

from __future__ import annotations

from ._backoff import Backoff as Backoff, ConnectionLostError as ConnectionLostError
from ._jetstream_sink import (
    JetStreamSink as JetStreamSink,
    PublishError as PublishError,
    to_jetstream as to_jetstream,
)
from ._jetstream_source import (
    DEAD_LETTER_REASON as DEAD_LETTER_REASON,
    DEAD_LETTER_SEQUENCE as DEAD_LETTER_SEQUENCE,
    DEAD_LETTER_STREAM as DEAD_LETTER_STREAM,
    DEAD_LETTER_SUBJECT as DEAD_LETTER_SUBJECT,
    AckPolicy as AckPolicy,
    ConsumerAcksError as ConsumerAcksError,
    JetStreamMessage as JetStreamMessage,
    JetStreamSource as JetStreamSource,
    MessageParseError as MessageParseError,
    PullRequestError as PullRequestError,
    SourceStatistics as SourceStatistics,
    from_jetstream as from_jetstream,
)

__all__ = (
    "DEAD_LETTER_REASON",
    "DEAD_LETTER_SEQUENCE",
    "DEAD_LETTER_STREAM",
    "DEAD_LETTER_SUBJECT",
    "AckPolicy",
    "Backoff",
    "ConnectionLostError",
    "ConsumerAcksError",
    "JetStreamMessage",
    "JetStreamSink",
    "JetStreamSource",
    "MessageParseError",
    "PublishError",
    "PullRequestError",
    "SourceStatistics",
    "from_jetstream",
    "to_jetstream",
)
