"""Assembly traces: where each operator of a stream was called, and the notes its errors carry.

A traceback from a failing user function ends in the library (often in a generated emit loop,
see `_fusion`), far from the line that assembled the failing operator. So every `Flux`
operator call records, once, when it is made (never per item) an `Assembly`: the operator's
name, the user's frame that called it (code object and instruction offset: the line is worked
out only when an error needs it), the arguments it was given (their callables are the user's
functions), and the assembly of the flux it was called on. Errors are matched to it only
when they happen, once per error.

`Assembly.record` ``(operator, arguments, upstream)``
    The assembly of an operator called from the first frame outside the package.
`note_checkpoint` ``(error, description, checkpoint)``
    What ``checkpoint`` does to an error passing it: a note (PEP 678) naming the checkpoint
    and the operators the error came through, from the one whose function raised it down to
    the checkpoint, each with its file:line. The raising operator is found in the error's
    traceback (or its cause's): a frame running one of the recorded functions, or a line of a
    generated loop calling one (which finds builtins too).
`note_stage` ``(error, stage)``
    What a checked stage (``REACTIVE_AIO_DEBUG=1`` checks every stage) does to an error
    passing it: one note per error lists every stage it passed, in order.

A note is added once: the same error passing the same checkpoint again (a ``retry`` of a
source that fails with one exception object) adds nothing.
"""

from __future__ import annotations

import functools
import linecache
import re
import sys
from pathlib import Path
from types import CodeType, FrameType
from typing import final

import attrs

from ._fusion import GENERATED

__all__ = ("Assembly", "caller_outside", "note_checkpoint", "note_stage")

_INTERNAL = (str(Path(__file__).resolve().parents[1]) + "/", "<attrs generated")
"""Frames of this package and of attrs-generated methods are not where users assemble."""

_SHOWN = 20
"""The operators a checkpoint's note lists at most (the nearest to the error)."""

_CALL = re.compile(r"\b(fn\d+)\(")
"""A generated line's call of a stage's function."""

_PASSED = "reactive_aio debug: the error arose in the first of these stages and passed the others:"


def caller_outside(frame: FrameType | None) -> FrameType | None:
    """*frame*, or the first of its callers, that is not in this package."""
    while frame is not None and frame.f_code.co_filename.startswith(_INTERNAL):
        frame = frame.f_back
    return frame


@final
@attrs.define(eq=False, repr=False)
class Assembly:
    """One operator call that built a stream (see the module docstring)."""

    operator: str
    code: CodeType
    """The code that called the operator, and where in it (`offset`)."""
    offset: int
    arguments: tuple[object, ...]
    """What the operator was given (its callables are the user's functions)."""
    upstream: Assembly | None
    """The assembly of the flux the operator was called on (None for a source)."""

    @staticmethod
    def record(
        operator: str, arguments: tuple[object, ...], upstream: Assembly | None
    ) -> Assembly | None:
        """The assembly of *operator* as the first caller outside the package made it."""
        frame: FrameType | None = sys._getframe(1)
        while frame is not None and frame.f_code.co_filename.startswith(_INTERNAL):
            frame = frame.f_back  # (caller_outside, inline: this runs for every operator call)
        if frame is None:
            return None
        return Assembly(operator, frame.f_code, frame.f_lasti, arguments, upstream)

    @property
    def site(self) -> str:
        """``file:line`` of the call."""
        line = next(
            (n for start, end, n in self.code.co_lines() if start <= self.offset < end), None
        )
        return f"{self.code.co_filename}:{line if line is not None else '?'}"

    def __str__(self) -> str:
        return f"{self.operator} assembled at {self.site}"


def note_checkpoint(error: BaseException, description: str, checkpoint: Assembly | None) -> None:
    """Add the note of a checkpoint to an *error* passing it (see the module docstring)."""
    chain: list[Assembly] = []  # nearest first
    node = checkpoint.upstream if checkpoint is not None else None
    while node is not None:
        chain.append(node)
        node = node.upstream
    raised = _raised_in(error, chain)
    crossed = chain[: chain.index(raised) + 1] if raised is not None else chain
    lines = [f"  {node}" for node in reversed(crossed)]
    if raised is not None:
        lines[0] += "  <- its function raised the error"
    elif lines:
        lines.append("  (none of their functions is in the error's traceback: it arose upstream)")
    if len(lines) > _SHOWN:  # the first, and the nearest
        lines[1 : -_SHOWN + 1] = [f"  ... {len(lines) - _SHOWN} more"]
    site = f" at {checkpoint.site}" if checkpoint is not None else ""
    header = f"reactive_aio checkpoint {description!r}{site} saw this error"
    _add_note(error, "\n".join([f"{header}, after:", *lines]) if lines else header)


def note_stage(error: BaseException, stage: str) -> None:
    """Add *stage* to the note of the stages an *error* passed (see the module docstring)."""
    line = f"  {stage}"
    notes = getattr(error, "__notes__", None)
    if isinstance(notes, list):
        for index, note in enumerate(notes):
            if isinstance(note, str) and note.startswith(_PASSED):
                if line not in note.split("\n"):
                    notes[index] = f"{note}\n{line}"
                return
    _add_note(error, f"{_PASSED}\n{line}")


def _add_note(error: BaseException, note: str) -> None:
    """``error.add_note(note)`` unless it is there already (or ``__notes__`` is no list)."""
    notes = getattr(error, "__notes__", None)
    if notes is None or (isinstance(notes, list) and note not in notes):
        error.add_note(note)


def _raised_in(error: BaseException, chain: list[Assembly]) -> Assembly | None:
    """The operator of *chain* whose function raised *error*, if its traceback (or one of its
    causes') shows it; the most upstream one when a function is given to several."""
    by_code: dict[CodeType, Assembly] = {}
    by_id: dict[int, Assembly] = {}
    for node in chain:  # nearest first: an upstream operator overwrites a downstream one
        for function in filter(callable, node.arguments):
            by_id[id(function)] = node
            code = _code_of(function)
            if code is not None:
                by_code[code] = node
    seen: set[int] = set()
    cause: BaseException | None = error
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        traceback = cause.__traceback__
        while traceback is not None:
            frame = traceback.tb_frame
            found = by_code.get(frame.f_code)
            if found is None and frame.f_code.co_filename.startswith(GENERATED):
                text = linecache.getline(frame.f_code.co_filename, traceback.tb_lineno)
                called = _CALL.findall(text)
                found = by_id.get(id(frame.f_locals.get(called[0]))) if called else None
            if found is not None:
                return found
            traceback = traceback.tb_next
        cause = cause.__cause__ or cause.__context__
    return None


def _code_of(function: object) -> CodeType | None:
    """The code a call of *function* runs (through partials and bound methods), if Python's."""
    while isinstance(function, functools.partial):
        function = function.func
    function = getattr(function, "__func__", function)
    code = getattr(function, "__code__", None)
    if code is None and callable(function):  # an instance of a class with __call__
        code = getattr(function.__call__, "__code__", None)
    return code if isinstance(code, CodeType) else None
