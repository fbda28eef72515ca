"""User code that raises `asyncio.CancelledError` although nobody cancelled the stream.

A user coroutine that awaits a future or task somebody else cancelled raises
``CancelledError`` in the stream's own task. Taken as the task's own cancellation, it ends
the task without a signal and the stream hangs with nothing logged. So every task a stream
runs user code in tells the two apart: when the task is being cancelled (the stream was
cancelled), the error goes on up; otherwise the stream fails with `cancelled_elsewhere`,
like any other error of the user's code.
"""

from __future__ import annotations

import asyncio

__all__ = ("cancelled_elsewhere", "cancelling_this_task")


def cancelling_this_task() -> bool:
    """True when the running task itself is being cancelled (``Task.cancel`` was called)."""
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


def cancelled_elsewhere(what: str, cause: BaseException | None = None) -> RuntimeError:
    """The error a stream fails with when *what* raised ``CancelledError`` on its own."""
    error = RuntimeError(
        f"{what} raised CancelledError although the stream was not cancelled (something it"
        " waited for was cancelled elsewhere)"
    )
    error.__cause__ = cause
    return error
