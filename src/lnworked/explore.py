"""Interactive explorers: ipywidgets in a live kernel, kernel-free HTML in the built book.

Three explorers, each one call for a chapter (``display(depth_explorer())``):

- :func:`layer_norm_explorer` — LayerNorm of an editable vector with γ, β, ε, Post-LN
  ``LN(x + F(x))`` beside Pre-LN ``x + F(LN(x))`` with the identity sublayer ``F(u) = u``
  (as in seed 004 Ex 2), so Post-LN shows ``LN(2x)`` and Pre-LN shows ``x + LN(x)``;
  γ and β are the same for every component.
- :func:`depth_explorer` — the gradient factor reaching the input after ``L`` layers,
  Post-LN ``f^L`` for a per-layer factor ``f`` against Pre-LN ``(1 + a)^L`` for a branch
  term ``a`` (log scale), and the depth at which Post-LN falls under 0.01.
- :func:`residual_explorer` — the Pre-LN residual stream after ``N`` independent
  additions of branch variance ``v``: ``Var = N v`` and ``std = sqrt(N v)``.

Which form a call returns is decided by :func:`is_static_build`: the book build sets
``LNWORKED_STATIC_BUILD=1`` (see ``book/_ext/lnworked_build.py``), so a chapter executed
for the HTML never emits ipywidgets (whose Python callbacks would be dead there and whose
JavaScript would come from a CDN).

Live form (a kernel: Jupyter, Colab)
    An ``ipywidgets.VBox`` of controls, a ``widgets.HTML`` readout table and a
    ``widgets.Image`` holding a matplotlib plot (PNG), updated by ``observe``. For tests
    and for curious readers the box carries ``lnw_controls`` (name -> widget),
    ``lnw_readout`` (the HTML widget), ``lnw_figure`` (the matplotlib ``Figure``),
    ``lnw_image`` and ``lnw_values`` (readout key -> text of the current setting).

Static form (the built book): an ``IPython.display.HTML`` object
    No kernel, no network: plain HTML controls, an inline SVG and the vanilla JavaScript
    of ``lnworked/data/explore.js`` (inlined, defined once per page as
    ``window.lnwExplore``). Every value shown was computed by this library at build time
    and sits in a JSON grid inside the explorer; the script only looks values up and
    draws them. The grid covers every position of every control, so each control
    responds. Grid sizes (compact JSON): layer-norm about 255 KB, depth about 160 KB,
    residual about 21 KB.

DOM contract of the static form (the browser tests rely on it)
    - Root: ``<div class="lnw-explorer" data-explorer="layer-norm|depth|residual"
      id="lnw-<kind>-<random hex>">``. Ids are unique, and the script queries only inside
      its root, so several explorers work on one page. The root gets
      ``data-lnw-ready="1"`` once the script has initialised it.
    - Controls: ``<input type="range" name=...>`` or ``<select name=...>`` inside the
      root. After a control's ``value`` changes, dispatching an ``input`` (or ``change``)
      event on it updates every readout and redraws the plot.
    - Readouts: ``<span class="lnw-readout" data-key=...>``; its text is
      :func:`format_readout` of the library's value for the current setting: Python's
      ``format(value, ".6g")`` (6 significant digits, ASCII ``-``, exponents like
      ``1e-05``; ``0`` for zero), ``"undefined (0/0)"`` for LayerNorm of a constant vector
      with ε = 0, ``"never"`` where a factor never falls under the threshold. The helpers
      :func:`layer_norm_readouts`, :func:`depth_readouts` and :func:`residual_readouts`
      give the expected texts for any setting.
    - The current parameter values are echoed in ``<span class="lnw-param" data-param=...>``.
    - Plot: ``<svg class="lnw-plot">``, redrawn on every ``input`` event; lines are
      ``<path class="lnw-line" data-series=...>``, bars ``<rect class="lnw-bar"
      data-series=...>``, the marker of the current depth / N is ``line.lnw-marker``.
    - Data: ``<script type="application/json" class="lnw-data">`` (the grid).

    Controls per explorer (``name``: values):

    - ``layer-norm``: ``preset`` (select: ``"1,3,5,7"``, ``"2,2,6,6"``, ``"5,5,5,5"``,
      ``"-2,0,2,4"``, ``"0,0,0,0"``), ``component`` (select ``"1"``..``"4"``), ``value``
      (range, integers −2..7: the chosen component's value; choosing a preset or a
      component resets it to that component's preset value), ``gamma`` (select ``"1"``,
      ``"2"``), ``beta`` (select ``"0"``, ``"1"``), ``eps`` (select ``"0"``, ``"1e-05"``,
      ``"0.1"``, ``"1"``). Readouts ``post-1``..``post-4`` and ``pre-1``..``pre-4``;
      params ``x`` (the vector, ``"(1, 3, 5, 7)"``) and ``value``.
    - ``depth``: ``post_pct`` (range 50..100: Post-LN factor f = value / 100),
      ``branch_pct`` (range 0..50: Pre-LN branch term a = value / 100, factor 1 + a),
      ``depth`` (range 1..128). Readouts ``post`` (``f^L``), ``pre`` (``(1 + a)^L``),
      ``post-depth-below`` (smallest L with ``f^L < 0.01``, or ``never``).
    - ``residual``: ``n`` (range 1..256), ``branch_variance`` (select ``"0.25"``,
      ``"0.5"``, ``"1"``, ``"2"``, ``"4"``). Readouts ``variance`` and ``std``.
"""

from __future__ import annotations

import html
import io
import json
import math
import os
import uuid
from functools import lru_cache
from importlib import resources

import numpy as np

from lnworked.depth import depth_below, gradient_factor, gradient_factors, residual_std, residual_variance
from lnworked.norms import layer_norm

__all__ = [
    "is_static_build",
    "format_readout",
    "layer_norm_outputs",
    "layer_norm_readouts",
    "depth_readouts",
    "residual_readouts",
    "layer_norm_grid",
    "depth_grid",
    "residual_grid",
    "explorer_script",
    "layer_norm_explorer",
    "depth_explorer",
    "residual_explorer",
    "LN_PRESETS",
]


def is_static_build() -> bool:
    """True while the book is being built (outputs go to static HTML, no live kernel)."""
    return os.environ.get("LNWORKED_STATIC_BUILD") == "1"


# --- values (shared by both forms) ----------------------------------------------------

UNDEFINED = "undefined (0/0)"

#: The seeds' vectors (004 Ex 1, Ex 1's sum, Ex 3, Ex 8, Ex 4's stream), by grid key.
LN_PRESETS = {
    "1,3,5,7": (1, 3, 5, 7),
    "2,2,6,6": (2, 2, 6, 6),
    "5,5,5,5": (5, 5, 5, 5),
    "-2,0,2,4": (-2, 0, 2, 4),
    "0,0,0,0": (0, 0, 0, 0),
}
LN_VALUES = tuple(range(-2, 8))          # the range a component can be edited over
LN_GAMMAS = (1.0, 2.0)                   # the seeds use γ = 1 (Ex 1-4) and γ = 2 (Ex 8)
LN_BETAS = (0.0, 1.0)                    # β = 0 (Ex 1-4) and β = 1 (Ex 8)
LN_EPSILONS = (0.0, 1e-5, 0.1, 1.0)
DEPTH_MAX = 128
POST_PCTS = tuple(range(50, 101))        # Post-LN per-layer factor f = pct / 100
BRANCH_PCTS = tuple(range(0, 51))        # Pre-LN branch term a = pct / 100
BELOW_THRESHOLD = 0.01
N_MAX = 256
BRANCH_VARIANCES = (0.25, 0.5, 1.0, 2.0, 4.0)


def format_readout(value) -> str:
    """A readout's text: ``format(value, ".6g")``; ``"0"`` for ±0; ``"undefined (0/0)"`` for NaN."""
    number = float(value)
    if math.isnan(number):
        return UNDEFINED
    if number == 0:
        return "0"
    return format(number, ".6g")


def _key(value: float) -> str:
    """A control value as the grid key: ``format(value, "g")`` (1e-05, 0.1, 1, 0.25)."""
    return format(float(value), "g")


def layer_norm_outputs(x, gamma: float = 1.0, beta: float = 0.0, eps: float = 0.0) -> dict:
    """Post-LN ``LN(x + F(x))`` and Pre-LN ``x + F(LN(x))`` with ``F(u) = u``; γ, β scalars.

    A constant ``x`` with ``eps = 0`` gives NaN (0/0) instead of raising.
    """
    x = np.asarray(x, dtype=float)
    g, b = np.full(x.shape, float(gamma)), np.full(x.shape, float(beta))
    return {
        "post": layer_norm(x + x, g, b, eps, allow_degenerate=True),
        "pre": x + layer_norm(x, g, b, eps, allow_degenerate=True),
    }


def layer_norm_readouts(x, gamma: float = 1.0, beta: float = 0.0, eps: float = 0.0) -> dict:
    """Readout key -> text (``post-1``.., ``pre-1``..) for one setting of the LN explorer."""
    out = layer_norm_outputs(x, gamma, beta, eps)
    return {f"{kind}-{i + 1}": format_readout(v) for kind in ("post", "pre") for i, v in enumerate(out[kind])}


def depth_readouts(post_factor: float, branch: float, depth: int, threshold: float = BELOW_THRESHOLD) -> dict:
    """Readouts of the depth explorer: ``f^L``, ``(1 + a)^L`` and the depth where ``f^L < threshold``."""
    below = "never" if post_factor >= 1 else str(depth_below(post_factor, threshold))
    return {
        "post": format_readout(gradient_factor(post_factor, depth)),
        "pre": format_readout(gradient_factor(1 + branch, depth)),
        "post-depth-below": below,
    }


def residual_readouts(n: int, branch_variance: float) -> dict:
    """Readouts of the residual explorer: ``Var(x_N) = N v`` and ``std = sqrt(N v)``."""
    return {
        "variance": format_readout(residual_variance(n, branch_variance)),
        "std": format_readout(residual_std(n, branch_variance)),
    }


# --- build-time grids (static form) -----------------------------------------------------


def _edited_vectors() -> dict:
    """Every vector the LN controls can reach: a preset with one component in LN_VALUES."""
    vectors = {}
    for preset in LN_PRESETS.values():
        for component in range(len(preset)):
            for v in LN_VALUES:
                vec = list(preset)
                vec[component] = v
                vectors[",".join(str(int(c)) for c in vec)] = vec
    return vectors


@lru_cache(maxsize=1)
def layer_norm_grid() -> dict:
    """JSON-ready grid: ``values[vector][eps][gamma][beta] = [post_1..post_d, pre_1..pre_d]``.

    ``vector`` is the key ``"1,3,5,7"``; the three indices follow ``axes``.
    """
    values = {}
    for key, vec in _edited_vectors().items():
        values[key] = [
            [[
                [format_readout(v) for kind in ("post", "pre") for v in layer_norm_outputs(vec, g, b, e)[kind]]
                for b in LN_BETAS] for g in LN_GAMMAS]
            for e in LN_EPSILONS
        ]
    return {
        "presets": {k: list(v) for k, v in LN_PRESETS.items()},
        "axes": {"eps": [_key(e) for e in LN_EPSILONS], "gamma": [_key(g) for g in LN_GAMMAS],
                 "beta": [_key(b) for b in LN_BETAS]},
        "values": values,
    }


@lru_cache(maxsize=1)
def depth_grid() -> dict:
    """``post[pct][L-1] = f^L`` with ``f = pct/100``; ``pre[pct][L-1] = (1 + pct/100)^L``; ``below[pct]``."""
    def factors(per_layer):
        return [format_readout(v) for v in gradient_factors(per_layer, DEPTH_MAX)]

    return {
        "depths": list(range(1, DEPTH_MAX + 1)),
        "post": {str(p): factors(p / 100) for p in POST_PCTS},
        "pre": {str(p): factors(1 + p / 100) for p in BRANCH_PCTS},
        "below": {str(p): depth_readouts(p / 100, 0.0, 1)["post-depth-below"] for p in POST_PCTS},
        "labels": {"post_pct": {str(p): _key(p / 100) for p in POST_PCTS},
                   "branch_pct": {str(p): f"{_key(p / 100)} (factor {_key(1 + p / 100)})" for p in BRANCH_PCTS}},
        "threshold": BELOW_THRESHOLD,
    }


@lru_cache(maxsize=1)
def residual_grid() -> dict:
    """``variance[v][N-1] = N v`` and ``std[v][N-1] = sqrt(N v)`` for every branch variance ``v``."""
    ns = range(1, N_MAX + 1)
    return {
        "ns": list(ns),
        "variance": {_key(v): [format_readout(residual_variance(n, v)) for n in ns] for v in BRANCH_VARIANCES},
        "std": {_key(v): [format_readout(residual_std(n, v)) for n in ns] for v in BRANCH_VARIANCES},
        "y_max": math.ceil(residual_std(N_MAX, max(BRANCH_VARIANCES))),
    }


# --- static HTML --------------------------------------------------------------------------


def explorer_script() -> str:
    """The explorers' JavaScript (``lnworked/data/explore.js``), inlined into each explorer."""
    return resources.files("lnworked").joinpath("data/explore.js").read_text(encoding="utf-8")


_STYLE = """<style>
.lnw-explorer{border:1px solid rgba(128,128,128,.45);border-radius:6px;padding:.6em .9em;margin:1em 0}
.lnw-explorer .lnw-caption{margin:0 0 .5em 0;font-size:.92em}
.lnw-explorer .lnw-controls{display:flex;flex-wrap:wrap;gap:.4em 1.4em;align-items:center;margin-bottom:.4em}
.lnw-explorer .lnw-controls label{white-space:nowrap}
.lnw-explorer .lnw-controls input[type=range]{vertical-align:middle;width:11em}
.lnw-explorer svg.lnw-plot{display:block;width:100%;max-width:560px;height:auto;color:inherit}
.lnw-explorer table.lnw-table{border-collapse:collapse;margin:.3em 0;font-variant-numeric:tabular-nums}
.lnw-explorer table.lnw-table th,.lnw-explorer table.lnw-table td{padding:.15em .6em;text-align:right;border-bottom:1px solid rgba(128,128,128,.3)}
.lnw-explorer table.lnw-table th:first-child{text-align:left}
</style>"""


def _slider(name: str, label: str, lo: int, hi: int, value: int, shown: str) -> str:
    return (f'<label>{label} <input type="range" name="{name}" min="{lo}" max="{hi}" step="1" '
            f'value="{value}" aria-label="{html.escape(label, quote=True)}"> '
            f'<span class="lnw-param" data-param="{name}">{html.escape(shown)}</span></label>')


def _select(name: str, label: str, options, value: str) -> str:
    opts = "".join(
        f'<option value="{html.escape(v, quote=True)}"{" selected" if v == value else ""}>{html.escape(text)}</option>'
        for v, text in options
    )
    return f'<label>{label} <select name="{name}">{opts}</select></label>'


def _readout(key: str, text: str) -> str:
    return f'<span class="lnw-readout" data-key="{key}">{html.escape(text)}</span>'


def _static(kind: str, caption: str, controls: list, body: str, grid: dict, aria: str):
    from IPython.display import HTML

    root = f"lnw-{kind}-{uuid.uuid4().hex[:12]}"
    data = json.dumps(grid, separators=(",", ":")).replace("</", "<\\/")
    script = explorer_script().replace("</", "<\\/")
    return HTML(
        f'{_STYLE}<div class="lnw-explorer" data-explorer="{kind}" id="{root}">'
        f'<p class="lnw-caption">{caption}</p>'
        f'<div class="lnw-controls">{"".join(controls)}</div>'
        f'<svg class="lnw-plot" viewBox="0 0 520 280" role="img" aria-label="{html.escape(aria, quote=True)}"></svg>'
        f"{body}"
        f'<script type="application/json" class="lnw-data">{data}</script>'
        f"</div><script>{script}\nwindow.lnwExplore.init({json.dumps(root)});</script>"
    )


_LN_CAPTION = (
    "Choose a vector x (a preset from the worked examples, with one component edited), γ, β and ε. "
    "The sublayer is the identity, F(u) = u, as in worked example Ex 2, so Post-LN shows "
    "LN(x + F(x)) = LN(2x) and Pre-LN shows x + F(LN(x)) = x + LN(x). "
    "γ and β are the same for every component. Post-LN's output is pinned to mean β and spread γ; "
    "Pre-LN's output keeps the scale of x."
)
_DEPTH_CAPTION = (
    "The factor by which a gradient is multiplied on its way from the output to the input of "
    "L layers: Post-LN with a per-layer factor f (its norm sits on the path) gives f^L; Pre-LN "
    "with a branch term a on top of the +1 of the residual path gives (1 + a)^L. Log scale."
)
_RESIDUAL_CAPTION = (
    "The Pre-LN residual stream after N independent additions of branch outputs with variance v "
    "(starting from 0): Var(x_N) = N v, so its standard deviation grows like √N."
)


def _ln_table(readouts: dict, d: int) -> str:
    head = "".join(f"<th>x{i + 1}</th>" for i in range(d))
    rows = "".join(
        f"<tr><th>{label}</th>" + "".join(f"<td>{_readout(f'{kind}-{i + 1}', readouts[f'{kind}-{i + 1}'])}</td>" for i in range(d)) + "</tr>"
        for kind, label in (("post", "Post-LN LN(2x)"), ("pre", "Pre-LN x + LN(x)"))
    )
    return f'<table class="lnw-table"><tr><th>output</th>{head}</tr>{rows}</table>'


def _static_layer_norm():
    preset, gamma, beta, eps = "1,3,5,7", 1.0, 0.0, 0.0
    x = LN_PRESETS[preset]
    controls = [
        _select("preset", "preset x", [(k, "(" + ", ".join(map(str, v)) + ")") for k, v in LN_PRESETS.items()], preset),
        _select("component", "edit", [(str(i + 1), f"x{i + 1}") for i in range(4)], "1"),
        _slider("value", "to", LN_VALUES[0], LN_VALUES[-1], x[0], str(x[0])),
        f'<span>x = <span class="lnw-param" data-param="x">({", ".join(map(str, x))})</span></span>',
        _select("gamma", "γ", [(_key(g), _key(g)) for g in LN_GAMMAS], _key(gamma)),
        _select("beta", "β", [(_key(b), _key(b)) for b in LN_BETAS], _key(beta)),
        _select("eps", "ε", [(_key(e), _key(e)) for e in LN_EPSILONS], _key(eps)),
    ]
    body = _ln_table(layer_norm_readouts(x, gamma, beta, eps), len(x))
    return _static("layer-norm", html.escape(_LN_CAPTION), controls, body, layer_norm_grid(),
                   "Grouped bars per component: the input x, the Post-LN output and the Pre-LN output")


def _depth_table(readouts: dict) -> str:
    return (
        '<table class="lnw-table">'
        f'<tr><th>Post-LN f^L at depth L</th><td>{_readout("post", readouts["post"])}</td></tr>'
        f'<tr><th>Pre-LN (1 + a)^L at depth L</th><td>{_readout("pre", readouts["pre"])}</td></tr>'
        f'<tr><th>Post-LN falls under {_key(BELOW_THRESHOLD)} at depth</th>'
        f'<td>{_readout("post-depth-below", readouts["post-depth-below"])}</td></tr></table>'
    )


def _static_depth():
    post, branch, depth = 65, 30, 10
    grid = depth_grid()
    controls = [
        _slider("post_pct", "Post-LN factor f", POST_PCTS[0], POST_PCTS[-1], post, grid["labels"]["post_pct"][str(post)]),
        _slider("branch_pct", "Pre-LN branch a", BRANCH_PCTS[0], BRANCH_PCTS[-1], branch, grid["labels"]["branch_pct"][str(branch)]),
        _slider("depth", "depth L", 1, DEPTH_MAX, depth, str(depth)),
    ]
    body = _depth_table(depth_readouts(post / 100, branch / 100, depth))
    return _static("depth", html.escape(_DEPTH_CAPTION), controls, body, grid,
                   "Log-scale lines of the gradient factor over depth, Pre-LN against Post-LN")


def _residual_table(readouts: dict) -> str:
    return (
        '<table class="lnw-table">'
        f'<tr><th>Var(x_N) = N v</th><td>{_readout("variance", readouts["variance"])}</td></tr>'
        f'<tr><th>std(x_N) = √(N v)</th><td>{_readout("std", readouts["std"])}</td></tr></table>'
    )


def _static_residual():
    n, v = 24, 1.0
    controls = [
        _slider("n", "N", 1, N_MAX, n, str(n)),
        _select("branch_variance", "branch variance v", [(_key(b), _key(b)) for b in BRANCH_VARIANCES], _key(v)),
    ]
    body = _residual_table(residual_readouts(n, v))
    return _static("residual", html.escape(_RESIDUAL_CAPTION), controls, body, residual_grid(),
                   "Line of the residual stream's standard deviation over N, the current N marked")


# --- live form (ipywidgets) ---------------------------------------------------------------


def _png(figure) -> bytes:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    buffer = io.BytesIO()
    FigureCanvasAgg(figure).print_png(buffer)
    return buffer.getvalue()


def _live(kind: str, caption: str, controls: dict, layout: list, update):
    """Wire ``update(values) -> (readout_html, readouts)`` to every control; return the box."""
    import ipywidgets as widgets
    from matplotlib.figure import Figure

    figure = Figure(figsize=(6.2, 3.2), dpi=90, layout="constrained")
    readout = widgets.HTML()
    image = widgets.Image(format="png")
    box = widgets.VBox([widgets.HTML(f"<p>{html.escape(caption)}</p>"), *layout, readout, image])
    box.add_class("lnw-explorer-live")
    box.lnw_kind, box.lnw_controls, box.lnw_readout, box.lnw_image, box.lnw_figure = kind, controls, readout, image, figure

    def refresh(_change=None):
        figure.clear()
        table, values = update({name: w.value for name, w in controls.items()}, figure)
        box.lnw_values = values
        readout.value = table
        image.value = _png(figure)

    for w in controls.values():
        w.observe(refresh, names="value")
    refresh()
    return box


def _parse_vector(text: str):
    parts = [p for p in text.replace(";", ",").replace("(", "").replace(")", "").split(",") if p.strip()]
    try:
        vec = np.array([float(p) for p in parts])
    except ValueError:
        vec = np.array([])
    if vec.size < 2 or not np.all(np.isfinite(vec)):
        raise ValueError("x: give at least two finite numbers separated by commas")
    return vec


def _live_layer_norm():
    import ipywidgets as widgets

    controls = {
        "preset": widgets.Dropdown(options=[("(" + ", ".join(map(str, v)) + ")", k) for k, v in LN_PRESETS.items()],
                                   value="1,3,5,7", description="preset"),
        "x": widgets.Text(value="1, 3, 5, 7", description="x", continuous_update=False),
        "gamma": widgets.FloatSlider(value=1.0, min=-3.0, max=3.0, step=0.1, description="γ"),
        "beta": widgets.FloatSlider(value=0.0, min=-3.0, max=3.0, step=0.1, description="β"),
        "eps": widgets.Dropdown(options=[(_key(e), e) for e in LN_EPSILONS], value=0.0, description="ε"),
    }
    controls["preset"].observe(
        lambda change: setattr(controls["x"], "value", ", ".join(map(str, LN_PRESETS[change["new"]]))), names="value")

    def update(v, figure):
        try:
            x = _parse_vector(v["x"])
        except ValueError as err:
            return f"<p><b>{html.escape(str(err))}</b></p>", {}
        out = layer_norm_outputs(x, v["gamma"], v["beta"], v["eps"])
        readouts = layer_norm_readouts(x, v["gamma"], v["beta"], v["eps"])
        ax = figure.add_subplot()
        idx, width = np.arange(x.size), 0.27
        ax.bar(idx - width, x, width, label="input x", color="#8a8f98")
        ax.bar(idx, np.nan_to_num(out["post"]), width, label="Post-LN LN(x + F(x))", color="#d9480f")
        ax.bar(idx + width, np.nan_to_num(out["pre"]), width, label="Pre-LN x + F(LN(x))", color="#1c7ed6")
        ax.axhline(0, color="black", lw=0.8)
        ax.set_xticks(idx, [f"x{i + 1}" for i in idx])
        ax.legend(fontsize=8)
        return _ln_table(readouts, x.size), readouts

    layout = [widgets.HBox([controls["preset"], controls["x"]]),
              widgets.HBox([controls["gamma"], controls["beta"], controls["eps"]])]
    return _live("layer-norm", _LN_CAPTION, controls, layout, update)


def _live_depth():
    import ipywidgets as widgets

    controls = {
        "post_factor": widgets.FloatSlider(value=0.65, min=0.5, max=1.0, step=0.01, description="Post-LN f"),
        "branch": widgets.FloatSlider(value=0.3, min=0.0, max=0.5, step=0.01, description="Pre-LN a"),
        "depth": widgets.IntSlider(value=10, min=1, max=DEPTH_MAX, description="depth L"),
    }

    def update(v, figure):
        readouts = depth_readouts(v["post_factor"], v["branch"], v["depth"])
        ax = figure.add_subplot()
        depths = np.arange(1, DEPTH_MAX + 1)
        for key, factor, color in (("pre", 1 + v["branch"], "#1c7ed6"), ("post", v["post_factor"], "#d9480f")):
            label = "Pre-LN (1 + a)^L" if key == "pre" else "Post-LN f^L"
            ax.semilogy(depths, gradient_factors(factor, DEPTH_MAX), color=color, label=label, gid=key)
            ax.plot([v["depth"]], [gradient_factor(factor, v["depth"])], "o", color=color)
        ax.axvline(v["depth"], color="gray", ls="--", lw=0.8)
        ax.set_xlabel("depth L (layers)")
        ax.set_ylabel("gradient factor at the input")
        ax.legend(fontsize=8)
        return _depth_table(readouts), readouts

    return _live("depth", _DEPTH_CAPTION, controls, [widgets.HBox(list(controls.values()))], update)


def _live_residual():
    import ipywidgets as widgets

    controls = {
        "n": widgets.IntSlider(value=24, min=1, max=N_MAX, description="N"),
        "branch_variance": widgets.Dropdown(options=[(_key(b), b) for b in BRANCH_VARIANCES], value=1.0,
                                            description="variance v"),
    }

    def update(v, figure):
        readouts = residual_readouts(v["n"], v["branch_variance"])
        ax = figure.add_subplot()
        ns = np.arange(1, N_MAX + 1)
        ax.plot(ns, [residual_std(int(n), v["branch_variance"]) for n in ns], color="#1c7ed6", gid="std",
                label=f"std of the stream, v = {_key(v['branch_variance'])}")
        ax.plot([v["n"]], [residual_std(v["n"], v["branch_variance"])], "o", color="#1c7ed6")
        ax.axvline(v["n"], color="gray", ls="--", lw=0.8)
        ax.set_ylim(0, math.ceil(residual_std(N_MAX, max(BRANCH_VARIANCES))))
        ax.set_xlabel("N (additions to the residual stream)")
        ax.set_ylabel("std(x_N)")
        ax.legend(fontsize=8)
        return _residual_table(readouts), readouts

    return _live("residual", _RESIDUAL_CAPTION, controls, [widgets.HBox(list(controls.values()))], update)


# --- public API -------------------------------------------------------------------------------


def layer_norm_explorer():
    """LayerNorm of an editable vector with γ, β, ε; Post-LN beside Pre-LN (identity sublayer)."""
    return _static_layer_norm() if is_static_build() else _live_layer_norm()


def depth_explorer():
    """Gradient factor over depth: Post-LN ``f^L`` against Pre-LN ``(1 + a)^L``, log scale."""
    return _static_depth() if is_static_build() else _live_depth()


def residual_explorer():
    """Pre-LN residual-stream growth: ``Var = N v``, ``std = sqrt(N v)``, over N."""
    return _static_residual() if is_static_build() else _live_residual()
