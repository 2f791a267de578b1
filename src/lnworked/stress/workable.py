"""Which constant rates are workable from a schedule's weights at step ``k``.

Section 6.5 of the book calls a rate *workable* from given weights when it is no higher than the
best constant rate from them. From Post-LN's initial weights that is read off the runs at the
constant rates ``eta / d`` (``warmup-schedules.csv``); here it is measured from the weights
``theta_k`` and Adam state (running averages ``m``, ``v`` and step count) that a schedule ``S`` (the
linear warmup that reaches ``eta`` at step 60, say) has after ``k`` steps. Every run is the stress
test's Post-LN trained under ``S`` for ``k`` steps and then continued at one constant rate ``eta / d``
for every divisor ``d`` (:data:`DIVISORS`), on the article's batches ``k + 1`` to the last:

    loss_s(d) = the loss at step s of the run started from (theta_k of S, Adam state of S)
                and trained at eta / d over steps k + 1, ..., s.

With a run's final loss its mean over the last 10 steps, the best constant rate from ``theta_k`` is
``eta / d*`` with ``d*`` the divisor whose run ends lowest, and ``eta / d`` is workable from there when
``d >= d*``. Where ``S``'s own rate stays ``eta / d`` after step ``k`` (a moderate hold ``("quarter", K)``
with ``k < K``, at ``d = 4``), the run is ``S`` itself up to the step where ``S``'s rate changes: the
tests check that.

The runs are trained by :mod:`lnworked.stress.state_swap`'s helpers: ``_arrive`` (the weights and state
at step ``k``) and ``_continue`` (the continuation, at a rate per run).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from lnworked.stress.config import StressConfig
from lnworked.stress.first_update import check_seeds
from lnworked.stress.state_swap import _arrive, _continue
from lnworked.stress.table_csv import read_rows, write_rows
from lnworked.stress.warmup_schedules import SCHEDULES, full_rate_from, schedule_rates
from lnworked.validation import check_int

__all__ = ["WORKABLE_START", "WORKABLE_AT", "WORKABLE_CURVE_AT", "DIVISORS", "check_workable", "workable_rows",
           "workable_losses", "best_divisors", "committed_workable_curve", "write_workable_csv", "read_workable_csv"]

#: The schedule the book stores this for: the linear warmup that reaches ``eta`` at step 60 ...
WORKABLE_START = ("linear", 60)
#: ... after 30 of its steps, where its rate is ``eta / 2``.
WORKABLE_AT = 30
#: The constant rates ``eta / d`` each run continues at.
DIVISORS = (1, 2, 4, 8)
#: The other steps of the same warmup from which the book stores the runs, for the best rate against the step.
WORKABLE_CURVE_AT = (10, 20, 45)


def check_workable(start, at, divisors=DIVISORS, config: StressConfig | None = None):
    """``(start, at, divisors)`` checked: ``start`` a schedule ``(kind, k)`` of
    :func:`~lnworked.stress.warmup_schedules.schedule_rates`; ``at`` an integer from 1 to
    ``config.steps - 1``, no later than the step where ``start`` reaches the full rate (any step for
    ``reduced``, which never does); ``divisors`` distinct integers >= 1, at least one. ValueError
    naming the argument otherwise."""
    config = StressConfig() if config is None else config
    if isinstance(start, (str, bytes)) or not hasattr(start, "__len__") or len(start) != 2:
        raise ValueError(f"start: must be a schedule (kind, k), got {start!r}")
    start = tuple(start)
    if start[0] not in SCHEDULES:
        raise ValueError(f"start: kind must be one of {SCHEDULES}, got {start[0]!r}")
    try:
        schedule_rates(start, config)
    except ValueError as err:
        raise ValueError(f"start: {start!r} is not a schedule over {config.steps} steps ({err})") from None
    at = check_int(at, "at", minimum=1, maximum=config.steps - 1)
    full = full_rate_from(start)
    if full is not None and at > full:
        raise ValueError(f"at: must be at most {full}, the steps {start!r} takes to reach the full rate, got {at}")
    divisors = tuple(divisors) if not isinstance(divisors, (str, bytes)) and hasattr(divisors, "__iter__") else None
    if not divisors:
        raise ValueError(f"divisors: must be a non-empty sequence of integers >= 1, got {divisors!r}")
    divisors = tuple(check_int(d, "divisors", minimum=1) for d in divisors)
    if len(set(divisors)) != len(divisors):
        raise ValueError(f"divisors: must be distinct, got {divisors!r}")
    return start, at, divisors


def workable_rows(seeds: Sequence[int], start=WORKABLE_START, at: int = WORKABLE_AT, divisors=DIVISORS,
                  config: StressConfig | None = None) -> list[dict]:
    """Rows ``{schedule, k, at, divisor, seed, step, loss}``: Post-LN trained under ``start`` =
    ``(schedule, k)`` for ``at`` steps, then continued at the constant rate ``eta / divisor`` for each
    of ``divisors`` and seed (:func:`check_workable`); ``step`` is 1-based, ``at + 1`` to
    ``config.steps``, on the article's batches."""
    config = StressConfig() if config is None else config
    seeds = check_seeds(seeds)
    start, at, divisors = check_workable(start, at, divisors, config)
    arrived, at, batches = _arrive(seeds, (start,), config, at=at)
    combos = [(d, seed) for d in divisors for seed in seeds]
    losses = _continue([arrived[start, seed] for _, seed in combos], at, batches, config,
                       rates=[config.learning_rate / d for d, _ in combos])
    return [{"schedule": start[0], "k": start[1], "at": at, "divisor": d, "seed": seed, "step": at + 1 + i,
             "loss": float(value)}
            for (d, seed), loss in zip(combos, losses) for i, value in enumerate(loss)]


def workable_losses(rows) -> tuple[list[int], list[int], dict[int, np.ndarray]]:
    """``(seeds, steps, {divisor: losses (seeds, steps)})`` from :func:`workable_rows`' rows (one start
    and ``at``), divisors in the rows' order. ValueError (naming ``rows``) if the rows mix starts, or a
    divisor lacks a seed or a step, or has one twice."""
    rows = list(rows)
    if not rows:
        raise ValueError("rows: empty, nothing to summarise")
    if len({(r["schedule"], r["k"], r["at"]) for r in rows}) != 1:
        raise ValueError("rows: more than one (schedule, k, at)")
    seeds = sorted({r["seed"] for r in rows})
    steps = sorted({r["step"] for r in rows})
    out, filled = {}, {}
    for r in rows:
        d, at = r["divisor"], (seeds.index(r["seed"]), steps.index(r["step"]))
        losses = out.setdefault(d, np.full((len(seeds), len(steps)), np.nan))
        mask = filled.setdefault(d, np.zeros(losses.shape, bool))
        if mask[at]:
            raise ValueError(f"rows: divisor {d}, seed {r['seed']}, step {r['step']} twice")
        losses[at], mask[at] = r["loss"], True
    for d, mask in filled.items():
        if not mask.all():
            raise ValueError(f"rows: divisor {d} lacks a seed or a step")
    return seeds, steps, out


def best_divisors(finals: dict) -> np.ndarray:
    """Per seed, the divisor ``d*`` of the best constant rate ``eta / d*`` among those tried:

        d*(seed) = argmin_d final_d(seed),

    ``finals`` = ``{divisor: final losses, one per seed}`` (the same seeds in the same order). A rate
    ``eta / d`` is workable from those weights, on this grid, when ``d >= d*``. ValueError (naming
    ``finals``) if it is empty, the arrays differ in length or hold a NaN."""
    if not finals:
        raise ValueError("finals: needs at least one {divisor: final losses}")
    divisors = list(finals)
    if len({np.size(v) for v in finals.values()}) != 1:
        raise ValueError("finals: every divisor needs one final loss per seed, the same seeds")
    table = np.stack([np.ravel(np.asarray(finals[d], float)) for d in divisors])
    if np.isnan(table).any():
        raise ValueError("finals: holds a NaN")
    return np.array(divisors)[np.argmin(table, axis=0)]


def committed_workable_curve() -> tuple[list[int], dict[int, np.ndarray]]:
    """``(seeds, {s: d* per seed})``: the best constant rate ``eta / d*`` (:func:`best_divisors`) from the
    stored weights of :data:`WORKABLE_START` after ``s`` steps, for ``s`` = 0 and the stored steps
    (:data:`WORKABLE_AT`, :data:`WORKABLE_CURVE_AT`). At ``s = 0`` the runs are the stored schedules at the
    constant rates ``eta / d`` from the initial weights (``warmup-schedules.csv`` and its more seeds'); at
    the others, :func:`workable_rows`' stored runs. ValueError if the stored runs' seeds differ."""
    from lnworked.stress.committed import (committed_warmup_schedules, committed_warmup_schedules_more_seeds,
                                           committed_warmup_workable)
    from lnworked.stress.deepnorm import final_loss
    from lnworked.stress.warmup_schedules import join_seeds, summarise

    seeds, losses = join_seeds(summarise(committed_warmup_schedules()[0]),
                               summarise(committed_warmup_schedules_more_seeds()[0]))
    runs = {d: ("constant", 0) if d == 1 else ("reduced", d) for d in DIVISORS}
    best = {0: best_divisors({d: final_loss(losses[run]) for d, run in runs.items()})}
    for at in sorted({WORKABLE_AT, *WORKABLE_CURVE_AT}):
        rows = committed_warmup_workable(at=at)[0]
        seeds_at, _, losses_at = workable_losses(rows)
        if seeds_at != seeds or (rows[0]["schedule"], rows[0]["k"]) != WORKABLE_START:
            raise ValueError(f"the stored runs from step {at} have seeds {seeds_at}, the schedules {seeds}")
        best[at] = best_divisors({d: final_loss(v) for d, v in losses_at.items()})
    return seeds, best


FIELDS = ("schedule", "k", "at", "divisor", "seed", "step", "loss")


def write_workable_csv(rows, path) -> None:
    """:func:`workable_rows`' rows as CSV (``loss`` to 9 significant digits)."""
    write_rows(rows, path, FIELDS, floats=("loss",))


def read_workable_csv(path) -> list[dict]:
    """The rows :func:`write_workable_csv` wrote, types restored."""
    return read_rows(path, FIELDS, ints=("k", "at", "divisor", "seed", "step"), floats=("loss",))
