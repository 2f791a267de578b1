"""Figures of what warmup does over training (6.5, :doc:`05_warmup_over_training`, and 6.6,
:doc:`05_warmup_leaves`): the schedules, the holds, the workable curve and every run seed by seed;
and the house style of chapter 6's figures, which :mod:`lnworked.stress.first_step_figures` (6.1-6.4,
chapter 7) and :mod:`lnworked.stress.threshold_figures` (6.7, 6.8) share.

House style of :mod:`lnworked.style`, :data:`WIDTH` inches wide: stacked panels, never side by
side; Pre-LN violet solid with circles, Post-LN magenta dashed with squares; the mean over seeds
with the seeds' range as a band or as thin lines. Curves that differ in more than the placement
differ in colour and marker too, not only in line style. Text is at :data:`FONT_390`, larger
than the house sizes (:data:`lnworked.style.FONT`, 12-14 pt): a :data:`WIDTH`-inch figure (about
490 px at the book's 110 dpi) is shown at about 0.7 of its size in a phone's 350 px column, so
15 pt (23 px) still reads at about 16 px. Legends sit below the axes, never over the curves.
"""

from __future__ import annotations

import numpy as np
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

from lnworked.stress.deepnorm import final_loss
from lnworked.style import PALETTE, new_figure

__all__ = ["WIDTH", "FONT_390", "loss_band", "uniform_guess", "mean_over_seeds", "warmup_schedule_figure",
           "rate_rise_figure", "RATE_RISE_PANELS", "schedules_figure", "SCHEDULE_LOOKS", "HOLD_LOOKS",
           "outcome_map_figure", "schedules_over_workable_figure", "rate_name", "placement_rates_figure",
           "STEP_LOOKS", "CUT_LOOKS", "WHOLE_LOOK", "REDUCED_LOOKS", "constant_rates_figure", "workable_curve_figure",
           "schedule_sketches_figure"]

#: Width of every figure here, inches (narrower than :data:`lnworked.stress.figures.WIDTH`, so a phone
#: shrinks it less).
WIDTH = 4.4
#: Font sizes (points) of chapter 6's figures, chosen for a 390 px phone (see the module).
FONT_390 = {"title": 16, "label": 16, "tick": 15, "legend": 15}
#: Behind a label on a line: the curves that cross it pass beneath, so it stays readable.
LABEL_BOX = {"boxstyle": "round,pad=0.15", "facecolor": "white", "edgecolor": "none", "alpha": 0.85}

#: How :func:`loss_band` summarises the seeds at each step.
CENTERS = {"mean": np.nanmean, "median": np.nanmedian}
_LOOK = {True: ("Pre-LN", PALETTE["pre"], "-", "o"), False: ("Post-LN", PALETTE["post"], "--", "s")}


def _style(ax, title: str, xlabel: str, ylabel: str):
    ax.set_title(title, fontsize=FONT_390["title"])
    ax.set_xlabel(xlabel, fontsize=FONT_390["label"])
    ax.set_ylabel(ylabel, fontsize=FONT_390["label"])
    ax.tick_params(which="both", labelsize=FONT_390["tick"])


def loss_band(ax, loss, style: str, color, label: str, linewidth: float, alpha: float = 1.0, gid=None,
              center: str = "mean"):
    """Training losses ``loss`` (seeds, steps) on ``ax``: their ``center`` over seeds (``"mean"`` or
    ``"median"``) as a line, their range as a band (NaN steps skipped); returns the line, for a legend."""
    if center not in CENTERS:
        raise ValueError(f"center: must be one of {tuple(CENTERS)}, got {center!r}")
    steps = np.arange(1, loss.shape[1] + 1)
    (line,) = ax.plot(steps, CENTERS[center](loss, axis=0), style, color=color, alpha=alpha, linewidth=linewidth,
                      label=label, gid=gid)
    ax.fill_between(steps, np.nanmin(loss, axis=0), np.nanmax(loss, axis=0), color=color, alpha=0.15 * alpha)
    return line


def uniform_guess(ax, vocab_size: int):
    """The loss of a uniform guess, ``ln vocab_size``, dashed across ``ax``, labelled at its right end."""
    import math

    ax.axhline(math.log(vocab_size), color=PALETTE["text"], linestyle=(0, (4, 3)), linewidth=1.2)
    ax.annotate(f"ln {vocab_size}: uniform guess", (1, math.log(vocab_size)), xycoords=("axes fraction", "data"),
                xytext=(-4, 4), textcoords="offset points", ha="right", va="bottom",
                fontsize=FONT_390["legend"], color=PALETTE["text"], bbox=LABEL_BOX, zorder=5)


def mean_over_seeds(rows, key: str, pre_norm: bool, **match):
    """``(depths, mean, min, max)`` of ``key`` over the seeds' rows with ``pre_norm`` and ``match``."""
    mine = [r for r in rows if r["pre_norm"] == pre_norm and all(r[k] == v for k, v in match.items())]
    depths = sorted({r["layers"] for r in mine})
    values = [[r[key] for r in mine if r["layers"] == d] for d in depths]
    return (np.array(depths), np.array([np.mean(v) for v in values]), np.array([np.min(v) for v in values]),
            np.array([np.max(v) for v in values]))


class _ReadableLogLocator(LogLocator):
    """Ticks of a log axis at 1 and 3 of every decade; on an axis that spans less, more per decade
    (1, 2, 3, 5 under 1.8 decades; 1, 1.5, 2, 3, 5, 7 under 1.2), so at least three ticks show."""

    def tick_values(self, vmin, vmax):
        low, high = sorted((vmin, vmax))
        span = np.log10(high / low) if low > 0 else np.inf
        self.set_params(subs=(1.0, 1.5, 2.0, 3.0, 5.0, 7.0) if span < 1.2 else (1.0, 2.0, 3.0, 5.0) if span < 1.8
                        else (1.0, 3.0))
        return super().tick_values(vmin, vmax)


def _log_ticks(axis):
    """Ticks of a log-scale ``axis`` at 1 and 3 of every decade (more where it spans under 1.8 decades),
    written as numbers (0.3, 1, 3), so values near 1 can be read off."""
    axis.set_major_locator(_ReadableLogLocator(base=10, subs=(1.0, 3.0)))
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    axis.set_minor_formatter(NullFormatter())


def _legend_below(fig, ax, ncols: int = 1):
    """One legend for the figure, from ``ax``'s lines, below all the axes (clear of every curve)."""
    handles, labels = ax.get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=ncols, fontsize=FONT_390["legend"],
               frameon=False, columnspacing=0.8, handlelength=1.8)


#: Colour, line style and marker of each training variant: the warmed-up runs get colours of their own.
STEP_LOOKS = {"Pre-LN": (PALETTE["pre"], "-", "o"), "Post-LN": (PALETTE["post"], "--", "s"),
              "Pre-LN + warmup": (PALETTE["blue"], ":", "^"), "Post-LN + warmup": (PALETTE["orange"], "-.", "D")}


def warmup_schedule_figure(finals: dict, vocab_size: int, threshold: float):
    """Two stacked panels of Post-LN's final loss (log scale) against ``k``, one marker per seed and
    their geometric mean as a line: top, the first ``k`` steps held at warmup's first rate
    (``("held", k)``), bottom, a linear warmup of ``k`` steps (``("linear", k)``); both start from
    ``("constant", 0)`` at ``k = 0``. ``finals``: ``{(kind, k): final losses (seeds,)}``. The uniform
    guess ``ln vocab_size`` dashed, ``threshold`` (learned the task) dotted; ``k`` at even spacing."""
    if ("constant", 0) not in finals:
        raise ValueError("finals: needs the constant rate, ('constant', 0)")
    low = min(threshold, min(float(np.min(v)) for v in finals.values()))
    fig, axes = new_figure(WIDTH, 9.5, nrows=2)
    looks = {"held": (PALETTE["post"], "--", "s", "first k steps at warmup's first rate"),
             "linear": (PALETTE["orange"], "-.", "D", "linear warmup over k steps")}
    for ax, (kind, (color, style, marker, title)) in zip(axes, looks.items()):
        ks = [0] + sorted(k for (name, k) in finals if name == kind)
        values = [np.asarray(finals[("constant", 0) if k == 0 else (kind, k)], float) for k in ks]
        x = np.arange(len(ks))
        for i, v in enumerate(values):
            ax.plot(np.full(v.size, x[i]), v, marker, color=color, markersize=7, alpha=0.6, linestyle="none")
        ax.plot(x, [np.exp(np.log(v).mean()) for v in values], style, color=color, linewidth=2, gid=kind)
        ax.set_xticks(x, [str(k) for k in ks])
        ax.set_yscale("log")
        ax.set_ylim(low / 2, 3 * np.log(vocab_size))  # one range for both panels, room above the guess's label
        uniform_guess(ax, vocab_size)
        ax.axhline(threshold, color="0.5", linewidth=1, linestyle=":")
        ax.annotate(f"{threshold:g}: learned", (0, threshold), xycoords=("axes fraction", "data"),
                    xytext=(4, 4), textcoords="offset points", fontsize=FONT_390["legend"], color=PALETTE["text"])
        _style(ax, title, "k (steps)", "final loss (nats)")
    return fig


#: Looks of the constant rates of :func:`rate_rise_figure`, by how many times below ``eta`` (1 = the full rate):
#: the full rate as in :data:`SCHEDULE_LOOKS`, the lower rates as the holds at them in :data:`HOLD_LOOKS`.
REDUCED_LOOKS = {1: (PALETTE["post"], "--", "s"), 2: (PALETTE["text"], "-.", "D"),
                 4: (PALETTE["brown"], "--", "s"), 8: (PALETTE["teal"], ":", "^")}
#: Looks of the cut warmups of :func:`rate_rise_figure`, by the step the full rate starts after: 30 and 60 as in
#: :data:`SCHEDULE_LOOKS`, 90 in a colour no other run of the section uses; the whole warmup is :data:`WHOLE_LOOK`.
CUT_LOOKS = {30: (PALETTE["orange"], "-.", "D"), 60: (PALETTE["blue"], "-", "o"), 90: (PALETTE["gold"], ":", "X")}
WHOLE_LOOK = (PALETTE["navy"], "-", "v")


#: The panels :func:`rate_rise_figure` can draw, top to bottom in this order.
RATE_RISE_PANELS = ("constant", "cut")


def rate_rise_figure(losses: dict, warmup: int, vocab_size: int, threshold: float, panels=RATE_RISE_PANELS):
    """Stacked panels of Post-LN's training loss (log scale) against the step, the mean over seeds
    as a line with markers, the seeds' range as a band. ``panels``: which of :data:`RATE_RISE_PANELS`
    to draw, in that order whatever order they are given in: ``"constant"``, the constant rates
    ``("constant", 0)`` and ``("reduced", k)``; ``"cut"``, the article's warmup cut at ``("cut", k)``
    and whole (``("linear", warmup)``), a short tick on the top edge at each cut. ``losses``:
    ``{(kind, k): (seeds, steps)}`` (:func:`lnworked.stress.warmup_schedules.summarise`); only the
    runs of the panels drawn are needed."""
    wanted = set(panels)
    if not wanted or not wanted <= set(RATE_RISE_PANELS):
        raise ValueError(f"panels: needs one or more of {RATE_RISE_PANELS}, got {tuple(panels)!r}")
    panels = [name for name in RATE_RISE_PANELS if name in wanted]
    reduced = sorted(k for kind, k in losses if kind == "reduced")
    cuts = sorted(k for kind, k in losses if kind == "cut")
    if "constant" in panels and (("constant", 0) not in losses or not reduced):
        raise ValueError("losses: the constant rates' panel needs ('constant', 0) and at least one 'reduced'")
    if "cut" in panels and (("linear", warmup) not in losses or not cuts):
        raise ValueError("losses: the cut warmups' panel needs ('linear', warmup) and at least one 'cut'")
    runs = {"constant": [(k, ("constant", 0) if k == 1 else ("reduced", k)) for k in [1, *reduced]],
            "cut": [*((k, ("cut", k)) for k in cuts), (warmup, ("linear", warmup))]}
    fig, axes = new_figure(WIDTH, 5.75 * len(panels), nrows=len(panels))
    axes = np.atleast_1d(axes)
    every = losses[runs[panels[0]][0][1]].shape[1] // 6
    drawn = [losses[name] for panel in panels for _, name in runs[panel]]
    low = min(threshold, min(float(np.nanmin(v)) for v in drawn))  # the curves drawn, not every schedule given
    for ax, panel in zip(axes, panels):
        for k, name in runs[panel]:
            if panel == "constant":
                color, style, marker = REDUCED_LOOKS.get(k, (PALETTE["text"], "-", "x"))
                label, gid = "η (full)" if k == 1 else f"η/{k}", f"reduced-{k}"
            else:
                whole = name[0] == "linear"
                color, style, marker = WHOLE_LOOK if whole else CUT_LOOKS.get(k, (PALETTE["text"], ":", "x"))
                label, gid = f"k = {k}" + (" (whole)" if whole else ""), f"cut-{k}"
            line = loss_band(ax, losses[name], style, color, label, 2.0, gid=gid)
            line.set(marker=marker, markevery=every, markersize=7)
            if panel == "cut":
                ax.axvline(k, ymin=0.93, ymax=1.0, color=color, linewidth=3)
        ax.set_yscale("log")
        ax.set_ylim(low / 2, 3 * np.log(vocab_size))
        uniform_guess(ax, vocab_size)
        ax.axhline(threshold, color="0.5", linewidth=1, linestyle=":")
        _style(ax, {"constant": "a constant rate", "cut": "warmup, full rate from step k"}[panel], "step",
               "loss (nats)")
        ax.legend(fontsize=FONT_390["legend"], frameon=False, loc="upper center", bbox_to_anchor=(0.5, -0.22),
                  ncols=2, columnspacing=0.8, handlelength=1.8)
    return fig


#: Looks of :func:`schedules_figure`'s runs, in the order given (then cycled): colour, line style, marker.
SCHEDULE_LOOKS = ((PALETTE["post"], "--", "s"), (PALETTE["grey"], ":", "^"), (PALETTE["orange"], "-.", "D"),
                  (PALETTE["blue"], "-", "o"), (PALETTE["navy"], "-", "v"))
#: Looks for the moderate holds at eta/8, eta/4, eta/2, then the linear warmup reaching eta at the holds'
#: end (green: a run of its own, not the article's warmup cut there, which is blue in :data:`SCHEDULE_LOOKS`),
#: so that no colour means one run in one figure and another run in the next.
HOLD_LOOKS = ((PALETTE["teal"], ":", "^"), (PALETTE["brown"], "--", "s"), (PALETTE["text"], "-.", "D"),
              (PALETTE["green"], "-", "P"))


def schedules_figure(runs, vocab_size: int, threshold: float, center: str = "median", last: int = 10):
    """Post-LN's runs under several rate schedules, one panel per run, stacked on one step axis and one
    log loss axis, so that no run's seeds hide another's. In each panel: every random seed's training
    loss as a thin line, navy where the seed learns (its final loss, the mean of its last ``last``
    losses, ends below ``threshold``) and grey where it does not; their ``center`` over seeds
    (``"median"`` or ``"mean"``) as a thick line; a dotted vertical line at the step where the run's rate
    first reaches the full rate (a rate of 1); the uniform guess ``ln vocab_size`` dashed and
    ``threshold`` dotted, both named in the legend. Each panel's title: ``label: k of n learn``. ``runs``: a sequence of
    ``(label, rates (steps,) relative to eta, losses (seeds, steps))``; one legend below the panels."""
    runs = list(runs)
    if not runs:
        raise ValueError("runs: needs at least one (label, rates, losses)")
    if center not in CENTERS:
        raise ValueError(f"center: must be one of {tuple(CENTERS)}, got {center!r}")
    for label, rates, losses in runs:
        if np.ndim(rates) != 1 or np.ndim(losses) != 2 or np.shape(losses)[1] != len(rates):
            raise ValueError(f"runs: {label!r} needs rates (steps,) and losses (seeds, steps) over the same steps")
        if not 1 <= last <= len(rates):
            raise ValueError(f"last: must be from 1 to the {len(rates)} steps of {label!r}, got {last}")
    fig, axes = new_figure(WIDTH, 1.75 * len(runs) + 1.3, nrows=len(runs))
    axes = np.atleast_1d(axes)
    for ax in axes[1:]:
        ax.sharex(axes[0])
        ax.sharey(axes[0])
    low = min(threshold, min(float(np.nanmin(losses)) for _, _, losses in runs))
    for i, (ax, (label, rates, losses)) in enumerate(zip(axes, runs)):
        losses = np.asarray(losses, float)
        steps = np.arange(1, losses.shape[1] + 1)
        learned = final_loss(losses, last) < threshold
        for j, (seed_loss, ok) in enumerate(zip(losses, learned)):
            ax.plot(steps, seed_loss, color=PALETTE["navy"] if ok else PALETTE["grey"], linewidth=0.9,
                    alpha=0.8, gid=f"seed-{i}-{j}",
                    label="a random seed that learns" if ok else "a random seed that does not")
        ax.plot(steps, CENTERS[center](losses, axis=0), color=PALETTE["text"], linewidth=2.4,
                label=f"their {center}", gid=f"loss-{i}")
        full = np.flatnonzero(np.asarray(rates, float) >= 1 - 1e-9)
        if full.size and full[0] > 0:
            ax.axvline(full[0] + 1, color=PALETTE["magenta"], linestyle=":", linewidth=1.6,
                       label="the full rate η from here", gid=f"arrives-{i}")
        ax.axhline(np.log(vocab_size), color=PALETTE["text"], linestyle=(0, (4, 3)), linewidth=1.2,
                   label=f"ln {vocab_size}: a uniform guess")
        ax.axhline(threshold, color="0.5", linewidth=1, linestyle=":", label=f"{threshold:g} nats: learned")
        ax.set_yscale("log")
        ax.set_title(f"{label}: {int(learned.sum())} of {len(learned)} learn", fontsize=FONT_390["legend"], loc="left")
        ax.tick_params(which="both", labelsize=FONT_390["tick"])
        if ax is not axes[-1]:
            ax.tick_params(labelbottom=False)
    axes[0].set_ylim(low / 2, 3 * np.log(vocab_size))
    axes[0].set_xlim(0, len(runs[0][1]) + 1)
    axes[-1].set_xlabel("step", fontsize=FONT_390["label"])
    fig.supylabel("training loss (nats)", fontsize=FONT_390["label"])
    handles = {}
    for ax in axes:
        for handle, text in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(text, handle)
    order = ["a random seed that learns", "a random seed that does not", f"their {center}",
             "the full rate η from here", f"ln {vocab_size}: a uniform guess", f"{threshold:g} nats: learned"]
    shown = [text for text in order if text in handles]
    fig.legend([handles[text] for text in shown], shown, loc="outside lower center", ncols=1,
               fontsize=FONT_390["legend"], frameon=False, columnspacing=0.8, handlelength=1.8)
    return fig


def outcome_map_figure(groups, seeds, threshold: float, split_after=None):
    """Which runs learn, seed by seed, on one grid: a row per schedule, a column per random seed, a
    filled navy square where the run's final loss is below ``threshold`` (it learned the task) and an
    open grey one where it is not, and on the right of each row how many of its seeds learned.
    ``groups``: a sequence of ``(name, rows)``, ``rows`` a sequence of ``(label, finals (seeds,))``,
    drawn top to bottom with a line between groups (``name`` is for the caller's text, not drawn).
    ``seeds``: the random seeds, in the order of every ``finals``. ``split_after``: a seed after which
    a dashed line parts the columns (e.g. the page's first seeds from further ones), or ``None``."""
    groups = [(name, list(rows)) for name, rows in groups]
    seeds = list(seeds)
    if not groups or not all(rows for _, rows in groups):
        raise ValueError("groups: every group needs at least one (label, finals)")
    threshold = float(threshold)
    if not threshold > 0:
        raise ValueError(f"threshold: must be positive, got {threshold}")
    if split_after is not None and split_after not in seeds[:-1]:
        raise ValueError(f"split_after: must be one of the seeds before the last, got {split_after!r}")
    rows = [row for _, rows in groups for row in rows]
    for label, finals in rows:
        if np.shape(finals) != (len(seeds),):
            raise ValueError(f"groups: {label!r} needs one final loss per seed ({len(seeds)}), "
                             f"got shape {np.shape(finals)}")
    fig, ax = new_figure(WIDTH, 1.8 + 0.62 * len(rows))
    learned = np.array([np.asarray(finals, float) < threshold for _, finals in rows])
    y, x = np.indices(learned.shape)
    ax.scatter(x[learned], y[learned], marker="s", s=170, color=PALETTE["navy"], gid="learned",
               label=f"learned (final loss < {threshold:g} nats)")
    ax.scatter(x[~learned], y[~learned], marker="s", s=170, facecolor="white", edgecolor=PALETTE["grey"],
               linewidth=1.5, gid="not-learned", label="not learned")
    # each row's label above its squares, so the squares get the figure's whole width; its count at the right
    for i, ((label, _), row) in enumerate(zip(rows, learned)):
        ax.text(-0.45, i - 0.5, label, va="center", ha="left", fontsize=FONT_390["tick"], color=PALETTE["text"],
                gid="label", bbox=LABEL_BOX, zorder=5)
        ax.text(len(seeds) - 0.3, i, f"{int(row.sum())}/{len(seeds)}", va="center", ha="left",
                fontsize=FONT_390["tick"], color=PALETTE["text"], gid="count")
    edges = np.cumsum([len(rows) for _, rows in groups])[:-1]
    for edge in edges:
        ax.axhline(edge - 0.8, color=PALETTE["text"], linewidth=1)
    if split_after is not None:
        ax.axvline(seeds.index(split_after) + 0.5, color=PALETTE["grey"], linewidth=1, linestyle="--")
    ax.set_xticks(np.arange(len(seeds)), [str(s) for s in seeds])
    ax.xaxis.tick_top()
    ax.xaxis.set_label_position("top")
    ax.set_yticks([])
    ax.set_xlim(-0.6, len(seeds) + 1.2)
    ax.set_ylim(len(rows) - 0.5, -0.85)
    ax.grid(False)
    for side in ("left", "bottom"):
        ax.spines[side].set_visible(False)
    _style(ax, "", "random seed", "")
    ax.tick_params(axis="x", labelsize=FONT_390["tick"], length=0)
    _legend_below(fig, ax)
    return fig


def _losses_by_rate(by_ratio: dict, what: str, argument: str = "finals"):
    """``(ratios, table)`` of ``by_ratio`` = ``{ratio: final losses, one per seed}``: the ratios (rate over the
    full rate) in rising order and the losses as a (rates, seeds) array; ``ValueError`` naming ``finals``
    (or ``argument``; ``what`` says which entry) unless every rate has one positive loss per seed, the same seeds."""
    ratios = sorted(float(r) for r in by_ratio)
    table = [np.ravel(np.asarray(by_ratio[r], float)) for r in sorted(by_ratio, key=float)]
    if not ratios or any(r <= 0 for r in ratios) or len({v.size for v in table}) != 1 or table[0].size == 0 \
            or any(np.any(v <= 0) for v in table):
        raise ValueError(f"{argument}: {what} needs one positive final loss per seed at every rate, the same seeds")
    return np.array(ratios), np.stack(table)


def _ring_lowest(ax, ratios, table, color, gid: str, size: float, label=None):
    """A ring on each seed's (column's) lowest final loss: its best rate."""
    best = np.argmin(table, axis=0)
    ax.scatter(ratios[best], table[best, np.arange(table.shape[1])], s=size, facecolor="none", edgecolor=color,
               linewidth=2, zorder=3, gid=gid, label=label)


def constant_rates_figure(finals: dict, pre_ln: dict | None = None):
    """Where each constant rate ends, seed by seed: ``finals`` = ``{divisor d: final losses, one per
    seed}`` of Post-LN's runs at the constant rate ``eta / d`` from the same initial weights. One thin line
    per seed across the rates (log-2 axis, ticked ``eta / d``), its lowest point ringed: the best constant
    rate of that seed, up to which every rate is workable; the rates workable in every seed (up to the lowest
    seed's best rate) are shaded. Final loss on a log axis. ``pre_ln``, if given:
    ``{ratio: final losses, one per seed}`` of Pre-LN's runs at ``ratio`` times ``eta``, drawn the same way in
    a second panel below, on the same rate axis (ticked at every rate of either panel)."""
    if not finals:
        raise ValueError("finals: needs at least one {divisor: final losses}")
    panels = [("Post-LN", _losses_by_rate({1 / int(d): v for d, v in finals.items()}, "every divisor"))]
    if pre_ln is not None:
        if not pre_ln:
            raise ValueError("pre_ln: needs at least one {ratio: final losses}, or None")
        panels.append(("Pre-LN", _losses_by_rate(pre_ln, "Pre-LN", argument="pre_ln")))
    fig, axes = new_figure(WIDTH, 5.2 * len(panels), nrows=len(panels))
    axes = np.atleast_1d(axes)
    ticks = sorted({float(r) for _, (rates, _) in panels for r in rates})
    for ax, (placement, (rates, table)) in zip(axes, panels):
        for seed in range(table.shape[1]):
            ax.plot(rates, table[:, seed], "-", color=PALETTE["grey"], linewidth=1.2, marker="o", markersize=4,
                    gid=f"{placement} seed {seed}" if pre_ln is not None else f"seed {seed}")
        _ring_lowest(ax, rates, table, PALETTE["navy"], f"{placement} best" if pre_ln is not None else "best", 110,
                     label="each seed's best rate")
        ax.plot([], [], "-", color=PALETTE["grey"], marker="o", markersize=4, label="one random seed")
        ax.set_xscale("log", base=2)
        ax.set_xlim(ticks[0] / 1.4, ticks[-1] * 1.4)
        workable_to = float(np.min(np.asarray(rates)[np.argmin(table, axis=0)]))  # the lowest seed's best rate
        ax.axvspan(ticks[0] / 1.4, workable_to, color=PALETTE["blue"], alpha=0.10, linewidth=0, zorder=0,
                   gid=f"{placement} workable" if pre_ln is not None else "workable",
                   label="workable in every seed (up to the best rate)")
        ax.set_xticks(ticks, [rate_name(r) for r in ticks])
        ax.set_xticks([], minor=True)
        ax.set_yscale("log")
        _log_ticks(ax.yaxis)
        if max(rates) < ticks[-1]:  # the other panel tried larger rates: say this one did not
            ax.text(np.sqrt(max(rates) * ticks[-1] * 1.4), 0.5, "not tried", transform=ax.get_xaxis_transform(),
                    ha="center", va="center", color=PALETTE["text"], fontsize=FONT_390["tick"], gid=f"{placement} not tried")
        title = "Where each constant rate ends" if pre_ln is None else f"{placement}: where each rate ends"
        _style(ax, title, "constant rate", "final loss (nats)")
    _legend_below(fig, axes[0])  # one legend for both panels: they draw alike
    return fig


def placement_rates_figure(finals: dict, steps: int):
    """Each placement's final loss against its constant rate, from the initial weights: ``finals`` =
    ``{placement: {ratio: losses (one per seed)}}``, ``ratio`` the rate over the full rate, ``placement``
    "Pre-LN" or "Post-LN" (their looks). One line per seed, each seed's lowest ringed; log-log, the rate
    ticked as the book writes it (η/4, η, 4η). ``steps``: the runs' length, for the title."""
    if not finals or set(finals) - set(STEP_LOOKS):
        raise ValueError(f"finals: needs {{placement: {{ratio: losses}}}} for placements among {sorted(STEP_LOOKS)}")
    fig, ax = new_figure(WIDTH, 5.2)
    all_ratios = set()
    for placement, by_ratio in finals.items():
        if len(by_ratio) < 2:
            raise ValueError(f"finals: {placement} needs two or more rates")
        ratios, table = _losses_by_rate(by_ratio, placement)
        color, style, marker = STEP_LOOKS[placement]
        for seed in range(table.shape[1]):
            ax.plot(ratios, table[:, seed], linestyle=style, color=color, marker=marker, linewidth=2, markersize=6,
                    label=placement if seed == 0 else None, gid=f"{placement} seed {seed}")
        _ring_lowest(ax, ratios, table, color, f"{placement} best", 160)
        all_ratios |= set(ratios.tolist())
    ax.scatter([], [], s=120, facecolor="none", edgecolor=PALETTE["text"], linewidth=2, label="each seed's lowest")
    ax.set_xscale("log", base=2)
    ticks = sorted(all_ratios)
    ax.set_xticks(ticks, [rate_name(r) for r in ticks])
    ax.set_xticks([], minor=True)
    ax.set_yscale("log")
    _log_ticks(ax.yaxis)
    _style(ax, f"Constant rates, {steps} steps", "constant rate", "final loss (nats)")
    _legend_below(fig, ax, ncols=1)
    return fig


def rate_name(ratio: float) -> str:
    """A rate of ``ratio`` times the full rate, as the book writes it: η, 4η, η/4 (``:g`` format)."""
    ratio = float(ratio)
    if not ratio > 0:
        raise ValueError(f"ratio: must be positive, got {ratio}")
    if ratio == 1:
        return "η"
    return f"{ratio:g}η" if ratio > 1 else f"η/{1 / ratio:g}"


def _rate_label(power: int) -> str:
    """``2**power`` times the full rate, as the book writes it: η, 2η, η/4."""
    return rate_name(2.0 ** power)


def workable_curve_figure(best: dict, rates, label: str, tried=(1, 2, 4, 8), ceiling: dict | None = None,
                          title: str = "The best constant rate moves"):
    """The best constant rate against the step it starts from: for each step ``s`` of ``best`` =
    ``{s: divisors}`` (one divisor ``d*`` per seed, :func:`~lnworked.stress.workable.best_divisors` of the
    runs continued from a warmup's weights at step ``s``), a disc at ``(s, 1/d*)`` for every divisor
    some seed chose, sized by and labelled with how many seeds chose it; ``rates`` the warmup's own
    rate over the full rate at each step ``0, 1, ...`` drawn as a line named ``label``. Log-2 rate
    axis, ticked at the divisors chosen. A warmup whose line stays at or under the discs takes only
    workable rates. ``ceiling`` (optional) = ``{s: rates}``: each seed's rate at Adam's threshold from the
    warmup's weights and divisors at step ``s`` (the threshold over the preconditioned sharpness, over the
    full rate), drawn as small orange diamonds with a dashed line through their geometric means, just left of
    their step (by 2.5 % of the warmup's length) so the discs do not hide them. ``title``:
    the panel's title."""
    best = {int(s): np.asarray(d, int) for s, d in best.items()}
    if not best or any(d.ndim != 1 or d.size == 0 or np.any(d < 1) for d in best.values()):
        raise ValueError("best: needs {step: one divisor >= 1 per seed}, at least one step")
    rates = np.asarray(rates, float)
    if rates.ndim != 1 or rates.size < 2 or np.any(rates < 0):
        raise ValueError("rates: needs the warmup's rate over the full rate at steps 0, 1, ..., at least two")
    fig, ax = new_figure(WIDTH, 5.2)
    steps = np.arange(rates.size)
    shown = rates > 0
    ax.plot(steps[shown], rates[shown], "-", color=PALETTE["green"], linewidth=2.5, label=label, gid="warmup")
    tried = sorted({int(d) for d in tried})
    chosen = sorted({int(d) for ds in best.values() for d in ds})
    if not set(chosen) <= set(tried):
        raise ValueError(f"best: divisors {chosen} not all among tried {tried}")
    for s, ds in sorted(best.items()):
        for d in chosen:
            n = int(np.sum(ds == d))
            if n:
                ax.scatter([s], [1 / d], s=60 + 30 * n, color=PALETTE["navy"], edgecolor="white", zorder=3,
                           gid=f"best {s} {d}")
                ax.annotate(str(n), (s, 1 / d), xytext=(9, 4), textcoords="offset points", fontsize=15,
                            color=PALETTE["text"], bbox=LABEL_BOX)
    ax.scatter([], [], s=90, color=PALETTE["navy"], label="best rate tried (number: random seeds)")
    top = 1.6
    if ceiling is not None:
        ceiling = {int(s): np.asarray(r, float) for s, r in ceiling.items()}
        if not ceiling or any(r.ndim != 1 or r.size == 0 or np.any(r <= 0) for r in ceiling.values()):
            raise ValueError("ceiling: needs {step: one positive rate per seed}, at least one step")
        at = sorted(ceiling)
        shift = -0.025 * (rates.size - 1)  # just left of the step, clear of the discs and their counts
        for s in at:
            ax.plot([s + shift] * ceiling[s].size, ceiling[s], "D", color=PALETTE["orange"], markersize=6,
                    alpha=0.6, zorder=4, gid=f"ceiling {s}")
        means = [float(np.exp(np.log(ceiling[s]).mean())) for s in at]
        ax.plot(np.array(at) + shift, means, "--", color=PALETTE["orange"], linewidth=2.5, marker="D",
                markersize=8, zorder=4, label="rate at Adam's threshold")
        top = max(top, 1.6 * max(float(r.max()) for r in ceiling.values()))
    bottom = 0.5 / max(tried)
    if ceiling is not None:
        bottom = min(bottom, 0.6 * min(float(r.min()) for r in ceiling.values()))
    ax.set_yscale("log", base=2)
    if ceiling is None:
        powers = [-int(np.log2(d)) for d in tried if d & (d - 1) == 0]
    else:
        powers = range(int(np.floor(np.log2(top))), int(np.ceil(np.log2(bottom))) - 1, -1)
    ax.set_yticks([2.0 ** k for k in powers], [_rate_label(k) for k in powers])
    ax.set_yticks([], minor=True)
    ax.set_ylim(bottom, top)
    _style(ax, title, "step the rate starts from", "rate")
    _legend_below(fig, ax)
    return fig


def _schedule_style(learned: int, total: int) -> str:
    """Solid where most seeds learn, dashed where none does, dash-dot in between."""
    return "-" if 2 * learned > total else ("--" if learned == 0 else "-.")


def schedules_over_workable_figure(best: dict, panels, total: int, after: int = 6):
    """Each schedule's rate beside the best constant rate, in stacked panels that share both axes.

    ``best`` = ``{s: divisors}`` as in :func:`workable_curve_figure`: grey discs at ``(s, 1/d*)``, sized by
    how many seeds chose ``d*``. ``panels``: a sequence of ``(title, runs)``, ``runs`` a sequence of
    ``(label, rates, learned, colour)`` with ``rates`` the schedule's rate over the full rate of the step taken
    after ``s = 0, 1, ...`` steps, ``learned`` how many of ``total`` seeds learn the task under it and
    ``colour`` the run's colour in the section's other figures (e.g. of :data:`SCHEDULE_LOOKS`). Each
    line is drawn as steps up to ``after`` steps past its first full-rate step (all of it if it never gets
    there): solid where most seeds learn, dashed where none does, dash-dot in between; the legend below the
    panel gives ``learned``/``total``. Log-2 rate axis, shared; each panel's step axis runs to its own last
    step drawn (and at least past the last disc)."""
    panels = [(title, list(runs)) for title, runs in panels]
    if not panels or not all(runs for _, runs in panels):
        raise ValueError("panels: every panel needs at least one (label, rates, learned, colour)")
    total = int(total)
    if total < 1:
        raise ValueError(f"total: needs at least one seed, got {total}")
    best = {int(s): np.asarray(d, int) for s, d in best.items()}
    if not best or any(d.ndim != 1 or d.size == 0 or np.any(d < 1) for d in best.values()):
        raise ValueError("best: needs {step: one divisor >= 1 per seed}, at least one step")
    fig, axes = new_figure(WIDTH, 6.0 * len(panels), nrows=len(panels))
    axes = np.atleast_1d(axes)
    for ax in axes[1:]:
        ax.sharey(axes[0])
    lowest = 1.0
    for ax, (title, runs) in zip(axes, panels):
        last = max(best)  # each panel's own step axis, to its last step drawn (read 205: 20-step holds were a sliver)
        for s, ds in sorted(best.items()):
            for d in sorted(set(ds.tolist())):
                ax.scatter([s], [1 / d], s=40 + 25 * int(np.sum(ds == d)), color=PALETTE["grey"], alpha=0.55,
                           edgecolor="white", zorder=2, gid=f"best {s} {d}")
        ax.scatter([], [], s=90, color=PALETTE["grey"], alpha=0.55, label="best constant rate")
        for label, rates, learned, colour in runs:
            rates = np.asarray(rates, float)
            if rates.ndim != 1 or rates.size < 2 or np.any(rates <= 0) or not 0 <= learned <= total:
                raise ValueError(f"panels: {label!r} needs positive rates at steps 0, 1, ... and learned in "
                                 f"0..{total}")
            full = np.flatnonzero(rates >= 1)
            shown = rates[: full[0] + after + 1] if full.size else rates
            ax.plot(np.arange(shown.size), shown, _schedule_style(learned, total), drawstyle="steps-post",
                    color=colour, linewidth=2.5, label=f"{label}: {learned}/{total}", zorder=3,
                    gid=f"schedule {label}")
            lowest, last = min(lowest, float(shown.min())), max(last, shown.size - 1)
        ax.set_xlim(-2, last + 2)
        ax.set_yscale("log", base=2)
        _style(ax, title, "steps taken", "rate")
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.22), ncols=1, fontsize=FONT_390["legend"],
                  frameon=False, handlelength=2.2)
    bottom = int(np.floor(np.log2(lowest)))  # every rate the text names (down to eta/8) ticked, then every other power
    powers = [*range(0, max(bottom, -3) - 1, -1), *range(-5, bottom - 1, -2)]
    axes[0].set_yticks([2.0 ** k for k in powers], [_rate_label(k) for k in powers])
    axes[0].set_yticks([], minor=True)
    axes[0].set_ylim(lowest / 1.6, 1.6)
    return fig


def schedule_sketches_figure(sketches, shown: int | None = None):
    """Every schedule family at a glance: one short panel per ``(title, rates)`` of ``sketches``, top to
    bottom on one step axis, each drawing ``rates`` (the rate of steps 1, 2, ..., over the full rate) as
    steps, on a linear axis from 0 to the full rate (ticked 0, 1/2 and 1, with a dotted line at 1). ``shown``:
    how many steps to draw (all if ``None``). No outcomes: a reader meets it before any run."""
    sketches = [(str(title), np.asarray(rates, float)) for title, rates in sketches]
    if not sketches:
        raise ValueError("sketches: needs at least one (title, rates)")
    for title, rates in sketches:
        if rates.ndim != 1 or rates.size < 2 or np.any(rates < 0) or np.any(rates > 1 + 1e-9):
            raise ValueError(f"sketches: {title!r} needs rates over at least two steps, each from 0 to 1 "
                             f"(the full rate)")
    length = min(rates.size for _, rates in sketches)
    shown = length if shown is None else int(shown)
    if not 2 <= shown <= length:
        raise ValueError(f"shown: must be from 2 to {length} steps, got {shown}")
    fig, axes = new_figure(WIDTH, 1.15 * len(sketches) + 0.8, nrows=len(sketches))
    axes = np.atleast_1d(axes)
    for ax in axes[1:]:
        ax.sharex(axes[0])
    steps = np.arange(1, shown + 1)
    for ax, (title, rates) in zip(axes, sketches):
        ax.fill_between(steps, rates[:shown], step="post", color=PALETTE["navy"], alpha=0.15, linewidth=0)
        ax.plot(steps, rates[:shown], drawstyle="steps-post", color=PALETTE["navy"], linewidth=2.2,
                gid=f"sketch {title}")
        ax.axhline(1, color=PALETTE["text"], linestyle=":", linewidth=1)
        ax.set_ylim(0, 1.15)
        ax.set_yticks([0, 0.5, 1], ["0", "η/2", "η"])
        ax.set_title(title, fontsize=FONT_390["legend"], loc="left")
        ax.tick_params(which="both", labelsize=FONT_390["tick"])
        if ax is not axes[-1]:
            ax.tick_params(labelbottom=False)
    axes[-1].set_xlim(0, shown + 1)
    axes[-1].set_xlabel("step", fontsize=FONT_390["label"])
    return fig
