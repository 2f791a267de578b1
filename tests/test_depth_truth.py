"""The measurements chapters 3 and 4 rest on: the scalar toy against the random matrix stack.

Every test checks a direction or a robust shape (never a number copied from the code):
Post-LN's per-layer gradient factor in the random stack is far closer to 1 than the toy's
0.65; the norm's shrinkage and the residual add's amplification offset each other; Pre-LN's
"+1" does not keep every block's gain at or above 1; late Pre-LN writes are small against the
stream, Post-LN's are not.
"""

import math

import numpy as np
import pytest

from lnworked.backward_gains import (backward_gains, gradient_depth_table, post_ln_gain_split,
                                     random_direction_gains, removed_share)
from lnworked.random_stack import stack_profile, stack_sublayers
from lnworked.residual_writes import write_ratios

SEEDS = range(6)


def test_depth_table_rows_and_implied_factor():
    rows = gradient_depth_table(variants=("post", "pre"), depths=(6, 24), seeds=range(3))
    assert [(r["variant"], r["layers"]) for r in rows] == [("post", 6), ("post", 24), ("pre", 6), ("pre", 24)]
    for row in rows:
        assert row["per_layer"] == pytest.approx(row["median_grad"] ** (1 / row["layers"]))
        assert row["min_grad"] <= row["median_grad"] <= row["max_grad"]


def test_post_ln_per_layer_factor_is_far_closer_to_one_than_the_toy():
    """The scalar toy's 0.65 per layer would give 0.65^48 ~ 1e-9; the random stack does not."""
    toy = 0.65  # source text 004, Ex 5
    for row in gradient_depth_table(variants=("post",), depths=(24, 48), seeds=SEEDS):
        assert abs(math.log(row["per_layer"])) < abs(math.log(toy)) / 10
        assert row["median_grad"] > toy ** row["layers"] * 1e3


def test_post_ln_spread_over_seeds_widens_with_depth():
    shallow, deep = gradient_depth_table(variants=("post",), depths=(6, 48), seeds=SEEDS)
    assert deep["max_grad"] / deep["min_grad"] > shallow["max_grad"] / shallow["min_grad"]


def test_backward_gains_multiply_to_the_input_gradient():
    for variant in ("post", "pre"):
        gains = backward_gains(variant, layers=12, seeds=[3])
        profile = stack_profile(variant, 12, seed=3)
        _, readout, _ = stack_sublayers(variant, 12, seed=3)
        assert gains["gain"].shape == (1, 12)
        total = np.prod(gains["gain"][0]) * np.linalg.norm(readout)
        assert total == pytest.approx(profile.input_grad_norm[-1], rel=1e-9)


def test_post_ln_split_offsets_shrinkage_with_amplification():
    split = post_ln_gain_split(layers=24, seeds=SEEDS)
    for key in ("sigma", "norm_gain", "branch_gain", "gain", "write_ratio"):
        assert split[key].shape == (len(SEEDS), 24)
    np.testing.assert_allclose(split["gain"], split["norm_gain"] * split["branch_gain"], rtol=1e-12)
    np.testing.assert_allclose(split["gain"], backward_gains("post", 24, SEEDS)["gain"], rtol=1e-10)
    # J_N is (1/sigma) times a projection: it never scales a gradient by more than 1/sigma.
    assert np.all(split["norm_gain"] * split["sigma"] <= 1 + 1e-9)
    # the norm shrinks on average, the residual add amplifies, and the two nearly cancel
    assert split["mean_norm_gain"] < 1 < split["mean_branch_gain"]
    assert abs(math.log(split["mean_gain"])) < abs(math.log(split["mean_norm_gain"])) / 3
    # the norm's input is wider than the unit-spread stream because of the write: sigma ~ sqrt(1 + v)
    assert split["mean_sigma"] > 1
    # no steady factor: some blocks shrink the gradient, some grow it
    assert split["gain"].min() < 1 < split["gain"].max()


def test_pre_ln_blocks_can_shrink_the_gradient_despite_the_identity():
    """The scalar toy's "factor >= 1" fails for matrices: some blocks have gain below 1."""
    gains = backward_gains("pre", layers=24, seeds=SEEDS)
    assert gains["min"] < 1
    assert 0 < gains["fraction_below_one"] < 1
    # ... while the product over the stack does not collapse
    assert gains["geometric_mean"] > 0.9


def test_pre_ln_write_ratio_falls_with_depth():
    ratios = write_ratios("pre", layers=48, seeds=SEEDS)
    assert ratios["ratios"].shape == (len(SEEDS), 48)
    median = ratios["median"]
    assert median[-12:].mean() < median[:12].mean() / 1.5
    assert median[-1] < median[0]
    for row in ratios["ratios"]:  # every seed, not only the median
        assert row[-12:].mean() < row[:4].mean()


def test_pre_ln_write_ratio_wobble_at_the_shown_blocks_is_seed_noise():
    """Chapter 4: over 8 seeds the median ratio ticks up between two of the shown blocks
    (8 -> 16, 32 -> 48); over 64 seeds it falls at every shown block."""
    shown = [0, 7, 15, 31, 47]  # blocks 1, 8, 16, 32, 48
    few = write_ratios("pre", layers=48, seeds=range(8))["median"][shown]
    many = write_ratios("pre", layers=48, seeds=range(64))["median"][shown]
    assert np.any(np.diff(few) > 0)
    assert np.all(np.diff(many) < 0)


def test_post_ln_write_ratio_does_not_fall():
    median = write_ratios("post", layers=48, seeds=SEEDS)["median"]
    pre = write_ratios("pre", layers=48, seeds=SEEDS)["median"]
    assert median[-12:].mean() > median[:12].mean() / 1.5
    assert median[-12:].mean() > pre[-12:].mean()


def test_write_ratios_rejects_deepnorm_and_empty_seeds():
    with pytest.raises(ValueError):
        write_ratios("deepnorm", layers=4, seeds=[0])
    with pytest.raises(ValueError):
        write_ratios("pre", layers=4, seeds=[])
    with pytest.raises(ValueError):
        backward_gains("pre", layers=4, seeds=[])


def test_norm_gain_is_the_kept_share_over_sigma():
    """J_N is (1/sigma) times the projection that drops 1 and the norm input's direction, so the
    norm's gain is sqrt(1 - removed share) / sigma: two routes to one number."""
    split = post_ln_gain_split(layers=12, seeds=range(3))
    share = split["removed_share"]
    assert share.shape == split["norm_gain"].shape
    assert np.all((share >= 0) & (share <= 1))
    np.testing.assert_allclose(split["share_ones"] + split["share_xhat"], share, rtol=1e-12)
    np.testing.assert_allclose(np.sqrt(1 - share) / split["sigma"], split["norm_gain"], rtol=1e-6)


def test_removed_share_of_random_directions_is_two_over_d():
    rng = np.random.default_rng(0)
    d = 16
    z = rng.normal(size=d)
    shares = [removed_share(rng.normal(size=d), z) for _ in range(4000)]
    assert np.mean(shares) == pytest.approx(2 / d, rel=0.05)
    # a gradient along 1 or along the centred input is removed whole; one orthogonal to both is kept
    assert removed_share(np.ones(d), z) == pytest.approx(1)
    assert removed_share(z - z.mean(), z) == pytest.approx(1)
    kept = rng.normal(size=d)
    basis = np.stack([np.ones(d) / 4, (z - z.mean()) / np.linalg.norm(z - z.mean())])
    kept -= basis.T @ (basis @ kept)
    assert removed_share(kept, z) == pytest.approx(0, abs=1e-12)
    with pytest.raises(ValueError, match="g, z"):
        removed_share(np.ones(3), np.ones(3))


def test_the_gradient_from_above_avoids_the_removed_directions():
    """Below a Post-LN block's output sits another norm: the gradient arriving at a block has far
    less in the removed directions than a random one (2/d), except at the top block, whose
    gradient is the random readout. The norm above is the cause: <g, x> = <h, J_F x - F(x)>."""
    split = post_ln_gain_split(layers=24, seeds=SEEDS)
    share = split["removed_share"]
    below_top, top = share[:, :-1], share[:, -1]
    assert below_top.mean() < (2 / 16) / 3
    assert top.mean() > below_top.mean() * 3
    # most of the difference is along the output's own direction, which the norm above ignores
    assert split["share_xhat"][:, :-1].mean() < split["share_ones"][:, :-1].mean() / 3
    assert split["share_xhat"][:, -1].mean() > split["share_xhat"][:, :-1].mean() * 10
    # the identity behind it, on one stack: the gradient at block l's output x against x itself
    from lnworked.norms import layer_norm, layer_norm_jacobian
    x, readout, sublayers = stack_sublayers("post", 6, seed=1)
    outputs, sums = [], []
    for sublayer in sublayers:
        z = x + sublayer(x)
        x = layer_norm(z)
        sums.append(z)
        outputs.append(x)
    g = readout
    for block in range(5, 0, -1):  # carry g down through block `block` (0-based) to its input
        h = layer_norm_jacobian(sums[block]).T @ g
        x_in = outputs[block - 1]
        sub = sublayers[block]
        g = (np.eye(16) + sub.jacobian(x_in)).T @ h
        # up to eps: J_N^T g is orthogonal to 1 exactly and to the centred sum up to eps
        assert g @ x_in == pytest.approx(h @ (sub.jacobian(x_in) @ x_in - sub(x_in)), rel=1e-3)


def test_random_directions_give_the_rms_gain_and_less_than_the_real_gradient():
    from lnworked.blocks import rms_gain
    from lnworked.placements import variant_spec
    gains = random_direction_gains("post", layers=12, seeds=range(2), directions=400)
    assert gains.shape == (2, 12, 400)
    spec = variant_spec("post")
    x, _, sublayers = stack_sublayers("post", 12, seed=0)
    for block, sublayer in enumerate(sublayers):
        sv = np.linalg.svd(spec.jacobian(x, sublayer, 12), compute_uv=False)
        # Monte Carlo over directions against the singular values: E ||J^T r||^2 = mean s_i^2
        assert np.sqrt(np.mean(gains[0, block] ** 2)) == pytest.approx(rms_gain(sv), rel=0.08)
        x = spec.block(x, sublayer, 12)
    real = backward_gains("post", layers=48, seeds=range(4))["geometric_mean"]
    fresh = np.exp(np.log(random_direction_gains("post", layers=48, seeds=range(4))).mean())
    assert fresh < real
    with pytest.raises(ValueError, match="directions"):
        random_direction_gains("post", layers=4, seeds=[0], directions=0)
