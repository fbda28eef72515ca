"""Threads that talk to a classic Spark driver, and the py4j connection each of them opens.

PySpark pins one py4j connection (a socket to the driver JVM) to every Python thread that calls
into Java. When such a thread ends, py4j leaves the connection to the garbage collector; if the
connection sits in a reference cycle, the socket can be finalized before the connection closes
it, and Python reports an "unclosed socket" ``ResourceWarning`` at some random later point
(under pytest's ``-W error`` that fails whatever test is running then). Every thread this
package starts therefore closes its own connection before it ends.
"""

from __future__ import annotations

__all__ = ("release_py4j_connection", "start_thread", "to_thread")

import asyncio
import functools
import sys
import threading
from collections.abc import Callable
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")


def release_py4j_connection() -> None:
    """Close the py4j connection pinned to the calling thread, if it has one."""
    context = sys.modules.get("pyspark.core.context") or sys.modules.get("pyspark.context")
    gateway = getattr(getattr(context, "SparkContext", None), "_gateway", None)
    client = getattr(gateway, "_gateway_client", None)
    get_connection = getattr(client, "get_thread_connection", None)
    if get_connection is None:  # no classic session, or py4j's pooled (unpinned) mode
        return
    connection = get_connection()
    if connection is None:
        return
    try:
        client.deque.remove(connection)  # type: ignore[union-attr]
    except ValueError:
        pass
    client.thread_connection.connection = None  # type: ignore[union-attr]
    connection.close()


def _run_and_release(fn: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R:
    try:
        return fn(*args, **kwargs)
    finally:
        release_py4j_connection()


def start_thread(fn: Callable[..., object], *args: object, name: str) -> threading.Thread:
    """Start a daemon thread running ``fn(*args)`` that closes its py4j connection at the end."""
    thread = threading.Thread(target=_run_and_release, args=(fn, *args), name=name, daemon=True)
    thread.start()
    return thread


async def to_thread(fn: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R:
    """`asyncio.to_thread` for a call into Spark: the pool thread drops its connection after."""
    return await asyncio.to_thread(_run_and_release, functools.partial(fn, *args, **kwargs))
