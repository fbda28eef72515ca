"""What a folder holds, to tell whether a run touched it."""

from __future__ import annotations

from pathlib import Path


def snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    """Every file under *folder* with its size and modification time."""
    return {
        str(path.relative_to(folder)): (path.stat().st_size, path.stat().st_mtime_ns)
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }
