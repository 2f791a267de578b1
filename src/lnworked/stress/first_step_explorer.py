"""The why-warmup chapter's explorer of AdamW's first step: where the loss leaves its tangent.

:func:`first_step_explorer` (kernel-free in the book, ipywidgets in Jupyter/Colab)
    Three selects, ``depth`` (blocks), ``seed`` and ``rate`` (the learning rate ``eta``), whose
    options are exactly the stored grid's (:func:`~lnworked.stress.committed.committed_first_step`,
    gathered by :func:`~lnworked.stress.first_step.first_step_curves`), and a slider ``t`` (0.05 .. 1,
    the stored positions > 0). It draws, for both
    placements, the loss change along the first update ``Delta theta = eta u``,

        L(theta_0 + t Delta theta) - L(theta_0) = f(t eta) - f(0),     t = 0, 0.05, ..., 1,

    (Pre-LN violet and solid, Post-LN magenta and dashed) with each one's tangent
    ``t eta <g, u> = t <g, Delta theta>`` dotted and a marker at the slider's ``t``, and reads out per
    placement (:func:`first_step_readouts`) the delivered share of the step stopped at ``t``,
    ``(f(t eta) - f(0)) / (t eta <g, u>)`` in percent (at ``t = 1``: the full step's). The seed
    select's default, :data:`MEAN_OF_SEEDS`, shows the averages the chapter quotes: the curves and
    tangents are means over the seeds, the delivered share is the mean over the seeds of each seed's
    value. (The safe rate, read off the same walks by
    :func:`~lnworked.stress.first_step.safe_rates`, is the chapter's, not the explorer's.) Built on
    :mod:`lnworked.explore`'s spec like :func:`lnworked.stress.deepnorm_explorer.deepnorm_explorer`
    (``data-explorer="first-step"``; every setting's curves are in the page, computed ahead of time).
"""

from __future__ import annotations

import html
import math
from functools import lru_cache

import numpy as np

from lnworked.stress.config import StressConfig, warmup_for
from lnworked.stress.explorer import rounded_curve

__all__ = ["first_step_explorer", "first_step_explorer_spec", "first_step_readouts", "rate_label",
           "FIRST_STEP_READOUT_KEYS", "MEAN_OF_SEEDS"]

#: Readout keys of :func:`first_step_explorer`, in table order (Pre-LN, Post-LN per quantity).
FIRST_STEP_READOUT_KEYS = ("pre-delivered", "post-delivered")
#: The seed select's value for the average over the stored seeds (its default).
MEAN_OF_SEEDS = "mean"

_SHORT = {"Pre-LN": "pre", "Post-LN": "post"}


def rate_label(rate: float, config: StressConfig | None = None) -> str:
    """A rate as the select shows it: ``format(rate, ".3g")``, warmup's first rate and the target marked."""
    config = StressConfig() if config is None else config
    text = format(rate, ".3g")
    if math.isclose(rate, config.learning_rate / warmup_for(config.steps), rel_tol=1e-6):
        return f"{text} (warmup's first rate)"
    if math.isclose(rate, config.learning_rate, rel_tol=1e-6):
        return f"{text} (the article's rate)"
    return text


def _seeds(curves: dict, placement: str, layers: int, seed) -> list:
    """The stored seeds that ``seed`` stands for: all of ``(placement, layers)``'s for :data:`MEAN_OF_SEEDS`."""
    if seed == MEAN_OF_SEEDS:
        mine = sorted(k[2] for k in curves if k[:2] == (placement, layers))
        if not mine:
            raise ValueError(f"layers: no stored case {placement}, {layers} blocks")
        return mine
    if (placement, layers, seed) not in curves:
        raise ValueError(f"layers: no stored case {placement}, {layers} blocks, seed {seed!r}")
    return [seed]


def first_step_readouts(curves: dict, layers: int, seed, rate: float, t: float = 1.0) -> dict:
    """Readout key -> text for one setting, from :func:`~lnworked.stress.first_step.first_step_curves`'
    ``curves``: ``*-delivered`` = ``100 (f(t eta) - f(0)) / (t eta <g, u>)`` to one decimal with " %"
    (0.0, never -0.0). ``t`` is a stored position > 0 (default the full step). With ``seed`` =
    :data:`MEAN_OF_SEEDS`, the delivered share is the mean over the stored seeds of each seed's value (the
    chapter's ``full_step_shares(...).mean()`` at ``t = 1``)."""
    from lnworked.explore import format_percent
    from lnworked.stress.first_step import delivered_share

    out = {}
    for placement, short in _SHORT.items():
        shares = []
        seeds = _seeds(curves, placement, layers, seed)
        for s in seeds:
            c = curves[(placement, layers, s)]
            where = np.flatnonzero(np.isclose(c["rates"], rate, rtol=1e-6, atol=0))
            if where.size != 1:
                raise ValueError(f"rate: must be one of {tuple(float(r) for r in c['rates'])}, got {rate!r}")
            r = int(where[0])
            at = np.flatnonzero(np.isclose(c["positions"], t, rtol=0, atol=1e-9))
            if at.size != 1 or not t > 0:
                raise ValueError(f"t: must be one of {tuple(float(p) for p in c['positions'] if p > 0)}, got {t!r}")
            i = int(at[0])
            shares.append(float(delivered_share(c["loss"], c["loss_after"][r, i], c["slope"], t * rate)))
        out[f"{short}-delivered"] = format_percent(np.mean(shares))
    return out


def _seed(value):
    """A seed control's value: :data:`MEAN_OF_SEEDS` as it is, a seed as an ``int``."""
    return MEAN_OF_SEEDS if value == MEAN_OF_SEEDS else int(value)


def _seed_list(seeds) -> str:
    """``7, 8, 9``: the seeds in words, as the seed option names them."""
    return ", ".join(str(s) for s in seeds)


_LABELS = {"pre": "Pre-LN", "post": "Post-LN", "pre-tangent": "Pre-LN tangent", "post-tangent": "Post-LN tangent"}
_DASH = {"post": "6 4", "pre-tangent": "2 3", "post-tangent": "2 3"}  # SVG patterns; Pre-LN solid
_MPL_STYLE = {"pre": "-", "post": "--", "pre-tangent": ":", "post-tangent": ":"}
_X_LABEL = "position t along the step (1 = the full step)"
_Y_LABEL = "L(θ₀ + tΔθ) − L(θ₀) (nats)"


@lru_cache(maxsize=4)
def first_step_explorer_spec(folder=None):
    """The :class:`~lnworked.explore.Explorer` over the stored first-step grid (or ``folder``'s)."""
    from lnworked.explore import Choice, Explorer, Series, Slider, _key, _readout
    from lnworked.stress.committed import committed_first_step
    from lnworked.stress.first_step import first_step_curves
    from lnworked.style import PALETTE

    rows = committed_first_step(folder)[0]
    curves = first_step_curves(rows)
    depths = sorted({k[1] for k in curves})
    seeds = sorted({k[2] for k in curves})
    missing = [(p, d, s) for p in _SHORT for d in depths for s in seeds if (p, d, s) not in curves]
    if missing:
        raise ValueError(f"folder: the first-step grid is not full over placements, depths and seeds; missing {missing}")
    any_case = next(iter(curves.values()))
    rates, positions = [float(r) for r in any_case["rates"]], [float(t) for t in any_case["positions"]]
    config = StressConfig()

    def lines(values) -> dict:
        """Series key -> the values drawn over ``positions``: ``f(t eta) - f(0)`` and ``t eta <g, u>``."""
        out = {}
        rate = float(values["rate"])
        for placement, short in _SHORT.items():
            cases = [curves[(placement, int(values["depth"]), s)] for s in _seeds(curves, placement, int(values["depth"]),
                                                                                  _seed(values["seed"]))]
            r = [int(np.flatnonzero(np.isclose(c["rates"], rate, rtol=1e-6, atol=0))[0]) for c in cases]
            out[short] = np.mean([c["loss_after"][i] - c["loss"] for c, i in zip(cases, r)], axis=0)
            out[f"{short}-tangent"] = np.mean([c["positions"] * rate * c["slope"] for c in cases], axis=0)
        return out

    def readouts(values):
        return first_step_readouts(curves, int(values["depth"]), _seed(values["seed"]), float(values["rate"]),
                                   float(values["t"]))

    def table(texts):
        head = "".join(f"<th>{name}</th>" for name in ("", *_SHORT))
        body = "".join(
            f"<tr><th>{html.escape(label)}</th>"
            + "".join(f"<td>{_readout(f'{short}-{key}', texts[f'{short}-{key}'])}</td>" for short in _SHORT.values())
            + "</tr>"
            for label, key in (("the step to t delivers, of its tangent's decrease", "delivered"),))
        return f'<table class="lnw-table"><tr>{head}</tr>{body}</table>'

    def draw(ax, values, spec):
        for key, ys in lines(values).items():
            ax.plot(positions, ys, _MPL_STYLE[key], color=spec.color(key), label=spec.series[
                [s.key for s in spec.series].index(key)].label, gid=key, linewidth=1.4 if "tangent" in key else 2.2)
        ax.axhline(0, color=PALETTE["text"], linewidth=0.8, gid="zero")
        ax.axvline(float(values["t"]), color=PALETTE["text"], linestyle=(0, (4, 3)), linewidth=1, gid="t")
        ax.set_xlim(0, 1)
        ax.set_xlabel(_X_LABEL)
        ax.set_ylabel(_Y_LABEL)

    def grid():
        cells = {}
        for depth in depths:
            for seed in (MEAN_OF_SEEDS, *seeds):
                for rate in rates:
                    values = {"depth": depth, "seed": seed, "rate": rate}
                    by_t = [readouts({**values, "t": t}) for t in slider.values]
                    cells[f"{_key(depth)}|{_key(seed)}|{_key(rate)}"] = {
                        **{k: rounded_curve(v) for k, v in lines(values).items()},
                        "readouts": [[texts[k] for k in FIRST_STEP_READOUT_KEYS] for texts in by_t]}
        return {"controls": ["depth", "seed", "rate"], "readouts": list(FIRST_STEP_READOUT_KEYS),
                "t_offset": positions.index(slider.values[0]),
                "order": list(_LABELS), "positions": positions,
                "x_ticks": [0, 0.25, 0.5, 0.75, 1], "dash": _DASH, "width": {"pre-tangent": "1.5", "post-tangent": "1.5"},
                "x_label": _X_LABEL, "y_label": _Y_LABEL, "cells": cells}

    default_rate = min(rates, key=lambda r: abs(math.log(r / config.learning_rate)))
    step = positions[1] - positions[0]
    slider = Slider("t", "position t", round(positions[1], 12), round(positions[-1], 12), round(step, 12), 1.0)
    if [round(v, 9) for v in slider.values] != [round(p, 9) for p in positions[1:]]:
        raise ValueError("folder: the stored positions are not evenly spaced from 0 to 1")
    return Explorer(
        kind="first-step",
        caption=("The loss along AdamW's first step from the initial weights, L(θ₀ + tΔθ) − L(θ₀), from the start "
                 "(t = 0) to the full step (t = 1), at the chosen depth, seed and learning rate, on the first "
                 "batch: Pre-LN violet and solid, Post-LN magenta and dashed, each beside its dotted tangent "
                 "t⟨g, Δθ⟩, the change the gradient predicts. The default seed option, 'mean of seeds "
                 f"{_seed_list(seeds)}', shows the averages the text quotes. Where a curve leaves its tangent, the "
                 "step has stopped doing what the gradient promised."),
        aria="Four lines over the position along the first step: the loss change of Pre-LN and of Post-LN, "
             "each with its dotted tangent",
        controls=(Choice("depth", "depth (blocks)", tuple((d, str(d)) for d in depths), 12 if 12 in depths else depths[0]),
                  Choice("seed", "seed", ((MEAN_OF_SEEDS, f"mean of seeds {_seed_list(seeds)}"),
                                          *((s, str(s)) for s in seeds)), MEAN_OF_SEEDS),
                  Choice("rate", "learning rate", tuple((r, rate_label(r, config)) for r in rates), default_rate),
                  slider),
        series=tuple(Series(key, label, PALETTE["pre" if key.startswith("pre") else "post"])
                     for key, label in _LABELS.items()),
        readouts=readouts,
        grid=grid,
        table=table,
        draw=draw,
    )


def first_step_explorer(folder=None):
    """The stored first steps: kernel-free HTML in the book build, ipywidgets in a kernel."""
    from lnworked.explore import show_explorer

    return show_explorer(first_step_explorer_spec(folder))
