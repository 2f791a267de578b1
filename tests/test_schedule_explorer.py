"""Chapter 6's explorer over Post-LN's stored schedule runs (lnworked.stress.schedule_explorer).

Every expected value is computed here from the committed CSVs (``warmup-schedules.csv``,
``warmup-holds.csv``, ``warmup-sharpness.csv``, ``warmup-arrival.csv``, ``warmup-holds-arrival.csv``) read with the standard library's csv module, not through the library's
readers; the threshold is Adam's ``(2 + 2 b1) / (1 - b1)`` written out here."""

from __future__ import annotations

import csv
import math
from importlib import resources

import numpy as np
import pytest

from lnworked.explore import format_readout, spec_grid
from lnworked.stress.config import StressConfig
from lnworked.stress.schedule_explorer import (SCHEDULE_OPTIONS, schedule_explorer, schedule_explorer_spec,
                                               schedule_readouts)
from lnworked.stress.warmup_schedules import full_rate_from

B1 = StressConfig().b1
THRESHOLD = (2 + 2 * B1) / (1 - B1)
#: the steps each option takes before the full rate, as the module docstring of warmup_schedules says
BEFORE_FULL = {("constant", 0): 0, ("held", 20): 20, ("held", 120): 120, ("cut", 30): 30, ("cut", 60): 60, ("cut", 90): 90,
               ("linear", 120): 120, ("reduced", 2): None, ("reduced", 4): None, ("reduced", 8): None,
               **{(kind, k): k for kind in ("half", "quarter", "eighth") for k in (20, 60)}}


def _csv(name: str) -> list[dict]:
    with resources.as_file(resources.files("lnworked") / "data" / name) as path:
        with open(path, newline="", encoding="utf-8") as f:
            return list(csv.DictReader(f))


@pytest.fixture(scope="module")
def runs():
    """``{("cut 30", "7"): [loss at step 1, 2, ...]}`` from the committed schedules CSV."""
    out: dict = {}
    for row in _csv("warmup-schedules.csv") + _csv("warmup-holds.csv"):
        out.setdefault((f"{row['kind']} {row['k']}", row["seed"]), []).append((int(row["step"]), float(row["loss"])))
    return {key: [loss for _, loss in sorted(steps)] for key, steps in out.items()}


@pytest.fixture(scope="module")
def products():
    """``{("cut 30", "7"): {step: eta lam / threshold}}`` for Post-LN, from the committed sharpness
    CSVs; a step in both keeps the sharpness table's value (the one the section's figure draws)."""
    out: dict = {}
    for name in ("warmup-holds-arrival.csv", "warmup-arrival.csv", "warmup-sharpness.csv"):
        for row in _csv(name):
            if row["placement"] == "Post-LN":
                out.setdefault((f"{row['kind']} {row['k']}", row["seed"]), {})[int(row["step"])] = \
                    float(row["sharpness"]) / THRESHOLD
    return out


def _by_hand(runs, products, value: str, seed: str) -> dict:
    kind, k = value.split()
    losses = runs[(value, seed)]
    final = sum(losses[-10:]) / 10
    out = {"final-loss": format_readout(final), "learns": ("yes" if final < 0.1 else "no")}
    before = BEFORE_FULL[(kind, int(k))]
    measured = products.get((value, seed))
    out["loss-at-full"] = None if before is None else format_readout(losses[before])  # loss after `before` updates
    out["product-at-full"] = None if before is None or not measured else format_readout(measured[before])
    full = math.inf if before is None else before
    out["product-before"] = None if not measured else [(s, format_readout(v)) for s, v in sorted(measured.items())
                                                       if s < full]
    out["product-after"] = None if not measured else [(s, format_readout(v)) for s, v in sorted(measured.items())
                                                      if s >= full]
    return out


def _steps(text: str) -> list:
    """``"step 0: 8.31; step 10: 0.68"`` -> ``[(0, "8.31"), (10, "0.68")]``."""
    pairs = [part.split(": ") for part in text.split("; ")]
    assert all(step.startswith("step ") for step, _ in pairs), text
    return [(int(step[len("step "):]), value) for step, value in pairs]


def _agrees(texts: dict, expected: dict) -> None:
    assert texts["final-loss"] == expected["final-loss"]
    assert texts["learns"].startswith(expected["learns"] + " ")
    if expected["loss-at-full"] is None:
        assert texts["loss-at-full"].startswith("never") and texts["product-at-full"].startswith("never")
    else:
        assert texts["loss-at-full"].split(" nats")[0] == expected["loss-at-full"]
    if expected["product-at-full"] is not None:
        assert texts["product-at-full"] == expected["product-at-full"]
    for key in ("product-before", "product-after"):
        if expected[key] is None:
            assert texts[key] == "not measured for this schedule"
        elif not expected[key]:
            assert texts[key].startswith(("none", "not measured")), texts[key]
        else:
            assert _steps(texts[key]) == expected[key]


def test_full_rate_from_each_kind():
    for schedule, before in BEFORE_FULL.items():
        assert full_rate_from(schedule) == before
    with pytest.raises(ValueError, match="schedule"):
        full_rate_from(("cosine", 3))


def test_grid_holds_every_offered_schedule_and_seed_as_stored(runs):
    spec = schedule_explorer_spec()
    grid = spec_grid(spec)
    assert grid["controls"] == ["schedule", "seed"]
    seeds = sorted({s for _, s in runs}, key=int)
    values = [f"{kind} {k}" for kind, k in SCHEDULE_OPTIONS]
    assert [str(v) for v in spec.controls[0].values] == values and [str(v) for v in spec.controls[1].values] == seeds
    assert set(grid["runs"]) == {f"{v}|{s}" for v in values for s in seeds}
    assert grid["uniform"] == pytest.approx(math.log(StressConfig().vocab_size), abs=1e-4)
    for value in values:
        for seed in seeds:
            stored = grid["runs"][f"{value}|{seed}"]["loss"]
            np.testing.assert_allclose(stored, runs[(value, seed)], rtol=5e-4)


def test_readouts_agree_with_the_csvs_for_every_run(runs, products):
    spec = schedule_explorer_spec()
    grid = spec_grid(spec)
    for key, cell in grid["runs"].items():
        value, seed = key.split("|")
        _agrees(dict(zip(grid["readouts"], cell["readouts"])), _by_hand(runs, products, value, seed))
    # the section's six schedules and the moderate holds have the sharpness measured, the cut at 90
    # and the lower constant rates not
    measured = {v for v, _ in products}
    assert measured == {"constant 0", "held 20", "held 120", "cut 30", "cut 60", "linear 120",
                        *(f"{kind} {k}" for kind in ("half", "quarter", "eighth") for k in (20, 60))}


def test_the_readouts_separate_the_runs_that_learn(runs, products):
    """The section's finding in the explorer's own numbers: the runs that learn meet the full rate
    at a lower product than every run that does not, in every seed."""
    spec = schedule_explorer_spec()
    learn, fail = [], []
    for value in ("constant 0", "held 120", "cut 30", "cut 60", "linear 120"):
        for seed in ("7", "8", "9"):
            texts = spec.readouts({"schedule": value, "seed": seed})
            (learn if texts["learns"].startswith("yes") else fail).append(float(texts["product-at-full"]))
    assert learn and fail and max(learn) < min(fail)


def test_the_run_held_20_steps_meets_the_full_rate_below_the_threshold_and_does_not_learn():
    """The section's test of that finding as a rule: a run that meets the full rate below the
    threshold, lower than the warmup cut at step 60 (which learns), and still does not learn."""
    spec = schedule_explorer_spec()
    for seed in ("7", "8", "9"):
        held = spec.readouts({"schedule": "held 20", "seed": seed})
        cut = spec.readouts({"schedule": "cut 60", "seed": seed})
        assert float(held["product-at-full"]) < 1 < float(cut["product-at-full"])
        assert held["learns"].startswith("no") and cut["learns"].startswith("yes")
        assert any(float(v) > 1 for _, v in _steps(held["product-after"]))


def test_over_the_holds_the_product_at_arrival_does_not_separate_the_runs_that_learn():
    """The section's fourth measurement in the explorer's own numbers: held at eta/8 for 60 steps, a
    seed that learns meets the full rate above every seed held at eta/2 for 60 steps, none of which learns."""
    spec = schedule_explorer_spec()
    eighth = [spec.readouts({"schedule": "eighth 60", "seed": seed}) for seed in ("7", "8", "9")]
    half = [spec.readouts({"schedule": "half 60", "seed": seed}) for seed in ("7", "8", "9")]
    learners = [float(t["product-at-full"]) for t in eighth if t["learns"].startswith("yes")]
    assert learners and all(t["learns"].startswith("no") for t in half)
    assert min(learners) > max(float(t["product-at-full"]) for t in half) > 1


def test_readouts_reject_an_unknown_schedule_or_seed():
    from lnworked.stress.committed import committed_warmup_schedules
    from lnworked.stress.warmup_schedules import summarise

    seeds, losses = summarise(committed_warmup_schedules()[0])
    with pytest.raises(ValueError, match="schedule: must be one of"):
        schedule_readouts(losses, {}, ("cosine", 3), seeds[0], seeds, THRESHOLD, 0.1)
    with pytest.raises(ValueError, match="seed: must be one of"):
        schedule_readouts(losses, {}, ("constant", 0), 12345, seeds, THRESHOLD, 0.1)


def test_static_schedule_explorer_responds_to_its_controls(monkeypatch, runs, products):
    """The static HTML run by the book's explorer script (Node.js with a minimal DOM)."""
    from test_explore import _run_in_node

    monkeypatch.setenv("LNWORKED_STATIC_BUILD", "1")
    html = schedule_explorer().data
    assert 'data-explorer="schedules"' in html and 'aria-live="polite"' in html
    actions = [{"root": 0, "name": "schedule", "value": "held 120", "event": "change"},
               {"root": 0, "name": "schedule", "value": "linear 120", "event": "change"},
               {"root": 0, "name": "seed", "value": "9", "event": "change"},
               {"root": 0, "name": "schedule", "value": "reduced 4", "event": "change"}]
    results = _run_in_node(html, actions)
    assert results[0]["initial"]["ready"] == "1" and results[0]["initial"]["lines"] == 1
    seen = []
    for result, key in zip(results[1:], [("held 120", "7"), ("linear 120", "7"), ("linear 120", "9"),
                                         ("reduced 4", "9")]):
        texts = result["state"]["readouts"]
        _agrees(texts, _by_hand(runs, products, *key))
        assert result["state"]["lines"] == 1
        seen.append(texts["final-loss"])
    assert len(set(seen)) == len(seen)


def test_live_schedule_explorer_draws_the_run_and_the_uniform_guess(monkeypatch, runs, products):
    monkeypatch.delenv("LNWORKED_STATIC_BUILD", raising=False)
    box = schedule_explorer()
    assert set(box.lnw_controls) == {"schedule", "seed"}
    box.lnw_controls["schedule"].value = "cut 30"
    box.lnw_controls["seed"].value = 8
    _agrees(box.lnw_values, _by_hand(runs, products, "cut 30", "8"))
    lines = {line.get_gid(): line for line in box.lnw_figure.axes[0].get_lines()}
    assert set(lines) == {"loss", "uniform"}
    np.testing.assert_allclose(lines["uniform"].get_ydata(), math.log(StressConfig().vocab_size))
    np.testing.assert_allclose(lines["loss"].get_ydata(), runs[("cut 30", "8")])
