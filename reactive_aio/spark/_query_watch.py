"""A streaming query listener that tells a feed when the query reading it has terminated.

Spark reports a query's end to listeners on its listener bus (in the driver JVM, which calls
into Python over py4j's callback server), whatever ended it: an error, ``query.stop()``, or
the query's own end. The feed cannot see that end any other way: a dead query just stops
asking for rows, and a full buffer looks the same as a slow one.
"""

from __future__ import annotations

__all__ = ("QueryWatch",)

from collections.abc import Callable
from typing import Any

from pyspark.sql.streaming.listener import StreamingQueryListener


class QueryWatch(StreamingQueryListener):
    """Listens on *streams* (the query's session's ``spark.streams``) and calls *terminated*
    with the query's description and its exception (None if it was
    stopped or ended without one) when *query* has terminated; perhaps twice (a query that
    ends while `start` runs), so *terminated* must be idempotent."""

    def __init__(
        self, query: Any, streams: Any, terminated: Callable[[str, BaseException | None], None]
    ) -> None:
        self.query = query
        self.streams = streams
        self.terminated = terminated
        self.query_id = ""
        self.description = ""

    def start(self) -> None:
        """Blocking (py4j): listen, then catch a query that terminated before we listened."""
        query = self.query
        self.query_id = str(query.id)
        named = f"{query.name!r} " if query.name else ""
        self.description = f"{named}(id {self.query_id}, run {query.runId})"
        self.streams.addListener(self)
        if not query.isActive:
            self._fire()

    def stop(self) -> None:
        """Blocking (py4j): stop listening."""
        self.streams.removeListener(self)

    def _fire(self) -> None:
        # Spark records the cause of death before it posts the event: the exception is there.
        self.terminated(self.description, self.query.exception())

    def onQueryStarted(self, event: Any) -> None:
        pass

    def onQueryProgress(self, event: Any) -> None:
        pass

    def onQueryIdle(self, event: Any) -> None:
        pass

    def onQueryTerminated(self, event: Any) -> None:
        if str(event.id) == self.query_id:
            self._fire()
