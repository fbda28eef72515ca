"""Code lines of the emission machinery, in two versions: the figure behind "the kit is smaller".

Usage::

    python -m benchmarks.code_lines BASE [HEAD] [--paths reactive_aio/_core ...]

*BASE* and *HEAD* are git revisions (*HEAD* defaults to the working tree). A code line is a
line that holds a token of Python code: blank lines, comments and docstrings (a string that is
a statement of its own) do not count. The default paths are the core kit and the operators;
the report gives each path's total and every file that changed, with its difference.
"""

from __future__ import annotations

import argparse
import io
import subprocess
import tokenize
from collections.abc import Sequence

from benchmarks._harness import ROOT

DEFAULT_PATHS = ("reactive_aio/_core", "reactive_aio/_operators")
_LAYOUT = frozenset(
    {
        tokenize.COMMENT,
        tokenize.NL,
        tokenize.NEWLINE,
        tokenize.INDENT,
        tokenize.DEDENT,
        tokenize.ENDMARKER,
    }
)


def code_lines(source: str) -> int:
    """How many lines of *source* hold code other than a docstring."""
    tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    lines: set[int] = set()
    statement_start = True
    for index, token in enumerate(tokens):
        if token.type in _LAYOUT:
            if token.type == tokenize.NEWLINE:
                statement_start = True
            continue
        following = tokens[index + 1].type if index + 1 < len(tokens) else tokenize.ENDMARKER
        lone_string = token.type == tokenize.STRING and statement_start
        if not (lone_string and following in (tokenize.NEWLINE, tokenize.ENDMARKER)):
            lines.update(range(token.start[0], token.end[0] + 1))
        statement_start = False
    return len(lines)


def _git(*args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout


def _files(revision: str | None, paths: Sequence[str]) -> dict[str, int]:
    """Code lines of every Python file under *paths* in *revision* (None: the working tree)."""
    if revision is None:
        names = _git("ls-files", "--", *paths).split()
        return {n: code_lines((ROOT / n).read_text()) for n in names if n.endswith(".py")}
    names = _git("ls-tree", "-r", "--name-only", revision, "--", *paths).split()
    return {n: code_lines(_git("show", f"{revision}:{n}")) for n in names if n.endswith(".py")}


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("base")
    parser.add_argument("head", nargs="?", default=None)
    parser.add_argument("--paths", nargs="+", default=list(DEFAULT_PATHS))
    args = parser.parse_args(argv)
    before = _files(args.base, args.paths)
    after = _files(args.head, args.paths)
    head = args.head or "working tree"
    print(f"code lines (no blank lines, comments or docstrings): {args.base} -> {head}\n")
    print("| path | before | after | change |\n| --- | ---: | ---: | ---: |")
    for path in args.paths:
        old = sum(n for name, n in before.items() if name.startswith(path))
        new = sum(n for name, n in after.items() if name.startswith(path))
        print(f"| {path} | {old:,} | {new:,} | {new - old:+,} |")
    old, new = sum(before.values()), sum(after.values())
    print(f"| **all** | {old:,} | {new:,} | {new - old:+,} |\n")
    for name in sorted(set(before) | set(after)):
        change = after.get(name, 0) - before.get(name, 0)
        if change:
            print(f"{change:+5d}  {name}")


if __name__ == "__main__":
    main()
