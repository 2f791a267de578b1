"""AdamW's first update at initialisation, and the first few steps: what it does to each placement.

At the first step Adam's bias-corrected statistics are ``m_hat = g`` and ``v_hat = g^2``, so
the real optimiser (:func:`~lnworked.stress.optim.make_optimizer`) moves every parameter by

    Delta theta = -lr * (g / (|g| + eps) + wd * theta)        (about -lr * sign(g))

whatever the gradient's size. For the initial weights ``theta_0`` of the stress test's
model (:func:`~lnworked.stress.train.initial_state`), the first batch ``(x, y)`` and a
rate ``lr`` (the target, or warmup's first rate ``target / warmup``),
:func:`first_update_table` measures

    rms_logits       = RMS of z_0 = logits(theta_0, x)
    rms_delta_logits = RMS of z_1 - z_0,  z_1 = logits(theta_0 + Delta theta, x)
    relative         = rms_delta_logits / rms_logits
    delta_loss       = CE(z_1, y) - CE(z_0, y)          (negative: the step helped)
    linear_delta_loss = <g, Delta theta>                 (its first-order prediction)

(RMS over batch, positions and vocabulary; CE the mean next-token cross-entropy on the
batch the gradient came from) for each placement, depth, rate and seed;
:func:`loss_along_update` draws the same loss along the update's line,
``L(theta_0 + t * Delta theta)`` against ``t``, beside its tangent. All cases are one
compiled program over the deepest tree: the ``d``-block model is its first ``d`` blocks
(:func:`~lnworked.stress.stacked.make_logits`' depth cut, the later blocks skipped), mapped
over seeds, depths and placements one case at a time (a vmap over them would hold every
case's backward pass in memory at once); the rates are a vector inside it.

:func:`first_steps` trains the article's three variants (Pre-LN, Post-LN, Post-LN with
warmup) and, to compare like with like, Pre-LN with the same warmup, for ``k`` steps from the same initial weights and batches, several seeds at once
(the training's own chunk program, :func:`~lnworked.stress.train.make_chunk_fn`), and
:func:`departure_step` says where one loss curve leaves another.
"""

from __future__ import annotations

from typing import Sequence

import jax
import jax.numpy as jnp
import numpy as np
import optax

from lnworked.stress.compile import CPU_SETUP_OPTIONS, compile_program
from lnworked.stress.config import StressConfig, warmup_for
from lnworked.stress.data import make_batches
from lnworked.stress.optim import apply_rate, learning_rates, make_optimizer
from lnworked.stress.stacked import make_logits
from lnworked.stress.step import make_loss
from lnworked.stress.train import initial_state, make_chunk_fn
from lnworked.validation import check_int, check_positive

__all__ = ["first_update", "first_update_table", "mean_delivered_share", "first_update_numbers",
           "loss_along_update", "first_steps", "departure_step", "VARIANTS", "check_depths", "check_seeds",
           "check_rates"]

VARIANTS = ("Pre-LN", "Post-LN", "Pre-LN + warmup", "Post-LN + warmup")


def check_depths(depths, name: str = "depths") -> list[int]:
    """A non-empty sequence of integers >= 1."""
    depths = list(depths) if not isinstance(depths, (str, bytes)) and hasattr(depths, "__iter__") else None
    if not depths:
        raise ValueError(f"{name}: must be a non-empty sequence of integers >= 1")
    return [check_int(d, name, minimum=1) for d in depths]


def check_seeds(seeds) -> list[int]:
    """A non-empty sequence of distinct integers >= 0."""
    seeds = list(seeds) if not isinstance(seeds, (str, bytes)) and hasattr(seeds, "__iter__") else None
    if not seeds:
        raise ValueError("seeds: must be a non-empty sequence of integers >= 0")
    seeds = [check_int(s, "seeds", minimum=0) for s in seeds]
    if len(set(seeds)) != len(seeds):
        raise ValueError(f"seeds: must be distinct, got {seeds!r}")
    return seeds


def check_rates(rates) -> list[float]:
    """A non-empty sequence of finite numbers > 0."""
    rates = list(rates) if not isinstance(rates, (str, bytes)) and hasattr(rates, "__iter__") else None
    if not rates:
        raise ValueError("rates: must be a non-empty sequence of numbers > 0")
    return [check_positive(r, "rates") for r in rates]


def _rms(a):
    return jnp.sqrt(jnp.mean(jnp.square(a)))


def first_update(config: StressConfig, unroll: int | None = 1):
    """``measure(params, source, target, pre_norm, depth, rates)`` for one case, not yet jitted:
    ``(rms_logits, loss, rms_delta_logits[r], loss_after[r], linear_delta_loss[r])`` of the optimiser's first update
    ``theta_0 + rates[r] * u_1`` (``u_1`` from :func:`~lnworked.stress.optim.make_optimizer`
    with its initial state), the ``depth``-block model of the stacked tree."""
    logits = make_logits(config, unroll=unroll, skip=True)
    loss_fn = make_loss(logits)
    optimizer = make_optimizer(config)

    def measure(params, source, target, pre_norm, depth, rates):
        z0 = logits(params, source, pre_norm, depth)
        loss, grads = jax.value_and_grad(loss_fn)(params, source, target, pre_norm, depth)
        update, _ = optimizer.update(grads, optimizer.init(params), params)

        def after(rate):
            z1 = logits(apply_rate(params, update, rate), source, pre_norm, depth)
            ce = jnp.mean(optax.softmax_cross_entropy_with_integer_labels(z1, target))
            return _rms(z1 - z0), ce

        moved, loss_after = jax.vmap(after)(rates)
        slope = sum(jnp.vdot(g, u) for g, u in zip(jax.tree.leaves(grads), jax.tree.leaves(update)))
        return _rms(z0), loss, moved, loss_after, slope * rates

    return measure


def first_update_table(depths: Sequence[int], rates: Sequence[float], seeds: Sequence[int],
                       config: StressConfig | None = None) -> list[dict]:
    """Tidy rows ``{layers, pre_norm, seed, learning_rate, loss, loss_after, delta_loss,
    linear_delta_loss, rms_logits, rms_delta_logits, relative}``, one per depth, placement, seed and rate, on
    the first batch of ``config`` (default the article's), from one compiled program."""
    config = StressConfig() if config is None else config
    depths, rates, seeds = check_depths(depths), check_rates(rates), check_seeds(seeds)
    cases, (rms_logits, loss, moved, loss_after, linear) = _measure_cases(depths, rates, seeds, config)
    rows = []
    for c, (s, depth, pre_norm) in enumerate(cases):
        for r, rate in enumerate(rates):
            rows.append({
                "layers": depth, "pre_norm": pre_norm, "seed": seeds[s], "learning_rate": rate,
                "loss": loss[c], "loss_after": loss_after[c, r], "delta_loss": loss_after[c, r] - loss[c],
                "linear_delta_loss": linear[c, r],
                "rms_logits": rms_logits[c], "rms_delta_logits": moved[c, r],
                "relative": moved[c, r] / rms_logits[c]})
    return rows


def _rows_at(rows, pre_norm: bool, layers: int, learning_rate: float) -> list:
    """The rows of :func:`first_update_table` for one placement, depth and rate (one per seed)."""
    picked = [r for r in rows if r["pre_norm"] == pre_norm and r["layers"] == layers
              and np.isclose(r["learning_rate"], learning_rate, rtol=1e-9)]
    if not picked:
        raise ValueError(f"rows: no row with pre_norm={pre_norm}, layers={layers}, "
                         f"learning_rate={learning_rate}")
    return picked


def mean_delivered_share(rows, pre_norm: bool, layers: int, learning_rate: float) -> float:
    """The first update's delivered share averaged over the seeds of ``rows``
    (:func:`first_update_table`'s): the mean over seeds ``s`` of
    ``delta_loss_s / linear_delta_loss_s``, each seed's :math:`\\Delta\\mathcal{L} / \\langle g,
    \\Delta\\theta\\rangle`, as the first-step explorer averages it (not the mean drop over the
    mean promise)."""
    return float(np.mean([r["delta_loss"] / r["linear_delta_loss"]
                          for r in _rows_at(rows, pre_norm, layers, learning_rate)]))


def _seed_mean(rows, key: str, pre_norm: bool, layers: int, learning_rate: float) -> float:
    """The mean over the seeds of ``rows`` (:func:`first_update_table`'s) of one column ``key``
    (``delta_loss``, ``linear_delta_loss``, ``relative``...) for one placement, depth and rate."""
    return float(np.mean([r[key] for r in _rows_at(rows, pre_norm, layers, learning_rate)]))


def first_update_numbers(rows, rate: float, first_rate: float) -> dict:
    """The first update's numbers that chapters 6 and 7 quote, by name, from one
    :func:`first_update_table` (means over its seeds). For placement ``p`` in ``pre``/``post`` and
    each depth ``L`` of ``rows``: ``pL-drop`` = ``-mean delta_loss`` and ``pL-promise`` =
    ``-mean linear_delta_loss`` at ``rate``; ``pL-rel`` and ``pL-rel-small``, the logits' relative
    change at ``rate`` and ``first_rate``; ``pL-delivered`` and ``pL-delivered-small``, 100 x
    :func:`mean_delivered_share` at each rate. Per depth: ``sensitivityL`` = Post-LN's ``rel-small``
    over Pre-LN's (the small step's logit move, Post-LN over Pre-LN) and ``full-ratioL``, the same at
    ``rate``."""
    out = {}
    for L in sorted({r["layers"] for r in rows}):
        for p, pre_norm in (("pre", True), ("post", False)):
            def mean(key, lr):
                return _seed_mean(rows, key, pre_norm, L, lr)

            out[f"{p}{L}-drop"] = -mean("delta_loss", rate)
            out[f"{p}{L}-promise"] = -mean("linear_delta_loss", rate)
            out[f"{p}{L}-rel"] = mean("relative", rate)
            out[f"{p}{L}-rel-small"] = mean("relative", first_rate)
            out[f"{p}{L}-delivered"] = 100 * mean_delivered_share(rows, pre_norm, L, rate)
            out[f"{p}{L}-delivered-small"] = 100 * mean_delivered_share(rows, pre_norm, L, first_rate)
        out[f"sensitivity{L}"] = out[f"post{L}-rel-small"] / out[f"pre{L}-rel-small"]
        out[f"full-ratio{L}"] = out[f"post{L}-rel"] / out[f"pre{L}-rel"]
    return out


def loss_along_update(config: StressConfig | None, seed: int, layers: int, rate: float,
                      ts: Sequence[float]) -> dict:
    """The loss along AdamW's first update, ``{pre_norm: {"loss": L(theta_0 + t * Delta theta) per t,
    "slope": <g, Delta theta>}}``, with ``Delta theta`` the first update at ``rate``
    (see the module's formula), ``g`` the gradient at ``theta_0`` and ``L`` the loss on the first
    batch, for the ``layers``-block model from ``PRNGKey(seed)``. Its tangent at ``t = 0`` is
    ``L(theta_0) + t * <g, Delta theta>``; ``t = 1`` is the full step, ``t = 1 / warmup`` warmup's
    first. The same program as :func:`first_update_table`, its rates ``t * rate``."""
    config = StressConfig() if config is None else config
    seed, layers = check_int(seed, "seed", minimum=0), check_int(layers, "layers", minimum=1)
    rate = check_positive(rate, "rate")
    ts = list(ts) if not isinstance(ts, (str, bytes)) and hasattr(ts, "__iter__") else None
    if not ts:
        raise ValueError("ts: must be a non-empty sequence of finite numbers")
    ts = [float(t) for t in ts]
    if not np.all(np.isfinite(ts)):
        raise ValueError(f"ts: must be finite numbers, got {ts!r}")
    cases, (_, _, _, loss_after, linear) = _measure_cases([layers], [rate] + [t * rate for t in ts],
                                                          [seed], config)
    return {pre_norm: {"loss": loss_after[c, 1:], "slope": float(linear[c, 0])}
            for c, (_, _, pre_norm) in enumerate(cases)}


def _measure_cases(depths, rates, seeds, config):
    """``(cases, arrays)``: ``cases`` the ``(seed index, depth, pre_norm)`` list and ``arrays``
    :func:`first_update`'s outputs for each, from one compiled program over the deepest tree."""
    deep = config.replace(layers=max(depths))
    params = initial_state(deep, seeds)[0][0]
    sources, targets = make_batches(config.replace(steps=1))
    cases = [(s, d, p) for s in range(len(seeds)) for d in depths for p in (True, False)]
    measure = first_update(deep)

    def all_cases(params, seed_index, depth, pre_norm, rates):
        def one(case):  # one case at a time: the deepest tree's backward pass is large
            index, d, pre = case
            own = jax.tree.map(lambda leaf: leaf[index], params)
            return measure(own, sources[0], targets[0], pre, d, rates)

        return jax.lax.map(one, (seed_index, depth, pre_norm))

    args = (params, *(np.array(column, dtype) for column, dtype in zip(zip(*cases), (np.int32, np.int32, bool))),
            np.asarray(rates, np.float32))
    program, _ = compile_program(all_cases, args, cpu_options=CPU_SETUP_OPTIONS)
    return cases, tuple(np.asarray(a, np.float64) for a in program(*args))


def first_steps(steps: int, seeds: Sequence[int], config: StressConfig | None = None,
                warmup: int | None = None) -> dict:
    """The first ``steps`` training losses of each of :data:`VARIANTS`, ``{variant: array (seeds, steps)}``.

    Pre-LN and Post-LN at the constant target rate, and each with the article's linear warmup
    (``warmup`` steps, default two thirds of ``config.steps``: its first ``steps`` rates are
    ``target * s / warmup``), all from ``PRNGKey(seed)``'s initial weights and the article's
    batches. Loss ``s`` (1-based) is measured before update ``s``, as the training logs it.
    """
    config = StressConfig() if config is None else config
    steps = check_int(steps, "steps", minimum=1, maximum=config.steps)
    seeds = check_seeds(seeds)
    warmup = warmup_for(config.steps) if warmup is None else check_int(warmup, "warmup", minimum=1)
    sources, targets = make_batches(config)
    sources, targets = sources[:steps], targets[:steps]
    schedule = {"Pre-LN": (True, 0), "Post-LN": (False, 0), "Pre-LN + warmup": (True, warmup),
                "Post-LN + warmup": (False, warmup)}
    runs = [(variant, seed) for variant in VARIANTS for seed in seeds]
    pre = np.array([schedule[v][0] for v, _ in runs])
    rates = np.stack([learning_rates(config.learning_rate, steps, schedule[v][1]) for v, _ in runs])
    (params, opt_state), _ = initial_state(config, [seed for _, seed in runs])
    args = (params, opt_state, np.ones(len(runs), bool), pre, sources, targets, rates.astype(np.float32),
            np.ones(steps, bool))
    program, _ = compile_program(make_chunk_fn(config, unroll=1), args)
    _, (losses, _) = program(*args)
    losses = np.asarray(losses, np.float64).reshape(len(VARIANTS), len(seeds), steps)
    return {variant: losses[i] for i, variant in enumerate(VARIANTS)}


def departure_step(reference: np.ndarray, other: np.ndarray, gap: float) -> int | None:
    """The first step ``s`` (1-based) from which ``other``'s loss stays above ``reference``'s by
    more than ``gap`` at every later step shown: ``other[t] - reference[t] > gap`` for all
    ``t >= s``; ``None`` if it never does (or only at a step it later falls back from)."""
    reference, other = np.asarray(reference, float), np.asarray(other, float)
    if reference.ndim != 1 or reference.shape != other.shape:
        raise ValueError(f"other: must have the shape of reference {reference.shape}, got {other.shape}")
    gap = check_positive(gap, "gap")
    above = other - reference > gap
    if not above[-1]:
        return None
    below = np.flatnonzero(~above)
    return int(below[-1] + 2) if below.size else 1
