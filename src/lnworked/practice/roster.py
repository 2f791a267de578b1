"""Reading a class roster: a CSV file with a ``student`` column, one student per row.

A name becomes part of file names (:func:`student_slug`), so a roster is refused, with one
line naming the row, when a name is empty, too long, contains a path separator or a
control character, or appears twice (also when two names differ only in letter case or
map to the same file name, which would overwrite each other on some file systems).
"""

from __future__ import annotations

import csv
import hashlib
import re
import unicodedata
from pathlib import Path

from lnworked.practice.variants import MAX_STUDENT_ID

__all__ = ["read_roster", "check_roster", "student_slug"]

SEPARATORS = ("/", "\\")


def student_slug(student: str) -> str:
    """A file name for the student: the id if it is already safe, else a cleaned id plus a hash."""
    safe = re.sub(r"[^A-Za-z0-9_-]+", "_", student).strip("_")[:60] or "student"
    if safe == student:
        return safe
    return f"{safe}-{hashlib.sha256(student.encode()).hexdigest()[:8]}"


def _problem(name: str) -> str | None:
    if not name:
        return "is empty"
    if len(name) > MAX_STUDENT_ID:
        return f"is longer than {MAX_STUDENT_ID} characters"
    for sep in SEPARATORS:
        if sep in name:
            return f"contains a path separator ({sep!r})"
    for ch in name:
        if unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Co", "Cn") or ch in "\u2028\u2029":
            return f"contains a control character (U+{ord(ch):04X})"
    return None


def check_roster(names, source: str = "roster") -> list[str]:
    """``names`` (``[(row, name), ...]``) checked as described above; the names, stripped."""
    seen: dict[str, int] = {}
    out = []
    for row, raw in names:
        name = str(raw).strip()
        problem = _problem(name)
        if problem:
            raise ValueError(f"--roster: {source} row {row}: the student name {name[:40]!r} {problem}")
        slug = student_slug(name).lower()
        for key in (f"name:{name.casefold()}", f"file:{slug}"):
            if key in seen:
                raise ValueError(f"--roster: {source} row {row}: the student {name[:40]!r} duplicates row "
                                 f"{seen[key]} (names must differ, also in more than letter case)")
            seen[key] = row
        out.append(name)
    if not out:
        raise ValueError(f"--roster: {source} lists no students")
    return out


def read_roster(path) -> list[str]:
    """The ``student`` column of a CSV roster (header case-insensitive; fully blank lines skipped)."""
    path = Path(path)
    try:
        with path.open(encoding="utf-8-sig", newline="") as handle:
            reader = csv.DictReader(handle)
            columns = {(c or "").strip().lower(): c for c in reader.fieldnames or []}
            if "student" not in columns:
                raise ValueError(f"--roster: {path} has no 'student' column")
            names = [(reader.line_num, row.get(columns["student"]) or "") for row in reader
                     if any((v or "").strip() for v in row.values() if isinstance(v, str))]
    except FileNotFoundError:
        raise ValueError(f"--roster: no such file: {path}") from None
    except (OSError, UnicodeDecodeError, csv.Error) as err:
        raise ValueError(f"--roster: cannot read {path}: {err}") from None
    return check_roster(names, str(path))
