"""What depth does: gradient factors compounded over layers, and residual-stream growth.

Gradient through ``L`` layers that each multiply it by ``f``::

    g_0 = f^L g_L          (Pre-LN: f = 1 + a >= 1;  Post-LN: f = (gamma/sigma)(1 + a))

Smallest depth at which ``f^L < t`` for ``0 < f < 1`` and ``0 < t < 1``::

    L* = floor(log t / log f) + 1

A stack of matrices instead: block ``l`` scales the backward gradient by its gain
``gain_l = ||g_(l-1)|| / ||g_l||``, so the gradient at layer ``l`` of an ``L``-block stack is::

    ||g_l|| / ||g_L|| = gain_(l+1) gain_(l+2) ... gain_L      (1 at the top, l = L)

Residual stream after ``N`` independent additions of branch outputs with variance ``v``
(Pre-LN; seed 004 Ex 6)::

    Var(x_N) = Var(x_0) + N v,      std(x_N) = sqrt(Var(x_0) + N v)
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from lnworked.norms import DEFAULT_EPS, layer_norm
from lnworked.validation import check_depth, check_fraction, check_int, check_positive

__all__ = [
    "gradient_factor",
    "gradient_factors",
    "depth_below",
    "gradient_norm_profile",
    "residual_variance",
    "residual_std",
    "residual_variance_monte_carlo",
    "post_ln_stream_std",
]


def _is_finite_number(value) -> bool:
    return not isinstance(value, bool) and isinstance(value, numbers.Real) and math.isfinite(value)


def gradient_factor(per_layer: float, layers: int) -> float:
    """``per_layer ** layers``: the factor reaching the input after ``layers`` layers."""
    layers = check_depth(layers)
    if not _is_finite_number(per_layer):
        raise ValueError(f"per_layer: must be a finite number, got {per_layer!r}")
    return float(per_layer) ** layers


def gradient_factors(per_layer: float, layers: int) -> np.ndarray:
    """``[f^1, f^2, ..., f^layers]``: the factor after each depth, for plots over depth."""
    layers = check_depth(layers)
    gradient_factor(per_layer, 1)
    return float(per_layer) ** np.arange(1, layers + 1)


def depth_below(per_layer: float, threshold: float) -> int:
    """Smallest ``L >= 1`` with ``per_layer ** L < threshold``; both must lie in (0, 1)."""
    f = check_fraction(per_layer, "per_layer")
    t = check_fraction(threshold, "threshold")
    depth = max(1, math.floor(math.log(t) / math.log(f)) + 1)
    # Guard the floor against rounding at an exact power (f^L == t must not count).
    while depth > 1 and f ** (depth - 1) < t:
        depth -= 1
    while f**depth >= t:
        depth += 1
    return depth


def gradient_norm_profile(gains) -> np.ndarray:
    """``||g_l|| / ||g_L|| = prod_{k=l+1}^{L} gain_k`` for ``l = 0 .. L`` from per-block gains.

    ``gains[k - 1]`` is block ``k``'s gain ``||g_(k-1)|| / ||g_k||`` (block 1 first), as
    :func:`lnworked.backward_gains.backward_gains` returns them. The result has ``L + 1`` entries:
    entry 0 is the gradient at the input relative to the top, the last entry is 1. With every
    gain equal to ``f`` this is the scalar toy's ``f^(L - l)``.
    """
    gains = np.asarray(gains, dtype=float)
    if gains.ndim != 1 or gains.size == 0:
        raise ValueError(f"gains: must be a non-empty 1-D sequence, got shape {gains.shape}")
    if not np.all(np.isfinite(gains)) or np.any(gains < 0):
        raise ValueError("gains: must be finite numbers >= 0")
    return np.append(np.cumprod(gains[::-1])[::-1], 1.0)


def residual_variance(additions: int, branch_variance: float = 1.0, initial_variance: float = 0.0):
    """``Var(x_N) = Var(x_0) + N v`` for ``N`` independent additions of variance ``v``."""
    additions = check_depth(additions, "additions")
    v = check_positive(branch_variance, "branch_variance")
    if not _is_finite_number(initial_variance) or initial_variance < 0:
        raise ValueError(f"initial_variance: must be a finite number >= 0, got {initial_variance!r}")
    return initial_variance + additions * v


def residual_std(additions: int, branch_variance: float = 1.0, initial_variance: float = 0.0):
    """``sqrt(Var(x_0) + N v)``: the stream's standard deviation grows like ``sqrt(N)``."""
    return math.sqrt(residual_variance(additions, branch_variance, initial_variance))


def residual_variance_monte_carlo(
    additions: int, branch_variance: float = 1.0, samples: int = 100_000, seed: int = 0
) -> float:
    """Sample variance of ``x_N = sum_l h_l`` with ``h_l ~ Normal(0, v)`` i.i.d., from ``x_0 = 0``.

    Its standard error is about ``N v sqrt(2 / samples)``.
    """
    additions = check_depth(additions, "additions")
    v = check_positive(branch_variance, "branch_variance")
    samples = check_depth(samples, "samples")
    rng = np.random.default_rng(seed)
    stream = np.zeros(samples)
    for _ in range(additions):
        stream += rng.normal(0.0, math.sqrt(v), samples)
    return float(stream.var())


def post_ln_stream_std(
    additions: int, branch_variance: float = 1.0, samples: int = 4000, seed: int = 0, eps: float = DEFAULT_EPS
) -> np.ndarray:
    """Std of a Post-LN residual stream after each of ``N = additions`` additions (Monte Carlo).

    Over ``samples`` features, with ``rng = numpy.random.default_rng(seed)``::

        x_0 = LN(z),  z ~ Normal(0, I);      x_k = LN(x_{k-1} + h_k),  h_k ~ Normal(0, v I) i.i.d.

    (LayerNorm without gamma, beta, with ``eps``). Returns ``[std(x_1), ..., std(x_N)]``. Each
    is ``sqrt(s_k^2 / (s_k^2 + eps))`` with ``s_k^2`` the variance of ``x_{k-1} + h_k``
    (about ``1 + v``): 1 exactly when ``eps = 0``, and below 1 by about ``eps / (2 (1 + v))``
    otherwise, whatever ``N``. The norm on the stream undoes every addition, where Pre-LN's
    stream grows as ``sqrt(N v)`` (:func:`residual_std`).
    """
    additions = check_depth(additions, "additions")
    v = check_positive(branch_variance, "branch_variance")
    samples = check_int(samples, "samples", minimum=2)
    seed = check_int(seed, "seed", minimum=0)
    rng = np.random.default_rng(seed)
    x = layer_norm(rng.normal(0.0, 1.0, samples), eps=eps)
    stds = []
    for _ in range(additions):
        x = layer_norm(x + rng.normal(0.0, math.sqrt(v), samples), eps=eps)
        stds.append(float(np.std(x)))
    return np.array(stds)
