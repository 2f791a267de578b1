"""How much each block of the random toy stack scales the gradient on its way back.

Chapter 3 sets the measured stack (:mod:`lnworked.random_stack`) beside the scalar toy
``f^L`` (:mod:`lnworked.depth`): the gradient of the readout ``w . y_L`` is carried from the
top of the stack to its input, ``g_L = w`` and ``g_(l-1) = J_l^T g_l``, and each block's gain::

    gain_l = ||J_l^T g_l|| / ||g_l||

is the matrix counterpart of the toy's per-layer factor ``f``. :func:`backward_gains` records
it for any placement, :func:`post_ln_gain_split` splits Post-LN's into the norm's factor and
the residual add's, and :func:`gradient_depth_table` summarises the input gradient against
depth over seeds. Everything is measured at initialisation.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from lnworked.blocks import _norm
from lnworked.norms import DEFAULT_EPS
from lnworked.placements import _check_scale, final_norm_jacobian, variant_spec
from lnworked.random_stack import seed_spread, stack_sublayers
from lnworked.validation import check_int

__all__ = ["gradient_depth_table", "backward_gains", "post_ln_gain_split", "removed_share",
           "removed_shares", "random_direction_gains"]


def gradient_depth_table(variants=("post", "pre"), depths=(6, 12, 24, 48, 96), seeds=range(8),
                         width: int = 16, branch_scale: float = 1.0) -> list[dict]:
    """The input gradient of :func:`stack_profile` against depth, summarised over seeds.

    One row per ``(variant, L)`` with the keys of :func:`seed_spread` plus ``variant``,
    ``layers`` and ``per_layer``, the per-layer factor that the median implies::

        per_layer = median_grad ** (1 / L)

    (the ``f`` of the scalar toy ``f^L``; the readout ``w`` has norm about 1, so the
    median itself plays the role of ``f^L``).
    """
    rows = []
    for variant in variants:
        for layers in depths:
            summary = seed_spread(variant, layers, seeds=seeds, width=width, branch_scale=branch_scale)
            rows.append({"variant": variant_spec(variant).name, "layers": int(layers),
                         "per_layer": summary["median_grad"] ** (1.0 / layers), **summary})
    return rows


def _stack_jacobians(spec, layers, width, seed, branch_scale):
    """One seeded stack's block Jacobians ``J_1 .. J_L`` (block 1 first), its readout ``w`` and its
    output stream ``x_L``."""
    x, readout, sublayers = stack_sublayers(spec, layers, width, seed, branch_scale)
    jacobians = []
    for sublayer in sublayers:
        jacobians.append(spec.jacobian(x, sublayer, len(sublayers)))
        x = spec.block(x, sublayer, len(sublayers))
    return jacobians, readout, x


def backward_gains(variant, layers: int = 48, seeds=range(8), width: int = 16, branch_scale: float = 1.0) -> dict:
    """How much each block of :func:`stack_profile`'s stack scales the backward gradient.

    The gradient of the readout ``w . y_L`` is carried from the top of the stack to its input,
    ``g_L = w`` (through ``J_Nfinal`` for a variant with a final norm) and
    ``g_(l-1) = J_l^T g_l`` with ``J_l`` the analytic block Jacobian. The gain of block ``l`` is::

        gain_l = ||J_l^T g_l|| / ||g_l||

    the matrix counterpart of the scalar toy's per-layer factor; the product of the gains
    times ``||g_L||`` is the input-gradient norm of the stack. Returns ``gain`` (shape
    ``(seeds, layers)``, block 1 first), ``geometric_mean`` (``exp`` of the mean log gain),
    ``fraction_below_one``, ``min`` and ``max`` over all blocks and seeds.
    """
    spec = variant_spec(variant)
    gains = []
    for seed in seeds:
        jacobians, readout, x = _stack_jacobians(spec, layers, width, seed, branch_scale)
        g = final_norm_jacobian(x, spec.final).T @ readout if spec.final else readout
        row = []
        for jacobian in reversed(jacobians):
            new = jacobian.T @ g
            row.append(float(np.linalg.norm(new) / np.linalg.norm(g)))
            g = new
        gains.append(row[::-1])
    if not gains:
        raise ValueError("seeds: need at least one seed")
    gains = np.asarray(gains)
    return {
        "gain": gains,
        "geometric_mean": float(np.exp(np.log(gains).mean())),
        "fraction_below_one": float((gains < 1.0).mean()),
        "min": float(gains.min()),
        "max": float(gains.max()),
    }


def post_ln_gain_split(layers: int = 48, seeds=range(8), width: int = 16, branch_scale: float = 1.0,
                       eps: float = DEFAULT_EPS, write_bias: float = 0.0) -> dict:
    """Split each Post-LN block's backward gain into the norm's part and the residual add's.

    Block ``l`` computes ``z_l = x_l + F_l(x_l)`` and ``x_(l+1) = LN(z_l)``; its Jacobian
    ``J_N(z_l) (I + J_F(x_l))`` is applied to the gradient ``g`` from above in two steps::

        h = J_N(z_l)^T g               norm_gain   = ||h|| / ||g||   (<= 1/sigma_l: J_N is
                                                                      (1/sigma) times a projection)
        g' = (I + J_F(x_l))^T h        branch_gain = ||g'|| / ||h||
                                       gain        = ||g'|| / ||g||  = norm_gain * branch_gain

    with ``sigma_l = sqrt(Var(z_l) + eps)`` the spread of the norm's input. Since ``x_l`` has
    unit spread and the write ``F_l(x_l)`` has variance ``v`` relative to it,
    ``sigma_l ~ sqrt(1 + v)`` when the two are uncorrelated. The scalar toy of source text 004
    fixes ``1/sigma = 0.5`` and ``1 + F' = 1.3``. Returns arrays ``sigma``, ``norm_gain``,
    ``branch_gain``, ``gain``, ``write_ratio`` (``||F_l(x_l)|| / ||x_l||``), each of shape
    ``(seeds, layers)``, and the geometric mean of each under ``mean_<name>``.

    Also ``removed_share`` (same shape, no mean; its parts ``share_ones`` and ``share_xhat``, see
    :func:`removed_shares`): the share of ``||g||^2`` that lies in the two
    directions ``J_N(z_l)`` removes, ``1`` and the centred norm input ``u = (z_l - mu) / ||z_l - mu||``::

        removed_share = ((g . 1)^2 / d + (g . u)^2) / ||g||^2,
        norm_gain     = sqrt(1 - removed_share) / sigma_l        (up to eps)

    since ``J_N`` is ``1/sigma`` times the projection that drops those two directions. A gradient
    in a random direction has ``removed_share = 2/d`` on average.

    ``write_bias = b > 0`` gives every sublayer an output bias ``b2 = b u``, with ``u`` a fixed
    random vector of unit RMS (from ``default_rng((seed, 2))``): a write ``F(x) = F_0(x) + b u``
    that is large although its Jacobian ``J_F`` is unchanged (a bias has no derivative), the
    pairing of a large write with a small derivative that the bias-free stack cannot make.
    """
    write_bias = _check_scale(write_bias, "write_bias")
    normalize, jacobian = _norm("layer")
    out = {key: [] for key in ("sigma", "norm_gain", "branch_gain", "gain", "write_ratio")}
    removed = []
    for seed in seeds:
        x, readout, sublayers = stack_sublayers("post", layers, width, seed, branch_scale)
        if write_bias:
            direction = np.random.default_rng((seed, 2)).normal(size=x.shape[-1])
            bias = write_bias * direction / np.sqrt(np.mean(direction**2))
            sublayers = [replace(sublayer, b2=sublayer.b2 + bias) for sublayer in sublayers]
        cache = []
        for sublayer in sublayers:
            write = sublayer(x)
            z = x + write
            cache.append((x, z, sublayer, float(np.linalg.norm(write) / np.linalg.norm(x))))
            x = normalize(z, eps=eps)
        rows, shares = [], []
        g = readout
        for x_l, z, sublayer, ratio in reversed(cache):
            h = jacobian(z, eps=eps).T @ g
            new = (np.eye(x_l.shape[-1]) + sublayer.jacobian(x_l)).T @ h
            norm_g, norm_h, norm_new = (float(np.linalg.norm(v)) for v in (g, h, new))
            rows.append((math.sqrt(float(np.var(z)) + eps), norm_h / norm_g, norm_new / norm_h,
                         norm_new / norm_g, ratio))
            shares.append(removed_shares(g, z))
            g = new
        for key, column in zip(out, zip(*rows[::-1])):
            out[key].append(column)
        removed.append(shares[::-1])  # (layers, 2): along 1, along u
    if not out["gain"]:
        raise ValueError("seeds: need at least one seed")
    result = {key: np.asarray(value) for key, value in out.items()}
    for key in list(result):
        result[f"mean_{key}"] = float(np.exp(np.log(result[key]).mean()))
    removed = np.asarray(removed)
    result["share_ones"], result["share_xhat"] = removed[..., 0], removed[..., 1]
    result["removed_share"] = removed.sum(axis=-1)
    return result


def removed_share(g, z) -> float:
    """The share of ``||g||^2`` in the two directions LayerNorm's Jacobian ``J_N(z)`` removes::

        ((g . 1)^2 / d + (g . u)^2) / ||g||^2,    u = (z - mean(z)) / ||z - mean(z)||

    (``1 / sqrt(d)`` and ``u`` are orthonormal, since ``u`` has mean zero). A random direction
    gives ``2/d`` on average. The sum of :func:`removed_shares`."""
    return sum(removed_shares(g, z))


def removed_shares(g, z) -> tuple[float, float]:
    """:func:`removed_share` in its two parts: ``((g . 1)^2 / (d ||g||^2), (g . u)^2 / ||g||^2)``,
    along ``1`` and along the centred input ``u``; ``1/d`` each for a random direction."""
    g, z = np.asarray(g, dtype=float), np.asarray(z, dtype=float)
    if g.ndim != 1 or g.shape != z.shape or g.size < 2:
        raise ValueError(f"g, z: need two vectors of the same width >= 2, got shapes {g.shape} and {z.shape}")
    centred = z - z.mean()
    if not np.any(centred) or not np.any(g):
        raise ValueError("g, z: need a non-zero g and a z that is not constant")
    u = centred / np.linalg.norm(centred)
    return float(g.sum() ** 2 / g.size / (g @ g)), float((g @ u) ** 2 / (g @ g))


def random_direction_gains(variant, layers: int = 48, seeds=range(8), width: int = 16,
                           branch_scale: float = 1.0, directions: int = 16) -> np.ndarray:
    """Each block's gain for gradients in random directions instead of the one from above.

    For every block ``l`` of :func:`backward_gains`' stacks, ``directions`` unit vectors ``r``
    drawn uniformly (from ``default_rng((seed, 3))``) give ``||J_l^T r||``; the root mean square
    of these is the block's RMS gain ``||J_l||_F / sqrt(d)`` of chapter 2. Returns the gains,
    shape ``(seeds, layers, directions)``, block 1 first.
    """
    spec = variant_spec(variant)
    directions = check_int(directions, "directions", minimum=1)
    out = []
    for seed in seeds:
        jacobians, _, x = _stack_jacobians(spec, layers, width, seed, branch_scale)
        rng = np.random.default_rng((seed, 3))
        rows = []
        for jacobian in jacobians:
            r = rng.normal(size=(directions, x.shape[-1]))
            r /= np.linalg.norm(r, axis=1, keepdims=True)
            rows.append(np.linalg.norm(r @ jacobian, axis=1))  # row i is (J^T r_i)^T
        out.append(rows)
    if not out:
        raise ValueError("seeds: need at least one seed")
    return np.asarray(out)
