"""An explorer over stored training runs: one select per setting, one run's loss curve per choice.

:func:`stored_loss_explorer` builds the :class:`~lnworked.explore.Explorer` that chapter 7's
DeepNorm runs (:mod:`lnworked.stress.deepnorm_explorer`) and chapter 8's trained family
(:mod:`lnworked.stress.family_explorer`) share: given ``runs``, a mapping from one value per
select (in the selects' order) to that run's training loss per step, it draws the chosen run's
loss (log scale) with the loss of a uniform guess over the vocabulary, ``ln V``, and shows the
caller's readouts in a two-column table. The kernel-free form (``RENDER.training`` in
``lnworked/data/explore.js``) looks the run up in a grid keyed by the selects' values joined
with ``"|"``; every curve is in the page, rounded to 4 significant digits.
"""

from __future__ import annotations

import itertools
import math
from typing import Callable, Mapping, Sequence

import numpy as np

from lnworked.stress.config import StressConfig
from lnworked.stress.explorer import rounded_curve, step_ticks

__all__ = ["stored_loss_explorer", "log_range"]

Y_LABEL = "loss (nats, log scale)"


def log_range(curves, uniform: float) -> tuple[float, float]:
    """``(10^floor(log10 min), 10^ceil(log10 max))`` over the curves' finite positive values and ``uniform``."""
    values = [v for ys in curves for v in np.ravel(ys) if math.isfinite(v) and v > 0]
    return 10 ** math.floor(math.log10(min(values))), 10 ** math.ceil(math.log10(max(values + [uniform])))


def stored_loss_explorer(kind: str, runs: Mapping[tuple, Sequence[float]], controls: tuple, readouts: Callable,
                         rows: Sequence[tuple[str, str]], caption: str, aria: str, series,
                         vocab_size: int | None = None, name: str = "runs"):
    """The :class:`~lnworked.explore.Explorer` of kind ``kind`` over ``runs``.

    ``runs`` maps ``(value of controls[0], value of controls[1], ...)`` to the run's losses at steps
    ``1, 2, ...``; ``controls`` are :class:`~lnworked.explore.Choice` selects whose values must be a
    full grid of ``runs`` (else ValueError naming ``name``); ``readouts(values)`` gives readout key
    -> text for a dict of the controls' values; ``rows`` are ``(header, readout key)`` in table
    order; ``series`` the drawn line's :class:`~lnworked.explore.Series`. The dotted reference line
    is ``ln vocab_size`` (default the stress test's vocabulary)."""
    from lnworked.explore import Explorer, _key, _rows_table
    from lnworked.style import PALETTE

    names = [c.name for c in controls]
    missing = [k for k in itertools.product(*(c.values for c in controls)) if k not in runs]
    if missing:
        raise ValueError(f"{name}: the runs are not a full grid of {', '.join(names)}; missing {missing}")
    steps = max(len(ys) for ys in runs.values())
    vocab = StressConfig().vocab_size if vocab_size is None else vocab_size
    uniform = math.log(vocab)

    def loss(values):
        return runs[tuple(values[n] for n in names)]

    def table(texts):
        return _rows_table(tuple((head, key, texts[key]) for head, key in rows))

    def draw(ax, values, spec):
        ys = loss(values)
        ax.axhline(uniform, color=PALETTE["text"], linestyle=":", linewidth=1.2, gid="uniform",
                   label=f"uniform guess, ln {vocab}")
        (line,) = spec.series
        ax.semilogy(np.arange(1, len(ys) + 1), ys, color=line.color, label=line.label, gid=line.key)
        ax.set_xlim(1, steps)
        ax.set_ylim(*log_range(runs.values(), uniform))
        ax.set_xlabel("training step")
        ax.set_ylabel(Y_LABEL)

    def grid():
        keys = [key for _, key in rows]
        out = {}
        for combination in itertools.product(*(c.values for c in controls)):
            values = dict(zip(names, combination))
            texts = readouts(values)
            out["|".join(_key(v) for v in combination)] = {"loss": rounded_curve(loss(values), steps),
                                                          "readouts": [texts[k] for k in keys]}
        y_min, y_max = log_range(runs.values(), uniform)
        return {"controls": names, "readouts": keys, "order": [series.key],
                "steps": list(range(1, steps + 1)), "x_ticks": step_ticks(steps), "y_min": y_min, "y_max": y_max,
                "uniform": round(uniform, 4), "y_label": Y_LABEL, "runs": out}

    return Explorer(kind=kind, caption=caption, aria=aria, controls=tuple(controls), series=(series,),
                    readouts=readouts, grid=grid, table=table, draw=draw)
