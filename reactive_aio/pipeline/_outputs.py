"""Results written aside and swapped into the output folder in one step each, at the very end.

A run writes ``rejected/``, ``carrier_hourly/`` and ``delays.png`` into a hidden staging folder
inside ``--out`` (same filesystem, so a rename moves them) and, only once everything succeeded,
replaces each previous result with its new one by a rename. A failed or interrupted run
therefore leaves the previous results as they were, and a reader never sees half a result:
a file is replaced by ``rename(2)``, a directory on Linux by ``renameat2(RENAME_EXCHANGE)``,
which swaps two directories atomically. Elsewhere (or on a filesystem without it) the old
directory is first renamed aside, which leaves a moment in which the name is absent.
"""

from __future__ import annotations

__all__ = ("Staging",)

import ctypes
import errno
import os
import shutil
import sys
import uuid
from pathlib import Path

import attrs

_STAGING_PREFIX = ".staging-"
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
