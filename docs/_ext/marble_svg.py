"""Render recorded timelines as SVG marble diagrams.

A timeline is a list of ``(time, kind, value)`` events, with kind ``"next"``, ``"complete"``
or ``"error"``, as recorded from a real run. The diagram shows each input timeline above a box
holding the operator call (``map(lambda x: x * 10)``) and the output timeline below it, on a
shared time axis. Marbles are light fills with near-black text, every pair above the 7:1
contrast of WCAG's AAA level (`contrast` measures it).
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from html import escape

Event = tuple[float, str, object]

_WIDTH = 640
_LEFT = 20
_RIGHT = 30
_ROW = 56
_RADIUS = 13
_TEXT = "#111111"
# The light half of Tableau 20: distinct hues that all keep dark text readable.
_PALETTE = ("#a0cbe8", "#ffbe7d", "#8cd17d", "#ff9d9a", "#d4a6c8", "#86bcb6", "#f1ce63", "#fabfd2")
_MONO_EM = 0.6  # advance of a monospace glyph, in font sizes


def _luminance(colour: str) -> float:
    """WCAG relative luminance of ``#rrggbb``."""

    def channel(hex_pair: str) -> float:
        c = int(hex_pair, 16) / 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(colour[i : i + 2]) for i in (1, 3, 5))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(foreground: str, background: str) -> float:
    """WCAG contrast ratio of two ``#rrggbb`` colours (1 to 21)."""
    light, dark = sorted((_luminance(foreground), _luminance(background)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def _label(value: object) -> str:
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= 6 else text[:5] + "…"


def _colour(value: object) -> str:
    return _PALETTE[zlib.crc32(repr(value).encode()) % len(_PALETTE)]  # stable across builds


def _timeline(events: Sequence[Event], y: float, span: float, parts: list[str]) -> None:
    usable = _WIDTH - _LEFT - _RIGHT

    def x_of(t: float) -> float:
        return _LEFT + (t / span) * usable if span else _LEFT

    end = next((e for e in events if e[1] in ("complete", "error")), None)
    items = sum(1 for e in events if e[1] == "next")
    line_end = (
        max(x_of(end[0]), _LEFT + items * (2 * _RADIUS + 3) + _RADIUS + 4) if end else _WIDTH - 8
    )
    parts.append(
        f'<line x1="{_LEFT}" y1="{y}" x2="{line_end}" y2="{y}" stroke="#333" stroke-width="2"/>'
    )
    if end is None:
        parts.append(
            f'<polygon points="{_WIDTH - 8},{y - 6} {_WIDTH},{y} {_WIDTH - 8},{y + 6}" fill="#333"/>'
        )
    previous = -1e9
    for time, kind, value in events:
        # signals in the same instant (a synchronous source) are laid side by side, in order
        x = (
            max(x_of(time), previous + 2 * _RADIUS + 3)
            if kind == "next"
            else max(x_of(time), previous + _RADIUS + 4)
        )
        previous = x
        if kind == "next":
            parts.append(
                f'<circle cx="{x:.1f}" cy="{y}" r="{_RADIUS}" fill="{_colour(value)}" stroke="#222"/>'
                f'<text x="{x:.1f}" y="{y + 4}" font-size="11" text-anchor="middle" '
                f'font-family="monospace" fill="{_TEXT}">{escape(_label(value))}</text>'
            )
        elif kind == "complete":
            parts.append(
                f'<line x1="{x:.1f}" y1="{y - 14}" x2="{x:.1f}" y2="{y + 14}" stroke="#222" stroke-width="3"/>'
            )
        elif kind == "error":
            parts.append(
                f'<path d="M{x - 9:.1f},{y - 9} L{x + 9:.1f},{y + 9} M{x + 9:.1f},{y - 9} '
                f'L{x - 9:.1f},{y + 9}" stroke="#c00" stroke-width="3"/>'
            )


def render(
    inputs: Sequence[Sequence[Event]], label: str, output: Sequence[Event], input_names: str = ""
) -> str:
    """An SVG diagram: *inputs* on top (named at their left end by *input_names*, when given),
    a box with *label*, *output* below."""
    times = [e[0] for timeline in (*inputs, output) for e in timeline]
    span = max(times, default=0.0) * 1.08 or 1.0
    rows = len(inputs) + 2
    height = rows * _ROW + 10
    box = _WIDTH - _LEFT - _RIGHT
    # The call text must fit the box: long chains get a smaller font rather than a cut.
    font = min(14.0, (box - 16) / (_MONO_EM * max(len(label), 1)))
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{_WIDTH}" height="{height}" '
        f'viewBox="0 0 {_WIDTH} {height}" role="img" aria-label="{escape(label)} marble diagram">'
    ]
    y = _ROW / 2 + 4
    for index, timeline in enumerate(inputs):
        if index < len(input_names):
            parts.append(
                f'<text x="2" y="{y - 8}" font-size="13" font-family="monospace" '
                f'font-style="italic" fill="{_TEXT}">{escape(input_names[index])}</text>'
            )
        _timeline(timeline, y, span, parts)
        y += _ROW
    parts.append(
        f'<rect x="{_LEFT}" y="{y - 18}" width="{box}" height="36" rx="6" '
        f'fill="#f4f4f4" stroke="#888"/>'
        f'<text x="{_WIDTH / 2}" y="{y + 5}" font-size="{font:.1f}" text-anchor="middle" '
        f'font-family="monospace" fill="{_TEXT}">{escape(label)}</text>'
    )
    y += _ROW
    _timeline(output, y, span, parts)
    parts.append("</svg>")
    return "".join(parts)
