"""The bibliography: every arXiv entry links to its abstract page, and the built references
page shows each entry's link (so a reader can check a citation in the paper itself)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BIB = ROOT / "book" / "references.bib"
PAGE = ROOT / "book" / "_build" / "html" / "chapters" / "09_references.html"


def entries() -> dict[str, str]:
    """Each entry's key and body, split at the lines that start with '@'."""
    out = {}
    for chunk in re.split(r"^(?=@)", BIB.read_text(), flags=re.M):
        match = re.match(r"@\w+\{([^,]+),", chunk)
        if match:
            out[match.group(1)] = chunk
    return out


def field(body: str, name: str) -> str | None:
    match = re.search(rf"^\s*{name}\s*=\s*\{{(.*)\}},?\s*$", body, flags=re.M)
    return match.group(1) if match else None


def test_an_arxiv_entry_links_to_the_same_arxiv_number():
    checked = 0
    for key, body in entries().items():
        number = re.search(r"arXiv:(\d{4}\.\d{4,5})", body)
        if number:
            assert field(body, "url") == f"https://arxiv.org/abs/{number.group(1)}", key
            checked += 1
    assert checked >= 10


def test_urls_are_https_and_unique():
    urls = [field(body, "url") for body in entries().values()]
    urls = [u for u in urls if u]
    assert len(urls) >= 25
    assert all(u.startswith("https://") for u in urls)
    assert len(set(urls)) == len(urls)


@pytest.mark.slow
def test_the_references_page_links_every_url():
    if not PAGE.exists():
        pytest.skip("the book is not built (make book writes book/_build/html)")
    html = PAGE.read_text()
    for key, body in entries().items():
        url = field(body, "url")
        if url:
            assert f'href="{url}"' in html, key
