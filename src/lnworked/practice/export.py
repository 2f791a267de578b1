"""Writing an assignment: per-student handouts (Markdown and HTML), the answer key
(``answer-key.md`` and ``key.json``), and the LMS files ``moodle.xml`` and ``gift.txt``.

Moodle XML (https://docs.moodle.org/en/Moodle_XML_format): one category per family, so
a quiz can draw a "random question" from it and each student gets a variant. A ``number``
answer is a ``numerical`` question; a ``vector`` is a ``cloze`` question with one
``{1:NUMERICAL:=value:tolerance}`` field per entry; a ``choice`` is ``multichoice``.
Moodle's numerical tolerance is absolute, so each question carries
``max(rel * |r|, abs)`` computed from the key.

GIFT (https://docs.moodle.org/en/GIFT_format): the same categories; vectors become one
numerical question per entry (GIFT has no cloze). The characters ``~ = # { } :`` are
escaped with a backslash and a backslash itself is doubled (Moodle's importer turns
``\\\\`` back into ``\\`` and would otherwise read ``\\n`` in TeX such as ``\\neq`` as a
newline).
"""

from __future__ import annotations

import hashlib
import html
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

from lnworked.practice.families import EXPORTS, FAMILIES
from lnworked.practice.problem import TOLERANCE_RULE, Problem
from lnworked.practice.markup import markdown_to_html

__all__ = [
    "KEY_FORMAT",
    "student_slug",
    "handout_markdown",
    "handout_html",
    "answer_key_markdown",
    "key_json",
    "moodle_xml",
    "gift_escape",
    "gift_text",
    "write_all",
    "ANSWER_FORMAT_HELP",
]

KEY_FORMAT = "lnworked-practice-key"
MATHJAX = "https://cdn.jsdelivr.net/npm/mathjax@3/es5/tex-chtml.js"
ANSWER_FORMAT_HELP = (
    "Type numbers as `0.25`, `-3/4`, `1.5e-3`, `sqrt(5)/2` or `0.65^10` (+ − × ÷ and powers "
    "are allowed). Type a vector as `(1, -1, 1, -1)`. For a multiple-choice question type "
    "one letter."
)


def student_slug(student: str) -> str:
    """A file name for the student: the id if it is already safe, else a cleaned id plus a hash."""
    safe = re.sub(r"[^A-Za-z0-9_-]+", "_", student).strip("_")[:60] or "student"
    if safe == student:
        return safe
    return f"{safe}-{hashlib.sha256(student.encode()).hexdigest()[:8]}"


def _heading(slot, problem: Problem) -> str:
    return f"{slot.id}. {problem.title}"


def handout_markdown(student: str, seed: int, problems) -> str:
    """The student's problem sheet: instructions, then each statement."""
    lines = [
        "# LayerNorm placement: practice problems",
        "",
        f"Student: **{student}** · assignment seed {seed}",
        "",
        ANSWER_FORMAT_HELP + " Answers within a relative 0.1% of the exact value count as correct.",
        "",
    ]
    for slot, problem in problems:
        lines += [f"## {_heading(slot, problem)}", "", problem.statement, ""]
    return "\n".join(lines)


def _html_page(title: str, body: str) -> str:
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        f"<title>{html.escape(title)}</title>\n"
        "<style>body{font-family:sans-serif;max-width:46em;margin:2em auto;line-height:1.5}"
        "h2{border-top:1px solid #ccc;padding-top:.8em}</style>\n"
        "<!-- MathJax typesets the maths; without a network the TeX stays readable. -->\n"
        f"<script defer src=\"{MATHJAX}\"></script>\n</head>\n<body>\n{body}\n</body>\n</html>\n"
    )


def handout_html(student: str, seed: int, problems) -> str:
    """The handout as a standalone HTML page (maths for MathJax)."""
    parts = [
        "<h1>LayerNorm placement: practice problems</h1>",
        f"<p>Student: <strong>{html.escape(student)}</strong> · assignment seed {seed}</p>",
        markdown_to_html(ANSWER_FORMAT_HELP),
    ]
    for slot, problem in problems:
        parts.append(f"<h2>{html.escape(_heading(slot, problem))}</h2>")
        parts.append(markdown_to_html(problem.statement))
    return _html_page(f"Practice: {student}", "\n".join(parts))


def answer_key_markdown(seed: int, assignment: dict) -> str:
    """Every student's answers with tolerances and worked solutions."""
    lines = [
        "# Answer key: LayerNorm placement practice",
        "",
        f"Assignment seed {seed}. Each variant is a function of (seed, student, problem) only.",
        "",
        f"**Tolerance.** {TOLERANCE_RULE}",
        "",
    ]
    for student, problems in assignment.items():
        lines += [f"## Student {student}", ""]
        for slot, problem in problems:
            answer = problem.answer
            lines += [
                f"### {_heading(slot, problem)} (`{problem.family}`)",
                "",
                problem.statement,
                "",
                f"**Answer:** `{answer.text}` (tolerance: {answer.tolerance_text()})",
                "",
                "**Solution.**",
                "",
                problem.solution,
                "",
            ]
    return "\n".join(lines)


def key_json(seed: int, slots, assignment: dict) -> dict:
    """The machine-readable key that ``lnworked practice check`` reads."""
    return {
        "format": KEY_FORMAT,
        "version": 1,
        "seed": seed,
        "tolerance_rule": TOLERANCE_RULE,
        "problems": [{"id": s.id, "family": s.family, "copy": s.copy} for s in slots],
        "students": {
            student: [{"id": slot.id, "copy": slot.copy, **problem.to_json()} for slot, problem in problems]
            for student, problems in assignment.items()
        },
    }


# -- Moodle XML -----------------------------------------------------------------------


def _text(parent, tag: str, text: str, fmt: str | None = None):
    element = ET.SubElement(parent, tag, {"format": fmt} if fmt else {})
    ET.SubElement(element, "text").text = text
    return element


def _category(quiz, path: str, info: str):
    question = ET.SubElement(quiz, "question", {"type": "category"})
    _text(question, "category", path)
    _text(question, "info", info, "html")


def _number(value: float) -> str:
    return f"{value:.12g}"


def _question(quiz, qtype: str, name: str, text_html: str, feedback_html: str):
    question = ET.SubElement(quiz, "question", {"type": qtype})
    _text(question, "name", name)
    _text(question, "questiontext", text_html, "html")
    _text(question, "generalfeedback", feedback_html, "html")
    ET.SubElement(question, "defaultgrade").text = "1"
    ET.SubElement(question, "penalty").text = "0.3333333"
    ET.SubElement(question, "hidden").text = "0"
    return question


def _moodle_question(quiz, name: str, problem: Problem):
    answer = problem.answer
    statement = markdown_to_html(problem.statement)
    feedback = markdown_to_html(problem.solution)
    if answer.kind == "number":
        question = _question(quiz, "numerical", name, statement, feedback)
        node = _text(question, "answer", _number(answer.value), "moodle_auto_format")
        node.set("fraction", "100")
        ET.SubElement(node, "tolerance").text = _number(answer.tolerance())
        _text(node, "feedback", "Correct.", "html")
        ET.SubElement(question, "unitgradingtype").text = "0"
        ET.SubElement(question, "unitpenalty").text = "0"
        ET.SubElement(question, "showunits").text = "3"
        ET.SubElement(question, "unitsleft").text = "0"
    elif answer.kind == "vector":
        tol = _number(answer.tolerance())
        fields = " ".join(
            f"x<sub>{i}</sub> = {{1:NUMERICAL:={_number(v)}:{tol}}}" for i, v in enumerate(answer.value, start=1)
        )
        _question(quiz, "cloze", name, f"{statement}\n<p>{fields}</p>", feedback)
    else:
        question = _question(quiz, "multichoice", name, statement, feedback)
        ET.SubElement(question, "single").text = "true"
        ET.SubElement(question, "shuffleanswers").text = "true"
        ET.SubElement(question, "answernumbering").text = "ABCD"
        for i, choice in enumerate(answer.choices):
            node = _text(question, "answer", markdown_to_html(choice), "html")
            node.set("fraction", "100" if i == answer.value else "0")
            _text(node, "feedback", "Correct." if i == answer.value else "Not this one.", "html")


def _statement_without_letters(problem: Problem) -> Problem:
    """For LMS multichoice the options are the answers, so drop the lettered list from the text."""
    if problem.answer.kind != "choice":
        return problem
    stem = problem.statement.split("\n\n- **A.**")[0]
    return Problem(problem.family, problem.title, stem, problem.answer, problem.solution, problem.params)


def _by_family(seed: int, assignment: dict):
    """``{family: [(name, problem), ...]}`` with each distinct variant once."""
    out = {name: [] for name in FAMILIES}
    seen = set()
    for student, problems in assignment.items():
        for slot, problem in problems:
            fingerprint = json.dumps(problem.to_json(), sort_keys=True)
            if fingerprint in seen:
                continue
            seen.add(fingerprint)
            out[slot.family].append((f"{slot.id} {slot.family} [{student}]", _statement_without_letters(problem)))
    return {name: items for name, items in out.items() if items}


def moodle_xml(seed: int, assignment: dict) -> bytes:
    """Moodle XML quiz: a category per family holding every distinct variant."""
    quiz = ET.Element("quiz")
    for family, items in _by_family(seed, assignment).items():
        _category(quiz, f"$course$/top/lnworked seed {seed}/{family}", html.escape(FAMILIES[family].concept))
        for name, problem in items:
            _moodle_question(quiz, name, problem)
    ET.indent(quiz)
    return ET.tostring(quiz, encoding="UTF-8", xml_declaration=True)


# -- GIFT -----------------------------------------------------------------------------

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


def gift_text(seed: int, assignment: dict) -> str:
    """GIFT questions: numerical, one per vector entry, or multiple choice."""
    lines = [
        f"// lnworked practice, assignment seed {seed}. Generated; do not edit by hand.",
        f"// {TOLERANCE_RULE}",
        "",
    ]
    for family, items in _by_family(seed, assignment).items():
        lines += [f"$CATEGORY: $course$/top/lnworked seed {seed}/{family}", ""]
        for name, problem in items:
            answer = problem.answer
            title = gift_escape(name)
            if answer.kind == "number":
                body = f"{{#{_number(answer.value)}:{_number(answer.tolerance())}}}"
                lines += [f"::{title}::{_gift_html(problem.statement)}{body}", ""]
            elif answer.kind == "vector":
                tol = _number(answer.tolerance())
                d = len(answer.value)
                for i, v in enumerate(answer.value, start=1):
                    ask = f"{problem.statement}\n\nEnter entry {i} of {d} of the answer."
                    lines += [f"::{title} (entry {i})::{_gift_html(ask)}{{#{_number(v)}:{tol}}}", ""]
            else:
                options = " ".join(
                    ("=" if i == answer.value else "~") + gift_escape(markdown_to_html(c))
                    for i, c in enumerate(answer.choices)
                )
                lines += [f"::{title}::{_gift_html(problem.statement)}{{{options}}}", ""]
    return "\n".join(lines)


# -- everything -----------------------------------------------------------------------


def write_all(out: Path, seed: int, slots, assignment: dict, html_handouts: bool = True) -> list[Path]:
    """Write handouts, ``answer-key.md``, ``key.json``, ``moodle.xml``, ``gift.txt``; return the paths."""
    out = Path(out)
    handouts = out / "handouts"
    try:
        handouts.mkdir(parents=True, exist_ok=True)
        written = []
        for student, problems in assignment.items():
            slug = student_slug(student)
            path = handouts / f"{slug}.md"
            path.write_text(handout_markdown(student, seed, problems), encoding="utf-8")
            written.append(path)
            if html_handouts:
                path = handouts / f"{slug}.html"
                path.write_text(handout_html(student, seed, problems), encoding="utf-8")
                written.append(path)
        files = {
            "answer-key.md": answer_key_markdown(seed, assignment),
            "key.json": json.dumps(key_json(seed, slots, assignment), indent=1, ensure_ascii=False),
            "gift.txt": gift_text(seed, assignment),
        }
        for name, text in files.items():
            (out / name).write_text(text, encoding="utf-8")
            written.append(out / name)
        (out / "moodle.xml").write_bytes(moodle_xml(seed, assignment))
        written.append(out / "moodle.xml")
    except OSError as err:
        raise ValueError(f"--out: cannot write to {out}: {err.strerror or err}") from None
    return written


def family_table() -> list[tuple[str, str, str, str]]:
    """``(name, concept, answer kind, exports)`` for every family."""
    return [(f.name, f.concept, f.kind, EXPORTS[f.kind]) for f in FAMILIES.values()]
