"""Liu et al. (2020)'s amplification, measured on the stress test's model at initialisation.

Liu et al. (2020, "Understanding the Difficulty of Training Transformers") bound how much a
residual network's output moves when its parameters move by a small ``delta`` around the
initial ``W``: ``Var[F(x, W) - F(x, W + delta)]`` is about ``sum_i beta_{i,i}^2 C``, where
``beta_{i,i}`` is how much layer ``i``'s output depends on its own residual branch; for
Post-LN this is ``O(N)`` in the number of layers ``N``, for Pre-LN ``O(log N)``.
Here, for the stress test's model (:mod:`lnworked.stress.stacked`) at its initial weights:

* :func:`output_change_table`: every parameter ``theta`` moves by ``delta ~ N(0, size^2)``
  entry by entry (one draw per seed, shared by the placements and depths), and

      output_change = mean over batch, positions and vocabulary of (z(theta + delta) - z(theta))^2

  with ``z`` the logits on the first batch; one compiled program, mapped over seeds,
  depths and placements (the deepest tree, later blocks skipped);
* :func:`growth_fits`: least-squares fits ``y ~ a + b N`` and ``y ~ a + b ln N`` and their
  residuals, to tell linear from logarithmic growth;
* :func:`branch_dependence`: for each sublayer ``i`` (attention, then MLP, block by block),
  the share of the sum's mean square that comes from the branch,

      r_i = ||a_i||^2 / ||alpha s_i + a_i||^2,   a_i = F_i(N(s_i)) (Pre-LN) or F_i(s_i) (Post-LN),

  with ``s_i`` the stream entering the sum and ``alpha`` the configuration's residual weight
  (``config.residual_scale``, 1 but for DeepNorm); for uncorrelated ``s_i`` and ``a_i`` this is
  ``beta_{i,i}^2`` of Liu et al.'s decomposition of the output into normalised branches.
"""

from __future__ import annotations

from typing import Sequence

import jax
import jax.numpy as jnp
import numpy as np

from lnworked.stress.compile import CPU_SETUP_OPTIONS, compile_program
from lnworked.stress.config import StressConfig
from lnworked.stress.data import make_batches
from lnworked.stress.first_update import check_depths, check_seeds
from lnworked.stress.model import embed_tokens, make_block
from lnworked.stress.stacked import make_logits
from lnworked.stress.train import initial_state
from lnworked.validation import check_positive

__all__ = ["perturbation", "output_change_table", "growth_fits", "branch_dependence"]


def perturbation(params, size: float, key):
    """``delta``: a tree like ``params`` with independent ``N(0, size^2)`` entries."""
    leaves, tree = jax.tree.flatten(params)
    keys = jax.random.split(key, len(leaves))
    return jax.tree.unflatten(tree, [size * jax.random.normal(k, leaf.shape, leaf.dtype)
                                     for k, leaf in zip(keys, leaves)])


def output_change_table(depths: Sequence[int], size: float, seeds: Sequence[int],
                        config: StressConfig | None = None) -> list[dict]:
    """Rows ``{layers, pre_norm, seed, size, mean_square_logits, output_change}`` (see the module)."""
    config = StressConfig() if config is None else config
    depths, seeds, size = check_depths(depths), check_seeds(seeds), check_positive(size, "size")
    deep = config.replace(layers=max(depths))
    params = initial_state(deep, seeds)[0][0]
    source = make_batches(config.replace(steps=1))[0][0]
    logits = make_logits(deep, unroll=1, skip=True)
    cases = [(s, d, p) for s in range(len(seeds)) for d in depths for p in (True, False)]

    def all_cases(params, seed, index, depth, pre_norm):
        def one(case):
            i, d, pre = case
            own = jax.tree.map(lambda leaf: leaf[i], params)
            moved = jax.tree.map(jnp.add, own, perturbation(own, size, jax.random.PRNGKey(seed[i])))
            z0 = logits(own, source, pre, d)
            return jnp.mean(jnp.square(z0)), jnp.mean(jnp.square(logits(moved, source, pre, d) - z0))

        return jax.lax.map(one, (index, depth, pre_norm))

    columns = [np.array(column, dtype) for column, dtype in zip(zip(*cases), (np.int32, np.int32, bool))]
    args = (params, np.asarray(seeds, np.uint32), *columns)
    program, _ = compile_program(all_cases, args, cpu_options=CPU_SETUP_OPTIONS)
    square, change = (np.asarray(a, np.float64) for a in program(*args))
    return [{"layers": d, "pre_norm": p, "seed": seeds[s], "size": size,
             "mean_square_logits": square[c], "output_change": change[c]}
            for c, (s, d, p) in enumerate(cases)]


def growth_fits(depths: Sequence[int], values: Sequence[float]) -> dict:
    """``{"linear": (a, b, residual), "log": (a, b, residual)}``: least squares of ``values`` on
    ``a + b N`` and on ``a + b ln N``; ``residual`` is the RMS of the misfit divided by the RMS
    of ``values`` (so the two fits compare on one scale)."""
    depths = np.asarray(check_depths(depths), float)
    values = np.asarray(values, float)
    if values.shape != depths.shape or not np.all(np.isfinite(values)):
        raise ValueError(f"values: must be {depths.size} finite numbers, one per depth")
    if np.unique(depths).size < 3:
        raise ValueError("depths: need at least 3 distinct depths to compare two 2-parameter fits")
    scale = np.sqrt(np.mean(values ** 2))
    fits = {}
    for name, x in (("linear", depths), ("log", np.log(depths))):
        design = np.stack([np.ones_like(x), x], axis=1)
        (a, b), *_ = np.linalg.lstsq(design, values, rcond=None)
        misfit = values - design @ np.array([a, b])
        fits[name] = (float(a), float(b), float(np.sqrt(np.mean(misfit ** 2)) / scale))
    return fits


def branch_dependence(seeds: Sequence[int], config: StressConfig | None = None) -> dict:
    """``{True: array (seeds, 2 L), False: ...}``: ``r_i`` of every sublayer (see the module)
    for Pre-LN (``True``) and Post-LN, at the initial weights, on the first batch."""
    config = StressConfig() if config is None else config
    seeds = check_seeds(seeds)
    params = initial_state(config, seeds)[0][0]
    source = make_batches(config.replace(steps=1))[0][0]
    block = make_block(config)

    def shares(params, pre_norm):
        x = embed_tokens(params["embedding"]["embedding"], params["position"], source, config)

        def body(x, layer):
            out = []
            for norm, branch in (("ln_1", "attn"), ("ln_2", "mlp")):
                def sublayer(m, x, norm=norm, branch=branch):
                    n = getattr(m, norm)
                    a = getattr(m, branch)(jnp.where(pre_norm, n(x), x))
                    y = m.residual(x, a)
                    return a, y, jnp.where(pre_norm, y, n(y))

                a, y, x = block.apply({"params": layer}, x, method=sublayer)
                out.append(jnp.sum(jnp.square(a)) / jnp.sum(jnp.square(y)))
            return x, jnp.stack(out)

        _, r = jax.lax.scan(body, x, params["blocks"])
        return r.reshape(-1)

    both = jax.vmap(jax.vmap(shares, in_axes=(None, 0)), in_axes=(0, None))
    args = (params, np.array([True, False]))
    program, _ = compile_program(both, args, cpu_options=CPU_SETUP_OPTIONS)
    r = np.asarray(program(*args), np.float64)
    return {True: r[:, 0], False: r[:, 1]}
