"""Gradient norm per layer at initialisation: the empirical side of the attenuation argument.

Seeds 000 and 001 argue from block Jacobians: Pre-LN's ``I + J_F J_N`` keeps an identity
path, Post-LN's ``J_N (I + J_F)`` sends every backward route through a norm; Xiong et al.
(2020) show that at initialisation Post-LN's parameter gradients are largest near the
output while Pre-LN's are even across depth. Here we measure it on the stress test's
model: for block ``i``, ``||d loss / d theta_i||`` (global norm over that block's
parameters) on the first training batch, at the initial weights. Both placements are one
program (the stacked model with the placement as data, :mod:`lnworked.stress.stacked`),
and block ``i``'s gradient is row ``i`` of the stacked block gradient.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from lnworked.stress.config import StressConfig
from lnworked.stress.data import make_batches
from lnworked.stress.stacked import make_logits, stacked_init
from lnworked.stress.step import make_loss

__all__ = ["layer_gradient_norms", "layer_gradient_table"]


def _per_layer_norms(grads):
    """``||g_i||`` for each block ``i`` of a stacked gradient (sum of squares over its leaves)."""
    squares = [jnp.sum(jnp.square(leaf).reshape(leaf.shape[0], -1), axis=1) for leaf in jax.tree.leaves(grads["blocks"])]
    return jnp.sqrt(sum(squares))


def layer_gradient_norms(config: StressConfig, pre_norm: bool) -> np.ndarray:
    """``||grad of block i||`` for ``i = 0..layers-1`` at initialisation (first batch)."""
    return _both_placements(config, (pre_norm,))[0]


def _both_placements(config: StressConfig, placements) -> np.ndarray:
    """Per-layer gradient norms, shape ``(len(placements), layers)``, as one vmapped program."""
    sources, targets = make_batches(config.replace(steps=1))
    params = jax.tree.map(lambda *leaves: jnp.stack(leaves), *[stacked_init(config, p) for p in placements])
    grad = jax.grad(make_loss(make_logits(config, unroll=1)))  # one gradient: compiling dominates

    def norms(params, pre_norm):
        return _per_layer_norms(grad(params, sources[0], targets[0], pre_norm))

    return np.asarray(jax.jit(jax.vmap(norms))(params, jnp.asarray(placements)))


def layer_gradient_table(depths, config: StressConfig | None = None) -> list[dict]:
    """Tidy rows ``{layers, pre_norm, layer, gradient_norm}`` for every depth and topology."""
    config = StressConfig() if config is None else config
    rows = []
    for depth in depths:
        both = _both_placements(config.replace(layers=depth), (True, False))
        for pre_norm, norms in zip((True, False), both):
            rows += [{"layers": depth, "pre_norm": pre_norm, "layer": i + 1, "gradient_norm": float(g)}
                     for i, g in enumerate(norms)]
    return rows
