"""LayerNorm and RMSNorm over the last axis, with their analytic Jacobians.

LayerNorm (Ba, Kiros and Hinton, 2016)::

    mu = mean(x),  var = mean((x - mu)^2),  s = sqrt(var + eps)
    x_hat = (x - mu) / s,   LN(x) = gamma * x_hat + beta

RMSNorm (Zhang and Sennrich, 2019)::

    r = sqrt(mean(x^2) + eps),   x_hat = x / r,   RMS(x) = gamma * x_hat

Jacobians (d = size of the last axis, ``I`` the d x d identity, ``1`` the ones vector)::

    dLN/dx  = diag(gamma) (I - 1 1^T / d - x_hat x_hat^T / d) / s
    dRMS/dx = diag(gamma) (I - x_hat x_hat^T / d) / r

NumPy arrays in give NumPy arrays out; JAX arrays in give JAX arrays out (the same code
runs on ``jax.numpy``), so ``jax.jacfwd`` can check the analytic Jacobians.
Concrete inputs are validated and bad ones raise :class:`ValueError` naming the argument.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lnworked.validation import array_module, as_array, check_eps, check_int, check_vector_args, is_traced

__all__ = [
    "DegenerateInputError",
    "layer_norm",
    "layer_norm_jacobian",
    "rms_norm",
    "rms_norm_jacobian",
    "NORMS",
]

DEFAULT_EPS = 1e-5


class DegenerateInputError(ValueError):
    """``eps`` is 0 and the variance (LayerNorm: all features equal) or the mean square
    (RMSNorm: all features 0) of a vector is 0, so the norm would be 0/0."""


def _check_not_degenerate(stat, eps: float, allow_degenerate: bool, name: str, cause: str) -> None:
    if eps > 0 or allow_degenerate or is_traced(stat):
        return
    if np.any(np.asarray(stat) == 0):
        raise DegenerateInputError(
            f"x: the {name} is 0 ({cause}) and with eps=0 the norm is 0/0. "
            "Pass eps > 0 (e.g. 1e-5), or allow_degenerate=True to get the NaN that "
            "a network would emit."
        )


def _layer_norm_stats(x, eps: float, allow_degenerate: bool):
    """Return ``(x_hat, s)`` with ``s = sqrt(var + eps)`` of shape ``(..., 1)``.

    The mean is taken as ``mu = x_0 + mean(x - x_0)`` (the same value, shifted by the first
    feature): a vector whose features are all equal then has deviations and variance exactly
    0, where ``mean(x)`` can round (``mean([0.1] * 3) != 0.1``) and turn 0/0 into ±1.
    """
    xp = array_module(x)
    shift = x[..., :1]
    mu = shift + xp.mean(x - shift, axis=-1, keepdims=True)
    var = xp.mean((x - mu) ** 2, axis=-1, keepdims=True)
    _check_not_degenerate(var, eps, allow_degenerate, "variance", "all features are equal")
    s = xp.sqrt(var + eps)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (x - mu) / s, s


def _rms_stats(x, eps: float, allow_degenerate: bool):
    """Return ``(x_hat, r)`` with ``r = sqrt(mean(x^2) + eps)`` of shape ``(..., 1)``."""
    xp = array_module(x)
    ms = xp.mean(x**2, axis=-1, keepdims=True)
    _check_not_degenerate(ms, eps, allow_degenerate, "mean square", "all features are 0")
    r = xp.sqrt(ms + eps)
    with np.errstate(invalid="ignore", divide="ignore"):
        return x / r, r


def layer_norm(x, gamma=None, beta=None, eps: float = DEFAULT_EPS, *, allow_degenerate=False):
    """LayerNorm over the last axis: ``gamma * (x - mean) / sqrt(var + eps) + beta``.

    ``gamma`` defaults to ones and ``beta`` to zeros. With ``eps=0`` and a vector whose
    features are all equal, raises :class:`DegenerateInputError` unless
    ``allow_degenerate=True``, in which case that vector becomes NaN (0/0).
    """
    x, gamma, beta = check_vector_args(x, gamma, beta)
    check_eps(eps)
    x_hat, _ = _layer_norm_stats(x, eps, allow_degenerate)
    return gamma * x_hat + beta


def rms_norm(x, gamma=None, eps: float = DEFAULT_EPS, *, allow_degenerate=False):
    """RMSNorm over the last axis: ``gamma * x / sqrt(mean(x^2) + eps)`` (no shift)."""
    x, gamma, _ = check_vector_args(x, gamma, None)
    check_eps(eps)
    x_hat, _ = _rms_stats(x, eps, allow_degenerate)
    return gamma * x_hat


def _outer(a, b):
    return a[..., :, None] * b[..., None, :]


def layer_norm_jacobian(x, gamma=None, eps: float = DEFAULT_EPS, *, allow_degenerate=False):
    """``dLN/dx = diag(gamma) (I - 1 1^T/d - x_hat x_hat^T/d) / s``, shape ``(..., d, d)``."""
    x, gamma, _ = check_vector_args(x, gamma, None)
    check_eps(eps)
    xp = array_module(x)
    d = x.shape[-1]
    x_hat, s = _layer_norm_stats(x, eps, allow_degenerate)
    centering = xp.eye(d) - xp.ones((d, d)) / d
    with np.errstate(invalid="ignore", divide="ignore"):
        projector = (centering - _outer(x_hat, x_hat) / d) / s[..., None]
    return gamma[..., :, None] * projector


def rms_norm_jacobian(x, gamma=None, eps: float = DEFAULT_EPS, *, allow_degenerate=False):
    """``dRMS/dx = diag(gamma) (I - x_hat x_hat^T/d) / r``, shape ``(..., d, d)``."""
    x, gamma, _ = check_vector_args(x, gamma, None)
    check_eps(eps)
    xp = array_module(x)
    d = x.shape[-1]
    x_hat, r = _rms_stats(x, eps, allow_degenerate)
    with np.errstate(invalid="ignore", divide="ignore"):
        projector = (xp.eye(d) - _outer(x_hat, x_hat) / d) / r[..., None]
    return gamma[..., :, None] * projector


#: Each norm by name, with its analytic Jacobian: ``NORMS[name] = (norm, jacobian)``.
NORMS = {
    "layer": (layer_norm, layer_norm_jacobian),
    "rms": (rms_norm, rms_norm_jacobian),
}


# --- The geometry of LayerNorm (chapter 1's picture) ----------------------------------


def mean_free_basis(d: int) -> np.ndarray:
    """An orthonormal basis of the hyperplane ``{v : 1^T v = 0}`` of R^d, as rows, shape ``(d - 1, d)``.

    The Helmert basis: row ``k`` (``k = 1, ..., d - 1``) is
    ``(1, ..., 1, -k, 0, ..., 0) / sqrt(k (k + 1))`` with ``k`` ones. ``B @ v`` gives the
    coordinates of a mean-free vector ``v`` inside the hyperplane, and ``B.T @ B`` is the
    centring projection ``I - 1 1^T / d``. For ``d = 3`` these coordinates draw the plane
    perpendicular to ``(1, 1, 1)`` flat on the page.
    """
    d = check_int(d, "d", minimum=2)
    basis = np.zeros((d - 1, d))
    for k in range(1, d):
        basis[k - 1, :k] = 1.0
        basis[k - 1, k] = -float(k)
        basis[k - 1] /= np.sqrt(k * (k + 1.0))
    return basis


@dataclass(frozen=True)
class LayerNormGeometry:
    """LayerNorm of one vector ``x`` of width ``d`` (``gamma = 1``, ``beta = 0``) as two geometric steps.

    ``along_ones = mu 1`` is the orthogonal projection of ``x`` onto the line spanned by
    ``1 = (1, ..., 1)``; ``centred = x - mu 1 = (I - 1 1^T / d) x`` is its orthogonal
    projection onto the hyperplane perpendicular to ``1`` (so ``x = along_ones + centred``).
    ``sigma = ||centred|| / sqrt(d)`` is the standard deviation of ``x``. ``output = centred /
    sqrt(sigma^2 + eps)`` is ``LN(x)``; its length ``radius = sqrt(d) sigma / sqrt(sigma^2 + eps)``
    is exactly ``sqrt(d)`` when ``eps = 0``: LayerNorm puts every non-flat vector on the
    sphere of radius ``sqrt(d)`` inside that hyperplane.
    """

    x: np.ndarray
    eps: float
    along_ones: np.ndarray
    centred: np.ndarray
    sigma: float
    output: np.ndarray
    radius: float


def layer_norm_geometry(x, eps: float = DEFAULT_EPS, *, allow_degenerate=False) -> LayerNormGeometry:
    """Split ``LN(x)`` (``gamma = 1``, ``beta = 0``) into centring and rescaling; see :class:`LayerNormGeometry`.

    Centring: ``centred = (I - 1 1^T / d) x``, the orthogonal projection onto the hyperplane
    ``1^T v = 0``. Rescaling: ``output = centred / sqrt(sigma^2 + eps)`` with
    ``sigma^2 = ||centred||^2 / d``, so ``||output|| = sqrt(d) sigma / sqrt(sigma^2 + eps)``
    (``sqrt(d)`` for ``eps = 0``). Adding ``c 1`` to ``x`` changes only ``along_ones``;
    multiplying ``x`` by ``c > 0`` changes only ``sigma`` (the length of ``centred``); neither
    moves ``output`` when ``eps = 0``. ``x`` is one vector (1-D); ``output`` equals
    :func:`layer_norm` ``(x, eps=eps)``.
    """
    x = as_array(x, "x")
    if x.ndim != 1:
        raise ValueError(f"x: must be one vector (1-D), got shape {x.shape}")
    check_eps(eps)
    d = x.shape[-1]
    output, s = _layer_norm_stats(x, eps, allow_degenerate)
    mu = x[0] + np.mean(x - x[0])  # as in _layer_norm_stats: a flat vector centres to exactly 0
    centred = x - mu
    along_ones = np.full_like(x, mu)
    sigma = float(np.linalg.norm(centred) / np.sqrt(d))
    with np.errstate(invalid="ignore", divide="ignore"):
        radius = float(np.sqrt(d) * sigma / s[0])
    return LayerNormGeometry(x=x, eps=float(eps), along_ones=along_ones, centred=centred,
                             sigma=sigma, output=output, radius=radius)


__all__ += ["mean_free_basis", "LayerNormGeometry", "layer_norm_geometry"]
