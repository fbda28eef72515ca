"""Brokers and databases as Reactive Streams sources and sinks, demand mapped onto their own
flow control.

`reactive_aio.connectors.nats` (the ``[nats]`` extra): JetStream pull consumers and acked
publishes. `reactive_aio.connectors.postgres` (the ``[postgres]`` extra): server-side cursors,
COPY in a transaction per batch, LISTEN/NOTIFY. `reactive_aio.connectors.servers`: local
``nats-server`` and PostgreSQL processes from the installed wheels, for tests and benchmarks.
Shared here: `Backoff` (reconnects and retries) and `ConnectionLostError`.
"""

from __future__ import annotations

from ._backoff import Backoff as Backoff, ConnectionLostError as ConnectionLostError

__all__ = ("Backoff", "ConnectionLostError")
