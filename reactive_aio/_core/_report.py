"""Rule 2.13 reporting: errors that can no longer be signalled to a subscriber."""

from __future__ import annotations

import asyncio
import logging

__all__ = ("logger", "report_error", "report_late_error")

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


def report_late_error(error: BaseException, loop: asyncio.AbstractEventLoop | None = None) -> None:
    """Report *error* signalled after its stream ended (a second error, one after completion or
    cancellation): rule 1.7 leaves nobody to signal it to."""
    report_error(error, "error after the stream ended (rule 1.7)", loop)
