"""Adam's preconditioned sharpness along the rate schedules: where the full rate becomes stable.

After ``s`` steps Adam divides the next gradient ``g`` coordinate by coordinate by

    p = sqrt(v_hat) + eps,   v_hat = (b2 nu_s + (1 - b2) g^2) / (1 - b2^(s + 1)),

its bias-corrected second moment including ``g`` (at ``s = 0``, ``p = |g| + eps``). Near the
current weights, with ``P = diag(p)`` held fixed, Adam is heavy-ball momentum on the loss's
Hessian ``H`` seen through ``P^(-1)``, and along an eigenvector of ``P^(-1) H`` with eigenvalue
``lam`` its steps shrink only while

    eta lam < (2 + 2 b1) / (1 - b1)        (38 for b1 = 0.9, :func:`adam_threshold`),

the stability threshold of Cohen et al. (2022), "Adaptive gradient methods at the edge of
stability". The *preconditioned sharpness* is the largest such ``lam``, the top eigenvalue of the
symmetric ``P^(-1/2) H P^(-1/2)``; this module reports it times the full rate ``eta``, so that the
threshold is the fixed number :func:`adam_threshold`. It is found by Lanczos iteration
(:func:`lanczos_extremes`) on Hessian-vector products (forward-over-reverse JAX autodiff), on the
configuration's first batch.

:func:`sharpness_rows` trains each run of :data:`RUNS` (Post-LN under the schedules of
:mod:`lnworked.stress.warmup_schedules`, and Pre-LN at the constant rate) and measures it at each
snapshot step.
"""

from __future__ import annotations

from typing import Callable, Sequence

import jax
import jax.numpy as jnp
import numpy as np
from jax.flatten_util import ravel_pytree

from lnworked.stress.config import StressConfig
from lnworked.stress.data import make_batches
from lnworked.stress.first_update import check_seeds
from lnworked.stress.profiles import trained_snapshots
from lnworked.stress.stacked import make_logits
from lnworked.stress.step import make_loss
from lnworked.stress.table_csv import read_rows, write_rows
from lnworked.stress.warmup_schedules import schedule_rates
from lnworked.validation import check_int

__all__ = ["RUNS", "SNAPSHOTS", "WORKABLE_RUN", "WORKABLE_SNAPSHOTS", "adam_threshold", "momentum_walk", "momentum_roots", "lanczos_extremes", "make_sharpness_fns",
           "batched_sharpness_fns", "run_rates",
           "sharpness_rows", "write_sharpness_csv", "read_sharpness_csv"]

#: The runs measured: ``(pre_norm, schedule)``, the schedule as in
#: :func:`lnworked.stress.warmup_schedules.schedule_rates` (``("constant", 0)`` for Pre-LN too).
RUNS = ((False, ("constant", 0)), (False, ("held", 120)), (False, ("cut", 30)), (False, ("cut", 60)),
        (False, ("linear", 120)), (True, ("constant", 0)))
#: The steps at which the runs are measured (0 = the initial weights).
SNAPSHOTS = (0, 10, 30, 45, 60, 90, 120)
#: The run measured against the best constant rates of :mod:`lnworked.stress.workable`: Post-LN under the
#: linear warmup that reaches the full rate at step 60, at the initial weights and at the steps from
#: which those rates were tried.
WORKABLE_RUN = (False, ("linear", 60))
WORKABLE_SNAPSHOTS = (0, 10, 20, 30, 45)


def adam_threshold(b1: float) -> float:
    """``(2 + 2 b1) / (1 - b1)``: the largest ``eta lam`` at which heavy-ball momentum with Adam's
    averaging ``m <- b1 m + (1 - b1) g`` does not grow along a curvature ``lam`` (38 at ``b1 = 0.9``)."""
    b1 = float(b1)
    if not 0 <= b1 < 1:
        raise ValueError(f"b1: must be in [0, 1), got {b1}")
    return (2 + 2 * b1) / (1 - b1)


def momentum_walk(eta_lam: float, b1: float, steps: int) -> np.ndarray:
    """Adam's momentum along one direction of curvature ``lam`` with the divisors held fixed:

        m_(s+1) = b1 m_s + (1 - b1) lam theta_s,   theta_(s+1) = theta_s - eta m_(s+1),

    from ``theta_0 = 1``, ``m_0 = 0``; returns ``theta_0 .. theta_steps``. It depends on ``eta`` and
    ``lam`` only through ``eta_lam``; its size shrinks for ``eta_lam`` below :func:`adam_threshold`,
    holds at it and grows above it."""
    eta_lam = float(eta_lam)
    if not np.isfinite(eta_lam) or eta_lam <= 0:
        raise ValueError(f"eta_lam: must be a positive finite number, got {eta_lam}")
    adam_threshold(b1)  # checks b1
    steps = check_int(steps, "steps", minimum=1)
    thetas, theta, m = [1.0], 1.0, 0.0
    for _ in range(steps):
        m = b1 * m + (1 - b1) * theta  # in units of lam: eta m is then eta_lam times this
        theta = theta - eta_lam * m
        thetas.append(theta)
    return np.array(thetas)


def momentum_roots(eta_lam: float, b1: float) -> np.ndarray:
    """The two roots ``zeta`` of :func:`momentum_walk`'s characteristic equation,

        zeta^2 - psi zeta + b1 = 0,   psi = 1 + b1 - (1 - b1) eta_lam,

    as complex numbers, the one of larger size first. The walk is ``A zeta_1^s + A' zeta_2^s``: it
    shrinks while both ``|zeta| < 1``; one root reaches ``-1`` at ``eta_lam`` = :func:`adam_threshold`."""
    eta_lam = float(eta_lam)
    if not np.isfinite(eta_lam) or eta_lam < 0:
        raise ValueError(f"eta_lam: must be a finite number >= 0, got {eta_lam}")
    adam_threshold(b1)  # checks b1
    c = 1 + b1 - (1 - b1) * eta_lam
    root = np.sqrt(complex(c * c - 4 * b1))
    roots = np.array([(c + root) / 2, (c - root) / 2])
    return roots[np.argsort(-np.abs(roots), kind="stable")]


def lanczos_extremes(apply: Callable[[np.ndarray], np.ndarray], runs: int, dim: int, iterations: int = 16,
                     seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``(largest, smallest)`` eigenvalue estimates, one per run, of symmetric operators applied
    together: ``apply(Q)`` maps ``Q`` of shape ``(runs, dim)`` to ``A_r q_r`` for each run ``r``.
    Lanczos iteration with full reorthogonalisation from one random start for every run
    (``seed``), so equal operators give equal estimates; the extremes
    of the ``iterations`` x ``iterations`` tridiagonal matrix, which approach the operator's from
    inside as ``iterations`` grows."""
    runs = check_int(runs, "runs", minimum=1)
    dim = check_int(dim, "dim", minimum=1)
    iterations = check_int(iterations, "iterations", minimum=1, maximum=dim)
    start = np.random.default_rng(seed).standard_normal(dim)
    q = np.tile(start / np.linalg.norm(start), (runs, 1))
    basis, alphas, betas = [q], [], []
    previous, beta = np.zeros_like(q), np.zeros(runs)
    for _ in range(iterations):
        w = np.asarray(apply(q), np.float64)
        alpha = np.sum(w * q, axis=1)
        w = w - alpha[:, None] * q - beta[:, None] * previous
        for b in basis:
            w -= np.sum(w * b, axis=1)[:, None] * b
        alphas.append(alpha)
        beta = np.linalg.norm(w, axis=1)
        betas.append(beta)
        previous, q = q, w / np.where(beta > 0, beta, 1)[:, None]
        basis.append(q)
    alphas, off = np.array(alphas).T, np.array(betas[:-1]).T
    extremes = [np.linalg.eigvalsh(np.diag(a) + np.diag(b, 1) + np.diag(b, -1))[[-1, 0]] for a, b in zip(alphas, off)]
    return np.array([e[0] for e in extremes]), np.array([e[1] for e in extremes])


def make_sharpness_fns(config: StressConfig):
    """``(scale, apply)`` for one run, not yet jitted.

    ``scale(params, nu, count, source, target, pre_norm) -> (loss, 1 / sqrt(p))``, ``p`` Adam's
    divisor for the next gradient (see the module), flattened; ``apply(params, s, w, source,
    target, pre_norm) -> s * H (s * w)``, the product of ``P^(-1/2) H P^(-1/2)`` with a flat ``w``."""
    loss_fn = make_loss(make_logits(config, unroll=1))
    b2, eps = config.b2, 1e-8  # optax.scale_by_adam's default eps, as make_optimizer

    def scale(params, nu, count, source, target, pre_norm):
        loss, grads = jax.value_and_grad(loss_fn)(params, source, target, pre_norm)
        g, nu = ravel_pytree(grads)[0], ravel_pytree(nu)[0]
        v_hat = (b2 * nu + (1 - b2) * jnp.square(g)) / (1 - b2 ** (count + 1))
        return loss, 1 / jnp.sqrt(jnp.sqrt(v_hat) + eps)

    def apply(params, s, w, source, target, pre_norm):
        unravel = ravel_pytree(params)[1]

        def flat_grad(p):
            return ravel_pytree(jax.grad(loss_fn)(p, source, target, pre_norm))[0]

        return s * jax.jvp(flat_grad, (params,), (unravel(s * w),))[1]

    return scale, apply


def batched_sharpness_fns(config: StressConfig):
    """:func:`make_sharpness_fns`' ``(scale, apply)``, mapped over runs (weights, Adam's state or
    scales, vectors and placements; the batch shared) and jitted."""
    scale_fn, apply_fn = make_sharpness_fns(config)
    runs = (0, 0, 0, None, None, 0)
    return jax.jit(jax.vmap(scale_fn, in_axes=runs)), jax.jit(jax.vmap(apply_fn, in_axes=runs))


def run_rates(run: tuple[bool, tuple[str, int]], config: StressConfig) -> np.ndarray:
    """The rates of one run ``(pre_norm, schedule)`` of :data:`RUNS` (or of any schedule of
    :func:`~lnworked.stress.warmup_schedules.schedule_rates`): the schedule's rates, the same for
    either placement."""
    _, schedule = run
    return schedule_rates(tuple(schedule), config)


def sharpness_rows(seeds: Sequence[int], runs=RUNS, snapshots=SNAPSHOTS, config: StressConfig | None = None,
                   iterations: int = 16, device=None, progress: Callable[[int], None] | None = None) -> list[dict]:
    """Rows ``{placement, kind, k, seed, step, rate, loss, sharpness, lowest}``: every run of ``runs``
    for every seed, trained on the article's batches, measured at each snapshot step on the first
    batch. ``rate``: the run's rate at the next step over the full rate; ``sharpness`` and
    ``lowest``: the largest and smallest eigenvalue of ``P^(-1/2) H P^(-1/2)`` times the full rate
    (:func:`lanczos_extremes`). Ctrl-C keeps the snapshots done."""
    config = StressConfig() if config is None else config
    seeds = check_seeds(seeds)
    snapshots = sorted({check_int(s, "snapshots", minimum=0, maximum=config.steps - 1) for s in snapshots})
    if not snapshots or not runs:
        raise ValueError("snapshots: need at least one step and one run")
    pairs = [(run, seed) for run in runs for seed in seeds]
    rates = np.stack([run_rates(run, config) for run, _ in pairs]).astype(np.float32)
    pre = np.array([run[0] for run, _ in pairs])
    sources, targets = make_batches(config)
    device = jax.devices("cpu")[0] if device is None else device
    scale, apply = batched_sharpness_fns(config)
    eta, rows = config.learning_rate, []
    with jax.default_device(device):
        try:
            for step, params, opt_state, _ in trained_snapshots(config, [seed for _, seed in pairs], pre, rates,
                                                                sources, targets, snapshots, device):
                adam = opt_state[0]
                loss, s = scale(params, adam.nu, adam.count, sources[0], targets[0], pre)
                top, low = lanczos_extremes(lambda w: apply(params, s, jnp.asarray(w, jnp.float32), sources[0],
                                                            targets[0], pre), len(pairs), s.shape[1], iterations)
                for r, ((pre_norm, (kind, k)), seed) in enumerate(pairs):
                    rows.append({"placement": "Pre-LN" if pre_norm else "Post-LN", "kind": kind, "k": k,
                                 "seed": seed, "step": step, "rate": float(rates[r, step] / eta),
                                 "loss": float(loss[r]), "sharpness": eta * top[r], "lowest": eta * low[r]})
                if progress is not None:
                    progress(step)
        except KeyboardInterrupt:
            pass
    return rows


FIELDS = ("placement", "kind", "k", "seed", "step", "rate", "loss", "sharpness", "lowest")
_FLOATS = ("rate", "loss", "sharpness", "lowest")


def write_sharpness_csv(rows, path) -> None:
    """:func:`sharpness_rows`' rows as CSV (:func:`~lnworked.stress.table_csv.write_rows`: floats to 8
    significant digits)."""
    write_rows(rows, path, FIELDS, floats=_FLOATS, digits=8)


def read_sharpness_csv(path) -> list[dict]:
    """The rows :func:`write_sharpness_csv` wrote, types restored."""
    return read_rows(path, FIELDS, ints=("k", "seed", "step"), floats=_FLOATS)
