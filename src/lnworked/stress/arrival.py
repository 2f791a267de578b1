"""Where the full rate arrives, and the steps after: what Adam's preconditioned sharpness does.

:mod:`lnworked.stress.sharpness` measures the product ``eta lam`` (the full rate times the top
eigenvalue of ``P^(-1/2) H P^(-1/2)``) at fixed steps of every run. Two questions need other
steps:

- :func:`arrival_rows`: the product at the step where a run's rate becomes the full rate
  (:func:`~lnworked.stress.warmup_schedules.full_rate_from`) and at :data:`AFTER` steps after it.
  A run that meets the full rate below the threshold can still leave it once full-rate steps
  move its weights; this measures whether it does.
- :func:`divisor_split_rows`: the product with the weights of one step and Adam's divisors
  ``P`` of another, so that a change of the product between two steps splits into the part the
  divisors make (same weights, other ``P``) and the part the weights make (same ``P``).
"""

from __future__ import annotations

from typing import Callable, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from lnworked.stress.config import StressConfig
from lnworked.stress.data import make_batches
from lnworked.stress.first_update import check_seeds
from lnworked.stress.profiles import trained_snapshots
from lnworked.stress.sharpness import batched_sharpness_fns, lanczos_extremes, run_rates, sharpness_rows
from lnworked.stress.table_csv import read_rows, write_rows
from lnworked.stress.warmup_schedules import HOLDS, full_rate_from
from lnworked.validation import check_int

__all__ = ["ARRIVAL_RUNS", "AFTER", "HOLD_RUNS", "REREAD_STEPS", "arrival_rows", "divisor_split_rows", "write_split_csv", "read_split_csv"]

#: The runs followed from the full rate's arrival: Post-LN at the constant rate, with its first 20
#: and 120 steps held small, with the article's warmup cut at step 30 or 60 and whole, and
#: Pre-LN at the constant rate.
ARRIVAL_RUNS = ((False, ("constant", 0)), (False, ("held", 20)), (False, ("held", 120)), (False, ("cut", 30)),
                (False, ("cut", 60)), (False, ("linear", 120)), (True, ("constant", 0)))
#: Post-LN with its first steps held at a moderate rate (:data:`~lnworked.stress.warmup_schedules.HOLDS`),
#: measured where the full rate arrives (``lnworked stress warmup-holds-arrival``).
HOLD_RUNS = tuple((False, schedule) for schedule in HOLDS)
#: Steps after the arrival at which each run is measured (0: the weights the full rate meets).
AFTER = (0, 1, 2, 4, 8, 16, 32)


#: The held run's largest stored reading (random seed 9, 32 steps after its full rate arrives at
#: step 120) and the reading before it, measured again with the weights and divisors of each
#: (``lnworked stress warmup-reread``): does the reading repeat, and is it the weights or the divisors?
REREAD_STEPS = (136, 152)


def arrival_rows(seeds: Sequence[int], runs=ARRIVAL_RUNS, after=AFTER, config: StressConfig | None = None,
                 iterations: int = 16, progress: Callable[[int], None] | None = None) -> list[dict]:
    """:func:`~lnworked.stress.sharpness.sharpness_rows`' rows for each run of ``runs``, measured
    at ``a`` steps after the run's full rate arrives, for each ``a`` of ``after`` (those before the
    run's last step). Ctrl-C keeps the runs done."""
    config = StressConfig() if config is None else config
    seeds = check_seeds(seeds)
    after = sorted({check_int(a, "after", minimum=0) for a in after})
    if not after:
        raise ValueError("after: need at least one step")
    rows = []
    try:
        for run in runs:
            start = full_rate_from(tuple(run[1]))
            if start is None:
                raise ValueError(f"runs: {run[1]!r} never reaches the full rate")
            steps = [start + a for a in after if start + a < config.steps]
            rows += sharpness_rows(seeds, runs=[run], snapshots=steps, config=config, iterations=iterations,
                                   progress=progress)
    except KeyboardInterrupt:
        pass
    return rows


def divisor_split_rows(seeds: Sequence[int], run=(False, ("held", 120)), steps=(0, 10), config: StressConfig | None = None,
                       iterations: int = 16) -> list[dict]:
    """Rows ``{seed, weights, divisors, sharpness}``: the full rate times the top eigenvalue of
    ``P_b^(-1/2) H_a P_b^(-1/2)``, with ``H_a`` the Hessian at the weights after ``a`` steps of
    ``run`` and ``P_b`` Adam's divisors after ``b`` steps (including the gradient at step ``b``'s
    weights), for every pair ``(a, b)`` of ``steps``, on the first batch. ``a == b`` is
    :func:`~lnworked.stress.sharpness.sharpness_rows`' value."""
    config = StressConfig() if config is None else config
    seeds = check_seeds(seeds)
    steps = sorted({check_int(s, "steps", minimum=0, maximum=config.steps - 1) for s in steps})
    if len(steps) < 2:
        raise ValueError(f"steps: need two different steps to split, got {steps}")
    rates = np.stack([run_rates(run, config)] * len(seeds)).astype(np.float32)
    pre = np.array([run[0]] * len(seeds))
    sources, targets = make_batches(config)
    device = jax.devices("cpu")[0]
    scale, apply = batched_sharpness_fns(config)
    weights, divisors = {}, {}
    with jax.default_device(device):
        for step, params, opt_state, _ in trained_snapshots(config, seeds, pre, rates, sources, targets, steps,
                                                            device):
            adam = opt_state[0]
            weights[step] = params
            divisors[step] = scale(params, adam.nu, adam.count, sources[0], targets[0], pre)[1]
        rows = []
        for a in steps:
            for b in steps:
                top, _ = lanczos_extremes(lambda w: apply(weights[a], divisors[b], jnp.asarray(w, jnp.float32),
                                                          sources[0], targets[0], pre),
                                          len(seeds), divisors[b].shape[1], iterations)
                rows += [{"seed": seed, "weights": a, "divisors": b, "sharpness": config.learning_rate * top[r]}
                         for r, seed in enumerate(seeds)]
    return rows


SPLIT_FIELDS = ("seed", "weights", "divisors", "sharpness")


def write_split_csv(rows, path) -> None:
    """:func:`divisor_split_rows`' rows as CSV (floats to 8 significant digits)."""
    write_rows(rows, path, SPLIT_FIELDS, floats=("sharpness",), digits=8)


def read_split_csv(path) -> list[dict]:
    """The rows :func:`write_split_csv` wrote, types restored."""
    return read_rows(path, SPLIT_FIELDS, ints=("seed", "weights", "divisors"), floats=("sharpness",))
