"""Chapter 5's table of every final loss the book reports for Post-LN without warmup.

Chapter 5 lists the numbers that chapters 7 (DeepNorm) and 8 (the trained family) glue for the
failing run. These tests run chapter 5's own cell on the stored runs and compare what it glues
with the same numbers computed another way: straight from the stored CSV rows, sorted by step,
with the number of averaged steps read from chapters 7 and 8's own cells.
"""

import re
from pathlib import Path

import nbformat
import numpy as np
import pytest

from lnworked.stress import StressConfig
from lnworked.stress.committed import committed_deepnorm, committed_family

CHAPTERS = Path(__file__).resolve().parents[1] / "book" / "chapters"
POST_VARIANTS = ("Post-LN", "Post-LN, RMSNorm")


def _cells(name):
    return nbformat.read(CHAPTERS / name, as_version=4).cells


def _constant(name, variable):
    """The integer assigned to ``variable`` in a code cell of chapter ``name``."""
    found = {int(m) for c in _cells(name) if c.cell_type == "code"
             for m in re.findall(rf"^{variable} = (\d+)", c.source, re.MULTILINE)}
    assert len(found) == 1, f"{name}: {variable} = ... not found once"
    return found.pop()


@pytest.fixture(scope="module")
def glued():
    """What chapter 5's cell for chapters 7 and 8's runs glues, run here on the stored data."""
    cells = _cells("05_stress_test.ipynb")
    imports = next(c.source for c in cells if "from myst_nb import glue" in c.source)
    cell = [c.source for c in cells if c.cell_type == "code" and "POST_LAST = " in c.source]
    assert len(cell) == 1
    values = {}
    namespace = {}
    exec("\n".join(line for line in imports.splitlines()
                   if not line.startswith("enable_compilation_cache")), namespace)
    namespace.update(config=StressConfig(), glue=lambda key, value, display: values.__setitem__(key, value))
    exec(cell[0], namespace)
    return values


def _last_mean(pairs, last):
    """The mean of the ``last`` values with the largest step, from ``(step, value)`` pairs."""
    return float(np.mean([v for _, v in sorted(pairs)[-last:]]))


def test_chapter_5_averages_as_many_steps_as_chapters_7_and_8():
    last = _constant("05_stress_test.ipynb", "POST_LAST")
    assert last == _constant("05_why_sensitive.ipynb", "DN_LAST") == _constant("06_wider_family.ipynb", "FAMILY_LAST")


def test_chapter_7s_seed_is_listed_in_chapter_5(glued):
    last, seed = _constant("05_why_sensitive.ipynb", "DN_LAST"), StressConfig().seed
    rows = [r for r in committed_deepnorm()[0] if r["variant"] == "Post-LN" and r["quantity"] == "loss"]
    seeds = sorted({r["seed"] for r in rows})
    by_seed = {s: [(r["index"], r["value"]) for r in rows if r["seed"] == s] for s in seeds}
    assert glued["ch5-dn-seed-final"] == pytest.approx(_last_mean(by_seed[seed], last), rel=1e-12)
    assert glued["ch5-dn-seed-last-step"] == pytest.approx(sorted(by_seed[seed])[-1][1], rel=1e-12)
    others = [s for s in seeds if s != seed]
    assert glued["ch5-dn-other-seeds"] == " and ".join(map(str, others))
    assert glued["ch5-dn-others"] == ", ".join(f"{_last_mean(by_seed[s], last):.2f}" for s in others)
    # chapter 8's Post-LN at the article's rate: the mean of these three runs
    assert glued["ch5-dn-mean"] == pytest.approx(np.mean([_last_mean(p, last) for p in by_seed.values()]))
    # the mean of 10 is not the last step's loss: the two differ in the listed digits
    assert f"{glued['ch5-dn-seed-final']:.2f}" != f"{glued['ch5-dn-seed-last-step']:.2f}"


def test_chapter_8s_range_is_listed_in_chapter_5(glued):
    last = _constant("06_wider_family.ipynb", "FAMILY_LAST")
    rows = [r for r in committed_family()[0] if r["variant"] in POST_VARIANTS]
    means = []
    for key in {(r["variant"], r["learning_rate"]) for r in rows}:
        runs = [r for r in rows if (r["variant"], r["learning_rate"]) == key]
        seeds = sorted({r["seed"] for r in runs})
        means.append(np.mean([_last_mean([(r["step"], r["loss"]) for r in runs if r["seed"] == s], last)
                              for s in seeds]))
    assert len(means) == 4
    assert glued["ch5-family-post-min"] == pytest.approx(min(means), rel=1e-12)
    assert glued["ch5-family-post-max"] == pytest.approx(max(means), rel=1e-12)
    assert glued["ch5-family-seeds"] == ", ".join(map(str, sorted({r["seed"] for r in rows})))


def test_the_table_types_no_number_and_chapters_7_and_8_link_to_it():
    text = "\n".join(c.source for c in _cells("05_stress_test.ipynb") if c.cell_type == "markdown")
    section = text.split("(ch5-failing-losses)=", 1)[1]
    table = [line for line in section.splitlines() if line.startswith("| ")][1:]
    assert len(table) == 7  # this page, stored run, article, stored seeds, sweep, ch7, ch8
    for line in table:
        number = line.split("|")[2]
        assert "{glue:text}" in number and not re.search(r"\d", re.sub(r"\{glue:text\}`[^`]*`", "", number)), line
    for name in ("05_why_sensitive.ipynb", "06_wider_family.ipynb"):
        assert any("<ch5-failing-losses>`" in c.source for c in _cells(name) if c.cell_type == "markdown"), name
