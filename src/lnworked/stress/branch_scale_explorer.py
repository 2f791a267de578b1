"""The DeepNorm section's dose-response explorer: one slider for the branch scale, three links of the chain.

:func:`branch_scale_explorer` (kernel-free in the book, ipywidgets in Jupyter/Colab)
    A slider over the stored branch scales ``kappa`` (:func:`~lnworked.stress.committed.committed_branch_scale`,
    position 0 = ``kappa = 1``, plain Post-LN; each step right multiplies ``kappa`` by the same ratio, down
    past DeepNorm's), a ``seed`` select (default :data:`MEAN_OF_SEEDS`) and a ``rate`` select (the article's
    rate; warmup's first rate, the control). It draws, against ``kappa`` (log axis), the three links of
    :func:`~lnworked.stress.branch_scale.branch_scale_summary` for Post-LN: the mean branch share ``rho``,
    the relative change of the logits under the first AdamW step and the share of its tangent's decrease
    that step delivers, with Pre-LN's values at ``kappa = 1`` as dotted reference lines and a marker at the
    slider's ``kappa``; :func:`branch_scale_readouts` gives the table and a one-sentence readout. With
    :data:`MEAN_OF_SEEDS` every quantity is the mean over the seeds of each seed's value.
"""

from __future__ import annotations

import html
import math
from functools import lru_cache

import numpy as np

from lnworked.stress.config import StressConfig

__all__ = ["branch_scale_explorer", "branch_scale_explorer_spec", "branch_scale_readouts",
           "BRANCH_SCALE_READOUT_KEYS", "LINKS", "MEAN_OF_SEEDS"]

#: The seed select's value for the average over the stored seeds (its default).
MEAN_OF_SEEDS = "mean"
#: The three links, summary key -> label.
LINKS = {"branch_share": "branch share ρ", "relative": "logit change", "delivered": "delivered share"}
#: Readout keys: Post-LN at the slider's kappa, then Pre-LN at kappa = 1, then the sentence.
BRANCH_SCALE_READOUT_KEYS = ("post-rho", "post-relative", "post-delivered", "pre-rho", "pre-relative",
                             "pre-delivered", "sentence")
_SHORT = {"branch_share": "rho", "relative": "relative", "delivered": "delivered"}
_COLORS = {"branch_share": "navy", "relative": "orange", "delivered": "post"}


def _pick(case: dict, seed) -> np.ndarray:
    """``{link: values over kappa}``: one seed's, or the mean over seeds of :data:`MEAN_OF_SEEDS`."""
    if seed == MEAN_OF_SEEDS:
        return {k: case[k].mean(axis=0) for k in LINKS}
    if seed not in case["seeds"]:
        raise ValueError(f"seed: must be {MEAN_OF_SEEDS!r} or one of {tuple(case['seeds'])}, got {seed!r}")
    return {k: case[k][case["seeds"].index(seed)] for k in LINKS}


def _case(summary: dict, placement: str, rate: float) -> dict:
    for (p, r), case in summary.items():
        if p == placement and math.isclose(r, rate, rel_tol=1e-6):
            return case
    rates = sorted({r for p, r in summary if p == placement})
    raise ValueError(f"rate: must be one of {tuple(rates)}, got {rate!r}")


def branch_scale_readouts(summary: dict, kappa: float, seed, rate: float) -> dict:
    """Readout key -> text from :func:`~lnworked.stress.branch_scale.branch_scale_summary`'s ``summary``:
    ``post-*`` Post-LN at the stored ``kappa``, ``pre-*`` Pre-LN at ``kappa = 1``; ``*-rho`` the mean branch
    share and ``*-relative`` RMS(Delta logits) / RMS(logits), as :func:`~lnworked.explore.format_readout` writes them, ``*-delivered``
    ``100 (L_1 - L_0) / <g, Delta theta>`` to one decimal with " %"; ``sentence`` says the three in words."""
    from lnworked.explore import format_percent, format_readout

    post, pre = _case(summary, "Post-LN", rate), _case(summary, "Pre-LN", rate)
    where = np.flatnonzero(np.isclose(post["scales"], kappa, rtol=1e-6, atol=0))
    if where.size != 1:
        raise ValueError(f"kappa: must be one of {tuple(float(k) for k in post['scales'])}, got {kappa!r}")
    at = {k: float(v[where[0]]) for k, v in _pick(post, seed).items()}
    ref = {k: float(v[0]) for k, v in _pick(pre, seed).items()}
    out = {}
    for prefix, values in (("post", at), ("pre", ref)):
        out[f"{prefix}-rho"] = format_readout(values["branch_share"])
        out[f"{prefix}-relative"] = format_readout(values["relative"])
        out[f"{prefix}-delivered"] = format_percent(values["delivered"])
    out["sentence"] = (f"At κ = {kappa:.3g}, Post-LN's mean branch share is {out['post-rho']}, the first "
                       f"step moves its logits by {out['post-relative']} of their RMS and delivers "
                       f"{out['post-delivered']} of the decrease its tangent predicts "
                       f"(Pre-LN: {out['pre-rho']}, {out['pre-relative']}, {out['pre-delivered']}).")
    return out


def _kappa_text(kappa: float, deepnorm: float) -> str:
    if kappa == 1.0:
        return "1 (plain Post-LN)"
    if math.isclose(kappa, deepnorm, rel_tol=1e-6):
        return f"{kappa:.3f} (DeepNorm's)"
    return f"{kappa:.3f}"


def _rate_label(rate: float) -> str:
    from lnworked.stress.first_step_explorer import rate_label

    return rate_label(rate)


@lru_cache(maxsize=4)
def branch_scale_explorer_spec(folder=None):
    """The :class:`~lnworked.explore.Explorer` over the stored branch-scale rows (or ``folder``'s)."""
    from lnworked.explore import Choice, Explorer, Series, Slider, _key, _readout
    from lnworked.placements import deepnorm_constants
    from lnworked.stress.branch_scale import branch_scale_summary
    from lnworked.stress.committed import committed_branch_scale
    from lnworked.style import PALETTE

    summary = branch_scale_summary(committed_branch_scale(folder)[0])
    rates = sorted({r for p, r in summary if p == "Post-LN"}, reverse=True)
    first = _case(summary, "Post-LN", rates[0])
    scales, seeds = [float(k) for k in first["scales"]], first["seeds"]
    deepnorm = deepnorm_constants(StressConfig().layers)[1]
    positions = list(range(len(scales)))

    def kappa(values) -> float:
        return scales[int(values["kappa"])]

    def seed(values):
        return MEAN_OF_SEEDS if values["seed"] == MEAN_OF_SEEDS else int(values["seed"])

    def readouts(values):
        return branch_scale_readouts(summary, kappa(values), seed(values), float(values["rate"]))

    def table(texts):
        head = "<tr><th></th><th>Post-LN at κ</th><th>Pre-LN</th></tr>"
        body = "".join(f"<tr><th>{html.escape(label)}</th><td>{_readout(f'post-{key}', texts[f'post-{key}'])}</td>"
                       f"<td>{_readout(f'pre-{key}', texts[f'pre-{key}'])}</td></tr>"
                       for label, key in (("mean branch share ρ", "rho"),
                                          ("RMS change of the logits / their RMS", "relative"),
                                          ("the first step delivers, of its tangent's decrease", "delivered")))
        return (f'<table class="lnw-table">{head}{body}</table>'
                f'<p>{_readout("sentence", texts["sentence"])}</p>')

    def lines(values):
        chosen = float(values["rate"])
        return _pick(_case(summary, "Post-LN", chosen), seed(values)), \
            _pick(_case(summary, "Pre-LN", chosen), seed(values))

    def draw(ax, values, spec):
        post, pre = lines(values)
        for key in LINKS:
            color = spec.color(key)
            ax.semilogy(positions, np.where(post[key] > 0, post[key], np.nan), color=color, gid=key,
                        label=LINKS[key], marker="o", markersize=3)
            ax.axhline(pre[key][0], color=color, linestyle=":", linewidth=1.2, gid=f"pre-{key}")
        ax.axvline(int(values["kappa"]), color=PALETTE["text"], linestyle=(0, (4, 3)), linewidth=1, gid="kappa")
        ax.set_xticks(positions, [f"{k:.2g}" for k in scales])
        ax.set_xlabel(_X_LABEL)
        ax.set_ylabel(_Y_LABEL)

    def _values(xs):
        return [float(f"{v:.4g}") if math.isfinite(v) and v > 0 else None for v in np.asarray(xs, float)]

    def grid():
        cells, low, high = {}, math.inf, 0.0
        for r in rates:
            for s in (MEAN_OF_SEEDS, *seeds):
                values = {"seed": s, "rate": r}
                post, pre = lines(values)
                for v in (*post.values(), *(p[:1] for p in pre.values())):
                    v = np.asarray(v)[np.asarray(v) > 0]
                    if v.size:
                        low, high = min(low, float(v.min())), max(high, float(v.max()))
                texts = [readouts({**values, "kappa": k}) for k in positions]
                cells[f"{_key(s)}|{_key(r)}"] = {
                    **{k: _values(post[k]) for k in LINKS},
                    **{f"pre-{k}": float(f"{pre[k][0]:.4g}") for k in LINKS},
                    "readouts": [[t[k] for k in BRANCH_SCALE_READOUT_KEYS] for t in texts]}
        deep = min(positions, key=lambda i: abs(math.log(scales[i] / deepnorm)))
        ticks = sorted({0, deep, positions[-1]})
        return {"controls": ["seed", "rate"], "readouts": list(BRANCH_SCALE_READOUT_KEYS), "links": list(LINKS),
                "positions": positions, "x_ticks": [{"v": i, "label": format(scales[i], ".2g")} for i in ticks],
                "y_min": 10 ** math.floor(math.log10(low)), "y_max": 10 ** math.ceil(math.log10(high)),
                "x_label": _X_LABEL, "y_label": _Y_LABEL, "pre_label": "Pre-LN, κ = 1 (dotted)",
                "pre_color": PALETTE["text"], "cells": cells}

    slider = Slider("kappa", "branch scale κ", 0, positions[-1], 1, 0,
                    echo=lambda i: _kappa_text(scales[int(i)], deepnorm))
    return Explorer(
        kind="branch-scale",
        caption=("Post-LN at the article's depth with its branch weights (the attention's value and output "
                 "projections, both MLP matrices) multiplied by κ at initialisation, α = 1, no warmup: move "
                 "the slider to lower κ from 1 (plain Post-LN) past DeepNorm's value. The three lines are the "
                 "three links of the chain, measured at the initial weights on the first batch: the mean "
                 "branch share ρ over the sublayers, how far the first AdamW step moves the logits (RMS "
                 "change over RMS) and the share of its tangent's predicted decrease that the step delivers. "
                 "Dotted: Pre-LN's values at κ = 1. Log scales; κ falls to the right. The rate select offers "
                 "warmup's first rate as a control (there the step is small and delivers nearly all its "
                 f"promise at every κ). Seeds {', '.join(str(s) for s in seeds)}; computed ahead of time."),
        aria="Three lines over the branch scale κ, log scales: Post-LN's mean branch share, its logits' "
             "relative change and the delivered share of its first step, with Pre-LN's values dotted and "
             "a marker at the chosen κ",
        controls=(slider,
                  Choice("seed", "seed", ((MEAN_OF_SEEDS, f"mean of seeds {', '.join(str(s) for s in seeds)}"),
                                          *((s, str(s)) for s in seeds)), MEAN_OF_SEEDS),
                  Choice("rate", "learning rate", tuple((r, _rate_label(r)) for r in rates), rates[0])),
        series=tuple(Series(key, label, PALETTE[_COLORS[key]]) for key, label in LINKS.items()),
        readouts=readouts,
        grid=grid,
        table=table,
        draw=draw,
    )


_X_LABEL = "branch scale κ (log scale, falling →)"
_Y_LABEL = "value (log scale)"


def branch_scale_explorer(folder=None):
    """The stored branch-scale measurement: kernel-free HTML in the book build, ipywidgets in a kernel."""
    from lnworked.explore import show_explorer

    return show_explorer(branch_scale_explorer_spec(folder))
