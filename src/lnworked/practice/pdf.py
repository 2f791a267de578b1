"""PDF handouts: the offline HTML printed by headless Chromium, merged with ``pypdf``.

Why Chromium: the handouts' maths is MathML, which Chromium typesets natively, so a PDF
is the very page a student sees on screen, with no second typesetting path. Pure-Python
PDF libraries (reportlab, fpdf2) typeset no maths and WeasyPrint does not render
MathML; LaTeX is a gigabyte-sized install. The project's CI installs Debian's
``chromium`` (``.ci/run``); ``$LNWORKED_CHROMIUM`` names another binary.

All handouts are printed as one HTML page (each student starting a new printed page) and
split at the PDF's top-level bookmarks, which Chromium makes from the one ``<h1>`` of each
student's sheet: one Chromium start for the class instead of one per student (each start
costs about a second of CPU). The answer key is printed by a second process in parallel.
Each print is a short-lived headless process with a fresh profile,
``--no-pdf-header-footer``, and every host unresolvable (a handout needs no network; this
makes sure it gets none). The processes run in parallel (:data:`WORKERS`). A PDF is
written under a temporary name and renamed when complete, so an interrupted run leaves
only whole files. Without Chromium, :func:`require_chromium` raises a one-line
ValueError that says how to install it or to pass ``--no-pdf``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

__all__ = ["find_chromium", "require_chromium", "print_pdf", "print_pdfs", "split_pdf", "outline_starts",
           "page_count", "WORKERS"]

ENV = "LNWORKED_CHROMIUM"
NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
WORKERS = max(2, min(4, (os.cpu_count() or 1) + 1))
TIMEOUT_S = 120
FLAGS = (
    "--headless",
    "--no-sandbox",  # needed as root (CI); the pages are our own, offline and script-free
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--no-pdf-header-footer",
    "--generate-pdf-document-outline",  # bookmarks from the headings; used to split the file
    "--host-resolver-rules=MAP * ~NOTFOUND",
)


def find_chromium() -> str | None:
    """The Chromium binary: ``$LNWORKED_CHROMIUM`` if set, else the first of :data:`NAMES` on PATH."""
    if os.environ.get(ENV):
        return shutil.which(os.environ[ENV])
    return next((path for path in map(shutil.which, NAMES) if path), None)


def require_chromium() -> str:
    """The Chromium binary, or a ValueError (one line) saying how to get one or skip PDFs."""
    path = find_chromium()
    if path:
        return path
    where = f"${ENV}={os.environ[ENV]!r} is not an executable" if os.environ.get(ENV) else \
        f"none of {', '.join(NAMES)} is on PATH"
    raise ValueError(f"--no-pdf: PDF handouts need headless Chromium and {where}; install it "
                     "(Debian/Ubuntu: apt-get install chromium) or pass --no-pdf")


def print_pdf(html_path: Path, pdf_path: Path, chromium: str) -> Path:
    """Print one HTML file to ``pdf_path`` with headless Chromium."""
    html_path, pdf_path = Path(html_path).resolve(), Path(pdf_path)
    with tempfile.TemporaryDirectory(prefix="lnw-pdf-") as tmp:
        part = Path(tmp) / "out.pdf"
        command = [chromium, *FLAGS, f"--user-data-dir={tmp}/profile", f"--print-to-pdf={part}", html_path.as_uri()]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT_S,
                                  stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            raise ValueError(f"pdf: Chromium took over {TIMEOUT_S} s to print {html_path.name}") from None
        if done.returncode != 0 or not part.exists() or part.stat().st_size == 0:
            tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
            raise ValueError(f"pdf: Chromium could not print {html_path.name} (exit {done.returncode}): {tail}")
        shutil.move(str(part), pdf_path.with_suffix(".pdf.part"))
    os.replace(pdf_path.with_suffix(".pdf.part"), pdf_path)
    return pdf_path


def print_pdfs(jobs, chromium: str, workers: int = WORKERS) -> list[Path]:
    """Print ``[(html_path, pdf_path), ...]`` in parallel; return the PDFs in the jobs' order."""
    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures = [pool.submit(print_pdf, html, pdf, chromium) for html, pdf in jobs]
        return [future.result() for future in futures]


def outline_starts(path) -> list[int]:
    """The first page (0-based) of each top-level bookmark of a PDF, in order."""
    from pypdf import PdfReader

    reader = PdfReader(str(path))
    return [reader.get_destination_page_number(item) for item in reader.outline if not isinstance(item, list)]


def split_pdf(path, targets) -> list[Path]:
    """Split a PDF at its top-level bookmarks, one part per target, written in order.

    Raises ValueError when the number of bookmarks differs from the number of targets.
    """
    from pypdf import PdfReader, PdfWriter

    starts = outline_starts(path)
    targets = [Path(t) for t in targets]
    if len(starts) != len(targets) or starts != sorted(starts):
        raise ValueError(f"pdf: {Path(path).name} has {len(starts)} top-level bookmarks, expected {len(targets)}")
    reader = PdfReader(str(path))
    ends = starts[1:] + [len(reader.pages)]
    for target, start, end in zip(targets, starts, ends):
        writer = PdfWriter()
        for index in range(start, end):
            writer.add_page(reader.pages[index])
        part = target.with_suffix(".pdf.part")
        with part.open("wb") as handle:
            writer.write(handle)
        os.replace(part, target)
    return targets


def page_count(path) -> int:
    """The number of pages of a PDF."""
    from pypdf import PdfReader

    return len(PdfReader(str(path)).pages)
