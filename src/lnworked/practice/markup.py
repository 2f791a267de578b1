"""A small Markdown-to-HTML converter for the Markdown the families write.

Handled: paragraphs (blank-line separated), ``- `` list items, ``**bold**``, ```code```,
inline maths ``$...$`` and display maths ``$$...$$``. With ``maths="tex"`` the maths is
kept as TeX between MathJax delimiters ``\\( \\)`` and ``\\[ \\]`` (what Moodle's MathJax
filter reads); with ``maths="mathml"`` it is converted to MathML by ``latex2mathml`` when the
page is written, which browsers render natively with no script and no network (the offline
handouts and their PDFs). Everything else is HTML-escaped. The statements are generated
by this package, never typed by students, so a full Markdown engine is not needed.
"""

from __future__ import annotations

import functools
import html
import re

__all__ = ["breakable_equations", "markdown_to_html", "split_maths", "tex_to_mathml"]

_MATH = re.compile(r"\$\$(.+?)\$\$|\$(.+?)\$", re.DOTALL)


def split_maths(text: str) -> list[tuple[str, str]]:
    """``[(kind, text), ...]`` with kind ``text``, ``inline`` or ``display``."""
    parts, pos = [], 0
    for match in _MATH.finditer(text):
        if match.start() > pos:
            parts.append(("text", text[pos:match.start()]))
        if match.group(1) is not None:
            parts.append(("display", match.group(1)))
        else:
            parts.append(("inline", match.group(2)))
        pos = match.end()
    if pos < len(text):
        parts.append(("text", text[pos:]))
    return parts


_TOKEN = re.compile(r"\\left\b|\\right\b|,\\ |\\.|[{}=]")


def _pieces(tex: str) -> list[str]:
    """``"a = (1,\\ 2)"`` as ``["a", "= (1,", "2)"]``: cut before each ``=`` and after each
    ``,\\ `` (between a vector's entries) outside braces and outside ``\\left ... \\right``;
    a formula with an environment is not cut."""
    if "\\begin" in tex:
        return [tex]
    pieces, depth, start = [], 0, 0
    for token in _TOKEN.finditer(tex):
        kind = token.group()
        if kind in ("{", "\\left"):
            depth += 1
        elif kind in ("}", "\\right"):
            depth -= 1
        elif kind == "=" and depth == 0:
            pieces.append(tex[start:token.start()])
            start = token.start()
        elif kind == ",\\ " and depth == 0:
            pieces.append(tex[start:token.start() + 1])
            start = token.end()
    pieces.append(tex[start:])
    return [piece.strip() for piece in pieces if piece.strip()]


def breakable_equations(text: str, longer_than: int = 20) -> str:
    """Markdown whose long inline equations ``$a = b = (1,\\ 2)$`` are written
    ``$a$ $= b$ $= (1,$ $2)$``.

    An inline formula cannot wrap, so on a phone a long chain of equalities ending in a vector
    runs past the screen's edge; cut into one formula before each ``=`` and after each
    vector entry, the line can wrap there. Formulas of at most ``longer_than`` characters of
    TeX, display maths and text are left as they are: the maths reads the same, only
    breakable."""
    out = []
    for kind, part in split_maths(text):
        if kind == "text":
            out.append(part)
        elif kind == "display":
            out.append(f"$${part}$$")
        elif len(part) <= longer_than:
            out.append(f"${part}$")
        else:
            out.append(" ".join(f"${piece}$" for piece in _pieces(part)))
    return "".join(out)


@functools.lru_cache(maxsize=8192)
def tex_to_mathml(tex: str, display: bool = False) -> str:
    """MathML for one TeX formula (``latex2mathml``); display maths gets ``display="block"``.

    Cached: the answer key repeats every handout's formulas.
    """
    from latex2mathml.converter import convert

    return convert(tex, display="block" if display else "inline")


def _maths(part: str, display: bool, maths: str) -> str:
    if maths == "mathml":
        return tex_to_mathml(part, display)
    escaped = html.escape(part, quote=False)
    return f"\\[{escaped}\\]" if display else f"\\({escaped}\\)"


def _inline(text: str, maths: str) -> str:
    out = []
    for kind, part in split_maths(text):
        if kind == "text":
            part = html.escape(part, quote=False)
            part = re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", part)
            part = re.sub(r"`(.+?)`", r"<code>\1</code>", part)
            out.append(part)
        else:
            out.append(_maths(part, kind == "display", maths))
    return "".join(out)


def markdown_to_html(text: str, maths: str = "tex") -> str:
    """HTML for the package's Markdown subset; ``maths`` is ``"tex"`` or ``"mathml"`` (see above)."""
    if maths not in ("tex", "mathml"):
        raise ValueError(f"maths: must be 'tex' or 'mathml', got {maths!r}")
    blocks = []
    for block in re.split(r"\n\s*\n", text.strip()):
        lines = block.split("\n")
        if all(line.startswith("- ") for line in lines):
            items = "".join(f"<li>{_inline(line[2:], maths)}</li>" for line in lines)
            blocks.append(f"<ul>{items}</ul>")
        else:
            blocks.append(f"<p>{_inline(' '.join(lines), maths)}</p>")
    return "\n".join(blocks)
