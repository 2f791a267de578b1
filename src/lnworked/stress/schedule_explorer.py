"""The warmup-over-training section's explorer: Post-LN's stored runs under other rate schedules.

:func:`schedule_explorer` (kernel-free in the book, ipywidgets in Jupyter/Colab)
    Two selects, ``schedule`` (:data:`SCHEDULE_OPTIONS`: the constant rate, the first steps held
    small, the article's warmup with the full rate from step 30, 60 or 90, the whole warmup,
    constant rates 2, 4 and 8 times smaller, and the first 20 or 60 steps at such a rate, then
    ``eta``) and ``seed``, whose runs are the committed ``lnworked stress warmup-schedules`` and
    ``lnworked stress warmup-holds`` (:func:`~lnworked.stress.committed.committed_warmup_schedules`,
    :func:`~lnworked.stress.committed.committed_warmup_holds`).
    It draws the run's training loss per step (log scale) with a uniform guess's, ``ln V``, and reads
    out (:func:`schedule_readouts`), for ``s`` = :func:`~lnworked.stress.warmup_schedules.full_rate_from`
    the steps before the full rate ``eta``:

    * the loss when the full rate arrives, the run's loss after ``s`` updates;
    * ``eta lam / threshold`` there, the full rate times Adam's preconditioned sharpness ``lam`` in
      units of :func:`~lnworked.stress.sharpness.adam_threshold` (the committed
      ``lnworked stress warmup-sharpness``, ``warmup-arrival`` and ``warmup-holds-arrival``; where
      two measured a step, the first), and the same at every step measured before the full rate
      arrives and from its arrival on;
    * the final loss (:func:`~lnworked.stress.deepnorm.final_loss`, the mean of the last 10) and
      whether it is below :data:`~lnworked.stress.sweep.STABLE_LOSS`, the task learned.

    A schedule without the sharpness measured, or that never reaches ``eta``, says so. Built by
    :func:`lnworked.stress.loss_explorer.stored_loss_explorer` (``data-explorer="schedules"``; every
    run's curve is in the page, computed ahead of time).
"""

from __future__ import annotations

import math
from functools import lru_cache

from lnworked.stress.config import StressConfig, warmup_for
from lnworked.stress.warmup_schedules import HOLD_DIVISORS, HOLDS

__all__ = ["schedule_explorer", "schedule_explorer_spec", "schedule_readouts", "schedule_value",
           "SCHEDULE_OPTIONS", "SCHEDULE_READOUT_KEYS"]

#: Readout keys of :func:`schedule_explorer`, in table order.
SCHEDULE_READOUT_KEYS = ("loss-at-full", "product-at-full", "product-before", "product-after", "final-loss",
                         "learns")


def schedule_value(schedule: tuple[str, int]) -> str:
    """A schedule ``(kind, k)`` as the select's value: ``"cut 30"``."""
    kind, k = schedule
    return f"{kind} {k}"


def _label(schedule: tuple[str, int], warm: int) -> str:
    kind, k = schedule
    if kind == "constant":
        return "constant rate η, no warmup"
    if kind == "held":
        return f"first {k} steps held small, then η"
    if kind == "cut":
        return f"warmup, full rate η from step {k}"
    if kind == "linear":
        return f"the whole warmup, η from step {k}" if k == warm else f"a {k}-step warmup"
    if kind in HOLD_DIVISORS:
        return f"first {k} steps at η/{HOLD_DIVISORS[kind]}, then η"
    return f"constant rate η/{k}, no warmup"


#: The schedules the explorer offers, in the select's order: the section's five, the run held for 20
#: steps, the warmup cut at step 90, the lower constant rates, and the first steps at one of them.
SCHEDULE_OPTIONS = (("constant", 0), ("held", 20), ("held", 120), ("cut", 30), ("cut", 60), ("cut", 90),
                    ("linear", 120), ("reduced", 2), ("reduced", 4), ("reduced", 8), *HOLDS)


def _sharpness_table(*tables) -> dict:
    """``{(kind, k, seed): {step: eta lam}}`` over the Post-LN rows of the sharpness measurements
    ``tables``; a step measured in more than one keeps the first table's value."""
    out = {}
    for rows in reversed(tables):
        for r in rows:
            if r["placement"] == "Post-LN":
                out.setdefault((r["kind"], r["k"], r["seed"]), {})[r["step"]] = r["sharpness"]
    return out


def _steps_text(measured: dict, threshold: float) -> str:
    """``"step 0: 8.31; step 10: 0.68"``: the products over ``threshold``, step by step."""
    from lnworked.explore import format_readout

    return "; ".join(f"step {step}: {format_readout(v / threshold)}" for step, v in sorted(measured.items()))


def schedule_readouts(losses: dict, sharpness: dict, schedule: tuple[str, int], seed: int, seeds,
                      threshold: float, stable: float, last: int = 10) -> dict:
    """Readout key -> text for one run: ``losses`` maps ``(kind, k)`` to losses ``(seeds, steps)``
    (:func:`~lnworked.stress.warmup_schedules.summarise`), ``sharpness`` maps ``(kind, k, seed)`` to
    ``{step: eta lam}``. ``loss-at-full`` = the loss after ``s`` updates, ``s`` =
    :func:`~lnworked.stress.warmup_schedules.full_rate_from`; ``product-at-full`` = ``eta lam /
    threshold`` at step ``s``; ``product-before`` and ``product-after`` = the same at every step
    measured before ``s`` and from ``s`` on (``"step 10: 0.68; ..."``); ``final-loss`` = the mean of
    the last ``last`` losses; ``learns`` = whether that is below ``stable`` nats."""
    from lnworked.explore import format_readout
    from lnworked.stress.deepnorm import final_loss
    from lnworked.stress.warmup_schedules import full_rate_from

    schedule = tuple(schedule)
    if schedule not in losses:
        raise ValueError(f"schedule: must be one of {tuple(losses)}, got {schedule!r}")
    seeds = list(seeds)
    if seed not in seeds:
        raise ValueError(f"seed: must be one of {tuple(seeds)}, got {seed!r}")
    run = losses[schedule][seeds.index(seed)]
    start = full_rate_from(schedule)
    measured = sharpness.get((*schedule, seed))
    final = float(final_loss(run, last)[0])
    out = {"final-loss": format_readout(final),
           "learns": f"yes (below {stable:g} nats)" if final < stable else f"no (not below {stable:g} nats)"}
    if start is None:
        never = f"never: every step at η/{schedule[1]}"
        out.update({"loss-at-full": never, "product-at-full": never})
    else:
        where = f"after {start} steps" if start else "at the initial weights"
        out["loss-at-full"] = f"{format_readout(run[start])} nats, {where}"
        out["product-at-full"] = (format_readout(measured[start] / threshold) if measured and start in measured
                                  else "not measured for this schedule")
    if not measured:
        out["product-before"] = out["product-after"] = "not measured for this schedule"
        return out
    full = start if start is not None else math.inf
    before = {step: v for step, v in measured.items() if step < full}
    after = {step: v for step, v in measured.items() if step >= full}
    out["product-before"] = (_steps_text(before, threshold) if before else
                             "none: the full rate from the first step" if start == 0 else "not measured")
    out["product-after"] = _steps_text(after, threshold) if after else "not measured"
    return out


@lru_cache(maxsize=4)
def schedule_explorer_spec(folder=None):
    """The :class:`~lnworked.explore.Explorer` over the committed schedule runs (or ``folder``'s)."""
    from lnworked.explore import Choice, Series
    from lnworked.stress.committed import (committed_warmup_arrival, committed_warmup_holds,
                                           committed_warmup_holds_arrival, committed_warmup_schedules,
                                           committed_warmup_sharpness)
    from lnworked.stress.loss_explorer import stored_loss_explorer
    from lnworked.stress.sharpness import adam_threshold
    from lnworked.stress.sweep import STABLE_LOSS
    from lnworked.stress.warmup_schedules import summarise
    from lnworked.style import PALETTE

    config = StressConfig()
    seeds, losses = summarise(committed_warmup_schedules(folder)[0])
    hold_seeds, holds = summarise(committed_warmup_holds(folder)[0])
    if hold_seeds != seeds:
        raise ValueError(f"folder: the holds' seeds {hold_seeds} differ from the schedules' {seeds}")
    losses = {**losses, **holds}
    sharpness = _sharpness_table(committed_warmup_sharpness(folder)[0], committed_warmup_arrival(folder)[0],
                                 committed_warmup_holds_arrival(folder)[0])
    threshold = adam_threshold(config.b1)
    offered = [s for s in SCHEDULE_OPTIONS if s in losses]
    if not offered:
        raise ValueError(f"folder: none of the schedules {SCHEDULE_OPTIONS} is stored")
    by_value = {schedule_value(s): s for s in offered}
    runs = {(schedule_value(s), seed): losses[s][i] for s in offered for i, seed in enumerate(seeds)}
    warm = warmup_for(config.steps)
    vocab = config.vocab_size

    def readouts(values):
        return schedule_readouts(losses, sharpness, by_value[values["schedule"]], int(values["seed"]), seeds,
                                 threshold, STABLE_LOSS)

    steps = losses[offered[0]].shape[1]
    return stored_loss_explorer(
        "schedules", runs,
        controls=(Choice("schedule", "rate schedule", tuple((schedule_value(s), _label(s, warm)) for s in offered),
                         schedule_value(offered[0])),
                  Choice("seed", "seed", tuple((s, str(s)) for s in seeds), seeds[0])),
        readouts=readouts,
        rows=tuple(zip(("loss when the full rate η arrives",
                        "η × preconditioned sharpness / threshold there",
                        "the same, at the steps measured before η arrives",
                        "the same, from η's arrival on",
                        f"final loss (mean of the last 10 of {steps} steps)",
                        "learns the task?"), SCHEDULE_READOUT_KEYS)),
        caption=(f"Post-LN's training loss under one rate schedule and seed ({steps} steps, stored ahead of time; "
                 "log scale). The dotted line is a uniform guess over the "
                 f"{vocab} tokens, ln {vocab} ≈ {math.log(vocab):.2f} nats. The table reads the run where the full "
                 f"rate η arrives: its loss, and η times Adam's preconditioned sharpness in units of the threshold "
                 f"{threshold:.0f} (1 = the threshold; measured on the first batch, not for the lower "
                 "constant rates), then at every step measured before and after, and the run's final loss."),
        aria="A log-scale line over the training steps: the chosen run's loss, and a dotted line at the "
             "uniform-guess loss",
        series=Series("loss", "training loss", PALETTE["post"]),
        vocab_size=vocab, name="folder")


def schedule_explorer(folder=None):
    """The stored schedule runs: kernel-free HTML in the book build, ipywidgets in a kernel."""
    from lnworked.explore import show_explorer

    return show_explorer(schedule_explorer_spec(folder))
