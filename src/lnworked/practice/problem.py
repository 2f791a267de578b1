"""What a practice problem is: a statement, an answer with its tolerance, a worked solution.

An answer is one of three kinds:

* ``number``: a float ``r``; a typed value ``g`` is accepted when
  ``|g - r| <= max(rel * |r|, abs)`` (relative tolerance with an absolute floor);
* ``vector``: floats ``r_1..r_d``; accepted when the length matches and every entry has
  ``|g_i - r_i| <= max(rel * max_j |r_j|, abs)`` (relative to the vector's largest entry);
* ``choice``: the index of the right option among ``choices`` (answered by letter A, B, ...).

The numbers shown to people (:func:`number_text`, :func:`vector_text`) keep five
significant figures, which the default ``rel = 1e-3`` always accepts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

__all__ = [
    "Answer",
    "Problem",
    "DEFAULT_REL",
    "DEFAULT_ABS",
    "TOLERANCE_RULE",
    "number_text",
    "number_tex",
    "vector_text",
    "vector_tex",
    "letter",
]

DEFAULT_REL = 1e-3
DEFAULT_ABS = 1e-6
SIGNIFICANT = 5

TOLERANCE_RULE = (
    "A number g is accepted for the answer r when |g - r| <= max(rel * |r|, abs): a relative "
    "tolerance with an absolute floor. For a vector the same test applies to every entry, "
    "with |r| replaced by the largest |r_j| of the vector. Each answer lists its rel and abs."
)


@dataclass(frozen=True)
class Answer:
    """The right answer and how close a typed one must be."""

    kind: str  # "number" | "vector" | "choice"
    value: object  # float | tuple[float, ...] | int (index into choices)
    rel: float = DEFAULT_REL
    abs: float = DEFAULT_ABS
    choices: tuple[str, ...] = ()

    def __post_init__(self):
        if self.kind not in ("number", "vector", "choice"):
            raise ValueError(f"kind: must be number, vector or choice, got {self.kind!r}")

    @property
    def text(self) -> str:
        """The answer as shown in the key (parsable by :mod:`lnworked.practice.answers`)."""
        if self.kind == "number":
            return number_text(self.value)
        if self.kind == "vector":
            return vector_text(self.value)
        return letter(self.value)

    def tolerance(self) -> float:
        """The absolute tolerance ``max(rel * scale, abs)`` this answer is checked with."""
        if self.kind == "number":
            return max(self.rel * abs(self.value), self.abs)
        if self.kind == "vector":
            return max(self.rel * max(abs(v) for v in self.value), self.abs)
        return 0.0

    def tolerance_text(self) -> str:
        if self.kind == "choice":
            return "exact choice"
        if self.rel == 0:
            return "exact integer" if self.abs < 0.5 else f"absolute {self.abs:g}"
        scale = "|r|" if self.kind == "number" else "max |r_j|"
        return f"relative {self.rel:g} (of {scale}), absolute floor {self.abs:g}"

    def tolerance_sentence(self) -> str:
        """One sentence for a student sheet saying what this answer is checked with."""
        if self.kind == "choice":
            return "Answer with one letter."
        percent = f"{self.rel * 100:g} %"
        if self.rel == 0:
            if self.abs < 0.5:
                return "The answer is an integer: give it exactly."
            return f"Accepted within {self.abs:g} of the exact value."
        if self.kind == "number":
            return f"Accepted when within {percent} (or within {self.abs:g}) of the exact value."
        return (f"Each entry is accepted when within {self.abs:g}, or within {percent} of the "
                "vector's largest entry (in size), of the exact entry.")

    def to_json(self) -> dict:
        out = {"kind": self.kind, "text": self.text, "rel": self.rel, "abs": self.abs}
        if self.kind == "vector":
            out["value"] = [float(v) for v in self.value]
        elif self.kind == "number":
            out["value"] = float(self.value)
        else:
            out["value"] = int(self.value)
            out["choices"] = list(self.choices)
        out["tolerance"] = self.tolerance()
        return out

    @classmethod
    def from_json(cls, data: dict) -> "Answer":
        kind = data["kind"]
        value = data["value"]
        if kind == "vector":
            value = tuple(float(v) for v in value)
        elif kind == "number":
            value = float(value)
        else:
            value = int(value)
        return cls(kind, value, float(data["rel"]), float(data["abs"]), tuple(data.get("choices", ())))


@dataclass(frozen=True)
class Problem:
    """One variant of one family, as data: the stem, the answer (with its choices), the solution.

    ``stem`` is the Markdown question without the options; for a ``choice`` answer the
    options live in ``answer.choices``. :attr:`statement` assembles the full Markdown text
    that a handout shows; exporters read the parts instead (an LMS lists the options itself).
    """

    family: str
    title: str
    stem: str
    answer: Answer
    solution: str
    params: dict = field(default_factory=dict)

    @property
    def statement(self) -> str:
        """The question as a handout shows it: the stem, then the lettered options if any."""
        if self.answer.kind != "choice":
            return self.stem
        listing = "\n".join(f"- **{letter(i)}.** {c}" for i, c in enumerate(self.answer.choices))
        return f"{self.stem}\n\n{listing}\n\nAnswer with one letter."

    def to_json(self) -> dict:
        return {
            "family": self.family,
            "title": self.title,
            "stem": self.stem,
            "statement": self.statement,
            "answer": self.answer.to_json(),
            "solution": self.solution,
            "params": self.params,
        }

    @classmethod
    def from_json(cls, data: dict) -> "Problem":
        # Keys written before the stem was stored carry only "statement" (used for display only).
        stem = data.get("stem", data.get("statement", ""))
        return cls(
            data["family"], data["title"], stem, Answer.from_json(data["answer"]),
            data["solution"], data.get("params", {}),
        )


def letter(index: int) -> str:
    """Choice index 0, 1, 2, ... as the letter A, B, C, ..."""
    return "ABCDEFGHIJ"[int(index)]


def _clean(x: float) -> float:
    """Round to :data:`SIGNIFICANT` significant figures; ``-0`` becomes ``0``."""
    x = float(x)
    if x == 0 or not math.isfinite(x):
        return 0.0 if x == 0 else x
    digits = SIGNIFICANT - 1 - math.floor(math.log10(abs(x)))
    return round(x, digits) + 0.0


def number_text(x: float) -> str:
    """Five significant figures in plain text: ``0.013462``, ``1.8581e-18``, ``13.786``."""
    return f"{_clean(x):.{SIGNIFICANT}g}"


def number_tex(x: float) -> str:
    """Like :func:`number_text` but ``1.8581 \\times 10^{-18}`` for scientific notation."""
    text = number_text(x)
    if "e" not in text:
        return text
    mantissa, exponent = text.split("e")
    return f"{mantissa} \\times 10^{{{int(exponent)}}}"


def _vector_decimals(values) -> int:
    """Decimals that give the largest entry five significant figures (at least 0)."""
    biggest = max(abs(float(v)) for v in values)
    if biggest == 0:
        return 0
    return max(0, SIGNIFICANT - 1 - math.floor(math.log10(biggest)))


def _entry(v: float, decimals: int) -> str:
    text = f"{round(float(v), decimals) + 0.0:.{decimals}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def vector_text(values) -> str:
    """``(-1.6833, 0.10557, 1.8944, 3.6833)``-style text, entries to a common precision."""
    decimals = _vector_decimals(values)
    if decimals > 8 or max(abs(float(v)) for v in values) >= 1e6:
        return "(" + ", ".join(number_text(v) for v in values) + ")"
    return "(" + ", ".join(_entry(v, decimals) for v in values) + ")"


def vector_tex(values) -> str:
    """The vector for maths mode: ``(-1.6833,\\ 0.10557, ...)``."""
    decimals = _vector_decimals(values)
    if decimals > 8 or max(abs(float(v)) for v in values) >= 1e6:
        return "(" + ",\\ ".join(number_tex(v) for v in values) + ")"
    return "(" + ",\\ ".join(_entry(v, decimals) for v in values) + ")"
