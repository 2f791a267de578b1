"""Per-student variants: a variant is a pure function of (assignment seed, student, problem).

The random generator of a variant is seeded with the SHA-256 digest of
``["lnworked-practice-v1", seed, student, family, copy]`` written as JSON, so it depends on
nothing else: not on the roster, its order, the other families chosen, or Python's
per-process ``hash()`` salt. Changing the salt string invalidates every old key.
A NumPy release that changed the ``Generator`` streams would change new variants too, but
grading never regenerates them: ``key.json`` stores every variant's answer.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

import numpy as np

from lnworked.practice.families import FAMILIES, get_family
from lnworked.practice.problem import Problem
from lnworked.validation import check_int

__all__ = ["SALT", "variant_rng", "variant", "Slot", "assignment_slots", "make_assignment", "clean_student"]

SALT = "lnworked-practice-v1"
MAX_STUDENT_ID = 200
MAX_COUNT = 20


def clean_student(student) -> str:
    """A student id: stripped text of 1 to 200 characters."""
    text = str(student).strip()
    if not text or len(text) > MAX_STUDENT_ID:
        raise ValueError(f"student: an id must have 1 to {MAX_STUDENT_ID} characters, got {text[:40]!r}")
    return text


def variant_rng(seed: int, student: str, family: str, copy: int = 0) -> np.random.Generator:
    """``default_rng(int(sha256(json([SALT, seed, student, family, copy]))))``."""
    seed = check_int(seed, "seed")
    key = json.dumps([SALT, seed, clean_student(student), family, int(copy)], ensure_ascii=True)
    digest = hashlib.sha256(key.encode("ascii")).digest()
    return np.random.default_rng(int.from_bytes(digest, "big"))


def variant(seed: int, student: str, family: str, copy: int = 0) -> Problem:
    """The variant of ``family`` (its ``copy``-th instance) that ``student`` gets under ``seed``."""
    return get_family(family).make(variant_rng(seed, student, family, copy))


@dataclass(frozen=True)
class Slot:
    """A problem of the assignment: its id (``Q1``, ``Q2``, ...), family and copy number."""

    id: str
    family: str
    copy: int


def assignment_slots(families=None, count: int = 1) -> list[Slot]:
    """``count`` copies of each family (all families by default), numbered Q1, Q2, ..."""
    names = list(FAMILIES) if not families else [get_family(f).name for f in families]
    count = check_int(count, "count", minimum=1, maximum=MAX_COUNT)
    pairs = [(name, copy) for name in names for copy in range(count)]
    return [Slot(f"Q{i}", name, copy) for i, (name, copy) in enumerate(pairs, start=1)]


def make_assignment(seed: int, students, families=None, count: int = 1) -> dict[str, list[tuple[Slot, Problem]]]:
    """``{student: [(slot, problem), ...]}`` for every student of the roster."""
    slots = assignment_slots(families, count)
    out = {}
    for student in students:
        sid = clean_student(student)
        if sid in out:
            raise ValueError(f"roster: student {sid!r} appears twice")
        out[sid] = [(slot, variant(seed, sid, slot.family, slot.copy)) for slot in slots]
    return out
