"""The wider family, modern practice (lnworked.placements and the measurements on its stack): the reordered norm, scaled writes, the LLaMA-style stack,
Post-LN's backward factor split in two, and attention logits with and without QK-norm.

Each block is checked against its formula re-computed directly and its Jacobian against
central finite differences; the claims of the chapter "The wider family" are checked as
directions and robust shapes over several seeds (looked at over ten seeds before they were
written down), never as numbers copied from the code.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from lnworked.blocks import MLP, pre_ln
from lnworked.attention_logits import attention_logit_growth
from lnworked.backward_gains import post_ln_gain_split
from lnworked.placements import (
    MODERN_VARIANTS,
    gpt2_residual_scale,
    reordered,
    reordered_jacobian,
    scaled_pre_ln,
    scaled_pre_ln_jacobian,
)
from lnworked.random_stack import stack_profile, stack_sublayers
from lnworked.residual_writes import scaled_write_sweep

EPS = 1e-5
SEEDS = range(6)
LAYERS = 48


def rms(v, eps=EPS):
    v = np.asarray(v, float)
    return v / np.sqrt((v**2).mean(-1, keepdims=True) + eps)


def ln(v, eps=EPS):
    v = np.asarray(v, float)
    mu = v.mean(-1, keepdims=True)
    return (v - mu) / np.sqrt(((v - mu) ** 2).mean(-1, keepdims=True) + eps)


def gelu(z):
    return 0.5 * z * (1 + np.tanh(math.sqrt(2 / math.pi) * (z + 0.044715 * z**3)))


def mlp_direct(f, u):
    return gelu(u @ f.W1.T + f.b1) @ f.W2.T + f.b2


def finite_difference_jacobian(fn, x, h=1e-6):
    cols = []
    for j in range(x.size):
        e = np.zeros_like(x)
        e[j] = h
        cols.append((fn(x + e) - fn(x - e)) / (2 * h))
    return np.stack(cols, axis=-1)


@pytest.fixture
def setup():
    rng = np.random.default_rng(11)
    x = rng.normal(size=8) * 1.7 + 0.3
    f = MLP.random(8, 24, seed=5, scale=1.2, bias=True)
    return x, f


# ----------------------------------------------------------------- blocks against formulas


def test_reordered_is_x_plus_norm_of_branch(setup):
    x, f = setup
    np.testing.assert_allclose(reordered(x, f), x + rms(mlp_direct(f, x)), atol=1e-12)
    np.testing.assert_allclose(reordered(x, f, norm="layer"), x + ln(mlp_direct(f, x)), atol=1e-12)


def test_reordered_write_has_unit_rms_whatever_the_weights(setup):
    x, _ = setup
    for scale in (0.1, 1.0, 10.0):
        f = MLP.random(8, 24, seed=2, scale=scale)
        write = reordered(x, f, eps=0.0) - x
        assert np.sqrt(np.mean(write**2)) == pytest.approx(1.0, rel=1e-12)


def test_scaled_pre_ln_formula_and_limits(setup):
    x, f = setup
    np.testing.assert_allclose(scaled_pre_ln(x, f, 0.3), x + 0.3 * mlp_direct(f, rms(x)), atol=1e-12)
    np.testing.assert_allclose(scaled_pre_ln(x, f, 0.0), x, atol=0)
    np.testing.assert_allclose(scaled_pre_ln(x, f, 1.0, norm="layer"), pre_ln(x, f), atol=1e-12)
    np.testing.assert_allclose(scaled_pre_ln_jacobian(x, f, 0.0), np.eye(8), atol=0)


@pytest.mark.parametrize("norm", ["rms", "layer"])
def test_jacobians_match_finite_differences(setup, norm):
    x, f = setup
    np.testing.assert_allclose(
        reordered_jacobian(x, f, norm), finite_difference_jacobian(lambda v: reordered(v, f, norm), x), atol=1e-6
    )
    np.testing.assert_allclose(
        scaled_pre_ln_jacobian(x, f, 0.4, norm),
        finite_difference_jacobian(lambda v: scaled_pre_ln(v, f, 0.4, norm), x),
        atol=1e-6,
    )


def test_modern_variant_blocks_are_what_they_say(setup):
    x, f = setup
    np.testing.assert_allclose(MODERN_VARIANTS["reordered"].block(x, f, 4), reordered(x, f, "rms"), atol=0)
    np.testing.assert_allclose(
        MODERN_VARIANTS["sandwich_rms"].block(x, f, 4), x + rms(mlp_direct(f, rms(x))), atol=1e-12
    )
    np.testing.assert_allclose(
        MODERN_VARIANTS["scaled"].block(x, f, 4), x + mlp_direct(f, ln(x)) / math.sqrt(4), atol=1e-12
    )
    assert MODERN_VARIANTS["llama"].final == "rms"
    # GPT-2 normalises with LayerNorm; every other modern design here uses RMSNorm
    assert MODERN_VARIANTS["scaled"].norm == "layer" and "GPT-2" in MODERN_VARIANTS["scaled"].label
    assert all(v.identity_path for v in MODERN_VARIANTS.values())
    assert all(v.norm == "rms" for name, v in MODERN_VARIANTS.items() if name != "scaled")


def test_gpt2_init_is_the_residual_weights_scaled_at_initialisation():
    """GPT-2's rule read literally: multiply the weights of the layer that writes into the
    stream (W2 of a bias-free MLP) by 1/sqrt(N), N = L residual layers here, then run a plain
    LayerNorm Pre-LN block; the registry's "scaled" block and its Jacobian agree."""
    rng = np.random.default_rng(4)
    x = rng.normal(size=8) * 2.0 + 0.5
    layers = 9
    f = MLP.random(8, 24, seed=7, scale=1.3)  # zero biases, as at initialisation
    f_scaled = MLP(f.W1, f.b1, f.W2 / math.sqrt(layers), f.b2)
    spec = MODERN_VARIANTS["scaled"]
    np.testing.assert_allclose(spec.block(x, f, layers), pre_ln(x, f_scaled), atol=1e-12)
    np.testing.assert_allclose(spec.block(x, f, layers), x + mlp_direct(f_scaled, ln(x)), atol=1e-12)
    np.testing.assert_allclose(
        spec.jacobian(x, f, layers), finite_difference_jacobian(lambda v: pre_ln(v, f_scaled), x), atol=1e-6
    )


def test_gpt2_residual_scale():
    assert gpt2_residual_scale(12, sublayers_per_layer=2) == pytest.approx(1 / math.sqrt(24))
    scales = [gpt2_residual_scale(layers) for layers in (1, 4, 16, 64)]
    assert scales[0] == 1.0 and all(a > b for a, b in zip(scales, scales[1:]))


@pytest.mark.parametrize("bad", [-0.1, float("nan"), float("inf"), True, "1"])
def test_scale_is_validated(setup, bad):
    x, f = setup
    with pytest.raises(ValueError, match="scale"):
        scaled_pre_ln(x, f, bad)


def test_unknown_modern_variant():
    with pytest.raises(ValueError, match="variant"):
        stack_profile("olmo3", 4)


# ----------------------------------------------------------------- the stack: claims of the chapter


def test_modern_gradient_route_matches_finite_differences():
    """The analytic product of block Jacobians agrees with differencing the whole stack."""
    layers, width = 5, 6
    for name in ("reordered", "scaled", "llama"):
        spec = MODERN_VARIANTS[name]
        x0, w, subs = stack_sublayers("pre", layers, width, seed=3)

        def readout(v):
            for f in subs:
                v = spec.block(v, f, layers)
            if spec.final:
                v = rms(v)
            return w @ v

        grad = np.array([(readout(x0 + e) - readout(x0 - e)) / 2e-6 for e in np.eye(width) * 1e-6])
        profile = stack_profile(name, layers, width, seed=3)
        assert profile.final_input_grad_norm == pytest.approx(np.linalg.norm(grad), rel=1e-5)


@pytest.mark.parametrize("seed", SEEDS)
def test_final_norm_hands_the_head_unit_rms_while_the_stream_grows(seed):
    llama = stack_profile("llama", LAYERS, seed=seed)
    assert llama.output_rms == pytest.approx(1.0, abs=1e-3)
    assert llama.final_stream_rms > 2 * llama.stream_rms[0]
    # the stack itself is Pre-RMSNorm: the same stream
    np.testing.assert_allclose(llama.stream_rms, stack_profile("pre_rms", LAYERS, seed=seed).stream_rms)


@pytest.mark.parametrize("seed", SEEDS)
def test_normalised_writes_bound_the_stream_against_stronger_weights(seed):
    """Reordered and sandwich writes have the norm's scale: tripling every weight barely moves
    the stream; in plain Pre-RMSNorm it multiplies the stream several times over."""
    def growth(name):
        base = stack_profile(name, LAYERS, seed=seed).final_stream_rms
        return stack_profile(name, LAYERS, seed=seed, branch_scale=3.0).final_stream_rms / base

    assert 0.75 < growth("reordered") < 1.33
    assert 0.75 < growth("sandwich_rms") < 1.33
    assert growth("pre_rms") > 3


@pytest.mark.parametrize("seed", SEEDS)
def test_normalised_writes_still_make_a_growing_stream(seed):
    for name in ("reordered", "sandwich_rms"):
        rms_curve = stack_profile(name, LAYERS, seed=seed).stream_rms
        assert rms_curve[-1] > 3 * rms_curve[0]
        assert rms_curve[-1] > rms_curve[LAYERS // 4] > rms_curve[0]


@pytest.mark.parametrize("seed", SEEDS)
def test_scaled_writes_keep_the_stream_and_gradient_near_their_start(seed):
    scaled = stack_profile("scaled", LAYERS, seed=seed)
    plain = stack_profile("pre", LAYERS, seed=seed)  # the same LayerNorm block, unscaled
    assert scaled.final_stream_rms < plain.final_stream_rms
    spread = lambda p: p.input_grad_norm.max() / p.input_grad_norm.min()  # noqa: E731
    assert spread(scaled) < spread(plain)


@pytest.mark.parametrize("seed", SEEDS)
def test_scaled_write_sweep_shape(seed):
    scales = [0.0, 1e-3, 0.1, gpt2_residual_scale(LAYERS), 1.0]
    rows = scaled_write_sweep(scales, LAYERS, seed=seed)
    x0, w, _ = stack_sublayers("pre", LAYERS, 16, seed)
    # s = 0 is the identity stack
    assert rows[0]["final_stream_rms"] == pytest.approx(np.sqrt(np.mean(x0**2)), rel=1e-12)
    assert rows[0]["input_grad_norm"] == pytest.approx(np.linalg.norm(w), rel=1e-12)
    assert rows[0]["grad_spread"] == pytest.approx(1.0)
    # larger writes, larger stream and a less even gradient over depth
    streams = [r["final_stream_rms"] for r in rows]
    spreads = [r["grad_spread"] for r in rows]
    assert streams[-1] > streams[2] and streams[-1] > 2 * streams[0]
    assert spreads[-1] > spreads[2] >= spreads[0]
    # s = 1 is the plain Pre-RMSNorm stack
    assert rows[-1]["final_stream_rms"] == pytest.approx(stack_profile("pre_rms", LAYERS, seed=seed).final_stream_rms)


# ----------------------------------------------------------------- Post-LN's step, split


def test_split_reassembles_the_stack_gradient():
    split = post_ln_gain_split(12, seeds=SEEDS)
    for row, seed in enumerate(SEEDS):
        _, w, _ = stack_sublayers("post", 12, 16, seed)
        total = np.prod(split["gain"][row]) * np.linalg.norm(w)
        assert total == pytest.approx(stack_profile("post", 12, seed=seed).final_input_grad_norm, rel=1e-9)
    np.testing.assert_allclose(split["gain"], split["norm_gain"] * split["branch_gain"])
    assert split["sigma"].shape == (len(SEEDS), 12)
    assert split["mean_gain"] == pytest.approx(np.exp(np.log(split["gain"]).mean()))


@pytest.mark.parametrize("seed", SEEDS)
def test_the_norm_shrinks_the_residual_add_amplifies_and_they_nearly_cancel(seed):
    """J_N shrinks a typical step (1/sigma with sigma > 1), I + J_F amplifies it, and the
    typical step is far closer to 1 than the scalar toy's steady 0.65."""
    split = post_ln_gain_split(LAYERS, seeds=[seed])
    assert np.median(split["norm_gain"]) < 0.95
    assert np.median(split["branch_gain"]) > 1.05
    assert np.median(split["sigma"]) > 1
    assert 0.85 < split["mean_gain"] < 1.15
    assert np.prod(split["gain"]) > 1e3 * 0.65**LAYERS


@pytest.mark.parametrize("seed", SEEDS)
def test_the_norm_factor_is_at_most_one_over_sigma(seed):
    """J_N = (1/sigma) x (a projection): it cannot stretch the gradient by more than 1/sigma."""
    split = post_ln_gain_split(12, seeds=[seed])
    assert np.all(split["norm_gain"] <= 1 / split["sigma"] * (1 + 1e-12))


def test_a_write_bias_is_checked_against_a_hand_built_stack():
    """write_bias = b adds b u (u of unit RMS, from default_rng((seed, 2))) to every write;
    the product of the split's gains times ||w|| is the finite-difference input gradient of
    that stack, built here with blocks.post_ln."""
    from dataclasses import replace

    from lnworked.blocks import post_ln

    layers, width, seed, b = 4, 6, 5, 2.0
    x0, w, subs = stack_sublayers("post", layers, width, seed)
    u = np.random.default_rng((seed, 2)).normal(size=width)
    u /= np.sqrt(np.mean(u**2))
    subs = [replace(f, b2=f.b2 + b * u) for f in subs]

    def readout(v):
        for f in subs:
            v = post_ln(v, f)
        return w @ v

    grad = np.array([(readout(x0 + e) - readout(x0 - e)) / 2e-6 for e in np.eye(width) * 1e-6])
    split = post_ln_gain_split(layers, seeds=[seed], width=width, write_bias=b)
    assert np.prod(split["gain"]) * np.linalg.norm(w) == pytest.approx(np.linalg.norm(grad), rel=1e-5)


def test_a_bias_dominated_write_makes_the_gradient_shrink_like_the_toy():
    """Varying the cause: a bias makes the write (hence sigma) large without touching J_F, so
    the norm's shrinkage is no longer matched by the residual add and the gain falls below 1."""
    means = [post_ln_gain_split(24, seeds=range(4), write_bias=b) for b in (0.0, 1.0, 3.0)]
    gains = [m["mean_gain"] for m in means]
    assert gains[0] > gains[1] > gains[2]
    assert 0.9 < gains[0] and gains[2] < 0.5
    branch = [m["mean_branch_gain"] for m in means]
    assert max(branch) / min(branch) < 1.1  # the residual add does not see the bias
    with pytest.raises(ValueError, match="^write_bias:"):
        post_ln_gain_split(4, write_bias=-1.0)


# ----------------------------------------------------------------- QK-norm


def test_logits_grow_like_c_squared_without_qk_norm():
    rows = attention_logit_growth([1.0, 2.0, 4.0, 8.0], seed=1)
    logits = [r["max_abs_logit"] for r in rows]
    entropies = [r["mean_entropy"] for r in rows]
    for (c0, z0), (c1, z1) in zip(zip([1, 2, 4, 8], logits), zip([2, 4, 8], logits[1:])):
        assert z1 / z0 == pytest.approx((c1 / c0) ** 2, rel=1e-9)
    assert all(a > b for a, b in zip(entropies, entropies[1:]))
    assert entropies[0] <= math.log(16) + 1e-12
    assert entropies[-1] < 0.25 * entropies[0]


@pytest.mark.parametrize("norm", ["layer", "rms"])
def test_qk_norm_makes_the_logits_independent_of_the_weight_scale(norm):
    rows = attention_logit_growth([1.0, 3.0, 10.0], seed=2, qk_norm=True, norm=norm)
    logits = [r["max_abs_logit"] for r in rows]
    entropies = [r["mean_entropy"] for r in rows]
    assert max(logits) / min(logits) < 1.01
    assert max(entropies) - min(entropies) < 1e-2
    exact = attention_logit_growth([1.0, 10.0], seed=2, qk_norm=True, norm=norm, eps=0.0)
    assert exact[0]["max_abs_logit"] == pytest.approx(exact[1]["max_abs_logit"], rel=1e-12)
