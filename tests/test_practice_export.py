"""`lnworked practice make/check/list`: handouts, keys, Moodle XML, GIFT, grading, bad arguments."""

from __future__ import annotations

import csv
import json
import re
import xml.etree.ElementTree as ET

import pytest

from lnworked.cli import main
from lnworked.practice import FAMILIES, variant
from lnworked.practice.gift import gift_escape
from lnworked.practice.markup import markdown_to_html

SEED = 2024
N_STUDENTS = 30


def write_csv(path, header, rows):
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)
    return path


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    root = tmp_path_factory.mktemp("practice")
    students = [f"student{i:02d}" for i in range(N_STUDENTS - 2)] + ["Zoë O'Brien", "ana,lee"]
    roster = write_csv(root / "roster.csv", ["Student", "email"], [[s, "x@y"] for s in students])
    out = root / "out"
    assert main(["practice", "make", "--roster", str(roster), "--seed", str(SEED), "--out", str(out)]) == 0
    return root, out, students


def test_thirty_different_handouts(made):
    _, out, students = made
    markdown = sorted((out / "handouts").glob("*.md"))
    pages = sorted((out / "handouts").glob("*.html"))
    assert len(markdown) == len(pages) == N_STUDENTS
    assert len({p.read_text() for p in markdown}) == N_STUDENTS
    text = "\n".join(p.read_text() for p in markdown)
    for student in students:
        assert f"**{student}**" in text
    assert all(p.read_text().startswith("<!DOCTYPE html>") for p in pages)


def test_key_json_holds_every_variant(made):
    _, out, students = made
    key = json.loads((out / "key.json").read_text())
    assert key["seed"] == SEED and "absolute floor" in key["tolerance_rule"]
    assert sorted(key["students"]) == sorted(students)
    assert [p["family"] for p in key["problems"]] == list(FAMILIES)
    for student in students[:5] + students[-2:]:
        for entry in key["students"][student]:
            expected = variant(SEED, student, entry["family"], entry["copy"]).answer.to_json()
            assert entry["answer"] == expected


def test_answer_key_states_answers_and_tolerance(made):
    _, out, students = made
    text = (out / "answer-key.md").read_text()
    assert "absolute floor" in text
    problem = variant(SEED, students[3], "residual_growth")
    assert f"`{problem.answer.text}`" in text


def questions(root):
    return [q for q in root.findall("question") if q.get("type") != "category"]


def test_moodle_xml_has_what_the_importer_needs(made):
    _, out, _ = made
    root = ET.parse(out / "moodle.xml").getroot()
    assert root.tag == "quiz"
    categories = [q.findtext("category/text") for q in root.findall("question") if q.get("type") == "category"]
    assert len(categories) == len(FAMILIES)
    assert all(c.startswith(f"$course$/top/lnworked seed {SEED}/") for c in categories)
    kinds = {q.get("type") for q in questions(root)}
    assert kinds == {"numerical", "cloze", "multichoice"}
    for q in questions(root):
        assert q.findtext("name/text").strip()
        assert q.find("questiontext").get("format") == "html"
        assert q.findtext("questiontext/text").strip()
        assert q.findtext("generalfeedback/text").strip()
        assert q.findtext("defaultgrade") == "1"
        if q.get("type") == "numerical":
            (answer,) = q.findall("answer")
            assert answer.get("fraction") == "100"
            float(answer.findtext("text"))
            assert float(answer.findtext("tolerance")) > 0
        elif q.get("type") == "multichoice":
            answers = q.findall("answer")
            assert len(answers) == 4
            assert [a.get("fraction") for a in answers].count("100") == 1
            assert q.findtext("single") == "true"
            assert "<strong>A.</strong>" not in q.findtext("questiontext/text")  # options are the answers
        else:
            fields = re.findall(r"\{1:NUMERICAL:=([-0-9.e+]+):([0-9.e+-]+)\}", q.findtext("questiontext/text"))
            assert len(fields) == 4


def test_moodle_values_match_the_key(made):
    _, out, students = made
    root = ET.parse(out / "moodle.xml").getroot()
    by_name = {q.findtext("name/text"): q for q in questions(root)}
    student = students[0]
    for family in FAMILIES:
        answer = variant(SEED, student, family).answer
        slot = list(FAMILIES).index(family) + 1
        q = by_name[f"Q{slot} {family} [{student}]"]
        if answer.kind == "number":
            assert float(q.findtext("answer/text")) == pytest.approx(answer.value, rel=1e-10)
            assert float(q.findtext("answer/tolerance")) == pytest.approx(answer.tolerance(), rel=1e-10)
        elif answer.kind == "vector":
            fields = re.findall(r"\{1:NUMERICAL:=([^:]+):", q.findtext("questiontext/text"))
            assert [float(f) for f in fields] == pytest.approx(list(answer.value), rel=1e-10)
        else:
            right = [a for a in q.findall("answer") if a.get("fraction") == "100"][0]
            assert right.findtext("text") == markdown_to_html(answer.choices[answer.value])


# -- GIFT -----------------------------------------------------------------------------

SPECIAL = "~=#{}:"


def moodle_unescape(text: str) -> str:
    """What Moodle's GIFT importer does to text (escapedchar_pre then escapedchar_post)."""
    text = text.replace("\\\\", "\0")
    for ch in SPECIAL:
        text = text.replace("\\" + ch, ch)
    return text.replace("\0", "\\")


def unescaped_specials(text: str) -> list[str]:
    found, i = [], 0
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text[i] in SPECIAL:
            found.append(text[i])
        i += 1
    return found


def split_gift(question: str):
    """``(title, text, answers)`` of ``::title::text{answers}``, honouring backslash escapes."""
    assert question.startswith("::")
    end_title = question.index("::", 2)
    opening, i = None, end_title + 2
    while opening is None:
        if question[i] == "\\":
            i += 2
        elif question[i] == "{":
            opening = i
        else:
            i += 1
    assert question.endswith("}")
    return question[2:end_title], question[end_title + 2:opening], question[opening + 1:-1]


def test_gift_escape_round_trips_through_moodles_unescape():
    nasty = r"a~b=c#d{e}f:g \neq \frac{1}{2} C:\path\\ end"
    escaped = gift_escape(nasty)
    assert unescaped_specials(escaped) == []
    assert moodle_unescape(escaped) == nasty


def test_gift_questions_are_escaped_and_complete(made):
    _, out, students = made
    text = (out / "gift.txt").read_text()
    blocks = [b for b in text.split("\n\n") if b.strip() and not b.startswith(("//", "$CATEGORY"))]
    assert all("\n" not in b.strip() for b in blocks)
    kinds = {"numerical": 0, "choice": 0}
    for block in blocks:
        title, body, answers = split_gift(block.strip())
        assert unescaped_specials(title) == [] and unescaped_specials(body) == []
        assert body.startswith("[html]")
        if answers.startswith("#"):
            kinds["numerical"] += 1
            value, tol = answers[1:].split(":")
            float(value), float(tol)
        else:
            kinds["choice"] += 1
            options = re.split(r"(?<!\\)[=~]", answers)[1:]
            assert len(options) == 4 and answers.count("=") - answers.count("\\=") == 1
            assert all(unescaped_specials(o.strip()) == [] for o in options)
    assert kinds["numerical"] and kinds["choice"]
    problem = variant(SEED, students[0], "layer_norm_forward")
    first = [b for b in blocks if b.startswith(f"::Q1 layer_norm_forward [{students[0]}] (entry 1)")][0]
    assert moodle_unescape(split_gift(first)[1]).startswith("[html]" + markdown_to_html(problem.statement).replace("\n", " "))


# -- list and check -------------------------------------------------------------------


def test_list_names_every_family(capsys):
    assert main(["practice", "list"]) == 0
    out = capsys.readouterr().out
    for name in FAMILIES:
        assert name in out
    assert "Moodle multichoice" in out and "Moodle numerical" in out


def test_check_grades_a_csv(made, capsys):
    root, out, students = made
    key = json.loads((out / "key.json").read_text())
    rows = []
    good, partial, hostile = students[0], students[1], students[2]
    for entry in key["students"][good]:
        rows.append([good, entry["id"], entry["answer"]["text"]])
    for entry in key["students"][partial][:3]:
        rows.append([partial, entry["id"].lower().lstrip("q"), entry["answer"]["text"]])  # "1" means Q1
    rows += [
        [hostile, "Q1", "__import__('os').system('x')"],
        [hostile, "Q2", "=HYPERLINK(\"http://evil\")"],
        [hostile, "Q5", "9**9**9**9"],
        [hostile, "Q6", "x" * 10**6],
        ["nobody", "Q1", "1"],
    ]
    answers = write_csv(root / "answers.csv", ["student", "problem", "answer"], rows)
    grades = root / "grades"
    assert main(["practice", "check", "--key", str(out / "key.json"), "--answers", str(answers),
                 "--out", str(grades)]) == 0
    printed = capsys.readouterr().out
    n = len(FAMILIES)
    assert f"{good}: {n}/{n}" in printed and f"{partial}: 3/{n}" in printed and f"{hostile}: 0/{n}" in printed
    assert "nobody" in printed  # reported, not graded
    with (grades / "scores.csv").open() as handle:
        scores = {r["student"]: int(r["correct"]) for r in csv.DictReader(handle)}
    assert scores[good] == n and scores[partial] == 3 and scores[hostile] == 0 and len(scores) == N_STUDENTS
    with (grades / "problems.csv").open() as handle:
        problems = list(csv.DictReader(handle))
    assert [p["problem"] for p in problems] == [f"Q{i}" for i in range(1, n + 1)]
    assert int(problems[0]["correct"]) == 2 and int(problems[0]["answered"]) == 3
    with (grades / "results.csv").open() as handle:
        results = [r for r in csv.DictReader(handle) if r["student"] == hostile]
    feedback = {r["problem"]: r for r in results}
    assert feedback["Q2"]["answer"].startswith("'=")  # no spreadsheet formula
    assert "exponent" in feedback["Q5"]["feedback"]
    assert "too long" in feedback["Q6"]["feedback"] and len(feedback["Q6"]["answer"]) < 300
    assert feedback["Q3"]["feedback"] == "no answer"


# -- bad arguments --------------------------------------------------------------------


def one_line_error(capsys, argv):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("lnworked practice:") and "\n" not in err and "Traceback" not in err
    return err


def test_bad_arguments_exit_2_with_one_line(tmp_path, capsys):
    roster = write_csv(tmp_path / "r.csv", ["student"], [["ada"]])
    bad_roster = write_csv(tmp_path / "bad.csv", ["name"], [["ada"]])
    a_file = tmp_path / "file"
    a_file.write_text("x")
    make = ["practice", "make", "--seed", "1"]
    assert "no such file" in one_line_error(capsys, make + ["--roster", str(tmp_path / "no.csv"), "--out", str(tmp_path / "o")])
    assert "student" in one_line_error(capsys, make + ["--roster", str(bad_roster), "--out", str(tmp_path / "o")])
    assert "--out" in one_line_error(capsys, make + ["--roster", str(roster), "--out", str(a_file)])
    assert "--out" in one_line_error(capsys, make + ["--roster", str(roster), "--out", str(a_file / "sub")])
    assert "unknown family" in one_line_error(
        capsys, make + ["--roster", str(roster), "--out", str(tmp_path / "o"), "--families", "nope"])
    assert "count" in one_line_error(
        capsys, make + ["--roster", str(roster), "--out", str(tmp_path / "o"), "--count", "0"])
    assert "--key" in one_line_error(
        capsys, ["practice", "check", "--key", str(tmp_path / "k.json"), "--answers", str(roster)])
    assert "--key" in one_line_error(capsys, ["practice", "check", "--key", str(roster), "--answers", str(roster)])


def test_families_and_count_options(tmp_path, capsys):
    roster = write_csv(tmp_path / "r.csv", ["student"], [["ada"], ["bo"]])
    out = tmp_path / "o"
    assert main(["practice", "make", "--roster", str(roster), "--seed", "3", "--out", str(out),
                 "--families", "residual_growth,identity_path", "--count", "2", "--no-html", "--no-pdf"]) == 0
    key = json.loads((out / "key.json").read_text())
    assert [p["family"] for p in key["problems"]] == ["residual_growth"] * 2 + ["identity_path"] * 2
    assert not list((out / "handouts").glob("*.html"))
    assert key["students"]["ada"][0]["answer"] == variant(3, "ada", "residual_growth", 0).answer.to_json()
