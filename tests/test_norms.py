"""lnworked.norms: LayerNorm and RMSNorm, their invariants, and their analytic Jacobians.

Independent routes: SymPy exact arithmetic for the values (``layer_norm_exact``) and
``jax.jacfwd`` in float64 for the Jacobians.
"""

import functools
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from lnworked.norms import (
    NORMS,
    DegenerateInputError,
    layer_norm,
    layer_norm_jacobian,
    rms_norm,
    rms_norm_jacobian,
)
from lnworked.symbolic import layer_norm_exact

SETTINGS = settings(deadline=None, max_examples=50)

magnitudes = st.floats(1e-3, 1e3)
signed = st.builds(lambda m, s: m * s, magnitudes, st.sampled_from([-1.0, 1.0]))
scales = st.floats(1e-3, 1e3)


@st.composite
def spread_vectors(draw, min_len=2, max_len=8):
    """Finite vectors of length 2..8 whose spread is not ~0 relative to their size."""
    x = np.array(draw(st.lists(signed, min_size=min_len, max_size=max_len)))
    assume(np.std(x) > 1e-2 * np.max(np.abs(x)))
    return x


def spread_gamma(d):
    return st.lists(signed, min_size=d, max_size=d).map(np.array)


eps_values = st.sampled_from([0.0, 1e-5, 1e-2])


def jacobian_scale(name, x, gamma=1.0, eps=0.0):
    """The size of a norm's Jacobian, ``max|gamma| / s`` (entries of ``J`` are at most this).

    For d = 2 the LayerNorm Jacobian is 0 up to rounding, so tolerances are taken relative
    to this scale, not to the entries themselves.
    """
    stat = np.var(x) if name == "layer" else np.mean(np.square(x))
    return np.max(np.abs(gamma)) / math.sqrt(stat + eps)


@functools.lru_cache(maxsize=None)
def _compiled_jacfwd(name, eps):
    return jax.jit(jax.jacfwd(lambda v, g: NORMS[name][0](v, g, eps=eps)))


def jacfwd64(name, x, gamma, eps):
    """The Jacobian of norm ``name`` at ``x`` by forward-mode autodiff, in float64.

    Compiled once per (norm, eps, length): eager ``jacfwd`` compiles every primitive for
    every new shape and is ten times slower here.
    """
    with jax.enable_x64(True):
        as64 = lambda v: jnp.asarray(v, dtype=jnp.float64)  # noqa: E731
        return np.asarray(_compiled_jacfwd(name, eps)(as64(x), as64(gamma)))


# --- values against exact arithmetic ----------------------------------------------------


@SETTINGS
@given(
    st.lists(st.integers(-20, 20), min_size=2, max_size=6).filter(lambda v: len(set(v)) > 1),
    st.integers(-5, 5).filter(bool),
    st.integers(-5, 5),
    st.sampled_from(["0", "1/1000", "3"]),
)
def test_layer_norm_equals_sympy_exact_layer_norm(x, gamma, beta, eps):
    exact = layer_norm_exact(x, gamma, beta, eps)
    computed = layer_norm(np.array(x, dtype=float), gamma, beta, eps=float(eval(eps)))
    np.testing.assert_allclose(computed, np.array(exact.evalf(30), dtype=float).ravel(), rtol=1e-12, atol=1e-12)


@SETTINGS
@given(st.lists(st.integers(-20, 20), min_size=1, max_size=6).filter(any))
def test_rms_norm_has_mean_square_one_and_keeps_the_direction_of_x(x):
    x = np.array(x, dtype=float)
    out = rms_norm(x, eps=0)
    np.testing.assert_allclose(np.mean(out**2), 1.0, rtol=1e-12)
    np.testing.assert_allclose(out * np.linalg.norm(x), x * np.linalg.norm(out), rtol=1e-12, atol=1e-12)


# --- invariants ---------------------------------------------------------------------------


@SETTINGS
@given(spread_vectors(), signed, st.floats(-1e3, 1e3))
def test_layer_norm_output_has_mean_beta_and_variance_gamma_squared(x, gamma, beta):
    out = layer_norm(x, gamma, beta, eps=0)
    scale = abs(gamma) + abs(beta)
    assert abs(np.mean(out) - beta) <= 1e-9 * scale
    np.testing.assert_allclose(np.var(out), gamma**2, rtol=1e-9)


@SETTINGS
@given(spread_vectors(), st.floats(1e-6, 1e2))
def test_layer_norm_with_eps_has_variance_var_over_var_plus_eps(x, eps):
    var = np.var(x)
    np.testing.assert_allclose(np.var(layer_norm(x, eps=eps)), var / (var + eps), rtol=1e-9)


@SETTINGS
@given(st.data())
def test_layer_norm_with_per_feature_gamma_undoes_to_mean_zero_variance_one(data):
    x = data.draw(spread_vectors())
    gamma = data.draw(spread_gamma(len(x)))
    beta = data.draw(st.lists(st.floats(-1e3, 1e3), min_size=len(x), max_size=len(x)).map(np.array))
    x_hat = (layer_norm(x, gamma, beta, eps=0) - beta) / gamma
    assert abs(np.mean(x_hat)) <= 1e-9
    np.testing.assert_allclose(np.var(x_hat), 1.0, rtol=1e-9)


@SETTINGS
@given(spread_vectors(), scales, st.sampled_from(sorted(NORMS)))
def test_norm_is_zero_homogeneous_with_eps_zero(x, c, name):
    norm = NORMS[name][0]
    np.testing.assert_allclose(norm(c * x, eps=0), norm(x, eps=0), rtol=1e-9, atol=1e-9)


@SETTINGS
@given(spread_vectors(), st.floats(-1e3, 1e3))
def test_layer_norm_ignores_a_common_shift(x, shift):
    np.testing.assert_allclose(layer_norm(x + shift, eps=0), layer_norm(x, eps=0), atol=1e-6)


def test_rms_norm_is_not_shift_invariant_unlike_layer_norm():
    x = np.array([1.0, 2.0, 4.0])
    assert not np.allclose(rms_norm(x + 3.0, eps=0), rms_norm(x, eps=0))


def test_norms_act_on_the_last_axis_of_a_batch_row_by_row():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(3, 5))
    gamma, beta = rng.normal(size=5), rng.normal(size=5)
    np.testing.assert_allclose(layer_norm(x, gamma, beta), np.stack([layer_norm(r, gamma, beta) for r in x]))
    np.testing.assert_allclose(rms_norm(x, gamma), np.stack([rms_norm(r, gamma) for r in x]))
    for name, (_, jac) in NORMS.items():
        np.testing.assert_allclose(jac(x, gamma), np.stack([jac(r, gamma) for r in x]), err_msg=name)


# --- Jacobians against autodiff -------------------------------------------------------------


@SETTINGS
@given(st.data(), st.sampled_from(sorted(NORMS)), eps_values)
def test_analytic_norm_jacobian_equals_jax_jacfwd(data, name, eps):
    x = data.draw(spread_vectors())
    gamma = data.draw(spread_gamma(len(x)))
    auto = jacfwd64(name, x, gamma, eps)
    analytic = NORMS[name][1](x, gamma, eps=eps)
    np.testing.assert_allclose(analytic, auto, rtol=1e-8, atol=1e-12 * jacobian_scale(name, x, gamma, eps))


@SETTINGS
@given(spread_vectors(), eps_values)
def test_layer_norm_jacobian_kills_the_ones_direction(x, eps):
    """Shift invariance LN(x + t 1) = LN(x) means J 1 = 0, for every eps."""
    jac = layer_norm_jacobian(x, eps=eps)
    assert np.max(np.abs(jac @ np.ones(len(x)))) <= 1e-12 * jacobian_scale("layer", x, eps=eps)


@SETTINGS
@given(spread_vectors(), st.sampled_from(sorted(NORMS)))
def test_norm_jacobian_kills_x_itself_when_eps_is_zero(x, name):
    """Euler's theorem for a 0-homogeneous map: J(x) x = 0."""
    jac = NORMS[name][1](x, eps=0)
    assert np.max(np.abs(jac @ x)) <= 1e-12 * jacobian_scale(name, x) * np.max(np.abs(x))


def test_norm_jacobian_of_a_jax_array_is_a_jax_array_and_matches_numpy():
    x = np.array([0.5, -1.0, 2.0])
    for name, (norm, jacobian) in NORMS.items():
        out = jacobian(jnp.asarray(x))
        assert isinstance(out, jax.Array), name
        np.testing.assert_allclose(np.asarray(out), jacobian(x), rtol=1e-5, atol=1e-6)
        assert isinstance(norm(jnp.asarray(x)), jax.Array)
        assert isinstance(norm(x), np.ndarray)


def test_integer_jax_input_keeps_a_fractional_scalar_gamma():
    x = [1, 2, 4]
    for name, (norm, _) in NORMS.items():
        np.testing.assert_allclose(norm(jnp.array(x), 2.5), norm(np.array(x, dtype=float), 2.5), rtol=1e-6, err_msg=name)


def test_norms_work_under_jit():
    x = jnp.array([0.5, -1.0, 2.0])
    for name, (norm, _) in NORMS.items():
        np.testing.assert_allclose(jax.jit(norm)(x), norm(x), rtol=1e-6, err_msg=name)


# --- degenerate input (seed 004 Ex 3) ---------------------------------------------------------


@SETTINGS
@given(st.floats(-1e3, 1e3), st.integers(1, 8))
def test_constant_vector_with_eps_zero_raises_a_clear_degenerate_error(c, d):
    x = np.full(d, c)
    for fn in (layer_norm, layer_norm_jacobian):
        with pytest.raises(DegenerateInputError, match=r"^x: the variance is 0.*eps") as info:
            fn(x, eps=0)
        assert isinstance(info.value, ValueError)


@pytest.mark.parametrize("c", [0.1, 0.3, 1 / 3, 5.0])
def test_constant_vector_whose_mean_rounds_is_still_degenerate(c):
    """mean([0.1]*3) != 0.1 in floating point; LN must still see variance 0, not output ±1."""
    x = np.full(3, c)
    with pytest.raises(DegenerateInputError):
        layer_norm(x, eps=0)
    assert np.all(np.isnan(layer_norm(x, eps=0, allow_degenerate=True)))
    np.testing.assert_array_equal(layer_norm(x, eps=1e-5), np.zeros(3))


@SETTINGS
@given(st.floats(-1e3, 1e3), st.integers(1, 8))
def test_allow_degenerate_gives_nan_and_eps_gives_the_zero_vector(c, d):
    x = np.full(d, c)
    assert np.all(np.isnan(layer_norm(x, eps=0, allow_degenerate=True)))
    assert np.all(np.isnan(layer_norm_jacobian(x, eps=0, allow_degenerate=True)))
    np.testing.assert_array_equal(layer_norm(x, eps=1e-5), np.zeros(d))


def test_only_the_degenerate_rows_of_a_batch_become_nan():
    x = np.array([[5.0, 5.0, 5.0], [1.0, 2.0, 3.0]])
    out = layer_norm(x, eps=0, allow_degenerate=True)
    assert np.all(np.isnan(out[0]))
    np.testing.assert_allclose(out[1], layer_norm(x[1], eps=0))
    with pytest.raises(DegenerateInputError):
        layer_norm(x, eps=0)


def test_rms_norm_is_degenerate_only_for_the_zero_vector():
    np.testing.assert_allclose(rms_norm(np.full(4, 5.0), eps=0), np.ones(4))
    with pytest.raises(DegenerateInputError, match=r"^x: the mean square is 0.*eps"):
        rms_norm(np.zeros(4), eps=0)
    assert np.all(np.isnan(rms_norm(np.zeros(4), eps=0, allow_degenerate=True)))
    np.testing.assert_array_equal(rms_norm(np.zeros(4), eps=1e-5), np.zeros(4))


# --- bad input ------------------------------------------------------------------------------

ALL = [layer_norm, layer_norm_jacobian, rms_norm, rms_norm_jacobian]


@pytest.mark.parametrize("fn", ALL)
@pytest.mark.parametrize("eps", [-1e-5, math.nan, math.inf, "0.1"])
def test_bad_eps_raises_naming_eps(fn, eps):
    with pytest.raises(ValueError, match=r"^eps:"):
        fn([1.0, 2.0, 3.0], eps=eps)


@pytest.mark.parametrize("fn", ALL)
@pytest.mark.parametrize("x", [[1.0, math.nan], [math.inf, 0.0], [], 3.0, np.zeros((2, 0))])
def test_non_finite_empty_or_scalar_x_raises_naming_x(fn, x):
    with pytest.raises(ValueError, match=r"^x:"):
        fn(x)


@pytest.mark.parametrize("fn", ALL)
def test_gamma_of_the_wrong_length_raises_naming_gamma(fn):
    with pytest.raises(ValueError, match=r"^gamma:"):
        fn([1.0, 2.0, 3.0], gamma=[1.0, 2.0])


@pytest.mark.parametrize("beta", [[1.0, 2.0], np.ones((3, 3)), math.nan])
def test_beta_of_the_wrong_shape_or_non_finite_raises_naming_beta(beta):
    with pytest.raises(ValueError, match=r"^beta:"):
        layer_norm([1.0, 2.0, 3.0], beta=beta)
