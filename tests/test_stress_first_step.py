"""The loss along AdamW's first step over a grid of rates (lnworked.stress.first_step) and its explorer.

Independent routes: the safe rate against closed forms (a share linear in log s, whose crossing
is exp((a - threshold) / b); a quadratic loss, whose share 1 - c s crosses one half at 1 / (2 c));
the rows against the first AdamW step by hand in NumPy on the unrolled Flax model
(tests/test_stress_first_update.py's route); the stored delivered share at the article's rate
against first_update_table recomputed now; the explorer's readouts from the CSV's rows by hand.
"""

from __future__ import annotations

import math

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

from lnworked.stress.committed import committed_first_step  # noqa: E402
from lnworked.stress.config import StressConfig, warmup_for  # noqa: E402
from lnworked.stress.first_step import (FIRST_STEP_DEPTHS, FIRST_STEP_SEEDS, POSITIONS, delivered_share,  # noqa: E402
                                        first_step_curves, first_step_rows, read_first_step_csv, safe_rate,
                                        safe_rates, step_rates, write_first_step_csv)


#: The stored rates (as the CSV holds them: 9 significant digits).
RATES = sorted({r["learning_rate"] for r in committed_first_step()[0]})


# -- the safe rate against closed forms


@pytest.mark.parametrize("threshold", [0.5, 0.3, 0.9])
def test_safe_rate_is_exact_for_a_share_linear_in_log_step(threshold):
    """d(s) = a - b log s crosses the threshold at s* = exp((a - threshold) / b), wherever the grid lies."""
    a, b = -1.0, 0.25
    steps = np.geomspace(1e-5, 1e-1, 13)
    shares = a - b * np.log(steps)
    expected = math.exp((a - threshold) / b)
    assert steps[0] < expected < steps[-1]
    assert safe_rate(steps[::-1], shares[::-1], threshold) == pytest.approx(expected, rel=1e-12)


def test_safe_rate_of_a_quadratic_loss():
    """f(s) = f0 + g s + h s^2 / 2 with g < 0 < h: the share is 1 + h s / (2 g), one half at s* = -g / h."""
    f0, g, h = 4.0, -150.0, 2.0e5
    exact = -g / h
    for steps in (np.geomspace(1e-6, 1e-2, 9) * exact / 1e-4,    # s* on the grid (its 5th point)
                  np.geomspace(1e-6, 1e-2, 2001)):              # s* between points, a fine grid
        f = f0 + g * steps + h * steps ** 2 / 2
        shares = delivered_share(f0, f, g, steps)
        np.testing.assert_allclose(shares, 1 + h * steps / (2 * g), rtol=1e-9)
        assert safe_rate(steps, shares) == pytest.approx(exact, rel=1e-3)


def test_safe_rate_outside_the_grid_and_with_nan():
    steps = np.array([1e-4, 1e-3, 1e-2])
    assert safe_rate(steps, [0.9, 0.8, 0.7]) == math.inf
    assert safe_rate(steps, [0.4, 0.3, 0.2]) == 0.0
    assert safe_rate(steps, [0.9, 0.6, math.nan]) == 1e-3  # nothing to interpolate towards
    # the largest step that still delivers enough counts, even after a dip
    assert safe_rate(steps, [0.4, 0.6, 0.2]) == pytest.approx(
        math.exp(math.log(1e-3) + (0.6 - 0.5) / (0.6 - 0.2) * (math.log(1e-2) - math.log(1e-3))))


@pytest.mark.parametrize("steps, shares, threshold, name", [
    ([1e-3, 1e-2], [0.9, 0.1], 0.0, "threshold"),
    ([1e-3, 1e-2], [0.9, 0.1], math.nan, "threshold"),
    ([1e-3, 1e-2], [0.9, 0.1], "0.5", "threshold"),
    ([1e-3, -1e-2], [0.9, 0.1], 0.5, "steps"),
    ([1e-3, 1e-3], [0.9, 0.1], 0.5, "steps"),
    ([], [], 0.5, "steps"),
    ([1e-3, 1e-2], [0.9], 0.5, "shares"),
])
def test_safe_rate_rejects_bad_arguments_naming_them(steps, shares, threshold, name):
    with pytest.raises(ValueError, match=name):
        safe_rate(steps, shares, threshold)


def test_step_rates_hold_warmups_first_rate_and_reach_past_four_times_the_target():
    config = StressConfig()
    rates = step_rates(config)
    assert list(rates) == sorted(rates) and len(set(rates)) == len(rates)
    assert rates[0] == pytest.approx(config.learning_rate / warmup_for(config.steps), rel=1e-12)
    assert any(r == config.learning_rate for r in rates)
    assert rates[-1] >= 4 * config.learning_rate


@pytest.mark.parametrize("positions", [[], [0.0], [0.5, 1.5], [0.5, 0.5], "01"])
def test_first_step_rows_reject_bad_positions(positions):
    with pytest.raises(ValueError, match="positions"):
        first_step_rows([1], [5], config=None, positions=positions)


# -- the rows against the first step by hand


def test_first_step_rows_are_the_first_adam_step_by_hand(tmp_path):
    """Each row's f(t eta) and RMS logit change against NumPy's Adam step at rate t eta on the unrolled
    Flax model; t = 0 is the start; the CSV reads back; the slope is <g, u> (the share tends to 1)."""
    from test_stress_first_update import SMALL, _by_hand

    rates, positions = [2e-3 / 120, 2e-3], [0.0, 0.5, 1.0]
    rows = first_step_rows([1, 3], [5], SMALL, rates=rates, positions=positions)
    assert len(rows) == 2 * 2 * len(rates) * len(positions)
    write_first_step_csv(rows, tmp_path / "first-step.csv")
    back = read_first_step_csv(tmp_path / "first-step.csv")
    for row, read in zip(rows, back):
        for key, value in row.items():
            assert read[key] == (pytest.approx(value, rel=1e-8) if isinstance(value, float) else value), key
    for row in rows:
        if row["t"] == 0:
            assert row["loss_after"] == row["loss"] and row["rms_delta_logits"] == 0
            continue
        moved, delta = _by_hand(SMALL, row["layers"], row["placement"] == "Pre-LN", 5, row["t"] * row["learning_rate"])
        assert row["rms_delta_logits"] == pytest.approx(moved, rel=2e-2)
        assert row["loss_after"] - row["loss"] == pytest.approx(delta, rel=5e-2, abs=2e-6)
    small = [r for r in rows if r["learning_rate"] == rates[0] and r["t"] == 1.0]
    for r in small:  # warmup's first rate on this small model: the step follows its tangent
        assert delivered_share(r["loss"], r["loss_after"], r["slope"], r["learning_rate"]) == pytest.approx(1, abs=0.05)


# -- the stored measurement


@pytest.fixture(scope="module")
def stored():
    rows, info = committed_first_step()
    return rows, info, first_step_curves(rows)


def test_stored_first_step_is_the_full_grid_with_its_provenance(stored):
    rows, info, curves = stored
    assert info["command"].startswith("lnworked stress first-step") and info["seconds"] > 0
    assert StressConfig(**info["config"]) == StressConfig() and info["rows"] == len(rows)
    assert set(curves) == {(p, d, s) for p in ("Pre-LN", "Post-LN") for d in FIRST_STEP_DEPTHS for s in FIRST_STEP_SEEDS}
    for c in curves.values():
        np.testing.assert_allclose(c["rates"], step_rates())
        np.testing.assert_allclose(c["positions"], POSITIONS)
        assert np.all(np.isfinite(c["loss_after"])) and c["slope"] < 0 and c["rms_logits"] > 0
        np.testing.assert_array_equal(c["loss_after"][:, 0], c["loss"])


def test_stored_tangent_is_the_losss_derivative(stored):
    """As s -> 0 the loss follows its tangent: at the smallest stored step (t = 0.05 of warmup's first rate)
    every case delivers within 10% of its tangent's change (the loss moves by only a few float32 rounding
    steps there, about 5e-7 nats each, hence not closer)."""
    _, _, curves = stored
    for key, c in curves.items():
        step = c["rates"][0] * c["positions"][1]
        assert delivered_share(c["loss"], c["loss_after"][0, 1], c["slope"], step) == pytest.approx(1, abs=0.1), key


def test_stored_safe_rate_sits_between_the_stored_steps_that_bracket_one_half(stored):
    """Read from the rows by hand: the stored step just below each safe rate delivers at least half,
    the one just above delivers less."""
    rows, _, _ = stored
    for key, rate in safe_rates(rows).items():
        mine = {}
        for r in rows:
            if (r["placement"], r["layers"], r["seed"]) == key and r["t"] > 0:
                s = r["t"] * r["learning_rate"]
                mine[float(f"{s:.12g}")] = (r["loss_after"] - r["loss"]) / (s * r["slope"])
        steps = sorted(mine)
        assert rate > 0, key  # the share at warmup's first rate is at least one half in every case
        if rate == math.inf:  # every stored step delivers at least half
            assert min(mine.values()) >= 0.5, key
            continue
        below = max(s for s in steps if s <= rate)
        above = min(s for s in steps if s > rate)
        assert mine[below] >= 0.5 > mine[above], key
        assert all(mine[s] < 0.5 for s in steps if s > rate), key  # the largest such rate


@pytest.mark.slow
def test_stored_delivered_share_at_the_articles_rate_recomputes(stored):
    """Seed 7 at 12 blocks: the full step at 2e-3 from first_update_table now (float32: 1e-5 nats)."""
    from lnworked.stress.first_update import first_update_table

    _, _, curves = stored
    config = StressConfig()
    for row in first_update_table([12], [config.learning_rate], [7], config):
        c = curves[("Pre-LN" if row["pre_norm"] else "Post-LN", 12, 7)]
        r = int(np.flatnonzero(c["rates"] == config.learning_rate)[0])
        assert c["loss_after"][r, -1] - c["loss"] == pytest.approx(row["delta_loss"], abs=1e-5)
        assert c["slope"] * config.learning_rate == pytest.approx(row["linear_delta_loss"], rel=1e-5)
        assert delivered_share(c["loss"], c["loss_after"][r, -1], c["slope"], config.learning_rate) == pytest.approx(
            row["delta_loss"] / row["linear_delta_loss"], abs=1e-3)
        assert c["rms_delta_logits"][r, -1] / c["rms_logits"] == pytest.approx(row["relative"], rel=1e-4)


def test_full_step_shares_are_the_rows_by_hand(stored):
    from lnworked.stress.first_step import full_step_shares

    rows, _, curves = stored
    for placement in ("Pre-LN", "Post-LN"):
        for layers, rate in ((12, 2e-3), (48, RATES[0])):
            expected = [_by_hand(rows, placement, layers, seed, rate)[0] for seed in FIRST_STEP_SEEDS]
            np.testing.assert_allclose(full_step_shares(curves, placement, layers, rate), expected, rtol=1e-9)
    for args, name in ((("Pre", 12, 2e-3), "placement"), (("Pre-LN", 5, 2e-3), "layers"),
                       (("Pre-LN", 12, 3e-3), "rate")):
        with pytest.raises(ValueError, match=name):
            full_step_shares(curves, *args)


def test_safe_rate_figure_draws_the_geometric_mean_over_seeds(stored):
    from lnworked.stress.first_step import safe_rate_figure

    rows, _, _ = stored
    safe = safe_rates(rows)
    config = StressConfig()
    ax = safe_rate_figure(rows).axes[0]
    lines = {line.get_gid(): line for line in ax.get_lines() if line.get_gid()}
    for placement in ("Pre-LN", "Post-LN"):
        xs = lines[placement].get_xdata()
        for x, y in zip(xs, lines[placement].get_ydata()):
            values = [safe[(placement, int(x), seed)] for seed in FIRST_STEP_SEEDS]
            assert y == pytest.approx(np.prod(values) ** (1 / len(values)), rel=1e-9)
        above = {d for (p, d, _), v in safe.items() if p == placement and math.isinf(v)}
        assert set(xs).isdisjoint(above)
        if above:
            assert set(lines[f"{placement} above"].get_xdata()) == above
    heights = {round(float(line.get_ydata()[0]), 12) for line in ax.get_lines() if line.get_gid() is None}
    assert {round(config.learning_rate, 12), round(config.learning_rate / warmup_for(config.steps), 12)} <= heights
    assert ax.get_xscale() == ax.get_yscale() == "log"


# -- the explorer (lnworked.stress.first_step_explorer)


def _by_hand(rows, placement, layers, seed, rate, t=1.0):
    """``(share at t, relative logit change at t, curve f(t eta) - f(0) over all t)`` read from the rows."""
    mine = sorted((r["t"], r) for r in rows if (r["placement"], r["layers"], r["seed"]) == (placement, layers, seed)
                  and r["learning_rate"] == rate)
    at = next(r for position, r in mine if abs(position - t) < 1e-9)
    share = (at["loss_after"] - at["loss"]) / (t * rate * at["slope"])
    return share, at["rms_delta_logits"] / at["rms_logits"], np.array([r["loss_after"] - r["loss"] for _, r in mine])


def test_explorer_offers_exactly_the_stored_grid(stored):
    from lnworked.stress.first_step_explorer import first_step_explorer_spec

    rows, _, _ = stored
    options = {c.name: list(c.values) for c in first_step_explorer_spec().controls}
    positions = options.pop("t")
    assert options == {"depth": sorted({r["layers"] for r in rows}),
                       "seed": ["mean", *sorted({r["seed"] for r in rows})],
                       "rate": sorted({r["learning_rate"] for r in rows})}
    seed = first_step_explorer_spec().control("seed")
    assert seed.default == "mean"  # the averages the chapter quotes, named in the option and the caption
    assert dict(seed.options)["mean"] == "mean of seeds " + ", ".join(str(s) for s in FIRST_STEP_SEEDS)
    assert dict(seed.options)["mean"] in first_step_explorer_spec().caption
    np.testing.assert_allclose(positions, sorted({r["t"] for r in rows if r["t"] > 0}), atol=1e-12)
    labels = dict(first_step_explorer_spec().control("rate").options)
    config = StressConfig()
    assert "warmup" in labels[min(options["rate"])] and "article" in labels[config.learning_rate]


def test_explorer_readouts_are_the_rows_by_hand(stored):
    from lnworked.stress.first_step_explorer import FIRST_STEP_READOUT_KEYS, first_step_readouts

    rows, _, curves = stored
    for layers, seed, rate, t in ((12, 7, 2e-3, 1.0), (48, 9, RATES[0], 1.0), (1, 8, RATES[-1], 1.0),
                                  (12, 8, 2e-3, 0.25)):
        shown = first_step_readouts(curves, layers, seed, rate, t)
        assert set(shown) == set(FIRST_STEP_READOUT_KEYS)  # the delivered share, per placement
        for placement, short in (("Pre-LN", "pre"), ("Post-LN", "post")):
            share, _, _ = _by_hand(rows, placement, layers, seed, rate, t)
            assert shown[f"{short}-delivered"] == f"{100 * share:.1f}\u00a0%"


def _mean_by_hand(rows, placement, layers, rate, t=1.0):
    """``(mean share, mean curve)`` over the stored seeds, by hand."""
    seeds = sorted({r["seed"] for r in rows})
    each = [_by_hand(rows, placement, layers, seed, rate, t) for seed in seeds]
    return sum(e[0] for e in each) / len(seeds), sum(e[2] for e in each) / len(seeds)


def test_explorer_mean_of_seeds_is_the_chapters_averages_by_hand(stored):
    """The default seed option: the mean over seeds of each seed's share."""
    from lnworked.stress.first_step import full_step_shares
    from lnworked.stress.first_step_explorer import MEAN_OF_SEEDS, first_step_readouts

    rows, _, curves = stored
    for layers, rate, t in ((12, 2e-3, 1.0), (48, RATES[0], 1.0), (6, RATES[-1], 0.5), (12, 2e-3, 0.25)):
        shown = first_step_readouts(curves, layers, MEAN_OF_SEEDS, rate, t)
        for placement, short in (("Pre-LN", "pre"), ("Post-LN", "post")):
            share, _ = _mean_by_hand(rows, placement, layers, rate, t)
            assert shown[f"{short}-delivered"] == f"{100 * share:.1f}\u00a0%"
            if t == 1.0:  # the chapter's glue: full_step_shares(...).mean()
                assert shown[f"{short}-delivered"] == f"{100 * full_step_shares(curves, placement, layers, rate).mean():.1f}\u00a0%"
            one = first_step_readouts(curves, layers, FIRST_STEP_SEEDS[0], rate, t)
            assert shown[f"{short}-delivered"] != one[f"{short}-delivered"]  # the mean is not seed 7's


#: A hand-built table of safe rates, (placement, layers, seed) -> s*, for mean_safe_rate.
_SAFE = {("Pre-LN", 12, 7): 1e-3, ("Pre-LN", 12, 8): 8e-3, ("Pre-LN", 12, 9): 2e-3,
         ("Post-LN", 12, 7): 1e-4, ("Post-LN", 12, 8): math.inf, ("Post-LN", 12, 9): 4e-4,
         ("Post-LN", 48, 7): 0.0, ("Post-LN", 48, 8): 3e-5}


def test_mean_safe_rate_is_the_geometric_mean_over_the_chosen_seeds():
    """By hand: the n-th root of the product of the seeds' safe rates (math.prod), over all stored
    seeds or the chosen ones; an infinite or zero seed carries the mean with it."""
    from lnworked.stress.first_step import mean_safe_rate

    assert mean_safe_rate(_SAFE, "Pre-LN", 12) == pytest.approx(math.prod([1e-3, 8e-3, 2e-3]) ** (1 / 3), rel=1e-12)
    assert mean_safe_rate(_SAFE, "Pre-LN", 12, seeds=[9, 7]) == pytest.approx(math.sqrt(1e-3 * 2e-3), rel=1e-12)
    assert mean_safe_rate(_SAFE, "Pre-LN", 12, seeds=(8,)) == pytest.approx(8e-3, rel=1e-12)
    assert mean_safe_rate(_SAFE, "Post-LN", 12, seeds=[7, 9]) == pytest.approx(2e-4, rel=1e-12)
    assert mean_safe_rate(_SAFE, "Post-LN", 12) == math.inf  # seed 8 above the grid
    assert mean_safe_rate(_SAFE, "Post-LN", 48) == 0.0  # seed 7 below it
    assert mean_safe_rate(_SAFE, "Post-LN", 48, seeds=[8]) == pytest.approx(3e-5, rel=1e-12)


@pytest.mark.parametrize("placement, layers, seeds, name", [
    ("Pre", 12, None, "placement"), ("Pre-LN", 48, None, "layers"), ("Pre-LN", 12, [7, 10], "seeds"),
    ("Pre-LN", 12, [], "seeds"), ("Pre-LN", 12, [7, 7], "seeds"), ("Pre-LN", 12, 7, "seeds"),
    ("Pre-LN", 12, "7", "seeds")])
def test_mean_safe_rate_rejects_bad_arguments_naming_them(placement, layers, seeds, name):
    from lnworked.stress.first_step import mean_safe_rate

    with pytest.raises(ValueError, match=name):
        mean_safe_rate(_SAFE, placement, layers, seeds)


def test_mean_safe_rate_of_the_stored_grid_is_the_rows_by_hand(stored):
    """The chapters' safe-rate means: exp(mean log s*) of the per-seed safe rates read from the rows."""
    from lnworked.stress.first_step import mean_safe_rate

    rows, _, _ = stored
    safe = safe_rates(rows)
    for placement in ("Pre-LN", "Post-LN"):
        for layers in (6, 12, 48):
            logs = [math.log(safe[(placement, layers, seed)]) for seed in FIRST_STEP_SEEDS]
            assert mean_safe_rate(safe, placement, layers) == pytest.approx(math.exp(sum(logs) / len(logs)),
                                                                            rel=1e-12)


def test_explorer_mean_of_seeds_above_the_grid_stays_above():
    from lnworked.stress.first_step import geometric_mean_rate

    assert geometric_mean_rate([1e-3, math.inf]) == math.inf and geometric_mean_rate([0.0, 1e-3]) == 0.0
    assert geometric_mean_rate([1e-3, 1e-1]) == pytest.approx(1e-2)


@pytest.mark.parametrize("layers, seed, rate, t, name", [(5, 7, 2e-3, 1.0, "layers"), (5, "mean", 2e-3, 1.0, "layers"), (12, 10, 2e-3, 1.0, "layers"),
                                                          (12, 7, 3e-3, 1.0, "rate"), (12, 7, 2e-3, 0.0, "t"),
                                                          (12, 7, 2e-3, 0.33, "t")])
def test_explorer_readouts_reject_a_setting_that_is_not_stored(stored, layers, seed, rate, t, name):
    from lnworked.stress.first_step_explorer import first_step_readouts

    _, _, curves = stored
    with pytest.raises(ValueError, match=name):
        first_step_readouts(curves, layers, seed, rate, t)


def test_explorer_grid_holds_each_settings_curves_and_tangents(stored):
    from lnworked.explore import spec_grid
    from lnworked.stress.first_step_explorer import first_step_explorer_spec

    rows, _, _ = stored
    grid = spec_grid(first_step_explorer_spec())
    assert len(grid["cells"]) == len(FIRST_STEP_DEPTHS) * (len(FIRST_STEP_SEEDS) + 1) * len(step_rates())
    assert grid["dash"]["post"] and "pre" not in grid["dash"]  # Post-LN dashed, Pre-LN solid
    for layers, seed, rate in ((12, 7, 2e-3), (48, 8, RATES[0])):
        cell = grid["cells"][f"{layers}|{seed}|{format(rate, 'g')}"]
        for placement, short in (("Pre-LN", "pre"), ("Post-LN", "post")):
            _, _, curve = _by_hand(rows, placement, layers, seed, rate)
            np.testing.assert_allclose(cell[short], curve, rtol=1e-3, atol=1e-12)
            slope = next(r["slope"] for r in rows if (r["placement"], r["layers"], r["seed"]) == (placement, layers, seed))
            np.testing.assert_allclose(cell[f"{short}-tangent"], np.array(POSITIONS) * rate * slope, rtol=1e-3)
    cell = grid["cells"][f"12|mean|{format(2e-3, 'g')}"]  # the mean over the seeds of each seed's curve and tangent
    for placement, short in (("Pre-LN", "pre"), ("Post-LN", "post")):
        _, curve = _mean_by_hand(rows, placement, 12, 2e-3)
        np.testing.assert_allclose(cell[short], curve, rtol=1e-3, atol=1e-12)
        slopes = [r["slope"] for r in rows if (r["placement"], r["layers"], r["t"], r["learning_rate"]) == (placement, 12, 0.0, 2e-3)]
        assert len(slopes) == len(FIRST_STEP_SEEDS)
        np.testing.assert_allclose(cell[f"{short}-tangent"], np.array(POSITIONS) * 2e-3 * np.mean(slopes), rtol=1e-3)


def test_static_explorer_responds_to_its_controls(monkeypatch, stored):
    """The static HTML run by the book's explorer script (Node.js with a minimal DOM)."""
    from test_explore import _run_in_node

    from lnworked.stress.first_step_explorer import FIRST_STEP_READOUT_KEYS, first_step_explorer, first_step_readouts

    monkeypatch.setenv("LNWORKED_STATIC_BUILD", "1")
    _, _, curves = stored
    html = first_step_explorer().data
    assert 'data-explorer="first-step"' in html and 'aria-live="polite"' in html
    low = format(RATES[0], "g")
    actions = [{"root": 0, "name": "rate", "value": low, "event": "change"},
               {"root": 0, "name": "depth", "value": "48", "event": "change"},
               {"root": 0, "name": "seed", "value": "9", "event": "change"},
               {"root": 0, "name": "t", "value": "0.3"}]
    results = _run_in_node(html, actions)
    assert results[0]["initial"]["ready"] == "1" and results[0]["initial"]["lines"] == 4
    assert results[0]["initial"]["markers"] == 1 and results[0]["initial"]["params"]["t"] == "1"
    assert results[0]["initial"]["readouts"] == first_step_readouts(curves, 12, "mean", 2e-3)
    for result, key in zip(results[1:], [(12, "mean", RATES[0], 1.0), (48, "mean", RATES[0], 1.0),
                                         (48, 9, RATES[0], 1.0), (48, 9, RATES[0], 0.3)]):
        shown = first_step_readouts(curves, *key)
        assert result["state"]["readouts"] == {k: shown[k] for k in FIRST_STEP_READOUT_KEYS}, key
        assert result["state"]["lines"] == 4 and result["state"]["markers"] == 1
    assert results[-1]["state"]["params"]["t"] == "0.3"


def test_live_explorer_draws_both_placements_and_their_tangents(monkeypatch, stored):
    from lnworked.stress.first_step_explorer import first_step_explorer, first_step_readouts

    monkeypatch.delenv("LNWORKED_STATIC_BUILD", raising=False)
    rows, _, curves = stored
    box = first_step_explorer()
    assert set(box.lnw_controls) == {"depth", "seed", "rate", "t"}
    box.lnw_controls["depth"].value = 24
    box.lnw_controls["rate"].value = RATES[-1]
    assert box.lnw_values == first_step_readouts(curves, 24, "mean", RATES[-1])
    box.lnw_controls["seed"].value = 7
    lines = {line.get_gid(): line for line in box.lnw_figure.axes[0].get_lines()}
    assert set(lines) == {"pre", "post", "pre-tangent", "post-tangent", "zero", "t"}
    assert lines["pre"].get_linestyle() == "-" and lines["post"].get_linestyle() == "--"
    assert lines["pre-tangent"].get_linestyle() == ":"
    _, _, curve = _by_hand(rows, "Post-LN", 24, 7, RATES[-1])
    np.testing.assert_allclose(lines["post"].get_ydata(), curve, atol=1e-12)
