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

__all__ = ["make_optimizer", "learning_rate_at", "learning_rates", "apply_rate"]


def make_optimizer(config: StressConfig):
    """An ``optax.GradientTransformation``: ``scale_by_adam`` -> ``add_decayed_weights`` -> ``scale(-1)``;
    the rate comes later."""
    return optax.chain(
        optax.scale_by_adam(b1=config.b1, b2=config.b2),
        optax.add_decayed_weights(config.weight_decay),
        optax.scale(-1.0),
    )


def learning_rate_at(target: float, step: int, warmup: int) -> float:
    """The rate of step ``s`` (1-based): ``target * min(1, s / warmup)``, or ``target`` when ``warmup`` is 0.

    The article's arithmetic exactly (Python floats), so the logged rates match its CSV.
    """
    return target * min(1.0, step / warmup) if warmup else target


def learning_rates(target: float, steps: int, warmup: int) -> np.ndarray:
    """:func:`learning_rate_at` for every step ``s = 1..steps`` (float64)."""
    return np.array([learning_rate_at(float(target), s, warmup) for s in range(1, steps + 1)], dtype=np.float64)


def apply_rate(params, updates, learning_rate):
    """``theta + lr * u`` for every leaf."""
    return optax.apply_updates(params, jax.tree.map(lambda u: learning_rate * u, updates))
