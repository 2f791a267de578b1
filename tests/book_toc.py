"""The book's pages as listed in ``book/_toc.yml`` (shared by the book and browser tests)."""

from __future__ import annotations

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
BOOK = ROOT / "book"


def toc_files() -> list[str]:
    """Every page of the table of contents, root first, as paths relative to ``book/`` without suffix;
    a chapter's section pages follow the chapter."""
    toc = yaml.safe_load((BOOK / "_toc.yml").read_text())
    files = [toc["root"]]
    for part in toc["parts"]:
        for chapter in part["chapters"]:
            files += [chapter["file"]] + [section["file"] for section in chapter.get("sections", [])]
    return files
