"""AdamW's first update and Liu et al.'s amplification (lnworked.stress.first_update, .amplification).

Independent routes: the first update by hand in NumPy (Adam's first step is g / (|g| + eps)
plus the decay) applied to the unrolled Flax model (model.py), against the stacked program;
the autodiff slope against the loss's own change at a small rate; fits on data made by hand;
the departure step on curves made by hand.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

from lnworked.stress.amplification import branch_dependence, growth_fits, output_change_table
from lnworked.stress.config import StressConfig
from lnworked.stress.data import make_batches
from lnworked.stress.first_update import (VARIANTS, departure_step, first_steps, first_update_table,
                                           loss_along_update)
from lnworked.stress.model import init_params, make_model

SMALL = StressConfig(vocab_size=16, sequence_length=8, width=16, heads=2, layers=3, batch_size=4, steps=6)
EPS = 1e-8  # optax.scale_by_adam's default


def _by_hand(config, depth, pre_norm, seed, rate):
    """``(rms Delta logits, Delta loss)`` of the first AdamW step, by NumPy on the unrolled Flax model."""
    config = config.replace(layers=depth)
    model = make_model(config, pre_norm)
    params = init_params(config, pre_norm, jax.random.PRNGKey(seed))
    source, target = (b[0] for b in make_batches(config.replace(steps=1)))

    def loss(p):
        return float(jnp.mean(optax.softmax_cross_entropy_with_integer_labels(model.apply({"params": p}, source),
                                                                               target)))

    grads = jax.grad(lambda p: jnp.mean(optax.softmax_cross_entropy_with_integer_labels(
        model.apply({"params": p}, source), target)))(params)
    moved = jax.tree.map(lambda t, g: np.asarray(t, np.float64) - rate * (
        np.asarray(g, np.float64) / (np.abs(np.asarray(g, np.float64)) + EPS)
        + config.weight_decay * np.asarray(t, np.float64)), params, grads)
    moved = jax.tree.map(lambda a: jnp.asarray(a, jnp.float32), moved)
    z0 = np.asarray(model.apply({"params": params}, source), np.float64)
    z1 = np.asarray(model.apply({"params": moved}, source), np.float64)
    return float(np.sqrt(np.mean((z1 - z0) ** 2))), loss(moved) - loss(params)


@pytest.mark.parametrize("pre_norm", [True, False])
def test_first_update_matches_numpy_adam_step_on_the_unrolled_model(pre_norm):
    rows = first_update_table([1, 3], [2e-3, 2e-3 / 120], [5], SMALL)
    for depth in (1, 3):
        for rate in (2e-3, 2e-3 / 120):
            row = next(r for r in rows if (r["layers"], r["pre_norm"], r["learning_rate"]) == (depth, pre_norm, rate))
            moved, delta = _by_hand(SMALL, depth, pre_norm, 5, rate)
            assert row["rms_delta_logits"] == pytest.approx(moved, rel=2e-2)
            assert row["delta_loss"] == pytest.approx(delta, rel=5e-2, abs=2e-6)


def test_autodiff_slope_predicts_the_loss_change_of_a_small_step():
    rows = first_update_table([2], [1e-4], [3, 4], SMALL)
    for row in rows:
        assert row["linear_delta_loss"] < 0  # Adam's sign step goes downhill to first order
        assert row["delta_loss"] == pytest.approx(row["linear_delta_loss"], rel=5e-2)


def test_the_smaller_rate_moves_the_logits_proportionally_less():
    rows = first_update_table([2], [1e-3, 1e-5], [1], SMALL)
    for pre_norm in (True, False):
        big, small = (next(r for r in rows if r["pre_norm"] == pre_norm and r["learning_rate"] == lr)
                      for lr in (1e-3, 1e-5))
        assert big["rms_delta_logits"] / small["rms_delta_logits"] == pytest.approx(100, rel=0.1)
        assert big["relative"] == pytest.approx(big["rms_delta_logits"] / big["rms_logits"])


@pytest.mark.slow
def test_first_steps_start_from_one_loss_and_use_the_tables_initial_weights():
    curves = first_steps(4, [2, 3], SMALL, warmup=3)
    assert list(curves) == list(VARIANTS)
    for variant in VARIANTS:
        assert curves[variant].shape == (2, 4)
    # loss 1 is measured before any update: the same for every variant of a seed
    for seed_index, seed in enumerate((2, 3)):
        first = {v: curves[v][seed_index, 0] for v in VARIANTS}
        table = first_update_table([SMALL.layers], [1e-3], [seed], SMALL)
        for pre_norm, plain, warm in ((True, "Pre-LN", "Pre-LN + warmup"), (False, "Post-LN", "Post-LN + warmup")):
            loss = next(r for r in table if r["pre_norm"] == pre_norm)["loss"]
            assert first[plain] == pytest.approx(loss, rel=1e-5)
            assert first[warm] == pytest.approx(first[plain], rel=1e-6)
    # a one-step warmup reaches the target at step 1: the warmed-up runs are the constant-rate ones
    same = first_steps(3, [2], SMALL, warmup=1)
    for plain, warm in (("Pre-LN", "Pre-LN + warmup"), ("Post-LN", "Post-LN + warmup")):
        np.testing.assert_allclose(same[warm], same[plain], rtol=1e-6)
        assert not np.allclose(curves[warm][:, 1:], curves[plain][:, 1:], rtol=1e-6)


def test_departure_step_by_hand():
    reference = np.array([4.0, 3.0, 2.0, 1.0, 0.5])
    assert departure_step(reference, reference + 0.01, 0.1) is None
    assert departure_step(reference, np.array([4.0, 3.05, 2.5, 2.0, 2.0]), 0.1) == 3
    assert departure_step(reference, np.array([4.5, 3.0, 2.5, 2.0, 2.0]), 0.1) == 3  # returns after step 1
    assert departure_step(reference, reference + 1.0, 0.1) == 1
    assert departure_step(reference, np.array([4.0, 3.5, 2.5, 1.0, 0.5]), 0.1) is None  # came back


def test_growth_fits_tell_linear_from_logarithmic():
    depths = [1, 2, 3, 6, 12, 24, 48]
    n = np.array(depths, float)
    linear = growth_fits(depths, 0.5 + 2.0 * n)
    assert linear["linear"][:2] == pytest.approx((0.5, 2.0))
    assert linear["linear"][2] < 1e-9 < linear["log"][2]
    log = growth_fits(depths, 1.0 + 3.0 * np.log(n))
    assert log["log"][:2] == pytest.approx((1.0, 3.0))
    assert log["log"][2] < 1e-9 < log["linear"][2]


def test_output_change_is_quadratic_in_a_small_perturbation():
    rows = output_change_table([1, 2], 1e-3, [0], SMALL) + output_change_table([1, 2], 1e-4, [0], SMALL)
    for depth in (1, 2):
        for pre_norm in (True, False):
            big, small = (next(r for r in rows if (r["layers"], r["pre_norm"], r["size"]) == (depth, pre_norm, s))
                          for s in (1e-3, 1e-4))
            assert big["output_change"] / small["output_change"] == pytest.approx(100, rel=0.1)
            assert big["mean_square_logits"] == pytest.approx(small["mean_square_logits"])


def test_branch_dependence_has_one_share_per_sublayer():
    shares = branch_dependence([0, 1], SMALL)
    for pre_norm in (True, False):
        assert shares[pre_norm].shape == (2, 2 * SMALL.layers)
        assert np.all(shares[pre_norm] > 0)


@pytest.mark.slow
def test_post_ln_first_update_helps_less_than_pre_ln_at_twelve_blocks():
    rows = first_update_table([12], [2e-3], [7, 8, 9])
    for seed in (7, 8, 9):
        pre, post = (next(r for r in rows if r["seed"] == seed and r["pre_norm"] == p) for p in (True, False))
        assert pre["delta_loss"] < post["delta_loss"] < 0 or post["delta_loss"] >= 0 > pre["delta_loss"]


@pytest.mark.slow
def test_pre_ln_later_sublayers_depend_less_on_their_branch():
    shares = branch_dependence([7, 8])
    pre, post = shares[True].mean(axis=0), shares[False].mean(axis=0)
    assert pre[-4:].mean() < pre[:4].mean()
    assert post[-4:].mean() > pre[-4:].mean()


@pytest.mark.slow
def test_amplification_grows_faster_with_depth_for_post_ln():
    rows = output_change_table([2, 12], 2e-3, [7, 8])

    def growth(pre_norm):
        mean = {d: np.mean([r["output_change"] for r in rows if r["layers"] == d and r["pre_norm"] == pre_norm])
                for d in (2, 12)}
        return mean[12] / mean[2]

    assert growth(False) > growth(True)


@pytest.mark.parametrize("call, name", [
    (lambda: first_update_table([], [1e-3], [0], SMALL), "depths"),
    (lambda: first_update_table([0], [1e-3], [0], SMALL), "depths"),
    (lambda: first_update_table([1], [-1.0], [0], SMALL), "rates"),
    (lambda: first_update_table([1], [1e-3], [1, 1], SMALL), "seeds"),
    (lambda: first_update_table([1], [1e-3], [], SMALL), "seeds"),
    (lambda: first_steps(0, [0], SMALL), "steps"),
    (lambda: first_steps(SMALL.steps + 1, [0], SMALL), "steps"),
    (lambda: first_steps(2, [0], SMALL, warmup=0), "warmup"),
    (lambda: departure_step([1.0, 2.0], [1.0], 0.1), "other"),
    (lambda: departure_step([1.0, 2.0], [1.0, 2.0], 0.0), "gap"),
    (lambda: output_change_table([1], 0.0, [0], SMALL), "size"),
    (lambda: growth_fits([1, 2, 3], [1.0, 2.0]), "values"),
    (lambda: growth_fits([1, 2, 2], [1.0, 2.0, 3.0]), "depths"),
    (lambda: branch_dependence([-1], SMALL), "seeds"),
])
def test_bad_arguments_name_themselves(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_loss_along_update_slope_is_the_curves_central_difference_at_zero():
    h = 1e-3
    curve = loss_along_update(SMALL, 2, 3, 2e-3, [-h, 0.0, h])
    for pre_norm in (True, False):
        minus, zero, plus = curve[pre_norm]["loss"]
        assert curve[pre_norm]["slope"] < 0
        assert curve[pre_norm]["slope"] == pytest.approx((plus - minus) / (2 * h), rel=1e-2)


def test_loss_along_update_at_one_is_the_tables_loss_after_the_update():
    curve = loss_along_update(SMALL, 4, 2, 1e-2, [0.0, 1.0])
    rows = first_update_table([2], [1e-2], [4], SMALL)
    for row in rows:
        start, end = curve[row["pre_norm"]]["loss"]
        assert start == pytest.approx(row["loss"], rel=1e-6)
        assert end == pytest.approx(row["loss_after"], rel=1e-5)
        assert curve[row["pre_norm"]]["slope"] == pytest.approx(row["linear_delta_loss"], rel=1e-5)


@pytest.mark.parametrize("call, name", [
    (lambda: loss_along_update(SMALL, 0, 2, 1e-3, []), "ts"),
    (lambda: loss_along_update(SMALL, 0, 2, -1e-3, [1.0]), "rate"),
    (lambda: loss_along_update(SMALL, 0, 0, 1e-3, [1.0]), "layers"),
    (lambda: loss_along_update(SMALL, 0, 2, 1e-3, [float("nan")]), "ts"),
])
def test_loss_along_update_bad_arguments_name_themselves(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_mean_delivered_share_averages_each_seeds_share():
    from lnworked.stress.first_update import mean_delivered_share

    # two seeds by hand: shares 0.5 and 1.0 average to 0.75 (the ratio of the means is 0.7 / 0.8)
    rows = [dict(pre_norm=True, layers=12, learning_rate=2e-3, seed=7, delta_loss=-0.1, linear_delta_loss=-0.2),
            dict(pre_norm=True, layers=12, learning_rate=2e-3, seed=8, delta_loss=-0.6, linear_delta_loss=-0.6),
            dict(pre_norm=False, layers=12, learning_rate=2e-3, seed=7, delta_loss=-9.0, linear_delta_loss=-9.0)]
    assert mean_delivered_share(rows, True, 12, 2e-3) == pytest.approx((0.1 / 0.2 + 0.6 / 0.6) / 2)
    assert mean_delivered_share(rows, True, 12, 2e-3) != pytest.approx(0.7 / 0.8)
    with pytest.raises(ValueError, match="rows: no row with pre_norm=True, layers=6"):
        mean_delivered_share(rows, True, 6, 2e-3)


def test_first_update_numbers_are_the_means_the_chapters_quote():
    from lnworked.stress.first_update import _seed_mean, first_update_numbers

    # one depth, two seeds, two rates, both placements, every number by hand
    def row(pre_norm, lr, seed, drop, promise, relative):
        return dict(pre_norm=pre_norm, layers=12, learning_rate=lr, seed=seed, delta_loss=-drop,
                    linear_delta_loss=-promise, relative=relative)

    full, small = 2e-3, 2e-3 / 120
    rows = [row(True, full, 7, 0.2, 0.4, 0.8), row(True, full, 8, 0.3, 0.3, 1.0),
            row(False, full, 7, 0.01, 0.2, 1.2), row(False, full, 8, 0.03, 0.1, 1.4),
            row(True, small, 7, 0.004, 0.004, 0.01), row(True, small, 8, 0.002, 0.002, 0.01),
            row(False, small, 7, 0.002, 0.002, 0.04), row(False, small, 8, 0.001, 0.001, 0.036)]
    got = first_update_numbers(rows, full, small)
    assert got["pre12-drop"] == pytest.approx(0.25) and got["post12-promise"] == pytest.approx(0.15)
    assert got["pre12-delivered"] == pytest.approx(100 * (0.5 + 1.0) / 2)
    assert got["post12-delivered"] == pytest.approx(100 * (0.05 + 0.3) / 2)
    assert got["post12-delivered-small"] == pytest.approx(100.0)
    assert got["pre12-rel"] == pytest.approx(0.9) and got["post12-rel-small"] == pytest.approx(0.038)
    assert got["sensitivity12"] == pytest.approx(0.038 / 0.01)
    assert got["full-ratio12"] == pytest.approx(1.3 / 0.9)
    assert _seed_mean(rows, "relative", False, 12, full) == pytest.approx(1.3)
    with pytest.raises(ValueError, match="rows: no row with pre_norm=False, layers=48"):
        _seed_mean(rows, "relative", False, 48, full)
