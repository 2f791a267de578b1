"""One CSV format for the stored stress-test tables (``lnworked/data/*.csv``): a list of dicts
written as a table with a header row and read back with its types restored.

Format (:func:`write_rows`): the header is ``fields``, in order; one line per row. A cell of a
column in ``floats`` is ``f"{value:.{digits}g}"`` (``digits = 9`` significant digits by default:
float32's 9 digits survive the round trip exactly, a float64 to 1e-9 relative); a cell of a
column in ``bools`` is ``1`` or ``0``; ``None`` is an empty cell; anything else is ``str(value)``.
Quoting is :mod:`csv`'s (a cell with a comma is quoted), lines end in ``\\r\\n``, the encoding is UTF-8.

:func:`read_rows` is its inverse: ``int(cell)`` for ``ints``, ``float(cell)`` for ``floats``,
``1``/``True`` and ``0``/``False`` for ``bools``, the string as stored for the other ``fields``.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Iterable, Mapping, Sequence

__all__ = ["write_rows", "read_rows"]

_TRUE, _FALSE = ("1", "True"), ("0", "False")


def _check_columns(fields: Sequence[str], **groups) -> None:
    for name, columns in groups.items():
        unknown = [c for c in columns if c not in fields]
        if unknown:
            raise ValueError(f"{name}: {unknown} are not in fields {list(fields)}")


def _cell(value, column: str, floats, bools, digits: int) -> str:
    if value is None:
        return ""
    if column in bools:
        return "1" if value else "0"
    if column in floats:
        return f"{value:.{digits}g}"
    return str(value)


def write_rows(rows: Iterable[Mapping], path, fields: Sequence[str], *, floats: Sequence[str] = (),
               bools: Sequence[str] = (), digits: int = 9) -> None:
    """Write ``rows`` (dicts with exactly the keys ``fields``) to ``path`` as CSV: header = ``fields``;
    ``floats`` columns as ``f"{v:.{digits}g}"``, ``bools`` columns as ``1``/``0``, ``None`` as an
    empty cell, every other value as ``str(v)``.

    Raises ``ValueError`` naming the column when a row lacks one of ``fields`` or has a key not in
    them, and naming ``floats``/``bools`` when they list a column not in ``fields``.
    """
    fields = tuple(fields)
    _check_columns(fields, floats=floats, bools=bools)
    floats, bools = frozenset(floats), frozenset(bools)
    with open(Path(path), "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(fields)
        for i, row in enumerate(rows):
            missing = [k for k in fields if k not in row]
            extra = [k for k in row if k not in fields]
            if missing or extra:
                raise ValueError(f"rows[{i}]: " + "; ".join(
                    ([f"lacks column(s) {missing}"] if missing else []) +
                    ([f"has column(s) {extra} not in fields"] if extra else [])))
            writer.writerow([_cell(row[k], k, floats, bools, digits) for k in fields])


def _parse_bool(cell: str) -> bool:
    if cell in _TRUE:
        return True
    if cell in _FALSE:
        return False
    raise ValueError(f"{cell!r} is not a bool (1/0 or True/False)")


def read_rows(path, fields: Sequence[str], *, ints: Sequence[str] = (), floats: Sequence[str] = (),
              bools: Sequence[str] = (), defaults: Mapping | None = None) -> list[dict]:
    """The rows of the CSV at ``path`` (as :func:`write_rows` writes it) as dicts with the keys
    ``fields``: ``int(cell)`` for ``ints``, ``float(cell)`` for ``floats``, ``True`` for ``1``/``True``
    and ``False`` for ``0``/``False`` in ``bools``, the stored string for the other fields. A column
    in ``defaults`` may be absent from the file or have empty cells: those read as
    ``defaults[column]``. Columns of the file not in ``fields`` are ignored.

    Raises ``ValueError`` naming the column when the file lacks a required column or a cell does
    not parse (with its line number).
    """
    fields, defaults = tuple(fields), dict(defaults or {})
    _check_columns(fields, ints=ints, floats=floats, bools=bools, defaults=defaults)
    parse = {**{k: int for k in ints}, **{k: float for k in floats}, **{k: _parse_bool for k in bools}}
    with open(Path(path), newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        header = reader.fieldnames or []
        missing = [k for k in fields if k not in header and k not in defaults]
        if missing:
            raise ValueError(f"path: {str(path)!r} lacks column(s) {missing}")
        out = []
        for r in reader:
            row = {}
            for k in fields:
                cell = r.get(k)
                if k in defaults and not cell:
                    row[k] = defaults[k]
                    continue
                if cell is None:
                    raise ValueError(f"path: {str(path)!r} line {reader.line_num} has no cell for column {k!r}")
                try:
                    row[k] = parse.get(k, str)(cell)
                except (TypeError, ValueError) as err:
                    raise ValueError(f"path: {str(path)!r} line {reader.line_num}, column {k!r}: {err}") from None
            out.append(row)
    return out
