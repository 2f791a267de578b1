"""Figures of the sweep and the probes: stability map, per-layer gradient norms, seed spread.

House style from :mod:`lnworked.style` (white background, titles, labelled axes), sized to
be read on a phone: each figure is at most :data:`WIDTH` inches wide (about 660 px at the
book's 110 dpi, so a 390 px screen shrinks it by less than half) with text at
:data:`PHONE_FONT`; panels are stacked, never side by side. Run names are shown with
:func:`lnworked.stress.report.display_name` (Pre-LN / Post-LN, the book's terms).
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.colors import LogNorm, to_rgb
from matplotlib.ticker import MaxNLocator

from lnworked.stress.report import display_name
from lnworked.style import PALETTE, new_figure

__all__ = ["stability_map", "stability_grid", "layer_gradient_figure", "seed_figure", "relative_luminance", "label_color", "WIDTH", "PHONE_FONT", "MAP_FONT", "DIVERGED_COLOR"]

#: Width of every figure here, inches.
WIDTH = 6.0
#: Width, inches, of a figure whose text must stay large on a phone (the per-block gradients).
PHONE_NARROW = 4.6
#: Font sizes (points) of the figures here: larger than the house sizes, for a phone.
PHONE_FONT = {"title": 15, "label": 14, "tick": 13, "legend": 12, "annotation": 15}
#: Font sizes (points) of :func:`stability_map` on its :data:`PHONE_NARROW`-inch figure: 13 px or more at 343 px.
MAP_FONT = {"title": 15, "label": 15, "tick": 14, "annotation": 15}
#: Background of a stability-map cell whose runs diverged.
DIVERGED_COLOR = "#d9d9d9"


def relative_luminance(color) -> float:
    """WCAG 2 relative luminance of an sRGB colour: ``0.2126 R + 0.7152 G + 0.0722 B`` of
    the linearised channels ``c/12.92`` (``c <= 0.04045``) or ``((c + 0.055)/1.055)^2.4``."""
    channels = np.array(to_rgb(color))
    linear = np.where(channels <= 0.04045, channels / 12.92, ((channels + 0.055) / 1.055) ** 2.4)
    return float(linear @ np.array([0.2126, 0.7152, 0.0722]))


def label_color(background) -> str:
    """Black or white, whichever contrasts more with ``background`` (WCAG contrast ratio
    ``(L1 + 0.05) / (L2 + 0.05)``: black wins exactly when the luminance exceeds ~0.179)."""
    lum = relative_luminance(background)
    return "black" if (lum + 0.05) / 0.05 >= 1.05 / (lum + 0.05) else "white"


def _style(ax, title: str, xlabel: str, ylabel: str, font=PHONE_FONT):
    ax.set_title(title, fontsize=font["title"])
    ax.set_xlabel(xlabel, fontsize=font["label"])
    ax.set_ylabel(ylabel, fontsize=font["label"])
    ax.tick_params(which="both", labelsize=font["tick"])


def stability_grid(rows, variant: str):
    """``(depths, rates, median final loss over seeds)`` of one variant; diverged runs count as inf."""
    mine = [r for r in rows if r["variant"] == variant]
    depths = sorted({r["layers"] for r in mine})
    rates = sorted({r["learning_rate"] for r in mine})
    grid = np.full((len(depths), len(rates)), np.nan)
    for i, d in enumerate(depths):
        for j, lr in enumerate(rates):
            values = [r["final_loss"] if r["diverged_at"] is None else np.inf
                      for r in mine if r["layers"] == d and r["learning_rate"] == lr]
            grid[i, j] = np.median(values) if values else np.nan
    return depths, rates, grid


def stability_map(rows):
    """One heat map per variant, stacked: median final loss over seeds, per depth and rate.

    Cells are annotated with the value, in black or white by :func:`label_color` of the
    cell's own colour; ``x`` on grey (:data:`DIVERGED_COLOR`) marks a cell whose runs
    diverged; the colour scale is logarithmic and shared, its bar below the panels. Drawn
    :data:`PHONE_NARROW` inches wide with :data:`MAP_FONT`, so a phone shows every text at 13 px or more.
    """
    font = MAP_FONT
    variants = list(dict.fromkeys(r["variant"] for r in rows))
    fig, axes = new_figure(PHONE_NARROW, 2.7 * len(variants) + 1.4, nrows=len(variants))
    axes = np.atleast_1d(axes)
    finite = [r["final_loss"] for r in rows if np.isfinite(r["final_loss"]) and r["final_loss"] > 0]
    norm = LogNorm(vmin=min(finite), vmax=max(finite))
    cmap = plt.get_cmap("viridis").with_extremes(bad=DIVERGED_COLOR)
    for ax, variant in zip(axes, variants):
        depths, rates, grid = stability_grid(rows, variant)
        shown = np.where(np.isfinite(grid), grid, np.nan)
        image = ax.imshow(shown, cmap=cmap, norm=norm, origin="lower", aspect="auto")
        for i in range(len(depths)):
            for j in range(len(rates)):
                value = grid[i, j]
                finite_cell = np.isfinite(value)
                background = cmap(norm(value)) if finite_cell else DIVERGED_COLOR
                ax.text(j, i, f"{value:.2g}" if finite_cell else "x", ha="center", va="center",
                        fontsize=font["annotation"], color=label_color(background))
        ax.set_xticks(range(len(rates)), [f"{r:g}" for r in rates])
        ax.set_yticks(range(len(depths)), [str(d) for d in depths])
        _style(ax, display_name(variant), "learning rate", "layers", font)
        ax.grid(False)
    bar = fig.colorbar(image, ax=list(axes), location="bottom", shrink=0.9, aspect=25)
    bar.set_label("final loss (median over seeds)", fontsize=font["label"])
    bar.ax.tick_params(which="both", labelsize=font["tick"])
    return fig


#: Line style and marker of each depth in :func:`layer_gradient_figure`, shallowest first (then cycled).
DEPTH_LOOKS = ((":", "^"), ("--", "s"), ("-", "o"), ("-.", "D"))


def layer_gradient_figure(rows):
    """Gradient norm of each block at initialisation against its position: one panel per placement
    (Pre-LN violet on top, Post-LN magenta below, one shared log y axis), one line per depth, the
    depth told apart by line style and marker (:data:`DEPTH_LOOKS`) and labelled at the line's end."""
    depths = sorted({r["layers"] for r in rows})
    fig, axes = new_figure(PHONE_NARROW, 8.6, nrows=2)
    axes[1].sharex(axes[0])
    axes[1].sharey(axes[0])  # one scale: the placements compare by height
    for ax, (pre_norm, name, color) in zip(axes, ((True, "Pre-LN", PALETTE["pre"]),
                                                  (False, "Post-LN", PALETTE["post"]))):
        for depth, (style, marker) in zip(depths, DEPTH_LOOKS * len(depths)):
            mine = [r for r in rows if r["layers"] == depth and r["pre_norm"] == pre_norm]
            x, y = [r["layer"] for r in mine], [r["gradient_norm"] for r in mine]
            ax.plot(x, y, style, color=color, linewidth=2.2, marker=marker, markersize=7,
                    label=f"{depth} blocks", gid=f"{name}, {depth} blocks")
            ax.annotate(str(depth), (x[-1], y[-1]), xytext=(6, 0), textcoords="offset points",
                        ha="left", va="center", fontsize=PHONE_FONT["annotation"], color=color)
        ax.set_yscale("log")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # blocks are whole numbers
        _style(ax, name, "block (1 = next to the input)" if not pre_norm else "", "gradient norm")
        ax.title.set_color(color)
        ax.tick_params(which="both", labelsize=PHONE_FONT["label"])  # a size up: 13 px on a phone
    axes[0].set_xlim(0.5, max(depths) + 1.5)  # room for the end labels
    fig.legend(*axes[1].get_legend_handles_labels(), loc="outside lower center", ncols=len(depths),
               fontsize=PHONE_FONT["label"], frameon=False, columnspacing=0.8, handlelength=2.0,
               handletextpad=0.4)
    return fig


def seed_figure(results_by_seed: dict, vocab_size: int | None = None):
    """Loss curves of one run kind under several seeds: ``{seed: RunResult}``; one colour per
    seed (matplotlib's ``tab10`` cycle: distinct for up to ten seeds), legend below the axes;
    a linear loss axis.

    ``vocab_size`` draws a labelled dotted line (gid ``uniform``) at ``ln(vocab_size)``, the
    loss of a uniform guess over the vocabulary."""
    fig, ax = new_figure(PHONE_NARROW, 6.4)  # narrow, so a phone keeps its legend large
    colors = plt.get_cmap("tab10").colors
    for k, (seed, run) in enumerate(results_by_seed.items()):
        ax.plot(run.steps, run.loss, color=colors[k % len(colors)], linewidth=1.5, label=f"seed {seed}")
    if vocab_size is not None:
        uniform = float(np.log(vocab_size))
        ax.axhline(uniform, color=PALETTE["text"], linestyle=":", linewidth=2, gid="uniform",
                   label=f"uniform guess:\nln {vocab_size} = {uniform:.2f}")
    name = display_name(next(iter(results_by_seed.values())).spec.name)
    _style(ax, f"{name}: {len(results_by_seed)} seeds", "training step", "cross-entropy loss")
    ax.legend(fontsize=PHONE_FONT["legend"] + 2, frameon=False, ncol=2, loc="upper center",
              bbox_to_anchor=(0.5, -0.16), columnspacing=1.0, handlelength=1.6)
    return fig
