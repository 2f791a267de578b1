"""Chapter 6's explorer: two of Post-LN's stored runs under rate schedules, side by side.

:func:`schedule_explorer` (kernel-free in the book, ipywidgets in Jupyter/Colab)
    Three selects, ``schedule`` and ``other`` (:data:`SCHEDULE_OPTIONS`: the constant rate, the
    first steps held small, the article's warmup with the full rate from step 30, 60 or 90, the whole
    warmup, a linear warmup reaching ``eta`` at step 60, constant rates 2, 4 and 8 times smaller, and the first 20 or 60 steps at such a rate, then
    ``eta``), two runs to set beside each other, and ``seed``, whose runs are the committed
    ``lnworked stress warmup-schedules`` and ``lnworked stress warmup-holds``
    (:func:`~lnworked.stress.committed.committed_warmup_schedules`,
    :func:`~lnworked.stress.committed.committed_warmup_holds`). It draws, for both runs, panels one
    above the other over the training steps (:data:`PANELS`, the caller picks which):

    * ``rate``: each step's rate over the full rate, ``eta_s / eta``
      (:func:`~lnworked.stress.warmup_schedules.schedule_rates`);
    * ``product``: ``eta lam / threshold``, what a full-rate step from the run's weights and Adam's
      divisors at that step would face: the full rate ``eta`` times Adam's preconditioned sharpness
      ``lam`` there, in units of
      :func:`~lnworked.stress.sharpness.adam_threshold`, at the steps where it was measured (the
      committed ``lnworked stress warmup-sharpness``, ``warmup-arrival`` and
      ``warmup-holds-arrival`` and ``warmup-workable-sharpness``; where two measured a step, the first), log scale, a dotted line at 1,
      up to :data:`PRODUCT_TOP`: a reading above it is drawn hollow on the top edge;
    * ``loss``: the training loss per step, log scale, dotted lines at a uniform guess's, ``ln V``, and
      at :data:`~lnworked.stress.sweep.STABLE_LOSS`, below which a run has learned the task.

    Its table reads out, per run (:func:`schedule_readouts`), for ``s`` =
    :func:`~lnworked.stress.warmup_schedules.full_rate_from` the steps before the full rate: the loss
    when the full rate arrives (after ``s`` updates), ``eta lam / threshold`` there (its rate is
    ``eta``), the final loss (:func:`~lnworked.stress.deepnorm.final_loss`, the mean of the last 10) and
    whether it is below :data:`~lnworked.stress.sweep.STABLE_LOSS`, the task learned. A schedule
    without the sharpness measured, or that never reaches ``eta``, says so. Every run's curves are in the page, computed
    ahead of time (``data-explorer="schedules"``).
"""

from __future__ import annotations

import html
import math
from functools import lru_cache

import numpy as np

from lnworked.explore import Explorer
from lnworked.stress.config import StressConfig, warmup_for
from lnworked.stress.explorer import rounded_curve
from lnworked.stress.warmup_schedules import HOLD_DIVISORS, HOLDS, schedule_name

__all__ = ["schedule_explorer", "schedule_explorer_spec", "schedule_readouts", "schedule_value",
           "SCHEDULE_OPTIONS", "SCHEDULE_READOUT_KEYS", "PANELS", "PRODUCT_TOP", "RUNS"]

#: Readout keys of one run in :func:`schedule_explorer`, in table order.
SCHEDULE_READOUT_KEYS = ("loss-at-full", "product-at-full", "final-loss", "learns")
#: The panels the explorer can draw, top to bottom: (key, y label, log scale?, share of the canvas's height).
PANELS = (("rate", "rate / η", False, 0.24), ("product", "ηΛ / threshold", True, 0.40),
          ("loss", "loss (nats)", True, 0.36))
#: Per panel, how its axis ticks in the page: the rate at 0, 0.5 and 1, the product at every power of ten.
EXTRA_TICKS = {"rate": {"tick_count": 2}, "product": {"log_every": 1}}
#: The product panel's top, in units of the threshold. Every stored reading but one lies below it; that
#: one, 11025 (Post-LN held small for 120 steps, seed 9, step 152), does not repeat when the run is
#: trained again (``lnworked stress warmup-reread``), and on an axis up to it the rest were squashed
#: (read 132). Readings above the top are drawn hollow on it.
PRODUCT_TOP = 1e3
#: The dotted lines' ids in the kernel's figure, per panel that has them, in the order of its refs.
REF_GIDS = {"product": ("threshold",), "loss": ("uniform", "learned")}
#: The two runs' series: (key, legend label, line dash in the page, matplotlib line style).
RUNS = (("a", "run", None, "-"), ("b", "beside it", "6 4", "--"))


def schedule_value(schedule: tuple[str, int]) -> str:
    """A schedule ``(kind, k)`` as the select's value: ``"cut 30"``."""
    kind, k = schedule
    return f"{kind} {k}"


#: The schedules the explorer offers, in the select's order: the section's five, the run held for 20
#: steps, the warmup cut at step 90, the linear warmup reaching eta at step 60, the lower constant rates,
#: and the first steps at one of them.
SCHEDULE_OPTIONS = (("constant", 0), ("held", 20), ("held", 120), ("cut", 30), ("cut", 60), ("cut", 90),
                    ("linear", 120), ("linear", 60), ("reduced", 2), ("reduced", 4), ("reduced", 8), *HOLDS)


def _sharpness_table(*tables) -> dict:
    """``{(kind, k, seed): {step: eta lam}}`` over the Post-LN rows of the sharpness measurements
    ``tables``: what a full-rate step from the run's weights and divisors at that step would face (the
    rows' ``sharpness``); a step measured in more than one keeps the first table's value."""
    out = {}
    for rows in reversed(tables):
        for r in rows:
            if r["placement"] == "Post-LN":
                out.setdefault((r["kind"], r["k"], r["seed"]), {})[r["step"]] = r["sharpness"]
    return out


def schedule_readouts(losses: dict, sharpness: dict, schedule: tuple[str, int], seed: int, seeds,
                      threshold: float, stable: float, last: int = 10) -> dict:
    """Readout key -> text for one run: ``losses`` maps ``(kind, k)`` to losses ``(seeds, steps)``
    (:func:`~lnworked.stress.warmup_schedules.summarise`), ``sharpness`` maps ``(kind, k, seed)`` to
    ``{step: eta lam}``. ``loss-at-full`` = the loss after ``s`` updates, ``s`` =
    :func:`~lnworked.stress.warmup_schedules.full_rate_from`; ``product-at-full`` = ``eta lam /
    threshold`` at step ``s``, where the rate is ``eta``; ``final-loss`` = the mean of the last
    ``last`` losses; ``learns`` = whether that is below ``stable`` nats."""
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
        return out
    where = f"after {start} steps" if start else "at the initial weights"
    out["loss-at-full"] = f"{format_readout(run[start])} nats, {where}"
    out["product-at-full"] = (format_readout(measured[start] / threshold) if measured and start in measured
                              else "not measured at that step" if measured else "not measured for this schedule")
    return out


def unmeasured_text(offered, sharpness: dict, seeds, warm: int) -> str:
    """The schedules of ``offered`` whose product ``sharpness`` (keys ``(kind, k, seed)``) holds for no
    seed, in words: the lower constant rates as one group, the rest by their labels in quotation marks
    (the labels hold commas), joined by commas and a last "or" (read 139: semicolons read as garbled)."""
    missing = [s for s in offered if not any((*s, seed) in sharpness for seed in seeds)]
    if not missing:
        return "no run shown"
    words = (["the lower constant rates"] if any(kind == "reduced" for kind, _ in missing) else []) + \
        [f"“{schedule_name(s, warm)}”" for s in missing if s[0] != "reduced"]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]


def _product_curve(measured: dict | None, threshold: float, steps: int) -> list:
    """``eta lam / threshold`` at steps ``0..steps`` (4 significant digits), ``None`` where not measured."""
    from lnworked.stress.explorer import rounded_curve

    out = [None] * (steps + 1)
    for step, v in (measured or {}).items():
        out[step] = rounded_curve([v / threshold])[0]
    return out


def _panel_grid(panels: tuple, limits: dict, refs: dict) -> list[dict]:
    """The page's panels, top to bottom: ``panels`` (keys of :data:`PANELS`), each with its y range
    ``limits[key]``, its share of the canvas's height, and dotted lines at ``refs[key]`` (a tuple) where given;
    the short rate panel ticks at 0, 0.5 and 1, the product's log axis at every power of ten."""
    specs = {key: (label, log, height) for key, label, log, height in PANELS}
    total = sum(specs[p][2] for p in panels)
    out = []
    for i, p in enumerate(panels):
        label, log, height = specs[p]
        out.append({"key": p, "log": log, "y_min": limits[p][0], "y_max": limits[p][1],
                    "height": round(height / total, 4), "y_label": label,
                    "x_label": "training step" if i == len(panels) - 1 else "", **EXTRA_TICKS.get(p, {})})
        if p in refs:
            out[-1]["ref"] = [round(r, 4) for r in refs[p]]
        if p == "product":
            out[-1]["clip_top"] = True  # readings above y_max: hollow, on the top edge
    return out


def _draw_panels(ax, panels: tuple, curves: dict, limits: dict, refs: dict, colors, steps: int) -> None:
    """matplotlib, for the kernel: each panel of ``panels`` on its own axes, one above the other,
    sharing the step axis; ``curves[panel]`` the two runs' values (``None`` where not measured), the
    product's drawn from step 0 with a dot per reading, the others from step 1; ``limits`` and
    ``refs`` as :func:`_panel_grid`."""
    from lnworked.style import PALETTE, style_axes

    specs = {key: (label, log) for key, label, log, _ in PANELS}
    fig = ax.figure
    fig.set_size_inches(6.2, 2.2 * len(panels) + 0.6)
    inner = ax.get_subplotspec().subgridspec(len(panels), 1)
    ax.set_subplotspec(inner[0])
    axes = [ax] + [style_axes(fig.add_subplot(inner[i], sharex=ax)) for i in range(1, len(panels))]
    for a, panel in zip(axes, panels):
        label, log = specs[panel]
        for (tag, name, _, style), values, color in zip(RUNS, curves[panel], colors):
            ys = np.array([np.nan if v is None else v for v in values], dtype=float)
            xs = np.arange(len(ys)) if panel == "product" else np.arange(1, len(ys) + 1)
            keep = np.isfinite(ys)
            above = keep & (ys > limits[panel][1]) if panel == "product" else np.zeros_like(keep)
            ys = np.where(above, limits[panel][1], ys)  # on the top edge, hollow
            a.plot(xs[keep], ys[keep], style, color=color, marker="o" if panel == "product" else None,
                   markersize=4, label=name, gid=f"{panel}-{tag}")
            if above.any():
                a.plot(xs[above], ys[above], "o", color=color, markerfacecolor="white", markersize=7,
                       clip_on=False, gid=f"{panel}-{tag}-above")
        for ref, gid in zip(refs.get(panel, ()), REF_GIDS.get(panel, ())):
            a.axhline(ref, color=PALETTE["text"], linestyle=":", linewidth=1.2, gid=gid)
        lo, hi = limits[panel]
        a.set_ylim(lo, hi if log else 1.05 * hi)
        if log:
            a.set_yscale("log")
        a.set_ylabel(label)
    ax.set_xlim(0, steps)
    axes[-1].set_xlabel("training step")


@lru_cache(maxsize=8)
def schedule_explorer_spec(folder=None, panels: tuple = ("rate", "product", "loss"),
                           default: tuple = (("held", 20), ("cut", 60)), seed=None):
    """The :class:`~lnworked.explore.Explorer` over the committed schedule runs (or ``folder``'s), drawing
    ``panels`` (keys of :data:`PANELS`, top to bottom) for the two runs, ``default`` at first, on random
    seed ``seed`` at first (the first stored seed if ``None``)."""
    from lnworked.explore import Choice, Series
    from lnworked.stress.committed import (committed_warmup_arrival, committed_warmup_holds,
                                           committed_warmup_holds_arrival, committed_warmup_schedules,
                                           committed_warmup_sharpness, committed_warmup_workable_sharpness)
    from lnworked.stress.loss_explorer import log_range
    from lnworked.stress.sharpness import adam_threshold
    from lnworked.stress.sweep import STABLE_LOSS
    from lnworked.stress.warmup_schedules import schedule_rates, summarise
    from lnworked.style import PALETTE

    known = [key for key, *_ in PANELS]
    panels = tuple(panels)
    if not panels or any(p not in known for p in panels) or len(set(panels)) != len(panels):
        raise ValueError(f"panels: must be distinct keys of {tuple(known)}, got {panels!r}")
    config = StressConfig()
    seeds, losses = summarise(committed_warmup_schedules(folder)[0])
    hold_seeds, holds = summarise(committed_warmup_holds(folder)[0])
    if hold_seeds != seeds:
        raise ValueError(f"folder: the holds' seeds {hold_seeds} differ from the schedules' {seeds}")
    losses = {**losses, **holds}
    sharpness = _sharpness_table(committed_warmup_sharpness(folder)[0], committed_warmup_arrival(folder)[0],
                                 committed_warmup_holds_arrival(folder)[0],
                                 committed_warmup_workable_sharpness(folder)[0])
    threshold = adam_threshold(config.b1)
    first_seed = seeds[0] if seed is None else seed
    if first_seed not in seeds:
        raise ValueError(f"seed: must be one of the stored random seeds {tuple(seeds)}, got {seed!r}")
    offered = [s for s in SCHEDULE_OPTIONS if s in losses]
    if not offered:
        raise ValueError(f"folder: none of the schedules {SCHEDULE_OPTIONS} is stored")
    default = tuple(tuple(s) for s in default)
    if len(default) != 2 or any(s not in offered for s in default):
        raise ValueError(f"default: must be two of {tuple(offered)}, got {default!r}")
    by_value = {schedule_value(s): s for s in offered}
    steps = losses[offered[0]].shape[1]
    rates = {schedule_value(s): schedule_rates(s, config) / config.learning_rate for s in offered}
    products = {(schedule_value(s), seed): _product_curve(sharpness.get((*s, seed)), threshold, steps)
                for s in offered for seed in seeds}
    runs = {(schedule_value(s), seed): losses[s][i] for s in offered for i, seed in enumerate(seeds)}
    uniform = math.log(config.vocab_size)
    loss_lo, loss_hi = log_range(runs.values(), uniform)
    shown = [v for curve in products.values() for v in curve if v is not None]
    product_lo, product_hi = log_range([shown], 1.0)
    product_hi = min(product_hi, PRODUCT_TOP)
    warm = warmup_for(config.steps)
    labels = {key: label for key, label, *_ in PANELS}
    limits = {"rate": (0, 1), "product": (product_lo, product_hi), "loss": (loss_lo, loss_hi)}
    refs = {"product": (1,), "loss": (uniform, STABLE_LOSS)}

    # the product's row only where its panel is drawn (the previous section has not met the threshold yet)
    keys = [k for k in SCHEDULE_READOUT_KEYS if k != "product-at-full" or "product" in panels]

    def one(values, which):
        texts = schedule_readouts(losses, sharpness, by_value[values[which]], int(values["seed"]), seeds,
                                  threshold, STABLE_LOSS)
        return {k: texts[k] for k in keys}

    def readouts(values):
        return {f"{tag}-{k}": v for tag, which in (("a", "schedule"), ("b", "other"))
                for k, v in one(values, which).items()}

    def table(texts):
        from lnworked.explore import _readout

        rows = "".join(f"<tr><th>{html.escape(head)}</th>"
                       + "".join(f"<td>{_readout(f'{tag}-{key}', texts[f'{tag}-{key}'])}</td>" for tag in "ab")
                       + "</tr>" for head, key in zip(ROW_HEADS, SCHEDULE_READOUT_KEYS) if key in keys)
        return (f'<table class="lnw-table"><tr><th></th><th>{RUNS[0][1]} (solid)</th>'
                f"<th>{RUNS[1][1]} (dashed)</th></tr>{rows}</table>")

    def curve(panel, value, seed):
        if panel == "rate":
            return rates[value]
        if panel == "loss":
            return runs[(value, seed)]
        return products[(value, seed)]

    def draw(ax, values, spec):
        """Each panel on its own axes, one above the other, sharing the step axis."""
        picked = [(values[which], values["seed"]) for which in ("schedule", "other")]
        _draw_panels(ax, panels, {p: [curve(p, value, seed) for value, seed in picked] for p in panels},
                     limits, refs, [line.color for line in spec.series], steps)

    def grid():
        out = {}
        for value in by_value:
            for seed in seeds:
                texts = one({"schedule": value, "seed": seed}, "schedule")
                out[f"{value}|{seed}"] = {"loss": rounded_curve(runs[(value, seed)], steps),
                                          "readouts": [texts[k] for k in keys]}
                if "product" in panels:  # only what the page draws
                    out[f"{value}|{seed}"]["product"] = products[(value, seed)]
        panel_grid = _panel_grid(panels, limits, refs)
        return {"controls": ["schedule", "other", "seed"], "readouts": keys, "runs": out,
                "rates": {value: rounded_curve(r, steps) for value, r in rates.items()},
                "steps": list(range(0, steps + 1)), "x_ticks": list(range(0, steps + 1, 30)),
                "panels": panel_grid, "dash": {tag: dash for tag, _, dash, _ in RUNS if dash},
                "view_box": f"0 0 520 {150 * len(panels) + 40}", "phone_view_box": f"0 0 340 {200 * len(panels) + 60}"}

    options = tuple((schedule_value(s), schedule_name(s, warm)) for s in offered)
    names = {"rate": "each step's rate over η", "product": "the full rate η times Adam's preconditioned sharpness from the run's weights and "
             "divisors at that step, over the "
             f"threshold {threshold:.0f} (log scale, dotted: 1, the threshold; at the steps where it was measured, "
             f"on the first batch; a reading above {PRODUCT_TOP:g} drawn hollow on the top edge; not measured for "
             f"{unmeasured_text(offered, sharpness, seeds, warm)})",
             "loss": f"the training loss (log scale, dotted: a uniform guess over the {config.vocab_size} tokens, "
             f"ln {config.vocab_size} ≈ {uniform:.2f} nats, and {STABLE_LOSS:g} nats, below which a run has "
             "learned the task)"}
    where = ("top", "middle", "bottom") if len(panels) == 3 else ("top", "bottom") if len(panels) == 2 else ("",)
    return Explorer(
        kind="schedules",
        caption=(f"Two of Post-LN's runs under rate schedules, one seed ({steps} steps each, stored ahead of time): "
                 "the run solid, the one beside it dashed. "
                 + " ".join(f"{w.capitalize() + ': ' if w else ''}{names[p]}." for w, p in zip(where, panels))
                 + " The table reads each run where its full rate η arrives, and its final loss."),
        aria="Panels one above the other over the training steps, each with two lines, the chosen run solid and "
             "the one beside it dashed: " + "; ".join(labels[p] for p in panels),
        controls=(Choice("schedule", "run", options, schedule_value(default[0])),
                  Choice("other", "beside it", options, schedule_value(default[1])),
                  Choice("seed", "seed", tuple((s, str(s)) for s in seeds), first_seed)),
        series=(Series("a", RUNS[0][1], PALETTE["navy"]), Series("b", RUNS[1][1], PALETTE["orange"])),
        readouts=readouts, grid=grid, table=table, draw=draw)


#: The table's row headers, in :data:`SCHEDULE_READOUT_KEYS` order.
ROW_HEADS = ("loss when the full rate η arrives", "η × sharpness / threshold there",
             "final loss (mean of the last 10 steps)", "learns the task?")


def schedule_explorer(folder=None, panels: tuple = ("rate", "product", "loss"),
                      default: tuple = (("held", 20), ("cut", 60)), seed=None):
    """The stored schedule runs, two side by side: kernel-free HTML in the book build, ipywidgets in a kernel."""
    from lnworked.explore import show_explorer

    return show_explorer(schedule_explorer_spec(folder, tuple(panels), tuple(tuple(s) for s in default), seed))
