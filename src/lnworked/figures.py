"""The book's matplotlib charts: they draw, the library computes.

Every function returns a :class:`~lnworked.style.BookFigure` in the house style of
:mod:`lnworked.style` (palette, fonts, white face). Every number a figure plots comes from
the library (the worked-example registry of :mod:`lnworked.examples`, :mod:`lnworked.depth`,
:mod:`lnworked.norms`, :mod:`lnworked.blocks`, :mod:`lnworked.random_stack`); none is typed or
computed here beyond picking what to show. Artists that tests look for carry a ``gid``
(``"bars"``, ``"mean"``, ``"post"``, ...). The block diagrams live in
:mod:`lnworked.diagrams` and are re-exported here, so chapters call every figure as
``figures.<name>()``.
"""

from __future__ import annotations

import math

import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import FixedLocator, FuncFormatter, MaxNLocator, NullFormatter, NullLocator

from lnworked.blocks import jacobian_singular_value_samples
from lnworked.depth import gradient_factors, post_ln_stream_std, residual_std, residual_variance_monte_carlo
from lnworked.diagrams import block_diagrams, identity_path_diagram
from lnworked.display import display_title, format_value, numeric_errata
from lnworked.examples import get_example
from lnworked.placements import VARIANTS
from lnworked.random_stack import stack_profile
from lnworked.norms import layer_norm
from lnworked.style import FONT, PALETTE, new_figure
from lnworked.style import labels as _labels
from lnworked.style import title as _title

__all__ = [
    "block_diagrams",
    "identity_path_diagram",
    "post_ln_bars",
    "pre_ln_bars",
    "gradient_over_depth",
    "residual_growth",
    "block_jacobian_singular_values",
    "epsilon_effect",
    "errata_chart",
    "family_profiles",
]

# --- Seed 004's bar charts (s02, s03) -------------------------------------------------

#: Width, inches, of the figures a phone must read whole (Figs. 1.1, 1.2, 2.3, 3.3, 4.1, 10.1): at the book's
#: 110 dpi a 343 px column shrinks a 4.4-inch PNG to 0.71, so :data:`_PHONE_FONT`'s 14 pt shows at 15 px.
_PHONE_NARROW = 4.4
#: Font sizes (points) of those figures: every text at least 13 px tall at 343 px (tests/test_phone_text.py).
_PHONE_FONT = {"title": 15, "label": 15, "tick": 14, "legend": 14, "annotation": 14}

#: The bar charts are narrower still: chapter 2 shows them inside a forecast's folded answer, about
#: 250 px wide on a phone, where a 3.4-inch PNG at 14 pt still shows its text 13 px tall.
_BARS_WIDTH = 3.4


def _bars(ax, values, color, title, mean_color, title_color=None):
    """Bars for one vector with a dashed mean line labelled ``mean=<computed mean>``."""
    values = np.asarray(values, dtype=float)
    positions = np.arange(1, values.size + 1)
    ax.bar(positions, values, color=color, width=0.6, zorder=2, gid="bars")
    mean = float(np.mean(values))
    if abs(mean) < 1e-12 * np.max(np.abs(values)):
        mean = 0.0  # rounding noise of a mean that is zero in exact arithmetic
    ax.axhline(mean, color=mean_color, linestyle="--", linewidth=2, zorder=3, gid="mean")
    ax.text(positions[0] - 0.45, mean, f"mean={format_value(mean, 4)}", color=mean_color,
            fontsize=_PHONE_FONT["annotation"], va="bottom", ha="left", zorder=4,
            bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.85, "pad": 1.5})
    ax.axhline(0, color=PALETTE["text"], linewidth=0.8, zorder=1)
    ax.set_xticks(positions, [f"$x_{i}$" for i in positions])
    ax.yaxis.set_major_locator(MaxNLocator(nbins=4, integer=True))
    ax.tick_params(which="both", labelsize=_PHONE_FONT["tick"])
    ax.set_title(title, fontsize=_PHONE_FONT["title"], color=title_color or PALETTE["text"])
    ax.set_xlabel("feature", fontsize=_PHONE_FONT["label"])
    ax.set_ylabel("value", fontsize=_PHONE_FONT["label"])
    ax.set_ylim(min(0.0, values.min()) - 0.8, max(0.0, values.max()) + 1.0)
    return ax


def post_ln_bars() -> Figure:
    """Seed 004's figure s02 from ``004-ex1``: z = x + F(x) (top) and LN(z) (below).

    Narrow and stacked: the chapter shows it inside a folded answer, the narrowest column.
    """
    example = get_example("004-ex1")
    fig, (left, right) = new_figure(_BARS_WIDTH, 6.4, nrows=2)
    _bars(left, example.value("z"), PALETTE["sublayer"], "$z = x + F(x)$", PALETTE["highway"])
    _bars(right, example.value("out"), PALETTE["post"], "$x_{out} = \\mathrm{LN}(z)$", PALETTE["highway"])
    return fig


def pre_ln_bars() -> Figure:
    """Seed 004's figure s03 from ``004-ex2``: x, LN(x) and x + LN(x) (top to bottom), each with its mean."""
    example = get_example("004-ex2")
    fig, axes = new_figure(_BARS_WIDTH, 9.0, nrows=3)
    _bars(axes[0], example.value("x"), PALETTE["sublayer"], "$x$", PALETTE["norm"])
    _bars(axes[1], example.value("normed"), PALETTE["highway"], "$\\mathrm{LN}(x)$", PALETTE["norm"])
    _bars(axes[2], example.value("out"), PALETTE["post"], "$x + \\mathrm{LN}(x)$", PALETTE["norm"])
    return fig


# --- Depth ---------------------------------------------------------------------------


#: Font sizes (points) of :func:`gradient_over_depth`: on its 4.4-inch figure a phone shows them at 13 px or more.
_DEPTH_FONT = {"title": 15, "label": 15, "tick": 14, "legend": 15, "annotation": 15}


def _stack_values(measured) -> dict:
    """``measured`` checked: ``{"Pre-LN" or "Post-LN": (depths, typical, lowest, highest)}``, arrays of one
    length, every value positive and ``lowest <= typical <= highest``."""
    checked = {}
    for label, values in (measured or {}).items():
        if label not in ("Pre-LN", "Post-LN"):
            raise ValueError(f"measured: keys must be 'Pre-LN' or 'Post-LN', got {label!r}")
        depths, typical, lowest, highest = (np.atleast_1d(np.asarray(v, float)) for v in values)
        if not (depths.shape == typical.shape == lowest.shape == highest.shape) or not depths.size:
            raise ValueError(f"measured: {label}'s depths, typical, lowest and highest need one length")
        if np.any(lowest <= 0) or np.any(lowest > typical) or np.any(typical > highest):
            raise ValueError(f"measured: {label} needs 0 < lowest <= typical <= highest at every depth")
        checked[label] = depths, typical, lowest, highest
    return checked


def gradient_over_depth(pre_factor: float = 1.3, post_factor: float = 0.65, layers: int = 96,
                        marks=(10, 24, 96), measured=None) -> Figure:
    """Gradient factor ``f^L`` against depth L (log scale), Pre-LN and Post-LN.

    Lines come from :func:`lnworked.depth.gradient_factors`; the depths in ``marks`` (those
    not beyond ``layers``) are marked and annotated with their values. ``measured`` =
    ``{"Pre-LN" or "Post-LN": (depths, typical, lowest, highest)}`` adds a random stack's
    ``||g_0|| / ||g_L||`` at those depths: the typical value (white-filled square) and the range over
    seeds (bar), in the placement's colour. Drawn 4.4 inches wide with :data:`_DEPTH_FONT`, so a
    phone's column shrinks it little.
    """
    font = _DEPTH_FONT
    stack = _stack_values(measured)
    fig, ax = new_figure(4.4, 4.8)
    depth = np.arange(1, layers + 1)
    for label, factor, color, offset in (("Pre-LN", pre_factor, PALETTE["pre"], (-8, 8)),
                                         ("Post-LN", post_factor, PALETTE["post"], (8, 4))):
        values = gradient_factors(factor, layers)
        ax.plot(depth, values, color=color, linewidth=2.4, label=f"{label}: ${format_value(factor)}^L$",
                gid=f"line-{label}")
        for mark in (m for m in marks if 1 <= m <= layers):
            value = values[mark - 1]
            ax.plot([mark], [value], "o", color=color, markersize=7, gid=f"mark-{label}")
            last = mark > 0.8 * layers  # near the right edge: the label goes left of the mark, below the line
            xytext = (-8, -16) if last and offset[0] > 0 else offset
            ax.annotate(format_value(value, 3), (mark, value), textcoords="offset points", xytext=xytext,
                        ha="left" if xytext[0] > 0 else "right", fontsize=font["annotation"], color=color)
    for label, (depths, typical, lowest, highest) in stack.items():
        ax.errorbar(depths, typical, yerr=[typical - lowest, highest - typical], fmt="s", markersize=8,
                    markerfacecolor="white", markeredgewidth=2, color=PALETTE["pre" if label == "Pre-LN" else "post"],
                    elinewidth=2, capsize=4, label=f"{label}, random stack", gid=f"stack-{label}")
    ax.axhline(1.0, color=PALETTE["seed"], linestyle=":", linewidth=1.5)
    ax.set_yscale("log")
    drawn = np.log10(np.concatenate([np.asarray(line.get_ydata(), float) for line in ax.get_lines()] + [[1.0]]))
    low, high = drawn.min(), drawn.max()
    pad = 0.13 * max(high - low, 1.0)  # room above and below the lines for the marks' values
    ax.set_ylim(10 ** (low - pad), 10 ** (high + pad))
    powers = MaxNLocator(nbins=6, steps=[1, 2, 4, 5, 10], integer=True).tick_values(low - pad, high + pad)
    ax.yaxis.set_major_locator(FixedLocator(10.0 ** powers))  # whole powers of ten, 10^0 among them
    ax.yaxis.set_minor_locator(NullLocator())
    ax.set_xlim(0, layers + 2)
    ax.xaxis.set_major_locator(FixedLocator([m for m in (0, 24, 48, 72, 96, 120) if m <= layers + 2]))
    _font_labels(ax, "Gradient reaching the input\nafter $L$ layers", "depth $L$ (layers)",
                 "gradient factor $f^L$ (log)", font)
    fig.legend(*ax.get_legend_handles_labels(), loc="outside lower center", ncols=2, fontsize=font["legend"],
               frameon=False, columnspacing=1.2, handlelength=1.6)  # below the axes: clear of the values
    return fig


def residual_growth(max_additions: int = 96, branch_variance: float = 1.0, samples: int = 4000,
                    seed: int = 0) -> Figure:
    """Std of the residual stream against the number of additions L.

    Pre-LN: the analytic ``sqrt(N v)`` line (:func:`lnworked.depth.residual_std`) and Monte
    Carlo points (:func:`lnworked.depth.residual_variance_monte_carlo`). Post-LN: the
    stream ``x <- LN(x + F)`` of :func:`lnworked.depth.post_ln_stream_std`, whose std stays
    at 1.
    """
    font = _PHONE_FONT
    fig, ax = new_figure(_PHONE_NARROW, 4.6)  # narrow: legible when a phone shrinks it
    n = np.arange(1, max_additions + 1)
    analytic = np.array([residual_std(int(k), branch_variance) for k in n])
    ax.plot(n, analytic, color=PALETTE["pre"], linewidth=2.4, gid="pre-analytic",
            label="Pre-LN stream, $\\sqrt{L v}$")
    points = np.unique(np.linspace(1, max_additions, min(12, max_additions)).round().astype(int))
    monte_carlo = np.sqrt([residual_variance_monte_carlo(int(k), branch_variance, samples, seed) for k in points])
    ax.plot(points, monte_carlo, "o", color=PALETTE["highway"], markersize=7, gid="pre-monte-carlo",
            label=f"Pre-LN, Monte Carlo ({samples} samples)")
    post = post_ln_stream_std(max_additions, branch_variance, samples, seed + 1)  # independent of the points
    ax.plot(n, post, color=PALETTE["post"], linewidth=2.4, gid="post", label="Post-LN stream, $N(x + F)$")
    ax.set_xlim(0, max_additions * 1.05 + 1)  # the last point clear of the right edge
    ax.set_ylim(0, analytic.max() * 1.1)
    ax.xaxis.set_major_locator(MaxNLocator(nbins=4, steps=[1, 2, 2.4, 5, 10], integer=True))
    _font_labels(ax, f"Stream std after $L$ writes\nof variance $v = {format_value(branch_variance)}$",
                 "number of writes $L$", "std of the residual stream", font)
    fig.legend(*ax.get_legend_handles_labels(), loc="outside lower center", ncols=1, fontsize=font["legend"],
               frameon=False)  # below the axes: clear of the curves
    return fig


# --- Jacobians -----------------------------------------------------------------------


#: Font sizes (points) of :func:`block_jacobian_singular_values`, larger than :data:`FONT` for a phone.
_JACOBIAN_FONT = {"title": 16, "label": 15, "tick": 14, "legend": 14, "annotation": 14}


def block_jacobian_singular_values(d: int = 16, samples: int = 200, seed: int = 0) -> Figure:
    """Histogram of block-Jacobian singular values (top) and Post-LN's 1/σ scaling (bottom).

    The values are :func:`lnworked.blocks.jacobian_singular_value_samples`.

    Pre-LN (inputs of std 1 to 10, a grown stream) clusters around 1 (the identity term);
    Post-LN (inputs of std 1, the previous norm's output) has one exactly zero singular value
    (the mean direction) and one of order ε (the scale direction) per input, and its largest
    scales like 1/σ of the sum it normalises (bottom panel).
    """
    pre, post, sigma = jacobian_singular_value_samples(d, samples, seed)
    # narrower than style.PHONE_WIDTH and with larger text: a phone's 350 px column shows it at 0.7 of its
    # size, so every text (14 pt and up) stays about 15 px tall
    size = _JACOBIAN_FONT
    fig, (hist, scaling) = new_figure(4.6, 9.8, nrows=2)
    bins = np.linspace(0.0, max(pre.max(), post.max()) * 1.02, 50)
    hist.hist(pre.ravel(), bins=bins, color=PALETTE["pre"], alpha=0.75, label="Pre-LN", gid="hist-pre")
    hist.hist(post.ravel(), bins=bins, color=PALETTE["post"], alpha=0.75, label="Post-LN", gid="hist-post")
    zeros = int(np.sum(post < 1e-4 * post[:, :1]))
    hist.annotate(f"Post-LN: {format_value(zeros / samples)} near-zero\nsingular values per\ninput (one 0, one\nof order $\\varepsilon$)",
                  (0, zeros), xytext=(0.5, 0.3), textcoords="axes fraction", fontsize=size["annotation"],
                  color=PALETTE["post"], arrowprops={"arrowstyle": "->", "color": PALETTE["post"]},
                  bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.85, "pad": 1.5})
    hist.set_title(f"Block Jacobian singular values\n($d = {d}$, {samples} inputs)", fontsize=size["title"],
                   color=PALETTE["text"])
    hist.set_xlabel("singular value", fontsize=size["label"])
    hist.set_ylabel("count", fontsize=size["label"])
    hist.legend(fontsize=size["legend"], frameon=False, loc="upper right")
    scaling.loglog(1 / sigma, post[:, 0], "o", color=PALETTE["post"], markersize=4, gid="post-largest",
                   label="Post-LN, largest")
    for axis, values, limits in ((scaling.xaxis, 1 / sigma, scaling.set_xlim),
                                 (scaling.yaxis, post[:, 0], scaling.set_ylim)):
        low, high = np.log(values.min()), np.log(values.max())
        pad = 0.08 * (high - low)  # every point clear of the axes' edges
        low, high = np.exp(low - pad), np.exp(high + pad)
        limits(low, high)
        ticks = MaxNLocator(nbins=4, steps=[1, 2, 2.5, 3, 5, 10]).tick_values(low, high)
        axis.set_major_locator(FixedLocator([t for t in ticks if low <= t <= high]))  # plain labels, lowest too
        axis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
        axis.set_minor_locator(NullLocator())
    scaling.set_xlabel("$1/\\sigma$ of the sum $x + F(x)$", fontsize=size["label"])
    scaling.set_ylabel("largest singular value", fontsize=size["label"])
    scaling.set_title("Post-LN: the largest\ntracks $1/\\sigma$ of the sum", fontsize=size["title"], color=PALETTE["text"])
    scaling.legend(fontsize=size["legend"], frameon=False, loc="upper center",
                   bbox_to_anchor=(0.5, -0.22))  # below the axes, off the points
    for ax in (hist, scaling):
        ax.tick_params(which="both", labelsize=size["tick"])
    return fig


def _font_labels(ax, title: str, xlabel: str, ylabel: str, font=_PHONE_FONT):
    """Title, axis labels and tick labels of ``ax`` at the sizes of ``font`` (default :data:`_PHONE_FONT`)."""
    ax.set_title(title, fontsize=font["title"], color=PALETTE["text"])
    ax.set_xlabel(xlabel, fontsize=font["label"])
    ax.set_ylabel(ylabel, fontsize=font["label"])
    ax.tick_params(which="both", labelsize=font["tick"])


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
    1/s); with ε > 0 the output fades smoothly to 0 once s falls below √ε. s = 0 itself
    (0/0 for ε = 0, :class:`~lnworked.norms.DegenerateInputError`) is off the log axis;
    the chapter's caption says what happens there, so no label crowds the √ε lines.
    """
    pattern = layer_norm(np.array([-3.0, -1.0, 1.0, 3.0]), eps=0)
    spreads = np.logspace(-7, 1, 161)
    font = _PHONE_FONT
    fig, ax = new_figure(_PHONE_NARROW, 5.4)
    colors = (PALETTE["post"], PALETTE["highway"], PALETTE["norm"], PALETTE["pre"], PALETTE["identity"])
    for eps, color in zip(epsilons, colors):
        x = base + spreads[:, None] * pattern
        magnitude = np.max(np.abs(layer_norm(x, eps=eps)), axis=-1)
        ax.plot(spreads, magnitude, color=color, linewidth=2.4, gid=f"eps-{eps:g}",
                label=f"$\\varepsilon = {_tex_number(eps)}$")
        if eps > 0:
            ax.axvline(math.sqrt(eps), color=color, linestyle=":", linewidth=1.5)
            ax.text(math.sqrt(eps), 3e-7, " $\\sqrt{\\varepsilon}$",
                    color=color, fontsize=font["annotation"], va="bottom")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_ylim(1e-7, 10)
    ax.xaxis.set_major_locator(FixedLocator([1e-7, 1e-5, 1e-3, 1e-1, 10]))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.yaxis.set_major_locator(FixedLocator([1e-7, 1e-5, 1e-3, 1e-1, 10]))
    ax.yaxis.set_minor_formatter(NullFormatter())
    _font_labels(ax, "LayerNorm of a nearly flat vector:\n$\\varepsilon$ is the cushion",
                 "spread $\\sigma$ of the input (std)", "max $|\\mathrm{LN}(x)|$", font)
    fig.legend(*ax.get_legend_handles_labels(), loc="outside lower center", ncols=len(epsilons),
               fontsize=font["legend"], frameon=False, columnspacing=1.0, handlelength=1.5, handletextpad=0.5)
    return fig


# --- Errata --------------------------------------------------------------------------


def errata_chart() -> Figure:
    """For each erratum with numbers: the source text's value (grey) beside the library's (navy).

    One panel per record, titled by the erratum's title as the page shows it
    (:func:`lnworked.display.display_title`, wrapped) with the record's id as the axes' ``gid``; a log
    scale where all values are positive and tiny or spread over more than two decades.
    """
    import textwrap

    font = _PHONE_FONT
    rows = numeric_errata()
    nrows = max(1, len(rows))  # one column: panels stacked, legible on a phone
    fig, axes = new_figure(_PHONE_NARROW, 0.8 + 3.4 * nrows, nrows=nrows)
    axes = np.atleast_1d(axes)
    for ax, (example, stated, computed) in zip(axes, rows):
        positions = np.arange(stated.size)
        values = np.concatenate([stated, computed])
        positive = bool(np.all(values > 0))
        log = positive and (values.max() < 1e-3 or values.max() / values.min() > 100)
        ax.bar(positions - 0.2, stated, width=0.4, color=PALETTE["seed"], label="source text states", gid="seed")
        ax.bar(positions + 0.2, computed, width=0.4, color=PALETTE["library"], label="library computes",
               gid="library")
        for offset, series in ((-0.2, stated), (0.2, computed)):
            for position, value in zip(positions, series):
                ax.text(position + offset, value, format_value(value, 3), ha="center",
                        va="bottom" if value >= 0 else "top", fontsize=font["annotation"])
        if log:
            ax.set_yscale("log")
            ax.set_ylim(values.min() / 3, values.max() * 5)
            low, high = ax.get_ylim()  # 1, 2 and 5 times each power of ten: labels on a short log axis too
            ticks = [k * 10.0 ** n for n in range(math.floor(math.log10(low)), math.ceil(math.log10(high)) + 1)
                     for k in (1, 2, 5) if low <= k * 10.0 ** n <= high]
            ax.yaxis.set_major_locator(FixedLocator(ticks))
            ax.yaxis.set_major_formatter(FuncFormatter(lambda value, _: format_value(value, 3)))
            ax.yaxis.set_minor_locator(NullLocator())
        else:
            span = max(abs(values.min()), abs(values.max()))
            ax.set_ylim(min(0.0, values.min()) - 0.2 * span, max(0.0, values.max()) + 0.25 * span)
            ax.axhline(0, color=PALETTE["text"], linewidth=0.8)
        ax.set_xticks(positions, [f"entry {i + 1}" for i in positions] if stated.size > 1 else ["value"])
        ax.tick_params(which="both", labelsize=font["tick"])
        name = display_title(example)
        lines = math.ceil(len(name) / 30)  # lines of about equal length, none wider than the axes
        ax.set_title("\n".join(textwrap.wrap(name, math.ceil(len(name) / lines) + 6, break_on_hyphens=False)),
                     fontsize=font["title"], color=PALETTE["text"])
        ax.set_gid(example.id)
    for ax in axes[len(rows):]:
        ax.axis("off")
    if rows:
        handles, labels = axes[0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="outside upper center", ncols=1, fontsize=font["legend"], frameon=False)
    else:
        _title(axes[0], "No numeric errata")
    return fig


# --- The wider family ----------------------------------------------------------------

#: Colour, line style and width of each :data:`lnworked.placements.VARIANTS` entry in the
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


#: The gradient panels of :func:`family_profiles`: at most four lines each (Pre-LN in both, as
#: the reference), so that a phone can tell them apart.
FAMILY_GRADIENT_PANELS = (
    ("Backward: placements and fixes", ("post", "pre", "deepnorm", "pre_final")),
    ("Backward: Pre-LN's variants", ("pre", "pre_rms", "normformer", "sandwich")),
)


def family_profiles(layers: int = 48, width: int = 16, seed: int = 0) -> Figure:
    """Stream RMS after each layer (top) and input-gradient norm against depth (two panels below).

    Every curve is :func:`lnworked.random_stack.stack_profile` of one variant (same seed, hence
    the same input, readout and sublayer weights). Top (linear): ``stream_rms`` for
    ``l = 0..L``; Pre-LN + final norm has Pre-LN's stream, so it appears only as one
    marker, the RMS of ``N_final(x_L)`` that the head sees. Below (log), one panel per group
    of :data:`FAMILY_GRADIENT_PANELS`, each with its own legend:
    ``input_grad_norm / readout_norm``, ``|| d(w . y_l) / d x_0 || / ||w||`` for ``l = 1..L``
    (1 means the readout's gradient arrives at its own size). Lines carry ``gid``
    ``"rms-<variant>"`` / ``"grad-<variant>"`` (Pre-LN's in both gradient panels); the marker
    ``"head-pre_final"``.
    """
    fig, (top, *grads) = new_figure(4.6, 14.2, nrows=1 + len(FAMILY_GRADIENT_PANELS))  # stacked: a phone
    profiles = {name: stack_profile(name, layers, width=width, seed=seed) for name in VARIANTS}
    for name, spec in VARIANTS.items():
        profile = profiles[name]
        color, style, linewidth = FAMILY_STYLE.get(name, (PALETTE["text"], "-", 2.2))
        if spec.final is None:
            top.plot(np.arange(layers + 1), profile.stream_rms, color=color, linestyle=style,
                     linewidth=linewidth, gid=f"rms-{name}")
        else:
            top.plot([layers], [profile.output_rms], "D", color=color, markersize=9, gid=f"head-{name}")
    for ax, (heading, names) in zip(grads, FAMILY_GRADIENT_PANELS):
        for name in names:
            profile = profiles[name]
            color, style, linewidth = FAMILY_STYLE.get(name, (PALETTE["text"], "-", 2.2))
            ax.plot(np.arange(1, layers + 1), profile.input_grad_norm / profile.readout_norm,
                    color=color, linestyle=style, linewidth=linewidth, label=VARIANTS[name].label,
                    gid=f"grad-{name}")
        ax.set_yscale("log")
        ax.axhline(1.0, color=PALETTE["seed"], linestyle=":", linewidth=1.2, zorder=1)
        _labels(ax, "depth $L$ of the readout", "$\\|\\partial (w \\cdot y_L) / \\partial x_0\\| \\,/\\, \\|w\\|$")
        _title(ax, heading)
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.16), ncols=2, fontsize=FONT["legend"],
                  frameon=False, columnspacing=1.0, handlelength=1.8)
    top.set_ylim(0, None)
    for ax in (top, *grads):
        ax.set_xlim(0, layers + 1)
    if any(spec.final for spec in VARIANTS.values()):
        top.annotate("head sees $N_{final}(x_L)$", (layers, 1.0), xytext=(-10, 14), textcoords="offset points",
                     ha="right", fontsize=FONT["annotation"], color=PALETTE["seed"])
    _labels(top, "layer $\\ell$", "RMS of the stream $x_\\ell$")
    _title(top, f"Forward: stream size\n($d = {width}$, seed {seed})")
    return fig


# --- LayerNorm as geometry (chapter 1) ------------------------------------------------


def layer_norm_geometry(shifts=(-1.0, 1.5), x3=(1.0, 2.0, 6.0), scales=(0.25, 0.5, 1.0),
                        samples: int = 8, seed: int = 0) -> Figure:
    """LayerNorm (γ = 1, β = 0, ε = 0) as "project onto the plane ⟂ 1, then rescale to radius √d".

    Top, ``d = 2`` in the plane of ``(x_1, x_2)``: source text 000's ``x = (2, -1)`` (the
    ``x`` of ``000-pre-ln-gradient``) and ``x + c 1`` for ``c`` in ``shifts`` all project along
    ``1`` onto the same point of the mean-free line ``x_1 + x_2 = 0``; rescaling sends it to
    ``(1, -1)``, one of the only two outputs a 2-vector can have (``±(1, -1)``, the "sphere" of
    radius √2 in that line). Bottom, ``d = 3`` seen face-on in the plane ⟂ ``(1, 1, 1)``
    (coordinates :func:`lnworked.norms.mean_free_basis`): the centred parts of ``c * x3`` for
    ``c`` in ``scales`` lie on one ray and all land on the same point of the circle of radius
    √3; ``samples`` random vectors (``default_rng(seed)``, normal entries times a log-uniform
    scale in [0.5, 2.5], plus a random offset along ``1``) land on the circle too. Every point is
    :func:`lnworked.norms.layer_norm_geometry`. Panels stacked, :data:`_PHONE_NARROW` inches wide, text at
    :data:`_PHONE_FONT`, legends below the axes. Artist gids: ``"mean-free"``, ``"ones"``,
    ``"sphere"`` (both panels), ``"input"``, ``"centred"``, ``"output"``, ``"projection"``.
    """
    from lnworked.norms import layer_norm_geometry as geometry
    from lnworked.norms import mean_free_basis

    font = _PHONE_FONT
    fig, (plane, face) = new_figure(_PHONE_NARROW, 10.6, nrows=2)
    ink, proj, out = PALETTE["seed"], PALETTE["highway"], PALETTE["norm"]

    # d = 2: the whole space is the page.
    x = np.asarray(get_example("000-pre-ln-gradient").value("x"), dtype=float)
    inputs = [x] + [x + c for c in shifts]
    reach = 1.0 + max(np.max(np.abs(v)) for v in inputs)
    line = np.array([-reach, reach])
    plane.plot(line, -line, color=out, linewidth=2.2, gid="mean-free", label="mean-free line $x_1 + x_2 = 0$")
    plane.plot(line, line, color=ink, linestyle=":", linewidth=1.4, gid="ones", label="direction $\\mathbf{1}$")
    sphere = geometry(x, eps=0).radius * np.array([1.0, -1.0]) / np.sqrt(2.0)
    plane.plot([sphere[0], -sphere[0]], [sphere[1], -sphere[1]], "o", markersize=13, markerfacecolor="white",
               markeredgecolor=out, markeredgewidth=2.2, gid="sphere", label="the two points at radius $\\sqrt{2}$")
    for k, v in enumerate(inputs):
        g = geometry(v, eps=0)
        plane.plot(*zip(g.x, g.centred), color=proj, linestyle="--", linewidth=1.6, gid="projection")
        plane.plot(*g.x, "s", color=ink, markersize=8, gid="input")
        name = "x" if k == 0 else f"x {'+' if shifts[k - 1] > 0 else '-'} {format_value(abs(shifts[k - 1]))}\\,\\mathbf{{1}}"
        # x up and to the right; a copy near the right edge above, ending at its marker; a copy below x below
        # its marker: clear of x - mu 1's label between them
        right, below = g.x[0] > 0.5 * reach, g.x[1] < x[1]
        offset, ha, va = (((6, 8), "right", "bottom") if right else ((-4, -10), "left", "top") if below
                          else ((8, 2), "left", "bottom"))
        plane.annotate(f"${name}$", g.x, xytext=offset, textcoords="offset points", ha=ha, va=va,
                       fontsize=font["annotation"], color=PALETTE["text"])
    g = geometry(x, eps=0)
    plane.plot(*g.centred, "o", color=proj, markersize=8, gid="centred")
    plane.annotate("$x - \\mu\\mathbf{1}$", g.centred, xytext=(10, -2), textcoords="offset points",
                   fontsize=font["annotation"], color=proj)
    plane.annotate("", g.output, xytext=g.centred, arrowprops={"arrowstyle": "->", "color": out, "lw": 2})
    plane.plot(*g.output, "o", color=out, markersize=9, gid="output")
    plane.annotate(f"$\\mathrm{{LN}}(x) =$\n$({format_value(g.output[0], 4)}, {format_value(g.output[1], 4)})$",
                   g.output, xytext=(-14, -8), textcoords="offset points", ha="right", va="top",
                   fontsize=font["annotation"], color=out)
    plane.set_xlim(-reach, reach)
    plane.set_ylim(-reach, reach)
    plane.set_aspect("equal")
    for axis in (plane.xaxis, plane.yaxis, face.xaxis, face.yaxis):
        axis.set_major_locator(MaxNLocator(nbins=4, steps=[1, 2, 5, 10], integer=True))
    _font_labels(plane, "$d = 2$: project along $\\mathbf{1}$,\nthen rescale", "$x_1$", "$x_2$", font)
    # Legends below the axes: inside, every corner of either panel has data or an annotation.
    plane.legend(loc="upper center", bbox_to_anchor=(0.5, -0.16), fontsize=font["legend"], frameon=False)

    # d = 3: the plane perpendicular to (1, 1, 1), seen face-on.
    basis = mean_free_basis(3)
    radius = np.sqrt(3.0)
    angle = np.linspace(0.0, 2.0 * np.pi, 361)
    face.plot(radius * np.cos(angle), radius * np.sin(angle), color=out, linewidth=2.2, gid="sphere",
              label="circle of radius $\\sqrt{3}$")
    rng = np.random.default_rng(seed)
    scale = 10.0 ** rng.uniform(np.log10(0.5), np.log10(2.5), (samples, 1))
    others = scale * rng.normal(0.0, 1.0, (samples, 3)) + rng.normal(0.0, 3.0, (samples, 1))
    family = [c * np.asarray(x3, dtype=float) for c in scales]
    for k, v in enumerate(family + list(others)):
        g = geometry(v, eps=0)
        centred, output = basis @ g.centred, basis @ g.output
        color = proj if k < len(family) else ink
        face.plot([0.0, centred[0], output[0]], [0.0, centred[1], output[1]], color=color, linewidth=0.9,
                  linestyle=":", zorder=1)
        face.plot(*centred, "o", markerfacecolor="white", markeredgecolor=color, markersize=7, gid="centred",
                  label="$x - \\mu\\mathbf{1}$ (centred input)" if k == len(family) else None)
        face.plot(*output, "o", color=out, markersize=7, gid="output",
                  label="$\\mathrm{LN}(x)$" if k == 0 else None)
    tip = basis @ geometry(family[-1], eps=0).centred
    face.annotate(f"$c\\,x$ for\n$c = {', '.join(format_value(c) for c in scales)}$", tip, xytext=(6, 0),
                  textcoords="offset points", fontsize=font["annotation"], color=proj)
    span = 1.15 * max(radius, max(np.linalg.norm(basis @ geometry(v, eps=0).centred)
                                  for v in family + list(others)))
    face.set_xlim(-span, span)
    face.set_ylim(-span, span)
    face.set_aspect("equal")
    _font_labels(face, "$d = 3$: the plane $\\perp (1, 1, 1)$,\nface-on", "first coordinate in the plane",
                 "second coordinate", font)
    face.legend(loc="upper center", bbox_to_anchor=(0.5, -0.16), fontsize=font["legend"], frameon=False)
    return fig


__all__ += ["layer_norm_geometry"]


# --- Chapter 3: a Post-LN block's gain, split into the norm's and the residual add's --------------

#: Colour and marker of each branch scale in :func:`gain_split_scatter`, weakest branch first (then cycled).
_SCALE_LOOKS = ((PALETTE["orange"], "^"), (PALETTE["post"], "o"), (PALETTE["blue"], "s"))


def gain_split_scatter(splits: dict) -> Figure:
    """One point per Post-LN block: the norm's gain ``||h|| / ||g||`` (x) against the residual add's
    ``||g'|| / ||h||`` (y), on log axes, one cloud per branch scale of ``splits`` =
    ``{branch_scale: (norm_gain, branch_gain)}`` (arrays of one shape), each cloud's typical block
    (geometric means) a large marker, and the curve ``x y = 1`` where a block's gain is 1."""
    if not splits:
        raise ValueError("splits: need at least one branch scale")
    fig, ax = new_figure(_PHONE_NARROW, 5.6)
    lo, hi = np.inf, 0.0
    for k, (scale, (norm_gain, branch_gain)) in enumerate(sorted(splits.items())):
        x, y = np.ravel(np.asarray(norm_gain, float)), np.ravel(np.asarray(branch_gain, float))
        if x.shape != y.shape or not x.size or np.any(x <= 0) or np.any(y <= 0):
            raise ValueError(f"splits: branch scale {scale} needs positive gains, as many of each")
        color, marker = _SCALE_LOOKS[k % len(_SCALE_LOOKS)]
        # the smallest branch scale's cloud is the tightest: drawn on top, so the wider clouds cannot hide it
        ax.scatter(x, y, s=12, color=color, marker=marker, alpha=0.35, linewidths=0, gid=f"blocks-{scale:g}",
                   zorder=3 + len(splits) - k)
        ax.plot([np.exp(np.log(x).mean())], [np.exp(np.log(y).mean())], marker=marker, markersize=14,
                color=color, markeredgecolor=PALETTE["text"], linestyle="none", label=f"branch × {scale:g}",
                gid=f"typical-{scale:g}", zorder=10 + len(splits) - k)
        lo, hi = min(lo, x.min(), 1 / y.max()), max(hi, x.max(), 1 / y.min())
    grid = np.geomspace(lo / 1.2, hi * 1.2, 50)
    ax.plot(grid, 1 / grid, "--", color=PALETTE["text"], linewidth=1.5, label="block gain 1", gid="product-one")
    ax.set_xscale("log")
    ax.set_yscale("log")
    for axis in (ax.xaxis, ax.yaxis):  # plain numbers at powers of two, no crowded minor labels
        low, high = axis.get_view_interval()
        axis.set_major_locator(FixedLocator([2.0 ** k for k in range(-6, 7) if low <= 2.0 ** k <= high]))
        axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        axis.set_minor_formatter(NullFormatter())
    _font_labels(ax, "Each Post-LN block", "norm's gain", "residual add's gain")
    ax.legend(fontsize=_PHONE_FONT["legend"], frameon=False, loc="upper center", bbox_to_anchor=(0.5, -0.2),
              ncols=2, columnspacing=0.8)
    return fig


__all__ += ["gain_split_scatter"]


def removed_share_figure(removed_share, width: int) -> Figure:
    """Block by block, the percentage of the gradient's squared length that lies in the two directions a
    LayerNorm removes (along ``1`` and ``x-hat``), ``removed_share`` = seeds x blocks fractions in
    ``[0, 1]`` (mean over seeds as a line, their range as a band, log scale), against the ``2 / width``
    of a random direction in ``width`` features (dashed)."""
    share = np.asarray(removed_share, dtype=float)
    if share.ndim != 2 or not share.size or np.any(share < 0) or np.any(share > 1):
        raise ValueError("removed_share: need a seeds x blocks array of fractions in [0, 1]")
    if isinstance(width, bool) or not isinstance(width, (int, np.integer)) or width < 3:
        raise ValueError(f"width: must be an integer of at least 3 features, got {width!r}")
    blocks = np.arange(1, share.shape[1] + 1)
    percent = 100 * share
    fig, ax = new_figure(_PHONE_NARROW, 5.2)
    floor = max(percent[percent > 0].min() / 2, 1e-4) if np.any(percent > 0) else 1e-4
    ax.fill_between(blocks, np.maximum(percent.min(axis=0), floor), percent.max(axis=0), color=PALETTE["post"],
                    alpha=0.2, linewidth=0)
    ax.plot(blocks, np.maximum(percent.mean(axis=0), floor), "-", marker="s", markersize=4, color=PALETTE["post"],
            linewidth=2, label="gradient from the block above", gid="from-above")
    ax.axhline(100 * 2 / width, color=PALETTE["text"], linestyle="--", linewidth=1.5,
               label=f"random direction, 2/d = {100 * 2 / width:g} %", gid="random")
    ax.set_yscale("log")
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    _font_labels(ax, "In the norm's two directions", f"block ℓ ({share.shape[1]}: the top block)",
                 "% of squared length")
    ax.legend(fontsize=_PHONE_FONT["legend"], frameon=False, loc="upper center", bbox_to_anchor=(0.5, -0.2))
    return fig


__all__ += ["removed_share_figure"]
