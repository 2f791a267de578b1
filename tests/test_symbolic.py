"""lnworked.symbolic: exact SymPy values, checked by exact identities and against the float library."""

import math
from fractions import Fraction

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from lnworked.norms import layer_norm, layer_norm_jacobian
from lnworked.symbolic import (
    exact,
    exact_power,
    exact_sqrt,
    layer_norm_exact,
    layer_norm_jacobian_exact,
    layer_norm_jacobian_symbolic,
)

SETTINGS = settings(deadline=None, max_examples=25)  # SymPy simplification is slow-ish

int_vectors = st.lists(st.integers(-9, 9), min_size=2, max_size=5).filter(lambda v: len(set(v)) > 1)


# --- exact ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["1.3", "0.65", "0.0000022", "1e-5", "-2", "7/3"])
def test_exact_reads_a_decimal_string_as_the_rational_it_denotes(text):
    value = exact(text)
    assert value.is_Rational
    assert Fraction(int(value.p), int(value.q)) == Fraction(text)


@pytest.mark.parametrize("value", [0.1, 1e-5, 0.65, np.float64(0.1), np.float32(0.5), 3, np.int64(3)])
def test_exact_reads_python_and_numpy_numbers_through_their_shortest_repr(value):
    out = exact(value)
    assert out.is_Rational
    assert Fraction(int(out.p), int(out.q)) == Fraction(repr(float(value)))


@pytest.mark.parametrize("bad", [True, "abc", math.nan, math.inf, None, [1, 2]])
def test_exact_rejects_non_numbers(bad):
    with pytest.raises(ValueError, match=r"^value:"):
        exact(bad)


@SETTINGS
@given(st.integers(1, 300), st.integers(-30, 120))
def test_exact_power_equals_the_fraction_power(k, n):
    base = f"{k / 100:.2f}"
    assert exact_power(base, n) == sp.Rational(Fraction(base) ** n)


@pytest.mark.parametrize("bad", [2.5, 10.0, "10", True])
def test_exact_power_rejects_a_non_integer_exponent(bad):
    with pytest.raises(ValueError, match=r"^exponent:"):
        exact_power("1.3", bad)


@pytest.mark.parametrize("n", [1, 5, 24, 96, "0.25"])
def test_exact_sqrt_is_the_non_negative_root_kept_exact(n):
    root = exact_sqrt(n)
    assert sp.simplify(root**2 - exact(n)) == 0
    assert root.is_nonnegative
    assert math.isclose(float(root), math.sqrt(float(exact(n))), rel_tol=1e-15)


def test_exact_sqrt_keeps_surds_irrational():
    assert exact_sqrt(5).is_irrational and exact_sqrt(24).is_irrational and exact_sqrt(96).is_irrational


# --- layer_norm_exact ---------------------------------------------------------------------------------


@SETTINGS
@given(int_vectors, st.integers(-4, 4).filter(bool), st.integers(-4, 4))
def test_layer_norm_exact_has_mean_beta_and_variance_gamma_squared_exactly(x, gamma, beta):
    y = layer_norm_exact(x, gamma, beta)
    d = len(x)
    assert sp.simplify(sum(y) / d - beta) == 0
    assert sp.simplify(sum((v - beta) ** 2 for v in y) / d - gamma**2) == 0


@SETTINGS
@given(int_vectors, st.sampled_from(["0", "1/100", "1e-5", "2"]))
def test_layer_norm_exact_agrees_with_the_float_layer_norm(x, eps):
    y = layer_norm_exact(x, eps=eps)
    computed = layer_norm(np.array(x, dtype=float), eps=float(exact(eps)))
    np.testing.assert_allclose(np.array(y.evalf(30), dtype=float).ravel(), computed, rtol=1e-13, atol=1e-14)


def test_layer_norm_exact_is_not_rounded_to_a_nearby_simple_number():
    """Seed 004 Ex 4: 100 / sqrt(10000 + 1e-5) is within 1e-9 of 1 but is not 1."""
    y = layer_norm_exact([100, -100, 100, -100], eps="1e-5")
    assert sp.simplify(y[0] ** 2 - sp.Rational(10000) / (10000 + sp.Rational(1, 100000))) == 0
    assert y[0] != 1


def test_layer_norm_exact_takes_per_feature_gamma_and_beta_as_any_sequence():
    x = [-2, 0, 2, 4]
    scalar = layer_norm_exact(x, 2, 1)
    assert layer_norm_exact(x, [2, 2, 2, 2], (1, 1, 1, 1)) == scalar
    assert layer_norm_exact(x, np.full(4, 2.0), np.ones(4)) == scalar


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"x": []}, "x"),
        ({"x": [5, 5, 5, 5]}, "x"),
        ({"x": [1, 2, 3], "gamma": [1, 2]}, "gamma"),
        ({"x": [1, 2, 3], "beta": [1, 2, 3, 4]}, "beta"),
        ({"x": [1, 2], "eps": "-1"}, "eps"),
        ({"x": [1, 2], "eps": -1e-5}, "eps"),
        ({"x": [1, "a"]}, "value"),
    ],
)
def test_layer_norm_exact_rejects_bad_input_by_name(kwargs, name):
    with pytest.raises(ValueError, match=rf"^{name}:"):
        layer_norm_exact(**kwargs)


def test_layer_norm_exact_degenerate_error_says_the_variance_is_zero():
    with pytest.raises(ValueError, match="variance is 0"):
        layer_norm_exact([5, 5, 5, 5])
    assert layer_norm_exact([5, 5, 5, 5], eps="1e-5") == sp.zeros(4, 1)


# --- symbolic Jacobian -------------------------------------------------------------------------------------


@SETTINGS
@given(int_vectors, st.sampled_from(["0", "1/10", "1e-5"]))
def test_symbolic_layer_norm_jacobian_agrees_with_the_analytic_float_jacobian(x, eps):
    exact_jac = np.array(layer_norm_jacobian_exact(x, eps).evalf(30), dtype=float)
    analytic = layer_norm_jacobian(np.array(x, dtype=float), eps=float(exact(eps)))
    scale = 1 / math.sqrt(np.var(x) + float(exact(eps)))
    np.testing.assert_allclose(analytic, exact_jac, rtol=1e-12, atol=1e-13 * scale)


@pytest.mark.parametrize("d", [2, 3, 4])
def test_symbolic_layer_norm_jacobian_kills_the_ones_direction_identically(d):
    xs, jac = layer_norm_jacobian_symbolic(d)
    assert jac.shape == (d, d) and len(xs) == d
    assert sp.simplify(jac * sp.ones(d, 1)) == sp.zeros(d, 1)


def test_symbolic_layer_norm_jacobian_is_zero_for_two_features_and_eps_zero():
    """For d = 2, LN(x) = ±(1, -1) / ... is constant off the diagonal x_0 = x_1."""
    assert layer_norm_jacobian_exact([2, -1]) == sp.zeros(2, 2)
    assert layer_norm_jacobian_exact([2, -1], eps="1e-5") != sp.zeros(2, 2)


@pytest.mark.parametrize("d", [0, -1, 2.0])
def test_symbolic_layer_norm_jacobian_rejects_a_size_below_one(d):
    with pytest.raises(ValueError, match=r"^d:"):
        layer_norm_jacobian_symbolic(d)
