"""lnworked.blocks: Post-LN and Pre-LN blocks and their Jacobians.

Analytic block Jacobians ``J_N (I + J_F)`` (Post-LN) and ``I + J_F J_N`` (Pre-LN) are checked
against ``jax.jacfwd`` in float64 (``autodiff_jacobian``), input gradients against
``jax.vjp``, and forward values against the norm formulas written out here.
Shapes are fixed (d = 4, hidden 8) so JAX compiles each primitive once.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from lnworked.blocks import (
    BLOCKS,
    MLP,
    Linear,
    autodiff_jacobian,
    block_singular_values,
    input_gradient,
    jacobian_singular_value_samples,
    post_ln,
    post_ln_jacobian,
    pre_ln,
    pre_ln_jacobian,
)

SETTINGS = settings(deadline=None, max_examples=50)
AUTODIFF = settings(deadline=None, max_examples=25)  # eager JAX: about 0.1 s an example
D, HIDDEN = 4, 8

signed = st.builds(lambda m, s: m * s, st.floats(1e-3, 1e3), st.sampled_from([-1.0, 1.0]))


@st.composite
def vectors(draw, d=D):
    x = np.array(draw(st.lists(signed, min_size=d, max_size=d)))
    assume(np.std(x) > 1e-2 * np.max(np.abs(x)))
    return x


@st.composite
def sublayers(draw):
    """A random GELU MLP (d -> 8 -> d) or a random affine map."""
    seed = draw(st.integers(0, 2**16))
    scale = draw(st.floats(0.1, 3.0))
    if draw(st.booleans()):
        return MLP.random(D, HIDDEN, seed=seed, scale=scale, bias=draw(st.booleans()))
    rng = np.random.default_rng(seed)
    return Linear(rng.normal(0, scale, (D, D)), rng.normal(0, scale, D))


placements = st.sampled_from(sorted(BLOCKS))
norms = st.sampled_from(["layer", "rms"])
eps_values = st.sampled_from([0.0, 1e-5])


def formula_norm(name, z, eps):
    """LayerNorm / RMSNorm written out directly (gamma = 1, beta = 0)."""
    if name == "layer":
        return (z - z.mean()) / np.sqrt(z.var() + eps)
    return z / np.sqrt(np.mean(z**2) + eps)


def well_conditioned(x, sublayer, placement):
    """The vector the norm sees has a spread that is not ~0."""
    z = x + sublayer(x) if placement == "post" else x
    return np.std(z) > 1e-2 * np.max(np.abs(z))


# --- sublayers ------------------------------------------------------------------------------


def test_linear_is_w_u_plus_b_with_jacobian_w_for_every_row_of_a_batch():
    rng = np.random.default_rng(0)
    W, b, u = rng.normal(size=(D, D)), rng.normal(size=D), rng.normal(size=(3, D))
    f = Linear(W, b)
    np.testing.assert_allclose(f(u), np.stack([W @ r + b for r in u]))
    assert f.jacobian(u).shape == (3, D, D)
    np.testing.assert_array_equal(f.jacobian(u)[2], W)


def test_mlp_is_w2_gelu_tanh_of_w1_u_plus_b1_plus_b2():
    f = MLP.random(D, HIDDEN, seed=3, bias=True)
    u = np.array([0.3, -1.2, 2.0, 0.1])
    expected = f.W2 @ np.asarray(jax.nn.gelu(jnp.asarray(f.W1 @ u + f.b1), approximate=True)) + f.b2
    np.testing.assert_allclose(f(u), expected, rtol=1e-6)


@AUTODIFF
@given(st.integers(0, 2**16), st.floats(0.1, 3.0), vectors())
def test_mlp_jacobian_equals_jax_jacfwd(seed, scale, u):
    f = MLP.random(D, HIDDEN, seed=seed, scale=scale, bias=True)
    u = u / np.max(np.abs(u)) * 3  # GELU's interesting range
    with jax.enable_x64(True):
        auto = np.asarray(jax.jacfwd(f)(jnp.asarray(u, dtype=jnp.float64)))
    np.testing.assert_allclose(f.jacobian(u), auto, rtol=1e-9, atol=1e-12)


def test_mlp_jacobian_of_a_batch_is_the_stack_of_row_jacobians():
    f = MLP.random(D, HIDDEN, seed=1, bias=True)
    u = np.random.default_rng(1).normal(size=(5, D))
    np.testing.assert_allclose(f.jacobian(u), np.stack([f.jacobian(r) for r in u]))


def test_mlp_random_is_reproducible_by_seed_and_has_zero_biases_by_default():
    a, b, c = MLP.random(D, HIDDEN, seed=5), MLP.random(D, HIDDEN, seed=5), MLP.random(D, HIDDEN, seed=6)
    np.testing.assert_array_equal(a.W1, b.W1)
    assert not np.array_equal(a.W1, c.W1)
    assert a.W1.shape == (HIDDEN, D) and a.W2.shape == (D, HIDDEN)
    assert not np.any(a.b1) and not np.any(a.b2)
    assert np.all(MLP.random(D, HIDDEN, seed=5, bias=True).b1 != 0)
    np.testing.assert_array_equal(a(np.zeros(D)), np.zeros(D))  # zero-bias init: F(0) = 0


# --- forward values --------------------------------------------------------------------------


@SETTINGS
@given(vectors(), sublayers(), norms, eps_values)
def test_post_ln_is_the_norm_of_x_plus_f_of_x(x, sublayer, norm, eps):
    assume(well_conditioned(x, sublayer, "post"))
    expected = formula_norm(norm, x + sublayer(x), eps)
    np.testing.assert_allclose(post_ln(x, sublayer, norm, eps), expected, rtol=1e-9, atol=1e-9)


@SETTINGS
@given(vectors(), sublayers(), norms, eps_values)
def test_pre_ln_is_x_plus_f_of_the_norm_of_x(x, sublayer, norm, eps):
    expected = x + sublayer(formula_norm(norm, x, eps))
    np.testing.assert_allclose(pre_ln(x, sublayer, norm, eps), expected, rtol=1e-9, atol=1e-9 * np.max(np.abs(expected)))


# --- block Jacobians against autodiff ------------------------------------------------------------


@SETTINGS
@given(vectors(), sublayers(), placements, norms, eps_values)
def test_analytic_block_jacobian_equals_jax_jacfwd(x, sublayer, placement, norm, eps):
    assume(well_conditioned(x, sublayer, placement))
    analytic = BLOCKS[placement][1](x, sublayer, norm, eps)
    auto = autodiff_jacobian(placement, x, sublayer, norm, eps)
    np.testing.assert_allclose(analytic, auto, rtol=1e-7, atol=1e-9 * (1 + np.max(np.abs(auto))))


def test_analytic_block_jacobians_of_a_batch_are_the_stacks_of_row_jacobians():
    f = MLP.random(D, HIDDEN, seed=2)
    x = np.random.default_rng(2).normal(size=(3, D))
    for placement, (_, jacobian) in BLOCKS.items():
        np.testing.assert_allclose(jacobian(x, f), np.stack([jacobian(r, f) for r in x]), err_msg=placement)


def test_autodiff_jacobian_runs_in_float64():
    f = MLP.random(D, HIDDEN, seed=2)
    x = np.array([0.7, -1.2, 2.0, 0.4])
    auto = autodiff_jacobian("pre", x, f)
    assert auto.dtype == np.float64
    assert np.max(np.abs(auto - pre_ln_jacobian(x, f))) < 1e-12  # float32 would leave ~1e-7


@AUTODIFF
@given(vectors(), sublayers(), eps_values)
def test_pre_ln_passes_the_ones_direction_and_post_ln_gradient_of_ones_vanishes(x, sublayer, eps):
    """LayerNorm kills the ones direction, so by autodiff (not the analytic formulas):
    Pre-LN's J 1 = 1 + J_F J_N 1 = 1 (the identity path), Post-LN's 1^T J = 1^T J_N (...) = 0."""
    assume(well_conditioned(x, sublayer, "post"))
    ones = np.ones(D)
    pre = autodiff_jacobian("pre", x, sublayer, "layer", eps)
    post = autodiff_jacobian("post", x, sublayer, "layer", eps)
    np.testing.assert_allclose(pre @ ones, ones, atol=1e-9)
    assert np.max(np.abs(ones @ post)) <= 1e-9 * (1 + np.max(np.abs(post)))


def test_zero_sublayer_makes_pre_ln_jacobian_the_identity_and_post_ln_the_norm_jacobian():
    from lnworked.norms import layer_norm_jacobian

    zero = Linear(np.zeros((D, D)))
    x = np.array([0.7, -1.2, 2.0, 0.4])
    np.testing.assert_array_equal(pre_ln_jacobian(x, zero), np.eye(D))
    np.testing.assert_allclose(post_ln_jacobian(x, zero), layer_norm_jacobian(x))


# --- input gradient ---------------------------------------------------------------------------------


@AUTODIFF
@given(vectors(), sublayers(), placements, st.lists(st.floats(-10, 10), min_size=D, max_size=D))
def test_input_gradient_equals_jax_vjp(x, sublayer, placement, upstream):
    assume(well_conditioned(x, sublayer, placement))
    block, jacobian = BLOCKS[placement]
    g = np.array(upstream)
    with jax.enable_x64(True):
        _, vjp = jax.vjp(lambda v: block(v, sublayer), jnp.asarray(x, dtype=jnp.float64))
        auto = np.asarray(vjp(jnp.asarray(g))[0])
    np.testing.assert_allclose(input_gradient(jacobian(x, sublayer), g), auto, rtol=1e-7, atol=1e-9 * (1 + np.max(np.abs(auto))))


def test_input_gradient_is_j_transpose_g_not_j_g():
    J = np.array([[1.0, 2.0], [0.0, 3.0]])
    g = np.array([1.0, 1.0])
    np.testing.assert_array_equal(input_gradient(J, g), J.T @ g)
    assert not np.array_equal(input_gradient(J, g), J @ g)


# --- bad input ---------------------------------------------------------------------------------------

X = np.array([0.7, -1.2, 2.0, 0.4])
F = MLP.random(D, HIDDEN, seed=0)
BLOCK_FUNCTIONS = [post_ln, pre_ln, post_ln_jacobian, pre_ln_jacobian]


@pytest.mark.parametrize("fn", BLOCK_FUNCTIONS)
def test_unknown_norm_raises_naming_norm(fn):
    with pytest.raises(ValueError, match=r"^norm:"):
        fn(X, F, norm="batch")


@pytest.mark.parametrize("fn", BLOCK_FUNCTIONS)
@pytest.mark.parametrize("x", [[0.1, np.nan, 0.2, 0.3], [], np.inf])
def test_bad_x_raises_naming_x(fn, x):
    with pytest.raises(ValueError, match=r"^x:"):
        fn(x, F)


@pytest.mark.parametrize("fn", BLOCK_FUNCTIONS)
def test_negative_eps_raises_naming_eps(fn):
    with pytest.raises(ValueError, match=r"^eps:"):
        fn(X, F, eps=-1e-5)


def test_unknown_placement_raises_naming_placement():
    with pytest.raises(ValueError, match=r"^placement:"):
        autodiff_jacobian("sandwich", X, F)


@pytest.mark.parametrize("upstream", [np.ones(3), [], [1.0, np.nan, 0.0, 0.0]])
def test_bad_upstream_gradient_raises_naming_upstream(upstream):
    with pytest.raises(ValueError, match=r"^upstream:"):
        input_gradient(np.eye(D), upstream)


# --- singular values of the block Jacobians ------------------------------------------------------


def test_block_singular_values_are_those_of_the_autodiff_jacobians():
    f = MLP.random(D, HIDDEN, seed=4)
    x = np.array([[0.7, -1.2, 2.0, 0.4], [3.0, -5.0, 1.0, 8.0], [0.1, 0.2, -0.3, 0.05]])
    pre, post = block_singular_values(x, f)
    for row, sv_pre, sv_post in zip(x, pre, post):
        for placement, values in (("pre", sv_pre), ("post", sv_post)):
            expected = np.linalg.svd(autodiff_jacobian(placement, row, f), compute_uv=False)
            np.testing.assert_allclose(values, expected, rtol=1e-9, atol=1e-12, err_msg=placement)
            assert np.all(np.diff(values) <= 0), "descending"


def test_rms_gain_is_the_root_mean_square_stretch_over_random_directions():
    from lnworked.blocks import rms_gain

    # Monte Carlo over unit directions u against the formula on the singular values
    f = MLP.random(D, HIDDEN, seed=4)
    x = np.array([0.7, -1.2, 2.0, 0.4])
    rng = np.random.default_rng(0)
    u = rng.normal(size=(200_000, D))
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    for placement in ("pre", "post"):
        jac = np.asarray(autodiff_jacobian(placement, x, f))
        monte_carlo = np.sqrt(np.mean(np.sum((u @ jac.T) ** 2, axis=1)))
        singular = np.linalg.svd(jac, compute_uv=False)
        assert rms_gain(singular) == pytest.approx(monte_carlo, rel=5e-3), placement
    np.testing.assert_allclose(rms_gain([[3.0, 4.0], [1.0, 1.0]]), [np.sqrt(12.5), 1.0])
    with pytest.raises(ValueError, match="singular_values"):
        rms_gain(np.zeros((2, 0)))


def test_jacobian_singular_value_samples_follow_the_documented_protocol():
    d, samples, seed = 6, 20, 3
    pre, post, sigma = jacobian_singular_value_samples(d, samples, seed)
    rng = np.random.default_rng(seed)
    scale = 10.0 ** rng.uniform(0.0, 1.0, (samples, 1))
    x = scale * rng.normal(0.0, 1.0, (samples, d))
    f = MLP.random(d, 4 * d, seed=seed)
    # Pre-LN at the stream x (std 1 to 10); Post-LN at the previous norm's output LN(x) (std 1)
    u = (x - x.mean(axis=1, keepdims=True)) / np.sqrt(x.var(axis=1, keepdims=True) + 1e-5)
    expected_pre, _ = block_singular_values(x, f)
    _, expected_post = block_singular_values(u, f)
    np.testing.assert_array_equal(pre, expected_pre)
    np.testing.assert_allclose(post, expected_post, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(sigma, [np.std(row + f(row)) for row in u])
    assert np.all((1 <= scale) & (scale <= 10))
    np.testing.assert_allclose(np.std(u, axis=1), 1.0, atol=1e-4)  # 1 up to eps


def test_post_ln_has_two_near_zero_singular_values_and_scales_like_one_over_sigma():
    pre, post, sigma = jacobian_singular_value_samples(d=8, samples=50, seed=1)
    assert pre.shape == post.shape == (50, 8) and sigma.shape == (50,)
    near_zero = post < 1e-4 * post[:, :1]
    assert np.all(near_zero.sum(axis=1) == 2), "LN removes exactly the mean and scale directions"
    assert pre.min() > 1e-3, "Pre-LN keeps the identity term: no direction is lost"
    # Post-LN's largest singular value shrinks as sigma grows: strongly anti-correlated.
    assert np.corrcoef(np.log(sigma), np.log(post[:, 0]))[0, 1] < -0.8
    # Pre-LN passes the ones direction unchanged (J 1 = 1), so its largest singular value is
    # at least 1 at every input.
    assert np.all(pre[:, 0] >= 1 - 1e-12)
    # Of Post-LN's two near-zero values, the ones direction's is zero to rounding; the scale
    # direction's is of order eps (J_N's eigenvalue there is eps / (sigma^2 + eps)^(3/2)).
    assert np.all(post[:, -1] < 1e-12)
    assert np.all((post[:, -2] > 1e-7) & (post[:, -2] < 1e-4))


@pytest.mark.parametrize("kwargs, name", [({"d": 1}, "d"), ({"samples": 0}, "samples"), ({"seed": -1}, "seed"),
                                          ({"d": 4.0}, "d")])
def test_jacobian_singular_value_samples_rejects_bad_arguments_by_name(kwargs, name):
    with pytest.raises(ValueError, match=rf"^{name}:"):
        jacobian_singular_value_samples(**kwargs)
