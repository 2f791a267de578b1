"""The one-logit model of a step (lnworked.stress.one_logit) against SymPy's exact logistic loss."""

import math

import numpy as np
import pytest
import sympy as sp

from lnworked.stress.one_logit import (HALF_SHARE_MOVE, logistic_loss, one_logit_half_point, one_logit_share,
                                       one_logit_share_taylor,
                                       one_logit_walk)

o, a, t = sp.symbols("o a t", positive=True)
PHI = sp.log(1 + sp.exp(-o))


def test_the_loss_starts_at_a_uniform_guess_with_the_slopes_the_docstring_states():
    """phi(0) = ln 2, phi'(0) = -1/2, phi''(0) = 1/4, exactly."""
    assert sp.simplify(PHI.subs(o, 0) - sp.log(2)) == 0
    assert sp.diff(PHI, o).subs(o, 0) == sp.Rational(-1, 2)
    assert sp.simplify(sp.diff(PHI, o, 2).subs(o, 0)) == sp.Rational(1, 4)
    assert logistic_loss(0.0) == pytest.approx(math.log(2))


@pytest.mark.parametrize("move", [0.5, 1.0, 4.0])
def test_the_walk_and_the_share_match_sympy(move):
    walk = (PHI.subs(o, a * t) - PHI.subs(o, 0)).subs(a, move)
    tangent = (sp.diff(PHI, o).subs(o, 0) * a * t).subs(a, move)
    ts = [0.1, 0.5, 1.0]
    loss, line = one_logit_walk(move, ts)
    for i, x in enumerate(ts):
        assert loss[i] == pytest.approx(float(walk.subs(t, x)), rel=1e-12)
        assert line[i] == pytest.approx(float(tangent.subs(t, x)), rel=1e-12)
        assert one_logit_share(move, x) == pytest.approx(float((walk / tangent).subs(t, x)), rel=1e-12)


def test_the_share_depends_only_on_the_logits_move_and_follows_its_second_order_expansion():
    """share(a, t) = share(k a, t / k); near 0 it is 1 - u/4 to first order in u = a t."""
    for move, x, k in ((1.0, 0.8, 4.0), (4.0, 0.3, 0.5)):
        assert one_logit_share(move, x) == pytest.approx(float(one_logit_share(k * move, x / k)), rel=1e-12)
    u = 1e-3
    assert one_logit_share(u) == pytest.approx(1 - u / 4, abs=1e-6)
    assert one_logit_share(4.0, 0.0) == 1.0


def test_half_share_move_solves_the_equation_and_sets_the_half_point():
    """SymPy's root of (2/u)(ln 2 - ln(1 + e^-u)) = 1/2 is HALF_SHARE_MOVE; t_half = u_half / a."""
    u = sp.symbols("u", positive=True)
    root = sp.nsolve(2 / u * (sp.log(2) - sp.log(1 + sp.exp(-u))) - sp.Rational(1, 2), u, 2.5)
    assert HALF_SHARE_MOVE == pytest.approx(float(root), rel=1e-10)
    assert one_logit_share(4.0, one_logit_half_point(4.0)) == pytest.approx(0.5, abs=1e-12)
    assert one_logit_half_point(1.0) > 1 > one_logit_half_point(4.0)


@pytest.mark.parametrize("bad", [0.0, -1.0, float("nan"), True])
def test_a_move_that_is_not_positive_is_refused_by_name(bad):
    for call in (lambda: one_logit_walk(bad, 0.5), lambda: one_logit_share(bad), lambda: one_logit_half_point(bad)):
        with pytest.raises(ValueError, match=r"^move:"):
            call()


def test_taylor_share_is_sympys_series_to_first_order_in_u_and_fails_at_large_moves():
    """The share's series in u = a t by SymPy, not by the formula the library states."""
    u = sp.symbols("u", positive=True)
    share = (sp.log(2) - sp.log(1 + sp.exp(-u))) / (u / 2)
    series = sp.series(share, u, 0, 2).removeO()
    for move, t in ((0.01, 1.0), (1.0, 0.5), (4.0, 1.0)):
        assert float(one_logit_share_taylor(move, t)) == pytest.approx(float(series.subs(u, move * t)), rel=1e-12)
    assert abs(float(one_logit_share_taylor(0.01)) - float(one_logit_share(0.01))) < 1e-5
    assert float(one_logit_share_taylor(4.0)) == 0.0 and float(one_logit_share(4.0)) > 0.3  # the page's caveat
    with pytest.raises(ValueError, match="^move"):
        one_logit_share_taylor(0.0)
