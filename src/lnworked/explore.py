"""Interactive explorers: one spec each, rendered as ipywidgets live and as kernel-free HTML.

Four explorers, each one call for a chapter (``display(depth_explorer())``):

- :func:`layer_norm_explorer` — LayerNorm of a vector with γ, β, ε, Post-LN
  ``LN(x + F(x))`` beside Pre-LN ``x + F(LN(x))`` for a sublayer ``F`` that is a small
  seeded random GELU MLP (:func:`ln_sublayer`) or the identity ``F(u) = u`` (worked example
  Ex 2, where Post-LN shows ``LN(2x)``); γ and β are the same for every component.
- :func:`depth_explorer` — the scalar toy: the gradient factor reaching the input after
  ``L`` layers, Post-LN ``f^L`` for a per-layer factor ``f`` against Pre-LN ``(1 + F')^L``
  for a branch slope ``F'`` that may be negative (log scale), and the depths at which each
  falls under 0.01.
- :func:`random_stack_explorer` — a seeded random stack of blocks (chapter 3's main
  picture): the gradient's length at each layer relative to the top, or each block's
  backward gain, for every seed (:func:`random_stack_readouts`).
- :func:`residual_explorer` — the Pre-LN residual stream after ``N`` independent
  additions of branch variance ``v``: ``Var = L v`` and ``std = sqrt(L v)``.

One spec per explorer
    Each explorer is an :class:`Explorer` (:data:`EXPLORERS`): its controls
    (:class:`Slider` / :class:`Choice`: name, label, range and step or options, default),
    its plotted series (:class:`Series`: key, label, colour from the house palette
    :data:`lnworked.style.PALETTE`) and its value function ``readouts(values)``, which calls
    the library. Both forms are rendered from that one spec: the static form's JSON grid is
    the value function at every setting of the controls, and the live form calls it on
    each change. A slider's settings are ``lo, lo + step, ..., hi`` (:attr:`Slider.values`);
    the live form snaps to them, so both forms show the value of the same setting.

Which form a call returns is decided by :func:`is_static_build`: the book build sets
``LNWORKED_STATIC_BUILD=1`` (see ``book/_ext/lnworked_build.py``), so a chapter executed
for the HTML never emits ipywidgets (whose Python callbacks would be dead there and whose
JavaScript would come from a CDN).

Live form (a kernel: Jupyter, Colab)
    An ``ipywidgets.VBox`` of the spec's controls (``IntSlider`` / ``FloatSlider`` /
    ``Dropdown``), a ``widgets.HTML`` readout table and a ``widgets.Image`` holding a
    house-style matplotlib plot (:func:`lnworked.style.figure_png`), updated by ``observe``.
    For tests and curious readers the box carries ``lnw_spec``, ``lnw_controls`` (name ->
    widget), ``lnw_readout`` (the HTML widget), ``lnw_figure`` (the matplotlib ``Figure``
    of the current setting), ``lnw_image`` and ``lnw_values`` (readout key -> text).

Static form (the built book): an ``IPython.display.HTML`` object
    No kernel, no network: plain HTML controls, an inline SVG and the vanilla JavaScript
    of ``lnworked/data/explore.js`` (inlined, defined once per page as
    ``window.lnwExplore``). Every value shown was computed by this library at build time
    and sits in a JSON grid inside the explorer; the script only looks values up and
    draws them. The grid covers every setting of every control, so each control
    responds. Grid sizes (compact JSON): layer-norm about 780 KB, depth about 250 KB,
    random-stack about 200 KB, residual about 23 KB.

DOM contract of the static form (the browser tests rely on it)
    - Root: ``<div class="lnw-explorer" data-explorer="layer-norm|depth|residual"
      id="lnw-<kind>-<random hex>">``. Ids are unique, and the script queries only inside
      its root, so several explorers work on one page. The root gets
      ``data-lnw-ready="1"`` once the script has initialised it.
    - Controls: ``<input type="range" name=... min=... max=... step=...>`` or ``<select
      name=...>`` inside the root, one per spec control, with the control's values (a
      slider's value is the quantity itself, e.g. ``0.65``; the script finds its grid
      position as ``round((value - min) / step)``). After a control's ``value`` changes,
      dispatching an ``input`` (or ``change``) event on it updates every readout and
      redraws the plot.
    - Readouts: ``<span class="lnw-readout" data-key=...>``, all inside one polite live
      region ``<div class="lnw-readouts" aria-live="polite">``; its text is
      :func:`format_readout` of the library's value for the current setting: Python's
      ``format(value, ".3g")`` (3 significant digits, ASCII ``-``, exponents like
      ``1e-05``; ``0`` for zero), ``"undefined (0/0)"`` for LayerNorm of a constant vector
      with ε = 0, ``"never"`` where a factor never falls under the threshold. The helpers
      :func:`layer_norm_readouts`, :func:`depth_readouts`, :func:`random_stack_readouts`
      and :func:`residual_readouts` give the expected texts for any setting.
    - The current value of each slider is echoed in ``<span class="lnw-param"
      data-param=<name>>``; the layer-norm explorer also echoes the vector as ``x``.
    - Plot: ``<svg class="lnw-plot">``, redrawn on every ``input`` event; lines are
      ``<path class="lnw-line" data-series=...>``, bars ``<rect class="lnw-bar"
      data-series=...>``, the marker of the current depth L is ``line.lnw-marker``.
    - Data: ``<script type="application/json" class="lnw-data">`` (the grid, with the
      spec's ``series`` and each slider's echo texts under ``labels``).

    Controls per explorer (``name``: values; the same in the live form):

    - ``layer-norm``: ``preset`` (select: ``"1,3,5,7"``, ``"2,2,6,6"``, ``"5,5,5,5"``,
      ``"-2,0,2,4"``, ``"0,0,0,0"``), ``component`` (select ``"1"``..``"4"``), ``value``
      (range, integers −2..7: the chosen component's value; choosing a preset or a
      component resets it to that component's preset value), ``gamma`` (select ``"1"``,
      ``"2"``), ``beta`` (select ``"0"``, ``"1"``), ``eps`` (select ``"0"``, ``"1e-05"``,
      ``"0.1"``, ``"1"``), ``sublayer`` (select ``"mlp-0"``, ``"mlp-1"``, ``"identity"``).
      Readouts ``post-1``..``post-4`` and ``pre-1``..``pre-4``;
      params ``x`` (the vector, ``"(1, 3, 5, 7)"``) and ``value``.
    - ``depth``: ``post_factor`` (range 0.5..1, step 0.01: Post-LN's per-layer factor f),
      ``branch`` (range −0.5..0.5, step 0.01: Pre-LN's branch slope F′, factor 1 + F′),
      ``depth`` (range 1..128). Readouts ``post`` (``f^L``), ``pre`` (``(1 + F')^L``),
      ``post-depth-below`` and ``pre-depth-below`` (smallest L with a factor ``< 0.01``,
      or ``never``).
    - ``random-stack``: ``placement`` (select ``"post"``, ``"pre"``), ``seed`` (range
      0..7), ``depth`` (select ``"6"``..``"96"``), ``branch_scale`` (select ``"0.5"``,
      ``"1"``, ``"2"``, ``"3"``), ``view`` (select ``"norm"``, ``"gain"``). Readouts
      ``input``, ``seeds-min``, ``seeds-max``.
      Grid: ``cells["<placement>|<scale>|<depth>"]`` with ``gain``, ``norm`` (per seed) and
      ``readouts`` (per seed). Lines: the chosen seed's ``data-series`` is the placement,
      the others ``seeds``.
    - ``residual``: ``n`` (range 1..256), ``branch_variance`` (select ``"0.25"``,
      ``"0.5"``, ``"1"``, ``"2"``, ``"4"``). Readouts ``variance`` and ``std``.
"""

from __future__ import annotations

import html
import json
import math
import os
import uuid
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Callable

import numpy as np

from lnworked.backward_gains import backward_gains
from lnworked.blocks import MLP, Linear
from lnworked.depth import (
    depth_below,
    gradient_factor,
    gradient_factors,
    gradient_norm_profile,
    residual_std,
    residual_variance,
)
from lnworked.norms import layer_norm
from lnworked.style import PALETTE, figure_png, labels, legend, new_figure, title

__all__ = [
    "is_static_build",
    "format_readout",
    "format_percent",
    "layer_norm_outputs",
    "layer_norm_readouts",
    "depth_readouts",
    "residual_readouts",
    "Slider",
    "Choice",
    "Series",
    "Explorer",
    "LAYER_NORM",
    "DEPTH",
    "RESIDUAL",
    "EXPLORERS",
    "static_grid",
    "spec_grid",
    "show_explorer",
    "layer_norm_grid",
    "depth_grid",
    "residual_grid",
    "explorer_script",
    "layer_norm_explorer",
    "depth_explorer",
    "residual_explorer",
    "random_stack_explorer",
    "random_stack_grid",
    "random_stack_readouts",
    "random_stack_gains",
    "random_stack_figure",
    "RANDOM_STACK",
    "LN_PRESETS",
    "LN_SUBLAYERS",
    "ln_sublayer",
]


def is_static_build() -> bool:
    """True while the book is being built (outputs go to static HTML, no live kernel)."""
    return os.environ.get("LNWORKED_STATIC_BUILD") == "1"


# --- values (the library's; shared by both forms) --------------------------------------------

UNDEFINED = "undefined (0/0)"
BELOW_THRESHOLD = 0.01


def format_readout(value) -> str:
    """A readout's text: ``format(value, ".3g")`` (3 significant digits, enough to read a
    chart by; the page's prose gives more where it needs them), but a number from 1000 to below a
    million as a whole number (1024, not 1.02e+03); ``"0"`` for ±0; ``"undefined (0/0)"`` for NaN."""
    number = float(value)
    if math.isnan(number):
        return UNDEFINED
    if number == 0:
        return "0"
    text = format(number, ".3g")
    if 1e3 <= abs(float(text)) < 1e6:  # 999.94 rounds to 1e+03 in ".3g": it reads 1000
        return f"{number:.0f}"
    return text


def format_percent(fraction) -> str:
    """A share as a readout: ``100 * fraction`` to one decimal, then a no-break space and "%" (so a
    narrow table cell never wraps the sign away from its number): "0.0 %", never "-0.0 %"."""
    percent = round(100 * float(fraction), 1) + 0.0  # + 0.0 turns -0.0 into 0.0
    return f"{percent:.1f}\u00a0%"


def _key(value) -> str:
    """A control value as text and grid key: ``format(value, "g")`` (1e-05, 0.1, 1, 0.25); strings as they are."""
    return value if isinstance(value, str) else format(float(value), "g")


#: The layer-norm explorer's sublayers ``F`` by name: the identity (worked example Ex 2) and
#: small random GELU MLPs of width 4 -> 16 -> 4 (:meth:`lnworked.blocks.MLP.random`, scale 1, no biases).
LN_SUBLAYERS = ("identity", "mlp-0", "mlp-1")


@lru_cache(maxsize=None)
def ln_sublayer(name: str):
    """The sublayer ``F`` named ``name`` (see :data:`LN_SUBLAYERS`) for vectors of width 4 (built once)."""
    if name == "identity":
        return Linear(np.eye(4))
    if name in LN_SUBLAYERS:
        return MLP.random(4, 16, seed=int(name.split("-")[1]))
    raise ValueError(f"sublayer: must be one of {list(LN_SUBLAYERS)}, got {name!r}")


def layer_norm_outputs(x, gamma: float = 1.0, beta: float = 0.0, eps: float = 0.0, sublayer: str = "identity") -> dict:
    """Post-LN ``LN(x + F(x))`` and Pre-LN ``x + F(LN(x))`` with ``F = ln_sublayer(sublayer)``; γ, β scalars.

    A constant ``x`` with ``eps = 0`` gives NaN (0/0) instead of raising.
    """
    x = np.asarray(x, dtype=float)
    g, b = np.full(x.shape, float(gamma)), np.full(x.shape, float(beta))
    f = ln_sublayer(sublayer)
    return {
        "post": layer_norm(x + f(x), g, b, eps, allow_degenerate=True),
        "pre": x + f(layer_norm(x, g, b, eps, allow_degenerate=True)),
    }


def layer_norm_readouts(x, gamma: float = 1.0, beta: float = 0.0, eps: float = 0.0, sublayer: str = "identity") -> dict:
    """Readout key -> text (``post-1``.., ``pre-1``..) for one setting of the LN explorer."""
    out = layer_norm_outputs(x, gamma, beta, eps, sublayer)
    return {f"{kind}-{i + 1}": format_readout(v) for kind in ("post", "pre") for i, v in enumerate(out[kind])}


def _below(factor: float, threshold: float) -> str:
    """``depth_below(factor, threshold)`` as text, ``"never"`` for a factor of at least 1."""
    return "never" if factor >= 1 else str(depth_below(factor, threshold))


def depth_readouts(post_factor: float, branch: float, depth: int, threshold: float = BELOW_THRESHOLD) -> dict:
    """Readouts of the depth explorer: ``f^L``, ``(1 + F')^L`` and the depths where each falls under ``threshold``.

    ``branch`` is the branch slope ``F'``; it may be negative (``-1 < F' < 0`` makes the
    Pre-LN toy's factor ``1 + F'`` fall below 1, so its "+1" no longer keeps the gradient).
    """
    return {
        "post": format_readout(gradient_factor(post_factor, depth)),
        "pre": format_readout(gradient_factor(1 + branch, depth)),
        "post-depth-below": _below(post_factor, threshold),
        "pre-depth-below": _below(1 + branch, threshold),
    }


def residual_readouts(n: int, branch_variance: float) -> dict:
    """Readouts of the residual explorer: ``Var(x_L) = L v`` and ``std = sqrt(L v)``."""
    return {
        "variance": format_readout(residual_variance(n, branch_variance)),
        "std": format_readout(residual_std(n, branch_variance)),
    }


# --- the spec ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Slider:
    """A range control over ``lo, lo + step, ..., hi``; ``echo(value)`` is the text shown beside it."""

    name: str
    label: str
    lo: float
    hi: float
    step: float
    default: float
    echo: Callable | None = None

    @property
    def values(self) -> tuple:
        """Every setting, ``lo + i step`` for ``i = 0 .. (hi - lo) / step`` (integers stay integers)."""
        count = round((self.hi - self.lo) / self.step)
        if all(isinstance(v, int) for v in (self.lo, self.hi, self.step)):
            return tuple(self.lo + i * self.step for i in range(count + 1))
        return tuple(round(self.lo + i * self.step, 12) for i in range(count + 1))

    def position(self, value) -> int:
        """The index of the setting nearest ``value`` (what the script computes from the DOM)."""
        return min(max(round((float(value) - self.lo) / self.step), 0), len(self.values) - 1)

    def text(self, value) -> str:
        return self.echo(value) if self.echo else _key(value)


@dataclass(frozen=True)
class Choice:
    """A select control: ``options`` are ``(value, text)`` pairs; a value's key is :func:`_key` of it."""

    name: str
    label: str
    options: tuple
    default: object

    @property
    def values(self) -> tuple:
        return tuple(value for value, _ in self.options)


@dataclass(frozen=True)
class Series:
    """One plotted series: its key (``data-series`` / matplotlib ``gid``), legend label and colour."""

    key: str
    label: str
    color: str


@dataclass(frozen=True)
class Explorer:
    """One explorer, described once; :func:`_static` and :func:`_live` render it.

    ``readouts(values)`` is the value function (control name -> value, to readout key ->
    text); ``grid()`` is the value function at every setting, laid out for the script;
    ``table(readouts)`` the readout table (HTML, both forms); ``draw(ax, values, spec)`` the
    live plot; ``params(values)`` extra echoed texts (name -> text); ``live_hook(controls)``
    wires control-to-control behaviour in the live form (the script mirrors it).
    """

    kind: str
    caption: str
    aria: str
    controls: tuple
    series: tuple
    readouts: Callable
    grid: Callable
    table: Callable
    draw: Callable
    params: Callable = lambda values: {}
    live_hook: Callable | None = None

    def control(self, name: str):
        return next(c for c in self.controls if c.name == name)

    def defaults(self) -> dict:
        return {c.name: c.default for c in self.controls}

    def color(self, key: str) -> str:
        return next(s.color for s in self.series if s.key == key)

    def snap(self, values: dict) -> dict:
        """Each slider value moved to its nearest setting (what the static grid holds)."""
        return {name: (c.values[c.position(values[name])] if isinstance(c, Slider) else values[name])
                for name, c in ((c.name, c) for c in self.controls)}


def _readout(key: str, text: str) -> str:
    return f'<span class="lnw-readout" data-key="{key}">{html.escape(text)}</span>'


def _rows_table(rows, html_heads: bool = False) -> str:
    """``rows`` of ``(header, readout key, text)`` as a two-column readout table (headers escaped,
    unless ``html_heads``: then they are HTML already, e.g. with ``<sub>``)."""
    body = "".join(f"<tr><th>{head if html_heads else html.escape(head)}</th><td>{_readout(key, text)}</td></tr>"
                   for head, key, text in rows)
    return f'<table class="lnw-table">{body}</table>'


# --- the layer-norm explorer -------------------------------------------------------------------

#: The seeds' vectors (004 Ex 1, Ex 1's sum, Ex 3, Ex 8, Ex 4's stream), by grid key.
LN_PRESETS = {
    "1,3,5,7": (1, 3, 5, 7),
    "2,2,6,6": (2, 2, 6, 6),
    "5,5,5,5": (5, 5, 5, 5),
    "-2,0,2,4": (-2, 0, 2, 4),
    "0,0,0,0": (0, 0, 0, 0),
}
_LN_ROWS = (("post", "Post-LN LN(x + F(x))"), ("pre", "Pre-LN x + F(LN(x))"))


def _ln_vector(values: dict) -> tuple:
    """The preset with its chosen component set to the ``value`` slider."""
    vector = list(LN_PRESETS[values["preset"]])
    vector[int(values["component"]) - 1] = int(values["value"])
    return tuple(vector)


def _ln_readouts(values: dict) -> dict:
    return layer_norm_readouts(_ln_vector(values), values["gamma"], values["beta"], values["eps"], values["sublayer"])


def _ln_table(readouts: dict) -> str:
    """One row per component, one column per placement (narrow enough for a phone)."""
    d = len(readouts) // 2
    head = "".join(f"<th>{label.replace(' ', '<br>', 1)}</th>" for _, label in _LN_ROWS)
    rows = "".join(
        f"<tr><th>x{i + 1}</th>" + "".join(f"<td>{_readout(f'{kind}-{i + 1}', readouts[f'{kind}-{i + 1}'])}</td>"
                                           for kind, _ in _LN_ROWS) + "</tr>"
        for i in range(d)
    )
    return f'<table class="lnw-table"><tr><th>output</th>{head}</tr>{rows}</table>'


def _ln_params(values: dict) -> dict:
    return {"x": "(" + ", ".join(map(str, _ln_vector(values))) + ")"}


def _ln_draw(ax, values: dict, spec: Explorer):
    x = np.array(_ln_vector(values), dtype=float)
    out = layer_norm_outputs(x, values["gamma"], values["beta"], values["eps"], values["sublayer"])
    idx, width = np.arange(x.size), 0.27
    for offset, series, heights in zip((-width, 0, width), spec.series, (x, out["post"], out["pre"])):
        ax.bar(idx + offset, np.nan_to_num(heights), width, label=series.label, color=series.color, gid=series.key)
    ax.axhline(0, color=PALETTE["text"], lw=0.8)
    ax.set_xticks(idx, [f"x{i + 1}" for i in idx])
    ax.set_xlabel("component")
    ax.set_ylabel("value")


def _ln_live_hook(controls: dict):
    """Choosing a preset or a component resets ``value`` to that component's preset value."""
    def reset(_change=None):
        controls["value"].value = LN_PRESETS[controls["preset"].value][int(controls["component"].value) - 1]

    for name in ("preset", "component"):
        controls[name].observe(reset, names="value")


def _ln_grid(spec: Explorer) -> dict:
    """``values[vector][sublayer][eps][gamma][beta] = [post_1..post_d, pre_1..pre_d]``, indices following ``axes``.

    ``vector`` is the key ``"1,3,5,7"``: every preset with any one component set to any
    value of the ``value`` slider.
    """
    axes = {name: spec.control(name).values for name in ("sublayer", "eps", "gamma", "beta")}
    vectors = {}
    for preset in LN_PRESETS:
        for component, _ in spec.control("component").options:
            for v in spec.control("value").values:
                vector = _ln_vector({"preset": preset, "component": component, "value": v})
                vectors[",".join(map(str, vector))] = vector
    values = {}
    for key, vector in vectors.items():
        values[key] = [[[[
            [text for kind, _ in _LN_ROWS for text in _row(layer_norm_readouts(vector, g, b, e, f), kind)]
            for b in axes["beta"]] for g in axes["gamma"]] for e in axes["eps"]] for f in axes["sublayer"]]
    return {
        "presets": {k: list(v) for k, v in LN_PRESETS.items()},
        "axes": {name: [_key(v) for v in options] for name, options in axes.items()},
        "values": values,
    }


def _row(readouts: dict, kind: str) -> list:
    return [readouts[f"{kind}-{i + 1}"] for i in range(len(readouts) // 2)]


LAYER_NORM = Explorer(
    kind="layer-norm",
    caption=(
        "Choose a vector x (a preset from the worked examples, with one component edited), γ, β and ε. "
        "The sublayer F is a small random MLP (width 4 to 16 to 4, GELU; choose its seed) or the identity "
        "F(u) = u of the Pre-LN worked example (Ex 2 of the worked-examples notes), where Post-LN's row is just "
        "LN(2x), which is LN(x) when ε = 0. "
        "γ and β are the same for every component. Post-LN's output is pinned to mean β and, for ε small "
        "beside the sum's variance, spread γ; Pre-LN's output keeps the scale of x."
    ),
    aria="Grouped bars per component: the input x, the Post-LN output and the Pre-LN output",
    controls=(
        Choice("preset", "preset x", tuple((k, "(" + ", ".join(map(str, v)) + ")") for k, v in LN_PRESETS.items()),
               "1,3,5,7"),
        Choice("component", "edit", tuple((str(i + 1), f"x{i + 1}") for i in range(4)), "1"),
        Slider("value", "to", -2, 7, 1, 1),
        Choice("gamma", "γ", ((1.0, "1"), (2.0, "2")), 1.0),          # the seeds: γ = 1 (Ex 1-4), 2 (Ex 8)
        Choice("beta", "β", ((0.0, "0"), (1.0, "1")), 0.0),           # β = 0 (Ex 1-4), 1 (Ex 8)
        Choice("eps", "ε", tuple((e, _key(e)) for e in (0.0, 1e-5, 0.1, 1.0)), 0.0),
        Choice("sublayer", "sublayer F", (("mlp-0", "random MLP, seed 0"), ("mlp-1", "random MLP, seed 1"),
                                          ("identity", "identity (Ex 2)")), "mlp-0"),
    ),
    series=(Series("x", "input x", PALETTE["seed"]), Series("post", "Post-LN: LN(x + F(x))", PALETTE["post"]),
            Series("pre", "Pre-LN: x + F(LN(x))", PALETTE["pre"])),
    readouts=_ln_readouts,
    grid=lambda: _ln_grid(LAYER_NORM),
    table=_ln_table,
    draw=_ln_draw,
    params=_ln_params,
    live_hook=_ln_live_hook,
)


# --- the depth explorer ------------------------------------------------------------------------


def _depth_readouts(values: dict) -> dict:
    return depth_readouts(values["post_factor"], values["branch"], values["depth"])


def _depth_table(readouts: dict) -> str:
    return _rows_table((
        ("Post-LN fᴸ at depth L", "post", readouts["post"]),
        ("Pre-LN (1 + F′)ᴸ at depth L", "pre", readouts["pre"]),
        (f"depth where Post-LN first falls under {_key(BELOW_THRESHOLD)}", "post-depth-below", readouts["post-depth-below"]),
        (f"depth where Pre-LN first falls under {_key(BELOW_THRESHOLD)}", "pre-depth-below", readouts["pre-depth-below"]),
    ))


def _depth_per_layer(values: dict) -> dict:
    """Series key -> the per-layer gradient factor it compounds."""
    return {"pre": 1 + values["branch"], "post": values["post_factor"]}


def _depth_draw(ax, values: dict, spec: Explorer):
    depths = np.array(spec.control("depth").values)
    for series in spec.series:
        factor = _depth_per_layer(values)[series.key]
        ax.semilogy(depths, gradient_factors(factor, int(depths[-1])), color=series.color, label=series.label,
                    gid=series.key)
        ax.plot([values["depth"]], [gradient_factor(factor, values["depth"])], "o", color=series.color)
    ax.axvline(values["depth"], color=PALETTE["seed"], ls="--", lw=0.8)
    ax.set_xlabel("depth L (layers)")
    ax.set_ylabel("gradient factor at the input")


def _depth_grid(spec: Explorer) -> dict:
    """``post[i][L-1] = f_i^L``, ``pre[j][L-1] = (1 + F'_j)^L``, ``below[i]``, ``below_pre[j]``; i, j slider positions."""
    depths = spec.control("depth").values

    def factors(per_layer):
        return [format_readout(v) for v in gradient_factors(per_layer, depths[-1])]

    posts = spec.control("post_factor").values
    return {
        "depths": list(depths),
        "post": [factors(f) for f in posts],
        "pre": [factors(1 + a) for a in spec.control("branch").values],
        "below": [_below(f, BELOW_THRESHOLD) for f in posts],
        "below_pre": [_below(1 + a, BELOW_THRESHOLD) for a in spec.control("branch").values],
    }


DEPTH = Explorer(
    kind="depth",
    caption=(
        "The scalar toy: the gradient factor at the input of L layers when every block's Jacobian is "
        "one number, the same in every layer: Post-LN's fᴸ against Pre-LN's (1 + F′)ᴸ, log scale."
    ),
    aria="Log-scale lines of the gradient factor over depth, Pre-LN against Post-LN",
    controls=(
        Slider("post_factor", "Post-LN factor f", 0.5, 1.0, 0.01, 0.65),
        Slider("branch", "Pre-LN branch slope F′", -0.5, 0.5, 0.01, 0.3,
               echo=lambda a: f"{_key(a)} (factor {_key(round(1 + a, 12))})"),
        Slider("depth", "depth L", 1, 128, 1, 24),
    ),
    series=(Series("pre", "Pre-LN (1 + F′)ᴸ", PALETTE["pre"]), Series("post", "Post-LN fᴸ", PALETTE["post"])),
    readouts=_depth_readouts,
    grid=lambda: _depth_grid(DEPTH),
    table=_depth_table,
    draw=_depth_draw,
)


# --- the residual explorer ---------------------------------------------------------------------


def _residual_readouts(values: dict) -> dict:
    return residual_readouts(values["n"], values["branch_variance"])


def _residual_table(readouts: dict) -> str:
    return _rows_table((("Var(x_L) = L v", "variance", readouts["variance"]),
                        ("std(x_L) = √(L v)", "std", readouts["std"])))


def _residual_y_max(spec: Explorer) -> int:
    """The fixed top of the plot: the largest std any setting reaches, rounded up."""
    return math.ceil(residual_std(spec.control("n").values[-1], max(spec.control("branch_variance").values)))


def _residual_draw(ax, values: dict, spec: Explorer):
    (series,) = spec.series
    ns = spec.control("n").values
    v = values["branch_variance"]
    ax.plot(ns, [residual_std(n, v) for n in ns], color=series.color, label=f"{series.label}, v = {_key(v)}",
            gid=series.key)
    ax.plot([values["n"]], [residual_std(values["n"], v)], "o", color=series.color)
    ax.axvline(values["n"], color=PALETTE["seed"], ls="--", lw=0.8)
    ax.set_ylim(0, _residual_y_max(spec))
    ax.set_xlabel("N (additions to the residual stream)")
    ax.set_ylabel("std(x_L)")


def _residual_grid(spec: Explorer) -> dict:
    """``variance[v][L-1] = L v`` and ``std[v][L-1] = sqrt(L v)`` for every branch variance ``v``."""
    ns = spec.control("n").values
    variances = spec.control("branch_variance").values
    return {
        "ns": list(ns),
        "variance": {_key(v): [format_readout(residual_variance(n, v)) for n in ns] for v in variances},
        "std": {_key(v): [format_readout(residual_std(n, v)) for n in ns] for v in variances},
        "y_max": _residual_y_max(spec),
    }


RESIDUAL = Explorer(
    kind="residual",
    caption=(
        "The Pre-LN residual stream after L independent additions of branch outputs with variance v "
        "(starting from 0): Var(x_L) = L v, so its standard deviation grows like √L (independent "
        "writes of fixed variance, as at initialisation)."
    ),
    aria="Line of the residual stream's standard deviation over L, the current L marked",
    controls=(
        Slider("n", "L", 1, 256, 1, 24),
        Choice("branch_variance", "branch variance v", tuple((v, _key(v)) for v in (0.25, 0.5, 1.0, 2.0, 4.0)), 1.0),
    ),
    series=(Series("std", "std of the stream, √(L v)", PALETTE["pre"]),),
    readouts=_residual_readouts,
    grid=lambda: _residual_grid(RESIDUAL),
    table=_residual_table,
    draw=_residual_draw,
)

# --- the random-stack explorer -------------------------------------------------------------------

#: The random-stack explorer's grid: depths, branch scales and seeds (``0 .. STACK_SEEDS - 1``).
STACK_DEPTHS = (6, 12, 24, 48, 96)
STACK_SCALES = (0.5, 1.0, 2.0, 3.0)
STACK_SEEDS = 8
#: The random stack's placements.
STACK_PLACEMENTS = ("post", "pre")
_STACK_READOUTS = ("input", "seeds-min", "seeds-max")
#: The random stack's y label (norm view): mathtext for matplotlib; the kernel-free script
#: draws the same label with SVG subscripts (``explore.js``), the readout table with ``<sub>``.
STACK_NORM_LABEL = r"$\|g_\ell\| \,/\, \|g_L\|$"



def random_stack_gains(placement: str, layers: int, branch_scale: float = 1.0, seeds=range(STACK_SEEDS)) -> np.ndarray:
    """Per-block backward gains of the seeded random stacks, shape ``(seeds, layers)``.

    :func:`lnworked.backward_gains.backward_gains` of ``placement`` (``"post"`` or ``"pre"``) at width 16.
    """
    if placement not in STACK_PLACEMENTS:
        raise ValueError(f"placement: must be 'post' or 'pre', got {placement!r}")
    return backward_gains(placement, layers, seeds=seeds, branch_scale=branch_scale)["gain"]


def random_stack_readouts(placement: str, layers: int, seed: int, branch_scale: float = 1.0, gains=None) -> dict:
    """Readouts of the random-stack explorer for one setting (``gains``: all seeds' gains, if already computed).

    ``input``: ``||g_0|| / ||g_L||`` of seed ``seed`` (:func:`gradient_norm_profile`);
    ``seeds-min`` / ``seeds-max``: ``input`` over the seeds.
    """
    gains = random_stack_gains(placement, layers, branch_scale) if gains is None else np.asarray(gains)
    inputs = [gradient_norm_profile(row)[0] for row in gains]
    return {
        "input": format_readout(inputs[seed]),
        "seeds-min": format_readout(min(inputs)),
        "seeds-max": format_readout(max(inputs)),
    }


def _stack_readouts(values: dict) -> dict:
    return random_stack_readouts(values["placement"], int(values["depth"]), int(values["seed"]), values["branch_scale"])


def _stack_table(readouts: dict) -> str:
    ratio = "‖g<sub>0</sub>‖ / ‖g<sub>L</sub>‖"
    return _rows_table((
        (f"gradient at the input, {ratio} (this seed)", "input", readouts["input"]),
        (f"smallest {ratio} over the {STACK_SEEDS} seeds", "seeds-min", readouts["seeds-min"]),
        (f"largest {ratio} over the {STACK_SEEDS} seeds", "seeds-max", readouts["seeds-max"]),
    ), html_heads=True)


def _stack_curves(gains, view: str):
    """``(xs, rows)``: ``||g_l|| / ||g_L||`` over layers ``0 .. L``, or the gains over blocks ``1 .. L``."""
    gains = np.asarray(gains)
    layers = gains.shape[1]
    if view == "norm":
        return np.arange(layers + 1), np.array([gradient_norm_profile(row) for row in gains])
    return np.arange(1, layers + 1), gains


def _stack_draw(ax, values: dict, spec: Explorer, gains=None):
    placement, seed = values["placement"], int(values["seed"])
    if gains is None:
        gains = random_stack_gains(placement, int(values["depth"]), values["branch_scale"])
    xs, rows = _stack_curves(gains, values["view"])
    others = [i for i in range(len(rows)) if i != seed]
    for n, i in enumerate(others):
        ax.plot(xs, rows[i], color=spec.color("seeds"), lw=1, alpha=0.45, gid="seeds",
                label=spec.series[2].label if n == 0 else None)
    ax.plot(xs, rows[seed], color=spec.color(placement), lw=2.2, gid=placement,
            label=f"{next(s.label for s in spec.series if s.key == placement)}, seed {seed}")
    ax.axhline(1, color=PALETTE["text"], lw=0.8, ls=":")
    if values["view"] == "norm":
        ax.set_yscale("log")
        ax.set_xlabel("layer ℓ (0 = input, L = top)")
        ax.set_ylabel(STACK_NORM_LABEL)
    else:
        ax.set_xlabel("block ℓ")
        ax.set_ylabel("gain of block ℓ")


def _stack_ticks(layers: int) -> list:
    return [round(layers * k / 4) for k in range(5)]


def _stack_grid(spec: Explorer) -> dict:
    """``cells["post|1|48"]``: ``gain`` and ``norm`` (one row per seed, 4 significant digits, for
    drawing) and ``readouts`` (one dict per seed, :func:`random_stack_readouts`)."""
    cells = {}
    for placement, _ in spec.control("placement").options:
        for scale in STACK_SCALES:
            for layers in STACK_DEPTHS:
                gains = random_stack_gains(placement, layers, scale)
                _, norms = _stack_curves(gains, "norm")
                cells[f"{placement}|{_key(scale)}|{layers}"] = {
                    "gain": [[float(format(v, ".4g")) for v in row] for row in gains],
                    "norm": [[float(format(v, ".4g")) for v in row] for row in norms],
                    "readouts": [random_stack_readouts(placement, layers, seed, scale, gains=gains)
                                 for seed in range(STACK_SEEDS)],
                }
    return {"cells": cells, "readouts": list(_STACK_READOUTS),
            "ticks": {_key(L): _stack_ticks(L) for L in STACK_DEPTHS}}


RANDOM_STACK = Explorer(
    kind="random-stack",
    caption=(
        "A random stack of L blocks of width 16 at initialisation (a random GELU MLP per block, "
        "LayerNorm with γ = 1): the gradient's length at each layer relative to its length at the top "
        "(log scale), or each block's gain; the chosen seed in colour, the others in grey."
    ),
    aria="Lines over the layers of the stack, one per seed: the gradient's length relative to the top, or each block's gain",
    controls=(
        # opens on Post-LN, as chapter 3's forecast does, at seed 1: seed 0 at L = 48 reads 0.851, chapter 3's
        # typical norm gain, by chance, and a reader would take the one for the other
        Choice("placement", "placement", (("post", "Post-LN"), ("pre", "Pre-LN")), "post"),
        Slider("seed", "seed", 0, STACK_SEEDS - 1, 1, 1),
        Choice("depth", "depth L", tuple((L, str(L)) for L in STACK_DEPTHS), 48),
        Choice("branch_scale", "branch scale", tuple((s, _key(s)) for s in STACK_SCALES), 1.0),
        Choice("view", "show", (("norm", "gradient per layer"), ("gain", "gain per block")), "norm"),
    ),
    series=(Series("post", "Post-LN", PALETTE["post"]), Series("pre", "Pre-LN", PALETTE["pre"]),
            Series("seeds", "other seeds", PALETTE["seed"])),
    readouts=_stack_readouts,
    grid=lambda: _stack_grid(RANDOM_STACK),
    table=_stack_table,
    draw=_stack_draw,
)


def random_stack_figure(layers: int = 48, branch_scale: float = 1.0, view: str = "norm"):
    """The random-stack explorer's picture for both placements, stacked (Post-LN above Pre-LN), all seeds.

    Seed 0 in colour, the others in grey; ``view`` is ``"norm"`` (``||g_l|| / ||g_L||``, log
    scale) or ``"gain"`` (each block's gain).
    """
    fig = new_figure(4.2, 8.4, nrows=2)[0]  # narrow, house font sizes: legible on a phone
    for ax, placement in zip(fig.axes, ("post", "pre")):
        values = {"placement": placement, "seed": 0, "depth": layers, "branch_scale": branch_scale, "view": view}
        _stack_draw(ax, values, RANDOM_STACK, gains=random_stack_gains(placement, layers, branch_scale))
        title(ax, f"{'Post-LN' if placement == 'post' else 'Pre-LN'}, L = {layers}")
        labels(ax, ax.get_xlabel(), ax.get_ylabel())
        # below the axes, off the curves (the grey seeds fill every corner)
        legend(ax, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2)
    return fig


#: Every explorer's spec, by kind.
EXPLORERS = {spec.kind: spec for spec in (LAYER_NORM, DEPTH, RESIDUAL, RANDOM_STACK)}


# --- build-time grids (static form) ------------------------------------------------------------


@lru_cache(maxsize=None)
def static_grid(kind: str) -> dict:
    """The JSON grid of one explorer: its own layout plus ``series`` and the sliders' echo ``labels``."""
    return spec_grid(EXPLORERS[kind])


def spec_grid(spec: Explorer) -> dict:
    """:func:`static_grid` of any spec, also one defined outside this module (chapter 5's)."""
    return {
        **spec.grid(),
        "series": {s.key: {"label": s.label, "color": s.color} for s in spec.series},
        "labels": {c.name: [c.text(v) for v in c.values] for c in spec.controls if isinstance(c, Slider)},
    }


def layer_norm_grid() -> dict:
    """:func:`static_grid` of the layer-norm explorer."""
    return static_grid("layer-norm")


def depth_grid() -> dict:
    """:func:`static_grid` of the depth explorer."""
    return static_grid("depth")


def random_stack_grid() -> dict:
    """:func:`static_grid` of the random-stack explorer."""
    return static_grid("random-stack")


def residual_grid() -> dict:
    """:func:`static_grid` of the residual explorer."""
    return static_grid("residual")


# --- static HTML -------------------------------------------------------------------------------


def explorer_script() -> str:
    """The explorers' JavaScript (``lnworked/data/explore.js``), inlined into each explorer."""
    return resources.files("lnworked").joinpath("data/explore.js").read_text(encoding="utf-8")


_STYLE = """<style>
.lnw-explorer{border:1px solid rgba(128,128,128,.45);border-radius:6px;padding:.6em .9em;margin:1em 0}
.lnw-explorer .lnw-caption{margin:.5em 0 0 0;font-size:.92em}
.lnw-explorer .lnw-controls{display:flex;flex-wrap:wrap;gap:.4em 1.4em;align-items:center;margin-bottom:.4em}
.lnw-explorer .lnw-controls label{white-space:nowrap}
.lnw-explorer .lnw-controls input[type=range]{vertical-align:middle;width:11em}
@media (max-width:480px){.lnw-explorer .lnw-controls label{white-space:normal;max-width:100%}.lnw-explorer .lnw-controls input[type=range]{width:9em}.lnw-explorer .lnw-controls select{max-width:100%}}
.lnw-explorer svg.lnw-plot{display:block;width:100%;max-width:560px;height:auto;color:inherit}
.lnw-explorer table.lnw-table{border-collapse:collapse;margin:.3em 0;font-variant-numeric:tabular-nums;display:block;max-width:100%;overflow-x:auto}
.lnw-explorer table.lnw-table th,.lnw-explorer table.lnw-table td{padding:.15em .6em;text-align:right;border-bottom:1px solid rgba(128,128,128,.3)}
.lnw-explorer table.lnw-table th:first-child{text-align:left}
</style>"""


def _param(name: str, text: str) -> str:
    return f'<span class="lnw-param" data-param="{name}">{html.escape(text)}</span>'


def _control_html(control) -> str:
    """A spec control as an HTML ``<input type="range">`` (with its echo) or ``<select>``."""
    label = html.escape(control.label)
    if isinstance(control, Slider):
        return (f'<label>{label} <input type="range" name="{control.name}" min="{_key(control.lo)}" '
                f'max="{_key(control.hi)}" step="{_key(control.step)}" value="{_key(control.default)}" '
                f'aria-label="{html.escape(control.label, quote=True)}"> '
                f"{_param(control.name, control.text(control.default))}</label>")
    options = "".join(
        f'<option value="{html.escape(_key(value), quote=True)}"{" selected" if value == control.default else ""}>'
        f"{html.escape(text)}</option>"
        for value, text in control.options
    )
    return f'<label>{label} <select name="{control.name}">{options}</select></label>'


def _params_html(spec: Explorer, values: dict) -> str:
    return "".join(f"<span>{name} = {_param(name, text)}</span>" for name, text in spec.params(values).items())


def _static(spec: Explorer):
    from IPython.display import HTML

    root = f"lnw-{spec.kind}-{uuid.uuid4().hex[:12]}"
    defaults = spec.defaults()
    controls = "".join(_control_html(c) for c in spec.controls) + _params_html(spec, defaults)
    grid = static_grid(spec.kind) if EXPLORERS.get(spec.kind) is spec else spec_grid(spec)
    data = json.dumps(grid, separators=(",", ":")).replace("</", "<\\/")
    script = explorer_script().replace("</", "<\\/")
    return HTML(
        f'{_STYLE}<div class="lnw-explorer" data-explorer="{spec.kind}" id="{root}">'
        f'<div class="lnw-controls">{controls}</div>'
        f'<svg class="lnw-plot" viewBox="0 0 520 280" role="img" aria-label="{html.escape(spec.aria, quote=True)}"></svg>'
        # a polite live region: a screen reader announces the readouts each control changes
        f'<div class="lnw-readouts" aria-live="polite">{spec.table(spec.readouts(defaults))}</div>'
        # the caption under the plot and readouts, as a figure's: on a phone the controls come first
        f'<p class="lnw-caption">{html.escape(spec.caption)}</p>'
        f'<script type="application/json" class="lnw-data">{data}</script>'
        f"</div><script>{script}\nwindow.lnwExplore.init({json.dumps(root)});</script>"
    )


# --- live form (ipywidgets) --------------------------------------------------------------------


def _widget(control):
    """A spec control as an ipywidget with the same range, step or options and default."""
    import ipywidgets as widgets

    if isinstance(control, Choice):
        return widgets.Dropdown(options=[(text, value) for value, text in control.options], value=control.default,
                                description=control.label)
    integer = all(isinstance(v, int) for v in (control.lo, control.hi, control.step))
    kind = widgets.IntSlider if integer else widgets.FloatSlider
    return kind(value=control.default, min=control.lo, max=control.hi, step=control.step, description=control.label)


def _live(spec: Explorer):
    """The spec as a live ``VBox``: controls, readout table and PNG plot, redrawn on every change."""
    import ipywidgets as widgets

    controls = {c.name: _widget(c) for c in spec.controls}
    readout, image = widgets.HTML(), widgets.Image(format="png")
    widgets_in_order = list(controls.values())
    rows = [widgets.HBox(widgets_in_order[i:i + 3]) for i in range(0, len(widgets_in_order), 3)]
    box = widgets.VBox([*rows, readout, image, widgets.HTML(f"<p>{html.escape(spec.caption)}</p>")])
    box.add_class("lnw-explorer-live")
    box.lnw_kind, box.lnw_spec, box.lnw_controls, box.lnw_readout, box.lnw_image = (
        spec.kind, spec, controls, readout, image)

    def refresh(_change=None):
        values = spec.snap({name: w.value for name, w in controls.items()})
        fig, ax = new_figure(6.2, 3.4)
        spec.draw(ax, values, spec)
        ax.legend(fontsize=9, frameon=False)
        box.lnw_figure, box.lnw_values = fig, spec.readouts(values)
        readout.value = _params_html(spec, values) + spec.table(box.lnw_values)
        image.value = figure_png(fig, dpi=90)

    if spec.live_hook:
        spec.live_hook(controls)  # registered first, so it acts before the redraw
    for w in controls.values():
        w.observe(refresh, names="value")
    refresh()
    return box


# --- public API --------------------------------------------------------------------------------


def _explorer(spec: Explorer):
    return _static(spec) if is_static_build() else _live(spec)


def show_explorer(spec: Explorer):
    """Either form of any spec: kernel-free HTML in the book build, ipywidgets in a kernel."""
    return _explorer(spec)


def layer_norm_explorer():
    """LayerNorm of an editable vector with γ, β, ε; Post-LN beside Pre-LN, with a random MLP or identity sublayer."""
    return _explorer(LAYER_NORM)


def depth_explorer():
    """Gradient factor over depth: Post-LN ``f^L`` against Pre-LN ``(1 + a)^L``, log scale."""
    return _explorer(DEPTH)


def random_stack_explorer():
    """A random stack of blocks: seed, depth, branch scale, placement -> gradient per layer or gain per block."""
    return _explorer(RANDOM_STACK)


def residual_explorer():
    """Pre-LN residual-stream growth: ``Var = L v``, ``std = sqrt(L v)``, over L."""
    return _explorer(RESIDUAL)
