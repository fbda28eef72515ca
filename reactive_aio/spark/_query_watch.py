"""A streaming query listener that tells a feed when the query reading it has terminated.

Spark reports a query's end to listeners on its listener bus (in the driver JVM, which calls
into Python over py4j's callback server), whatever ended it: an error, ``query.stop()``, or
the query's own end. The feed cannot see that end any other way: a dead query just stops
asking for rows, and a full buffer looks the same as a slow one.

The watch implements Spark's Java listener interface itself rather than subclassing PySpark's
``StreamingQueryListener``: that one turns every event into Python objects before it is
dispatched, and a progress event (one per micro-batch of every query on the session) costs
dozens of py4j calls that way; here it costs the one up-call.
"""

from __future__ import annotations

__all__ = ("QueryWatch",)

from collections.abc import Callable
from typing import Any


class QueryWatch:
    """Listens on *streams* (the query's session's ``spark.streams``) and calls *terminated*
    with the query's description and its exception (None if it stopped or ended without
    one) once *query* has terminated; perhaps twice (a query that ends while `start` runs),
    so *terminated* must be idempotent."""

    def __init__(
        self, query: Any, streams: Any, terminated: Callable[[str, BaseException | None], None]
    ) -> None:
        self.query = query
        self.streams = streams
        self.terminated = terminated
        self.query_id = ""
        self.description = ""
        self.registered: Any = None

    def start(self) -> None:
        """Blocking (py4j): listen, then catch a query that terminated before we listened."""
        from pyspark import SparkContext, java_gateway

        query = self.query
        self.query_id = str(query.id)
        named = f"{query.name!r} " if query.name else ""
        self.description = f"{named}(id {self.query_id}, run {query.runId})"
        gateway = SparkContext._gateway
        assert gateway is not None, "no classic Spark session"
        start_callback_server: Any = java_gateway.ensure_callback_server_started  # untyped
        start_callback_server(gateway)
        streaming = gateway.jvm.org.apache.spark.sql.streaming
        self.registered = streaming.PythonStreamingQueryListenerWrapper(self)
        self.streams._jsqm.addListener(self.registered)
        if not query.isActive:
            self._fire()

    def stop(self) -> None:
        """Blocking (py4j): stop listening."""
        self.streams._jsqm.removeListener(self.registered)

    def _fire(self) -> None:
        # Spark records the cause of death before it posts the event: the exception is there.
        self.terminated(self.description, self.query.exception())

    # -- Spark's PythonStreamingQueryListener, called from the JVM ------------------------

    def onQueryStarted(self, event: Any) -> None:
        pass

    def onQueryProgress(self, event: Any) -> None:
        pass

    def onQueryIdle(self, event: Any) -> None:
        pass

    def onQueryTerminated(self, event: Any) -> None:
        if event.id().toString() == self.query_id:
            self._fire()

    class Java:
        implements = ("org.apache.spark.sql.streaming.PythonStreamingQueryListener",)
