"""The sign test on seed counts against a brute-force count of every coin-flip outcome and SymPy;
the arrival table against runs sorted by hand."""

from itertools import product

import numpy as np
import pytest
import sympy
import sympy.stats

from lnworked.stress.seed_counts import arrival_outcomes, sign_test


def brute_force_p(a, b):
    """Enumerate every way d fair coins can fall; count those at least as uneven as (a, b)."""
    d = a + b
    if d == 0:
        return 1.0
    seen = abs(a - d / 2)
    extreme = sum(1 for flips in product((0, 1), repeat=d) if abs(sum(flips) - d / 2) >= seen)
    return extreme / 2 ** d


@pytest.mark.parametrize("a,b", [(0, 0), (0, 1), (0, 2), (2, 0), (1, 1), (0, 5), (1, 6), (3, 4), (2, 8), (0, 10)])
def test_sign_test_matches_a_brute_force_count(a, b):
    first = np.array([True] * a + [False] * b + [True, False, True])
    second = np.array([False] * a + [True] * b + [True, False, True])  # the last three seeds agree
    got_a, got_b, p = sign_test(first, second)
    assert (got_a, got_b) == (a, b)
    assert p == pytest.approx(brute_force_p(a, b), abs=1e-12)


def test_sign_test_matches_sympy_binomial_tail():
    a, b = 1, 9
    X = sympy.stats.Binomial("X", a + b, sympy.Rational(1, 2))
    exact = sympy.stats.P(sympy.Abs(X - 5) >= 4)
    assert sign_test([True] + [False] * 9, [False] + [True] * 9)[2] == pytest.approx(float(exact), abs=1e-15)


def test_sign_test_is_symmetric_and_ignores_concordant_seeds():
    first, second = [True, True, False, False, True], [False, True, False, True, True]
    a, b, p = sign_test(first, second)
    assert (a, b) == (1, 1) and p == 1.0
    assert sign_test(second, first) == (b, a, p)


@pytest.mark.parametrize("first,second,message", [
    ([], [], "first_learned: must be a non-empty"),
    ([[True]], [[True]], "first_learned: must be a non-empty 1-D"),
    ([1, 0], [True, False], "first_learned: must hold booleans"),
    ([True, False], [0.0, 1.0], "second_learned: must hold booleans"),
    ([True, False], [True], "second_learned: must have one value per seed"),
])
def test_sign_test_rejects_bad_input(first, second, message):
    with pytest.raises(ValueError, match=message):
        sign_test(first, second)


def test_arrival_outcomes_sorts_runs_as_by_hand():
    # threshold 38: 10 and 37.9 are below, 38 (at it) and 120 are above
    products = [10.0, 37.9, 38.0, 120.0, 50.0]
    learned = [True, False, True, False, False]
    table = arrival_outcomes(products, learned, 38.0)
    assert table == {(True, True): 1, (True, False): 1, (False, True): 1, (False, False): 2}


def test_arrival_outcomes_puts_a_rule_that_holds_on_the_diagonal():
    table = arrival_outcomes([1.0, 2.0, 50.0], [True, True, False], 38.0)
    assert table[True, False] == 0 and table[False, True] == 0 and table[True, True] == 2


@pytest.mark.parametrize("products,learned,threshold,name", [
    ([], [], 38.0, "products"),
    ([1.0, -2.0], [True, False], 38.0, "products"),
    ([1.0, float("nan")], [True, False], 38.0, "products"),
    ([1.0, 2.0], [True], 38.0, "learned"),
    ([1.0, 2.0], [1, 0], 38.0, "learned"),
    ([1.0, 2.0], [True, False], 0.0, "threshold"),
])
def test_arrival_outcomes_bad_input_names_the_argument(products, learned, threshold, name):
    with pytest.raises(ValueError, match=name):
        arrival_outcomes(products, learned, threshold)
