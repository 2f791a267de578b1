"""`lnworked practice make/check/list`: handouts (Markdown, HTML, PDF), keys, Moodle XML, GIFT
(also read by the independent parser gift-pegjs), Canvas QTI, grading, bad arguments.

One 30-student ``make`` (module fixture) is checked; it needs headless Chromium
for the PDFs (skipped naming it when missing, failing under ``CI=true``) and node with the
npm package gift-pegjs under ``.tools/gift-pegjs`` (installed by ``.ci/run``). Its speed is
measured, not asserted: ``benchmarks/practice_make.py``.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import pytest

from lnworked.cli import main
from lnworked.practice import FAMILIES, variant
from lnworked.practice.gift import gift_escape
from lnworked.practice.markup import markdown_to_html
from lnworked.practice.pdf import find_chromium

ROOT = Path(__file__).resolve().parents[1]
GIFT_PEGJS = ROOT / ".tools" / "gift-pegjs" / "node_modules"

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
    if find_chromium() is None:
        message = "headless Chromium not installed (apt-get install chromium): PDF handouts cannot be made"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert main(["practice", "make", "--roster", str(roster), "--seed", str(SEED), "--out", str(out)]) == 0
    MADE["printed"] = printed.getvalue()
    return root, out, students


MADE = {}


def key_of(out):
    return json.loads((out / "key.json").read_text())


def distinct_questions(key) -> int:
    """LMS questions the key implies: a variant once per (family, stem, right answer); a vector per entry."""
    seen = set()
    count = 0
    for entries in key["students"].values():
        for entry in entries:
            answer = entry["answer"]
            right = answer["choices"][answer["value"]] if answer["kind"] == "choice" else answer["value"]
            fingerprint = json.dumps([entry["family"], entry["stem"], right])
            if fingerprint not in seen:
                seen.add(fingerprint)
                count += len(answer["value"]) if answer["kind"] == "vector" else 1
    return count


def test_make_prints_counts_per_format(made):
    _, out, _ = made
    printed = MADE["printed"]
    n = distinct_questions(key_of(out))
    assert f"{N_STUDENTS} students x {len(FAMILIES)} problems" in printed
    assert f"{N_STUDENTS} Markdown, {N_STUDENTS} HTML" in printed
    assert f"key.json ({N_STUDENTS * len(FAMILIES)} answers)" in printed
    assert f"gift.txt ({n} questions), canvas-qti.zip ({n} QTI items)" in printed
    assert f"PDF: {N_STUDENTS} handouts, all-handouts.pdf ({N_STUDENTS} students" in printed


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
            family, student = re.fullmatch(r"Q\d+ (\S+) \[(.+)\]", q.findtext("name/text").strip()).groups()
            assert len(fields) == len(variant(SEED, student, family).answer.value) >= 2


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


# -- PDF ------------------------------------------------------------------------------


def pdf_text(path) -> str:
    """A PDF's text with whitespace removed and the maths minus sign as ASCII."""
    from pypdf import PdfReader

    text = "".join(page.extract_text() for page in PdfReader(str(path)).pages)
    return re.sub(r"\s+", "", text).replace("\u2212", "-")


def numbers_in(tex: str) -> set[str]:
    """The decimal numbers written in a statement, e.g. ``-0.5``, ``1.5``, ``12``."""
    return set(re.findall(r"-?\d+(?:\.\d+)?", re.sub(r"\\[a-zA-Z]+|[{}]", " ", tex).replace("\\ ", " ")))


def test_one_pdf_per_student_and_one_for_printing(made):
    from pypdf import PdfReader

    from lnworked.practice.roster import student_slug

    _, out, students = made
    pdfs = {s: out / "handouts" / f"{student_slug(s)}.pdf" for s in students}
    pages = {s: len(PdfReader(str(p)).pages) for s, p in pdfs.items()}
    assert all(n >= 1 for n in pages.values())
    combined = PdfReader(str(out / "all-handouts.pdf"))
    assert len(combined.pages) == sum(pages.values())
    first = 0
    for student in students:  # each student starts on a new page of the printing file, in roster order
        assert f"Practiceproblems:{student.replace(' ', '')}" in re.sub(r"\s+", "", combined.pages[first].extract_text())
        first += pages[student]
    key = key_of(out)
    for student in students:
        text = pdf_text(pdfs[student])
        assert student.replace(" ", "") in text
        for entry in key["students"][student]:
            for number in numbers_in(entry["stem"]):
                assert number in text, (student, entry["id"], number)


def test_answer_key_pdf_holds_every_students_answers(made):
    from pypdf import PdfReader

    _, out, students = made
    assert len(PdfReader(str(out / "answer-key.pdf")).pages) >= N_STUDENTS
    text = pdf_text(out / "answer-key.pdf")
    key = key_of(out)
    for student in students[:3] + students[-2:]:
        assert f"Student{student.replace(' ', '')}" in text
        for entry in key["students"][student]:
            assert re.sub(r"\s+", "", entry["answer"]["text"]) in text


# -- Canvas QTI -----------------------------------------------------------------------

IMSCP = "{http://www.imsglobal.org/xsd/imsccv1p1/imscp_v1p1}"
QTI = "{http://www.imsglobal.org/xsd/ims_qtiasiv1p2}"


def test_qti_package_is_well_formed_and_complete(made):
    _, out, _ = made
    with zipfile.ZipFile(out / "canvas-qti.zip") as package:
        files = {n for n in package.namelist() if not n.endswith("/")}
        trees = {n: ET.fromstring(package.read(n)) for n in files if n.endswith(".xml")}
    assert "imsmanifest.xml" in trees and files == set(trees)  # every file is XML and parses
    listed = {f.get("href") for f in trees["imsmanifest.xml"].iter(f"{IMSCP}file")}
    assert listed == files - {"imsmanifest.xml"}
    items = [item for tree in trees.values() for item in tree.iter(f"{QTI}item")]
    key = key_of(out)
    assert len(items) == distinct_questions(key)
    kinds = [item.find(f".//{QTI}fieldentry").text for item in items]
    assert set(kinds) == {"numerical_question", "multiple_choice_question"}


def test_qti_numbers_and_choices_match_the_key(made):
    _, out, students = made
    with zipfile.ZipFile(out / "canvas-qti.zip") as package:
        name = next(n for n in package.namelist() if n.endswith(".xml") and "/" in n and "meta" not in n)
        items = {i.get("title"): i for i in ET.fromstring(package.read(name)).iter(f"{QTI}item")}
    student = students[0]
    for entry in key_of(out)["students"][student]:
        answer, title = entry["answer"], f"{entry['id']} {entry['family']} [{student}]"
        if answer["kind"] == "choice":
            item = items[title]
            labels = {r.get("ident"): r.findtext(f"{QTI}material/{QTI}mattext") for r in item.iter(f"{QTI}response_label")}
            right = [c.findtext(f"{QTI}conditionvar/{QTI}varequal") for c in item.iter(f"{QTI}respcondition")
                     if c.findtext(f"{QTI}setvar") == "100"]
            assert len(labels) == len(answer["choices"]) and len(right) == 1
            assert "equation_image" in labels[right[0]] or labels[right[0]].strip()
            continue
        values = answer["value"] if answer["kind"] == "vector" else [answer["value"]]
        for i, value in enumerate(values, start=1):
            item = items[f"{title} (entry {i})" if answer["kind"] == "vector" else title]
            low, high = float(item.findtext(f".//{QTI}vargte")), float(item.findtext(f".//{QTI}varlte"))
            assert low == pytest.approx(value - answer["tolerance"], rel=1e-9, abs=1e-15)
            assert high == pytest.approx(value + answer["tolerance"], rel=1e-9, abs=1e-15)
            assert "e" not in item.findtext(f".//{QTI}vargte").lower()


# -- GIFT read by an independent parser -------------------------------------------------


def gift_pegjs_missing() -> str | None:
    if not shutil.which("node"):
        return "node is not installed (Debian: apt-get install nodejs npm)"
    if not (GIFT_PEGJS / "gift-pegjs").is_dir():
        return "npm package gift-pegjs not installed: npm install --prefix .tools/gift-pegjs gift-pegjs"
    return None


def test_gift_parses_with_gift_pegjs(made):
    missing = gift_pegjs_missing()
    if missing:
        if os.environ.get("CI") == "true":
            pytest.fail(missing)
        pytest.skip(missing)
    _, out, _ = made
    done = subprocess.run(["node", str(ROOT / "tests" / "gift_parse.js"), str(out / "gift.txt")],
                          capture_output=True, text=True, env={**os.environ, "NODE_PATH": str(GIFT_PEGJS)}, timeout=120)
    assert done.returncode == 0, done.stderr
    parsed = json.loads(done.stdout)
    questions = [q for q in parsed if q["type"] != "Category"]
    assert len([q for q in parsed if q["type"] == "Category"]) == len(FAMILIES)
    assert len(questions) == distinct_questions(key_of(out))
    by_title = {q["title"]: q for q in questions}
    student = made[2][-1]  # "ana,lee": a comma in the title
    for entry in key_of(out)["students"][student]:
        answer, title = entry["answer"], f"{entry['id']} {entry['family']} [{student}]"
        if answer["kind"] == "choice":  # asked once per (stem, right answer): maybe under another student
            right_html = markdown_to_html(answer["choices"][answer["value"]])
            same = [q for t, q in by_title.items() if f" {entry['family']} [" in t
                    and any(c["isCorrect"] and c["text"]["text"] == right_html for c in q["choices"])]
            assert same and all(q["type"] == "MC" for q in same)
            assert all([c["isCorrect"] for c in q["choices"]].count(True) == 1 for q in same)
            continue
        values = answer["value"] if answer["kind"] == "vector" else [answer["value"]]
        for i, value in enumerate(values, start=1):
            q = by_title[f"{title} (entry {i})" if answer["kind"] == "vector" else title]
            assert q["type"] == "Numerical" and q["stem"]["format"] == "html"
            assert q["choices"]["number"] == pytest.approx(value, rel=1e-10, abs=1e-15)
            assert q["choices"]["range"] == pytest.approx(answer["tolerance"], rel=1e-10, abs=1e-15)
