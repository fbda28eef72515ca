"""Batching for ``to_spark`` and ``spark_map``: gathered items (Arrow batches, tables or row
mappings) and the one Arrow table in the target's schema that they become.

A schema is compared by column names and types; column order and nullability may differ.
A difference is named by its column, so an error says what drifted.
"""

from __future__ import annotations

__all__ = ("Batch", "rows_in", "schema_difference", "table_of", "to_table")

from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from .._commit import PositionSet
from ._dedupe import Positions, runs


def rows_in(item: Any) -> int:
    rows = getattr(item, "num_rows", None)
    return 1 if rows is None else int(rows)


@attrs.define(eq=False)
class Batch:
    """Items gathered for one write, with what names their records."""

    items: list[Any] = attrs.field(factory=list)
    rows: int = 0
    positions: list[Any] = attrs.field(factory=list)
    """Per item: an Arrow array (a positions column), a list, or ``(stream offset, rows)``."""

    def add(self, item: Any, rows: int, positions: Any) -> None:
        self.items.append(item)
        self.rows += rows
        self.positions.append(positions)

    def position_set(self) -> PositionSet:
        pairs = [p for p in self.positions if isinstance(p, tuple)]
        lists = [p for p in self.positions if isinstance(p, list)]
        arrays = [p for p in self.positions if not isinstance(p, tuple | list)]
        result = PositionSet.from_ranges((offset, offset + rows) for offset, rows in pairs)
        if lists:
            result |= PositionSet(p for positions in lists for p in positions)
        if arrays:
            import pyarrow as pa

            result |= runs(pa.concat_arrays([a.cast(arrays[0].type) for a in arrays]))
        return result


def schema_difference(got: Any, want: Any) -> str | None:
    """Name the first column where *got* differs from *want* (order and nullability aside)."""
    if got.equals(want):
        return None
    wanted = {f.name: f.type for f in want}
    for field in got:
        if field.name not in wanted:
            return f"column {field.name!r} is not in the target's schema"
        if not field.type.equals(wanted[field.name]):
            return (
                f"column {field.name!r} is {field.type} in this batch "
                f"but {wanted[field.name]} in the target"
            )
    present = set(got.names)
    for name in want.names:
        if name not in present:
            return f"column {name!r} of the target is missing from this batch"
    if len(got.names) != len(set(got.names)):
        return "a column appears twice in this batch"
    return None


def table_of(items: Sequence[Any], schema: Any, positions: Positions | None, what: str) -> Any:
    """One Arrow table in *schema* (None: the first item's) from Arrow items and row mappings.

    A positions column named by *positions* is left out. Column order and nullability may
    differ from *schema*; a name or type that differs is a `TypeError` naming the column.
    """
    import pyarrow as pa

    key = positions if isinstance(positions, str) else None
    tables: list[Any] = []
    rows: list[Any] = []
    for item in items:
        if isinstance(item, pa.RecordBatch | pa.Table):
            if key is not None and key in item.schema.names:
                item = item.drop_columns([key])
            tables.append(item if isinstance(item, pa.Table) else pa.Table.from_batches([item]))
        elif isinstance(item, Mapping):
            rows.append(item if key is None else {k: v for k, v in item.items() if k != key})
        else:
            raise TypeError(
                f"expected Arrow record batches, tables or row mappings, not {type(item).__name__}"
            )
    if rows:
        tables.append(_rows_to_table(rows, schema))
    if not tables:
        if schema is None:
            raise ValueError("an empty batch needs a known schema")
        return schema.empty_table()
    if schema is None:
        schema = tables[0].schema
    for t in tables:
        problem = schema_difference(t.schema, schema)
        if problem is not None:
            raise TypeError(f"{what} is fixed; {problem}")
    tables = [t if t.schema.names == schema.names else t.select(schema.names) for t in tables]
    table = tables[0] if len(tables) == 1 else pa.concat_tables(tables, promote_options="none")
    return table if table.schema.equals(schema) else table.cast(schema)


def to_table(items: Sequence[Any], schema: Any) -> Any:
    """Items as one Arrow table (the input of a `spark_map` job)."""
    return table_of(items, schema, None, "the schema of spark_map's input")


def _rows_to_table(rows: list[Any], schema: Any) -> Any:
    """Row mappings as a table; a key outside *schema* or a value that does not fit is named."""
    import pyarrow as pa

    if schema is not None:
        names = set(schema.names)
        for index, row in enumerate(rows):
            if not names.issuperset(row):
                extra = sorted(set(row) - names)[0]
                raise TypeError(f"row {index} of the batch has column {extra!r}, not in the target")
    try:
        return pa.Table.from_pylist(rows, schema=schema)
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, OverflowError) as exc:
        ordered = schema.names if schema is not None else list(rows[0])
        for index, row in enumerate(rows):
            for name in ordered:
                field_type = schema.field(name).type if schema is not None else None
                try:
                    pa.array([row.get(name)], type=field_type)
                except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, OverflowError):
                    raise TypeError(
                        f"row {index} of the batch does not fit column {name!r} "
                        f"({field_type}): {row.get(name)!r}"
                    ) from exc
        raise TypeError(f"cannot convert rows to Arrow: {exc}") from exc
