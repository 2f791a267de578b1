"""One training step of the stress test: loss, gradient, global norm, update (seed 002).

    loss = mean over batch and positions of the cross-entropy of the next-token logits
    g    = d loss / d theta,   ||g|| = sqrt(sum of squares over every parameter)  (optax.tree.norm)

The model enters as ``logits(params, source, *extra)``: the unrolled Flax model of the
reference loop (:func:`module_logits`, :mod:`lnworked.stress.reference`) or the stacked
one of the compiled path (:func:`lnworked.stress.stacked.make_logits`, whose ``extra``
is the placement flag), so both compute the same arithmetic.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import optax

from lnworked.stress.optim import apply_rate

__all__ = ["module_logits", "make_loss", "make_step"]


def module_logits(model):
    """``logits(params, source)`` of a Flax module (e.g. :class:`~lnworked.stress.model.TinyLM`)."""
    return lambda params, source: model.apply({"params": params}, source)


def make_loss(logits):
    """``loss(params, source, target, *extra)``: mean next-token cross-entropy."""

    def loss(params, source, target, *extra):
        return jnp.mean(optax.softmax_cross_entropy_with_integer_labels(logits(params, source, *extra), target))

    return loss


def make_step(logits, optimizer):
    """``step(params, opt_state, source, target, lr, *extra) -> (params, opt_state, loss, grad_norm)``."""
    loss_and_grad = jax.value_and_grad(make_loss(logits))

    def step(params, opt_state, source, target, learning_rate, *extra):
        loss, grads = loss_and_grad(params, source, target, *extra)
        updates, opt_state = optimizer.update(grads, opt_state, params)
        params = apply_rate(params, updates, learning_rate)
        return params, opt_state, loss, optax.tree.norm(grads)

    return step
