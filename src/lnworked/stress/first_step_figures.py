"""Figures of the chapter's first part (6.1-6.4, :doc:`05_why_warmup`) and of chapter 7: AdamW's
first update against depth, the loss along one update, the one-logit example, the first steps,
how much a step moves the output, and the summary of the argument.

House style of :mod:`lnworked.stress.warmup_figures` (width, phone-sized text, legends below).
"""

from __future__ import annotations

import numpy as np
from matplotlib.ticker import MaxNLocator

from lnworked.style import PALETTE, new_figure
from lnworked.stress.warmup_figures import FONT_390, STEP_LOOKS, WIDTH, _LOOK, _legend_below, _style, mean_over_seeds

__all__ = ["FIRST_RATE", "FIRST_STEP", "first_update_figure", "loss_along_update_figure", "ONE_LOGIT_LOOKS",
           "one_logit_figure", "first_steps_figure", "amplification_figure", "argument_figure",
           "step_response_figure"]

FIRST_RATE = "warmup's first rate"  # the legend's name for the smaller rate


FIRST_STEP = "warmup's first step"  # the label of its position t along the full step


def first_update_figure(rows, rate: float, small_rate: float):
    """Two stacked panels against depth: top, the share of its promise the first update delivers at
    ``rate`` and ``small_rate``, ``100 delta_loss / linear_delta_loss`` per seed (Delta loss over
    <g, Delta theta>; 100%: all of it, 0: none), per placement; bottom, the RMS change of the logits
    relative to their RMS. Mean over seeds as a line, their range as a band. The full rate is drawn
    with filled markers, the small one with open markers and a thinner line."""
    rows = [dict(r, delivered=100 * r["delta_loss"] / r["linear_delta_loss"]) for r in rows]
    fig, (top, bottom) = new_figure(WIDTH, 10.0, nrows=2)
    for pre_norm, (name, color, style, marker) in _LOOK.items():
        for lr, full in ((rate, True), (small_rate, False)):
            look = dict(marker=marker, color=color, linewidth=2.5 if full else 1.5, markersize=8,
                        markerfacecolor=color if full else "white", markeredgewidth=1.5,
                        label=f"{name}, {'full rate' if full else FIRST_RATE} {lr:.2g}")
            for ax, key in ((top, "delivered"), (bottom, "relative")):
                d, mean, low, high = mean_over_seeds(rows, key, pre_norm, learning_rate=lr)
                ax.plot(d, mean, style if full else ":", gid=f"{key}-{name}-{'full' if full else 'first'}", **look)
                ax.fill_between(d, low, high, color=color, alpha=0.15 if full else 0.07)
    for level in (0, 100):
        top.axhline(level, color=PALETTE["text"], linewidth=0.8)
    for ax in (top, bottom):
        ax.set_xscale("log", base=2)
        ax.set_xticks(d, [str(x) for x in d])
    bottom.set_yscale("log")
    _style(top, "Share of its promise delivered", "blocks L", "delivered (%)")
    _style(bottom, "Change of the logits, relative", "blocks L", "RMS Δ logits / RMS logits")
    handles, labels = top.get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=1, fontsize=FONT_390["legend"], frameon=False)
    return fig


def loss_along_update_figure(ts, curves: dict, first_t: float):
    """Two stacked panels of the loss change along the first update, ``L(theta_0 + t Delta theta) - L(theta_0)``
    against ``t`` (curves of :func:`~lnworked.stress.first_update.loss_along_update`, thick) beside
    each tangent ``t <g, Delta theta>`` (thin dotted): top the whole step ``0 <= t <= 1``, bottom zoomed
    on ``t <= 8 first_t`` around warmup's first step ``t = first_t``, a dashed vertical line labelled
    "warmup's first step" (``t = 1/n`` where ``first_t`` is ``1/n`` for a whole ``n``) in the zoom, the
    label low and narrow, right of the line, where the falling curves are not."""
    ts = np.asarray(ts, float)
    order = np.argsort(ts)
    fig, (top, bottom) = new_figure(WIDTH, 9.0, nrows=2)
    for ax, end in ((top, ts.max()), (bottom, 8 * first_t)):
        shown = order[ts[order] <= end * (1 + 1e-9)]
        line = np.linspace(0, end, 50)
        for pre_norm, (name, color, style, marker) in _LOOK.items():
            loss = np.asarray(curves[pre_norm]["loss"], float)
            start = loss[np.argmin(np.abs(ts))]
            ax.plot(ts[shown], loss[shown] - start, style, marker=marker, color=color, linewidth=2.5,
                    label=f"{name}: loss")
            ax.plot(line, curves[pre_norm]["slope"] * line, ":", color=color, linewidth=2,
                    label=f"{name}: tangent")
        ax.axvline(first_t, color=PALETTE["text"], linestyle=(0, (5, 3)), linewidth=1.5,
                   alpha=1.0 if ax is bottom else 0.4, gid=FIRST_STEP)
        ax.axhline(0, color=PALETTE["text"], linewidth=0.8)
    whole = 1 / first_t
    at = f"1/{whole:.0f}" if abs(whole - round(whole)) < 1e-6 else f"{first_t:.2g}"
    # the label sits low, right of the line: the curves fall from the top left to the bottom right
    bottom.annotate(f"warmup's\nfirst step,\nt = {at}", (first_t, 0.04), xycoords=("data", "axes fraction"),
                    xytext=(6, 0), textcoords="offset points", ha="left", va="bottom",
                    fontsize=FONT_390["legend"], color=PALETTE["text"])
    _style(top, "Loss along the first update", "t (1 = the full step)", "loss change")
    _style(bottom, "Zoom: warmup's first step", "t (1 = the full step)", "loss change")
    _legend_below(fig, top, ncols=2)
    return fig


#: The two logit moves of :func:`one_logit_figure`, and their looks (colour, line style, marker).
ONE_LOGIT_LOOKS = ((1.0, PALETTE["blue"], "-", "o"), (4.0, PALETTE["orange"], "--", "D"))


def one_logit_figure():
    """The worked example of one step on one logit (:mod:`lnworked.stress.one_logit`), for the moves of
    :data:`ONE_LOGIT_LOOKS`: the loss change ``ln(1 + e^(-a t)) - ln 2`` (solid or dashed) and its
    tangent ``-a t / 2`` (dotted, same colour) against ``t``, and a dot where the move that reaches
    one half within the step keeps half its promise, ``t_half = HALF_SHARE_MOVE / a``."""
    from lnworked.stress.one_logit import one_logit_half_point, one_logit_walk

    t = np.linspace(0, 1, 101)
    fig, ax = new_figure(WIDTH, 5.6)
    for move, color, style, marker in ONE_LOGIT_LOOKS:
        loss, tangent = one_logit_walk(move, t)
        ax.plot(t, tangent, ":", color=color, linewidth=2, gid=f"tangent {move:g}")
        ax.plot(t, loss, style, color=color, linewidth=3, marker=marker, markevery=[-1], markersize=8,
                label=f"logit moves {move:g}", gid=f"loss {move:g}")
        half = one_logit_half_point(move)
        if half <= 1:
            at = one_logit_walk(move, half)[0]
            ax.plot([half], [at], "o", color=color, markersize=10, markerfacecolor="white", markeredgewidth=2,
                    gid=f"half {move:g}")
            ax.annotate(f"share ½\nat t = {half:.2f}", (half, at), xytext=(6, -12), textcoords="offset points",
                        ha="left", va="top", fontsize=FONT_390["legend"], color=color)
    ax.plot([], [], ":", color=PALETTE["text"], linewidth=2, label="tangents (the promise)")
    ax.axhline(0, color=PALETTE["text"], linewidth=0.8)
    _style(ax, "One step on one logit", "t (1 = the full step)", "loss change (nats)")
    _legend_below(fig, ax)
    return fig


def first_steps_figure(curves: dict):
    """Loss against step for each variant of ``{variant: (seeds, steps)}``: seeds thin, mean thick with
    markers; each variant its own colour, line style and marker (:data:`STEP_LOOKS`)."""
    fig, ax = new_figure(WIDTH, 6.0)
    for variant, losses in curves.items():
        color, style, marker = STEP_LOOKS[variant]
        steps = np.arange(1, losses.shape[1] + 1)
        for seed_losses in losses:
            ax.plot(steps, seed_losses, style, color=color, alpha=0.3, linewidth=1)
        ax.plot(steps, losses.mean(axis=0), style, color=color, linewidth=2.5, marker=marker, markersize=7,
                label=variant)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    _style(ax, "The first training steps", "step", "loss (before the update)")
    _legend_below(fig, ax, ncols=2)
    return fig


def amplification_figure(rows, shares: dict):
    """Two stacked panels: the output change under a random perturbation against depth (mean over
    seeds, with the range), and each sublayer's branch share ``rho_i`` at the configured depth."""
    fig, (top, bottom) = new_figure(WIDTH, 9.0, nrows=2)
    for pre_norm, (name, color, style, marker) in _LOOK.items():
        d, mean, low, high = mean_over_seeds(rows, "output_change", pre_norm)
        top.plot(d, mean, style, marker=marker, color=color, linewidth=2, label=name)
        top.fill_between(d, low, high, color=color, alpha=0.15)
        r = shares[pre_norm]
        sub = np.arange(1, r.shape[1] + 1)
        bottom.plot(sub, r.mean(axis=0), style, marker=marker, color=color, linewidth=2, label=name)
        bottom.fill_between(sub, r.min(axis=0), r.max(axis=0), color=color, alpha=0.15)
    ticks = [x for x in d if x == d[0] or x >= 6]  # 1, 2, 3 would overlap on a linear axis
    top.set_xticks(ticks, [str(x) for x in ticks])
    _style(top, "Output change, random step", "layers L", "mean square Δ logits")
    _style(bottom, "Each sublayer's branch share", "sublayer (attention, MLP, ...)", "branch share ρ")
    bottom.set_ylim(0, 1)
    _legend_below(fig, top, ncols=2)
    return fig


def argument_figure(shares: dict, profile_rows, rows, small_rate: float):
    """The chapter's argument in three stacked panels, Pre-LN against Post-LN at the initial weights.

    1. forward: each sublayer's branch share ``rho = |F|^2 / |x + F|^2`` against block ``l`` (the
       attention at ``l - 1/4``, the MLP at ``l + 1/4``), mean over the seeds of ``shares``
       (:func:`~lnworked.stress.amplification.branch_dependence`) with their range;
    2. backward: each block's gradient norm ``|dL/d theta_l|`` against ``l`` (linear axis from 0),
       from the step-0 rows of ``profile_rows``
       (:func:`~lnworked.stress.committed.committed_profiles`) of the runs without warmup;
    3. update sensitivity: the logits' relative RMS change under AdamW's first update at ``small_rate``
       against the number of blocks ``L``, mean over the seeds of ``rows``
       (:func:`~lnworked.stress.first_update.first_update_table`) with their range.
    """
    for pre_norm in _LOOK:
        if pre_norm not in shares:
            raise ValueError(f"shares: no branch shares for pre_norm={pre_norm}")
        if not any(r["pre_norm"] == pre_norm and r["step"] == 0 and r["warmup"] == 0 for r in profile_rows):
            raise ValueError(f"profile_rows: no step-0 rows without warmup for pre_norm={pre_norm}")
        if not any(r["pre_norm"] == pre_norm and r["learning_rate"] == small_rate for r in rows):
            raise ValueError(f"small_rate: no first-update rows at rate {small_rate} for pre_norm={pre_norm}")
    fig, (forward, backward, update) = new_figure(WIDTH, 13.5, nrows=3)
    for pre_norm, (name, color, style, marker) in _LOOK.items():
        look = dict(color=color, marker=marker, markersize=7, linewidth=2.5, label=name)
        r = np.asarray(shares[pre_norm], float)
        blocks = np.arange(1, r.shape[1] // 2 + 1)
        x = np.stack([blocks - 0.25, blocks + 0.25], axis=1).reshape(-1)
        forward.plot(x, r.mean(axis=0), style, **look)
        forward.fill_between(x, r.min(axis=0), r.max(axis=0), color=color, alpha=0.15)
        mine = sorted((p for p in profile_rows if p["pre_norm"] == pre_norm and p["step"] == 0 and p["warmup"] == 0),
                      key=lambda p: p["layer"])
        backward.plot([p["layer"] for p in mine], [p["block_gradient_norm"] for p in mine], style, **look)
        d, mean, low, high = mean_over_seeds(rows, "relative", pre_norm, learning_rate=small_rate)
        update.plot(d, mean, style, **look)
        update.fill_between(d, low, high, color=color, alpha=0.15)
    forward.set_ylim(0, 1)
    for ax in (forward, backward):
        ax.set_xticks(blocks[::max(1, len(blocks) // 6)])
    # the gradient norms span less than a decade: a linear axis from 0 shows "of the same order" with
    # several labelled ticks (a log axis labels only powers of 10, one or two of them)
    backward.set_ylim(bottom=0)
    backward.yaxis.set_major_locator(MaxNLocator(5))
    update.set_xscale("log", base=2)
    update.set_yscale("log")
    update.set_xticks(d, [str(v) for v in d])
    # titles no wider than the axes: a wider one overhangs the top y tick label ("1.0") and covers it
    _style(forward, "1. Forward: branch share", "block ℓ", "branch share ρ")
    _style(backward, "2. Backward: gradient", "block ℓ", "gradient norm")
    _style(update, "3. Update: logit change", "blocks L in the model", "relative Δ logits")
    _legend_below(fig, forward, ncols=2)
    return fig


def step_response_figure(rows):
    """Two stacked panels against the training step the weights come from, one line per run
    (``rows``: dicts with ``run``, ``pre_norm``, ``warmup``, ``step``, ``delivered``,
    ``linear_delta_loss``): top, the delivered share ``delta_loss / linear_delta_loss`` of one
    full-rate step, a dotted line at 1 (all of the promise); bottom, the promise it is a share of,
    ``-linear_delta_loss`` in nats, on a log scale."""
    from lnworked.stress.report import display_name

    runs = list(dict.fromkeys(r["run"] for r in rows))
    if not runs:
        raise ValueError("rows: empty, no run to draw")
    fig, (top, bottom) = new_figure(WIDTH, 9.5, nrows=2)
    for run in runs:
        mine = sorted((r for r in rows if r["run"] == run), key=lambda r: r["step"])
        name = "Pre-LN" if mine[0]["pre_norm"] else "Post-LN"
        color, style, marker = STEP_LOOKS[name + (" + warmup" if mine[0]["warmup"] else "")]
        look = dict(color=color, marker=marker, linestyle=style, linewidth=2, label=display_name(run))
        steps = [r["step"] for r in mine]
        top.plot(steps, [r["delivered"] for r in mine], **look)
        bottom.plot(steps, [-r["linear_delta_loss"] for r in mine], **look)
    top.axhline(1.0, color="0.5", linewidth=1, linestyle=":")
    bottom.set_yscale("log")
    _style(top, "Share of the promise delivered", "", "delivered / promised")
    _style(bottom, "The promise", "training step of the weights", "promised drop (nats)")
    _legend_below(fig, top)
    return fig
