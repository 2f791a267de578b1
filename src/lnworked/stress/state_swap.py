"""Weights against Adam's state, then which weights: what carries what a schedule's first steps did.

Two Post-LN runs that meet the full rate ``eta`` at the same step ``k`` (the moderate holds of
:data:`~lnworked.stress.warmup_schedules.HOLDS`, say) arrive there with different weights
``theta_k`` and different Adam state (the running averages ``m`` and ``v`` and the step count).
Both experiments below continue from step ``k`` at the full rate, on the article's batches ``k + 1``
to the last.

:func:`swap_rows` starts from the weights of one run and the Adam state of the other, for every
combination:

    loss_s(a, b) = the loss at step s of the run started from (theta_k of a, Adam state of b).

The diagonal ``a == b`` is run ``a`` itself (the test checks it against the committed
``warmup-holds.csv``); the off-diagonal says whether the weights or the state decide how the
run ends.

:func:`graft_rows` starts from run ``a``'s weights and Adam state with one group ``G`` of
parameters (:data:`GRAFT_GROUPS`: every block's attention, every block's MLP, every block's two
LayerNorms, or the embeddings and the readout) taken from run ``b``'s weights:

    loss_s(a, b, G) = the loss at step s of the run started from (theta_k of a with group G of
    theta_k of b, Adam state of a),

which says in which parameters the difference that decides the run lies.
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

__all__ = ["SWAP_PAIR", "GRAFT_GROUPS", "swap_rows", "graft_rows", "graft", "write_swap_csv", "read_swap_csv",
           "write_graft_csv", "read_graft_csv"]

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


#: The parameter groups :func:`graft_rows` moves, by the names of their leaves in the model
#: (:mod:`lnworked.stress.model`): each group takes every block's (or the model's) leaves of those names.
GRAFT_GROUPS = {"attention": ("qkv", "attention_output"), "mlp": ("mlp_in", "mlp_out"),
                "norms": ("ln_1", "ln_2"), "ends": ("embedding", "position", "final_norm", "output")}


def graft(base, donor, names) -> dict:
    """``base`` (a parameter tree) with every leaf whose path names one of ``names`` taken from
    ``donor`` (a tree of the same structure); other leaves are ``base``'s."""
    names = set(names)

    def pick(path, a, b):
        keys = {getattr(key, "key", None) for key in path}
        return np.asarray(b if keys & names else a)

    return jax.tree_util.tree_map_with_path(pick, base, donor)


def _arrive(seeds, pair, config, at: int | None = None):
    """``{(schedule, seed): (weights, Adam state)}`` of Post-LN after ``k`` steps of each schedule, ``k``,
    and the article's batches: ``k = at``, or each schedule's steps below the full rate if ``at`` is None."""
    k = full_rate_from(pair[0]) if at is None else at
    sources, targets = make_batches(config)
    runs = [(s, seed) for s in pair for seed in seeds]
    rates = np.stack([schedule_rates(s, config) for s, _ in runs]).astype(np.float32)
    device = jax.devices("cpu")[0]
    with jax.default_device(device):
        # trained_snapshots seeds its runs from the seeds it is given, one per run
        for _, params, opt_state, _ in trained_snapshots(config, [seed for _, seed in runs],
                                                         np.zeros(len(runs), bool), rates, sources, targets,
                                                         [k], device):
            arrived = {run: (_pick(params, r), _pick(opt_state, r)) for r, run in enumerate(runs)}
    return arrived, k, (sources, targets)


def _continue(starts, k, batches, config, rates=None) -> np.ndarray:
    """The losses (runs, steps ``k + 1`` to the last) of Post-LN continued from each ``(weights, Adam
    state)`` of ``starts`` at a constant rate: ``rates[r]`` for run ``r``, or the full rate if ``rates``
    is None."""
    sources, targets = batches
    device = jax.devices("cpu")[0]
    params, opt_state = _stack([w for w, _ in starts]), _stack([state for _, state in starts])
    left, n = config.steps - k, len(starts)
    rates = np.full(n, config.learning_rate) if rates is None else np.asarray(rates, float)
    args = (params, opt_state, np.ones(n, bool), np.zeros(n, bool), sources[k:], targets[k:],
            np.repeat(rates.astype(np.float32)[:, None], left, axis=1), np.ones(left, bool))
    with jax.default_device(device):
        compiled, _ = compile_program(make_chunk_fn(config, True), args, device)
        _, (losses, _) = compiled(*args)
    return np.asarray(losses)


def swap_rows(seeds: Sequence[int], pair=SWAP_PAIR, config: StressConfig | None = None) -> list[dict]:
    """Rows ``{weights, state, seed, step, loss}``: Post-LN trained under each schedule of ``pair``
    for its ``k`` steps below the full rate, then continued at the full rate with the weights of
    schedule ``weights`` and the Adam state of schedule ``state`` (kinds), for every combination
    and seed; ``step`` is 1-based, ``k + 1`` to ``config.steps``, on the article's batches."""
    config = StressConfig() if config is None else config
    seeds, pair = check_seeds(seeds), _check_pair(pair)
    arrived, k, batches = _arrive(seeds, pair, config)
    combos = [(a, b, seed) for a in pair for b in pair for seed in seeds]
    losses = _continue([(arrived[a, seed][0], arrived[b, seed][1]) for a, b, seed in combos], k, batches, config)
    return [{"weights": a[0], "state": b[0], "seed": seed, "step": k + 1 + i, "loss": float(value)}
            for (a, b, seed), loss in zip(combos, losses) for i, value in enumerate(loss)]


def graft_rows(seeds: Sequence[int], pair=SWAP_PAIR, groups=tuple(GRAFT_GROUPS),
               config: StressConfig | None = None) -> list[dict]:
    """Rows ``{weights, donor, group, seed, step, loss}``: Post-LN trained under each schedule of
    ``pair`` for its ``k`` steps below the full rate, then continued at the full rate from the weights
    and Adam state of schedule ``weights`` with the parameters of ``group`` (a key of
    :data:`GRAFT_GROUPS`, or ``"none"``: the run itself) taken from schedule ``donor``'s weights, for
    every ordered pair of schedules, every group and seed; ``step`` as in :func:`swap_rows`."""
    config = StressConfig() if config is None else config
    seeds, pair = check_seeds(seeds), _check_pair(pair)
    groups = tuple(groups)
    unknown = [g for g in groups if g not in GRAFT_GROUPS]
    if not groups or unknown or len(set(groups)) != len(groups):
        raise ValueError(f"groups: must be distinct keys of {tuple(GRAFT_GROUPS)}, got {groups!r}")
    arrived, k, batches = _arrive(seeds, pair, config)
    combos = [(a, a, "none", seed) for a in pair for seed in seeds]
    combos += [(a, b, g, seed) for a in pair for b in pair if b != a for g in groups for seed in seeds]
    starts = [(arrived[a, seed][0] if g == "none" else graft(arrived[a, seed][0], arrived[b, seed][0], GRAFT_GROUPS[g]),
               arrived[a, seed][1]) for a, b, g, seed in combos]
    losses = _continue(starts, k, batches, config)
    return [{"weights": a[0], "donor": b[0], "group": g, "seed": seed, "step": k + 1 + i, "loss": float(value)}
            for (a, b, g, seed), loss in zip(combos, losses) for i, value in enumerate(loss)]


FIELDS = ("weights", "state", "seed", "step", "loss")


def write_swap_csv(rows, path) -> None:
    """:func:`swap_rows`' rows as CSV (``loss`` to 9 significant digits)."""
    write_rows(rows, path, FIELDS, floats=("loss",))


def read_swap_csv(path) -> list[dict]:
    """The rows :func:`write_swap_csv` wrote, types restored."""
    return read_rows(path, FIELDS, ints=("seed", "step"), floats=("loss",))


GRAFT_FIELDS = ("weights", "donor", "group", "seed", "step", "loss")


def write_graft_csv(rows, path) -> None:
    """:func:`graft_rows`' rows as CSV (``loss`` to 9 significant digits)."""
    write_rows(rows, path, GRAFT_FIELDS, floats=("loss",))


def read_graft_csv(path) -> list[dict]:
    """The rows :func:`write_graft_csv` wrote, types restored."""
    return read_rows(path, GRAFT_FIELDS, ints=("seed", "step"), floats=("loss",))
