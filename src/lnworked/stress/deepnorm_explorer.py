"""The DeepNorm section's explorer: one committed run per variant and seed.

:func:`deepnorm_explorer` (kernel-free in the book, ipywidgets in Jupyter/Colab)
    Two selects, ``variant`` (:data:`~lnworked.stress.deepnorm.VARIANTS`' names) and ``seed``,
    whose options are exactly the committed runs' (:func:`~lnworked.stress.committed.committed_deepnorm`,
    gathered by :func:`~lnworked.stress.deepnorm.summarise`). It draws that run's training loss
    per step (log scale) with the loss of a uniform guess, ``ln V`` for ``V`` = the vocabulary
    size, and reads out, for that seed, the numbers that :func:`~lnworked.stress.deepnorm.variant_table`
    averages over the seeds: the final loss (:func:`~lnworked.stress.deepnorm.final_loss`, the mean
    of the last 10 losses), the mean branch share ``rho`` over the sublayers at initialisation, and
    the delivered fraction ``delta_loss / linear_delta_loss`` of the first update. Built on
    :mod:`lnworked.explore`'s spec like :func:`lnworked.stress.explorer.sweep_explorer`
    (``data-explorer="deepnorm"``; every run's curve is in the page, computed ahead of time).
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from lnworked.stress.config import StressConfig
from lnworked.stress.explorer import step_ticks

__all__ = ["deepnorm_explorer", "deepnorm_explorer_spec", "deepnorm_readouts", "DEEPNORM_READOUT_KEYS"]

#: Readout keys of :func:`deepnorm_explorer`, in table order.
DEEPNORM_READOUT_KEYS = ("final-loss", "branch-share", "delivered")

_NOT_MEASURED = {"branch-share": "not measured (starts as Post-LN)",
                 "delivered": "not measured (its first rate is smaller)"}


def deepnorm_readouts(summary: dict, variant: str, seed: int, last: int = 10) -> dict:
    """Readout key -> text for one run of :func:`~lnworked.stress.deepnorm.summarise`'s ``summary``:
    ``final-loss`` = mean of the run's last ``last`` losses, ``branch-share`` = mean over sublayers of
    ``rho_i``, ``delivered`` = ``delta_loss / linear_delta_loss`` of the first update
    (:func:`lnworked.explore.format_readout` of each; a quantity the run lacks says so)."""
    from lnworked.explore import format_readout
    from lnworked.stress.deepnorm import final_loss

    if variant not in summary:
        raise ValueError(f"variant: must be one of {tuple(summary)}, got {variant!r}")
    data = summary[variant]
    if seed not in data["seeds"]:
        raise ValueError(f"seed: must be one of {tuple(data['seeds'])} for {variant!r}, got {seed!r}")
    i = data["seeds"].index(seed)
    out = {"final-loss": format_readout(final_loss(data["loss"][i], last)[0])}
    out["branch-share"] = (format_readout(data["branch_share"][i].mean()) if "branch_share" in data
                           else _NOT_MEASURED["branch-share"])
    out["delivered"] = (format_readout(data["delta_loss"][i, 0] / data["linear_delta_loss"][i, 0])
                        if "delta_loss" in data else _NOT_MEASURED["delivered"])
    return out


def _curve(values) -> list:
    """Four significant digits; ``None`` where not finite."""
    return [float(f"{v:.4g}") if math.isfinite(v) else None for v in np.asarray(values, dtype=float)]


@lru_cache(maxsize=4)
def deepnorm_explorer_spec(folder=None):
    """The :class:`~lnworked.explore.Explorer` over the committed DeepNorm runs (or ``folder``'s)."""
    from lnworked.explore import Choice, Explorer, Series, _key, _rows_table
    from lnworked.stress.committed import committed_deepnorm
    from lnworked.stress.deepnorm import summarise
    from lnworked.style import PALETTE

    summary = summarise(committed_deepnorm(folder)[0])
    variants = list(summary)
    seeds = sorted({s for data in summary.values() for s in data["seeds"]})
    missing = [(v, s) for v in variants for s in seeds if s not in summary[v]["seeds"]]
    if missing:
        raise ValueError(f"folder: the DeepNorm runs are not a full grid of variants and seeds; missing {missing}")
    steps = max(data["loss"].shape[1] for data in summary.values())
    vocab = StressConfig().vocab_size
    uniform = math.log(vocab)

    def readouts(values):
        return deepnorm_readouts(summary, values["variant"], int(values["seed"]))

    def table(texts):
        return _rows_table((("final loss (mean of the last 10 steps)", "final-loss", texts["final-loss"]),
                            ("mean branch share ρ at initialisation", "branch-share", texts["branch-share"]),
                            ("first update delivers, ΔL / ⟨g, Δθ⟩", "delivered", texts["delivered"])))

    def _y_range():
        values = [v for data in summary.values() for v in data["loss"].ravel() if math.isfinite(v) and v > 0]
        return 10 ** math.floor(math.log10(min(values))), 10 ** math.ceil(math.log10(max(values + [uniform])))

    def loss(values):
        data = summary[values["variant"]]
        return data["loss"][data["seeds"].index(int(values["seed"]))]

    def draw(ax, values, spec):
        ys = loss(values)
        ax.axhline(uniform, color=PALETTE["text"], linestyle=":", linewidth=1.2, gid="uniform",
                   label=f"uniform guess, ln {vocab}")
        (series,) = spec.series
        ax.semilogy(np.arange(1, len(ys) + 1), ys, color=series.color, label=series.label, gid=series.key)
        ax.set_xlim(1, steps)
        ax.set_ylim(*_y_range())
        ax.set_xlabel("training step")
        ax.set_ylabel("loss (nats, log scale)")

    def grid():
        runs = {}
        for variant in variants:
            for seed in seeds:
                texts = deepnorm_readouts(summary, variant, seed)
                values = {"variant": variant, "seed": seed}
                runs[f"{_key(variant)}|{_key(seed)}"] = {
                    "loss": _curve(loss(values)) + [None] * (steps - len(loss(values))),
                    "readouts": [texts[k] for k in DEEPNORM_READOUT_KEYS]}
        y_min, y_max = _y_range()
        return {"controls": ["variant", "seed"], "readouts": list(DEEPNORM_READOUT_KEYS), "order": ["loss"],
                "steps": list(range(1, steps + 1)), "x_ticks": step_ticks(steps), "y_min": y_min, "y_max": y_max,
                "uniform": round(uniform, 4), "y_label": "loss (nats, log scale)", "runs": runs}

    default = ("Post-LN" if "Post-LN" in variants else variants[0], seeds[0])
    return Explorer(
        kind="deepnorm",
        caption=(f"One stored training run (computed ahead of time) per variant and seed ({steps} steps, "
                 "no warmup unless marked). "
                 "The line is the run's training loss at every step; the dotted horizontal line is the loss "
                 f"of a uniform guess over the {vocab} tokens, ln {vocab} ≈ {uniform:.2f}. Log scale. The table "
                 "gives this seed's final loss, its mean branch share at initialisation and the fraction of "
                 "the first update's predicted decrease that the step delivered."),
        aria="A log-scale line over the training steps: the chosen run's loss, and a dotted line at the "
             "uniform-guess loss",
        controls=(Choice("variant", "variant", tuple((v, v) for v in variants), default[0]),
                  Choice("seed", "seed", tuple((s, str(s)) for s in seeds), default[1])),
        series=(Series("loss", "training loss", PALETTE["post"]),),
        readouts=readouts,
        grid=grid,
        table=table,
        draw=draw,
    )


def deepnorm_explorer(folder=None):
    """The committed DeepNorm runs: kernel-free HTML in the book build, ipywidgets in a kernel."""
    from lnworked.explore import show_explorer

    return show_explorer(deepnorm_explorer_spec(folder))
