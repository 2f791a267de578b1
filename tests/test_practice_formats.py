"""Practice exports without a browser: roster checks, offline HTML, plain-decimal numbers,
structured problem parts, per-problem tolerance sentences, the key format, argument checks."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest

from lnworked.cli import main
from lnworked.practice import FAMILIES, variant
from lnworked.practice.check import load_key
from lnworked.practice.gift import gift_text
from lnworked.practice.handouts import handout_html, handout_markdown
from lnworked.practice.keyfile import KEY_FORMAT, key_json
from lnworked.practice.questions import plain_number
from lnworked.practice.variants import assignment_slots, make_assignment, variant_rng

SRC = Path(__file__).resolve().parents[1] / "src" / "lnworked" / "practice"


def roster(tmp_path, names, header=("student", "email")):
    path = tmp_path / "roster.csv"
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows([[n, "x@y"] for n in names])
    return path


def make(tmp_path, names, *extra):
    out = tmp_path / "out"
    argv = ["practice", "make", "--roster", str(roster(tmp_path, names)), "--seed", "7", "--out", str(out), *extra]
    return main(argv), out


@pytest.mark.parametrize("names, words", [
    (["ada", "bob", "ada"], "duplicates row 2"),
    (["Ada", "ada"], "duplicates row 2"),
    (["ada", ""], "row 3: the student name '' is empty"),
    (["../../evil"], "path separator"),
    (["a\\b"], "path separator"),
    (["ada\x07"], "control character (U+0007)"),
    (["ada\u202eevil"], "control character (U+202E)"),
    (["x" * 201], "longer than 200"),
])
def test_a_bad_roster_is_one_line_and_writes_nothing(tmp_path, capsys, names, words):
    code, out = make(tmp_path, names, "--no-pdf")
    err = capsys.readouterr().err.strip()
    assert code == 2 and "\n" not in err and "Traceback" not in err
    assert err.startswith("lnworked practice: --roster:") and words in err
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["roster.csv"]


def test_odd_but_valid_names_stay_inside_out(tmp_path, capsys):
    names = ["..", ".", "~", "CON", "Zoë O'Brien", "-rf"]
    code, out = make(tmp_path, names, "--no-pdf")
    assert code == 0, capsys.readouterr().err
    inside = {p.resolve() for p in out.rglob("*")}
    assert all(out.resolve() in p.parents for p in inside)
    assert len(list((out / "handouts").glob("*.md"))) == len(names)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "roster.csv"]


def test_missing_chromium_is_one_clear_line(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("LNWORKED_CHROMIUM", str(tmp_path / "no-such-chromium"))
    code, out = make(tmp_path, ["ada"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and "\n" not in err and "Traceback" not in err
    assert "Chromium" in err and "--no-pdf" in err and "apt-get install chromium" in err
    assert not out.exists()


def test_make_without_pdf_prints_counts(tmp_path, capsys):
    code, out = make(tmp_path, ["ada", "bob"], "--no-pdf")
    printed = capsys.readouterr().out
    assert code == 0 and "2 Markdown, 2 HTML" in printed and "canvas-qti.zip (" in printed
    assert "PDF" not in printed and not list(out.rglob("*.pdf"))


# -- the offline handout --------------------------------------------------------------


@pytest.fixture(scope="module")
def assignment():
    return make_assignment(11, ["ada", "bob", "cy"])


def test_handout_html_needs_no_network_and_carries_mathml(assignment):
    page = handout_html("ada", 11, assignment["ada"])
    assert "<script" not in page and not re.search(r"(src|href)\s*=\s*[\"']?(https?:)?//", page)
    assert "http" not in page.replace("http://www.w3.org/1998/Math/MathML", "")
    assert page.count("<math") > 10 and 'name="viewport"' in page
    text = re.sub(r"<math.*?</math>", "", page, flags=re.DOTALL)
    assert "$" not in text and "\\(" not in text and "\\frac" not in text


def test_each_problem_states_its_own_tolerance(assignment):
    sheet = handout_markdown("ada", 11, assignment["ada"])
    parts = re.split(r"\n## Q\d+\. ", sheet)[1:]  # one section per problem, in order
    assert len(parts) == len(assignment["ada"])
    sections = {problem.family: part for (slot, problem), part in zip(assignment["ada"], parts)}
    for slot, problem in assignment["ada"]:
        if problem.answer.kind != "choice":
            assert problem.answer.tolerance_sentence() in sections[problem.family]
    depth = sections["depth_below_threshold"]
    assert "integer" in depth and "0.1 %" not in depth and "0.1%" not in depth
    assert "0.1 %" in sections["residual_growth"]


# -- data, not text -------------------------------------------------------------------


def test_choice_problems_keep_stem_and_options_apart():
    problem = variant(3, "ada", "identity_path")
    assert "**A.**" not in problem.stem and problem.answer.choices
    assert problem.statement.startswith(problem.stem)
    for i, choice in enumerate(problem.answer.choices):
        assert f"- **{'ABCD'[i]}.** {choice}" in problem.statement


def test_exporters_read_parts_not_the_rendered_statement():
    for name in ("moodle.py", "gift.py", "qti.py", "questions.py"):
        source = (SRC / name).read_text()
        assert ".statement" not in source and 'split("\\n\\n- **A.**")' not in source, name


def test_gift_numbers_are_plain_decimals(assignment):
    text = gift_text(11, assignment)
    numbers = re.findall(r"\{#([^}]*)\}", text)
    assert numbers and all(re.fullmatch(r"-?\d+(\.\d+)?:\d+(\.\d+)?", n) for n in numbers)


@pytest.mark.parametrize("x", [9.99375572851e-05, -1.8581e-18, 0.0999375572851, 123456.789, 3.0, 0.0, 2.5e7])
def test_plain_number_has_no_exponent_and_keeps_12_digits(x):
    text = plain_number(x)
    assert "e" not in text.lower()
    assert float(text) == pytest.approx(x, rel=1e-11, abs=0)


def test_key_format_is_shared_by_writer_and_grader(tmp_path):
    slots = assignment_slots(["residual_growth"])
    key = key_json(5, slots, make_assignment(5, ["ada"], ["residual_growth"]))
    assert key["format"] == KEY_FORMAT
    path = tmp_path / "key.json"
    path.write_text(json.dumps(key))
    assert load_key(path)["students"]["ada"]["Q1"].answer.kind == "number"
    path.write_text(json.dumps({**key, "version": 99}))
    with pytest.raises(ValueError, match="--key: .* version 99"):
        load_key(path)
    assert "export" not in (SRC / "check.py").read_text().split('"""', 2)[2].split("__all__")[0]


@pytest.mark.parametrize("call, name", [
    (lambda: variant_rng(1.5, "ada", "residual_growth"), "seed"),
    (lambda: variant_rng(True, "ada", "residual_growth"), "seed"),
    (lambda: assignment_slots(None, 21), "count"),
    (lambda: assignment_slots(None, 0), "count"),
])
def test_integer_arguments_are_checked(call, name):
    with pytest.raises(ValueError, match=f"^{name}: must be an integer"):
        call()


def test_every_family_renders_offline():
    for family in FAMILIES:
        problem = variant(1, "ada", family)
        page = handout_html("ada", 1, [(assignment_slots([family])[0], problem)])
        assert "<math" in page and "merror" not in page, family
