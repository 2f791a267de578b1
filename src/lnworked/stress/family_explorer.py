"""The trained family's explorer: one committed run per design, learning rate and seed.

:func:`family_explorer` (kernel-free in the book, ipywidgets in Jupyter/Colab)
    Three selects, ``design`` (:data:`~lnworked.stress.family_runs.VARIANTS`' names), ``rate`` and
    ``seed``, whose options are exactly the committed runs' (:func:`~lnworked.stress.committed.committed_family`,
    gathered by :func:`~lnworked.stress.family_runs.summarise`). It draws that run's training loss
    per step (log scale) with the loss of a uniform guess, ``ln V``, and reads out what
    :func:`~lnworked.stress.family_runs.family_table` computes for that run alone: its final loss
    (the mean of its last ``last`` losses; the chapter's table averages it over the seeds) and the
    largest gradient norm ``||g||`` it logged. Built by
    :func:`lnworked.stress.loss_explorer.stored_loss_explorer` (``data-explorer="family"``).
"""

from __future__ import annotations

import math
from functools import lru_cache

from lnworked.stress.config import StressConfig

__all__ = ["family_explorer", "family_explorer_spec", "family_readouts", "FAMILY_READOUT_KEYS"]

#: Readout keys of :func:`family_explorer`, in table order.
FAMILY_READOUT_KEYS = ("final-loss", "max-gradient-norm")


def family_readouts(summary: dict, variant: str, rate: float, seed: int, last: int = 10) -> dict:
    """Readout key -> text for one run of :func:`~lnworked.stress.family_runs.summarise`'s ``summary``:
    :func:`~lnworked.stress.family_runs.family_table` of that run alone, ``final-loss`` = the mean of
    its last ``last`` losses (``"diverged"`` if it logged a non-finite value) and
    ``max-gradient-norm`` = its largest finite ``||g||``, each :func:`lnworked.explore.format_readout`."""
    from lnworked.explore import format_readout
    from lnworked.stress.family_runs import family_table

    if (variant, rate) not in summary:
        designs = tuple(dict.fromkeys(v for v, _ in summary))
        if variant not in designs:
            raise ValueError(f"variant: must be one of {designs}, got {variant!r}")
        raise ValueError(f"rate: must be one of {tuple(r for v, r in summary if v == variant)}, got {rate!r}")
    data = summary[(variant, rate)]
    if isinstance(seed, bool) or seed not in data["seeds"]:
        raise ValueError(f"seed: must be one of {tuple(data['seeds'])}, got {seed!r}")
    i = data["seeds"].index(seed)
    one = {(variant, rate): {"seeds": [seed], "loss": data["loss"][i:i + 1],
                             "gradient_norm": data["gradient_norm"][i:i + 1]}}
    (row,) = family_table(one, last)
    return {"final-loss": "diverged" if row["diverged"] else format_readout(row["final_loss"]),
            "max-gradient-norm": format_readout(row["max_gradient_norm"])}


@lru_cache(maxsize=4)
def family_explorer_spec(folder=None, last: int = 10):
    """The :class:`~lnworked.explore.Explorer` over the committed family runs (or ``folder``'s)."""
    from lnworked.explore import Choice, Series
    from lnworked.stress.committed import committed_family
    from lnworked.stress.family_runs import summarise
    from lnworked.stress.loss_explorer import stored_loss_explorer
    from lnworked.style import PALETTE

    summary = summarise(committed_family(folder)[0])
    variants = list(dict.fromkeys(v for v, _ in summary))
    rates = sorted({r for _, r in summary})
    seeds = sorted({s for data in summary.values() for s in data["seeds"]})
    runs = {(variant, rate, seed): data["loss"][data["seeds"].index(seed)]
            for (variant, rate), data in summary.items() for seed in data["seeds"]}
    steps = max(data["loss"].shape[1] for data in summary.values())
    vocab = StressConfig().vocab_size
    return stored_loss_explorer(
        "family", runs,
        controls=(Choice("variant", "design", tuple((v, v) for v in variants), variants[0]),
                  Choice("rate", "learning rate", tuple((r, f"{r:g}") for r in rates), rates[0]),
                  Choice("seed", "seed", tuple((s, str(s)) for s in seeds), seeds[0])),
        readouts=lambda values: family_readouts(summary, values["variant"], float(values["rate"]),
                                                int(values["seed"]), last),
        rows=tuple(zip((f"final loss (mean of the last {last} steps)", "largest gradient norm ‖g‖"),
                       FAMILY_READOUT_KEYS)),
        caption=(f"One stored training run (computed ahead of time) per design, learning rate and seed "
                 f"({steps} steps at a constant rate, no warmup). The line is the run's training loss at "
                 "every step; the dotted horizontal line is the loss of a uniform guess over the "
                 f"{vocab} tokens, ln {vocab} ≈ {math.log(vocab):.2f}. Log scale. The table gives this run's "
                 f"final loss (the mean of its last {last} losses; the table above averages it over the seeds) "
                 "and the largest gradient norm it logged."),
        aria="A log-scale line over the training steps: the chosen run's loss, and a dotted line at the "
             "uniform-guess loss",
        series=Series("loss", "training loss", PALETTE["navy"]),
        vocab_size=vocab, name="folder")


def family_explorer(folder=None, last: int = 10):
    """The committed family runs: kernel-free HTML in the book build, ipywidgets in a kernel."""
    from lnworked.explore import show_explorer

    return show_explorer(family_explorer_spec(folder, last))
