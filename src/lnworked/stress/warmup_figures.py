"""Figures of the why-warmup chapter: the first update against depth, the first steps, amplification.

Same house style and phone sizes as :mod:`lnworked.stress.figures` (stacked panels, Pre-LN
violet solid, Post-LN magenta dashed); each figure shows the mean over seeds with the
seeds' range as a band or as thin lines.
"""

from __future__ import annotations

import numpy as np

from lnworked.stress.figures import PHONE_FONT, WIDTH, _style
from lnworked.style import PALETTE, new_figure

__all__ = ["mean_over_seeds", "first_update_figure", "loss_along_update_figure", "first_steps_figure", "amplification_figure"]

_LOOK = {True: ("Pre-LN", PALETTE["pre"], "-", "o"), False: ("Post-LN", PALETTE["post"], "--", "s")}


def mean_over_seeds(rows, key: str, pre_norm: bool, **match):
    """``(depths, mean, min, max)`` of ``key`` over the seeds' rows with ``pre_norm`` and ``match``."""
    mine = [r for r in rows if r["pre_norm"] == pre_norm and all(r[k] == v for k, v in match.items())]
    depths = sorted({r["layers"] for r in mine})
    values = [[r[key] for r in mine if r["layers"] == d] for d in depths]
    return (np.array(depths), np.array([np.mean(v) for v in values]), np.array([np.min(v) for v in values]),
            np.array([np.max(v) for v in values]))


def _legend(ax):
    ax.legend(fontsize=PHONE_FONT["legend"], frameon=False)


def first_update_figure(rows, rate: float, small_rate: float):
    """Two stacked panels against depth: the loss change of the first update at ``rate`` and
    ``small_rate`` (Delta loss, per placement), and the RMS change of the logits relative to their RMS."""
    fig, (top, bottom) = new_figure(WIDTH, 9.0, nrows=2)
    for pre_norm, (name, color, style, marker) in _LOOK.items():
        for lr, alpha in ((rate, 1.0), (small_rate, 0.45)):
            d, mean, low, high = mean_over_seeds(rows, "delta_loss", pre_norm, learning_rate=lr)
            top.plot(d, mean, style, marker=marker, color=color, alpha=alpha, linewidth=2,
                     label=f"{name}, rate {lr:.2g}")
            top.fill_between(d, low, high, color=color, alpha=0.15 * alpha)
            d, mean, low, high = mean_over_seeds(rows, "relative", pre_norm, learning_rate=lr)
            bottom.plot(d, mean, style, marker=marker, color=color, alpha=alpha, linewidth=2,
                        label=f"{name}, rate {lr:.2g}")
            bottom.fill_between(d, low, high, color=color, alpha=0.15 * alpha)
    top.axhline(0, color=PALETTE["text"], linewidth=0.8)
    for ax in (top, bottom):
        ax.set_xscale("log", base=2)
        ax.set_xticks(d, [str(x) for x in d])
    bottom.set_yscale("log")
    _style(top, "Loss change of the first update", "layers", "Δ loss (below 0: it helped)")
    _style(bottom, "Change of the logits, relative", "layers", "RMS Δ logits / RMS logits")
    _legend(top)
    return fig


def loss_along_update_figure(ts, curves: dict, first_t: float):
    """Two stacked panels of the loss change along the first update, ``L(theta_0 + t Delta theta) - L(theta_0)``
    against ``t`` (curves of :func:`~lnworked.stress.first_update.loss_along_update`, thick) beside
    each tangent ``t <g, Delta theta>`` (thin dotted): top the whole step ``0 <= t <= 1``, bottom zoomed
    on ``t <= 8 first_t`` around warmup's first step ``t = first_t`` (the grey line)."""
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
                    label=f"{name}: the loss")
            ax.plot(line, curves[pre_norm]["slope"] * line, ":", color=color, linewidth=2,
                    label=f"{name}: its tangent")
        ax.axvline(first_t, color=PALETTE["text"], alpha=0.4, linewidth=1)
        ax.axhline(0, color=PALETTE["text"], linewidth=0.8)
    _style(top, "The loss along the first update", "t (1 = the full step)", "loss change")
    _style(bottom, "Zoom: warmup's first step (grey)", "t", "loss change")
    _legend(top)
    return fig


def first_steps_figure(curves: dict):
    """Loss against step for each variant of ``{variant: (seeds, steps)}``: seeds thin, mean thick."""
    fig, ax = new_figure(WIDTH, 5.0)
    looks = {"Pre-LN": (PALETTE["pre"], "-"), "Post-LN": (PALETTE["post"], "--"),
             "Pre-LN + warmup": (PALETTE["pre"], ":"), "Post-LN + warmup": (PALETTE["post"], "-.")}
    for variant, losses in curves.items():
        color, style = looks[variant]
        steps = np.arange(1, losses.shape[1] + 1)
        for seed_losses in losses:
            ax.plot(steps, seed_losses, style, color=color, alpha=0.3, linewidth=1)
        ax.plot(steps, losses.mean(axis=0), style, color=color, linewidth=2.5, label=variant)
    _style(ax, "The first training steps", "step", "loss (before the step's update)")
    _legend(ax)
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
    _style(top, "Output change under a fixed-size perturbation", "layers L",
           "mean square Δ logits")
    _style(bottom, "Each sublayer's dependence on its branch", "sublayer (attention, MLP, ...)",
           "branch share ρ")
    bottom.set_ylim(0, 1)
    _legend(top)
    _legend(bottom)
    return fig
