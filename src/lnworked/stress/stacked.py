"""The stress test's model with its blocks stacked: one ``lax.scan`` over identical layers.

:class:`~lnworked.stress.model.TinyLM` unrolls its ``L`` blocks (``block_0`` ...
``block_{L-1}``), so the compiler sees ``L`` copies of the same code. Here the block
parameters are stacked along a leading layer axis, ``theta[l] = block_l``, and the
forward pass is

    x_0 = E[tokens] + P,   x_{l+1} = Block(theta[l], x_l, p)  (one scanned body),
    logits = W_out (p ? N_final(x_L) : x_L)

with the placement ``p`` as data (:meth:`~lnworked.stress.model.Block.__call__`), so
Pre-LN and Post-LN runs share one program. Post-LN has no final norm; its stacked tree
carries an unused identity one (scale 1, bias 0), whose gradient is zero, so the global
gradient norm and every used parameter's update are those of the unrolled model.
Initial weights come from :func:`~lnworked.stress.model.init_params` (the article's
parameter names and keys), then :func:`stack_params`. They do not depend on the
placement: Flax derives each parameter's key from its path, the two placements share
every path but ``final_norm``, and Pre-LN's final norm starts as the identity (scale 1,
bias 0) that Post-LN carries, so :func:`stacked_init` needs only the key.

Rolled or unrolled: with one block in the loop body the program compiles faster, but on
a CPU each step is slower (presumably as the loop body is optimised on its own and the
backward pass stacks its residuals). Measured side by side on a 2-core CPU over the default
180 steps, unrolling won end to end (README, "Performance"), so :func:`make_logits`
unrolls by default; the stacked layout stays (a dozen parameter leaves instead of
``12 L``, one tree for both placements) and ``unroll=1`` gives the rolled loop.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from lnworked.stress.config import StressConfig
from lnworked.stress.model import NORM_LAYERS, embed_tokens, init_params, make_block

__all__ = ["stack_params", "unstack_grads", "stacked_init", "make_logits"]


def stack_params(params, config: StressConfig):
    """``{embedding, position, blocks (leading layer axis), final_norm, output}`` from ``TinyLM`` parameters."""
    blocks = [params[f"block_{i}"] for i in range(config.layers)]
    stacked = {k: v for k, v in params.items() if not k.startswith("block_")}
    stacked["blocks"] = jax.tree.map(lambda *leaves: jnp.stack(leaves), *blocks)
    if "final_norm" not in stacked:  # Post-LN: an unused identity norm, so both placements share one tree
        final = NORM_LAYERS[config.norm]()
        stacked["final_norm"] = final.init(jax.random.PRNGKey(0), jnp.zeros((1, config.width)))["params"]
    return stacked


def unstack_grads(stacked, config: StressConfig):
    """The inverse of :func:`stack_params` for the blocks: ``{block_i: ...}`` plus the other entries."""
    out = {k: v for k, v in stacked.items() if k != "blocks"}
    for i in range(config.layers):
        out[f"block_{i}"] = jax.tree.map(lambda leaf: leaf[i], stacked["blocks"])
    return out


def stacked_init(config: StressConfig, key=None):
    """The article's initial weights (``key``, default ``PRNGKey(config.seed)``), stacked; the
    same tree for both placements (see the module's docstring; a test checks it)."""
    return stack_params(init_params(config, True, key), config)


def make_logits(config: StressConfig, unroll: int | None = None, skip: bool = False):
    """``logits(params, tokens, pre_norm, depth=None)`` of the stacked model; ``pre_norm`` a boolean (array).

    ``unroll``: blocks per iteration of the scan; ``None`` (default) unrolls them all
    (the compiler then sees ``L`` copies again), ``1`` keeps one block in the loop body.
    ``depth`` (an integer, may be traced): only blocks ``0 .. depth-1`` act, the later ones
    pass ``x`` through, so the ``L``-block tree computes the ``depth``-block model (whose
    initial weights are the first ``depth`` blocks': keys follow the parameter paths).
    ``skip``: pass those blocks by ``lax.cond`` instead of computing and discarding them, so a
    program that is not vmapped over ``depth`` (e.g. one under ``lax.map``) does not run them.
    """
    block = make_block(config)
    final = NORM_LAYERS[config.norm]()

    def logits(params, tokens, pre_norm, depth=None):
        x = embed_tokens(params["embedding"]["embedding"], params["position"], tokens, config)

        def body(x, layer_index):
            layer, index = layer_index
            if depth is not None and skip:
                return jax.lax.cond(index < depth, lambda x: block.apply({"params": layer}, x, pre_norm),
                                    lambda x: x, x), None
            y = block.apply({"params": layer}, x, pre_norm)
            return (y if depth is None else jnp.where(index < depth, y, x)), None

        layers = (params["blocks"], jnp.arange(config.layers))
        x, _ = jax.lax.scan(body, x, layers, unroll=config.layers if unroll is None else unroll)
        use_final = True if config.post_final_norm else pre_norm  # config.post_final_norm: Post-LN too
        x = jnp.where(use_final, final.apply({"params": params["final_norm"]}, x), x)
        if config.tied_readout:  # the output layer is the embedding itself
            return x @ params["embedding"]["embedding"].T
        return x @ params["output"]["kernel"]

    return logits
