"""Which part of warmup Post-LN needs: runs that differ only in their rate schedule.

Every run is the stress test's Post-LN (the article's model, batches and AdamW, from
``PRNGKey(seed)``'s initial weights; Pre-LN where ``pre_norm`` is set) trained for ``config.steps``
steps; only the rate of each step differs. Two families of schedules, beside the constant rate ``eta`` (the failing run):

* **held**: the first ``k`` steps at warmup's first rate ``eta / s_warm``, then ``eta`` at once,
  :func:`held_rates`. If the first steps alone were why the constant-rate run fails, a few
  small first steps would be enough;
* **linear**: a linear warmup of ``k`` steps, ``eta_s = eta min(1, s / k)``
  (:func:`lnworked.stress.optim.learning_rates`), the article's with ``k = s_warm``;
* **reduced**: a constant rate ``k`` times smaller, ``eta_s = eta / k`` (``k >= 2``): does Post-LN
  learn from its initial weights at a lower rate?
* **raised**: a constant rate ``k`` times larger, ``eta_s = k eta`` (``k >= 2``), for Pre-LN, whose best
  constant rate lies above ``eta`` (:data:`PRE_RATES`);
* **cut**: the article's warmup cut short at step ``k``, ``eta_s = eta s / s_warm`` for ``s <= k``,
  then ``eta`` at once (``k <= s_warm``; ``k = s_warm`` is the article's warmup): from which step of
  the warmup on does the full rate work?
* **half**, **quarter**, **eighth**: the first ``k`` steps at a constant ``eta / 2``, ``eta / 4`` or
  ``eta / 8`` (:data:`HOLD_DIVISORS`), then ``eta`` at once: a rate that does not rise gradually
  but is large enough for Post-LN to learn at. If a gradual rise were what Post-LN needs, these
  would fail as the held runs do.

All runs are one compiled program (:func:`lnworked.stress.train.train_runs`).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from lnworked.stress.config import StressConfig, warmup_for
from lnworked.stress.data import make_batches
from lnworked.stress.first_update import check_seeds
from lnworked.stress.optim import learning_rates
from lnworked.stress.table_csv import read_rows, write_rows
from lnworked.stress.train import train_runs
from lnworked.validation import check_int

__all__ = ["SCHEDULES", "GRID", "HOLD_DIVISORS", "HOLDS", "PRE_RATES", "constant_ratio", "held_rates", "schedule_rates", "schedule_name", "full_rate_from", "schedule_losses", "learns", "schedule_rows",
           "write_schedule_csv", "read_schedule_csv", "summarise", "join_seeds"]

#: The schedules' kinds: ``("constant", 0)``, ``("held", k)``, ``("linear", k)``, ``("reduced", k)``,
#: ``("cut", k)``, ``("half", k)``, ``("quarter", k)``, ``("eighth", k)``.
SCHEDULES = ("constant", "held", "linear", "reduced", "raised", "cut", "half", "quarter", "eighth")
#: The rate divisor of each moderate hold: its first ``k`` steps at ``eta / divisor``.
HOLD_DIVISORS = {"half": 2, "quarter": 4, "eighth": 8}
#: The schedules the book stores: the constant rate, 1 to 120 held steps, linear warmups of 5 to 120
#: steps, constant rates 2, 4 and 8 times smaller, and the article's warmup cut at steps 30, 60 and 90.
GRID = (("constant", 0), ("held", 1), ("held", 5), ("held", 20), ("held", 60), ("held", 120),
        ("linear", 5), ("linear", 20), ("linear", 60), ("linear", 120),
        ("reduced", 2), ("reduced", 4), ("reduced", 8), ("cut", 30), ("cut", 60), ("cut", 90))
#: The moderate holds the book stores (``lnworked stress warmup-holds``): the first 20 or 60 steps at
#: ``eta / 2``, ``eta / 4`` or ``eta / 8``, then ``eta`` at once.
HOLDS = tuple((kind, k) for kind in HOLD_DIVISORS for k in (20, 60))
#: The constant rates Pre-LN is trained at (``lnworked stress warmup-pre-rates``): eta / 8 to 4 eta, by
#: factors of 2, the Post-LN grid's rates and two above the full rate.
PRE_RATES = (("reduced", 8), ("reduced", 4), ("reduced", 2), ("constant", 0), ("raised", 2), ("raised", 4))


def held_rates(rate: float, steps: int, held: int, first: float) -> np.ndarray:
    """The rate of each step ``s = 1..steps``: ``first`` for ``s <= held``, then ``rate`` (float64)."""
    steps = check_int(steps, "steps", minimum=1)
    held = check_int(held, "held", minimum=0, maximum=steps)
    out = np.full(steps, float(rate))
    out[:held] = float(first)
    return out


def schedule_rates(schedule: tuple[str, int], config: StressConfig) -> np.ndarray:
    """The rates of ``schedule`` = ``(kind, k)`` over ``config.steps`` steps (see the module):
    ``("constant", 0)``; ``("held", k)``, the first ``k`` steps at ``eta / s_warm`` with the
    article's ``s_warm`` (:func:`~lnworked.stress.config.warmup_for`); ``("linear", k)``;
    ``("reduced", k)``, ``eta / k`` at every step; ``("raised", k)``, ``k eta`` at every step; ``("cut", k)``, the article's linear warmup up
    to step ``k``, then ``eta``; ``("quarter", k)`` (``"half"``, ``"eighth"``), the first ``k`` steps
    at ``eta / 4`` (``/ 2``, ``/ 8``), then ``eta``."""
    kind, k = schedule
    if kind not in SCHEDULES:
        raise ValueError(f"schedule: kind must be one of {SCHEDULES}, got {kind!r}")
    warm = warmup_for(config.steps)
    minimum = {"constant": 0, "reduced": 2, "raised": 2}.get(kind, 1)
    k = check_int(k, "schedule", minimum=minimum, maximum=warm if kind == "cut" else config.steps)
    if kind == "constant" and k:
        raise ValueError(f"schedule: a constant rate has k = 0, got {k}")
    eta = config.learning_rate
    if kind == "held":
        return held_rates(eta, config.steps, k, eta / warm)
    if kind in HOLD_DIVISORS:
        return held_rates(eta, config.steps, k, eta / HOLD_DIVISORS[kind])
    if kind == "reduced":
        return np.full(config.steps, eta / k)
    if kind == "raised":
        return np.full(config.steps, eta * k)
    if kind == "cut":
        rates = learning_rates(eta, config.steps, warm)
        rates[k:] = eta
        return rates
    return learning_rates(eta, config.steps, k)


def schedule_name(schedule: tuple[str, int], warm: int) -> str:
    """The one short name of ``schedule`` = ``(kind, k)`` that chapter 6's tables, figures and explorer
    use (reads 209, 211: three runs that each reach the full rate at step 60 had three long, alike names),
    with ``warm`` the article's warmup length and "×k" read "for the first k steps, then eta":
    ``"constant η"``; ``"held small ×k"`` (``eta / warm``); ``"warmup cut at k"`` (the article's linear
    warmup up to step ``k``, then ``eta``); ``"whole warmup"`` (``("linear", warm)``); ``"steep warmup to
    k"`` (a linear warmup reaching ``eta`` at step ``k < warm``); ``"η/d ×k"`` (the moderate holds);
    ``"constant η/d"`` and ``"constant d η"`` (``reduced``, ``raised``)."""
    kind, k = schedule
    if kind not in SCHEDULES:
        raise ValueError(f"schedule: kind must be one of {SCHEDULES}, got {kind!r}")
    if kind == "constant":
        return "constant η"
    if kind == "held":
        return f"held small ×{k}"
    if kind == "cut":
        return f"warmup cut at {k}"
    if kind == "linear":
        return "whole warmup" if k == warm else (f"steep warmup to {k}" if k < warm else f"slow warmup to {k}")
    if kind in HOLD_DIVISORS:
        return f"η/{HOLD_DIVISORS[kind]} ×{k}"
    return f"constant η/{k}" if kind == "reduced" else f"constant {k}η"


def full_rate_from(schedule: tuple[str, int]) -> int | None:
    """How many steps ``schedule`` = ``(kind, k)`` takes before its rate is the full rate ``eta``:
    0 for the constant rate, ``k`` for ``held``, ``cut``, ``linear`` and the moderate holds; ``None`` for ``reduced``
    and ``raised``, which never take it. The run meets ``eta`` first at step ``full_rate_from + 1``, with the
    weights after ``full_rate_from`` updates."""
    kind, k = schedule
    if kind not in SCHEDULES:
        raise ValueError(f"schedule: kind must be one of {SCHEDULES}, got {kind!r}")
    return None if kind in ("reduced", "raised") else {"constant": 0}.get(kind, k)


def constant_ratio(schedule: tuple[str, int]) -> float:
    """The rate of a constant schedule over ``eta``: 1 for ``("constant", 0)``, ``1 / k`` for
    ``("reduced", k)``, ``k`` for ``("raised", k)``; a ``ValueError`` for a schedule whose rate changes."""
    kind, k = schedule
    if kind == "constant":
        return 1.0
    if kind == "reduced":
        return 1.0 / k
    if kind == "raised":
        return float(k)
    raise ValueError(f"schedule: {schedule!r} is not a constant rate (constant, reduced or raised)")


def schedule_losses(schedules: Sequence[tuple[str, int]], seeds: Sequence[int],
                    config: StressConfig | None = None, pre_norm: bool = False) -> dict[tuple[str, int], np.ndarray]:
    """``{schedule: losses (seeds, steps)}``: Post-LN's (Pre-LN's if ``pre_norm``) training loss at every
    step under each schedule of ``schedules`` (distinct ``(kind, k)`` pairs, :func:`schedule_rates`), for
    each seed's initial weights and the article's batches; a run that turns non-finite is NaN from then."""
    if not isinstance(pre_norm, bool):
        raise ValueError(f"pre_norm: must be True (Pre-LN) or False (Post-LN), got {pre_norm!r}")
    config = StressConfig() if config is None else config
    schedules = [tuple(s) for s in schedules]
    if not schedules or len(set(schedules)) != len(schedules):
        raise ValueError(f"schedules: must be distinct (kind, k) pairs, at least one, got {schedules!r}")
    rates = {s: schedule_rates(s, config) for s in schedules}
    seeds = check_seeds(seeds)
    runs = [(s, seed) for s in schedules for seed in seeds]
    sources, targets = make_batches(config)
    losses, _, _ = train_runs(config, [pre_norm] * len(runs), [seed for _, seed in runs], sources, targets,
                              np.stack([rates[s] for s, _ in runs]))
    out = np.full((len(runs), config.steps), np.nan)
    for i, loss in enumerate(losses):
        out[i, : len(loss)] = loss
    out = out.reshape(len(schedules), len(seeds), config.steps)
    return {s: out[i] for i, s in enumerate(schedules)}


def learns(final_losses, threshold: float) -> bool:
    """Whether every run's final loss is finite and below ``threshold`` (nats)."""
    final_losses = np.asarray(final_losses, float)
    return bool(final_losses.size and np.all(np.isfinite(final_losses)) and np.all(final_losses < threshold))


def schedule_rows(seeds: Sequence[int], schedules: Sequence[tuple[str, int]] = GRID,
                  config: StressConfig | None = None, pre_norm: bool = False) -> list[dict]:
    """Rows ``{kind, k, seed, step, loss}``, one per step (1-based) of every run of :func:`schedule_losses`."""
    seeds = check_seeds(seeds)
    rows = []
    for (kind, k), losses in schedule_losses(schedules, seeds, config, pre_norm).items():
        for seed, loss in zip(seeds, losses):
            rows += [{"kind": kind, "k": k, "seed": seed, "step": step, "loss": float(value)}
                     for step, value in enumerate(loss, start=1)]
    return rows


FIELDS = ("kind", "k", "seed", "step", "loss")


def write_schedule_csv(rows, path) -> None:
    """:func:`schedule_rows`' rows as CSV (:func:`~lnworked.stress.table_csv.write_rows`: ``loss`` to 9
    significant digits)."""
    write_rows(rows, path, FIELDS, floats=("loss",))


def read_schedule_csv(path) -> list[dict]:
    """The rows :func:`write_schedule_csv` wrote, types restored."""
    return read_rows(path, FIELDS, ints=("k", "seed", "step"), floats=("loss",))


def summarise(rows) -> tuple[list[int], dict[tuple[str, int], np.ndarray]]:
    """``(seeds, {(kind, k): losses (seeds, steps)})`` from :func:`schedule_rows`' rows, schedules in
    the rows' order. ValueError (naming ``rows``) if a schedule lacks a seed or a step."""
    seeds = sorted({r["seed"] for r in rows})
    steps = max((r["step"] for r in rows), default=0)
    if not seeds or not steps:
        raise ValueError("rows: empty, nothing to summarise")
    out = {}
    for r in rows:
        out.setdefault((r["kind"], r["k"]), np.full((len(seeds), steps), np.inf))[seeds.index(r["seed"]), r["step"] - 1] = r["loss"]
    for schedule, losses in out.items():
        if np.isinf(losses).any():
            raise ValueError(f"rows: schedule {schedule} lacks a seed or a step")
    return seeds, out


def join_seeds(*summaries) -> tuple[list[int], dict[tuple[str, int], np.ndarray]]:
    """One :func:`summarise` result from several over different seeds (e.g. a first set of seeds and
    further ones): ``(seeds, {(kind, k): losses (seeds, steps)})``, the seeds in the order given, each
    schedule's losses stacked along the seeds, only the schedules that every summary holds.
    ValueError (naming ``summaries``) if none is given, a seed repeats, or a schedule's steps differ."""
    if not summaries:
        raise ValueError("summaries: needs at least one (seeds, losses)")
    seeds = [seed for part_seeds, _ in summaries for seed in part_seeds]
    if len(set(seeds)) != len(seeds):
        raise ValueError(f"summaries: a seed appears twice in {seeds}")
    shared = [s for s in summaries[0][1] if all(s in losses for _, losses in summaries)]
    out = {}
    for schedule in shared:
        parts = [np.asarray(losses[schedule]) for _, losses in summaries]
        if len({p.shape[1] for p in parts}) != 1:
            raise ValueError(f"summaries: schedule {schedule} has different numbers of steps")
        out[schedule] = np.concatenate(parts, axis=0)
    return seeds, out
