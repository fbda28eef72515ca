"""Results written aside and swapped into the output folder in one step each, at the very end.

A run writes ``rejected/``, ``carrier_hourly/`` and ``delays.png`` into a hidden staging folder
inside ``--out`` (same filesystem, so a rename moves them) and, only once everything succeeded,
replaces each previous result with its new one by a rename. A failed or interrupted run
therefore leaves the previous results as they were, and a reader never sees half a result:
a file is replaced by ``rename(2)``, a directory on Linux by ``renameat2(RENAME_EXCHANGE)``,
which swaps two directories atomically. Elsewhere (or on a filesystem without it) the old
directory is first renamed aside, which leaves a moment in which the name is absent.

Who may use the folder at once is settled by ``OUT/.lock``, an advisory lock (``flock``) that
each process holds for its life: shared by workers (``--worker``), which land into ``events/``
side by side; exclusive for a run without ``--worker`` and for ``reactive-aio aggregate``,
which compute the results from ``events/`` and need it to stand still. The system drops the
lock when the process ends, a ``kill -9`` included, so a crashed run never blocks the next.
Across machines it holds on a filesystem that honours ``flock`` (NFSv4, CephFS, GPFS, …).
"""

from __future__ import annotations

__all__ = (
    "FileLock",
    "OutputBusy",
    "Staging",
    "check_output_free",
    "hold_output",
    "holds_events",
    "source_lock",
    "write_json",
)

import ctypes
import errno
import fcntl
import json
import os
import shutil
import sys
import uuid
from pathlib import Path
from types import TracebackType
from typing import final

import attrs

_STAGING_PREFIX = ".staging-"
_LOCK = ".lock"
_AT_FDCWD = -100
_RENAME_EXCHANGE = 2


@attrs.define(eq=False)
class Staging:
    """A staging folder under *out*; `path` names a result in it, `publish` swaps them in."""

    out: Path
    root: Path

    @classmethod
    def create(cls, out: Path) -> Staging:
        """A fresh staging folder; those of earlier runs that were killed are removed first."""
        for stale in out.glob(f"{_STAGING_PREFIX}*"):
            shutil.rmtree(stale, ignore_errors=True)
        root = out / f"{_STAGING_PREFIX}{uuid.uuid4().hex[:12]}"
        root.mkdir()
        return cls(out, root)

    def path(self, name: str) -> Path:
        return self.root / name

    def publish(self) -> list[str]:
        """Replace each result in *out* with its staged version; return the names, in order."""
        names = sorted(entry.name for entry in self.root.iterdir())
        for name in names:
            _replace(self.root / name, self.out / name)
        self.discard()
        return names

    def discard(self) -> None:
        """Remove the staging folder and whatever is left in it (the previous results, after
        `publish`; the unpublished new ones after a failure)."""
        shutil.rmtree(self.root, ignore_errors=True)


def write_json(path: Path, data: object) -> None:
    """Write *data* as JSON to *path* atomically: into a file beside it, renamed over it, so
    a reader finds the old file or the new one, never half of one (and a crash leaves at
    most a stray ``.part``)."""
    part = path.with_name(f"{path.name}.{os.getpid()}.part")
    part.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    part.replace(path)


def _replace(new: Path, old: Path) -> None:
    """Put *new* at *old*'s name in one step; *old*'s previous content ends up at *new*."""
    if not new.is_dir() or not old.is_dir():
        if old.is_dir():  # a directory where a file goes (or the reverse): not ours to keep
            shutil.rmtree(old)
        os.replace(new, old)
        return
    if _exchange(new, old):
        return
    aside = new.with_name(new.name + ".previous")
    os.rename(old, aside)
    os.rename(new, old)
    os.rename(aside, new)


def _exchange(a: Path, b: Path) -> bool:
    """Swap two directories atomically where the system can; False where it cannot."""
    if not sys.platform.startswith("linux"):
        return False
    renameat2 = getattr(ctypes.CDLL(None, use_errno=True), "renameat2", None)
    if renameat2 is None:
        return False
    result = renameat2(
        _AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), ctypes.c_uint(_RENAME_EXCHANGE)
    )
    if result == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP):  # not on this kernel/filesystem
        return False
    raise OSError(code, os.strerror(code), str(b))


@final
@attrs.define(eq=False)
class FileLock:
    """An advisory lock (``flock``) on a file, held until `release` or the process's end."""

    _fd: int = attrs.field(alias="fd")

    @classmethod
    def acquire(cls, path: Path, *, shared: bool = False) -> FileLock:
        """Lock *path* (created if absent), waiting for whoever holds it."""
        return cls._take(path, fcntl.LOCK_SH if shared else fcntl.LOCK_EX)

    @classmethod
    def try_acquire(cls, path: Path, *, shared: bool = False) -> FileLock | None:
        """Lock *path* (created if absent) at once, or return None: someone holds it."""
        try:
            return cls._take(path, (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB)
        except BlockingIOError:
            return None

    @classmethod
    def _take(cls, path: Path, operation: int) -> FileLock:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, operation)
        except BaseException:
            os.close(fd)
            raise
        return cls(fd)

    def release(self) -> None:
        os.close(self._fd)  # closing the only descriptor drops the lock

    def __enter__(self) -> FileLock:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.release()


class OutputBusy(RuntimeError):
    """Another process uses the output folder in a way this one cannot share (see the module
    docs); *workers* tells whether those are workers, or a run that has it to itself."""

    def __init__(self, out: Path, *, workers: bool) -> None:
        self.out = out
        self.workers = workers
        holder = (
            "workers (--worker) are landing into it"
            if workers
            else "another run has it to itself (a run without --worker, or aggregate)"
        )
        super().__init__(f"{out} is in use: {holder}")


def hold_output(out: Path, *, worker: bool) -> FileLock:
    """Take *out*'s lock for this process's run: shared for a *worker*, else exclusive.

    Raises:
        OutputBusy: someone holds it in a way that excludes this run.
    """
    lock = FileLock.try_acquire(out / _LOCK, shared=worker)
    if lock is not None:
        return lock
    workers = False
    if not worker:  # a shared lock we can take too means only workers hold it
        probe = FileLock.try_acquire(out / _LOCK, shared=True)
        if probe is not None:
            probe.release()
            workers = True
    raise OutputBusy(out, workers=workers)


def check_output_free(out: Path, *, worker: bool) -> None:
    """`hold_output`'s refusal, without creating the lock file (nobody held a missing one)."""
    if (out / _LOCK).exists():
        hold_output(out, worker=worker).release()


def source_lock(out: Path) -> FileLock:
    """Wait for, then hold, the lock under which workers read or create ``source.json`` and
    the consumer it names, so that workers started at once agree on one consumer."""
    return FileLock.acquire(out / ".source.lock")


def holds_events(events: Path) -> bool:
    """Whether an earlier run landed anything (or began to) in *events*."""
    return events.is_dir() and any(events.iterdir())
