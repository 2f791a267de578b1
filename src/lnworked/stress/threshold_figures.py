"""Figures of Adam's threshold (6.7, :doc:`05_rate_threshold`) and of the runs held against it
(6.8, :doc:`05_threshold_runs`): the momentum walk and the valley, the full rate times Adam's
preconditioned sharpness along each run, and every run where its full rate arrives.

House style of :mod:`lnworked.stress.warmup_figures` (width, phone-sized text, legends below).
"""

from __future__ import annotations

import numpy as np

from matplotlib.lines import Line2D

from lnworked.style import PALETTE, new_figure
from lnworked.stress.warmup_figures import FONT_390, WIDTH, _legend_below, _log_ticks, _style

__all__ = ["WALK_LOOKS", "momentum_walk_figure", "valley_figure", "arrival_strip_figure",
           "sharpness_figure", "workable_products_figure"]

#: Looks of the momentum walks below, at and above the threshold.
WALK_LOOKS = ((PALETTE["blue"], "-", "o"), (PALETTE["text"], "--", "s"), (PALETTE["orange"], "-.", "D"))


def momentum_walk_figure(walks: dict, top: float | None = None):
    """``|theta_s|`` against the step ``s`` (log scale) for each walk of ``{ratio: thetas}``
    (:func:`~lnworked.stress.sharpness.momentum_walk` at ``eta lam`` = ratio times the threshold,
    ``thetas`` from ``theta_0 = 1``), a dotted line at 1, where the walk started. With ``top`` the
    axis ends there, so that a walk that grows without bound does not squash the others; a walk
    that passes it says so in its label."""
    if not walks:
        raise ValueError("walks: needs at least one {ratio: thetas}")
    if top is not None and not (np.isfinite(top) and top > 1):
        raise ValueError(f"top: must be a finite number above 1, where the walks start, got {top}")
    fig, ax = new_figure(WIDTH, 5.2)
    for i, (ratio, thetas) in enumerate(sorted(walks.items())):
        color, style, marker = WALK_LOOKS[i % len(WALK_LOOKS)]
        size = np.abs(np.asarray(thetas, float))
        steps = np.arange(len(size))
        label = "at the threshold" if ratio == 1 else f"{ratio:g} × the threshold"
        if top is not None and size.max() > top:
            label += " (past the top)"
        ax.plot(steps, size, style, color=color, linewidth=2.5, marker=marker, markevery=max(1, len(size) // 6),
                markersize=7, label=label, gid=f"walk {ratio:g}")
    ax.axhline(1, color="0.5", linewidth=1, linestyle=":")
    ax.set_yscale("log")
    if top is not None:
        ax.set_ylim(top=top)
    _style(ax, "Momentum along one direction", "step $s$", r"distance $|\theta_s|$ from the bottom")
    _legend_below(fig, ax)
    return fig


def valley_figure(walks: dict, limit: float):
    """The plain-words picture of the rate threshold: one stacked panel per walk of
    ``{eta_h: thetas}`` (gradient descent ``theta <- (1 - eta H) theta`` on the bowl
    ``L = H theta^2 / 2`` with ``H = 1``, from ``theta_0 = 1``), each drawing the bowl and the walk's
    points on it, joined step by step and numbered; ``limit`` is the largest ``eta H`` at which the
    steps settle (2), named in each panel's title."""
    if not walks:
        raise ValueError("walks: needs at least one {eta_h: thetas}")
    fig, axes = new_figure(WIDTH, 3.0 * len(walks) + 0.3, nrows=len(walks))
    axes = np.atleast_1d(axes)
    for ax, (i, (eta_h, thetas)) in zip(axes, enumerate(sorted(walks.items()))):
        color, _, marker = WALK_LOOKS[i % len(WALK_LOOKS)]
        thetas = np.asarray(thetas, float)
        reach = max(1.6, float(np.max(np.abs(thetas)))) * 1.15  # each panel its own width
        bowl = np.linspace(-reach, reach, 200)
        ax.plot(bowl, bowl ** 2 / 2, color="0.55", linewidth=1.5, gid="bowl")
        ax.plot(thetas, thetas ** 2 / 2, "-", color=color, linewidth=2, marker=marker, markersize=8,
                gid=f"walk {eta_h:g}")
        spots: dict = {}  # steps that land on the same point share one label: "0, 2, 4"
        for s, theta in enumerate(thetas):
            spots.setdefault(round(float(theta), 6), []).append(str(s))
        for theta, steps in spots.items():
            ax.annotate(", ".join(steps), (theta, theta ** 2 / 2), xytext=(0, 9), textcoords="offset points",
                        ha="center", fontsize=FONT_390["tick"], color=color)
        fate = ("the steps settle" if eta_h < limit else "it swings for ever" if eta_h == limit
                else "it bounces out")
        _style(ax, f"ηH = {eta_h:g}: {fate}", "", "loss")
        ax.set_xlim(-reach, reach)
        ax.set_ylim(-0.05 * reach ** 2, 0.7 * reach ** 2)
        ax.set_yticks([])
    axes[-1].set_xlabel("θ, the weights along one direction", fontsize=FONT_390["label"])
    return fig


def arrival_strip_figure(rows, threshold: float, learned_below: float, bold=()):
    """Where each run's full rate arrives, and whether the run learned: one row per run (top to
    bottom in the order given, named on the left), one marker per seed at the product ``eta lam`` where
    its full rate arrives, in units of ``threshold`` (log scale, dashed at 1); filled navy where the
    seed's final loss is below ``learned_below`` (it learned), an open grey ring where it is not. A
    row's seeds sit a little apart up and down, so that equal products stay visible. ``rows``: a
    sequence of ``(label, products (n,), finals (n,))``; ``bold``: labels of rows to name in bold. If
    arriving below the threshold decided, every filled marker would sit left of the line and every
    ring right of it."""
    rows = list(rows)
    if not rows:
        raise ValueError("rows: needs at least one (label, products, finals)")
    threshold, learned_below = float(threshold), float(learned_below)
    if not threshold > 0:
        raise ValueError(f"threshold: must be positive, got {threshold}")
    if not learned_below > 0:
        raise ValueError(f"learned_below: must be positive, got {learned_below}")
    labels = [label for label, _, _ in rows]
    for label in bold:
        if label not in labels:
            raise ValueError(f"bold: {label!r} is not the label of a row")
    fig, ax = new_figure(WIDTH, 0.42 * len(rows) + 2.6)
    products = []
    for y, (label, x, finals) in enumerate(rows):
        x, finals = np.asarray(x, float) / threshold, np.asarray(finals, float)
        if x.ndim != 1 or x.shape != finals.shape or x.size == 0 or np.any(x <= 0) or np.any(finals <= 0):
            raise ValueError(f"rows: {label!r} needs as many positive products as positive final losses")
        products.append(x)
        spread = y + 0.16 * (np.arange(x.size) - (x.size - 1) / 2)
        learned = finals < learned_below
        ax.scatter(x[learned], spread[learned], s=90, color=PALETTE["navy"], zorder=3, gid=f"{label} learned")
        ax.scatter(x[~learned], spread[~learned], s=90, facecolor="white", edgecolor=PALETTE["grey"], linewidth=2,
                   zorder=3, gid=f"{label} not learned")
    ax.set_xscale("log")
    every = np.concatenate(products)
    ax.set_xlim(min(float(every.min()), 1.0) / 1.5, max(float(every.max()), 1.0) * 1.5)
    _log_ticks(ax.xaxis)
    ax.set_yticks(range(len(rows)), labels)
    for tick, label in zip(ax.get_yticklabels(), labels):
        tick.set_fontweight("bold" if label in bold else "normal")
    ax.set_ylim(len(rows) - 0.5, -0.5)  # the first row on top
    ax.grid(False, axis="y")
    ax.axvline(1.0, color=PALETTE["text"], linestyle=(0, (4, 3)), linewidth=1.2)
    _style(ax, "Arrival against outcome", "η × sharpness / threshold", "")
    ax.set_title(ax.get_title(), loc="right", fontsize=FONT_390["title"])  # the row names leave the axes narrow
    ax.set_title("", loc="center")
    ax.set_xlabel(ax.get_xlabel(), loc="right", fontsize=FONT_390["label"])
    handles = [Line2D([], [], linestyle="", marker="o", markersize=10, color=PALETTE["navy"],
                      label=f"learned (final loss below {learned_below:g} nats)"),
               Line2D([], [], linestyle="", marker="o", markersize=10, markerfacecolor="white",
                      markeredgecolor=PALETTE["grey"], markeredgewidth=2, label="did not learn"),
               Line2D([], [], color=PALETTE["text"], linestyle=(0, (4, 3)), linewidth=1.2,
                      label=f"threshold ({threshold:.0f})")]
    fig.legend(handles=handles, loc="outside lower center", fontsize=FONT_390["legend"], frameon=False,
               handlelength=1.8)
    return fig


SHARPNESS_CENTERS = {"geometric mean": lambda v: np.exp(np.log(v).mean(axis=0)),
                     "median": lambda v: np.median(v, axis=0)}


def sharpness_figure(panels, threshold: float, xlabel: str = "step", center: str = "geometric mean",
                     panel_height: float = 5.6, legend: bool = True):
    """What the full rate would face along each run: ``eta`` times Adam's preconditioned sharpness
    from the run's weights and divisors at each step, in units of ``threshold`` (log scale), against
    the step, in stacked panels that share both axes: one line per run through the ``center`` over
    seeds (``"geometric mean"`` or ``"median"``: with three seeds, the middle one, so a run whose
    seeds swing across the threshold draws a line that swings too), each seed a thin line with small
    markers, and a ring on the line where the run's rate becomes the full rate. ``panels``: a sequence
    of ``(title, runs)``, ``runs`` a sequence of ``(label, steps (n,), values (seeds, n), look,
    full_from)`` with ``values`` the raw products ``eta lam``, ``look`` a ``(colour, line style,
    marker)`` (e.g. of :data:`SCHEDULE_LOOKS`), ``full_from`` the step (one of ``steps``) from which
    the run's rate is the full rate, or ``None`` for no ring. Every point has one meaning, what a
    full-rate step from there would face (the run's own step, at ``eta_s``, faces ``eta_s / eta`` of
    it), so every line is drawn alike. The threshold, 1 in these units, is drawn dashed in every
    panel; each panel's legend sits below it. ``xlabel``: the steps' axis label. ``panel_height``:
    each panel's height in inches. ``legend=False`` draws no legends, labels the steps' axis of the last
    panel only and each panel's products' axis in short, ``ηΛ / 38``: for small multiples, one run to a
    panel, named by the panel's title."""
    panels = [(title, list(runs)) for title, runs in panels]
    if not panels or not all(runs for _, runs in panels):
        raise ValueError("runs: every panel needs at least one (label, steps, values, look, full_from)")
    threshold = float(threshold)
    if not threshold > 0:
        raise ValueError(f"threshold: must be positive, got {threshold}")
    if center not in SHARPNESS_CENTERS:
        raise ValueError(f"center: must be one of {tuple(SHARPNESS_CENTERS)}, got {center!r}")
    if not panel_height > 0:
        raise ValueError(f"panel_height: must be positive (inches), got {panel_height}")
    fig, axes = new_figure(WIDTH, panel_height * len(panels), nrows=len(panels))
    axes = np.atleast_1d(axes)
    for ax in axes[1:]:
        ax.sharex(axes[0])
        ax.sharey(axes[0])
    for ax, (title, runs) in zip(axes, panels):
        for label, steps, values, (color, style, marker), full_from in runs:
            steps, values = list(steps), np.asarray(values, float) / threshold
            if values.ndim != 2 or values.shape[1] != len(steps) or np.any(values <= 0) or \
                    (full_from is not None and full_from not in steps):
                raise ValueError(f"runs: {label!r} needs positive values (seeds, steps) and full_from among its "
                                 "steps, or None")
            mean = SHARPNESS_CENTERS[center](values)
            ax.plot(steps, mean, linestyle=style, color=color, linewidth=2.5, marker=marker, markersize=7,
                    label=label)
            for seed_values in values:  # each seed a thin line (reads 203, 208: loose markers let the mean
                # of a run whose seeds swing across the threshold read as a run that settles)
                ax.plot(steps, seed_values, linestyle="-", linewidth=0.9, marker=marker, markersize=4, color=color,
                        alpha=0.45)
            if full_from is not None:
                ax.plot([full_from], [mean[steps.index(full_from)]], "o", markersize=17, markerfacecolor="none",
                        markeredgecolor=color, markeredgewidth=2)
        ax.set_yscale("log")
        _log_ticks(ax.yaxis)
        # labelled in the legend, not on the plot: the runs that learn sit just below the line
        ax.axhline(1.0, color=PALETTE["text"], linestyle=(0, (4, 3)), linewidth=1.2,
                   label=f"threshold ({threshold:.0f})")
        # small multiples: a short label on every panel, so that each reads on its own (read 270: one label
        # spanning six panels fell outside a screenful)
        _style(ax, title, xlabel if legend or ax is axes[-1] else "",
               "η × sharpness / threshold" if legend else f"ηΛ / {threshold:.0f}")
        if legend:
            ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncols=1, fontsize=FONT_390["legend"],
                      frameon=False, handlelength=1.8)
    return fig


def workable_products_figure(best: dict, rates, ceiling: dict, title: str = "Three rates, seen by the threshold"):
    """Three rates along a warmup, each as what its step would face there: the rate times Adam's
    preconditioned sharpness, in units of the threshold (log scale; dashed: 1, the threshold), against
    the step the rate starts from. ``ceiling`` = ``{s: rates}``: each seed's rate at the threshold from
    the warmup's weights and divisors at step ``s``, over the full rate, so that a rate ``r`` (over the
    full rate) faces ``r / ceiling``; ``best`` = ``{s: divisors}``, each seed's best constant rate
    ``1/d`` from the same weights (seeds in the same order); ``rates``: the warmup's own rate over the
    full rate at steps ``0, 1, ...``. Drawn at each step: the full rate (``1 / ceiling``), the best
    constant rate and the warmup's next rate, each seed a small marker (the three side by side, so
    they do not hide one another) and a thick line through their median."""
    ceiling = {int(s): np.asarray(r, float) for s, r in ceiling.items()}
    best = {int(s): np.asarray(d, float) for s, d in best.items()}
    rates = np.asarray(rates, float)
    if not ceiling or any(r.ndim != 1 or r.size == 0 or np.any(r <= 0) for r in ceiling.values()):
        raise ValueError("ceiling: needs {step: one positive rate per seed}, at least one step")
    if set(best) != set(ceiling) or any(best[s].shape != ceiling[s].shape or np.any(best[s] < 1) for s in best):
        raise ValueError("best: needs {step: one divisor >= 1 per seed} at the steps and seeds of ceiling")
    steps = sorted(ceiling)
    if rates.ndim != 1 or rates.size <= max(steps) or np.any(rates < 0):
        raise ValueError(f"rates: needs the warmup's rate over the full rate at steps 0 to {max(steps)} at least")
    faced = {"the full rate η": {s: 1 / ceiling[s] for s in steps},
             "the best constant rate": {s: 1 / best[s] / ceiling[s] for s in steps},
             "the warmup's next rate": {s: rates[s] / ceiling[s] for s in steps}}
    looks = {"the full rate η": (PALETTE["orange"], "--", "D"), "the best constant rate": (PALETTE["navy"], "-", "o"),
             "the warmup's next rate": (PALETTE["green"], "-", "^")}
    fig, ax = new_figure(WIDTH, 5.6)
    spread = 0.02 * max(max(steps), 1)
    for k, (label, by_step) in enumerate(faced.items()):
        color, style, marker = looks[label]
        shift = (k - 1) * spread
        for s in steps:
            ax.plot([s + shift] * by_step[s].size, by_step[s], marker, color=color, markersize=5, alpha=0.45,
                    linestyle="none", gid=f"{label} {s}")
        ax.plot([s + shift for s in steps], [float(np.median(by_step[s])) for s in steps], linestyle=style,
                color=color, linewidth=2.5, marker=marker, markersize=8, label=label,
                gid=f"{label} median")
    ax.axhline(1.0, color=PALETTE["text"], linestyle=(0, (4, 3)), linewidth=1.2, label="threshold")
    ax.set_yscale("log")
    _log_ticks(ax.yaxis)
    _style(ax, title, "step the rate starts from", "rate × sharpness / threshold")
    _legend_below(fig, ax)
    return fig
