"""Local ``nats-server`` and PostgreSQL processes from the installed wheels (tests, benchmarks)."""

from __future__ import annotations

from ._servers import LocalNatsServer as LocalNatsServer, LocalPostgres as LocalPostgres

__all__ = ("LocalNatsServer", "LocalPostgres")
