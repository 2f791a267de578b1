"""The ``key.json`` file: its format name and version, and how it is built.

The writer (:mod:`lnworked.practice.export`) and the grader (:mod:`lnworked.practice.check`)
both import :data:`KEY_FORMAT` and :data:`KEY_VERSION` from here, so neither depends on the
other. A key stores every variant in full (its stem, answer, tolerance and solution), so
grading never regenerates a problem.
"""

from __future__ import annotations

from lnworked.practice.problem import TOLERANCE_RULE

__all__ = ["KEY_FORMAT", "KEY_VERSION", "key_json"]

KEY_FORMAT = "lnworked-practice-key"
KEY_VERSION = 1


def key_json(seed: int, slots, assignment: dict) -> dict:
    """The machine-readable key that ``lnworked practice check`` reads."""
    return {
        "format": KEY_FORMAT,
        "version": KEY_VERSION,
        "seed": seed,
        "tolerance_rule": TOLERANCE_RULE,
        "problems": [{"id": s.id, "family": s.family, "copy": s.copy} for s in slots],
        "students": {
            student: [{"id": slot.id, "copy": slot.copy, **problem.to_json()} for slot, problem in problems]
            for student, problems in assignment.items()
        },
    }
