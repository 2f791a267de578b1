"""Grading a CSV of typed answers (columns ``student, problem, answer``) against ``key.json``.

Each (student, problem) of the key gets a verdict from :func:`lnworked.practice.answers.check_answer`;
a missing answer is wrong ("no answer"); when a pair appears twice the last row counts.
Rows for students or problems not in the key are reported, not graded. Reports are written
as CSV with cells that a spreadsheet would read as a formula neutralised by a leading ``'``.
"""

from __future__ import annotations

import csv
import json
import re
from dataclasses import dataclass
from pathlib import Path

from lnworked.practice.answers import check_answer
from lnworked.practice.keyfile import KEY_FORMAT, KEY_VERSION
from lnworked.practice.problem import Problem

__all__ = ["Graded", "load_key", "read_answers", "grade", "write_reports", "summary_text", "short"]

MAX_CSV_FIELD = 10_000_000  # let a hostile 10^6-character answer through to get its verdict
MAX_ROWS = 1_000_000


@dataclass(frozen=True)
class Graded:
    student: str
    problem: str
    family: str
    answer: str
    correct: bool
    feedback: str
    expected: str


def load_key(path) -> dict:
    """Read and sanity-check ``key.json``: ``{student: {problem id: Problem}}`` plus metadata."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ValueError(f"--key: no such file: {path}") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ValueError(f"--key: cannot read {path}: {err}") from None
    if not isinstance(data, dict) or data.get("format") != KEY_FORMAT:
        raise ValueError(f"--key: {path} is not an lnworked practice key (format {KEY_FORMAT!r})")
    if data.get("version") != KEY_VERSION:
        raise ValueError(f"--key: {path} has key version {data.get('version')!r}; this lnworked reads {KEY_VERSION}")
    try:
        students = {
            student: {entry["id"]: Problem.from_json(entry) for entry in entries}
            for student, entries in data["students"].items()
        }
        order = [p["id"] for p in data["problems"]]
    except (KeyError, TypeError, ValueError) as err:
        raise ValueError(f"--key: {path} is malformed ({err})") from None
    return {"seed": data.get("seed"), "order": order, "students": students}


def _normal_problem(text: str) -> str:
    text = text.strip().upper()
    return f"Q{text}" if text.isdigit() else text


def read_answers(path) -> tuple[dict, list[str]]:
    """``{(student, problem): answer}`` (the last row of a pair wins) and warnings."""
    path = Path(path)
    old_limit = csv.field_size_limit()
    csv.field_size_limit(MAX_CSV_FIELD)
    answers, warnings = {}, []
    try:
        with path.open(encoding="utf-8-sig", newline="") as handle:
            reader = csv.DictReader(handle)
            columns = {(c or "").strip().lower(): c for c in reader.fieldnames or []}
            missing = [c for c in ("student", "problem", "answer") if c not in columns]
            if missing:
                raise ValueError(f"--answers: {path} has no column {', '.join(missing)} "
                                 "(need student, problem, answer)")
            for line, row in enumerate(reader, start=2):
                if line > MAX_ROWS:
                    raise ValueError(f"--answers: more than {MAX_ROWS} rows")
                student = (row.get(columns["student"]) or "").strip()
                problem = _normal_problem(row.get(columns["problem"]) or "")
                if not student and not problem:
                    continue
                key = (student, problem)
                if key in answers:
                    warnings.append(f"line {line}: a second answer for {student} {problem}; the last one counts")
                answers[key] = row.get(columns["answer"]) or ""
    except FileNotFoundError:
        raise ValueError(f"--answers: no such file: {path}") from None
    except (OSError, UnicodeDecodeError, csv.Error) as err:
        raise ValueError(f"--answers: cannot read {path}: {err}") from None
    finally:
        csv.field_size_limit(old_limit)
    return answers, warnings


def grade(key: dict, answers: dict) -> tuple[list[Graded], list[str]]:
    """A :class:`Graded` row per (student, problem) of the key, and warnings about extra rows."""
    rows = []
    for student, problems in key["students"].items():
        for pid in key["order"]:
            problem = problems[pid]
            expected = problem.answer.text
            if (student, pid) not in answers:
                rows.append(Graded(student, pid, problem.family, "", False, "no answer", expected))
                continue
            text = answers[(student, pid)]
            verdict = check_answer(problem.answer, text)
            rows.append(Graded(student, pid, problem.family, text, verdict.correct, verdict.message, expected))
    warnings = [
        f"answer for {short(s)} {short(p)} does not match the key (unknown student or problem); not graded"
        for (s, p) in answers
        if s not in key["students"] or p not in key["order"]
    ]
    return rows, warnings


def short(text: str, limit: int = 60) -> str:
    """At most ``limit`` characters of untrusted text, with its length when cut."""
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text)} characters)"


_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_PLAIN_NUMBER = re.compile(r"[-+]?[0-9.]+([eE][-+]?[0-9]+)?")


def _cell(value) -> str:
    """A CSV cell that spreadsheets will not run as a formula."""
    text = str(value)
    if text.startswith(_FORMULA_START) and not _PLAIN_NUMBER.fullmatch(text):
        return "'" + text
    return text


def per_student(key: dict, rows: list[Graded]) -> list[tuple[str, int, int]]:
    return [
        (s, sum(r.correct for r in rows if r.student == s), len(key["order"])) for s in key["students"]
    ]


def per_problem(key: dict, rows: list[Graded]) -> list[tuple[str, str, int, int, int]]:
    out = []
    for pid in key["order"]:
        mine = [r for r in rows if r.problem == pid]
        family = mine[0].family if mine else ""
        out.append((pid, family, sum(r.correct for r in mine), sum(r.answer != "" for r in mine), len(mine)))
    return out


def write_reports(out, key: dict, rows: list[Graded]) -> list[Path]:
    """``results.csv`` (every verdict), ``scores.csv`` (per student), ``problems.csv`` (per problem)."""
    out = Path(out)
    tables = {
        "results.csv": (
            ["student", "problem", "family", "answer", "correct", "feedback", "expected"],
            [[r.student, r.problem, r.family, short(r.answer, 200), int(r.correct), r.feedback, r.expected]
             for r in rows],
        ),
        "scores.csv": (
            ["student", "correct", "total", "score"],
            [[s, c, t, f"{c / t:.3f}"] for s, c, t in per_student(key, rows)],
        ),
        "problems.csv": (
            ["problem", "family", "correct", "answered", "students", "fraction_correct"],
            [[p, f, c, a, n, f"{c / n:.3f}" if n else ""] for p, f, c, a, n in per_problem(key, rows)],
        ),
    }
    paths = []
    try:
        out.mkdir(parents=True, exist_ok=True)
        for name, (header, body) in tables.items():
            path = out / name
            with path.open("w", encoding="utf-8", newline="") as handle:
                writer = csv.writer(handle)
                writer.writerow(header)
                writer.writerows([[_cell(v) for v in row] for row in body])
            paths.append(path)
    except OSError as err:
        raise ValueError(f"--out: cannot write to {out}: {err.strerror or err}") from None
    return paths


def summary_text(key: dict, rows: list[Graded], warnings: list[str]) -> str:
    """What ``lnworked practice check`` prints: scores, per-problem rates, wrong answers' feedback."""
    lines = ["Scores per student:"]
    lines += [f"  {short(s, 40)}: {c}/{t}" for s, c, t in per_student(key, rows)]
    lines.append("Per problem:")
    lines += [f"  {p} {f}: {c}/{n} correct, {a} answered" for p, f, c, a, n in per_problem(key, rows)]
    wrong = [r for r in rows if not r.correct]
    if wrong:
        lines.append("Feedback on wrong answers:")
        lines += [f"  {short(r.student, 40)} {r.problem}: {short(r.answer, 40)!r}: {short(r.feedback, 120)}"
                  for r in wrong]
    lines += [f"warning: {w}" for w in warnings]
    return "\n".join(lines)
