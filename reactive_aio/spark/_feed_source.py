"""The Spark side of `to_spark_stream`: a Python streaming data source reading a feed's socket.

Spark runs these classes in its own Python processes (the planning calls on the driver's
streaming runner, ``read`` in the executors' workers), so they know nothing of the event loop:
they ask the feed's server in the publishing process over a local TCP socket. Offsets are row
positions in the feed. Requests are one JSON line carrying the feed's token; answers are one
length-prefixed pickle (the reader trusts the server it was configured with, never the other
way round).
"""

from __future__ import annotations

__all__ = ("FEED_FORMAT", "FeedDataSource", "ask_feed")

import json
import pickle
import socket
import struct
from collections.abc import Iterator, Sequence
from typing import Any

from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition

FEED_FORMAT = "reactive_aio_feed"
_LENGTH = struct.Struct("!Q")


def ask_feed(address: str, token: str, request: dict[str, Any]) -> Any:
    """Send one request to a feed server and return its answer; raise what it reports."""
    host, port = address.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=300) as sock:
        sock.sendall(json.dumps({**request, "token": token}).encode() + b"\n")
        with sock.makefile("rb") as stream:
            header = stream.read(_LENGTH.size)
            if len(header) < _LENGTH.size:
                raise ConnectionError(f"the feed at {address} closed the connection")
            (size,) = _LENGTH.unpack(header)
            status, value = pickle.loads(stream.read(size))
    if status != "ok":
        raise RuntimeError(f"reactive_aio feed: {value}")
    return value


def encode_answer(status: str, value: Any) -> bytes:
    """The server's framing of an answer (see `ask_feed`)."""
    body = pickle.dumps((status, value), protocol=pickle.HIGHEST_PROTOCOL)
    return _LENGTH.pack(len(body)) + body


class FeedDataSource(DataSource):
    """``spark.readStream.format("reactive_aio_feed").schema(…)`` with address, token, maxRows."""

    @classmethod
    def name(cls) -> str:
        return FEED_FORMAT

    def streamReader(self, schema: Any) -> DataSourceStreamReader:
        return _FeedStreamReader(
            self.options["address"], self.options["token"], int(self.options["maxRows"])
        )


class _FeedStreamReader(DataSourceStreamReader):
    def __init__(self, address: str, token: str, max_rows: int) -> None:
        self.address = address
        self.token = token
        self.max_rows = max_rows

    def initialOffset(self) -> dict[str, int]:
        return {"row": 0}

    def latestOffset(
        self, start: dict[str, int] | None = None, limit: Any = None
    ) -> dict[str, int]:
        # At most max_rows per micro-batch whatever the limit: the feed's buffer is sized so
        # that the next micro-batch can fill while this one is read (see to_spark_stream).
        begin = None if start is None else int(start["row"])
        end: int = ask_feed(self.address, self.token, {"op": "latest", "start": begin})
        return {"row": end}

    def partitions(self, start: dict[str, int], end: dict[str, int]) -> Sequence[InputPartition]:
        if end["row"] <= start["row"]:
            return []
        return [InputPartition((int(start["row"]), int(end["row"])))]

    def read(self, partition: InputPartition) -> Iterator[tuple[Any, ...]]:
        begin, end = partition.value
        rows: list[tuple[Any, ...]] = ask_feed(
            self.address, self.token, {"op": "read", "start": begin, "end": end}
        )
        return iter(rows)

    def commit(self, end: dict[str, int]) -> None:
        ask_feed(self.address, self.token, {"op": "commit", "end": int(end["row"])})
