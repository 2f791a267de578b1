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

__all__ = ["markdown_to_html", "split_maths", "tex_to_mathml"]

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
