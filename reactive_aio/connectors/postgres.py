"""PostgreSQL connectors (the ``[postgres]`` extra): `from_query`, `to_postgres`, `listen`."""

from __future__ import annotations

from ._backoff import Backoff as Backoff, ConnectionLostError as ConnectionLostError
from ._pg_copy import (
    COMMITS_TABLE as COMMITS_TABLE,
    POSITIONS_TABLE as POSITIONS_TABLE,
    PostgresSink as PostgresSink,
    PostgresWriteError as PostgresWriteError,
    committed_positions as committed_positions,
    to_postgres as to_postgres,
)
from ._pg_listen import DEAD_LETTER_COLUMNS as DEAD_LETTER_COLUMNS, listen as listen
from ._pg_query import QueryPublisher as QueryPublisher, from_query as from_query

__all__ = (
    "COMMITS_TABLE",
    "DEAD_LETTER_COLUMNS",
    "POSITIONS_TABLE",
    "Backoff",
    "ConnectionLostError",
    "PostgresSink",
    "PostgresWriteError",
    "QueryPublisher",
    "committed_positions",
    "from_query",
    "listen",
    "to_postgres",
)
