"""Exact arithmetic with SymPy: the independent route that checks the floating-point library.

Numbers given as strings or ints become exact rationals (``"1.3"`` is ``13/10``), so
``exact_power("1.3", 10)`` is the fraction ``13**10 / 10**10`` and ``layer_norm_exact``
keeps ``sqrt(5)`` as a surd.
"""

from __future__ import annotations

from typing import Sequence

import sympy as sp

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
    if isinstance(value, float):
        value = repr(value)
    try:
        return sp.Rational(value) if isinstance(value, (int, str)) else sp.sympify(value, strict=True)
    except (TypeError, ValueError, sp.SympifyError):
        raise ValueError(f"value: not an exact number: {value!r}") from None


def exact_power(base, exponent: int) -> sp.Rational:
    """``base ** exponent`` as an exact rational, e.g. ``exact_power("1.3", 10)``."""
    return exact(base) ** int(exponent)


def exact_sqrt(value) -> sp.Expr:
    """Exact square root, e.g. ``exact_sqrt(5)`` is ``sqrt(5)`` and ``exact_sqrt(24)`` is ``2*sqrt(6)``."""
    return sp.sqrt(exact(value))


def layer_norm_exact(x: Sequence, gamma=1, beta=0, eps=0) -> sp.Matrix:
    """Exact ``gamma * (x - mu) / sqrt(var + eps) + beta`` (gamma, beta scalars or sequences)."""
    xs = sp.Matrix([exact(v) for v in x])
    d = len(xs)
    gammas = [exact(g) for g in (gamma if isinstance(gamma, (list, tuple)) else [gamma] * d)]
    betas = [exact(b) for b in (beta if isinstance(beta, (list, tuple)) else [beta] * d)]
    mu = sum(xs) / d
    var = sum((v - mu) ** 2 for v in xs) / d
    s = sp.sqrt(var + exact(eps))
    if s == 0:
        raise ValueError("x: all features are equal and eps=0, so LayerNorm is 0/0")
    return sp.Matrix([sp.nsimplify(g * (v - mu) / s + b) for v, g, b in zip(xs, gammas, betas)])


def layer_norm_jacobian_symbolic(d: int, eps=0) -> tuple[sp.Matrix, sp.Matrix]:
    """Symbols ``x_0..x_{d-1}`` and the Jacobian of LN (gamma=1, beta=0) by SymPy differentiation."""
    xs = sp.Matrix(sp.symbols(f"x_0:{d}", real=True))
    mu = sum(xs) / d
    var = sum((v - mu) ** 2 for v in xs) / d
    s = sp.sqrt(var + exact(eps))
    y = sp.Matrix([(v - mu) / s for v in xs])
    return xs, y.jacobian(xs)


def layer_norm_jacobian_exact(x: Sequence, eps=0) -> sp.Matrix:
    """The symbolic LN Jacobian evaluated exactly at ``x``."""
    xs, jac = layer_norm_jacobian_symbolic(len(x), eps)
    return sp.simplify(jac.subs(dict(zip(xs, [exact(v) for v in x]))))
