"""Every shell block of the README and the docs runs as written, after the README's set-up.

A shell block is a fenced ``console`` block with ``$ `` lines (the commands; the other lines
are their output, each of which must appear in what the commands print, unless the block
elides some with …) or a ``bash`` block (every line a command). An HTML comment on the line
before the fence marks a block: ``<!-- setup -->`` for the README's set-up, run once before the
others (it activates the venv), ``<!-- not-run: why -->`` for one that is not run here (it
installs, runs for minutes, or serves until Ctrl-C); each of those is listed as a skipped test
with its reason, so the list stays in sight.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import attrs
import pytest

ROOT = Path(__file__).resolve().parents[2]
# (a marker is one comment on the line before the fence: it never spans another's ``-->``)
_FENCE = re.compile(r"^(?:<!-- ((?:(?!-->).)*?) -->\n)?```(console|bash)\n(.*?)^```", re.M | re.S)


@attrs.frozen
class Block:
    where: str
    marker: str
    commands: tuple[str, ...]
    output: tuple[str, ...]


def blocks(path: Path, root: Path = ROOT) -> list[Block]:
    """The shell blocks of *path* (named relative to *root*), in order."""
    text = path.read_text(encoding="utf-8")
    found = []
    for match in _FENCE.finditer(text):
        marker, language, body = match.group(1) or "", match.group(2), match.group(3)
        lines = body.splitlines()
        if language == "bash":
            commands, output = lines, []
        else:
            commands = [line[2:] for line in lines if line.startswith("$ ")]
            output = [line for line in lines if not line.startswith("$ ") and line.strip()]
            if not commands:
                continue
        line = text.count("\n", 0, match.start(2)) + 1
        where = f"{path.relative_to(root)}:{line}"
        found.append(Block(where, marker, tuple(commands), tuple(output)))
    return found


def all_blocks() -> list[Block]:
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    return [block for page in pages for block in blocks(page)]


def _setup() -> Block:
    (setup,) = [block for block in all_blocks() if block.marker == "setup"]
    return setup


@pytest.fixture(scope="session")
def activated() -> dict[str, str]:
    """The environment after the README's set-up block, which runs once here. In a checkout
    without a ``.venv`` of its own (a worktree sharing another checkout's environment), the
    running interpreter's venv stands in for ``.venv``, and ``scripts/setup`` is left out: it
    would install this checkout's dependencies into the other checkout's environment."""
    venv, setup = ROOT / ".venv", _setup()
    commands = setup.commands
    if not (venv / "bin" / "python").exists():
        venv = Path(sys.prefix)
        commands = tuple(
            command.replace(".venv/", f"{venv}/")
            for command in commands
            if command.split()[0] != "scripts/setup"
        )
    # This checkout's library first, as for the tests (tests/conftest.py puts its app there).
    env = dict(
        os.environ, PYTHONPATH=os.pathsep.join((str(ROOT), os.environ.get("PYTHONPATH", "")))
    )
    done = _run(commands, env)
    assert done.returncode == 0, f"{setup.where}:\n{done.stdout}\n{done.stderr}"
    _check_output(setup, done.stdout)
    env["VIRTUAL_ENV"] = str(venv)
    env["PATH"] = os.pathsep.join((str(venv / "bin"), env["PATH"]))
    return env


def _run(commands: tuple[str, ...], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    script = "set -euo pipefail\n" + "\n".join(commands)
    return subprocess.run(
        ["bash", "-c", script],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=100,
        check=False,
    )


def _check_output(block: Block, printed: str) -> None:
    if any("…" in line for line in block.output):
        return
    for line in block.output:
        assert line in printed, f"{block.where}: {line!r} not in what the commands printed"


@pytest.mark.parametrize("block", all_blocks(), ids=lambda block: block.where)
def test_the_block_runs_as_written(block: Block, activated: dict[str, str]) -> None:
    if block.marker.startswith("not-run:"):
        reason = block.marker.removeprefix("not-run:").strip()
        assert reason, f"{block.where}: say why it is not run"
        pytest.skip(f"not run: {reason}")
    if block.marker == "setup":
        return  # run once, by the fixture
    assert not block.marker, f"{block.where}: unknown marker {block.marker!r}"
    done = _run(block.commands, activated)
    assert done.returncode == 0, f"{block.where}:\n{done.stdout}\n{done.stderr}"
    _check_output(block, done.stdout)


def test_the_parser_reads_commands_output_and_markers(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "<!-- not-run: slow -->\n```console\n$ sleep 600\n```\n"
        "```console\n$ echo 1\n1\n```\n```console\nnot a command\n```\n"
        "```bash\necho a\necho b\n```\n```python\nprint()\n```\n"
    )
    found = blocks(page, tmp_path)
    assert [(b.marker, b.commands, b.output) for b in found] == [
        ("not-run: slow", ("sleep 600",), ()),
        ("", ("echo 1",), ("1",)),
        ("", ("echo a", "echo b"), ()),
    ]
