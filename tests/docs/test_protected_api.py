"""The writing-an-operator guide's table of each emission base's protected API names only
attributes the base really has."""

from __future__ import annotations

import re
from pathlib import Path

from reactive_aio import lowlevel

GUIDE = Path(__file__).parents[2] / "docs" / "guides" / "writing-an-operator.md"


def _table() -> dict[str, list[str]]:
    text = GUIDE.read_text(encoding="utf-8")
    section = text.split("## The protected API of the four bases", 1)[1].split("\n\n")[2]
    rows: dict[str, list[str]] = {}
    for line in section.splitlines()[2:]:
        base, implements, calls = (cell.strip() for cell in line.strip("|").split("|"))
        names = re.findall(r"`([A-Za-z_]+)[^`]*`", f"{implements} {calls}")
        rows[base.strip("`")] = names
    return rows


def test_the_table_covers_the_four_bases() -> None:
    assert set(_table()) == {"DrainSubscription", "BufferDrain", "QueueDrain", "ArbiterSubscriber"}


def test_every_name_in_the_table_exists_on_its_base() -> None:
    table = _table()
    for base_name, names in table.items():
        base = getattr(lowlevel, base_name)
        fields = {field.name for field in getattr(base, "__attrs_attrs__", ())}
        for name in names:
            if name in table:  # "and all of `DrainSubscription`'s"
                assert issubclass(base, getattr(lowlevel, name)), f"{base_name} < {name}"
            elif name != "super":  # ``super()._release()``
                assert hasattr(base, name) or name in fields, f"{base_name}.{name}"
