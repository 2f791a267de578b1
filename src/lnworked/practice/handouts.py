"""Student handouts and the instructor's answer key, as Markdown and as offline HTML.

The HTML needs no network and no script: the maths is converted to MathML when the page is
written (:func:`lnworked.practice.markup.markdown_to_html` with ``maths="mathml"``), which
browsers render natively. The page has a phone viewport, wide formulas scroll inside their
own box, and print rules (A4, no problem split across pages) so that the same HTML prints
to the PDF handouts (:mod:`lnworked.practice.pdf`). Each problem carries the tolerance its
own answer is checked with (:meth:`lnworked.practice.problem.Answer.tolerance_sentence`).
"""

from __future__ import annotations

import html

from lnworked.practice.markup import markdown_to_html
from lnworked.practice.problem import TOLERANCE_RULE, Problem

__all__ = [
    "ANSWER_FORMAT_HELP",
    "handout_markdown",
    "handout_html",
    "handouts_html",
    "answer_key_markdown",
    "answer_key_html",
    "html_page",
]

TITLE = "LayerNorm placement: practice problems"
ANSWER_FORMAT_HELP = (
    "Type numbers as `0.25`, `-3/4`, `1.5e-3`, `sqrt(5)/2` or `0.65^10` (+ − × ÷ and powers "
    "are allowed). Type a vector as `(1, -1, 1, -1)`. For a multiple-choice question type "
    "one letter. Each problem says how close a number must be."
)
STYLE = """
body{font-family:"DejaVu Sans",Arial,sans-serif;max-width:46em;margin:0 auto;padding:1em;line-height:1.5;
  font-size:16px;overflow-wrap:break-word}
h1{font-size:1.5em}h2{font-size:1.2em;border-top:1px solid #ccc;padding-top:.8em;break-after:avoid}
math{font-family:"Latin Modern Math","STIX Two Math","DejaVu Math TeX Gyre",math}
math[display="block"]{display:block math;overflow-x:auto;overflow-y:hidden;max-width:100%;margin:.6em 0}
.tolerance{font-style:italic;color:#444}
.problem{break-inside:avoid}
.student+.student{break-before:page}
@page{size:A4;margin:16mm}
@media print{body{max-width:none;padding:0;font-size:11pt}}
"""


def html_page(title: str, body: str) -> str:
    """A standalone HTML page: no script, no external resource, readable on a phone and in print."""
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        # An empty inline icon: without one the browser asks the host for /favicon.ico.
        "<link rel=\"icon\" href=\"data:,\">\n"
        f"<title>{html.escape(title)}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n{body}\n</body>\n</html>\n"
    )


def _heading(slot, problem: Problem) -> str:
    return f"{slot.id}. {problem.title}"


def _tolerance(problem: Problem) -> str | None:
    """The problem's own tolerance sentence; none for multiple choice (the stem says 'one letter')."""
    return None if problem.answer.kind == "choice" else problem.answer.tolerance_sentence()


def handout_markdown(student: str, seed: int, problems) -> str:
    """The student's problem sheet: instructions, then each statement and its tolerance."""
    lines = [f"# {TITLE}", "", f"Student: **{student}** · assignment seed {seed}", "", ANSWER_FORMAT_HELP, ""]
    for slot, problem in problems:
        lines += [f"## {_heading(slot, problem)}", "", problem.statement, ""]
        if _tolerance(problem):
            lines += [f"*{_tolerance(problem)}*", ""]
    return "\n".join(lines)


def _problem_html(slot, problem: Problem, level: str = "h2") -> str:
    parts = [f"<{level}>{html.escape(_heading(slot, problem))}</{level}>",
             markdown_to_html(problem.statement, maths="mathml")]
    if _tolerance(problem):
        parts.append(f'<p class="tolerance">{html.escape(_tolerance(problem))}</p>')
    return '<section class="problem">' + "\n".join(parts) + "</section>"


def _handout_body(student: str, seed: int, problems) -> str:
    parts = [
        f"<h1>Practice problems: {html.escape(student)}</h1>",
        f"<p>{TITLE} · student <strong>{html.escape(student)}</strong> · assignment seed {seed}</p>",
        markdown_to_html(ANSWER_FORMAT_HELP, maths="mathml"),
    ]
    parts += [_problem_html(slot, problem) for slot, problem in problems]
    return "\n".join(parts)


def handout_html(student: str, seed: int, problems) -> str:
    """The handout as one offline HTML page (maths as MathML)."""
    return html_page(f"Practice: {student}", _handout_body(student, seed, problems))


def handouts_html(seed: int, assignment: dict) -> str:
    """Every handout in one page, each student in a section that starts a new printed page.

    Each student's sheet has exactly one ``<h1>``, so the PDF outline that Chromium makes from
    the headings has one top-level entry per student, in roster order (see :mod:`.pdf`).
    """
    sections = [f'<section class="student">{_handout_body(student, seed, problems)}</section>'
                for student, problems in assignment.items()]
    return html_page("Practice: all students", "\n".join(sections))


def _key_intro(seed: int) -> list[str]:
    return [
        f"Assignment seed {seed}. Each variant is a function of (seed, student, problem) only.",
        f"**Tolerance.** {TOLERANCE_RULE}",
    ]


def answer_key_markdown(seed: int, assignment: dict) -> str:
    """Every student's answers with tolerances and worked solutions."""
    lines = ["# Answer key: LayerNorm placement practice", ""]
    for paragraph in _key_intro(seed):
        lines += [paragraph, ""]
    for student, problems in assignment.items():
        lines += [f"## Student {student}", ""]
        for slot, problem in problems:
            answer = problem.answer
            lines += [
                f"### {_heading(slot, problem)} (`{problem.family}`)", "", problem.statement, "",
                f"**Answer:** `{answer.text}` (tolerance: {answer.tolerance_text()})", "",
                "**Solution.**", "", problem.solution, "",
            ]
    return "\n".join(lines)


def answer_key_html(seed: int, assignment: dict) -> str:
    """The answer key as offline HTML, each student on a new printed page."""
    parts = ["<h1>Answer key: LayerNorm placement practice</h1>"]
    parts += [markdown_to_html(p, maths="mathml") for p in _key_intro(seed)]
    for student, problems in assignment.items():
        section = [f"<h2>Student {html.escape(student)}</h2>"]
        for slot, problem in problems:
            answer = problem.answer
            section.append(_problem_html(slot, problem, "h3").replace("</section>", ""))
            section.append(markdown_to_html(
                f"**Answer:** `{answer.text}` (tolerance: {answer.tolerance_text()})\n\n**Solution.**", maths="mathml"))
            section.append(markdown_to_html(problem.solution, maths="mathml") + "</section>")
        parts.append('<section class="student">' + "\n".join(section) + "</section>")
    return html_page("Answer key", "\n".join(parts))
