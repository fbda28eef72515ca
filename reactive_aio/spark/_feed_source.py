"""The Spark side of `to_spark_stream`: a Python streaming data source reading a feed's socket.

Spark runs these classes in its own Python processes (the planning calls in the driver's
streaming runner, ``read`` in the executors' workers), so they know nothing of the event
loop: they ask the feed's server in the publishing process over a local TCP socket.

Offsets are source positions: ``{"row": n}`` means "every row before position n". They go
into the query's checkpoint (its offset log before a micro-batch, its commit log after), so
a query restarted from the checkpoint asks a new feed for exactly the rows it has not
committed. Requests are one JSON line carrying the feed's token. Answers are a kind byte,
a length and a body: JSON for the planning calls, an Arrow IPC stream for ``read``, a
message for an error. Nothing is unpickled: the reader trusts the server only with data.

This module imports nothing from reactive_aio: Spark ships it to its workers by value.
"""

from __future__ import annotations

__all__ = ("FEED_FORMAT", "FeedDataSource", "ask_feed", "encode_answer")

import json
import socket
import struct
from collections.abc import Iterator, Sequence
from typing import Any

from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition

FEED_FORMAT = "reactive_aio_feed"
_HEADER = "!cQ"  # a format, not a struct.Struct: module globals must pickle
_HEADER_SIZE = struct.calcsize(_HEADER)
_JSON, _ARROW, _ERROR = b"J", b"A", b"E"


def encode_answer(value: Any) -> bytes:
    """The server's framing of an answer: bytes are an Arrow IPC stream, anything else JSON;
    an exception is sent as its message."""
    if isinstance(value, BaseException):
        kind, body = _ERROR, f"{type(value).__name__}: {value}".encode()
    elif isinstance(value, bytes):
        kind, body = _ARROW, value
    else:
        kind, body = _JSON, json.dumps(value).encode()
    return struct.pack(_HEADER, kind, len(body)) + body


def ask_feed(address: str, token: str, request: dict[str, Any]) -> Any:
    """Send one request to a feed server; return its answer (a reader for Arrow answers)."""
    import pyarrow as pa

    host, port = address.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=600) as sock:
        sock.sendall(json.dumps({**request, "token": token}).encode() + b"\n")
        with sock.makefile("rb") as stream:
            header = stream.read(_HEADER_SIZE)
            if len(header) < _HEADER_SIZE:
                raise ConnectionError(f"the feed at {address} closed the connection")
            kind, size = struct.unpack(_HEADER, header)
            body = stream.read(size)
    if kind == _ERROR:
        raise RuntimeError(f"reactive_aio feed: {body.decode()}")
    if kind == _ARROW:
        return pa.ipc.open_stream(body)
    return json.loads(body)


class FeedDataSource(DataSource):
    """``spark.readStream.format("reactive_aio_feed")`` with address, token and partitions."""

    @classmethod
    def name(cls) -> str:
        return FEED_FORMAT

    def streamReader(self, schema: Any) -> DataSourceStreamReader:
        return _FeedStreamReader(
            self.options["address"], self.options["token"], int(self.options["partitions"])
        )


class _FeedStreamReader(DataSourceStreamReader):
    def __init__(self, address: str, token: str, partitions: int) -> None:
        self.address = address
        self.token = token
        self.split = partitions

    def initialOffset(self) -> dict[str, int]:
        return {"row": 0}

    def latestOffset(self, start: dict[str, int], limit: Any) -> dict[str, int]:
        # The feed caps each micro-batch at rows_per_batch whatever the limit: its buffer is
        # sized so that the next micro-batch fills while this one is read.
        answer = ask_feed(self.address, self.token, {"op": "latest", "start": int(start["row"])})
        return {"row": int(answer)}

    def partitions(self, start: dict[str, int], end: dict[str, int]) -> Sequence[InputPartition]:
        begin, stop = int(start["row"]), int(end["row"])
        if stop <= begin:
            return []
        step = -(-(stop - begin) // self.split)
        # Every partition carries where its micro-batch starts: after a restart the partitions
        # of a re-run micro-batch may reach the feed in any order, and the first one tells it
        # where the source must start.
        return [InputPartition((begin, a, min(a + step, stop))) for a in range(begin, stop, step)]

    def read(self, partition: InputPartition) -> Iterator[Any]:
        batch, begin, end = partition.value
        request = {"op": "read", "batch": batch, "start": begin, "end": end}
        yield from ask_feed(self.address, self.token, request)

    def commit(self, end: dict[str, int]) -> None:
        ask_feed(self.address, self.token, {"op": "commit", "end": int(end["row"])})
