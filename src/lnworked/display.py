"""Worked examples as book content: a registry record rendered as MyST Markdown, and glued.

Chapters call :func:`show_example` with a registry id; the page then carries the anchor
``example-<id>`` (the book tests look for it), the inputs as maths, each step with its
maths typeset, its value and why it is taken, the result, the source text's stated value and,
where the source text is wrong, an erratum admonition. :func:`glue_example` glues every quantity
of a record as ``<id>-<key>`` so that the prose can cite any of them by name.
"""

from __future__ import annotations

import math
import re

import numpy as np

from lnworked.examples import Example, Quantity, all_examples, get_example

__all__ = ["format_value", "example_markdown", "erratum_markdown", "arithmetic_erratum_markdown", "display_title",
           "SOURCE_NAMES", "source_link", "attribution", "show_example", "errata",
           "numeric_errata", "tex_value", "glue_name", "glue_value", "glue_example"]


#: The short names the chapters call the source texts by (the book's introduction presents each
#: under the label ``source-<number>``; the errata page and the CLI keep the numbers).
SOURCE_NAMES = {
    "000": "the gradient-step tutorial",
    "001": "the short explainer",
    "002": "Peng's article",
    "004": "the worked-examples notes",
}


def source_link(number: str) -> str:
    """A MyST link to a source text by its short name: ``{ref}`the worked-examples notes <source-004>```."""
    if number not in SOURCE_NAMES:
        raise ValueError(f"number: {number!r} is not a source text (one of {', '.join(SOURCE_NAMES)})")
    return f"{{ref}}`{SOURCE_NAMES[number]} <source-{number}>`"


def format_value(value, digits: int = 6) -> str:
    """Numbers to ``digits`` significant figures; vectors as ``(a, b, ...)``; matrices row by row."""
    if value is None:
        return "—"
    if isinstance(value, str):
        return value
    if hasattr(value, "items"):
        return "; ".join(f"{k}: {format_value(v, digits)}" for k, v in value.items())
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    array = np.asarray(value)
    if array.dtype == object:
        return ", ".join(format_value(v, digits) for v in value)
    if array.ndim == 0:
        number = float(array)
        if math.isnan(number):
            return "NaN"
        return f"{number:.{digits}g}".replace("-", "−") if number != 0 else "0"
    if array.ndim == 1:
        return "(" + ", ".join(format_value(v, digits) for v in array) + ")"
    return "[" + "; ".join(format_value(row, digits) for row in array) + "]"


def _stated_text(quantity: Quantity) -> str:
    stated = quantity.stated
    return stated if isinstance(stated, str) else "(" + ", ".join(stated) + ")"


def erratum_markdown(example: Example) -> str:
    """A MyST ``{admonition}`` with the source text's value beside the computed one, the sentence a
    student can check (``example.check``), and a link to the worked example."""
    check = f"**Why it is wrong.** {example.check}\n\n" if example.check else ""
    return (
        f":::{{admonition}} Erratum (in {source_link(example.seed[:3])}): it states {format_value(example.stated)}\n"
        ":class: warning\n\n"
        f"{check}"
        f"The library computes **{format_value(example.computed)}** "
        f"([the worked example](#example-{example.id})). {example.note or ''}\n"
        ":::\n"
    )


def arithmetic_erratum_markdown(example: Example) -> str:
    """One arithmetic erratum for the errata page: a ``###`` heading labelled ``erratum-<id>``, where
    the source text says it and its words, why it is wrong (one checkable sentence), the value the
    library computes, the reason in full and a link to the worked example that teaches it."""
    place = f", {example.location}" if example.location else ""
    lines = [f"(erratum-{example.id})=", f"### {display_title(example)}", "",
             f":::{{admonition}} Wrong as stated: {SOURCE_NAMES[example.seed[:3]]} ({example.seed[:3]}{place})",
             ":class: warning", ""]
    if example.quote:
        lines += [f"> {example.quote}", ""]
    if example.check:
        lines += [f"**Why it is wrong.** {example.check}", ""]
    lines += [f"**What is true.** The library computes **{format_value(example.computed)}**, where the source "
              f"text states {format_value(example.stated)}. {example.note or ''}", "",
              f"*Taught in:* [the worked example]( #example-{example.id}).".replace("( #", "(#"), ":::"]
    return "\n".join(lines) + "\n"


_NUMBERED = re.compile(r"^(Ex \d+|Self-check \d+|Practice): ")


def display_title(example: Example) -> str:
    """The title as the book shows it: ``"Ex 8: exam twist…"`` becomes ``"Exam twist…"`` (the source's
    numbering goes into :func:`attribution`)."""
    title = _NUMBERED.sub("", example.title)
    return title[:1].upper() + title[1:]


def attribution(example: Example) -> str:
    """``from {ref}`the worked-examples notes <source-004>`, Ex 8``: which source text, by its short
    name linked to the introduction, and which of its examples, when it numbers them."""
    numbered = _NUMBERED.match(example.title)
    where = f", {numbered.group(1).replace('Self-check', 'self-check').replace('Practice', 'practice')}" if numbered else ""
    return f"from {source_link(example.seed[:3])}{where}"


def tex_value(value, digits: int = 6) -> str | None:
    """A number, vector or matrix as TeX (``None`` for text): vectors in parentheses,
    matrices as a ``\\small`` ``pmatrix`` with 3 significant figures."""
    if value is None or isinstance(value, str) or hasattr(value, "items"):
        return None
    array = np.asarray(value)
    if array.dtype == object:
        return None
    if array.ndim == 2:
        # 3 significant figures in a smaller font: a 4 x 4 matrix fits a phone's text column
        rows = [" & ".join(_tex_numbers(format_value(v, 3)).replace("−", "-") for v in row) for row in array]
        return r"\small\begin{pmatrix}" + r" \\ ".join(rows) + r"\end{pmatrix}"
    text = _tex_numbers(format_value(value, digits))
    return text.replace("(", r"\left(", 1).replace(")", r"\right)") if array.ndim == 1 else text


def _tex_numbers(text: str) -> str:
    """``1e−05`` as ``1 \\times 10^{-5}`` and ``NaN`` as text, inside TeX."""
    text = re.sub(r"e([−+])0*(\d+)", lambda m: r" \times 10^{" + ("-" if m.group(1) == "−" else "") + m.group(2) + "}", text)
    return text.replace("NaN", r"\text{NaN}")


def _inline_tex(value) -> str | None:
    """TeX for a scalar; ``None`` for text, vectors and matrices, which are written as text so that
    a long value wraps on a phone instead of widening the page."""
    return tex_value(value) if np.ndim(value) == 0 and not isinstance(value, str) else None


def _input_line(quantity: Quantity) -> str:
    tex = _inline_tex(quantity.value)
    if quantity.tex and tex is not None:
        return f"${quantity.tex} = {tex}$"
    if quantity.tex and tex_value(quantity.value) is not None:
        return f"${quantity.tex}$ = {format_value(quantity.value)}"
    return f"{quantity.label}: {format_value(quantity.value)}"


def _step_line(quantity: Quantity, result: bool) -> str:
    tex, label = _inline_tex(quantity.value), quantity.label[:1].upper() + quantity.label[1:]
    text = format_value(quantity.value, 4 if np.ndim(quantity.value) == 2 else 6)
    matrix = np.ndim(quantity.value) == 2 and tex_value(quantity.value) is not None
    if matrix:
        # a matrix as a displayed pmatrix under its line (indented into the list item), which
        # scrolls inside its box on a phone, not as a run of tuples
        shown = f"${quantity.tex} =$" if quantity.tex else ""
    elif quantity.tex and result:
        shown = f"${quantity.tex} =$ **{text}**"
    elif quantity.tex and tex is not None:
        shown = f"${quantity.tex} = {tex}$"
    elif quantity.tex and tex_value(quantity.value) is not None:
        shown = f"${quantity.tex} =$ {text}"
    elif quantity.tex:
        shown = f"${quantity.tex}$: {format_value(quantity.value)}"
    else:
        shown = f"**{format_value(quantity.value)}**" if result else format_value(quantity.value)
    line = f"1. {label}: {shown}"
    if quantity.stated is not None:
        mark = "agrees" if quantity.agrees else "**does not agree**"
        line += f" (the source text states {_stated_text(quantity)}: {mark})"
    if matrix:
        line += f"\n\n   $$\n   {tex_value(quantity.value)}\n   $$"
    if quantity.why:
        line += ("\n\n" if matrix else "  \n") + f"   *{quantity.why}*"
    return line


def example_markdown(example_id: str, folded: bool = False) -> str:
    """One worked example as MyST Markdown, anchored ``example-<id>``.

    ``folded=True`` puts it in a closed dropdown admonition whose title names the example
    (``Worked example: <title> (from <source>)``), so that a page can fold it without a
    code cell's "Show outputs" button.
    """
    example = get_example(example_id)
    title = f"Worked example: {display_title(example)}"
    lines = [f"(example-{example.id})="]
    if folded:
        # four colons: the erratum admonition inside uses three
        lines += [f"::::{{admonition}} {title} ({attribution(example)})", ":class: dropdown", ""]
    else:
        lines += [f"**{title}** ({attribution(example)})", ""]
    lines += ["Given " + "; ".join(_input_line(q) for q in example.inputs.values()) + ".", ""]
    lines += [_step_line(q, q.key in example.result_keys) for q in example.steps.values()]
    if example.claim is not None:
        claim = format_value(example.claim)
        lines += ["", f"Checked: {claim}." if example.holds else f"The claim {claim} **does not hold** here."]
    if example.agrees is False:
        lines += ["", erratum_markdown(example)]
    elif example.note:
        lines += ["", f"*Note.* {example.note}"]
    if folded:
        lines += ["::::"]
    return "\n".join(lines) + "\n"


def show_example(example_id: str, folded: bool = False):
    """Display :func:`example_markdown` in a notebook (rendered as MyST by the book)."""
    from IPython.display import Markdown, display

    display(Markdown(example_markdown(example_id, folded)))


def glue_name(example_id: str, key: str) -> str:
    """The glue name of a quantity: ``<id>-<key>`` (``004-ex5-post_10``)."""
    return f"{example_id}-{key}"


def glue_value(value):
    """What is glued for a value: a number as a float (so ``{glue:text}`name:.3g``` formats it),
    an integer as an int, anything else as its :func:`format_value` text."""
    if isinstance(value, (bool, np.bool_)) or value is None:
        return format_value(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value)
    return format_value(value)


def glue_example(example_id: str) -> Example:
    """Glue every quantity of an example as ``<id>-<key>`` (not displayed); returns the record."""
    from myst_nb import glue

    example = get_example(example_id)
    for quantity in example.quantities():
        glue(glue_name(example.id, quantity.key), glue_value(quantity.value), display=False)
    return example


def errata() -> list[Example]:
    """The records whose source text disagrees with the library."""
    return [example for example in all_examples() if example.agrees is False]


def _numeric(value):
    """A flat float array, or None when the value is not a number or a vector of numbers."""
    if value is None or isinstance(value, (str, bool)) or hasattr(value, "items"):
        return None
    try:
        array = np.atleast_1d(np.asarray(value, dtype=float)).ravel()
    except (TypeError, ValueError):
        return None
    return array if np.all(np.isfinite(array)) else None


def numeric_errata() -> list[tuple[Example, np.ndarray, np.ndarray]]:
    """``(example, stated, computed)`` for each erratum whose stated and computed values are numbers."""
    rows = []
    for example in errata():
        stated, computed = _numeric(example.stated), _numeric(example.computed)
        if stated is not None and computed is not None and stated.size == computed.size:
            rows.append((example, stated, computed))
    return rows
