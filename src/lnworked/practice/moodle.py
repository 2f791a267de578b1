"""Moodle XML (https://docs.moodle.org/en/Moodle_XML_format) for an assignment.

One category per family, so a quiz can draw a "random question" from it and each student
gets a variant. A ``number`` answer is a ``numerical`` question; a ``vector`` is a ``cloze``
question with one ``{1:NUMERICAL:=value:tolerance}`` field per entry (Moodle can ask for a
whole vector in one question); a ``choice`` is ``multichoice`` whose answers are the
problem's ``choices``. Moodle's numerical tolerance is absolute, so each question carries
``max(rel * |r|, abs)`` computed from the key. Maths stays TeX for Moodle's MathJax filter.
"""

from __future__ import annotations

import html
import xml.etree.ElementTree as ET

from lnworked.practice.families import FAMILIES
from lnworked.practice.markup import markdown_to_html
from lnworked.practice.problem import Problem
from lnworked.practice.questions import distinct_variants, plain_number

__all__ = ["moodle_xml"]


def _text(parent, tag: str, text: str, fmt: str | None = None):
    element = ET.SubElement(parent, tag, {"format": fmt} if fmt else {})
    ET.SubElement(element, "text").text = text
    return element


def _category(quiz, path: str, info: str):
    question = ET.SubElement(quiz, "question", {"type": "category"})
    _text(question, "category", path)
    _text(question, "info", info, "html")


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
    stem = markdown_to_html(problem.stem)
    feedback = markdown_to_html(problem.solution)
    if answer.kind == "number":
        question = _question(quiz, "numerical", name, stem, feedback)
        node = _text(question, "answer", plain_number(answer.value), "moodle_auto_format")
        node.set("fraction", "100")
        ET.SubElement(node, "tolerance").text = plain_number(answer.tolerance())
        _text(node, "feedback", "Correct.", "html")
        for tag, value in (("unitgradingtype", "0"), ("unitpenalty", "0"), ("showunits", "3"), ("unitsleft", "0")):
            ET.SubElement(question, tag).text = value
    elif answer.kind == "vector":
        tol = plain_number(answer.tolerance())
        fields = " ".join(
            f"x<sub>{i}</sub> = {{1:NUMERICAL:={plain_number(v)}:{tol}}}" for i, v in enumerate(answer.value, start=1)
        )
        _question(quiz, "cloze", name, f"{stem}\n<p>{fields}</p>", feedback)
    else:
        question = _question(quiz, "multichoice", name, stem, feedback)
        ET.SubElement(question, "single").text = "true"
        ET.SubElement(question, "shuffleanswers").text = "true"
        ET.SubElement(question, "answernumbering").text = "ABCD"
        for i, choice in enumerate(answer.choices):
            node = _text(question, "answer", markdown_to_html(choice), "html")
            node.set("fraction", "100" if i == answer.value else "0")
            _text(node, "feedback", "Correct." if i == answer.value else "Not this one.", "html")


def moodle_xml(seed: int, assignment: dict) -> bytes:
    """Moodle XML quiz: a category per family holding every distinct variant."""
    quiz = ET.Element("quiz")
    for family, items in distinct_variants(assignment).items():
        _category(quiz, f"$course$/top/lnworked seed {seed}/{family}", html.escape(FAMILIES[family].concept))
        for name, problem in items:
            _moodle_question(quiz, name, problem)
    ET.indent(quiz)
    return ET.tostring(quiz, encoding="UTF-8", xml_declaration=True)
