"""What an LMS export gets from an assignment: each distinct variant once, as structured parts.

Exporters read a problem's data (``stem``, ``answer.choices``, ``answer.value`` and the
tolerance), never its rendered Markdown. A ``number`` answer is one numerical question, a
``vector`` one numerical question per entry (GIFT and QTI have no multi-field question),
and a ``choice`` one multiple-choice question. Numbers are written by :func:`plain_number`
in plain decimal notation (no exponent), which every GIFT and QTI reader accepts.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np

from lnworked.practice.families import FAMILIES
from lnworked.practice.problem import Problem

__all__ = ["Numerical", "MultipleChoice", "distinct_variants", "questions_for", "plain_number", "SIGNIFICANT_DIGITS"]

SIGNIFICANT_DIGITS = 12


def plain_number(x: float) -> str:
    """``x`` to 12 significant digits in positional notation: ``0.0000999375572851``, never ``9.99e-05``."""
    return np.format_float_positional(float(x), precision=SIGNIFICANT_DIGITS, unique=False,
                                      fractional=False, trim="-")


@dataclass(frozen=True)
class Numerical:
    """A numerical question: Markdown ``text``, the right ``value``, the absolute ``tolerance``."""

    name: str
    text: str
    value: float
    tolerance: float
    solution: str


@dataclass(frozen=True)
class MultipleChoice:
    """A multiple-choice question: Markdown ``stem`` and ``choices``, ``right`` is an index."""

    name: str
    stem: str
    choices: tuple[str, ...]
    right: int
    solution: str


def _fingerprint(problem: Problem) -> str:
    """Equal for two variants that ask the same question with the same right answer."""
    answer = problem.answer
    if answer.kind == "choice":
        data = [problem.stem, answer.choices[answer.value]]
    else:
        data = [problem.stem, answer.to_json()]
    return json.dumps(data, sort_keys=True)


def distinct_variants(assignment: dict) -> dict[str, list[tuple[str, Problem]]]:
    """``{family: [(name, problem), ...]}``: each distinct question once, named ``Q1 family [student]``.

    Two variants are the same question when their stems and right answers agree; for
    multiple choice neither the order of the options (every LMS here shuffles them) nor the
    wording of a wrong option counts (QTI readers such as text2qti and Canvas refuse two
    questions with the same text).
    """
    out = {name: [] for name in FAMILIES}
    seen = set()
    for student, problems in assignment.items():
        for slot, problem in problems:
            fingerprint = _fingerprint(problem)
            if fingerprint in seen:
                continue
            seen.add(fingerprint)
            out[slot.family].append((f"{slot.id} {slot.family} [{student}]", problem))
    return {name: items for name, items in out.items() if items}


def questions_for(name: str, problem: Problem) -> list:
    """The LMS questions of one variant: one, or one per entry of a vector answer."""
    answer = problem.answer
    if answer.kind == "choice":
        return [MultipleChoice(name, problem.stem, tuple(answer.choices), int(answer.value), problem.solution)]
    tolerance = answer.tolerance()
    if answer.kind == "number":
        return [Numerical(name, problem.stem, float(answer.value), tolerance, problem.solution)]
    d = len(answer.value)
    return [
        Numerical(f"{name} (entry {i})", f"{problem.stem}\n\nEnter entry {i} of {d} of the answer.",
                  float(v), tolerance, problem.solution)
        for i, v in enumerate(answer.value, start=1)
    ]
