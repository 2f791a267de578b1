"""The book's pages as listed in ``book/_toc.yml`` (shared by the book and browser tests)."""

from __future__ import annotations

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
BOOK = ROOT / "book"


def toc_files() -> list[str]:
    """Every page of the table of contents, root first, as paths relative to ``book/`` without suffix."""
    toc = yaml.safe_load((BOOK / "_toc.yml").read_text())
    files = [toc["root"]]
    for part in toc["parts"]:
        files += [chapter["file"] for chapter in part["chapters"]]
    return files
