"""A small Markdown-to-HTML converter for the Markdown the families write.

Handled: paragraphs (blank-line separated), ``- `` list items, ``**bold**``, ```code```,
inline maths ``$...$`` and display maths ``$$...$$``. Maths is kept as TeX between
MathJax delimiters ``\\( \\)`` and ``\\[ \\]`` (what Moodle's MathJax filter and the
handouts' MathJax read); everything else is HTML-escaped. The statements are generated
by this package, never typed by students, so a full Markdown engine is not needed.
"""

from __future__ import annotations

import html
import re

__all__ = ["markdown_to_html", "split_maths"]

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


def _inline(text: str) -> str:
    out = []
    for kind, part in split_maths(text):
        if kind == "inline":
            out.append("\\(" + html.escape(part, quote=False) + "\\)")
        elif kind == "display":
            out.append("\\[" + html.escape(part, quote=False) + "\\]")
        else:
            part = html.escape(part, quote=False)
            part = re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", part)
            part = re.sub(r"`(.+?)`", r"<code>\1</code>", part)
            out.append(part)
    return "".join(out)


def markdown_to_html(text: str) -> str:
    """HTML for the package's Markdown subset (see the module docstring)."""
    blocks = []
    for block in re.split(r"\n\s*\n", text.strip()):
        lines = block.split("\n")
        if all(line.startswith("- ") for line in lines):
            items = "".join(f"<li>{_inline(line[2:])}</li>" for line in lines)
            blocks.append(f"<ul>{items}</ul>")
        else:
            blocks.append(f"<p>{_inline(' '.join(lines))}</p>")
    return "\n".join(blocks)
