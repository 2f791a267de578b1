"""Post-LN and Pre-LN residual blocks for any norm and any sublayer, and their Jacobians.

    Post-LN:  x_{l+1} = N(x_l + F(x_l))      d x_{l+1} / d x_l = J_N(x_l + F(x_l)) (I + J_F(x_l))
    Pre-LN:   x_{l+1} = x_l + F(N(x_l))      d x_{l+1} / d x_l = I + J_F(N(x_l)) J_N(x_l)

(Vaswani et al. 2017 use Post-LN; Xiong et al. 2020 analyse both.) ``N`` is a norm from
:data:`lnworked.norms.NORMS` named by ``norm``; ``F`` is any object with ``__call__(u)``
and ``jacobian(u)`` such as :class:`Linear` or :class:`MLP`. The gradient that reaches the
block input for an upstream gradient ``g`` is ``J^T g`` (:func:`input_gradient`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lnworked.norms import DEFAULT_EPS, NORMS
from lnworked.validation import array_module, as_array, check_int

__all__ = [
    "Linear",
    "MLP",
    "post_ln",
    "pre_ln",
    "post_ln_jacobian",
    "pre_ln_jacobian",
    "autodiff_jacobian",
    "input_gradient",
    "BLOCKS",
    "block_singular_values",
    "jacobian_singular_value_samples",
    "rms_gain",
]


@dataclass(frozen=True)
class Linear:
    """Affine sublayer ``F(u) = W u + b`` with Jacobian ``W``."""

    W: np.ndarray
    b: np.ndarray | float = 0.0

    def __call__(self, u):
        return u @ np.asarray(self.W).T + self.b

    def jacobian(self, u):
        return np.broadcast_to(self.W, u.shape[:-1] + np.shape(self.W))


def _gelu(z, xp):
    """tanh-approximated GELU: ``0.5 z (1 + tanh(c (z + 0.044715 z^3)))``, ``c = sqrt(2/pi)``."""
    c = np.sqrt(2.0 / np.pi)
    return 0.5 * z * (1.0 + xp.tanh(c * (z + 0.044715 * z**3)))


def _gelu_derivative(z, xp):
    c = np.sqrt(2.0 / np.pi)
    t = xp.tanh(c * (z + 0.044715 * z**3))
    return 0.5 * (1.0 + t) + 0.5 * z * (1.0 - t**2) * c * (1.0 + 3 * 0.044715 * z**2)


@dataclass(frozen=True)
class MLP:
    """Two-layer GELU sublayer ``F(u) = W2 gelu(W1 u + b1) + b2``.

    Jacobian: ``W2 diag(gelu'(W1 u + b1)) W1``.
    """

    W1: np.ndarray
    b1: np.ndarray
    W2: np.ndarray
    b2: np.ndarray

    def __call__(self, u):
        xp = array_module(u)
        return _gelu(u @ np.asarray(self.W1).T + self.b1, xp) @ np.asarray(self.W2).T + self.b2

    def jacobian(self, u):
        xp = array_module(u)
        slope = _gelu_derivative(u @ np.asarray(self.W1).T + self.b1, xp)
        return (np.asarray(self.W2) * slope[..., None, :]) @ np.asarray(self.W1)

    @classmethod
    def random(cls, d: int, hidden: int, seed: int = 0, scale: float = 1.0, bias: bool = False):
        """He-style random weights (std ``scale / sqrt(fan_in)``), zero biases unless ``bias``."""
        rng = np.random.default_rng(seed)
        W1 = rng.normal(0, scale / np.sqrt(d), (hidden, d))
        W2 = rng.normal(0, scale / np.sqrt(hidden), (d, hidden))
        b1 = rng.normal(0, scale, hidden) if bias else np.zeros(hidden)
        b2 = rng.normal(0, scale, d) if bias else np.zeros(d)
        return cls(W1, b1, W2, b2)


def _norm(norm: str):
    if norm not in NORMS:
        raise ValueError(f"norm: must be one of {sorted(NORMS)}, got {norm!r}")
    return NORMS[norm]


def post_ln(x, sublayer, norm: str = "layer", eps: float = DEFAULT_EPS):
    """Post-LN block ``N(x + F(x))``."""
    x = as_array(x, "x")
    return _norm(norm)[0](x + sublayer(x), eps=eps)


def pre_ln(x, sublayer, norm: str = "layer", eps: float = DEFAULT_EPS):
    """Pre-LN block ``x + F(N(x))``."""
    x = as_array(x, "x")
    return x + sublayer(_norm(norm)[0](x, eps=eps))


def post_ln_jacobian(x, sublayer, norm: str = "layer", eps: float = DEFAULT_EPS):
    """Analytic ``J_N(x + F(x)) (I + J_F(x))``, shape ``(..., d, d)``."""
    x = as_array(x, "x")
    jacobian_n = _norm(norm)[1](x + sublayer(x), eps=eps)
    return jacobian_n @ (np.eye(x.shape[-1]) + sublayer.jacobian(x))


def pre_ln_jacobian(x, sublayer, norm: str = "layer", eps: float = DEFAULT_EPS):
    """Analytic ``I + J_F(N(x)) J_N(x)``, shape ``(..., d, d)``."""
    x = as_array(x, "x")
    normed_fn, jacobian_fn = _norm(norm)
    return np.eye(x.shape[-1]) + sublayer.jacobian(normed_fn(x, eps=eps)) @ jacobian_fn(x, eps=eps)


#: ``BLOCKS[placement] = (block, analytic Jacobian)`` for ``"post"`` and ``"pre"``.
BLOCKS = {"post": (post_ln, post_ln_jacobian), "pre": (pre_ln, pre_ln_jacobian)}


def autodiff_jacobian(placement: str, x, sublayer, norm: str = "layer", eps: float = DEFAULT_EPS):
    """The block Jacobian by ``jax.jacfwd`` in float64 (an independent route to the analytic one)."""
    import jax
    import jax.numpy as jnp

    if placement not in BLOCKS:
        raise ValueError(f"placement: must be 'post' or 'pre', got {placement!r}")
    block = BLOCKS[placement][0]
    with jax.enable_x64(True):
        x = jnp.asarray(as_array(x, "x"), dtype=jnp.float64)
        return np.asarray(jax.jacfwd(lambda v: block(v, sublayer, norm, eps))(x))


def input_gradient(jacobian, upstream):
    """Gradient reaching the block input, ``J^T g``, for upstream gradient ``g``."""
    jacobian = np.asarray(jacobian, dtype=float)
    upstream = as_array(upstream, "upstream")
    if jacobian.shape[-2] != upstream.shape[-1]:
        raise ValueError(
            f"upstream: length {upstream.shape[-1]} does not match the Jacobian's "
            f"{jacobian.shape[-2]} outputs"
        )
    return np.einsum("...ij,...i->...j", jacobian, upstream)


def block_singular_values(x, sublayer, norm: str = "layer", eps: float = DEFAULT_EPS):
    """Singular values (descending) of the Pre-LN and Post-LN block Jacobians at each row of ``x``.

    Returns ``(pre, post)``, each of shape ``(..., d)``: ``svd(I + J_F(N x) J_N(x))`` and
    ``svd(J_N(x + F(x)) (I + J_F(x)))``. ``J_N`` of LayerNorm removes the mean direction
    ``1`` and (up to ``eps``) the radial direction ``x_hat``, so Post-LN has two (near-)zero
    singular values and the rest scale like ``1 / sigma``, ``sigma = std(x + F(x))``.
    """
    pre = np.linalg.svd(pre_ln_jacobian(x, sublayer, norm, eps), compute_uv=False)
    post = np.linalg.svd(post_ln_jacobian(x, sublayer, norm, eps), compute_uv=False)
    return pre, post


def jacobian_singular_value_samples(d: int = 16, samples: int = 200, seed: int = 0):
    """:func:`block_singular_values` of LayerNorm blocks at ``samples`` random inputs, each
    placement at the inputs it meets in a stack.

    With ``rng = numpy.random.default_rng(seed)``: scales ``c = 10 ** rng.uniform(0, 1, (samples, 1))``
    (log-uniform in [1, 10]), then ``x = c * rng.normal(0, 1, (samples, d))``; sublayer
    ``MLP.random(d, 4 d, seed)``. Pre-LN's input is the residual stream itself, whose spread
    grows with depth, so Pre-LN is evaluated at ``x`` (std 1 to 10). Post-LN's input is the
    output of the previous block's LayerNorm, whose spread is 1 (``gamma = 1``), so Post-LN is
    evaluated at ``LN(x)``. Returns ``(pre, post, sigma)``: arrays of shape ``(samples, d)``
    (singular values, descending) and the std ``sigma`` of Post-LN's sum ``u + F(u)``,
    ``u = LN(x)``, per input: what Post-LN's norm divides by.
    """
    d = check_int(d, "d", minimum=2)
    samples = check_int(samples, "samples", minimum=1)
    seed = check_int(seed, "seed", minimum=0)
    rng = np.random.default_rng(seed)
    scale = 10.0 ** rng.uniform(0.0, 1.0, (samples, 1))
    x = scale * rng.normal(0.0, 1.0, (samples, d))
    sublayer = MLP.random(d, 4 * d, seed=seed)
    pre, _ = block_singular_values(x, sublayer)
    u = NORMS["layer"][0](x, eps=DEFAULT_EPS)
    _, post = block_singular_values(u, sublayer)
    sigma = np.std(u + sublayer(u), axis=-1)
    return pre, post, sigma


def rms_gain(singular_values) -> np.ndarray:
    """A block's RMS gain per input: ``sqrt(mean_i s_i ** 2)`` over the singular values ``s_i`` of its
    Jacobian (the last axis), which is ``||J||_F / sqrt(d)``: the root mean square of ``||J u||``
    over unit directions ``u`` drawn uniformly (chapter 2)."""
    s = np.asarray(singular_values, dtype=float)
    if s.ndim < 1 or s.shape[-1] < 1:
        raise ValueError(f"singular_values: need at least one value on the last axis, got shape {s.shape}")
    return np.sqrt(np.mean(s ** 2, axis=-1))
