"""Figures of the sweep and the probes: stability map, per-layer gradient norms, seed spread.

House style from :mod:`lnworked.style` (white background, titles, labelled axes).
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.colors import LogNorm

from lnworked.style import FONT, PALETTE, new_figure

__all__ = ["stability_map", "stability_grid", "layer_gradient_figure", "seed_figure"]


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


def stability_map(rows, threshold: float = 1.0):
    """One heat map per variant: median final loss over seeds, per depth and learning rate.

    Cells are annotated with the value; ``x`` marks a cell whose runs diverged; the colour
    scale is logarithmic. ``threshold`` (loss) splits the annotation colour for contrast.
    """
    variants = list(dict.fromkeys(r["variant"] for r in rows))
    fig, axes = new_figure(4.2 * len(variants), 3.8, ncols=len(variants))
    axes = np.atleast_1d(axes)
    finite = [r["final_loss"] for r in rows if np.isfinite(r["final_loss"]) and r["final_loss"] > 0]
    norm = LogNorm(vmin=min(finite), vmax=max(finite))
    for ax, variant in zip(axes, variants):
        depths, rates, grid = stability_grid(rows, variant)
        image = ax.imshow(np.where(np.isfinite(grid), grid, np.nan), cmap="viridis", norm=norm,
                          origin="lower", aspect="auto")
        for i in range(len(depths)):
            for j in range(len(rates)):
                value = grid[i, j]
                text = "x" if not np.isfinite(value) else f"{value:.2g}"
                ax.text(j, i, text, ha="center", va="center", fontsize=FONT["annotation"] - 1,
                        color="white" if not np.isfinite(value) or value > threshold else "black")
        ax.set_xticks(range(len(rates)), [f"{r:g}" for r in rates])
        ax.set_yticks(range(len(depths)), [str(d) for d in depths])
        ax.set_xlabel("learning rate", fontsize=FONT["label"])
        ax.set_ylabel("layers", fontsize=FONT["label"])
        ax.set_title(variant, fontsize=FONT["title"])
        ax.grid(False)
    fig.colorbar(image, ax=list(axes), label="final loss (median over seeds)")
    return fig


def layer_gradient_figure(rows):
    """Gradient norm of each block at initialisation against its position, Pre-LN vs Post-LN."""
    fig, ax = new_figure(7, 4)
    depths = sorted({r["layers"] for r in rows})
    shades = np.linspace(0.45, 1.0, len(depths))
    for depth, shade in zip(depths, shades):
        for pre_norm, color, style in ((True, PALETTE["pre"], "-"), (False, PALETTE["post"], "--")):
            mine = [r for r in rows if r["layers"] == depth and r["pre_norm"] == pre_norm]
            ax.plot([r["layer"] for r in mine], [r["gradient_norm"] for r in mine], style, color=color,
                    alpha=shade, linewidth=2, marker="o", markersize=3,
                    label=f"{'Pre-LN' if pre_norm else 'Post-LN'}, {depth} layers")
    ax.set_yscale("log")
    ax.set_xlabel("block (1 = next to the input)", fontsize=FONT["label"])
    ax.set_ylabel("gradient norm of the block's parameters", fontsize=FONT["label"])
    ax.set_title("Gradient norm per block at initialisation", fontsize=FONT["title"])
    ax.legend(fontsize=FONT["legend"] - 2, frameon=False, ncol=2)
    return fig


def seed_figure(results_by_seed: dict):
    """Loss curves of one run kind under several seeds: ``{seed: RunResult}``; one colour per
    seed (matplotlib's ``tab10`` cycle: distinct for up to ten seeds), legend beside the axes."""
    fig, ax = new_figure(8, 4)
    colors = plt.get_cmap("tab10").colors
    for k, (seed, run) in enumerate(results_by_seed.items()):
        ax.plot(run.steps, run.loss, color=colors[k % len(colors)], linewidth=1.3, label=f"seed {seed}")
    ax.set_yscale("log")
    ax.set_xlabel("training step", fontsize=FONT["label"])
    ax.set_ylabel("cross-entropy loss", fontsize=FONT["label"])
    name = next(iter(results_by_seed.values())).spec.name
    ax.set_title(f"{name}, several seeds", fontsize=FONT["title"])
    ax.legend(fontsize=FONT["legend"] - 1, frameon=False, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return fig
