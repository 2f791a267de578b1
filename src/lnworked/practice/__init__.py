"""Practice problems for instructors: families, per-student variants, safe answer checking,
answer keys and LMS exports (Moodle XML, GIFT).

Quick use::

    from lnworked.practice import variant, check_answer
    p = variant(seed=2024, student="ada", family="layer_norm_forward")
    print(p.statement); check_answer(p.answer, "(1, -1, 1, -1)")
"""

from lnworked.practice.answers import check_answer, parse_answer
from lnworked.practice.families import FAMILIES, get_family
from lnworked.practice.problem import Answer, Problem
from lnworked.practice.variants import assignment_slots, make_assignment, variant

__all__ = [
    "FAMILIES",
    "get_family",
    "Answer",
    "Problem",
    "variant",
    "make_assignment",
    "assignment_slots",
    "check_answer",
    "parse_answer",
]
