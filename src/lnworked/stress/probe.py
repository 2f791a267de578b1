"""Gradient norm per layer at initialisation: the empirical side of the attenuation argument.

Seeds 000 and 001 argue from block Jacobians: Pre-LN's ``I + J_F J_N`` keeps an identity
path, Post-LN's ``J_N (I + J_F)`` sends every backward route through a norm; Xiong et al.
(2020) show that at initialisation Post-LN's parameter gradients are largest near the
output while Pre-LN's are even across depth. Here we measure it on the stress test's
model: for block ``i``, ``||d loss / d theta_i||`` (global norm over that block's
parameters) on the first training batch, at the initial weights. Both placements are one
program (the stacked model with the placement as data, :mod:`lnworked.stress.stacked`),
and block ``i``'s gradient is row ``i`` of the stacked block gradient. Every depth is
that one program too: the deepest tree with the blocks past the depth passed through.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from lnworked.stress.compile import CPU_SETUP_OPTIONS, compile_program
from lnworked.stress.config import StressConfig
from lnworked.stress.data import make_batches
from lnworked.stress.stacked import make_logits
from lnworked.stress.step import make_loss
from lnworked.stress.train import initial_state
from lnworked.validation import check_int

__all__ = ["layer_gradient_norms", "layer_gradient_table"]


def _per_layer_norms(grads):
    """``||g_i||`` for each block ``i`` of a stacked gradient (sum of squares over its leaves)."""
    squares = [jnp.sum(jnp.square(leaf).reshape(leaf.shape[0], -1), axis=1) for leaf in jax.tree.leaves(grads["blocks"])]
    return jnp.sqrt(sum(squares))


def layer_gradient_norms(config: StressConfig, pre_norm: bool) -> np.ndarray:
    """``||grad of block i||`` for ``i = 0..layers-1`` at initialisation (first batch)."""
    return _gradient_norms(config, [config.layers], [pre_norm])[0]


def _gradient_norms(config: StressConfig, depths, placements) -> np.ndarray:
    """Per-layer gradient norms of the ``depths[k]``-block model with placement ``placements[k]``,
    shape ``(k, config.layers)`` (zero past each depth): one vmapped program over the
    ``config.layers``-block tree, whose first ``d`` blocks are the ``d``-block model. The
    initial weights come from the training's start program (:func:`initial_state`), so
    after a training run of the same configuration only the gradient is compiled."""
    sources, targets = make_batches(config.replace(steps=1))
    params = jax.tree.map(lambda leaf: leaf[0], initial_state(config, [config.seed])[0][0])
    grad = jax.grad(make_loss(make_logits(config, unroll=1)))  # one gradient: compiling dominates

    def norms(params, pre_norm, depth):
        return _per_layer_norms(grad(params, sources[0], targets[0], pre_norm, depth))

    args = (params, np.asarray(placements, bool), np.asarray(depths, np.int32))
    program, _ = compile_program(jax.vmap(norms, in_axes=(None, 0, 0)), args, cpu_options=CPU_SETUP_OPTIONS)
    return np.asarray(program(*args))


def layer_gradient_table(depths, config: StressConfig | None = None) -> list[dict]:
    """Tidy rows ``{layers, pre_norm, layer, gradient_norm}`` for every depth and topology,
    from one program (:func:`_gradient_norms` at the largest depth)."""
    config = StressConfig() if config is None else config
    depths = [check_int(d, "depths", minimum=1) for d in depths]
    cases = [(depth, pre_norm) for depth in depths for pre_norm in (True, False)]
    table = _gradient_norms(config.replace(layers=max(depths)), *zip(*cases))
    rows = []
    for (depth, pre_norm), norms in zip(cases, table):
        rows += [{"layers": depth, "pre_norm": pre_norm, "layer": i + 1, "gradient_norm": float(g)}
                 for i, g in enumerate(norms[:depth])]
    return rows
