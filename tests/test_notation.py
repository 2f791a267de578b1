"""One notation: every symbol in the teaching chapters' maths is defined on the notation page.

The scanner reads the maths of the markdown cells of ``book/chapters/0[1-6]_*`` (``$...$``,
``$$...$$`` and ``{math}`` roles, directive bodies such as figure captions included, code
blocks excluded) and returns its symbols, normalised: a Latin or Greek letter without its
sub- and superscripts (``x_{\\ell+1}`` gives ``x`` and ``\\ell``), a decorated letter as one
symbol (``\\hat{x}``, ``\\mathbf{1}``, ``\\mathcal{L}``). Operator names in ``\\mathrm``,
``\\operatorname`` or ``\\text`` (``\\mathrm{LN}``, ``\\text{Post-LN}``) are words, not
symbols, and so are multi-letter labels in a subscript (``x_{in}``, ``J_{LN}``); a bare
``^T`` or ``^\\top`` is the transpose. The notation page's symbols are those in the first
column of its table.

One meaning per symbol: the same symbol may not head two rows of the notation tables. Two
first-column entries are the same symbol when they normalise to the same symbols and carry no
sub- or superscript (``$\\hat x$`` and ``$\\hat{x}$``), or when their TeX is identical; so
``$x$`` and ``$x_i$`` may have rows of their own, two rows for ``$\\beta$`` may not.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
CHAPTERS = ROOT / "book" / "chapters"
NOTATION = ROOT / "book" / "notation.md"

GREEK = ("alpha beta gamma delta epsilon varepsilon zeta eta theta vartheta iota kappa lambda mu nu xi "
         "pi varpi rho varrho sigma varsigma tau upsilon phi varphi chi psi omega Gamma Delta Theta "
         "Lambda Xi Pi Sigma Upsilon Phi Psi Omega ell").split()
DECORATIONS = ("hat", "widehat", "bar", "overline", "tilde", "widetilde", "vec", "dot", "mathbf",
               "boldsymbol", "mathcal", "mathbb")
WORDS = ("text", "mathrm", "operatorname", "textrm", "textit", "textbf", "mbox", "label", "tag",
         "begin", "end")

_FENCE = re.compile(r"^(`{3,}|~{3,})(.*?)$\n(.*?)^\1\s*$", re.M | re.S)
_DISPLAY = re.compile(r"(?<!\\)\$\$(.+?)(?<!\\)\$\$", re.S)
_INLINE = re.compile(r"(?<![\\$])\$(?!\$)(.+?)(?<![\\$])\$(?!\$)", re.S)
_ROLE = re.compile(r"\{math\}`([^`]*)`")


def _group(text: str, start: int) -> tuple[str, int]:
    """The braced group (or single token) at ``start``: ``(content, index after it)``."""
    while start < len(text) and text[start] == " ":
        start += 1
    if start >= len(text):
        return "", start
    if text[start] == "{":
        depth = 0
        for i in range(start, len(text)):
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            if depth == 0:
                return text[start + 1:i], i + 1
        return text[start + 1:], len(text)
    if text[start] == "\\":
        match = re.match(r"\\[A-Za-z]+|\\.", text[start:])
        return match.group(0), start + len(match.group(0))
    return text[start], start + 1


def math_spans(markdown: str) -> list[str]:
    """The maths of a markdown text: display and inline ``$`` spans and ``{math}`` roles,
    outside code blocks (fences whose info string is not a ``{directive}``) and code spans."""
    markdown = _FENCE.sub(lambda m: m.group(0) if m.group(2).strip().startswith("{") else "", markdown)
    markdown = re.sub(r"(?<!\{math\})(?<!\})`[^`\n]*`", "", markdown)  # inline code, not roles
    spans = [m.group(1) for m in _ROLE.finditer(markdown)]
    markdown = _ROLE.sub("", markdown)
    spans += [m.group(1) for m in _DISPLAY.finditer(markdown)]
    markdown = _DISPLAY.sub(" ", markdown)
    spans += [m.group(1) for m in _INLINE.finditer(markdown)]
    return spans


def symbols_in_math(tex: str) -> set[str]:
    """The normalised symbols of one TeX formula (see the module docstring)."""
    found: set[str] = set()
    i = 0
    while i < len(tex):
        char = tex[i]
        if char == "\\":
            match = re.match(r"\\([A-Za-z]+)", tex[i:])
            if not match:
                i += 2  # an escaped character: \{ \, \; \|
                continue
            name, i = match.group(1), i + len(match.group(0))
            if name in WORDS:
                _, i = _group(tex, i)
            elif name in DECORATIONS:
                inner, i = _group(tex, i)
                inner = inner.strip()
                if re.fullmatch(r"[A-Za-z0-9]|\\[A-Za-z]+", inner):
                    found.add(f"\\{'hat' if name == 'widehat' else name}{{{inner}}}")
                else:
                    found |= symbols_in_math(inner)
            elif name in GREEK:
                found.add("\\" + name)
            continue
        if char in "_^":
            group, i = _group(tex, i + 1)
            stripped = group.strip()
            if char == "^" and stripped in ("T", "\\top", "\\intercal"):
                continue  # the transpose
            if re.fullmatch(r"[A-Za-z]{2,}", stripped):
                continue  # a label: x_{in}, J_{LN}
            found |= symbols_in_math(group)
            continue
        if char.isalpha() and char.isascii():
            found.add(char)
        i += 1
    return found


def markdown_of(path: Path) -> str:
    if path.suffix == ".md":
        return path.read_text(encoding="utf-8")
    cells = nbformat.read(path, as_version=4).cells
    return "\n\n".join(cell.source for cell in cells if cell.cell_type == "markdown")


def chapter_symbols(path: Path) -> set[str]:
    found: set[str] = set()
    for span in math_spans(markdown_of(path)):
        found |= symbols_in_math(span)
    return found


def notation_symbols(text: str) -> set[str]:
    """The symbols in the first column of the notation page's tables."""
    found: set[str] = set()
    for line in text.splitlines():
        if line.startswith("|") and not re.match(r"\|\s*-", line):
            first = line.split("|")[1]
            for span in math_spans(first):
                found |= symbols_in_math(span)
    return found


def _entry_key(span: str) -> tuple:
    """What a first-column entry names: its symbols if it is bare, else its TeX without spaces."""
    if re.search(r"[_^']", span):
        return ("tex", re.sub(r"\s+", "", span))
    return ("symbols", *sorted(symbols_in_math(span)))


def notation_clashes(text: str) -> dict[tuple, list[int]]:
    """Entries that head more than one row of the notation page's tables: key -> line numbers."""
    rows: dict[tuple, list[int]] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if line.startswith("|") and not re.match(r"\|\s*-", line):
            keys = {_entry_key(span) for span in math_spans(line.split("|")[1])}
            for key in keys - {("symbols",)}:
                rows.setdefault(key, []).append(number)
    return {key: lines for key, lines in rows.items() if len(lines) > 1}


def teaching_pages() -> list[Path]:
    pages = [*CHAPTERS.glob("0[1-6]_*"), *CHAPTERS.glob("*_appendix_*")]  # the chapters and the appendix
    return sorted(p for p in pages if p.suffix in (".ipynb", ".md"))


# --- the scanner itself --------------------------------------------------------------------


def test_scanner_normalises_sub_and_superscripts_and_decorations():
    tex = r"x_{\ell+1} = \mathrm{LN}\big(x_\ell + F_\ell(x_\ell)\big) + \hat{x}_j^2 + \mathbf{1}\mathbf{1}^\top/d"
    assert symbols_in_math(tex) == {"x", "\\ell", "F", "\\hat{x}", "j", "\\mathbf{1}", "d"}
    assert symbols_in_math(r"\frac{\partial \mathcal{L}}{\partial x_{in}} = J_{LN}^T g") == {"\\mathcal{L}", "x", "J", "g"}
    assert symbols_in_math(r"\sqrt{\sigma^2 + \varepsilon}\ \text{for every } d") == {"\\sigma", "\\varepsilon", "d"}
    assert symbols_in_math(r"\hat x \operatorname{diag}(\gamma)") == {"\\hat{x}", "\\gamma"}


def test_scanner_finds_maths_only_where_it_is():
    text = ("Inline $a + \\zeta$ and display\n\n$$\nb_\\ell\n$$\n\nnot `$c$` (code), a role {math}`q`, "
            "a price of \\$5, and\n\n```python\nz = '$w$'\n```\n\n```{admonition} Box\n$\\eta$\n```\n")
    found = set().union(*(symbols_in_math(s) for s in math_spans(text)))
    assert found == {"a", "\\zeta", "b", "\\ell", "q", "\\eta"}


def test_scanner_reports_a_symbol_the_page_does_not_define():
    page = "| symbol | meaning |\n|---|---|\n| $x$, $x_\\ell$ | the stream |\n| $\\gamma$ | scale |\n"
    defined = notation_symbols(page)
    assert defined == {"x", "\\ell", "\\gamma"}
    used = symbols_in_math(r"\gamma x_\ell + \zeta")
    assert used - defined == {"\\zeta"}


def test_a_symbol_with_two_rows_is_a_clash():
    page = ("| symbol | meaning |\n|---|---|\n| $\\gamma$, $\\beta$ | LayerNorm's scale and shift |\n"
            "| $x$, $x_\\ell$ | the stream |\n| $x_i$ | a feature |\n| $\\hat x$ | normalised |\n"
            "| $\\beta$ | DeepNorm's branch factor |\n| $\\hat{x}$ | again |\n| $\\mathrm{LN}(\\cdot)$ | LayerNorm |\n")
    assert notation_clashes(page) == {("symbols", "\\beta"): [3, 7], ("symbols", "\\hat{x}"): [6, 8]}
    assert notation_clashes(page.replace("| $\\beta$ | DeepNorm", "| $\\kappa$ | DeepNorm")) == {
        ("symbols", "\\hat{x}"): [6, 8]}


# --- the book ------------------------------------------------------------------------------


def test_there_are_teaching_pages_to_scan():
    pages = teaching_pages()
    assert len(pages) >= 6, pages
    assert all(chapter_symbols(p) for p in pages[:2]), "chapters 1 and 2 have maths"


@pytest.mark.parametrize("page", teaching_pages(), ids=lambda p: p.stem)
def test_every_symbol_of_a_chapter_is_on_the_notation_page(page):
    defined = notation_symbols(NOTATION.read_text(encoding="utf-8"))
    missing = sorted(chapter_symbols(page) - defined)
    assert not missing, f"{page.name} uses symbols not on book/notation.md: {missing}"


def test_no_symbol_heads_two_rows_of_the_notation_page():
    clashes = notation_clashes(NOTATION.read_text(encoding="utf-8"))
    assert not clashes, f"book/notation.md gives these symbols more than one row (line numbers): {clashes}"
