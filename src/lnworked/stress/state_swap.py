"""Weights against Adam's state: which of the two carries what a schedule's first steps did.

Two Post-LN runs that meet the full rate ``eta`` at the same step ``k`` (the moderate holds of
:data:`~lnworked.stress.warmup_schedules.HOLDS`, say) arrive there with different weights
``theta_k`` and different Adam state (the running averages ``m`` and ``v`` and the step count).
:func:`swap_rows` continues from step ``k`` at the full rate with the weights of one run and the
Adam state of the other, for every combination, on the article's batches ``k + 1`` to the last:

    loss_s(a, b) = the loss at step s of the run started from (theta_k of a, Adam state of b).

The diagonal ``a == b`` is run ``a`` itself (the test checks it against the committed
``warmup-holds.csv``); the off-diagonal says whether the weights or the state decide how the
run ends.
"""

from __future__ import annotations

from typing import Sequence

import jax
import numpy as np

from lnworked.stress.compile import compile_program
from lnworked.stress.config import StressConfig
from lnworked.stress.data import make_batches
from lnworked.stress.first_update import check_seeds
from lnworked.stress.profiles import trained_snapshots
from lnworked.stress.table_csv import read_rows, write_rows
from lnworked.stress.train import make_chunk_fn
from lnworked.stress.warmup_schedules import full_rate_from, schedule_rates

__all__ = ["SWAP_PAIR", "swap_rows", "write_swap_csv", "read_swap_csv"]

#: Post-LN held at eta/2 and at eta/4 for its first 60 steps: the first learns in no seed, the
#: second in most (``warmup-holds.csv``).
SWAP_PAIR = (("half", 60), ("quarter", 60))


def _check_pair(pair) -> tuple[tuple[str, int], ...]:
    pair = tuple(tuple(s) for s in pair)
    starts = {full_rate_from(s) for s in pair}
    if len(pair) < 2 or len(set(pair)) != len(pair):
        raise ValueError(f"pair: need two or more distinct schedules, got {pair!r}")
    if len(starts) != 1 or None in starts or 0 in starts:
        raise ValueError(f"pair: every schedule must reach the full rate at the same step k > 0, got {pair!r}")
    return pair


def _stack(trees):
    return jax.tree.map(lambda *leaves: np.stack(leaves), *trees)


def _pick(tree, run: int):
    return jax.tree.map(lambda leaf: np.asarray(leaf[run]), tree)


def swap_rows(seeds: Sequence[int], pair=SWAP_PAIR, config: StressConfig | None = None) -> list[dict]:
    """Rows ``{weights, state, seed, step, loss}``: Post-LN trained under each schedule of ``pair``
    for its ``k`` steps below the full rate, then continued at the full rate with the weights of
    schedule ``weights`` and the Adam state of schedule ``state`` (kinds), for every combination
    and seed; ``step`` is 1-based, ``k + 1`` to ``config.steps``, on the article's batches."""
    config = StressConfig() if config is None else config
    seeds, pair = check_seeds(seeds), _check_pair(pair)
    k = full_rate_from(pair[0])
    device = jax.devices("cpu")[0]
    sources, targets = make_batches(config)
    runs = [(s, seed) for s in pair for seed in seeds]
    rates = np.stack([schedule_rates(s, config) for s, _ in runs]).astype(np.float32)
    with jax.default_device(device):
        # trained_snapshots seeds its runs from the seeds it is given, one per run
        for step, params, opt_state, _ in trained_snapshots(config, [seed for _, seed in runs],
                                                            np.zeros(len(runs), bool), rates, sources, targets,
                                                            [k], device):
            arrived = {run: (_pick(params, r), _pick(opt_state, r)) for r, run in enumerate(runs)}
        combos = [(a, b, seed) for a in pair for b in pair for seed in seeds]
        params = _stack([arrived[a, seed][0] for a, _, seed in combos])
        opt_state = _stack([arrived[b, seed][1] for _, b, seed in combos])
        left = config.steps - k
        args = (params, opt_state, np.ones(len(combos), bool), np.zeros(len(combos), bool), sources[k:],
                targets[k:], np.full((len(combos), left), config.learning_rate, np.float32), np.ones(left, bool))
        compiled, _ = compile_program(make_chunk_fn(config, True), args, device)
        _, (losses, _) = compiled(*args)
    return [{"weights": a[0], "state": b[0], "seed": seed, "step": k + 1 + i, "loss": float(value)}
            for (a, b, seed), loss in zip(combos, np.asarray(losses)) for i, value in enumerate(loss)]


FIELDS = ("weights", "state", "seed", "step", "loss")


def write_swap_csv(rows, path) -> None:
    """:func:`swap_rows`' rows as CSV (``loss`` to 9 significant digits)."""
    write_rows(rows, path, FIELDS, floats=("loss",))


def read_swap_csv(path) -> list[dict]:
    """The rows :func:`write_swap_csv` wrote, types restored."""
    return read_rows(path, FIELDS, ints=("seed", "step"), floats=("loss",))
