"""Rule 2.13 reporting: errors that can no longer be signalled to a subscriber."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

__all__ = ("logger", "raising_subscriber", "report_error", "report_late_error")

_ROOT = Path(__file__).resolve().parents[1]
_STAGES = tuple(str(_ROOT / part) for part in ("_core", "_operators", "_sinks", "_sources"))
"""Where the library's own stages live: their frames do not name the subscriber that raised."""

logger = logging.getLogger("reactive_aio")
"""The library's logger; every undeliverable error is logged here."""


def report_error(
    error: BaseException, what: str, loop: asyncio.AbstractEventLoop | None = None
) -> None:
    """Report *error* that has nowhere else to go: a subscriber that raised (rule 2.13), a
    callback that failed after termination, an error signalled twice.

    It goes to the ``reactive_aio`` logger and to the event loop's exception handler, so it is
    never swallowed silently.
    """
    logger.error("%s: %r", what, error, exc_info=error)
    if loop is None:
        loop = asyncio._get_running_loop()
    if loop is not None and not loop.is_closed():
        loop.call_exception_handler({"message": f"reactive_aio: {what}", "exception": error})


def raising_subscriber(error: BaseException, signal: str, subscriber: object) -> str:
    """The name of the class whose *signal* method raised *error* (rule 2.13 reports).

    A drain hands its items to the first stage behind it, often an operator of this library;
    the subscriber that raised is usually a user's class further down. The innermost
    traceback frame of a method called *signal* outside the library's stages names it;
    without one, *subscriber*'s type does.
    """
    name = type(subscriber).__name__
    frame = error.__traceback__
    while frame is not None:
        code = frame.tb_frame.f_code
        if code.co_name == signal and not code.co_filename.startswith(_STAGES):
            owner = code.co_qualname.rpartition(".")[0]  # "Mine.on_next" -> "Mine"
            if owner:
                name = owner.rpartition(".")[2]
        frame = frame.tb_next
    return name


def report_late_error(error: BaseException, loop: asyncio.AbstractEventLoop | None = None) -> None:
    """Report *error* signalled after its stream ended (a second error, one after completion or
    cancellation): rule 1.7 leaves nobody to signal it to."""
    report_error(error, "error after the stream ended (rule 1.7)", loop)
