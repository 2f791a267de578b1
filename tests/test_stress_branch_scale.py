"""Post-LN's first step against its branch scale kappa (lnworked.stress.branch_scale) and its explorer.

Independent routes: the kappa = 1 rows against plain Post-LN's (and Pre-LN's) stored first-step rows
(first-step.csv, lnworked stress first-step: another program, its rates all the grid's steps); the
rows at DeepNorm's kappa against the stored "Post-LN, kappa only" variant (deepnorm.csv, lnworked stress
deepnorm: deepnorm.variant_setup's configuration); one stored row against branch_scale_rows recomputed
now (slow); the summary and the explorer's readouts from the CSV's rows by hand; the grid of scales
against DeepNorm's constant (8 L)^(-1/4) written out here.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from lnworked.stress.branch_scale import (BRANCH_SCALE_SEEDS, branch_scale_rates, branch_scale_rows,
                                          branch_scale_summary, branch_scales, read_branch_scale_csv,
                                          write_branch_scale_csv)
from lnworked.stress.committed import committed_branch_scale
from lnworked.stress.config import StressConfig, warmup_for

LAYERS = StressConfig().layers
KAPPA_DN = (8 * LAYERS) ** -0.25  # DeepNorm's kappa (the paper's beta) for a decoder-only model of L layers


@pytest.fixture(scope="module")
def stored():
    rows, info = committed_branch_scale()
    return rows, info, branch_scale_summary(rows)


def _delivered(r):
    return (r["loss_after"] - r["loss"]) / r["linear_delta_loss"]


# -- the grid of scales and the arguments


def test_branch_scales_fall_evenly_on_a_log_axis_from_one_through_deepnorms_kappa():
    scales = branch_scales()
    assert scales[0] == 1.0 and KAPPA_DN in scales and scales.index(KAPPA_DN) == 5
    assert len(scales) == 8 and min(scales) < KAPPA_DN
    ratios = np.diff(np.log(scales))
    np.testing.assert_allclose(ratios, math.log(KAPPA_DN) / 5, rtol=1e-12)
    assert branch_scales(48, steps=2, below=0) == (1.0, pytest.approx((8 * 48) ** -0.125), (8 * 48) ** -0.25)


@pytest.mark.parametrize("kwargs, name", [({"layers": 0}, "layers"), ({"steps": 0}, "steps"), ({"below": -1}, "below"),
                                          ({"steps": 1.5}, "steps")])
def test_branch_scales_reject_bad_arguments_naming_them(kwargs, name):
    with pytest.raises(ValueError, match=name):
        branch_scales(**kwargs)


@pytest.mark.parametrize("kwargs, name", [
    ({"scales": []}, "scales"), ({"scales": [0.0]}, "scales"), ({"scales": [1.5]}, "scales"),
    ({"scales": [0.5, 0.5]}, "scales"), ({"scales": "01"}, "scales"), ({"scales": [True]}, "scales"),
    ({"seeds": [-1]}, "seeds"), ({"seeds": []}, "seeds"), ({"rates": [0.0]}, "rates"),
    ({"config": StressConfig(residual_scale=2.0)}, "config"), ({"config": StressConfig(branch_init_scale=0.5)}, "config"),
])
def test_branch_scale_rows_reject_bad_arguments_before_computing(kwargs, name):
    with pytest.raises(ValueError, match=name):
        branch_scale_rows(**{"seeds": [7], **kwargs})


def test_summary_rejects_rows_that_are_not_a_full_grid(stored):
    rows, _, _ = stored
    with pytest.raises(ValueError, match="rows"):
        branch_scale_summary([])
    with pytest.raises(ValueError, match="rows"):
        branch_scale_summary(rows[1:])


# -- the stored measurement


def test_stored_rows_are_the_full_grid_with_their_provenance(stored, tmp_path):
    rows, info, summary = stored
    assert info["command"].startswith("lnworked stress branch-scale") and info["seconds"] > 0
    assert StressConfig(**info["config"]) == StressConfig() and info["rows"] == len(rows)
    rates = [float(f"{r:.9g}") for r in branch_scale_rates()]  # as the CSV holds them
    assert set(summary) == {(p, r) for p in ("Post-LN", "Pre-LN") for r in rates}
    for (placement, _), case in summary.items():
        assert case["seeds"] == list(BRANCH_SCALE_SEEDS)
        np.testing.assert_allclose(case["scales"], branch_scales() if placement == "Post-LN" else [1.0], rtol=1e-8)
    write_branch_scale_csv(rows, tmp_path / "back.csv")
    assert read_branch_scale_csv(tmp_path / "back.csv") == rows


def test_summary_is_the_rows_by_hand(stored):
    rows, _, summary = stored
    for r in rows:
        case = summary[(r["placement"], r["learning_rate"])]
        s, k = case["seeds"].index(r["seed"]), int(np.flatnonzero(case["scales"] == r["branch_scale"])[0])
        assert case["branch_share"][s, k] == r["branch_share"]
        assert case["relative"][s, k] == pytest.approx(r["rms_delta_logits"] / r["rms_logits"], rel=1e-12)
        assert case["delivered"][s, k] == pytest.approx(_delivered(r), rel=1e-12)


def test_kappa_one_is_the_stored_first_step_of_each_placement(stored):
    """An independent program path: lnworked stress first-step's rows at 12 blocks, t = 1, the same seed and rate."""
    from lnworked.stress.committed import committed_first_step
    from lnworked.stress.first_step import delivered_share

    rows, _, _ = stored
    first = {(r["placement"], r["seed"], r["learning_rate"]): r for r in committed_first_step()[0]
             if r["layers"] == LAYERS and r["t"] == 1.0}
    mine = [r for r in rows if r["branch_scale"] == 1.0]
    assert len(mine) == 2 * len(BRANCH_SCALE_SEEDS) * 2
    for r in mine:
        other = next(v for (p, s, rate), v in first.items()
                     if (p, s) == (r["placement"], r["seed"]) and math.isclose(rate, r["learning_rate"], rel_tol=1e-6))
        share = delivered_share(other["loss"], other["loss_after"], other["slope"], other["learning_rate"])
        # float32 arithmetic: the loss moves by ~1e-5 nats at warmup's first rate, ~1e-1 at the full rate
        assert _delivered(r) == pytest.approx(share, abs=1e-2 if r["learning_rate"] < 1e-4 else 1e-3), r
        assert r["rms_delta_logits"] / r["rms_logits"] == pytest.approx(
            other["rms_delta_logits"] / other["rms_logits"], rel=1e-3), r
        assert r["loss"] == pytest.approx(other["loss"], abs=1e-5)


def test_deepnorms_kappa_is_the_stored_kappa_only_variant(stored):
    """An independent program path: lnworked stress deepnorm's "Post-LN, κ only" (variant_setup's
    configuration, its own branch-share and first-update programs), the same seeds, the full rate."""
    from lnworked.stress.committed import committed_deepnorm
    from lnworked.stress.deepnorm import summarise

    rows, _, summary = stored
    other = summarise(committed_deepnorm()[0])["Post-LN, κ only"]
    case = summary[("Post-LN", StressConfig().learning_rate)]
    k = int(np.flatnonzero(np.isclose(case["scales"], KAPPA_DN, rtol=1e-8))[0])
    assert case["seeds"] == other["seeds"]
    np.testing.assert_allclose(case["branch_share"][:, k], other["branch_share"].mean(axis=1), rtol=1e-5)
    np.testing.assert_allclose(case["delivered"][:, k], other["delta_loss"][:, 0] / other["linear_delta_loss"][:, 0],
                               atol=2e-3)


def test_at_warmups_first_rate_the_step_delivers_its_promise_at_every_kappa(stored):
    """The control the explorer's caption describes: a small step follows its tangent whatever kappa is."""
    _, _, summary = stored
    first = StressConfig().learning_rate / warmup_for(StressConfig().steps)
    for placement in ("Post-LN", "Pre-LN"):
        case = next(c for (p, r), c in summary.items() if p == placement and math.isclose(r, first, rel_tol=1e-6))
        np.testing.assert_allclose(case["delivered"], 1.0, atol=2e-2)


@pytest.mark.slow
def test_a_stored_row_recomputes(stored):
    """Seed 8 at the fourth kappa, the full rate, from branch_scale_rows now (float32: 1e-5 nats)."""
    rows, _, _ = stored
    kappa, rate = branch_scales()[3], StressConfig().learning_rate
    (live,) = branch_scale_rows([8], [kappa], rates=[rate])
    saved = next(r for r in rows if (r["placement"], r["seed"], r["learning_rate"]) == ("Post-LN", 8, rate)
                 and math.isclose(r["branch_scale"], kappa, rel_tol=1e-8))
    assert live["branch_share"] == pytest.approx(saved["branch_share"], rel=1e-5)
    assert live["loss_after"] - live["loss"] == pytest.approx(saved["loss_after"] - saved["loss"], abs=1e-5)
    assert live["linear_delta_loss"] == pytest.approx(saved["linear_delta_loss"], rel=1e-5)
    assert live["rms_delta_logits"] / live["rms_logits"] == pytest.approx(
        saved["rms_delta_logits"] / saved["rms_logits"], rel=1e-4)


# -- the explorer (lnworked.stress.branch_scale_explorer)


def _by_hand(rows, placement, kappa, seed, rate):
    """``(rho, relative, delivered)`` read from the rows: one seed's, or the mean over the stored seeds."""
    mine = [r for r in rows if r["placement"] == placement and math.isclose(r["branch_scale"], kappa, rel_tol=1e-8)
            and math.isclose(r["learning_rate"], rate, rel_tol=1e-6) and (seed == "mean" or r["seed"] == seed)]
    assert len(mine) == (len(BRANCH_SCALE_SEEDS) if seed == "mean" else 1)
    return (sum(r["branch_share"] for r in mine) / len(mine),
            sum(r["rms_delta_logits"] / r["rms_logits"] for r in mine) / len(mine),
            sum(_delivered(r) for r in mine) / len(mine))


@pytest.mark.parametrize("index, seed, which", [(0, "mean", 0), (5, "mean", 0), (7, 9, 0), (3, 8, 1)])
def test_explorer_readouts_are_the_rows_by_hand(stored, index, seed, which):
    from lnworked.stress.branch_scale_explorer import branch_scale_readouts

    rows, _, summary = stored
    kappa, rate = branch_scales()[index], branch_scale_rates()[which]
    shown = branch_scale_readouts(summary, kappa, seed, rate)
    for prefix, placement, at in (("post", "Post-LN", kappa), ("pre", "Pre-LN", 1.0)):
        rho, relative, delivered = _by_hand(rows, placement, at, seed, rate)
        assert float(shown[f"{prefix}-rho"]) == pytest.approx(rho, rel=5e-3)
        assert float(shown[f"{prefix}-relative"]) == pytest.approx(relative, rel=5e-3)
        assert shown[f"{prefix}-delivered"] == f"{100 * delivered:.1f}\u00a0%"
    assert shown["post-delivered"] in shown["sentence"] and f"{kappa:.3g}" in shown["sentence"]


@pytest.mark.parametrize("kappa, seed, rate, name", [(0.5, "mean", 2e-3, "kappa"), (1.0, 10, 2e-3, "seed"),
                                                     (1.0, "mean", 3e-3, "rate")])
def test_explorer_readouts_reject_a_setting_that_is_not_stored(stored, kappa, seed, rate, name):
    from lnworked.stress.branch_scale_explorer import branch_scale_readouts

    with pytest.raises(ValueError, match=name):
        branch_scale_readouts(stored[2], kappa, seed, rate)


def test_explorer_offers_the_stored_grid_and_its_cells_hold_the_rows(stored):
    from lnworked.explore import spec_grid
    from lnworked.stress.branch_scale_explorer import LINKS, branch_scale_explorer_spec

    rows, _, _ = stored
    spec = branch_scale_explorer_spec()
    assert spec.control("kappa").values == tuple(range(len(branch_scales())))
    assert spec.control("kappa").text(5).startswith(f"{KAPPA_DN:.3f}") and "DeepNorm" in spec.control("kappa").text(5)
    assert spec.control("seed").values == ("mean", *BRANCH_SCALE_SEEDS) and spec.control("seed").default == "mean"
    assert spec.control("rate").default == StressConfig().learning_rate
    grid = spec_grid(spec)
    assert len(grid["cells"]) == (len(BRANCH_SCALE_SEEDS) + 1) * 2
    cell = grid["cells"][f"mean|{format(StressConfig().learning_rate, 'g')}"]
    for i, kappa in enumerate(branch_scales()):
        for j, link in enumerate(LINKS):
            assert cell[link][i] == pytest.approx(_by_hand(rows, "Post-LN", kappa, "mean", 2e-3)[j], rel=1e-3)
    for j, link in enumerate(LINKS):
        assert cell[f"pre-{link}"] == pytest.approx(_by_hand(rows, "Pre-LN", 1.0, "mean", 2e-3)[j], rel=1e-3)
    assert grid["y_min"] <= min(min(v for v in cell[link] if v) for link in LINKS)
    assert grid["y_max"] >= max(max(cell[link]) for link in LINKS)
