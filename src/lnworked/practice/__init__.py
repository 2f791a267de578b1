"""Practice problems for instructors: families, per-student variants, safe answer checking,
answer keys and LMS exports (Moodle XML, GIFT).

Quick use::

    from lnworked.practice import variant, check_answer
    p = variant(seed=2024, student="ada", family="layer_norm_forward")
    print(p.statement); check_answer(p.answer, "(1, -1, 1, -1)")
"""

from importlib import import_module

# Names load on first use, so that `lnworked` (whose parser imports lnworked.practice.cli)
# starts without numpy: benchmarks/import_time.py.
_WHERE = {
    "check_answer": "answers", "parse_answer": "answers", "FAMILIES": "families", "get_family": "families",
    "Answer": "problem", "Problem": "problem", "variant": "variants", "make_assignment": "variants",
    "assignment_slots": "variants",
}
__all__ = list(_WHERE)


def __getattr__(name):
    if name in _WHERE:
        return getattr(import_module(f"lnworked.practice.{_WHERE[name]}"), name)
    raise AttributeError(f"module 'lnworked.practice' has no attribute {name!r}")
