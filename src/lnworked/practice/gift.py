"""GIFT (https://docs.moodle.org/en/GIFT_format) that every GIFT reader accepts.

The same categories as the Moodle XML; the questions of :mod:`lnworked.practice.questions`
(a vector becomes one numerical question per entry, since GIFT has no cloze). Written for
the strictest readers, not only Moodle's importer:

* numbers and tolerances in plain decimal notation (``{#0.0000999375572851:0.0000001}``);
  the JavaScript parser ``gift-pegjs`` rejects exponent notation;
* in text, ``~ = # { } :`` get a backslash and a backslash is doubled (Moodle's importer
  turns ``\\\\`` back into ``\\`` and would otherwise read ``\\n`` in TeX such as ``\\neq``
  as a newline);
* newlines become spaces, since a blank line ends a question;
* the text is HTML (``[html]``) with TeX between ``\\( \\)`` for Moodle's MathJax filter.
"""

from __future__ import annotations

import re

from lnworked.practice.markup import markdown_to_html
from lnworked.practice.problem import TOLERANCE_RULE
from lnworked.practice.questions import MultipleChoice, distinct_variants, plain_number, questions_for

__all__ = ["gift_escape", "gift_text", "gift_question"]

_GIFT_SPECIAL = re.compile(r"([~=#{}:])")


def gift_escape(text: str) -> str:
    """Escape for GIFT: ``\\`` -> ``\\\\``, then ``~ = # { } :`` -> backslash + character.

    Newlines become spaces: a blank line would end the question.
    """
    text = text.replace("\\", "\\\\")
    text = _GIFT_SPECIAL.sub(r"\\\1", text)
    return re.sub(r"\s*\n\s*", " ", text)


def _gift_html(markdown: str) -> str:
    return "[html]" + gift_escape(markdown_to_html(markdown))


def gift_question(question) -> str:
    """One GIFT question (a :class:`Numerical` or :class:`MultipleChoice`) on one line."""
    title = gift_escape(question.name)
    if isinstance(question, MultipleChoice):
        options = " ".join(
            ("=" if i == question.right else "~") + gift_escape(markdown_to_html(c))
            for i, c in enumerate(question.choices)
        )
        return f"::{title}::{_gift_html(question.stem)}{{{options}}}"
    body = f"{{#{plain_number(question.value)}:{plain_number(question.tolerance)}}}"
    return f"::{title}::{_gift_html(question.text)}{body}"


def gift_text(seed: int, assignment: dict) -> str:
    """GIFT questions for every distinct variant, a ``$CATEGORY`` per family."""
    lines = [
        f"// lnworked practice, assignment seed {seed}. Generated; do not edit by hand.",
        f"// {TOLERANCE_RULE}",
        "",
    ]
    for family, items in distinct_variants(assignment).items():
        lines += [f"$CATEGORY: $course$/top/lnworked seed {seed}/{family}", ""]
        for name, problem in items:
            for question in questions_for(name, problem):
                lines += [gift_question(question), ""]
    return "\n".join(lines)
