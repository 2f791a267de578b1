"""Chapter 6's explorer: two of Post-LN's stored schedule runs side by side (lnworked.stress.schedule_explorer).

Every expected value is computed here from the committed CSVs (``warmup-schedules.csv``,
``warmup-holds.csv``, ``warmup-sharpness.csv``, ``warmup-arrival.csv``, ``warmup-holds-arrival.csv``,
``warmup-workable-sharpness.csv``) read with the standard library's csv module, not through the library's
readers; the threshold is Adam's ``(2 + 2 b1) / (1 - b1)`` and each schedule's rate (the article's
``min(1, s / 120)`` warmup, held, cut or divided) are written out here."""

from __future__ import annotations

import csv
import math
from importlib import resources

import numpy as np
import pytest

from lnworked.explore import format_readout, spec_grid
from lnworked.stress.config import StressConfig
from lnworked.stress.schedule_explorer import (PRODUCT_TOP, SCHEDULE_OPTIONS, schedule_explorer, schedule_explorer_spec,
                                               schedule_readouts)

STEPS, WARM = StressConfig().steps, 120
SEEDS = ("7", "8", "9")
from lnworked.stress.sweep import STABLE_LOSS
from lnworked.stress.warmup_schedules import full_rate_from

B1 = StressConfig().b1
THRESHOLD = (2 + 2 * B1) / (1 - B1)
#: the steps each option takes before the full rate, as the module docstring of warmup_schedules says
BEFORE_FULL = {("constant", 0): 0, ("held", 20): 20, ("held", 120): 120, ("cut", 30): 30, ("cut", 60): 60, ("cut", 90): 90,
               ("linear", 120): 120, ("linear", 60): 60, ("reduced", 2): None, ("reduced", 4): None, ("reduced", 8): None,
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
    CSVs: what a full-rate step from the run's weights and divisors at that step would face (the
    ``sharpness`` column, whatever the run's own ``rate`` there); a step in both keeps the sharpness
    table's value (the one the section's figure draws)."""
    out: dict = {}
    for name in ("warmup-workable-sharpness.csv", "warmup-holds-arrival.csv", "warmup-arrival.csv",
                 "warmup-sharpness.csv"):
        for row in _csv(name):
            if row["placement"] == "Post-LN":
                out.setdefault((f"{row['kind']} {row['k']}", row["seed"]), {})[int(row["step"])] = \
                    float(row["sharpness"]) / THRESHOLD
    return out


def _rate(value: str, step: int) -> float:
    """Step ``step``'s rate over eta under schedule ``value``, from the schedules' definitions."""
    kind, k = value.split()
    k = int(k)
    if kind == "constant":
        return 1.0
    if kind == "linear":
        return min(1.0, step / k)
    if kind == "reduced":
        return 1 / k
    first = {"held": 1 / WARM, "cut": min(1.0, step / WARM), "half": 0.5, "quarter": 0.25, "eighth": 0.125}[kind]
    return first if step <= k else 1.0


def _by_hand(runs, products, value: str, seed: str) -> dict:
    kind, k = value.split()
    losses = runs[(value, seed)]
    final = sum(losses[-10:]) / 10
    out = {"final-loss": format_readout(final), "learns": ("yes" if final < 0.1 else "no")}
    before = BEFORE_FULL[(kind, int(k))]
    measured = products.get((value, seed))
    out["loss-at-full"] = None if before is None else format_readout(losses[before])  # loss after `before` updates
    out["product-at-full"] = (None if before is None or not measured or before not in measured
                              else format_readout(measured[before]))
    out["measured"] = bool(measured)
    return out


def _agrees(texts: dict, expected: dict, tag: str = "a") -> None:
    texts = {k[len(tag) + 1:]: v for k, v in texts.items() if k.startswith(tag + "-")}
    assert texts["final-loss"] == expected["final-loss"]
    assert texts["learns"].startswith(expected["learns"] + " ")
    if expected["loss-at-full"] is None:
        assert texts["loss-at-full"].startswith("never") and texts["product-at-full"].startswith("never")
    else:
        assert texts["loss-at-full"].split(" nats")[0] == expected["loss-at-full"]
    if "product-at-full" not in texts:  # an explorer without the product's panel reads no product
        return
    if expected["product-at-full"] is not None:
        assert texts["product-at-full"] == expected["product-at-full"]
    elif expected["loss-at-full"] is not None:
        assert texts["product-at-full"] == ("not measured at that step" if expected["measured"]
                                            else "not measured for this schedule")


def test_full_rate_from_each_kind():
    for schedule, before in BEFORE_FULL.items():
        assert full_rate_from(schedule) == before
    with pytest.raises(ValueError, match="schedule"):
        full_rate_from(("cosine", 3))


def test_grid_holds_every_run_as_stored_its_rates_and_its_measured_products(runs, products):
    grid = spec_grid(schedule_explorer_spec())
    assert grid["controls"] == ["schedule", "other", "seed"]
    values = [f"{kind} {k}" for kind, k in SCHEDULE_OPTIONS]
    assert set(grid["runs"]) == {f"{v}|{s}" for v in values for s in SEEDS}
    assert grid["steps"] == list(range(STEPS + 1))
    assert [p["key"] for p in grid["panels"]] == ["rate", "product", "loss"]
    assert sum(p["height"] for p in grid["panels"]) == pytest.approx(1)
    refs = {p["key"]: p.get("ref") for p in grid["panels"]}
    # the loss panel's dotted lines: a uniform guess, and the mark below which a run has learned (reads 169, 170)
    assert refs == {"rate": None, "product": [1],
                    "loss": [pytest.approx(math.log(StressConfig().vocab_size), abs=1e-4), STABLE_LOSS]}
    assert grid["panels"][2]["y_min"] < STABLE_LOSS
    for value in values:
        np.testing.assert_allclose(grid["rates"][value], [_rate(value, s) for s in range(1, STEPS + 1)], rtol=5e-4)
        for seed in SEEDS:
            cell = grid["runs"][f"{value}|{seed}"]
            np.testing.assert_allclose(cell["loss"], runs[(value, seed)], rtol=5e-4)
            measured = products.get((value, seed), {})
            assert len(cell["product"]) == STEPS + 1
            assert {s for s, v in enumerate(cell["product"]) if v is not None} == set(measured)
            for step, v in measured.items():
                assert cell["product"][step] == pytest.approx(v, rel=5e-4)
    # the product's axis holds every reading from the lowest up to PRODUCT_TOP; above it only the one reading
    # that does not repeat (held small for 120 steps, seed 9, step 152), drawn hollow on the top edge
    product = next(p for p in grid["panels"] if p["key"] == "product")
    shown = [v for cell in grid["runs"].values() for v in cell["product"] if v is not None]
    assert product["y_min"] <= min(shown) and product["y_max"] == PRODUCT_TOP and product["clip_top"] is True
    above = [(key, step) for key, cell in grid["runs"].items() for step, v in enumerate(cell["product"])
             if v is not None and v > PRODUCT_TOP]
    assert above == [("held 120|9", 152)]
    assert sorted(shown)[-2] < PRODUCT_TOP / 10  # the rest sit well inside the axis
    assert product["log_every"] == 1  # read 126: ticks two decades apart squashed the readings near 1


def test_readouts_agree_with_the_csvs_for_every_pair_of_runs(runs, products):
    spec = schedule_explorer_spec()
    values = [f"{kind} {k}" for kind, k in SCHEDULE_OPTIONS]
    for a in values:
        for b in (values[0], a, values[-1]):
            for seed in SEEDS:
                texts = spec.readouts({"schedule": a, "other": b, "seed": seed})
                _agrees(texts, _by_hand(runs, products, a, seed), "a")
                _agrees(texts, _by_hand(runs, products, b, seed), "b")
    # the section's six schedules, the moderate holds and the linear warmup to step 60 (before its full rate
    # arrives) have the sharpness measured, the cut at 90 and the lower constant rates not
    assert {v for v, _ in products} == {"constant 0", "held 20", "held 120", "cut 30", "cut 60", "linear 120", "linear 60",
                                        *(f"{kind} {k}" for kind in ("half", "quarter", "eighth") for k in (20, 60))}


def _pair(spec, a: str, b: str, seed: str) -> tuple[dict, dict]:
    texts = spec.readouts({"schedule": a, "other": b, "seed": seed})
    return tuple({k[2:]: v for k, v in texts.items() if k.startswith(tag)} for tag in ("a-", "b-"))


def test_the_readouts_separate_the_five_schedules_that_learn(runs, products):
    """The section's finding in the explorer's own numbers: of the five schedules, the runs that learn meet
    the full rate at a lower product than every run that does not, in every seed."""
    spec = schedule_explorer_spec()
    learn, fail = [], []
    for value in ("constant 0", "held 120", "cut 30", "cut 60", "linear 120"):
        for seed in SEEDS:
            texts, _ = _pair(spec, value, "cut 60", seed)
            (learn if texts["learns"].startswith("yes") else fail).append(float(texts["product-at-full"]))
    assert learn and fail and max(learn) < min(fail)


def test_the_default_pair_is_the_sections_counterexample(runs, products):
    """The explorer opens on the run held small for 20 steps beside the warmup cut at step 60: the held run meets
    the full rate below the threshold and lower than the cut warmup, is above it again within the steps
    measured, and does not learn; the cut warmup learns."""
    spec = schedule_explorer_spec()
    assert spec.defaults()["schedule"] == "held 20" and spec.defaults()["other"] == "cut 60"
    grid = spec_grid(spec)
    for seed in SEEDS:
        held, cut = _pair(spec, "held 20", "cut 60", seed)
        assert float(held["product-at-full"]) < 1 < float(cut["product-at-full"])
        assert held["learns"].startswith("no") and cut["learns"].startswith("yes")
        after = [v for s, v in enumerate(grid["runs"][f"held 20|{seed}"]["product"]) if v is not None and s > 20]
        assert any(v > 1 for v in after)


def test_over_the_holds_the_product_at_arrival_does_not_separate_the_runs_that_learn():
    """The section's fourth measurement in the explorer's own numbers: held at eta/8 for 60 steps, a
    seed that learns meets the full rate above every seed held at eta/2 for 60 steps, none of which learns."""
    spec = schedule_explorer_spec()
    pairs = [_pair(spec, "eighth 60", "half 60", seed) for seed in SEEDS]
    learners = [float(e["product-at-full"]) for e, _ in pairs if e["learns"].startswith("yes")]
    assert learners and all(h["learns"].startswith("no") for _, h in pairs)
    assert min(learners) > max(float(h["product-at-full"]) for _, h in pairs) > 1


def test_bad_arguments_say_which_and_why():
    from lnworked.stress.committed import committed_warmup_schedules
    from lnworked.stress.warmup_schedules import summarise

    seeds, losses = summarise(committed_warmup_schedules()[0])
    with pytest.raises(ValueError, match="schedule: must be one of"):
        schedule_readouts(losses, {}, ("cosine", 3), seeds[0], seeds, THRESHOLD, 0.1)
    with pytest.raises(ValueError, match="seed: must be one of"):
        schedule_readouts(losses, {}, ("constant", 0), 12345, seeds, THRESHOLD, 0.1)
    with pytest.raises(ValueError, match="^panels: must be distinct keys"):
        schedule_explorer_spec(None, ("rate", "sharpness"))
    with pytest.raises(ValueError, match="^panels: must be distinct keys"):
        schedule_explorer_spec(None, ("loss", "loss"))
    with pytest.raises(ValueError, match="^default: must be two of"):
        schedule_explorer_spec(None, ("loss",), (("cut", 45), ("cut", 60)))


def test_static_schedule_explorer_responds_to_its_controls(monkeypatch, runs, products):
    """The static HTML run by the book's explorer script (Node.js with a minimal DOM): both runs' readouts,
    two lines per panel, a dot per measured product."""
    from test_explore import _run_in_node

    monkeypatch.setenv("LNWORKED_STATIC_BUILD", "1")
    html = schedule_explorer().data
    assert 'data-explorer="schedules"' in html and 'aria-live="polite"' in html
    actions = [{"root": 0, "name": "schedule", "value": "held 120", "event": "change"},
               {"root": 0, "name": "other", "value": "linear 120", "event": "change"},
               {"root": 0, "name": "seed", "value": "9", "event": "change"},
               {"root": 0, "name": "schedule", "value": "reduced 4", "event": "change"}]
    results = _run_in_node(html, actions)
    assert results[0]["initial"]["ready"] == "1" and results[0]["initial"]["lines"] == 6
    seen = []
    for result, (a, b, seed) in zip(results[1:], [("held 120", "cut 60", "7"), ("held 120", "linear 120", "7"),
                                                 ("held 120", "linear 120", "9"), ("reduced 4", "linear 120", "9")]):
        state = result["state"]
        _agrees(state["readouts"], _by_hand(runs, products, a, seed), "a")
        _agrees(state["readouts"], _by_hand(runs, products, b, seed), "b")
        assert state["lines"] == 6
        assert state["points"] == len(products.get((a, seed), {})) + len(products.get((b, seed), {}))
        seen.append(tuple(sorted(state["readouts"].items())))
    assert len(set(seen)) == len(seen)


def test_a_page_can_show_fewer_panels_and_its_own_pair(monkeypatch, runs, products):
    """The previous section's explorer: rates and losses only, the eta/2 and eta/4 holds."""
    from test_explore import _run_in_node

    monkeypatch.setenv("LNWORKED_STATIC_BUILD", "1")
    # it opens on random seed 9: seed 7's losses at the jump round to the 11-seed means the text quotes, and
    # four reads (192-205) took the explorer's default for those means
    html = schedule_explorer(panels=("rate", "loss"), default=(("half", 60), ("quarter", 60)), seed=9).data
    (result,) = _run_in_node(html, [])
    state = result["initial"]
    assert state["lines"] == 4 and state["points"] == 0
    assert set(state["readouts"]) == {f"{tag}-{k}" for tag in "ab" for k in ("loss-at-full", "final-loss", "learns")}
    grid = spec_grid(schedule_explorer_spec(None, ("rate", "loss"), (("half", 60), ("quarter", 60))))
    assert not any("product" in cell for cell in grid["runs"].values())  # nothing the page does not draw
    _agrees(state["readouts"], _by_hand(runs, products, "half 60", "9"), "a")
    _agrees(state["readouts"], _by_hand(runs, products, "quarter 60", "9"), "b")
    with pytest.raises(ValueError, match="^seed: must be one of the stored random seeds"):
        schedule_explorer_spec(None, ("loss",), seed=12345)


def test_live_schedule_explorer_draws_both_runs_in_every_panel(monkeypatch, runs, products):
    monkeypatch.delenv("LNWORKED_STATIC_BUILD", raising=False)
    box = schedule_explorer()
    assert set(box.lnw_controls) == {"schedule", "other", "seed"}
    box.lnw_controls["schedule"].value = "cut 30"
    box.lnw_controls["other"].value = "constant 0"
    box.lnw_controls["seed"].value = 8
    _agrees(box.lnw_values, _by_hand(runs, products, "cut 30", "8"), "a")
    _agrees(box.lnw_values, _by_hand(runs, products, "constant 0", "8"), "b")
    lines = {line.get_gid(): line for ax in box.lnw_figure.axes for line in ax.get_lines()}
    assert {"rate-a", "rate-b", "product-a", "product-b", "loss-a", "loss-b", "threshold", "uniform", "learned"} <= set(lines)
    np.testing.assert_allclose(lines["uniform"].get_ydata(), math.log(StressConfig().vocab_size))
    np.testing.assert_allclose(lines["learned"].get_ydata(), STABLE_LOSS)
    np.testing.assert_allclose(lines["threshold"].get_ydata(), 1.0)
    np.testing.assert_allclose(lines["loss-a"].get_ydata(), runs[("cut 30", "8")])
    np.testing.assert_allclose(lines["rate-a"].get_ydata(), [_rate("cut 30", s) for s in range(1, STEPS + 1)])
    measured = products[("constant 0", "8")]
    np.testing.assert_allclose(lines["product-b"].get_xdata(), sorted(measured))
    np.testing.assert_allclose(lines["product-b"].get_ydata(), [measured[s] for s in sorted(measured)], rtol=5e-4)


def test_the_product_caption_names_exactly_the_runs_whose_product_was_not_measured():
    """Diff review of stop 42: the caption's list was typed by hand. It is derived from the stored
    sharpness tables: every offered schedule with no reading for any seed, and no other."""
    from lnworked.stress.schedule_explorer import unmeasured_text
    from lnworked.stress.warmup_schedules import schedule_name

    measured = {(r["kind"], int(r["k"])) for name in ("warmup-sharpness.csv", "warmup-arrival.csv",
                                                       "warmup-holds-arrival.csv", "warmup-workable-sharpness.csv")
                for r in _csv(name) if r.get("placement", "Post-LN") == "Post-LN"}
    sharpness = {(kind, k, 7): {0: 1.0} for kind, k in measured}
    text = unmeasured_text(SCHEDULE_OPTIONS, sharpness, [7], WARM)
    for s in SCHEDULE_OPTIONS:
        if s[0] != "reduced":
            assert (schedule_name(s, WARM) in text) != (s in measured), s
        else:
            assert s not in measured and "the lower constant rates" in text
    assert f"not measured for {text})" in schedule_explorer_spec().caption
    assert unmeasured_text([("constant", 0)], {("constant", 0, 7): {0: 1.0}}, [7], 120) == "no run shown"


def test_kernel_figure_draws_the_reading_above_the_top_hollow_on_its_edge():
    """In Jupyter the same panels: the one reading above PRODUCT_TOP (held small for 120 steps, seed 9,
    step 152) sits on the product panel's top edge as a hollow marker; the axis ends at PRODUCT_TOP."""
    from matplotlib.figure import Figure

    spec = schedule_explorer_spec()
    fig = Figure()
    spec.draw(fig.add_subplot(), {"schedule": "held 120", "other": "cut 60", "seed": 9}, spec)
    product = fig.axes[1]
    (above,) = [ln for ln in product.get_lines() if ln.get_gid() == "product-a-above"]
    assert list(above.get_xdata()) == [152] and list(above.get_ydata()) == [PRODUCT_TOP]
    assert above.get_markerfacecolor() == "white"
    assert product.get_ylim()[1] == PRODUCT_TOP
    assert not [ln for ln in product.get_lines() if ln.get_gid() == "product-b-above"]  # the other run stays inside
