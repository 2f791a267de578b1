"""Writing an assignment: what ``lnworked practice make`` puts in ``--out``.

::

    handouts/<student>.md  .html  .pdf   one sheet per student (offline HTML, maths as MathML)
    all-handouts.pdf                      every handout in one file for printing, each student on a new page
    answer-key.md  .html  .pdf            every answer with its tolerance and worked solution
    key.json                              the key that ``lnworked practice check`` grades with
    moodle.xml  gift.txt  canvas-qti.zip  LMS imports (Moodle XML, GIFT, QTI for Canvas)

The pieces live in :mod:`.handouts`, :mod:`.pdf`, :mod:`.keyfile`, :mod:`.moodle`,
:mod:`.gift` and :mod:`.qti`. Files are written one by one, the PDFs last (the slow part),
so an interrupted run keeps what it wrote; nothing is written outside ``out`` (student
file names come from :func:`lnworked.practice.roster.student_slug`).
"""

from __future__ import annotations

import json
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from lnworked.practice import handouts as sheets
from lnworked.practice.families import EXPORTS, FAMILIES
from lnworked.practice.gift import gift_text
from lnworked.practice.handouts import ANSWER_FORMAT_HELP  # the book's practice chapter shows it
from lnworked.practice.keyfile import key_json
from lnworked.practice.moodle import moodle_xml
from lnworked.practice.pdf import page_count, print_pdfs, require_chromium, split_pdf
from lnworked.practice.qti import qti_questions, qti_zip
from lnworked.practice.roster import student_slug

__all__ = ["Written", "write_all", "family_table", "COMBINED_PDF", "ANSWER_FORMAT_HELP"]

COMBINED_PDF = "all-handouts.pdf"


@dataclass
class Written:
    """What :func:`write_all` wrote: the paths, and a line per kind of file for the CLI."""

    out: Path
    paths: list[Path] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)

    def add(self, path: Path) -> Path:
        self.paths.append(path)
        return path


def _write(written: Written, path: Path, data) -> Path:
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data, encoding="utf-8")
    return written.add(path)


def write_all(out: Path, seed: int, slots, assignment: dict, html: bool = True, pdf: bool = True,
              chromium: str | None = None) -> Written:
    """Write the files listed in the module docstring (no ``.html`` without ``html``, no PDF without ``pdf``).

    Chromium prints the PDFs in the background while the LMS files are written.
    """
    out = Path(out)
    chromium = (chromium or require_chromium()) if pdf else None
    written = Written(out)
    try:
        (out / "handouts").mkdir(parents=True, exist_ok=True)
        _write_sheets(written, seed, assignment, html)
        _write_key(written, seed, slots, assignment, html)
        with tempfile.TemporaryDirectory(prefix="lnw-html-") as tmp, ThreadPoolExecutor(max_workers=1) as background:
            printing = background.submit(_print_pdfs, out, Path(tmp), seed, assignment, html, chromium) if pdf else None
            _write_lms(written, seed, assignment)
            if printing is not None:
                _split_pdfs(written, assignment, *printing.result())
    except OSError as err:
        raise ValueError(f"--out: cannot write to {out}: {err.strerror or err}") from None
    return written


def _write_sheets(written: Written, seed: int, assignment: dict, html: bool) -> None:
    handouts = written.out / "handouts"
    for student, problems in assignment.items():
        slug = student_slug(student)
        _write(written, handouts / f"{slug}.md", sheets.handout_markdown(student, seed, problems))
        if html:
            _write(written, handouts / f"{slug}.html", sheets.handout_html(student, seed, problems))
    n = len(assignment)
    written.lines.append(f"handouts/: {n} Markdown" + (f", {n} HTML (offline, maths as MathML)" if html else ""))


def _write_key(written: Written, seed: int, slots, assignment: dict, html: bool) -> None:
    out = written.out
    _write(written, out / "answer-key.md", sheets.answer_key_markdown(seed, assignment))
    if html:
        _write(written, out / "answer-key.html", sheets.answer_key_html(seed, assignment))
    key = key_json(seed, slots, assignment)
    _write(written, out / "key.json", json.dumps(key, indent=1, ensure_ascii=False))
    answers = sum(len(problems) for problems in key["students"].values())
    written.lines.append(f"key: answer-key.md{', answer-key.html' if html else ''}, key.json ({answers} answers)")


def _write_lms(written: Written, seed: int, assignment: dict) -> None:
    out = written.out
    questions = len(qti_questions(assignment))
    _write(written, out / "moodle.xml", moodle_xml(seed, assignment))
    _write(written, out / "gift.txt", gift_text(seed, assignment))
    _write(written, out / "canvas-qti.zip", qti_zip(seed, assignment))
    written.lines.append(f"LMS: moodle.xml, gift.txt ({questions} questions), canvas-qti.zip ({questions} QTI items)")


def _print_pdfs(out: Path, tmp: Path, seed: int, assignment: dict, html: bool, chromium: str) -> tuple[Path, Path]:
    """Print every handout as one PDF and the answer key as another; return both paths."""
    everyone = tmp / "all-handouts.html"
    everyone.write_text(sheets.handouts_html(seed, assignment), encoding="utf-8")
    key_page = out / "answer-key.html" if html else tmp / "answer-key.html"
    if not html:
        key_page.write_text(sheets.answer_key_html(seed, assignment), encoding="utf-8")
    combined, key_pdf = print_pdfs([(everyone, out / COMBINED_PDF), (key_page, out / "answer-key.pdf")], chromium)
    return combined, key_pdf


def _split_pdfs(written: Written, assignment: dict, combined: Path, key_pdf: Path) -> None:
    """Per-student PDFs cut from the combined one at its bookmarks (one per student)."""
    written.add(combined), written.add(key_pdf)
    targets = [written.out / "handouts" / f"{student_slug(student)}.pdf" for student in assignment]
    for path in split_pdf(combined, targets):
        written.add(path)
    written.lines.append(
        f"PDF: {len(targets)} handouts, {COMBINED_PDF} ({len(targets)} students, {page_count(combined)} pages), "
        f"answer-key.pdf ({page_count(key_pdf)} pages)"
    )


def family_table() -> list[tuple[str, str, str, str]]:
    """``(name, concept, answer kind, exports)`` for every family."""
    return [(f.name, f.concept, f.kind, EXPORTS[f.kind]) for f in FAMILIES.values()]
