"""lnworked.depth: gradient factors over depth and residual-stream growth.

Independent routes: exact rationals (``fractions.Fraction`` and SymPy), a brute-force search
for ``depth_below``, and the sampling distribution of a Monte Carlo variance.
"""

import math
from fractions import Fraction

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from lnworked.depth import (
    depth_below,
    gradient_factor,
    gradient_factors,
    post_ln_stream_std,
    residual_std,
    residual_variance,
    residual_variance_monte_carlo,
)
from lnworked.symbolic import exact_power

SETTINGS = settings(deadline=None, max_examples=50)

# Per-layer factors written as decimals, the way the seeds state them ("0.65").
decimal_factors = st.integers(1, 300).map(lambda k: f"{k / 100:.2f}")


@SETTINGS
@given(decimal_factors, st.integers(1, 120))
def test_gradient_factor_equals_the_exact_power(per_layer, layers):
    exact = exact_power(per_layer, layers)
    assert math.isclose(gradient_factor(float(per_layer), layers), float(exact), rel_tol=1e-12)


@SETTINGS
@given(st.floats(-3, 3), st.integers(1, 40))
def test_gradient_factors_lists_the_factor_after_each_depth(per_layer, layers):
    factors = gradient_factors(per_layer, layers)
    assert factors.shape == (layers,)
    expected = [float(Fraction(per_layer) ** k) for k in range(1, layers + 1)]
    np.testing.assert_allclose(factors, expected, rtol=1e-12, atol=1e-300)


def test_pre_ln_factor_of_at_least_one_never_shrinks_and_post_ln_below_one_always_does():
    assert np.all(np.diff(gradient_factors(1.3, 24)) > 0)
    assert np.all(gradient_factors(1.0, 24) == 1.0)
    assert np.all(np.diff(gradient_factors(0.6, 24)) < 0)


def _depth_by_search(f, t):
    depth = 1
    while f**depth >= t:
        depth += 1
    return depth


@SETTINGS
@given(st.floats(0.05, 0.99), st.floats(1e-6, 0.99))
def test_depth_below_is_the_first_depth_where_the_factor_drops_below_the_threshold(f, t):
    depth = depth_below(f, t)
    assert depth == _depth_by_search(f, t)
    assert Fraction(f) ** depth < Fraction(t)
    assert depth == 1 or Fraction(f) ** (depth - 1) >= Fraction(t)


@pytest.mark.parametrize("f, k", [(0.5, 1), (0.5, 2), (0.5, 10), (0.25, 3)])
def test_depth_below_does_not_count_an_exact_power_equal_to_the_threshold(f, k):
    t = f**k
    assert Fraction(f) ** k == Fraction(t)  # exact in binary floating point
    assert depth_below(f, t) == k + 1


# --- residual stream -------------------------------------------------------------------------------


@SETTINGS
@given(st.integers(1, 1000), st.floats(1e-3, 1e3), st.floats(0, 1e3))
def test_residual_variance_adds_n_times_v_to_the_initial_variance(n, v, v0):
    exact = Fraction(v0) + n * Fraction(v)
    assert math.isclose(residual_variance(n, v, v0), float(exact), rel_tol=1e-12)


@pytest.mark.parametrize("n", [1, 24, 96])
def test_residual_std_is_the_exact_square_root_of_n(n):
    assert math.isclose(residual_std(n), float(sp.sqrt(n)), rel_tol=1e-15)


@SETTINGS
@given(st.integers(1, 100), st.floats(1e-3, 1e3), st.integers(0, 2**32 - 1))
def test_monte_carlo_variance_is_within_six_standard_errors_of_n_v(n, v, seed):
    """Sample variance of n i.i.d. Normal(0, v) sums over m samples: standard error N v sqrt(2/(m-1)).

    Six standard errors: a correct sampler fails about once in 5e8 examples.
    """
    samples = 4000
    standard_error = n * v * math.sqrt(2 / (samples - 1))
    estimate = residual_variance_monte_carlo(n, v, samples=samples, seed=seed)
    assert abs(estimate - n * v) <= 6 * standard_error


def test_monte_carlo_errors_are_distributed_like_the_stated_standard_error():
    """Over 200 seeds about 95 % of estimates lie within 2 standard errors and about 38 %
    within 0.5 (normal quantiles); a wrong or far too loose error model fails this."""
    n, v, samples = 5, 2.0, 2000
    standard_error = n * v * math.sqrt(2 / (samples - 1))
    z = np.array([(residual_variance_monte_carlo(n, v, samples, seed) - n * v) / standard_error for seed in range(200)])
    assert 0.88 <= np.mean(np.abs(z) < 2) <= 0.995
    assert 0.26 <= np.mean(np.abs(z) < 0.5) <= 0.50
    assert abs(np.mean(z)) < 0.3


def test_monte_carlo_is_reproducible_by_seed():
    a = residual_variance_monte_carlo(24, samples=1000, seed=3)
    assert a == residual_variance_monte_carlo(24, samples=1000, seed=3)
    assert a != residual_variance_monte_carlo(24, samples=1000, seed=4)


# --- bad input ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("layers", [0, -3, 2.5, True, "12"])
def test_gradient_factor_rejects_a_depth_below_one_or_not_an_integer(layers):
    with pytest.raises(ValueError, match=r"^layers:"):
        gradient_factor(0.6, layers)
    with pytest.raises(ValueError, match=r"^layers:"):
        gradient_factors(0.6, layers)


@pytest.mark.parametrize("per_layer", [math.nan, math.inf, "0.6", None, True])
def test_gradient_factor_rejects_a_non_finite_or_non_numeric_factor(per_layer):
    with pytest.raises(ValueError, match=r"^per_layer:"):
        gradient_factor(per_layer, 3)
    with pytest.raises(ValueError, match=r"^per_layer:"):
        gradient_factors(per_layer, 3)


@pytest.mark.parametrize("per_layer", [0, -0.6, 0.0, 1.0, 1.3, math.nan])
def test_depth_below_rejects_a_factor_whose_logarithm_is_not_negative_or_defined(per_layer):
    with pytest.raises(ValueError, match=r"^per_layer:"):
        depth_below(per_layer, 0.01)


@pytest.mark.parametrize("threshold", [0, -0.1, 1.0, 2.0])
def test_depth_below_rejects_a_threshold_outside_zero_one(threshold):
    with pytest.raises(ValueError, match=r"^threshold:"):
        depth_below(0.6, threshold)


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"additions": 0}, "additions"),
        ({"additions": 1.5}, "additions"),
        ({"additions": 3, "branch_variance": 0}, "branch_variance"),
        ({"additions": 3, "branch_variance": -1.0}, "branch_variance"),
        ({"additions": 3, "branch_variance": math.nan}, "branch_variance"),
        ({"additions": 3, "initial_variance": -1.0}, "initial_variance"),
        ({"additions": 3, "initial_variance": math.inf}, "initial_variance"),
        ({"additions": 3, "initial_variance": "0"}, "initial_variance"),
    ],
)
def test_residual_variance_and_std_reject_bad_arguments_by_name(kwargs, name):
    for fn in (residual_variance, residual_std):
        with pytest.raises(ValueError, match=rf"^{name}:"):
            fn(**kwargs)


@pytest.mark.parametrize(
    "args, name",
    [((0,), "additions"), ((3, 0.0), "branch_variance"), ((3, 1.0, 0), "samples"), ((3, 1.0, 10.5), "samples")],
)
def test_monte_carlo_rejects_bad_arguments_by_name(args, name):
    with pytest.raises(ValueError, match=rf"^{name}:"):
        residual_variance_monte_carlo(*args)


# --- the Post-LN stream -------------------------------------------------------------------------------


def test_post_ln_stream_std_is_exactly_one_without_eps():
    np.testing.assert_allclose(post_ln_stream_std(40, 3.0, samples=500, seed=2, eps=0.0), 1.0, rtol=1e-12)


@pytest.mark.parametrize("v", [0.25, 1.0, 4.0])
def test_post_ln_stream_std_falls_short_of_one_by_about_eps_over_two_one_plus_v(v):
    """std = sqrt(s^2 / (s^2 + eps)) with s^2 ~ 1 + v, so 1 - std ~ eps / (2 (1 + v))."""
    eps = 1e-3
    stds = post_ln_stream_std(30, v, samples=4000, seed=5, eps=eps)
    shortfall = 1 - stds
    assert np.all(shortfall > 0)
    np.testing.assert_allclose(shortfall, eps / (2 * (1 + v)), rtol=0.2)


def test_post_ln_stream_stays_at_one_while_pre_ln_grows_like_sqrt_n():
    """Same additions: Pre-LN's Monte Carlo variance is within 6 standard errors of N v
    (:func:`residual_variance_monte_carlo`), Post-LN's std stays 1, so their ratio is ~sqrt(N v)."""
    v, samples, seed = 2.0, 4000, 7
    post = post_ln_stream_std(64, v, samples, seed)
    for n in (1, 4, 16, 64):
        pre_variance = residual_variance_monte_carlo(n, v, samples, seed)
        assert abs(pre_variance - n * v) <= 6 * n * v * math.sqrt(2 / (samples - 1))
        assert post[n - 1] == pytest.approx(1.0, abs=1e-5)
        assert math.sqrt(pre_variance) / post[n - 1] == pytest.approx(residual_std(n, v), rel=0.15)


def test_post_ln_stream_std_is_reproducible_by_seed():
    a = post_ln_stream_std(5, samples=100, seed=3, eps=1e-2)
    np.testing.assert_array_equal(a, post_ln_stream_std(5, samples=100, seed=3, eps=1e-2))
    assert not np.array_equal(a, post_ln_stream_std(5, samples=100, seed=4, eps=1e-2))


@pytest.mark.parametrize(
    "kwargs, name",
    [({"additions": 0}, "additions"), ({"additions": 3, "branch_variance": 0.0}, "branch_variance"),
     ({"additions": 3, "samples": 1}, "samples"), ({"additions": 3, "seed": -1}, "seed"),
     ({"additions": 3, "eps": -1.0}, "eps")],
)
def test_post_ln_stream_std_rejects_bad_arguments_by_name(kwargs, name):
    with pytest.raises(ValueError, match=rf"^{name}:"):
        post_ln_stream_std(**kwargs)


def test_gradient_norm_profile_of_equal_gains_is_the_scalar_toy():
    from lnworked.depth import gradient_norm_profile

    profile = gradient_norm_profile([0.65] * 10)
    assert profile.shape == (11,) and profile[-1] == 1.0
    np.testing.assert_allclose(profile, [gradient_factor(0.65, 10 - l) if l < 10 else 1.0 for l in range(11)])


def test_gradient_norm_profile_multiplies_the_gains_above_each_layer():
    from lnworked.depth import gradient_norm_profile

    gains = [2.0, 0.5, 3.0]
    # by hand: layer 0 sees all three blocks, layer 1 blocks 2 and 3, layer 2 block 3, layer 3 (the top) none
    np.testing.assert_allclose(gradient_norm_profile(gains), [3.0, 1.5, 3.0, 1.0])


@pytest.mark.parametrize("bad", [[], [[1.0]], [1.0, float("nan")], [-0.5]])
def test_gradient_norm_profile_rejects_bad_gains(bad):
    from lnworked.depth import gradient_norm_profile

    with pytest.raises(ValueError, match="gains"):
        gradient_norm_profile(bad)
