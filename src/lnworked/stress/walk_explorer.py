"""Section 6.7's walk explorer: Adam's momentum along one direction, for any momentum and rate.

:func:`walk_explorer` (kernel-free in the book, ipywidgets in Jupyter/Colab)
    A ``b1`` select (no momentum, 0.5, the article's 0.9, 0.99) and a slider for ``eta lam`` in units of
    that momentum's threshold :func:`~lnworked.stress.sharpness.adam_threshold` (from :data:`RATIO_LO` to
    :data:`RATIO_HI`, opening at :data:`RATIO_DEFAULT`). It draws ``|theta_s|`` of
    :func:`~lnworked.stress.sharpness.momentum_walk` over :data:`WALK_STEPS` steps (log scale, dotted at 1,
    where the walk starts; sizes outside ``[WALK_FLOOR, WALK_TOP]`` are left out) and :func:`walk_readouts`
    gives the threshold, ``eta lam``, the two roots ``zeta`` of
    :func:`~lnworked.stress.sharpness.momentum_roots` with their size, and ``|theta|`` at the last step.
"""

from __future__ import annotations

import html
import math

import numpy as np

from lnworked.stress.sharpness import adam_threshold, momentum_roots, momentum_walk

__all__ = ["walk_explorer", "walk_explorer_spec", "walk_readouts", "WALK_READOUT_KEYS", "WALK_B1",
           "WALK_STEPS", "RATIO_LO", "RATIO_HI", "RATIO_STEP", "RATIO_DEFAULT", "WALK_TOP", "WALK_FLOOR"]

#: The momentum select's values; 0.9 is the article's.
WALK_B1 = (0.0, 0.5, 0.9, 0.99)
#: The slider: ``eta lam`` over the threshold, from ``RATIO_LO`` to ``RATIO_HI`` by ``RATIO_STEP``.
RATIO_LO, RATIO_HI, RATIO_STEP = 0.5, 1.5, 0.01
#: Where the slider opens: half the threshold, not 0.8 times it, the setting 6.7's forecast above the explorer
#: asks about (opening there, its table would answer the forecast on the same screen).
RATIO_DEFAULT = 0.5
#: Steps drawn, and the plot's range of ``|theta_s|``.
WALK_STEPS = 100
WALK_TOP, WALK_FLOOR = 1e4, 1e-4
#: Readout keys.
WALK_READOUT_KEYS = ("threshold", "eta-lam", "roots", "size", "last", "verdict")


def _complex_text(z: complex) -> str:
    if abs(z.imag) < 1e-12:
        return f"{z.real:.3g}"
    return f"{z.real:.3g} {'+' if z.imag > 0 else '−'} {abs(z.imag):.3g}i"


def walk_readouts(b1: float, ratio: float, steps: int = WALK_STEPS) -> dict:
    """Readout key -> text for momentum ``b1`` and ``eta lam = ratio`` times its threshold: ``threshold``
    ``(2 + 2 b1) / (1 - b1)``; ``eta-lam``; ``roots`` the two ``zeta`` (a conjugate pair once complex);
    ``size`` the larger ``|zeta|``; ``last`` ``|theta_steps|``; ``verdict`` lands (both roots 0: the first step
    reaches the bottom, as at b1 = 0, eta lam = 1, read 201), settles, swings or grows (the
    larger ``|zeta|`` below, at or above 1, to 1e-9), the overshoots' envelope changing by ``|zeta|`` a step;
    while it settles, the steps it takes to halve, ``ln 2 / ln(1 / |zeta|)`` (read 175: at b1 = 0.99 "settles"
    was read against an envelope still at 1.17 after 100 steps)."""
    ratio = float(ratio)
    if not np.isfinite(ratio) or ratio <= 0:
        raise ValueError(f"ratio: must be a positive finite number, got {ratio}")
    top = adam_threshold(b1)
    eta_lam = ratio * top
    roots = momentum_roots(eta_lam, b1)
    size = float(np.abs(roots[0]))
    last = abs(float(momentum_walk(eta_lam, b1, steps)[-1]))
    if abs(roots[0].imag) > 1e-12:
        root_text = f"{_complex_text(roots[0])}, its conjugate"
    else:
        root_text = f"{_complex_text(roots[0])} and {_complex_text(roots[1])}"
    if size < 1e-12:  # both roots 0 (no momentum, eta lam = 1): the first step lands on the bottom
        verdict = "lands on the bottom in one step and stays there (θ₁ = 0, below the chart)"
    elif size < 1 - 1e-9:
        halving = ("more than halving each step" if size <= 0.5 else
                   f"halving every {math.log(2) / -math.log(size):.3g} steps")
        verdict = f"settles: its overshoots shrink by |ζ| a step, {halving}"
    else:
        verdict = "swings for ever at a fixed size" if size <= 1 + 1e-9 else "grows: its overshoots grow by |ζ| a step"
    return {"threshold": f"{top:.4g}", "eta-lam": f"{eta_lam:.4g}", "roots": root_text, "size": f"{size:.4f}",
            "last": f"{last:.3g}", "verdict": verdict}


def _sizes(b1: float, ratio: float) -> list:
    """``|theta_s|``, ``s = 0 .. WALK_STEPS``, 4 significant digits; ``None`` outside the plot's range."""
    walk = np.abs(momentum_walk(ratio * adam_threshold(b1), b1, WALK_STEPS))
    return [float(f"{v:.4g}") if WALK_FLOOR <= v <= WALK_TOP else None for v in walk]


_B1_TEXT = {0.0: "0 (no momentum)", 0.9: "0.9 (the article's)"}
_X_LABEL = "step s"
_Y_LABEL = "|θₛ| (log scale)"


def walk_explorer_spec():
    """The :class:`~lnworked.explore.Explorer` of the walk: ``b1`` select, ``ratio`` slider."""
    from lnworked.explore import Choice, Explorer, Series, Slider, _key, _readout
    from lnworked.style import PALETTE

    slider = Slider("ratio", "ηΛ / threshold", RATIO_LO, RATIO_HI, RATIO_STEP, RATIO_DEFAULT,
                    echo=lambda r: f"{float(r):.2f} × threshold")
    ratios = slider.values

    def readouts(values):
        return walk_readouts(float(values["b1"]), float(values["ratio"]))

    def table(texts):
        rows = (("threshold (2 + 2β₁)/(1 − β₁)", "threshold"), ("ηΛ", "eta-lam"), ("roots ζ", "roots"),
                ("larger |ζ|", "size"), (f"|θ| after {WALK_STEPS} steps", "last"), ("the walk", "verdict"))
        body = "".join(f"<tr><th>{html.escape(label)}</th><td>{_readout(key, texts[key])}</td></tr>"
                       for label, key in rows)
        return f'<table class="lnw-table">{body}</table>'

    def draw(ax, values, spec):
        sizes = np.array([np.nan if v is None else v for v in _sizes(float(values["b1"]), float(values["ratio"]))])
        ax.semilogy(range(WALK_STEPS + 1), sizes, color=spec.color("walk"), gid="walk", label=spec.series[0].label)
        ax.axhline(1, color=PALETTE["text"], linestyle=":", linewidth=1, gid="start")
        ax.set_ylim(WALK_FLOOR, WALK_TOP)
        ax.set_xlabel(_X_LABEL)
        ax.set_ylabel(_Y_LABEL)

    def grid():
        cells = {}
        for b1 in WALK_B1:
            for i, ratio in enumerate(ratios):
                texts = walk_readouts(b1, ratio)
                cells[f"{_key(b1)}|{i}"] = {"walk": _sizes(b1, ratio),
                                            "readouts": [texts[k] for k in WALK_READOUT_KEYS]}
        return {"readouts": list(WALK_READOUT_KEYS), "steps": list(range(WALK_STEPS + 1)),
                "x_ticks": [0, 20, 40, 60, 80, 100], "y_min": WALK_FLOOR, "y_max": WALK_TOP,
                "x_label": _X_LABEL, "y_label": _Y_LABEL, "cells": cells}

    return Explorer(
        kind="momentum-walk",
        caption=(f"Adam's momentum along one direction, the divisors held fixed, from θ₀ = 1 with m̃₀ = 0: "
                 f"choose the momentum β₁ and move ηΛ in units of that momentum's threshold. The line is "
                 f"|θₛ| over {WALK_STEPS} steps (log scale, dotted: 1, where it starts; sizes above "
                 f"{WALK_TOP:g} or below {WALK_FLOOR:g} are left out); the table gives the threshold, the "
                 f"two roots ζ of ζ² − cζ + β₁ = 0 and the larger one's size, which decides whether the walk "
                 f"settles (below 1), swings (1) or grows (above 1)."),
        aria="A line of the walk's size over the steps, log scale, for the chosen momentum and rate",
        controls=(Choice("b1", "momentum β₁", tuple((b, _B1_TEXT.get(b, _key(b))) for b in WALK_B1), 0.9),
                  slider),
        series=(Series("walk", "|θₛ|", PALETTE["navy"]),),
        readouts=readouts,
        grid=grid,
        table=table,
        draw=draw,
    )


def walk_explorer():
    """The walk: kernel-free HTML in the book build, ipywidgets in a kernel."""
    from lnworked.explore import show_explorer

    return show_explorer(walk_explorer_spec())
