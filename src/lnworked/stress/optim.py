"""Optimizer and learning-rate schedule of the stress test (seed 002).

The update is Adam's statistics (b1 0.9, b2 0.95, no bias-free shortcut) plus decoupled
weight decay 0.01 on every parameter, with no gradient clipping (Loshchilov & Hutter's
AdamW without the rate folded in):

    u_t = -(m_hat_t / (sqrt(v_hat_t) + eps) + wd * theta_{t-1}),   theta_t = theta_{t-1} + lr_t * u_t

The rate ``lr_t`` is applied outside the Optax transform, as in the article, so one
compiled step serves a constant rate and a warmup alike. The warmup is linear:
``lr_s = target * min(1, s / warmup)`` for steps ``s = 1, 2, ...`` (warmup 0: constant).
"""

from __future__ import annotations

import jax
import numpy as np
import optax

from lnworked.stress.config import StressConfig

__all__ = ["make_optimizer", "learning_rates", "apply_rate"]


def make_optimizer(config: StressConfig) -> optax.GradientTransformation:
    """``scale_by_adam`` -> ``add_decayed_weights`` -> ``scale(-1)``; the rate comes later."""
    return optax.chain(
        optax.scale_by_adam(b1=config.b1, b2=config.b2),
        optax.add_decayed_weights(config.weight_decay),
        optax.scale(-1.0),
    )


def learning_rates(target: float, steps: int, warmup: int) -> np.ndarray:
    """The logged rate of each step ``s = 1..steps``: ``target * min(1, s / warmup)`` (float64)."""
    s = np.arange(1, steps + 1, dtype=np.float64)
    if warmup == 0:
        return np.full(steps, float(target))
    return np.array([target * min(1.0, k / warmup) for k in s])


def apply_rate(params, updates, learning_rate):
    """``theta + lr * u`` for every leaf."""
    return optax.apply_updates(params, jax.tree.map(lambda u: learning_rate * u, updates))
