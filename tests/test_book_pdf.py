"""The whole book as one PDF (tools/book_pdf.py, ``make pdf``), read back with pypdf.

Both editions are printed once per session from the built HTML (``book/_build/html``, or
``$LNWORKED_BOOK_HTML``) into a temporary folder. Checked against the HTML (parsed here,
independently of the tool): every page of ``_toc.yml`` is printed in order, each chapter's
title is in the text and is a top-level bookmark whose target page shows it, each h2 is a
bookmark under its chapter and its target page shows it; no raw TeX is left in the text;
each chapter's pages draw at least as many images as its HTML shows, carry every figure's
caption number and a "Live explorer" line per explorer; the worked examples that the HTML
folds are printed open; every page but the title page
carries its page number; the edition without solutions has none, the full one has them all.

Without Chromium the tests skip, naming the Debian package; under ``CI=true`` they fail.
"""

from __future__ import annotations

import fcntl
import importlib.util
import os
import re
import sys
import unicodedata
from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from pypdf import PdfReader

from book_toc import toc_files
from browser_support import require_browser

ROOT = Path(__file__).resolve().parent.parent
HTML = Path(os.environ.get("LNWORKED_BOOK_HTML", ROOT / "book" / "_build" / "html")).resolve()
RAW_TEX = ("\\frac", "\\sqrt", "$$", "\\(", "\\)", "\\[", "\\]", "\\mathrm", "\\gamma", "\\varepsilon", "\\top")

pytestmark = pytest.mark.slow


def _load_tool():
    spec = importlib.util.spec_from_file_location("book_pdf", ROOT / "tools" / "book_pdf.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def squash(text: str) -> str:
    """Text compared without spacing or ligatures: PDF extraction drops and adds spaces at line ends."""
    return re.sub(r"\s+", "", unicodedata.normalize("NFKC", text))


@pytest.fixture(scope="session")
def pdfs(tmp_path_factory) -> dict[str, Path]:
    require_browser()
    if not (HTML / "index.html").exists():
        pytest.fail(f"no built book at {HTML}: run `make book` first (`make test` builds it)")
    # Under pytest-xdist every worker runs this fixture: the first prints the book, the
    # others wait on the lock and reuse its files (the workers' base temps share a parent,
    # which belongs to this run only).
    base = tmp_path_factory.getbasetemp()
    out = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "book-pdf"
    out.mkdir(exist_ok=True)
    tool = _load_tool()
    with open(out / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (out / "done").exists():
            tool.build(HTML, out)
            (out / "done").touch()
    return {edition: out / edition for edition in tool.EDITIONS}


@pytest.fixture(scope="session")
def book(pdfs):
    return Printed(pdfs["lnworked.pdf"])


@pytest.fixture(scope="session")
def student_book(pdfs):
    return Printed(pdfs["lnworked-no-solutions.pdf"])


class Printed:
    """A printed edition: its pages' text and its chapters' page ranges from the bookmarks."""

    def __init__(self, path: Path):
        self.reader = PdfReader(str(path))
        self.texts = [page.extract_text() or "" for page in self.reader.pages]
        top = [item for item in self.reader.outline if not isinstance(item, list)]
        self.chapters = [item for item in top if item.title != "Contents"]
        self.starts = [self.reader.get_destination_page_number(item) for item in self.chapters]
        self.children = {}
        for index, item in enumerate(self.reader.outline):
            if isinstance(item, list):
                self.children[self.reader.outline[index - 1].title] = item

    def pages_of(self, chapter: int) -> range:
        end = self.starts[chapter + 1] if chapter + 1 < len(self.starts) else len(self.reader.pages)
        return range(self.starts[chapter], end)

    def text_of(self, chapter: int) -> str:
        return "\n".join(self.texts[i] for i in self.pages_of(chapter))

    def target(self, item) -> int:
        return self.reader.get_destination_page_number(item)


@pytest.fixture(scope="session")
def html_pages() -> list[BeautifulSoup]:
    return [BeautifulSoup((HTML / f"{name}.html").read_text(encoding="utf-8"), "html.parser") for name in toc_files()]


def article(soup: BeautifulSoup):
    return soup.select_one("article.bd-article")


def heading_text(tag) -> str:
    """A heading's text without its "#" link and its maths (the PDF shows maths typeset)."""
    tag = BeautifulSoup(str(tag), "html.parser")
    for junk in tag.select(".headerlink, .math"):
        junk.decompose()
    return re.sub(r"\s+", " ", tag.get_text()).strip()


def image_count(page_or_form) -> int:
    """Image XObjects a page draws, counting those inside its form XObjects."""
    resources = page_or_form.get("/Resources")
    xobjects = resources.get_object().get("/XObject") if resources else None
    count = 0
    for ref in (xobjects.get_object().values() if xobjects else []):
        xobject = ref.get_object()
        if xobject.get("/Subtype") == "/Image":
            count += 1
        elif xobject.get("/Subtype") == "/Form":
            count += image_count(xobject)
    return count


def chapter_title(soup) -> str:
    return heading_text(article(soup).find("h1"))


# --- the tests -------------------------------------------------------------------------------


def test_every_toc_page_is_printed_in_order(book, html_pages):
    assert len(book.reader.pages) >= len(html_pages) + 2  # a title page and a contents page
    assert [squash(item.title) for item in book.chapters] == [squash(chapter_title(s)) for s in html_pages]
    assert book.starts == sorted(book.starts) and len(set(book.starts)) == len(book.starts)


def test_chapter_titles_are_in_the_text_and_on_their_bookmarked_page(book, html_pages):
    contents = squash(" ".join(book.texts[1:book.starts[0]]))
    for index, soup in enumerate(html_pages):
        title = squash(chapter_title(soup))
        assert title in squash(book.texts[book.starts[index]]), f"{title} not on its first page"
        assert title in contents, f"{title} not in the table of contents"


def test_every_section_is_a_bookmark_pointing_at_its_page(book, html_pages):
    for index, soup in enumerate(html_pages):
        title = book.chapters[index].title
        headings = [heading_text(h) for h in article(soup).find_all("h2")
                    if not h.find_parent("details", class_="above-input")]
        children = book.children.get(title, [])
        child_titles = [squash(item.title) for item in children if not isinstance(item, list)]
        for heading in headings:
            key = squash(heading)
            match = [c for c in child_titles if c.startswith(key[:12])]
            assert match, f"{title}: no bookmark for the section {heading!r}"
        for item in children:
            if isinstance(item, list):
                continue
            page_text = squash(book.texts[book.target(item)])
            words = squash(item.title)[:15]  # the number and first words, before any maths
            assert words in page_text, f"bookmark {item.title!r} points at a page without it"


def test_no_raw_tex_in_the_text(book, student_book):
    for printed in (book, student_book):
        for number, text in enumerate(printed.texts, start=1):
            found = [tex for tex in RAW_TEX if tex in text]
            assert not found, f"page {number} shows raw TeX {found}"


def test_every_figure_is_printed(book, html_pages):
    for index, soup in enumerate(html_pages):
        body = article(soup)
        images = [img for img in body.find_all("img") if not img.find_parent("details", class_="above-input")]
        drawn = sum(image_count(book.reader.pages[i]) for i in book.pages_of(index))
        name = book.chapters[index].title
        assert drawn >= len(images), f"{name}: {len(images)} images in the HTML, {drawn} in the PDF"
        text = squash(book.text_of(index))
        for caption in body.select("figcaption .caption-number"):
            assert squash(caption.get_text()) in text, f"{name}: {caption.get_text()} missing"
        explorers = len(body.select(".lnw-explorer"))
        assert text.count("Liveexplorer:") == explorers, f"{name}: {explorers} explorers"


def test_folded_worked_examples_print_open(book, html_pages):
    for index, soup in enumerate(html_pages):
        text = squash(book.text_of(index))
        for example in article(soup).select("details.above-output p[id^=example-]"):
            head = squash(example.get_text())[:40]
            assert head in text, f"{book.chapters[index].title}: worked example {head!r} not printed"


def test_every_page_but_the_title_page_is_numbered(book):
    for number, text in enumerate(book.texts[1:], start=2):
        assert text.split()[-1] == str(number), f"page {number} ends with {text.split()[-1:]}"


def test_solutions_are_in_one_edition_only(book, student_book, html_pages):
    solutions = sum(len(article(s).select(".solution")) for s in html_pages)
    assert solutions > 0
    assert squash(" ".join(book.texts)).count("Solutionto") >= solutions
    assert "Solutionto" not in squash(" ".join(student_book.texts))
    assert len(student_book.reader.pages) < len(book.reader.pages)


def test_without_a_built_book_the_command_says_so(tmp_path):
    import subprocess

    done = subprocess.run([sys.executable, str(ROOT / "tools" / "book_pdf.py"), "--html", str(tmp_path / "none"),
                           "--out", str(tmp_path / "pdf")], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [f"book_pdf: no built book at {tmp_path / 'none'}; run make book first"]
    assert not (tmp_path / "pdf").exists()
