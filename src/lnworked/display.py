"""Worked examples as book content: a registry record rendered as MyST Markdown.

Chapters call :func:`show_example` with a registry id; the page then carries the anchor
``example-<id>`` (the book tests look for it), the inputs, each step, the result, the
seed's stated value and, where the seed is wrong, an erratum admonition.
"""

from __future__ import annotations

import math

import numpy as np

from lnworked.examples import Example, all_examples, get_example

__all__ = ["format_value", "example_markdown", "erratum_markdown", "show_example", "errata"]


def format_value(value, digits: int = 6) -> str:
    """Numbers to ``digits`` significant figures; vectors as ``(a, b, ...)``; matrices row by row."""
    if value is None:
        return "—"
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
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


def erratum_markdown(example: Example) -> str:
    """A MyST ``{admonition}`` with the seed's value beside the computed one."""
    return (
        f":::{{admonition}} Erratum ({example.seed}): the seed states {format_value(example.stated)}\n"
        ":class: warning\n\n"
        f"The library computes **{format_value(example.computed)}**. {example.note or ''}\n"
        ":::\n"
    )


def example_markdown(example_id: str) -> str:
    """One worked example as MyST Markdown, anchored ``example-<id>``."""
    example = get_example(example_id)
    lines = [f"(example-{example.id})=", f"**Worked example `{example.id}`: {example.title}**", ""]
    lines += [f"- input {name} = {format_value(value)}" for name, value in example.inputs.items()]
    lines += [f"- {label}: {format_value(value)}" for label, value in example.steps]
    lines += ["", f"Result: **{format_value(example.computed)}**; the seed states {format_value(example.stated)}."]
    if example.agrees is False:
        lines += ["", erratum_markdown(example)]
    elif example.note:
        lines += ["", f"*Note.* {example.note}"]
    return "\n".join(lines) + "\n"


def show_example(example_id: str):
    """Display :func:`example_markdown` in a notebook (rendered as MyST by the book)."""
    from IPython.display import Markdown, display

    display(Markdown(example_markdown(example_id)))


def errata() -> list[Example]:
    """The records whose seed text disagrees with the library."""
    return [example for example in all_examples() if example.agrees is False]
