"""Gradient norm per layer at initialisation: the empirical side of the attenuation argument.

Seeds 000 and 001 argue from block Jacobians: Pre-LN's ``I + J_F J_N`` keeps an identity
path, Post-LN's ``J_N (I + J_F)`` sends every backward route through a norm; Xiong et al.
(2020) show that at initialisation Post-LN's parameter gradients are largest near the
output while Pre-LN's are even across depth. Here we measure it on the stress test's
model: for block ``i``, ``||d loss / d theta_i||`` (global norm over that block's
parameters) on the first training batch, at the initial weights.
"""

from __future__ import annotations

import jax
import numpy as np
import optax

from lnworked.stress.config import StressConfig
from lnworked.stress.data import make_batches
from lnworked.stress.model import init_params, make_model
from lnworked.stress.step import make_loss

__all__ = ["initial_loss_and_gradient_norm", "layer_gradient_norms", "layer_gradient_table"]


def _initial_gradients(config: StressConfig, pre_norm: bool):
    """Loss and gradient at the initial weights on the first training batch."""
    sources, targets = make_batches(config.replace(steps=1))
    params = init_params(config, pre_norm)
    loss_fn = make_loss(make_model(config, pre_norm))
    return jax.jit(jax.value_and_grad(loss_fn))(params, sources[0], targets[0])


def initial_loss_and_gradient_norm(config: StressConfig, pre_norm: bool) -> tuple[float, float]:
    """Step 1's logged loss and global gradient norm (before any update)."""
    loss, grads = _initial_gradients(config, pre_norm)
    return float(loss), float(optax.tree.norm(grads))


def layer_gradient_norms(config: StressConfig, pre_norm: bool) -> np.ndarray:
    """``||grad of block i||`` for ``i = 0..layers-1`` at initialisation (first batch)."""
    _, grads = _initial_gradients(config, pre_norm)
    return np.array([float(optax.tree.norm(grads[f"block_{i}"])) for i in range(config.layers)])


def layer_gradient_table(depths, config: StressConfig | None = None) -> list[dict]:
    """Tidy rows ``{layers, pre_norm, layer, gradient_norm}`` for every depth and topology."""
    config = StressConfig() if config is None else config
    rows = []
    for depth in depths:
        for pre_norm in (True, False):
            norms = layer_gradient_norms(config.replace(layers=depth), pre_norm)
            rows += [{"layers": depth, "pre_norm": pre_norm, "layer": i + 1, "gradient_norm": float(g)}
                     for i, g in enumerate(norms)]
    return rows
