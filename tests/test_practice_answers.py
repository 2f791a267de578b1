"""The safe answer parser: what it accepts, and hostile answers that get a fast verdict."""

from __future__ import annotations

import builtins
import math
import time

import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from lnworked.practice.answers import (
    MAX_DEPTH,
    MAX_LENGTH,
    AnswerError,
    check_answer,
    parse_answer,
    parse_choice,
)
from lnworked.practice.problem import Answer, number_text, vector_text


@pytest.mark.parametrize(
    "text, value",
    [
        ("0.25", 0.25),
        ("  -3 ", -3.0),
        ("1.5e-3", 1.5e-3),
        ("2E2", 200.0),
        ("3/4", 0.75),
        ("1 + 2*3", 7.0),
        ("(1 + 2)*3", 9.0),
        ("-2^2", -4.0),
        ("2^3^2", 512.0),
        ("2**-1", 0.5),
        ("0.65**10", 0.65**10),
        ("sqrt(5)", math.sqrt(5)),
        ("√5/2", math.sqrt(5) / 2),
        ("1/sqrt(4 + 1e-5)", 1 / math.sqrt(4 + 1e-5)),
        ("−1 × 2 ÷ 4", -0.5),  # U+2212 minus, times and division signs
        ("3·2", 6.0),
        (".5", 0.5),
        ("5.", 5.0),
    ],
)
def test_accepted_numbers(text, value):
    assert parse_answer(text) == pytest.approx(value, rel=1e-15)


@pytest.mark.parametrize(
    "text, value",
    [
        ("(1, -1, 1, -1)", (1.0, -1.0, 1.0, -1.0)),
        ("[0.5, 1/2]", (0.5, 0.5)),
        ("1, 2, 3", (1.0, 2.0, 3.0)),
        ("(-3/sqrt(5), 2^-1)", (-3 / math.sqrt(5), 0.5)),
    ],
)
def test_accepted_vectors(text, value):
    assert parse_answer(text) == pytest.approx(value, rel=1e-15)


def no_execution(monkeypatch):
    """Make every dynamic-evaluation route fail loudly if the parser ever touched it."""

    def forbidden(*args, **kwargs):
        raise AssertionError("dynamic evaluation was called")

    for name in ("eval", "exec", "compile"):
        monkeypatch.setattr(builtins, name, forbidden)
    monkeypatch.setattr(sympy, "sympify", forbidden)
    monkeypatch.setattr(sympy.parsing.sympy_parser, "parse_expr", forbidden)


def hostile_answers(tmp_path):
    marker = tmp_path / "executed"
    return marker, [
        f"__import__('pathlib').Path({str(marker)!r}).touch()",
        "__import__('os').system('touch executed')",
        "exec('1')",
        "eval('2')",
        "().__class__.__bases__[0].__subclasses__()",
        "lambda: 1",
        "import os",
        "9**9**9**9",
        "9^9^9^9",
        "2**1000",
        "10**10**10",
        "(10**64)**(10**64)",
        "1e999999",
        "1e308",
        "1" * 1000,
        "1" * 10**6,
        "(" * 10**6,
        "x" * 10**6,
        "(" * 150 + "1" + ")" * 150,
        "(" * 30 + "1" + ")" * 30,
        "-" * 150 + "1",
        "sqrt(" * 30 + "2" + ")" * 30,
        "１２３",  # fullwidth digits
        "٣",  # Arabic-Indic digit three, which float() would accept
        "\u200f12",  # right-to-left mark
        "1\u202e2",  # right-to-left override
        "1\x00",
        "🙂",
        "",
        "   ",
        "\t\n",
        "1/0",
        "0^-1",
        "(-8)^(1/3)",
        "sqrt(-1)",
        "1,",
        ",",
        "()",
        "(1,2)+1",
        "((1,2))",
        "1e",
        "nan",
        "inf",
        "1_000",
        "0x10",
        "1 2",
        "+",
        ",".join(["1"] * 99),
    ]


def test_hostile_answers_get_fast_verdicts_and_nothing_runs(tmp_path, monkeypatch):
    marker, answers = hostile_answers(tmp_path)
    number = Answer("number", 1.0)
    vector = Answer("vector", (1.0, 2.0))
    no_execution(monkeypatch)
    for text in answers:
        for answer in (number, vector):
            start = time.perf_counter()
            verdict = check_answer(answer, text)
            elapsed = time.perf_counter() - start
            # A hang guard (an exponent or nesting bomb would take minutes), not a speed claim.
            assert elapsed < 1.0, (text[:40], elapsed)
            assert isinstance(verdict.message, str) and verdict.message
            assert not verdict.correct, text[:40]
    assert not marker.exists()


def test_unreadable_answers_say_why():
    cases = {
        "9**9**9**9": "exponent",
        "1e999999": "exponent",
        "x" * 10**6: "too long",
        "": "empty",
        "   ": "empty",
        "１": "FULLWIDTH DIGIT ONE",
        "\u200f1": "RIGHT-TO-LEFT MARK",
        "__import__('os')": "LOW LINE",
        "foo(1)": "only sqrt",
        "(" * 30 + "1" + ")" * 30: "nested",
        "1/0": "division by zero",
        "2**1000": "too large",
    }
    for text, reason in cases.items():
        with pytest.raises(AnswerError, match=reason):
            parse_answer(text)
    verdict = check_answer(Answer("number", 1.0), "9**9**9**9")
    assert not verdict.correct and verdict.message.startswith("could not read the answer")


def test_depth_and_length_bounds_are_exact():
    ok = "(" * (MAX_DEPTH - 1) + "1" + ")" * (MAX_DEPTH - 1)
    assert parse_answer(ok) == 1.0
    with pytest.raises(AnswerError, match="nested"):
        parse_answer("(" * (MAX_DEPTH + 1) + "1" + ")" * (MAX_DEPTH + 1))
    assert parse_answer(" " * (MAX_LENGTH - 1) + "1") == 1.0
    with pytest.raises(AnswerError, match="too long"):
        parse_answer(" " * MAX_LENGTH + "1")


def test_non_text_is_refused():
    with pytest.raises(AnswerError):
        parse_answer(3)  # type: ignore[arg-type]
    assert not check_answer(Answer("number", 3.0), None).correct


def test_choices():
    assert [parse_choice(t, 4) for t in ("A", " b ", "(C)", "D.", "d)")] == [0, 1, 2, 3, 3]
    for bad in ("E", "AB", "", "1", "Ａ", "x" * 10**6):
        with pytest.raises(AnswerError):
            parse_choice(bad, 4)
    answer = Answer("choice", 2, choices=("p", "q", "r", "s"))
    assert check_answer(answer, "c").correct
    assert not check_answer(answer, "a").correct
    assert "could not read" in check_answer(answer, "maybe").message


def test_number_versus_vector_mismatch():
    assert "one number" in check_answer(Answer("number", 1.5), "1,5").message
    assert "vector" in check_answer(Answer("vector", (1.0, 2.0)), "1").message
    assert "2 entries" in check_answer(Answer("vector", (1.0, 2.0)), "(1, 2, 3)").message
    assert "entry 2" in check_answer(Answer("vector", (1.0, 2.0)), "(1, 2.5)").message


def test_tolerance_is_relative_with_an_absolute_floor():
    big = Answer("number", 1000.0, rel=1e-3, abs=1e-6)
    assert check_answer(big, "1000.9").correct and not check_answer(big, "1001.1").correct
    small = Answer("number", 1e-9, rel=1e-3, abs=1e-6)
    assert check_answer(small, "0").correct  # the floor
    assert not check_answer(small, "2e-6").correct
    vec = Answer("vector", (100.0, 0.0))
    assert check_answer(vec, "(100, 0.09)").correct  # relative to the largest entry
    assert not check_answer(vec, "(100, 0.11)").correct


def test_a_wrong_verdict_does_not_give_the_answer_away():
    """A relative tolerance printed as a number (0.1 % of 4.47 is 0.00447) tells the reader the answer's size."""
    answer = Answer("number", 4.47213595, rel=1e-3, abs=1e-6)
    verdict = check_answer(answer, "3")
    assert not verdict.correct and "tolerance" in verdict.message
    assert format(answer.tolerance(), ".3g") not in verdict.message and "4.47" not in verdict.message
    vec = check_answer(Answer("vector", (4.47213595, 1.0)), "(3, 1)")
    assert not vec.correct and "entry 1" in vec.message
    assert format(Answer("vector", (4.47213595, 1.0)).tolerance(), ".3g") not in vec.message


@settings(max_examples=200, deadline=None)
@given(st.floats(min_value=-1e6, max_value=1e6, allow_nan=False).filter(lambda v: v == 0 or abs(v) > 1e-12))
def test_shown_numbers_parse_within_tolerance(value):
    answer = Answer("number", value)
    assert check_answer(answer, number_text(value)).correct


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(min_value=-1e4, max_value=1e4, allow_nan=False), min_size=2, max_size=8))
def test_shown_vectors_parse_within_tolerance(values):
    answer = Answer("vector", tuple(values))
    assert check_answer(answer, vector_text(values)).correct


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300))
def test_random_text_never_raises_and_is_fast(text):
    start = time.perf_counter()
    verdict = check_answer(Answer("number", 1.0), text)
    assert time.perf_counter() - start < 1.0  # a hang guard, not a speed claim
    assert isinstance(verdict.correct, bool)
