"""lnworked.validation: every bad input is a ValueError whose message starts with the argument's name."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from lnworked.validation import (
    array_module,
    as_array,
    check_depth,
    check_eps,
    check_fraction,
    check_positive,
    check_vector_args,
    is_traced,
)


def raises_naming(name):
    """``pytest.raises`` for a ValueError whose message begins with ``name:``."""
    return pytest.raises(ValueError, match=rf"^{name}:")


# --- as_array ------------------------------------------------------------------------


def test_as_array_turns_a_list_into_a_float_numpy_vector():
    out = as_array([1, 2, 3], "x")
    assert isinstance(out, np.ndarray)
    assert out.dtype == np.float64
    np.testing.assert_array_equal(out, np.arange(1, 4))


def test_as_array_keeps_a_jax_array_a_jax_array():
    x = jnp.arange(3.0)
    assert isinstance(as_array(x, "x"), jax.Array)


def test_as_array_makes_an_integer_jax_array_float():
    out = as_array(jnp.arange(3), "x")
    assert isinstance(out, jax.Array) and jnp.issubdtype(out.dtype, jnp.floating)


@pytest.mark.parametrize("bad", [[1.0, math.nan], [math.inf, 1.0], [-math.inf], np.array([[1.0, 2.0], [3.0, math.nan]])])
def test_as_array_rejects_non_finite_values_naming_the_argument(bad):
    with raises_naming("x"):
        as_array(bad, "x")


def test_as_array_rejects_non_finite_jax_values():
    with raises_naming("x"):
        as_array(jnp.array([1.0, jnp.nan]), "x")


@pytest.mark.parametrize("bad", [[], np.zeros((3, 0)), np.zeros((0, 4))])
def test_as_array_rejects_an_empty_vector(bad):
    with pytest.raises(ValueError, match=r"^upstream: .*empty"):
        as_array(bad, "upstream")


def test_as_array_rejects_a_scalar():
    with raises_naming("x"):
        as_array(3.0, "x")


@pytest.mark.parametrize("bad", [["a", "b"], [None, 1.0], [[1.0, 2.0], [3.0]]])
def test_as_array_rejects_non_numbers(bad):
    with raises_naming("gamma"):
        as_array(bad, "gamma")


# --- array_module and is_traced -------------------------------------------------------


def test_array_module_is_numpy_for_lists_and_numpy_and_jax_numpy_for_jax_arrays():
    assert array_module([1.0]) is np
    assert array_module(np.ones(2)) is np
    assert array_module(jnp.ones(2)) is jnp


def test_is_traced_is_true_only_inside_a_jax_transformation():
    seen = []

    def probe(v):
        seen.append(is_traced(v))
        return v

    jax.jit(probe)(jnp.ones(2))
    assert seen == [True]
    assert not is_traced(jnp.ones(2))
    assert not is_traced(np.ones(2))


# --- check_vector_args -----------------------------------------------------------------


def test_check_vector_args_defaults_gamma_to_ones_and_beta_to_zeros():
    x, gamma, beta = check_vector_args([1.0, 2.0, 4.0], None, None)
    np.testing.assert_array_equal(gamma, np.ones(3))
    np.testing.assert_array_equal(beta, np.zeros(3))


def test_check_vector_args_broadcasts_scalar_gamma_and_beta():
    _, gamma, beta = check_vector_args(np.ones((2, 3)), 2.5, -1)
    np.testing.assert_array_equal(gamma, np.full(3, 2.5))
    np.testing.assert_array_equal(beta, np.full(3, -1.0))


def test_check_vector_args_accepts_gamma_of_xs_full_shape_for_a_batch():
    _, gamma, _ = check_vector_args(np.ones((2, 3)), np.ones((2, 3)), None)
    assert gamma.shape == (2, 3)


@pytest.mark.parametrize("name", ["gamma", "beta"])
@pytest.mark.parametrize("shape", [(2,), (4,), (3, 3), (1, 3)])
def test_check_vector_args_rejects_a_mismatched_shape_naming_the_argument(name, shape):
    args = {"gamma": None, "beta": None, name: np.ones(shape)}
    with raises_naming(name):
        check_vector_args(np.ones((2, 3)), args["gamma"], args["beta"])


@pytest.mark.parametrize("name", ["gamma", "beta"])
@pytest.mark.parametrize("bad", [math.nan, math.inf, "a", [1.0, math.nan, 1.0]])
def test_check_vector_args_rejects_non_finite_or_non_numeric_gamma_and_beta(name, bad):
    args = {"gamma": None, "beta": None, name: bad}
    with raises_naming(name):
        check_vector_args([1.0, 2.0, 3.0], args["gamma"], args["beta"])


def test_check_vector_args_rejects_bad_x_before_looking_at_gamma():
    with raises_naming("x"):
        check_vector_args([], [1.0], None)


# --- scalar checks ------------------------------------------------------------------------


@pytest.mark.parametrize("good", [0, 0.0, 1e-5, np.float64(1e-3), 1])
def test_check_eps_accepts_finite_non_negative_numbers(good):
    check_eps(good)


@pytest.mark.parametrize("bad", [-1e-5, -1, math.nan, math.inf, "1e-5", None, np.array([1e-5])])
def test_check_eps_rejects_negative_non_finite_or_non_numeric(bad):
    with raises_naming("eps"):
        check_eps(bad)


@pytest.mark.parametrize("good", [1, 3, 96, np.int64(24)])
def test_check_depth_accepts_integers_from_one_and_returns_an_int(good):
    out = check_depth(good)
    assert type(out) is int and out == good


@pytest.mark.parametrize("bad", [0, -1, 2.5, 3.0, True, "3", None])
def test_check_depth_rejects_below_one_and_non_integers_naming_the_argument(bad):
    with raises_naming("layers"):
        check_depth(bad)
    with raises_naming("additions"):
        check_depth(bad, "additions")


@pytest.mark.parametrize("good", [1e-300, 0.5, 3, np.float64(2.0)])
def test_check_positive_accepts_finite_positive_numbers_and_returns_a_float(good):
    out = check_positive(good, "per_layer")
    assert type(out) is float and out == good


@pytest.mark.parametrize("bad", [0, 0.0, -0.6, math.nan, math.inf, True, "0.6", None])
def test_check_positive_rejects_non_positive_non_finite_or_non_numeric(bad):
    with raises_naming("per_layer"):
        check_positive(bad, "per_layer")


@pytest.mark.parametrize("bad", [0, -0.5, 1, 1.0, 1.5, math.nan])
def test_check_fraction_rejects_values_outside_the_open_unit_interval(bad):
    with raises_naming("threshold"):
        check_fraction(bad, "threshold")


@pytest.mark.parametrize("good", [1e-12, 0.5, 1 - 1e-12])
def test_check_fraction_accepts_values_strictly_between_zero_and_one(good):
    assert check_fraction(good, "threshold") == good
