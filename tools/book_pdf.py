"""The whole book as one PDF, printed offline by headless Chromium from the built HTML.

    python tools/book_pdf.py [--html book/_build/html] [--out book/_build/pdf]

writes ``lnworked.pdf`` (with the exercise solutions) and ``lnworked-no-solutions.pdf``
(for students) into ``--out``. What it does:

1. Serves the built HTML on 127.0.0.1 and opens every page of ``book/_toc.yml``, in order,
   in Debian's Chromium through chromedriver (Selenium; the browser the tests use, never a
   downloaded one; every other host is unresolvable, so nothing is fetched).
2. On each page it waits until MathJax has typeset and the fonts have loaded, then
   prepares the page for paper (``book/_static/print.css`` does the styling):
   - each explorer prints as its static figure, with a line naming its live page on the
     published site (GitHub Pages of ``repository.url`` in ``book/_config.yml``);
   - the answers of the "predict, then reveal" prompts and the exercise solutions are
     folded out into a section at the end of their chapter, "Answers and solutions"; a
     line in place of each answer says where it is. The edition without solutions leaves
     the solutions out (as ``make book-no-solutions`` does) and keeps the answers;
   - links point at the published site, not at the local server.
3. Prints each page with the DevTools command ``Page.printToPDF`` (A4), with a document
   outline made from the headings: its page targets give the bookmarks.
4. Merges, with pypdf: a title page, a table of contents (chapters and their sections,
   with page numbers), then the chapters; a bookmark per chapter and per section (h2);
   page numbers (the PDF's own page index) stamped at the foot of every page but the title
   page.
"""

from __future__ import annotations

import argparse
import base64
import functools
import html
import io
import os
import shutil
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import quote

import yaml
from pypdf import PdfReader, PdfWriter

ROOT = Path(__file__).resolve().parent.parent
BOOK = ROOT / "book"
PRINT_CSS = BOOK / "_static" / "print.css"
EDITIONS = ("lnworked.pdf", "lnworked-no-solutions.pdf")  # with the solutions; without them

A4 = {"paperWidth": 8.27, "paperHeight": 11.69}  # inches
MARGINS = {"marginTop": 0.6, "marginBottom": 0.7, "marginLeft": 0.65, "marginRight": 0.65}
CHROMIUM_FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--hide-scrollbars", "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
)


class BookPdfError(Exception):
    """Something the book PDF needs is missing (the built book, the browser); the message says what."""


# --- the book's pages ----------------------------------------------------------------------


@dataclass
class Page:
    """One page of the table of contents, printed."""

    file: str  # relative to book/, no suffix
    part: str | None  # the part caption, for the contents page
    title: str = ""  # the page's h1 as printed ("3. Gradients through depth")
    headings: dict[str, list[str]] = field(default_factory=dict)  # edition -> its h2 headings, as plain text
    sections: list[tuple[str, int]] = field(default_factory=list)  # (h2 title, page index in its PDF)
    pdf: dict[str, bytes] = field(default_factory=dict)  # edition file name -> PDF bytes


def toc_pages(book: Path = BOOK) -> list[Page]:
    """The pages of ``_toc.yml`` in reading order, each with its part's caption."""
    toc = yaml.safe_load((book / "_toc.yml").read_text(encoding="utf-8"))
    pages = [Page(toc["root"], None)]
    for part in toc.get("parts", []):
        for chapter in part["chapters"]:  # a chapter's section pages follow it
            pages += [Page(entry["file"], part.get("caption"))
                      for entry in [chapter, *chapter.get("sections", [])]]
    return pages


def site_url(book: Path = BOOK) -> str:
    """The published book's address: ``html.baseurl`` if set, else GitHub Pages of ``repository.url``."""
    config = yaml.safe_load((book / "_config.yml").read_text(encoding="utf-8"))
    base = (config.get("html") or {}).get("baseurl")
    if base:
        return base.rstrip("/") + "/"
    owner, name = config["repository"]["url"].rstrip("/").split("/")[-2:]
    return f"https://{owner.lower()}.github.io/{name}/"


STARTED = time.perf_counter()


def log(message: str) -> None:
    print(f"book_pdf: {time.perf_counter() - STARTED:5.1f} s  {message}", file=sys.stderr, flush=True)


# --- the server and the browser --------------------------------------------------------------


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format, *args):
        pass


class Server:
    """The built HTML on http://127.0.0.1:<free port>/, from a thread."""

    def __init__(self, directory: Path):
        handler = functools.partial(_QuietHandler, directory=str(directory))
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self.origin = f"http://127.0.0.1:{self._server.server_address[1]}/"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def close(self):
        self._server.shutdown()
        self._server.server_close()


def _binary(name: str, debian_path: str) -> str | None:
    return debian_path if Path(debian_path).exists() else shutil.which(name)


def start_chromium(profile: Path):
    """Selenium on Debian's ``/usr/bin/chromium`` and ``/usr/bin/chromedriver`` (headless)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    chromium = os.environ.get("LNWORKED_CHROMIUM") or _binary("chromium", "/usr/bin/chromium")
    driver_path = _binary("chromedriver", "/usr/bin/chromedriver")
    if not chromium or not driver_path:
        raise BookPdfError("book_pdf: needs Chromium and chromedriver (Debian: apt-get install chromium chromium-driver)")
    os.environ.setdefault("SE_AVOID_STATS", "true")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={profile}")
    options.add_argument("--window-size=1100,1400")
    driver = webdriver.Chrome(service=Service(executable_path=driver_path), options=options)
    driver.set_page_load_timeout(120)
    driver.set_script_timeout(120)
    # Lay pages out as on paper, so that what the script sees visible is what is printed.
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "print"})
    return driver


# Resolves when MathJax (if the page loads it) has typeset the page and the fonts are in.
WAIT_FOR_TYPESETTING = """
const done = arguments[arguments.length - 1];
const mj = window.MathJax;
const typeset = mj && mj.startup && mj.startup.promise ? mj.startup.promise : Promise.resolve();
typeset.then(() => document.fonts.ready).then(() => done('ok'), (e) => done('error: ' + e));
"""

# Prepares a page for paper; arguments: the print stylesheet, the published URL of the page.
PREPARE = """
const [css, pageUrl] = arguments;
document.documentElement.classList.add('lnw-pdf');
if (!document.querySelector('link[href$="print.css"]')) {
  const style = document.createElement('style');
  style.textContent = css;
  document.head.appendChild(style);
}
const article = document.querySelector('article.bd-article') || document.body;
// Explorers: the static figure and where the live one is.
for (const box of article.querySelectorAll('.lnw-explorer')) {
  const line = document.createElement('p');
  line.className = 'lnw-live';
  const url = pageUrl + (box.id ? '#' + box.id : '');
  line.innerHTML = 'Live explorer: <a href="' + url + '">' + url + '</a>';
  box.appendChild(line);
}
// Folded worked examples print open.
for (const d of article.querySelectorAll('details.above-output')) d.open = true;
// Answers of the prompts and exercise solutions go to the end of the chapter.
const section = (el) => {
  let h = null;
  for (const cand of article.querySelectorAll('h2')) {
    if (cand.compareDocumentPosition(el) & Node.DOCUMENT_POSITION_FOLLOWING) h = cand; else break;
  }
  const number = h && h.querySelector('.section-number');
  return number ? number.textContent.trim().replace(/\\.$/, '') : '';
};
const moved = [];
let n = 0;
for (const box of article.querySelectorAll('.admonition.dropdown')) {
  box.classList.remove('toggle-hidden');
  box.querySelectorAll('button.toggle-button').forEach((b) => b.remove());
  if (box.classList.contains('solution')) { moved.push(box); continue; }
  n += 1;
  const prompt = box.parentElement.closest('.admonition');
  const kind = prompt ? prompt.querySelector('.admonition-title').textContent.trim() : 'Prompt';
  const where = section(box);
  const ref = document.createElement('p');
  ref.className = 'lnw-answer-ref';
  ref.textContent = 'Answer ' + n + ': in "Answers and solutions" at the end of this chapter.';
  box.replaceWith(ref);
  box.querySelector('.admonition-title').textContent = 'Answer ' + n + ' (' + kind + (where ? ', section ' + where : '') + ')';
  moved.push(box);
}
if (moved.length) {
  const appendix = document.createElement('section');
  appendix.className = 'lnw-print-appendix';
  appendix.innerHTML = '<h2>Answers and solutions</h2>';
  moved.forEach((box) => appendix.appendChild(box));
  (article.querySelector('section') || article).appendChild(appendix);
}
// Links lead to the published book, never to the local server.
const origin = location.origin + '/';
for (const a of document.querySelectorAll('a[href]')) {
  if (a.href.startsWith(origin)) a.setAttribute('href', arguments[2] + a.href.slice(origin.length));
}
// The headings as plain text (maths from MathJax's assistive MathML): the PDF's
// bookmarks and contents use them; Chromium's own outline gives only their pages.
const mathText = (node) => {
  if (node.nodeType === Node.TEXT_NODE) return node.textContent;
  const parts = [...node.childNodes].map(mathText);
  const tag = node.localName;
  if (tag === 'msqrt') { const s = parts.join(''); return '√' + (s.length > 1 ? '(' + s + ')' : s); }
  if (tag === 'msup') return parts.join('^');
  if (tag === 'msub') return parts.join('_');
  if (tag === 'mfrac') return parts.join('/');
  return parts.join('');
};
const headingText = (h) => {
  const copy = h.cloneNode(true);
  copy.querySelectorAll('.headerlink').forEach((a) => a.remove());
  copy.querySelectorAll('mjx-container').forEach((m) => {
    const mml = m.querySelector('mjx-assistive-mml math');
    m.replaceWith(document.createTextNode(mml ? mathText(mml) : m.textContent));
  });
  return copy.textContent.replace(/\\s+/g, ' ').trim();
};
const shown = (h) => h.getClientRects().length > 0;
window.lnwHeadings = () => {
  const h1 = article.querySelector('h1');
  return {title: h1 ? headingText(h1) : document.title,
          sections: [...article.querySelectorAll('h2, [role=heading][aria-level="2"]')].filter(shown).map(headingText)};
};
return window.lnwHeadings();
"""

# Resolves when no animation or transition is running (unfolded content fades in on screen).
WAIT_FOR_ANIMATIONS = """
const done = arguments[arguments.length - 1];
Promise.all(document.getAnimations().map((a) => a.finished.catch(() => null))).then(() => done('ok'));
"""

DROP_SOLUTIONS = """
document.querySelectorAll('article .solution').forEach((el) => el.remove());
const appendix = document.querySelector('.lnw-print-appendix');
if (appendix && !appendix.querySelector('.admonition')) appendix.remove();
else if (appendix) appendix.querySelector('h2').textContent = 'Answers';
return window.lnwHeadings();
"""


def print_pdf(driver, header_footer: dict | None = None) -> bytes:
    """The current page as PDF (A4), with a document outline from its headings."""
    options = {**A4, **MARGINS, "printBackground": True, "generateDocumentOutline": True}
    if header_footer:
        options.update(displayHeaderFooter=True, **header_footer)
    return base64.b64decode(driver.execute_cdp_cmd("Page.printToPDF", options)["data"])


def print_chapters(driver, server: Server, pages: list[Page], html_dir: Path, site: str) -> None:
    """Print every page in both editions into ``page.pdf``; read its title and sections."""
    css = PRINT_CSS.read_text(encoding="utf-8")
    for page in pages:
        path = html_dir / f"{page.file}.html"
        if not path.exists():
            raise BookPdfError(f"book_pdf: {path} is missing; build the book first (make book)")
        driver.get(server.origin + f"{page.file}.html")
        state = driver.execute_async_script(WAIT_FOR_TYPESETTING)
        if state != "ok":
            raise BookPdfError(f"book_pdf: {page.file}: MathJax failed: {state}")
        headings = driver.execute_script(PREPARE, css, site + f"{page.file}.html", site)
        page.title, page.headings["lnworked.pdf"] = headings["title"], headings["sections"]
        driver.execute_async_script(WAIT_FOR_ANIMATIONS)
        page.pdf["lnworked.pdf"] = print_pdf(driver)
        page.headings["lnworked-no-solutions.pdf"] = driver.execute_script(DROP_SOLUTIONS)["sections"]
        page.pdf["lnworked-no-solutions.pdf"] = print_pdf(driver)
        log(f"printed {page.file}")


def outline_sections(page: Page, edition: str) -> list[tuple[str, int]]:
    """The h2 headings of one printed page: (title, page index in the page's PDF).

    Chromium's outline nests by heading level: the page's h1 is the one top-level item and
    its children are the h2 headings, in order. Their page targets are exact; their titles
    lose the maths, so the titles come from the page (``page.headings``).
    """
    reader = PdfReader(io.BytesIO(page.pdf[edition]))
    children = next((item for item in reader.outline if isinstance(item, list)), [])
    targets = [reader.get_destination_page_number(item) for item in children if not isinstance(item, list)]
    headings = page.headings[edition]
    if len(targets) != len(headings):
        raise BookPdfError(f"book_pdf: {page.file}: {len(headings)} h2 headings but {len(targets)} in Chromium's outline")
    return list(zip(headings, targets))


# --- front matter ----------------------------------------------------------------------------

FRONT_CSS = """
body { font-family: 'DejaVu Sans', 'Liberation Sans', Arial, sans-serif; color: #111; }
.title { text-align: center; margin-top: 30%; }
.title h1 { font-size: 30pt; margin-bottom: 0.4em; }
.title p { font-size: 13pt; margin: 0.3em; }
h2 { font-size: 20pt; }
.part { font-weight: bold; margin: 1em 0 0.3em; font-size: 11pt; }
.entry { display: flex; font-size: 10.5pt; margin: 0.15em 0; }
.entry.chapter { font-weight: bold; margin-top: 0.5em; }
.entry.section { padding-left: 1.5em; font-size: 9.5pt; }
.entry .dots { flex: 1; border-bottom: 1px dotted #888; margin: 0 0.4em 0.3em; }
"""


def front_html(body: str) -> str:
    return f'<!doctype html><html lang="en"><head><meta charset="utf-8"><style>{FRONT_CSS}</style></head><body>{body}</body></html>'


def title_page(config: dict, site: str, edition: str) -> str:
    subtitle = "Edition without exercise solutions" if edition == "lnworked-no-solutions.pdf" else \
        "With answers and exercise solutions at the end of each chapter"
    return front_html(
        f'<div class="title"><h1>{html.escape(config["title"])}</h1>'
        f'<p>{html.escape(config.get("author", ""))}</p><p>{html.escape(subtitle)}</p>'
        f'<p style="margin-top:3em;font-size:10pt">The live book, with its explorers: {html.escape(site)}</p></div>')


def contents_page(pages: list[Page], starts: list[int]) -> str:
    def entry(kind: str, title: str, number: int) -> str:
        return (f'<div class="entry {kind}"><span>{html.escape(title)}</span><span class="dots"></span>'
                f'<span>{number}</span></div>')

    body, part = ["<h2>Contents</h2>"], None
    for page, start in zip(pages, starts):
        if page.part != part and page.part:
            body.append(f'<div class="part">{html.escape(page.part)}</div>')
        part = page.part
        body.append(entry("chapter", page.title, start + 1))
        body += [entry("section", title, start + index + 1) for title, index in page.sections]
    return front_html("".join(body))


def print_html(driver, document: str, header_footer: dict | None = None) -> bytes:
    driver.get("data:text/html;charset=utf-8," + quote(document))
    return print_pdf(driver, header_footer)


def page_numbers(driver, count: int) -> PdfReader:
    """``count`` empty A4 pages, each with its number at the foot (Chromium's footer template)."""
    body = "".join('<div style="break-after:page">&#8203;</div>' for _ in range(count))
    footer = ('<div style="width:100%;text-align:center;font-size:9px;font-family:sans-serif;color:#444">'
              '<span class="pageNumber"></span></div>')
    pdf = print_html(driver, front_html(body), {"headerTemplate": "<span></span>", "footerTemplate": footer})
    return PdfReader(io.BytesIO(pdf))


# --- the merge -------------------------------------------------------------------------------


def merge(driver, pages: list[Page], edition: str, config: dict, site: str, target: Path) -> int:
    """Title page, contents, chapters, bookmarks and page numbers into ``target``; its page count."""
    readers = [PdfReader(io.BytesIO(page.pdf[edition])) for page in pages]
    for page in pages:
        page.sections = outline_sections(page, edition)
    title = PdfReader(io.BytesIO(print_html(driver, title_page(config, site, edition))))
    # The contents' length moves the chapters' first pages: print it until it settles.
    contents_length = 1
    for _attempt in range(5):
        starts, at = [], len(title.pages) + contents_length
        for reader in readers:
            starts.append(at)
            at += len(reader.pages)
        contents = PdfReader(io.BytesIO(print_html(driver, contents_page(pages, starts))))
        if len(contents.pages) == contents_length:
            break
        contents_length = len(contents.pages)
    else:
        raise BookPdfError("book_pdf: the contents' length does not settle")

    writer = PdfWriter()
    for reader in [title, contents, *readers]:
        for pdf_page in reader.pages:
            writer.add_page(pdf_page)
    log(f"{edition}: front matter printed")
    numbers = page_numbers(driver, len(writer.pages))
    for index in range(len(title.pages), len(writer.pages)):
        writer.pages[index].merge_page(numbers.pages[index])
    log(f"{edition}: page numbers stamped")
    writer.add_outline_item(title="Contents", page_number=len(title.pages))
    for page, start in zip(pages, starts):
        parent = writer.add_outline_item(title=page.title, page_number=start)
        for section, index in page.sections:
            writer.add_outline_item(title=section, page_number=start + index, parent=parent)
    writer.add_metadata({"/Title": config["title"], "/Author": config.get("author", "")})
    writer.page_mode = "/UseOutlines"
    writer.compress_identical_objects()  # fonts and images that chapters share
    part = target.with_suffix(".pdf.part")
    with part.open("wb") as handle:
        writer.write(handle)
    os.replace(part, target)
    log(f"wrote {target} ({len(writer.pages)} pages)")
    return len(writer.pages)


def build(html_dir: Path, out_dir: Path, book: Path = BOOK) -> dict[str, int]:
    """Write both editions into ``out_dir``; return ``{file name: page count}``."""
    html_dir, out_dir = Path(html_dir), Path(out_dir)
    if not (html_dir / "index.html").exists():
        raise BookPdfError(f"book_pdf: no built book at {html_dir}; run make book first")
    out_dir.mkdir(parents=True, exist_ok=True)
    config = yaml.safe_load((book / "_config.yml").read_text(encoding="utf-8"))
    site, pages = site_url(book), toc_pages(book)
    server = Server(html_dir)
    with tempfile.TemporaryDirectory(prefix="lnw-book-pdf-") as profile:
        driver = start_chromium(Path(profile))
        try:
            print_chapters(driver, server, pages, html_dir, site)
            return {edition: merge(driver, pages, edition, config, site, out_dir / edition) for edition in EDITIONS}
        finally:
            driver.quit()
            server.close()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python tools/book_pdf.py", description=__doc__.split("\n")[0])
    parser.add_argument("--html", type=Path, default=BOOK / "_build" / "html", help="the built book (default: %(default)s)")
    parser.add_argument("--out", type=Path, default=BOOK / "_build" / "pdf", help="where the PDFs go (default: %(default)s)")
    args = parser.parse_args(argv)
    try:
        counts = build(args.html, args.out)
    except BookPdfError as err:
        print(err, file=sys.stderr)
        return 2
    for edition, count in counts.items():
        path = args.out / edition
        print(f"{path}: {count} pages, {path.stat().st_size / 1e6:.1f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
