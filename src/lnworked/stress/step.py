"""One training step of the stress test: loss, gradient, global norm, update (seed 002).

    loss = mean over batch and positions of the cross-entropy of the next-token logits
    g    = d loss / d theta,   ||g|| = sqrt(sum of squares over every parameter)  (optax.tree.norm)

Shared by the reference loop (:mod:`lnworked.stress.reference`) and the compiled fast
path (:mod:`lnworked.stress.train`), so both compute the same arithmetic.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import optax

from lnworked.stress.optim import apply_rate

__all__ = ["make_loss", "make_step"]


def make_loss(model):
    """``loss(params, source, target)``: mean next-token cross-entropy."""

    def loss(params, source, target):
        logits = model.apply({"params": params}, source)
        return jnp.mean(optax.softmax_cross_entropy_with_integer_labels(logits, target))

    return loss


def make_step(model, optimizer):
    """``step(params, opt_state, source, target, lr) -> (params, opt_state, loss, grad_norm)``."""
    loss_fn = make_loss(model)

    def step(params, opt_state, source, target, learning_rate):
        loss, grads = jax.value_and_grad(loss_fn)(params, source, target)
        updates, opt_state = optimizer.update(grads, opt_state, params)
        params = apply_rate(params, updates, learning_rate)
        return params, opt_state, loss, optax.tree.norm(grads)

    return step
