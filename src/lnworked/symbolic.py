"""Exact arithmetic with SymPy: the independent route that checks the floating-point library.

Numbers given as strings or ints become exact rationals (``"1.3"`` is ``13/10``), so
``exact_power("1.3", 10)`` is the fraction ``13**10 / 10**10`` and ``layer_norm_exact``
keeps ``sqrt(5)`` as a surd.
"""

from __future__ import annotations

import numbers
from typing import Sequence

import numpy as np
import sympy as sp

from lnworked.validation import check_depth

__all__ = [
    "exact",
    "exact_power",
    "exact_sqrt",
    "layer_norm_exact",
    "layer_norm_jacobian_exact",
    "layer_norm_jacobian_symbolic",
]


def exact(value) -> sp.Expr:
    """An exact SymPy number: ``"1.3"`` -> ``13/10``; floats go through their repr."""
    if isinstance(value, bool):
        raise ValueError(f"value: expected a number, got {value!r}")
    if isinstance(value, (float, np.floating)):
        value = repr(float(value))  # NumPy 2's repr(np.float64(2.0)) is "np.float64(2.0)"
    elif isinstance(value, np.integer):
        value = int(value)
    try:
        return sp.Rational(value) if isinstance(value, (int, str)) else sp.sympify(value, strict=True)
    except (TypeError, ValueError, sp.SympifyError):
        raise ValueError(f"value: not an exact number: {value!r}") from None


def exact_power(base, exponent: int) -> sp.Rational:
    """``base ** exponent`` as an exact rational, e.g. ``exact_power("1.3", 10)``."""
    if isinstance(exponent, bool) or not isinstance(exponent, numbers.Integral):
        raise ValueError(f"exponent: must be an integer, got {exponent!r}")
    return exact(base) ** int(exponent)


def exact_sqrt(value) -> sp.Expr:
    """Exact square root, e.g. ``exact_sqrt(5)`` is ``sqrt(5)`` and ``exact_sqrt(24)`` is ``2*sqrt(6)``."""
    return sp.sqrt(exact(value))


def _exact_eps(eps) -> sp.Expr:
    value = exact(eps)
    if value.is_negative:
        raise ValueError(f"eps: must be >= 0, got {eps!r}")
    return value


def _per_feature(value, name: str, d: int) -> list:
    """A scalar repeated ``d`` times, or a sequence of exactly ``d`` numbers, as exact numbers."""
    if np.ndim(value) == 0:
        return [exact(value)] * d
    values = list(value)
    if len(values) != d:
        raise ValueError(f"{name}: {len(values)} values for x's {d} features")
    return [exact(v) for v in values]


def layer_norm_exact(x: Sequence, gamma=1, beta=0, eps=0) -> sp.Matrix:
    """Exact ``gamma * (x - mu) / sqrt(var + eps) + beta`` (gamma, beta scalars or sequences).

    Denominators are rationalised (``-3/sqrt(5)`` is shown as ``-3*sqrt(5)/5``); the value is
    never approximated.
    """
    xs = sp.Matrix([exact(v) for v in x])
    d = len(xs)
    if d == 0:
        raise ValueError("x: the vector is empty; a norm needs at least one feature")
    gammas = _per_feature(gamma, "gamma", d)
    betas = _per_feature(beta, "beta", d)
    mu = sum(xs) / d
    var = sum((v - mu) ** 2 for v in xs) / d
    s = sp.sqrt(var + _exact_eps(eps))
    if s == 0:
        raise ValueError("x: all features are equal and eps=0, so the variance is 0 and LayerNorm is 0/0")
    return sp.Matrix([sp.radsimp(g * (v - mu) / s + b) for v, g, b in zip(xs, gammas, betas)])


def layer_norm_jacobian_symbolic(d: int, eps=0) -> tuple[sp.Matrix, sp.Matrix]:
    """Symbols ``x_0..x_{d-1}`` and the Jacobian of LN (gamma=1, beta=0) by SymPy differentiation."""
    d = check_depth(d, "d")
    xs = sp.Matrix(sp.symbols(f"x_0:{d}", real=True))
    mu = sum(xs) / d
    var = sum((v - mu) ** 2 for v in xs) / d
    s = sp.sqrt(var + _exact_eps(eps))
    y = sp.Matrix([(v - mu) / s for v in xs])
    return xs, y.jacobian(xs)


def layer_norm_jacobian_exact(x: Sequence, eps=0) -> sp.Matrix:
    """The symbolic LN Jacobian evaluated exactly at ``x``, denominators rationalised.

    After substitution each entry is a rational times one surd, which SymPy already
    collects; ``radsimp`` only rationalises it (``sp.simplify`` gives the same, 100x slower).
    """
    xs, jac = layer_norm_jacobian_symbolic(len(x), eps)
    return jac.subs(dict(zip(xs, [exact(v) for v in x]))).applyfunc(sp.radsimp)
