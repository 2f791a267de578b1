"""The book's matplotlib figures, in one house style.

Every function here builds a :class:`BookFigure` (a :class:`matplotlib.figure.Figure`
subclass) directly, never through ``pyplot``: nothing auto-displays, nothing leaks into a
global figure list, and a notebook can ``glue`` the figure. ``BookFigure`` adds
``_repr_png_`` because a bare ``Figure`` has no PNG representation in a kernel where
``pyplot`` was never imported (it would show as ``<Figure size ...>``).

House style (:func:`new_figure`, :func:`style_axes`): an opaque white face colour so the
figures stay readable in the theme's dark mode, font sizes of 11-13 pt, a title on every
axes, and the seeds' palette (:data:`PALETTE`): violet for sublayers, orange for the
residual highway, magenta for adds and Post-LN, navy for LayerNorm boxes and blue for
seed 002's identity highway.

Every number a figure plots comes from the library (the worked-example registry of
:mod:`lnworked.examples`, :mod:`lnworked.depth`, :mod:`lnworked.norms`,
:mod:`lnworked.blocks`); none is typed here. Artists that tests look for carry a ``gid``
(``"highway"``, ``"box-norm"``, ...).
"""

from __future__ import annotations

import io
import math

import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import Circle, FancyArrowPatch, FancyBboxPatch

from lnworked.blocks import MLP, post_ln_jacobian, pre_ln_jacobian
from lnworked.depth import gradient_factors, residual_std, residual_variance_monte_carlo
from lnworked.display import format_value
from lnworked.examples import all_examples, get_example
from lnworked.norms import DegenerateInputError, layer_norm

__all__ = [
    "PALETTE",
    "FONT",
    "BookFigure",
    "new_figure",
    "style_axes",
    "figure_png",
    "block_diagrams",
    "post_ln_bars",
    "pre_ln_bars",
    "identity_path_diagram",
    "gradient_over_depth",
    "residual_growth",
    "jacobian_singular_value_samples",
    "block_jacobian_singular_values",
    "epsilon_effect",
    "errata_chart",
]

#: The seeds' colours, by role and by name (seed 004's figures s01-s03, seed 002's diagram).
PALETTE = {
    "sublayer": "#7b3fbf",  # violet: sublayer F boxes, Pre-LN titles
    "highway": "#e8820c",  # orange: the residual highway
    "add": "#c2185b",  # magenta: add boxes
    "post": "#c2185b",  # magenta: Post-LN
    "pre": "#7b3fbf",  # violet: Pre-LN
    "norm": "#1f2a5c",  # navy: LayerNorm boxes
    "identity": "#1f6fd1",  # blue: seed 002's untouched identity highway
    "seed": "#8a8a8a",  # grey: a seed text's stated value
    "library": "#1f2a5c",  # navy: the library's computed value
    "text": "#1a1a1a",
    "grid": "#d9d9d9",
    "background": "#ffffff",
}
PALETTE.update(violet=PALETTE["sublayer"], orange=PALETTE["highway"], magenta=PALETTE["add"],
               navy=PALETTE["norm"], blue=PALETTE["identity"], grey=PALETTE["seed"])

#: Font sizes in points.
FONT = {"title": 13, "label": 12, "tick": 11, "legend": 11, "annotation": 11, "box": 12}


class BookFigure(Figure):
    """A :class:`~matplotlib.figure.Figure` that renders itself as PNG in a notebook."""

    def _repr_png_(self) -> bytes:
        return figure_png(self)


def figure_png(fig: Figure, dpi: int = 110) -> bytes:
    """The figure as PNG bytes, keeping its opaque face colour."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi, facecolor=fig.get_facecolor(), bbox_inches="tight")
    return buffer.getvalue()


def style_axes(ax, grid: bool = True):
    """Apply the house style to one axes: tick sizes, light grid, no top/right spines."""
    ax.set_facecolor(PALETTE["background"])
    ax.tick_params(labelsize=FONT["tick"], colors=PALETTE["text"])
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    if grid:
        ax.grid(True, color=PALETTE["grid"], linewidth=0.8, zorder=0)
        ax.set_axisbelow(True)
    return ax


def new_figure(width: float, height: float, ncols: int = 1, nrows: int = 1, **subplot_kw):
    """A white :class:`BookFigure` of ``width`` x ``height`` inches and its styled axes.

    Returns ``(fig, axes)``: ``axes`` is one Axes when ``ncols == nrows == 1``, otherwise a
    flat NumPy array of Axes (row by row), like ``pyplot.subplots`` with squeeze.
    """
    fig = BookFigure(figsize=(width, height), facecolor=PALETTE["background"], layout="constrained")
    fig.patch.set_alpha(1.0)
    grid = fig.subplots(nrows, ncols, squeeze=False, subplot_kw=subplot_kw or None)
    axes = np.array([style_axes(ax) for ax in grid.ravel()], dtype=object)
    return fig, (axes[0] if axes.size == 1 else axes)


def _title(ax, text: str, color: str | None = None):
    ax.set_title(text, fontsize=FONT["title"], color=color or PALETTE["text"])


def _labels(ax, xlabel: str, ylabel: str):
    ax.set_xlabel(xlabel, fontsize=FONT["label"])
    ax.set_ylabel(ylabel, fontsize=FONT["label"])


def _legend(ax, **kw):
    ax.legend(fontsize=FONT["legend"], frameon=False, **kw)


# --- Diagrams ------------------------------------------------------------------------

_BOX_W, _BOX_H = 1.5, 0.7
_ADD_R = 0.32
_HIGHWAY_X = 1.45


def _diagram_axes(ax, xlim, ylim):
    ax.set_xlim(*xlim)
    ax.set_ylim(*ylim)
    ax.set_aspect("equal")
    ax.axis("off")


def _box(ax, center, label, color, gid, width=_BOX_W, height=_BOX_H):
    """A rounded, filled box with white text, centred at ``center``; ``gid`` names it for tests."""
    x, y = center
    patch = FancyBboxPatch((x - width / 2, y - height / 2), width, height,
                           boxstyle="round,pad=0.02,rounding_size=0.12", facecolor=color,
                           edgecolor=color, zorder=3, gid=gid)
    ax.add_patch(patch)
    ax.text(x, y, label, ha="center", va="center", color="white", fontsize=FONT["box"], zorder=4)
    return patch


def _add_node(ax, center, gid="box-add", radius=_ADD_R):
    patch = Circle(center, radius, facecolor=PALETTE["add"], edgecolor=PALETTE["add"], zorder=3, gid=gid)
    ax.add_patch(patch)
    ax.text(*center, "+", ha="center", va="center", color="white", fontsize=FONT["box"] + 3,
            fontweight="bold", zorder=4)
    return patch


def _arrow(ax, start, end, color, width=1.8, gid=None):
    arrow = FancyArrowPatch(start, end, arrowstyle="-|>", mutation_scale=14, color=color,
                            linewidth=width, zorder=2, gid=gid, shrinkA=0, shrinkB=0)
    ax.add_patch(arrow)
    return arrow


def _highway(ax, points, color=None, gid="highway", width=3.2):
    """A polyline (gid ``highway``) with an arrowhead on its last segment."""
    color = color or PALETTE["highway"]
    xs, ys = zip(*points)
    (line,) = ax.plot(xs, ys, color=color, linewidth=width, solid_capstyle="round",
                      solid_joinstyle="round", zorder=2, gid=gid)
    _arrow(ax, points[-2], points[-1], color, width=width)
    return line


def _endpoint(ax, xy, label, va):
    ax.text(*xy, label, ha="center", va=va, fontsize=FONT["box"], color=PALETTE["text"])


def _post_ln_diagram(ax):
    """Post-LN: fork -> F -> add -> LN; the orange highway runs into the add and on into LN."""
    fork, f_y, add_y, ln_y, out_y = 1.0, 2.4, 3.8, 5.2, 6.5
    ax.plot([0], [fork], "o", color=PALETTE["text"], markersize=6, zorder=4)
    ax.plot([0, 0], [0.2, fork], color=PALETTE["text"], linewidth=1.8, zorder=2)
    _arrow(ax, (0, fork), (0, f_y - _BOX_H / 2), PALETTE["text"])
    _box(ax, (0, f_y), "Sublayer F", PALETTE["sublayer"], "box-sublayer")
    _arrow(ax, (0, f_y + _BOX_H / 2), (0, add_y - _ADD_R), PALETTE["text"])
    _add_node(ax, (0, add_y))
    _box(ax, (0, ln_y), "LayerNorm", PALETTE["norm"], "box-norm")
    _arrow(ax, (0, ln_y + _BOX_H / 2), (0, out_y - 0.15), PALETTE["text"])
    _highway(ax, [(0, fork), (_HIGHWAY_X, fork), (_HIGHWAY_X, add_y), (_ADD_R, add_y),
                  (0, add_y), (0, ln_y - _BOX_H / 2)])
    _endpoint(ax, (0, 0.15), "$x_{in}$", "top")
    _endpoint(ax, (0, out_y - 0.1), "$x_{out}$", "bottom")
    ax.text(_HIGHWAY_X + 0.15, fork + 1.0, "highway\nenters LN", color=PALETTE["highway"],
            fontsize=FONT["annotation"], va="center")
    _title(ax, "Post-LN\n$x_{i+1} = \\mathrm{LN}(x_i + F(x_i))$", PALETTE["post"])
    _diagram_axes(ax, (-1.3, 3.1), (-0.4, 7.1))


def _pre_ln_diagram(ax):
    """Pre-LN: fork -> LN -> F -> add; the orange highway bypasses every box into the add."""
    fork, ln_y, f_y, add_y, out_y = 1.0, 2.4, 3.8, 5.2, 6.5
    ax.plot([0], [fork], "o", color=PALETTE["text"], markersize=6, zorder=4)
    ax.plot([0, 0], [0.2, fork], color=PALETTE["text"], linewidth=1.8, zorder=2)
    _arrow(ax, (0, fork), (0, ln_y - _BOX_H / 2), PALETTE["text"])
    _box(ax, (0, ln_y), "LayerNorm", PALETTE["norm"], "box-norm")
    _arrow(ax, (0, ln_y + _BOX_H / 2), (0, f_y - _BOX_H / 2), PALETTE["text"])
    _box(ax, (0, f_y), "Sublayer F", PALETTE["sublayer"], "box-sublayer")
    _arrow(ax, (0, f_y + _BOX_H / 2), (0, add_y - _ADD_R), PALETTE["text"])
    _add_node(ax, (0, add_y))
    _arrow(ax, (0, add_y + _ADD_R), (0, out_y - 0.15), PALETTE["text"])
    _highway(ax, [(0, fork), (_HIGHWAY_X, fork), (_HIGHWAY_X, add_y), (_ADD_R, add_y)])
    _endpoint(ax, (0, 0.15), "$x_{in}$", "top")
    _endpoint(ax, (0, out_y - 0.1), "$x_{out}$", "bottom")
    ax.text(_HIGHWAY_X + 0.15, fork + 1.0, "highway\nbypasses\nevery box", color=PALETTE["highway"],
            fontsize=FONT["annotation"], va="center")
    _title(ax, "Pre-LN\n$x_{i+1} = x_i + F(\\mathrm{LN}(x_i))$", PALETTE["pre"])
    _diagram_axes(ax, (-1.3, 3.1), (-0.4, 7.1))


def block_diagrams() -> Figure:
    """Seed 004's figure s01: Post-LN (left) and Pre-LN (right) blocks side by side.

    The orange residual highway enters the navy LayerNorm box in Post-LN and bypasses every
    box in Pre-LN, going straight up into the magenta add.
    """
    fig, (post, pre) = new_figure(9.0, 6.4, ncols=2)
    _post_ln_diagram(post)
    _pre_ln_diagram(pre)
    return fig


def _stacked_column(ax, layers: int, pre: bool):
    """One column of ``layers`` blocks for :func:`identity_path_diagram`."""
    step, bottom, small = 2.0, 0.6, {"width": 0.8, "height": 0.4}
    top = bottom + layers * step + 0.3
    stream = PALETTE["identity"] if pre else PALETTE["seed"]
    _endpoint(ax, (0, bottom - 0.15), "$x_0$", "top")
    _endpoint(ax, (0, top + 0.1), f"$x_{{{layers}}}$", "bottom")
    if pre:
        ax.plot([0, 0], [bottom, top], color=stream, linewidth=4, zorder=2, gid="identity")
    for layer in range(layers):
        y = bottom + layer * step
        tap = y + 0.3
        ax.plot([0, 1.2], [tap, tap], color=PALETTE["text"], linewidth=1.4, zorder=1)
        if pre:
            n_y, f_y, add_y = y + 0.75, y + 1.35, y + 1.75
            _arrow(ax, (1.2, tap), (1.2, n_y - 0.2), PALETTE["text"], width=1.4)
            _box(ax, (1.2, n_y), "N", PALETTE["norm"], "box-norm", **small)
            _arrow(ax, (1.2, n_y + 0.2), (1.2, f_y - 0.2), PALETTE["text"], width=1.4)
        else:
            f_y, add_y, n_y = y + 0.75, y + 1.15, y + 1.65
            _arrow(ax, (1.2, tap), (1.2, f_y - 0.2), PALETTE["text"], width=1.4)
            ax.plot([0, 0], [y, n_y], color=stream, linewidth=4, zorder=1, gid="residual")
            ax.plot([0, 0], [n_y, y + step], color=stream, linewidth=4, zorder=1, gid="residual")
            _box(ax, (0, n_y), "N", PALETTE["norm"], "box-norm", **small)
        _box(ax, (1.2, f_y), "$F$", PALETTE["sublayer"], "box-sublayer", **small)
        ax.plot([1.2, 1.2], [f_y + 0.2, add_y], color=PALETTE["text"], linewidth=1.4, zorder=1)
        _arrow(ax, (1.2, add_y), (0.17, add_y), PALETTE["text"], width=1.4)
        _add_node(ax, (0, add_y), radius=0.17)
    if not pre:
        ax.plot([0, 0], [bottom + layers * step, top], color=stream, linewidth=4, zorder=1)
    _arrow(ax, (0, top - 0.3), (0, top), stream, width=4)
    _diagram_axes(ax, (-1.4, 2.6), (bottom - 0.7, top + 0.7))


def identity_path_diagram(layers: int = 4) -> Figure:
    """Seed 002's diagram: ``layers`` stacked blocks, Pre-Norm (left) and Post-Norm (right).

    Pre-Norm: a blue identity line (gid ``identity``) runs the full height, untouched; the
    branches tap it, pass N and F, and add back. Post-Norm: the residual is still added,
    but an N box sits on the stream after every add, so every path passes through N.
    """
    fig, (pre, post) = new_figure(8.0, 1.4 + 1.4 * layers, ncols=2)
    _stacked_column(pre, layers, pre=True)
    _title(pre, "Pre-Norm: untouched identity highway", PALETTE["identity"])
    _stacked_column(post, layers, pre=False)
    _title(post, "Post-Norm: every path passes through N", PALETTE["post"])
    return fig


# --- Seed 004's bar charts (s02, s03) -------------------------------------------------


def _bars(ax, values, color, title, mean_color, title_color=None):
    """Bars for one vector with a dashed mean line labelled ``mean=<computed mean>``."""
    values = np.asarray(values, dtype=float)
    positions = np.arange(1, values.size + 1)
    ax.bar(positions, values, color=color, width=0.6, zorder=2, gid="bars")
    mean = float(np.mean(values))
    if abs(mean) < 1e-12 * np.max(np.abs(values)):
        mean = 0.0  # rounding noise of a mean that is zero in exact arithmetic
    ax.axhline(mean, color=mean_color, linestyle="--", linewidth=2, zorder=3, gid="mean")
    ax.text(positions[-1] + 0.5, mean, f"mean={format_value(mean, 4)}", color=mean_color,
            fontsize=FONT["annotation"], va="bottom", ha="right", zorder=4,
            bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.85, "pad": 1.5})
    ax.axhline(0, color=PALETTE["text"], linewidth=0.8, zorder=1)
    ax.set_xticks(positions, [f"$x_{i}$" for i in positions])
    _title(ax, title, title_color)
    ax.set_xlabel("feature", fontsize=FONT["label"])
    ax.set_ylim(min(0.0, values.min()) - 0.8, max(0.0, values.max()) + 1.0)
    return ax


def _step(example, label: str):
    """The value of the step named ``label`` in a registry record."""
    for name, value in example.steps:
        if name == label:
            return value
    raise KeyError(f"{example.id} has no step {label!r}")


def post_ln_bars() -> Figure:
    """Seed 004's figure s02 from ``004-ex1``: z = x + F(x) (left) and LN(z) (right)."""
    example = get_example("004-ex1")
    fig, (left, right) = new_figure(9.0, 3.8, ncols=2)
    _bars(left, _step(example, "z = x + F(x)"), PALETTE["sublayer"], "$z = x + F(x)$", PALETTE["highway"])
    _bars(right, example.computed, PALETTE["post"], "$x_{out} = \\mathrm{LN}(z)$", PALETTE["highway"])
    left.set_ylabel("value", fontsize=FONT["label"])
    return fig


def pre_ln_bars() -> Figure:
    """Seed 004's figure s03 from ``004-ex2``: x, LN(x) and x + LN(x), each with its mean."""
    example = get_example("004-ex2")
    fig, axes = new_figure(12.0, 3.8, ncols=3)
    _bars(axes[0], example.inputs["x"], PALETTE["sublayer"], "$x$", PALETTE["norm"])
    _bars(axes[1], _step(example, "LN(x)"), PALETTE["highway"], "$\\mathrm{LN}(x)$", PALETTE["norm"])
    _bars(axes[2], example.computed, PALETTE["post"], "$x + \\mathrm{LN}(x)$", PALETTE["norm"])
    axes[0].set_ylabel("value", fontsize=FONT["label"])
    return fig


# --- Depth ---------------------------------------------------------------------------


def gradient_over_depth(pre_factor: float = 1.3, post_factor: float = 0.65, layers: int = 96,
                        marks=(10, 24, 96)) -> Figure:
    """Gradient factor ``f^L`` against depth L (log scale), Pre-LN and Post-LN.

    Lines come from :func:`lnworked.depth.gradient_factors`; the depths in ``marks`` (those
    not beyond ``layers``) are marked and annotated with their values.
    """
    fig, ax = new_figure(8.0, 4.8)
    depth = np.arange(1, layers + 1)
    for label, factor, color, offset in (("Pre-LN", pre_factor, PALETTE["pre"], (-8, 8)),
                                         ("Post-LN", post_factor, PALETTE["post"], (-8, -16))):
        values = gradient_factors(factor, layers)
        ax.plot(depth, values, color=color, linewidth=2.4, label=f"{label}: ${format_value(factor)}^L$",
                gid=f"line-{label}")
        for mark in (m for m in marks if 1 <= m <= layers):
            value = values[mark - 1]
            ax.plot([mark], [value], "o", color=color, markersize=7, gid=f"mark-{label}")
            ax.annotate(format_value(value, 3), (mark, value), textcoords="offset points", xytext=offset,
                        ha="right", fontsize=FONT["annotation"], color=color)
    ax.axhline(1.0, color=PALETTE["seed"], linestyle=":", linewidth=1.5)
    ax.set_yscale("log")
    ax.set_xlim(0, layers + 2)
    _labels(ax, "depth $L$ (layers)", "gradient factor $f^L$ (log scale)")
    _title(ax, "Gradient reaching the input after $L$ layers")
    _legend(ax, loc="lower left")
    return fig


def _post_ln_stream_std(additions: int, branch_variance: float, samples: int, seed: int) -> np.ndarray:
    """Std (over its ``samples`` features) of a Post-LN stream x <- LN(x + h), after each addition."""
    rng = np.random.default_rng(seed + 1)
    x = layer_norm(rng.normal(0.0, 1.0, samples))
    stds = []
    for _ in range(additions):
        x = layer_norm(x + rng.normal(0.0, math.sqrt(branch_variance), samples))
        stds.append(float(np.std(x)))
    return np.array(stds)


def residual_growth(max_additions: int = 96, branch_variance: float = 1.0, samples: int = 4000,
                    seed: int = 0) -> Figure:
    """Std of the residual stream against the number of additions N.

    Pre-LN: the analytic ``sqrt(N v)`` line (:func:`lnworked.depth.residual_std`) and Monte
    Carlo points (:func:`lnworked.depth.residual_variance_monte_carlo`). Post-LN: the
    stream ``x <- LN(x + h)`` simulated with :func:`lnworked.norms.layer_norm`, whose std
    stays at 1.
    """
    fig, ax = new_figure(8.0, 4.8)
    n = np.arange(1, max_additions + 1)
    analytic = np.array([residual_std(int(k), branch_variance) for k in n])
    ax.plot(n, analytic, color=PALETTE["pre"], linewidth=2.4, gid="pre-analytic",
            label="Pre-LN stream, $\\sqrt{N v}$")
    points = np.unique(np.linspace(1, max_additions, min(12, max_additions)).round().astype(int))
    monte_carlo = np.sqrt([residual_variance_monte_carlo(int(k), branch_variance, samples, seed) for k in points])
    ax.plot(points, monte_carlo, "o", color=PALETTE["highway"], markersize=7, gid="pre-monte-carlo",
            label=f"Pre-LN, Monte Carlo ({samples} samples)")
    post = _post_ln_stream_std(max_additions, branch_variance, samples, seed)
    ax.plot(n, post, color=PALETTE["post"], linewidth=2.4, gid="post", label="Post-LN stream, LN(x + h)")
    ax.set_xlim(0, max_additions + 1)
    ax.set_ylim(0, analytic.max() * 1.1)
    _labels(ax, "additions $N$", "std of the residual stream")
    _title(ax, f"Residual stream after $N$ additions of variance $v = {format_value(branch_variance)}$")
    _legend(ax, loc="upper left")
    return fig


# --- Jacobians -----------------------------------------------------------------------


def jacobian_singular_value_samples(d: int = 16, samples: int = 200, seed: int = 0):
    """Singular values of the Pre-LN and Post-LN block Jacobians at random inputs.

    Inputs ``x = c z`` with ``z ~ Normal(0, I_d)`` and scale ``c`` log-uniform in [1, 10]
    (a residual stream of std 1 to 10); sublayer ``MLP.random(d, 4d, seed)``. Returns
    ``(pre, post, sigma)``: arrays of shape ``(samples, d)`` (singular values, descending)
    and the std ``sigma`` of ``x + F(x)`` that the Post-LN norm divides by.
    """
    rng = np.random.default_rng(seed)
    scale = 10.0 ** rng.uniform(0.0, 1.0, (samples, 1))
    x = scale * rng.normal(0.0, 1.0, (samples, d))
    sublayer = MLP.random(d, 4 * d, seed=seed)
    pre = np.linalg.svd(pre_ln_jacobian(x, sublayer), compute_uv=False)
    post = np.linalg.svd(post_ln_jacobian(x, sublayer), compute_uv=False)
    sigma = np.std(x + sublayer(x), axis=-1)
    return pre, post, sigma


def block_jacobian_singular_values(d: int = 16, samples: int = 200, seed: int = 0) -> Figure:
    """Histogram of block-Jacobian singular values (left) and Post-LN's 1/σ scaling (right).

    Pre-LN's cluster around 1 (the identity term); Post-LN's have two (near-)zero values per
    input, the mean and scale directions LayerNorm removes, and the rest scale like 1/σ.
    """
    pre, post, sigma = jacobian_singular_value_samples(d, samples, seed)
    fig, (hist, scaling) = new_figure(11.0, 4.4, ncols=2)
    bins = np.linspace(0.0, max(pre.max(), post.max()) * 1.02, 50)
    hist.hist(pre.ravel(), bins=bins, color=PALETTE["pre"], alpha=0.75, label="Pre-LN", gid="hist-pre")
    hist.hist(post.ravel(), bins=bins, color=PALETTE["post"], alpha=0.75, label="Post-LN", gid="hist-post")
    zeros = int(np.sum(post < 1e-4 * post[:, :1]))
    hist.annotate(f"Post-LN: {format_value(zeros / samples)} near-zero\nsingular values per input",
                  (0, zeros), xytext=(0.25, 0.85), textcoords="axes fraction", fontsize=FONT["annotation"],
                  color=PALETTE["post"], arrowprops={"arrowstyle": "->", "color": PALETTE["post"]})
    _labels(hist, "singular value", "count")
    _title(hist, f"Block Jacobian singular values ($d = {d}$, {samples} inputs)")
    _legend(hist, loc="upper right")
    scaling.loglog(1 / sigma, post[:, 0], "o", color=PALETTE["post"], markersize=4, gid="post-largest",
                   label="Post-LN, largest")
    scaling.loglog(1 / sigma, pre[:, 0], "o", color=PALETTE["pre"], markersize=4, gid="pre-largest",
                   label="Pre-LN, largest")
    _labels(scaling, "$1/\\sigma$ of $x + F(x)$", "largest singular value")
    _title(scaling, "Post-LN scales with $1/\\sigma$; Pre-LN stays near 1")
    _legend(scaling, loc="upper left")
    return fig


def _tex_number(value: float) -> str:
    """``1e-05`` as ``10^{-5}``, ``0.01`` as ``10^{-2}``, other numbers as :func:`format_value`."""
    if value > 0 and math.log10(value) == round(math.log10(value)) and not 0.1 <= value <= 100:
        return f"10^{{{round(math.log10(value))}}}"
    return format_value(value).replace("−", "-")


# --- LayerNorm's ε -------------------------------------------------------------------

_EPSILONS = (0.0, 1e-5, 1e-2)


def epsilon_effect(epsilons=_EPSILONS, base: float = 5.0) -> Figure:
    """max |LN(x)| for ``x = base + s u`` (u the unit-std pattern of (-3, -1, 1, 3)) as s -> 0.

    With ε = 0 the output keeps its size however small the spread (noise is amplified by
    1/s) and s = 0 is 0/0 (skipped, :class:`~lnworked.norms.DegenerateInputError`); with
    ε > 0 the output fades smoothly to 0 once s falls below √ε.
    """
    pattern = layer_norm(np.array([-3.0, -1.0, 1.0, 3.0]), eps=0)
    spreads = np.logspace(-7, 1, 161)
    fig, ax = new_figure(8.0, 4.8)
    colors = (PALETTE["post"], PALETTE["highway"], PALETTE["norm"], PALETTE["pre"], PALETTE["identity"])
    for eps, color in zip(epsilons, colors):
        x = base + spreads[:, None] * pattern
        magnitude = np.max(np.abs(layer_norm(x, eps=eps)), axis=-1)
        ax.plot(spreads, magnitude, color=color, linewidth=2.4, gid=f"eps-{eps:g}",
                label=f"$\\epsilon = {_tex_number(eps)}$")
        if eps > 0:
            ax.axvline(math.sqrt(eps), color=color, linestyle=":", linewidth=1.5)
            ax.text(math.sqrt(eps), 3e-7, " $\\sqrt{\\epsilon}$",
                    color=color, fontsize=FONT["annotation"], va="bottom")
    flat = np.full(4, base)
    try:
        layer_norm(flat, eps=0)
        at_zero = "finite"
    except DegenerateInputError:
        at_zero = "0/0 (error)"
    at_zero_eps = format_value(np.max(np.abs(layer_norm(flat, eps=epsilons[-1]))))
    ax.text(0.02, 0.05, f"spread $s = 0$: $\\epsilon = 0$ gives {at_zero}; $\\epsilon > 0$ gives {at_zero_eps}",
            transform=ax.transAxes, fontsize=FONT["annotation"], color=PALETTE["text"])
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_ylim(1e-7, 10)
    _labels(ax, "spread $s$ of the input (std)", "max $|\\mathrm{LN}(x)|$")
    _title(ax, "LayerNorm of a nearly flat vector: $\\epsilon$ is the cushion")
    _legend(ax, loc="center right")
    return fig


# --- Errata --------------------------------------------------------------------------


def _numeric(value):
    """A flat float array, or None when the value is not a number or a vector of numbers."""
    if value is None or isinstance(value, (str, dict, bool)):
        return None
    try:
        array = np.atleast_1d(np.asarray(value, dtype=float)).ravel()
    except (TypeError, ValueError):
        return None
    return array if np.all(np.isfinite(array)) else None


def numeric_errata():
    """``(example, stated, computed)`` for each record with ``agrees is False`` and numeric values."""
    rows = []
    for example in all_examples():
        stated, computed = _numeric(example.stated), _numeric(example.computed)
        if example.agrees is False and stated is not None and computed is not None and stated.size == computed.size:
            rows.append((example, stated, computed))
    return rows


def errata_chart() -> Figure:
    """For each erratum with numbers: the seed's value (grey) beside the library's (navy).

    One panel per record, titled by its id; a log scale where all values are positive and
    tiny or spread over more than two decades.
    """
    rows = numeric_errata()
    ncols = min(2, max(1, len(rows)))
    nrows = max(1, math.ceil(len(rows) / ncols))
    fig, axes = new_figure(5.2 * ncols, 3.6 * nrows, ncols=ncols, nrows=nrows)
    axes = np.atleast_1d(axes)
    for ax, (example, stated, computed) in zip(axes, rows):
        positions = np.arange(stated.size)
        values = np.concatenate([stated, computed])
        positive = bool(np.all(values > 0))
        log = positive and (values.max() < 1e-3 or values.max() / values.min() > 100)
        ax.bar(positions - 0.2, stated, width=0.4, color=PALETTE["seed"], label="seed states", gid="seed")
        ax.bar(positions + 0.2, computed, width=0.4, color=PALETTE["library"], label="library computes",
               gid="library")
        for offset, series in ((-0.2, stated), (0.2, computed)):
            for position, value in zip(positions, series):
                ax.text(position + offset, value, format_value(value, 3), ha="center",
                        va="bottom" if value >= 0 else "top", fontsize=FONT["annotation"] - 1)
        if log:
            ax.set_yscale("log")
            ax.set_ylim(values.min() / 3, values.max() * 5)
        else:
            span = max(abs(values.min()), abs(values.max()))
            ax.set_ylim(min(0.0, values.min()) - 0.2 * span, max(0.0, values.max()) + 0.25 * span)
            ax.axhline(0, color=PALETTE["text"], linewidth=0.8)
        ax.set_xticks(positions, [f"[{i}]" for i in positions] if stated.size > 1 else ["value"])
        _title(ax, example.id)
    for ax in axes[len(rows):]:
        ax.axis("off")
    if rows:
        handles, labels = axes[0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="outside upper center", ncols=2, fontsize=FONT["legend"], frameon=False)
    else:
        _title(axes[0], "No numeric errata")
    return fig


# --- The wider family (appended by the family chapter) -------------------------------

#: Colour, line style and width of each :data:`lnworked.family.VARIANTS` entry in the
#: family figure (Post-LN is drawn wide underneath DeepNorm's dashes: both streams are 1).
FAMILY_STYLE = {
    "post": (PALETTE["post"], "-", 4.0),
    "pre": (PALETTE["pre"], "-", 2.2),
    "deepnorm": (PALETTE["norm"], "--", 2.2),
    "sandwich": (PALETTE["highway"], "-", 2.2),
    "normformer": (PALETTE["identity"], "--", 2.2),
    "pre_rms": (PALETTE["pre"], ":", 2.6),
    "pre_final": (PALETTE["seed"], "-.", 2.2),
}


def family_profiles(layers: int = 48, width: int = 16, seed: int = 0) -> Figure:
    """Stream RMS after each layer (left) and input-gradient norm against depth (right).

    Every curve is :func:`lnworked.family.stack_profile` of one variant (same seed, hence
    the same input, readout and sublayer weights). Left (linear): ``stream_rms`` for
    ``l = 0..L``; Pre-LN + final norm has Pre-LN's stream, so it appears only as one
    marker, the RMS of ``N_final(x_L)`` that the head sees. Right (log):
    ``input_grad_norm``, ``|| d(w . y_l) / d x_0 ||`` for ``l = 1..L``. Lines carry ``gid``
    ``"rms-<variant>"`` / ``"grad-<variant>"``; the marker ``"head-pre_final"``.
    """
    from lnworked.family import VARIANTS, stack_profile

    fig, (left, right) = new_figure(12.0, 5.6, ncols=2)
    handles = []
    for name, spec in VARIANTS.items():
        profile = stack_profile(name, layers, width=width, seed=seed)
        color, style, linewidth = FAMILY_STYLE.get(name, (PALETTE["text"], "-", 2.2))
        if spec.final is None:
            left.plot(np.arange(layers + 1), profile.stream_rms, color=color, linestyle=style,
                      linewidth=linewidth, gid=f"rms-{name}")
        else:
            left.plot([layers], [profile.output_rms], "D", color=color, markersize=9, gid=f"head-{name}")
        (line,) = right.plot(np.arange(1, layers + 1), profile.input_grad_norm, color=color, linestyle=style,
                             linewidth=linewidth, label=spec.label, gid=f"grad-{name}")
        handles.append(line)
    left.set_ylim(0, None)
    right.set_yscale("log")
    for ax in (left, right):
        ax.set_xlim(0, layers + 1)
    right.axhline(1.0, color=PALETTE["seed"], linestyle=":", linewidth=1.2, zorder=1)
    final = [spec for spec in VARIANTS.values() if spec.final]
    if final:
        left.annotate("head sees $N_{final}(x_L)$", (layers, 1.0), xytext=(-10, 14), textcoords="offset points",
                      ha="right", fontsize=FONT["annotation"], color=PALETTE["seed"])
    _labels(left, "layer $l$", "RMS of the residual stream $x_l$")
    _title(left, f"Forward: stream size ($d = {width}$, seed {seed})")
    _labels(right, "depth $l$ of the readout", "$\\|\\partial (w \\cdot y_l) / \\partial x_0\\|$ (log scale)")
    _title(right, "Backward: gradient reaching the input")
    fig.legend(handles=handles, loc="outside lower center", ncols=4, fontsize=FONT["legend"], frameon=False)
    return fig


__all__.append("family_profiles")
