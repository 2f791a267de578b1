"""Worked examples are read by name: frozen records, keys that exist, no label or position lookups.

The scans below read the chapters (code and Markdown), the library and the tests as text,
so a chapter that cites ``{glue:text}`004-ex5-post_10``` or calls
``get_example("004-ex5").value("post_10")`` fails here, not in the book build, when the
registry loses that key.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import nbformat
import numpy as np
import pytest

from lnworked.display import glue_name, glue_value
from lnworked.examples import Example, Quantity, all_examples, get_example, value

ROOT = Path(__file__).resolve().parent.parent
CHAPTERS = sorted((ROOT / "book" / "chapters").glob("*.ipynb"))
LIBRARY = sorted((ROOT / "src" / "lnworked").rglob("*.py"))
TESTS = sorted((ROOT / "tests").glob("*.py"))
REGISTRY = {example.id: example for example in all_examples()}


def _chapter_sources(kind: str) -> list[tuple[str, str]]:
    """``(where, source)`` of every cell of ``kind`` in every chapter notebook."""
    found = []
    for path in CHAPTERS:
        for index, cell in enumerate(nbformat.read(path, as_version=4).cells):
            if cell.cell_type == kind:
                found.append((f"{path.name} cell {index}", cell.source))
    return found


def _python_sources() -> list[tuple[str, str]]:
    files = [p for p in LIBRARY + TESTS if p.name != Path(__file__).name]
    return _chapter_sources("code") + [(str(p.relative_to(ROOT)), p.read_text()) for p in files]


def _split_glue_name(name: str):
    """``(example id, key)`` when ``name`` starts with a registry id and a dash, else None."""
    ids = [i for i in REGISTRY if name.startswith(i + "-")]
    if not ids:
        return None
    example_id = max(ids, key=len)
    return example_id, name[len(example_id) + 1:]


GLUE_ROLE = re.compile(r"\{glue(?::\w+)?\}`([^`:]+)(?::[^`]*)?`")
GLUE_DIRECTIVE = re.compile(r"```\{glue(?::\w+)?\}\s+(\S+)")
# Named reads in code: value("id", "key"), get_example("id").value("key") / .quantity("key"),
# and the methods on a record bound from glue_example("id") / get_example("id").
VALUE_CALL = re.compile(r"\bvalue\(\s*\"([^\"]+)\"\s*,\s*\"([^\"]+)\"\s*\)")
CHAINED = re.compile(r"(?:get_example|glue_example)\(\s*\"([^\"]+)\"\s*\)\s*\.(?:value|quantity)\(\s*\"([^\"]+)\"\s*\)")
BOUND = re.compile(r"^\s*(\w+)\s*=\s*(?:get_example|glue_example)\(\s*\"([^\"]+)\"\s*\)", re.M)


def referenced_keys() -> list[tuple[str, str, str]]:
    """``(where, example id, key)`` for every worked-example quantity the chapters and library name."""
    found = []
    for where, text in _chapter_sources("markdown"):
        for name in GLUE_ROLE.findall(text) + GLUE_DIRECTIVE.findall(text):
            split = _split_glue_name(name)
            if split:
                found.append((where, *split))
    for where, text in _python_sources():
        found += [(where, i, k) for i, k in VALUE_CALL.findall(text) + CHAINED.findall(text)]
        for scope in re.split(r"\n(?=\s*def )", text):  # a bound name is read within its function
            for variable, example_id in BOUND.findall(scope):
                for key in re.findall(rf"\b{variable}\.(?:value|quantity)\(\s*\"([^\"]+)\"\s*\)", scope):
                    found.append((where, example_id, key))
    return found


def test_the_scan_finds_the_chapters_named_reads():
    """The scan is not vacuous: it sees glue roles and named reads in the chapters."""
    where = {w.split(" cell")[0] for w, _, _ in referenced_keys()}
    assert {"01_layernorm.ipynb", "02_placements.ipynb", "03_gradients_through_depth.ipynb",
            "04_forward_scale.ipynb"} <= where


def test_every_referenced_quantity_exists_in_the_registry():
    missing = [(where, i, k) for where, i, k in referenced_keys()
               if i not in REGISTRY or k not in [*REGISTRY[i].inputs, *REGISTRY[i].steps]]
    assert not missing, f"quantities named but missing from the registry: {missing}"


def test_a_missing_key_would_be_caught():
    """The check above fails for a key the registry lacks (checked on a made-up reference)."""
    assert _split_glue_name("004-ex4-post-ln-no_such_key") == ("004-ex4-post-ln", "no_such_key")
    assert "no_such_key" not in [*REGISTRY["004-ex4-post-ln"].inputs, *REGISTRY["004-ex4-post-ln"].steps]


# Reads by label text or by position: dict(x.steps), x.steps[...] by label, x.computed[i],
# unpacking x.computed, iterating steps as (label, value) pairs.
FORBIDDEN = [
    re.compile(r"dict\(\s*[\w.]+\.steps\s*\)"),
    re.compile(r"\.computed\s*\["),
    re.compile(r"^\s*[\w\s]+,[\w\s,]*=\s*[\w.()\"-]*\.computed\s*$", re.M),
    re.compile(r"for\s+\w+\s*,\s*\w+\s+in\s+[\w.()\"-]*\.steps\b"),
    re.compile(r"\.steps\[\s*\"[^\"]*\s[^\"]*\"\s*\]"),  # a key with a space is a label
]


@pytest.mark.parametrize("pattern", FORBIDDEN, ids=lambda p: p.pattern[:30])
def test_nothing_reads_an_example_by_label_or_position(pattern):
    offenders = [where for where, text in _python_sources() if pattern.search(text)]
    assert not offenders, f"{pattern.pattern} in {offenders}"


def test_forbidden_patterns_match_the_old_style_reads():
    samples = ['dict(ex8.steps)', 'post.computed[4]', 'pre_factor, pre10, post10 = ex5.computed',
               'for name, value in example.steps:', 'ex.steps["mean μ of z"]']
    for sample, pattern in zip(samples, FORBIDDEN):
        assert pattern.search(sample), sample


# --- the record itself -----------------------------------------------------------------------


def test_records_are_frozen_all_the_way_down():
    example = get_example("004-ex1")
    with pytest.raises(dataclasses.FrozenInstanceError):
        example.note = "changed"
    with pytest.raises(TypeError):
        example.steps["out"] = None
    with pytest.raises(ValueError):
        example.value("out")[0] = 99.0  # read-only array
    assert get_example("004-ex1").value("out")[0] != 99.0


def test_every_key_is_unique_within_its_record_and_results_are_steps():
    for example in all_examples():
        keys = [q.key for q in example.quantities()]
        assert len(keys) == len(set(keys)), example.id
        assert example.result_keys and set(example.result_keys) <= set(example.steps), example.id
        assert all(example.quantity(k).key == k for k in keys)


def test_seed_numbers_sit_on_the_quantity_they_state():
    for example in all_examples():
        for q in example.quantities():
            assert (q.stated is None) == (q.agrees is None), (example.id, q.key)
            if q.stated is not None:
                assert q.key in example.result_keys, (example.id, q.key)
        if example.claim is None:
            flags = [q.agrees for q in example.results.values() if q.stated is not None]
            assert example.agrees == (all(flags) if flags else None), example.id


def test_agreement_is_decided_per_quantity():
    post = get_example("004-ex4-post-ln")
    assert post.quantity("out").agrees and post.quantity("backward").agrees
    twenty_four = get_example("001-twenty-four-layers")
    assert twenty_four.quantity("post").agrees is False and twenty_four.quantity("log10").agrees is None


def test_unknown_key_and_duplicate_key_are_named_errors():
    with pytest.raises(ValueError, match=r"^key: 004-ex5 has no quantity 'nope'"):
        value("004-ex5", "nope")
    with pytest.raises(ValueError, match=r"^key:"):
        Quantity("a label with spaces", "label", 1.0)
    with pytest.raises(ValueError, match=r"^result_keys:"):
        Example("x", "seed", "t", {}, {}, ("missing",))


def test_computed_is_the_results_in_order():
    ex5 = get_example("004-ex5")
    assert ex5.computed == [ex5.value(k) for k in ex5.result_keys]
    post = get_example("004-ex4-post-ln")
    np.testing.assert_array_equal(post.computed, [*post.value("out"), post.value("backward")])


def test_glue_names_and_values():
    assert glue_name("004-ex5", "post_10") == "004-ex5-post_10"
    assert isinstance(glue_value(np.float64(0.5)), float) and glue_value(3) == 3
    assert glue_value(np.array([1.0, -2.0])) == "(1, −2)"
    assert glue_value(None) == "—"
