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
    (``data-explorer="deepnorm"``; every run's curve is in the page, computed ahead of time), by
    :func:`lnworked.stress.loss_explorer.stored_loss_explorer`.
"""

from __future__ import annotations

import math
from functools import lru_cache

from lnworked.stress.config import StressConfig

__all__ = ["deepnorm_explorer", "deepnorm_explorer_spec", "deepnorm_readouts", "DEEPNORM_READOUT_KEYS"]

#: Readout keys of :func:`deepnorm_explorer`, in table order.
DEEPNORM_READOUT_KEYS = ("final-loss", "branch-share", "delivered")

_NOT_MEASURED = {"branch-share": "not measured (starts as Post-LN)",
                 "delivered": "not measured (its first rate is smaller)"}


def deepnorm_readouts(summary: dict, variant: str, seed: int, last: int = 10) -> dict:
    """Readout key -> text for one run of :func:`~lnworked.stress.deepnorm.summarise`'s ``summary``:
    ``final-loss`` = mean of the run's last ``last`` losses, ``branch-share`` = mean over sublayers of
    ``rho_i`` (:func:`lnworked.explore.format_readout` of each), ``delivered`` = ``delta_loss /
    linear_delta_loss`` of the first update as a percentage (:func:`lnworked.explore.format_percent`);
    a quantity the run lacks says so."""
    from lnworked.explore import format_percent, format_readout
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
    out["delivered"] = (format_percent(data["delta_loss"][i, 0] / data["linear_delta_loss"][i, 0])
                        if "delta_loss" in data else _NOT_MEASURED["delivered"])
    return out


@lru_cache(maxsize=4)
def deepnorm_explorer_spec(folder=None):
    """The :class:`~lnworked.explore.Explorer` over the committed DeepNorm runs (or ``folder``'s)."""
    from lnworked.explore import Choice, Series
    from lnworked.stress.committed import committed_deepnorm
    from lnworked.stress.deepnorm import summarise
    from lnworked.stress.loss_explorer import stored_loss_explorer
    from lnworked.style import PALETTE

    summary = summarise(committed_deepnorm(folder)[0])
    variants = list(summary)
    seeds = sorted({s for data in summary.values() for s in data["seeds"]})
    runs = {(variant, seed): data["loss"][data["seeds"].index(seed)]
            for variant, data in summary.items() for seed in data["seeds"]}
    steps = max(data["loss"].shape[1] for data in summary.values())
    vocab = StressConfig().vocab_size
    return stored_loss_explorer(
        "deepnorm", runs,
        controls=(Choice("variant", "variant", tuple((v, v) for v in variants),
                         "Post-LN" if "Post-LN" in variants else variants[0]),
                  Choice("seed", "seed", tuple((s, str(s)) for s in seeds), seeds[0])),
        readouts=lambda values: deepnorm_readouts(summary, values["variant"], int(values["seed"])),
        rows=tuple(zip(("final loss (mean of the last 10 steps)", "mean branch share ρ at initialisation",
                        "first update delivers, of its promise ΔL / ⟨g, Δθ⟩"), DEEPNORM_READOUT_KEYS)),
        caption=(f"One stored training run (computed ahead of time) per variant and seed ({steps} steps, "
                 "no warmup unless marked). "
                 "The line is the run's training loss at every step; the dotted horizontal line is the loss "
                 f"of a uniform guess over the {vocab} tokens, ln {vocab} ≈ {math.log(vocab):.2f}. Log scale. "
                 "The table gives this seed's final loss, its mean branch share at initialisation and the "
                 "share of the first update's promised decrease that the step delivered."),
        aria="A log-scale line over the training steps: the chosen run's loss, and a dotted line at the "
             "uniform-guess loss",
        series=Series("loss", "training loss", PALETTE["post"]),
        vocab_size=vocab, name="folder")


def deepnorm_explorer(folder=None):
    """The committed DeepNorm runs: kernel-free HTML in the book build, ipywidgets in a kernel."""
    from lnworked.explore import show_explorer

    return show_explorer(deepnorm_explorer_spec(folder))
