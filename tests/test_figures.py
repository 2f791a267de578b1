"""lnworked.figures, lnworked.diagrams and lnworked.style: house style, rendering, and that plotted
data are the library's."""

from __future__ import annotations

import io
import subprocess
import sys

import numpy as np
import pytest
from matplotlib import _pylab_helpers
from matplotlib.colors import to_rgba
from matplotlib.figure import Figure

from lnworked import figures, style
from lnworked.blocks import jacobian_singular_value_samples
from lnworked.depth import gradient_factors, post_ln_stream_std, residual_std, residual_variance_monte_carlo
from lnworked.examples import get_example
from lnworked.norms import layer_norm

FIGURE_FUNCTIONS = [
    "block_diagrams", "post_ln_bars", "pre_ln_bars", "identity_path_diagram", "gradient_over_depth",
    "residual_growth", "block_jacobian_singular_values", "epsilon_effect", "errata_chart",
    "layer_norm_geometry",
]

_CACHE: dict = {}


def build(name: str) -> Figure:
    """Each default figure is built once per test session (some take a second)."""
    if name not in _CACHE:
        _CACHE[name] = getattr(figures, name)()
    return _CACHE[name]


def by_gid(ax, gid):
    artists = [*ax.lines, *ax.patches]
    return [a for a in artists if a.get_gid() == gid]


def bar_heights(ax, gid="bars"):
    return np.array([p.get_height() for p in by_gid(ax, gid)])


# --- House style ----------------------------------------------------------------------


@pytest.mark.parametrize("name", FIGURE_FUNCTIONS)
def test_figure_house_style_and_png(name):
    managers_before = _pylab_helpers.Gcf.get_num_fig_managers()
    fig = build(name)
    assert isinstance(fig, Figure)
    assert to_rgba(fig.get_facecolor()) == (1.0, 1.0, 1.0, 1.0)
    assert fig.patch.get_alpha() in (None, 1.0)
    assert any(ax.get_title() for ax in fig.axes), "no axes has a title"
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    assert buffer.getvalue().startswith(b"\x89PNG")
    assert fig._repr_png_().startswith(b"\x89PNG")
    assert _pylab_helpers.Gcf.get_num_fig_managers() == managers_before, "a pyplot figure leaked"


#: The column a figure gets on a 390 px phone: the page's (350 px), or a folded answer's (250 px).
PHONE_COLUMN_PX = {"post_ln_bars": 250, "pre_ln_bars": 250}


def drawn_texts(fig):
    """The figure's non-empty visible texts, less the tick labels of axes that are switched off."""
    from matplotlib.text import Text

    off = {id(label) for ax in fig.axes if not ax.axison for axis in (ax.xaxis, ax.yaxis)
           for tick in [*axis.get_major_ticks(), *axis.get_minor_ticks()] for label in (tick.label1, tick.label2)}
    for text in fig.findobj(Text):
        ax = text.axes
        if not text.get_visible() or not text.get_text().strip() or id(text) in off:
            continue
        if ax is not None and not ax.axison and text not in ax.texts and text is not ax.title:
            continue
        yield text


def _seed_figure():
    """Chapter 5's seed figure (Fig. 5.2) of the stored runs."""
    from lnworked.stress.committed import committed_seed_runs
    from lnworked.stress.config import StressConfig
    from lnworked.stress.figures import seed_figure

    return seed_figure(committed_seed_runs()[0], StressConfig().vocab_size)


#: Figures of other modules that need data: name -> builder.
PHONE_BUILDERS = {"seed_figure": _seed_figure}

#: Figures a student reader found too small at 390 px (Figs. 2.2, 2.5 and 5.2) are held to 12 px, not 9.
PHONE_MIN_PX = {"block_diagrams": 12, "block_jacobian_singular_values": 12, "seed_figure": 12}


@pytest.mark.parametrize("name", FIGURE_FUNCTIONS + ["family_profiles", "transformer_block_diagrams", *PHONE_BUILDERS])
def test_every_text_is_legible_on_a_phone(name):
    """Scaled to a phone's column, no title, label, tick, legend or annotation is under 9 px tall."""
    from lnworked import diagrams

    if name in PHONE_BUILDERS:
        fig = PHONE_BUILDERS[name]()
    else:
        fig = build(name) if hasattr(figures, name) else getattr(diagrams, name)()
    png = fig._repr_png_()
    width = int.from_bytes(png[16:20], "big")  # the PNG header's IHDR width
    column = PHONE_COLUMN_PX.get(name, style.PHONE_SCREEN_PX)
    sizes = {text.get_text(): style.phone_font_px(text.get_fontsize(), width, screen_px=column)
             for text in drawn_texts(fig)}
    assert sizes
    floor = PHONE_MIN_PX.get(name, 9)
    small = {text: round(px, 1) for text, px in sizes.items() if px < floor}
    assert not small, f"{name} at {column} px: texts under {floor} px: {small}"


def test_phone_font_px_scales_only_wide_images():
    assert style.phone_font_px(12, 1100, dpi=110, screen_px=350) == pytest.approx(12 * 110 / 72 * 350 / 1100)
    assert style.phone_font_px(12, 300, dpi=110, screen_px=350) == pytest.approx(12 * 110 / 72)


def test_new_figure_shapes_and_palette():
    fig, ax = style.new_figure(4, 3)
    assert not isinstance(ax, np.ndarray) and ax.figure is fig
    fig, axes = style.new_figure(6, 3, ncols=3)
    assert axes.shape == (3,)
    fig, axes = style.new_figure(6, 6, ncols=2, nrows=2)
    assert axes.shape == (4,)
    for role in ("sublayer", "highway", "add", "norm", "identity", "violet", "orange", "magenta", "navy", "blue"):
        to_rgba(style.PALETTE[role])


def test_style_helpers_use_the_house_fonts():
    fig, ax = style.new_figure(4, 3)
    ax.plot([0, 1], [0, 1], label="a line")
    style.title(ax, "a title", style.PALETTE["post"])
    style.labels(ax, "x", "y")
    style.legend(ax)
    assert ax.title.get_fontsize() == style.FONT["title"]
    assert to_rgba(ax.title.get_color()) == to_rgba(style.PALETTE["post"])
    assert ax.xaxis.label.get_fontsize() == ax.yaxis.label.get_fontsize() == style.FONT["label"]
    assert ax.get_legend().get_texts()[0].get_fontsize() == style.FONT["legend"]
    assert style.figure_png(fig).startswith(b"\x89PNG")


def test_the_style_module_does_not_import_the_books_maths():
    """The stress figures import the house style; that must not pull in the book's maths."""
    code = ("import sys, lnworked.style, lnworked.stress.figures; "
            "print(sorted(m for m in sys.modules if m.startswith('lnworked')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    loaded = set(eval(done.stdout))  # a printed list of module names
    assert "lnworked.style" in loaded
    for heavy in ("lnworked.blocks", "lnworked.depth", "lnworked.examples", "lnworked.figures", "lnworked.norms"):
        assert heavy not in loaded, f"importing the house style imported {heavy}"


def test_chapters_figure_names_are_importable_from_figures():
    for name in ("block_diagrams", "post_ln_bars", "pre_ln_bars", "gradient_over_depth", "residual_growth",
                 "block_jacobian_singular_values", "epsilon_effect", "errata_chart", "family_profiles",
                 "identity_path_diagram"):
        assert name in figures.__all__ and callable(getattr(figures, name))


# --- Diagrams --------------------------------------------------------------------------


def box_bounds(patch):
    if hasattr(patch, "get_radius"):
        (x, y), r = patch.center, patch.get_radius()
        return x - r, x + r, y - r, y + r
    return patch.get_x(), patch.get_x() + patch.get_width(), patch.get_y(), patch.get_y() + patch.get_height()


def inside(point, bounds, tol=1e-9):
    x, y = point
    x0, x1, y0, y1 = bounds
    return x0 - tol <= x <= x1 + tol and y0 - tol <= y <= y1 + tol


def strictly_crosses(points, bounds, shrink=0.02):
    """Does the polyline pass through the interior of the box (sampled densely)?"""
    x0, x1, y0, y1 = bounds
    inner = (x0 + shrink, x1 - shrink, y0 + shrink, y1 - shrink)
    for a, b in zip(points[:-1], points[1:]):
        for t in np.linspace(0, 1, 400):
            if inside(np.add(a, t * np.subtract(b, a)), inner, tol=0):
                return True
    return False


def test_block_diagrams_highway_enters_ln_in_post_and_bypasses_in_pre():
    post, pre = build("block_diagrams").axes
    assert "Post-LN" in post.get_title() and "Pre-LN" in pre.get_title()
    for ax in (post, pre):
        assert len(by_gid(ax, "box-norm")) == len(by_gid(ax, "box-sublayer")) == len(by_gid(ax, "box-add")) == 1
    # Post-LN: the highway ends on the LayerNorm box.
    (highway,) = by_gid(post, "highway")
    points = list(zip(*highway.get_data()))
    assert inside(points[-1], box_bounds(by_gid(post, "box-norm")[0]))
    assert not strictly_crosses(points, box_bounds(by_gid(post, "box-sublayer")[0]))
    # Pre-LN: the highway ends on the add and crosses neither LN nor F.
    (highway,) = by_gid(pre, "highway")
    points = list(zip(*highway.get_data()))
    assert inside(points[-1], box_bounds(by_gid(pre, "box-add")[0]))
    for gid in ("box-norm", "box-sublayer"):
        assert not strictly_crosses(points, box_bounds(by_gid(pre, gid)[0]))
    add_y = by_gid(pre, "box-add")[0].center[1]
    assert all(y <= add_y + 1e-9 for _, y in points), "the Pre-LN highway goes straight up into the add"


def test_transformer_block_diagrams_have_attention_mlp_two_norms_and_pre_ln_final_norm():
    from lnworked.diagrams import transformer_block_diagrams

    post, pre = transformer_block_diagrams().axes
    assert "Post-LN" in post.get_title() and "Pre-LN" in pre.get_title()
    for ax in (post, pre):
        assert len(by_gid(ax, "box-norm")) == len(by_gid(ax, "box-add")) == len(by_gid(ax, "highway")) == 2
        assert len(by_gid(ax, "box-attention")) == len(by_gid(ax, "box-mlp")) == 1
        boxes = [box_bounds(b) for gid in ("box-norm", "box-attention", "box-mlp")
                 for b in by_gid(ax, gid)]
        for highway in by_gid(ax, "highway"):  # every residual copy ends on an add, crossing no box
            points = list(zip(*highway.get_data()))
            assert any(inside(points[-1], box_bounds(a)) for a in by_gid(ax, "box-add"))
            assert not any(strictly_crosses(points, bounds) for bounds in boxes)
    assert len(by_gid(pre, "box-final-norm")) == 1 and not by_gid(post, "box-final-norm")
    # the order along the stream: Post-LN adds then normalises; Pre-LN normalises then runs the sublayer
    height = lambda ax, gid: sorted(box_bounds(b)[2] for b in by_gid(ax, gid))
    assert height(post, "box-add")[0] < height(post, "box-norm")[0] < height(post, "box-mlp")[0]
    assert height(pre, "box-norm")[0] < height(pre, "box-attention")[0] < height(pre, "box-add")[0]


@pytest.mark.parametrize("layers", [1, 4])
def test_identity_path_diagram(layers):
    fig = build("identity_path_diagram") if layers == 4 else figures.identity_path_diagram(layers)
    pre, post = fig.axes
    (identity,) = by_gid(pre, "identity")
    xs, ys = identity.get_data()
    assert set(np.asarray(xs, float)) == {0.0}
    assert min(ys) <= min(box_bounds(b)[2] for b in by_gid(pre, "box-norm"))
    assert max(ys) >= max(box_bounds(b)[3] for b in by_gid(pre, "box-add"))
    assert len(by_gid(pre, "box-norm")) == len(by_gid(post, "box-norm")) == layers
    # Pre-Norm: no N box on the identity line; Post-Norm: every N box sits on the stream.
    assert not any(box_bounds(b)[0] <= 0 <= box_bounds(b)[1] for b in by_gid(pre, "box-norm"))
    assert all(box_bounds(b)[0] < 0 < box_bounds(b)[1] for b in by_gid(post, "box-norm"))
    assert not by_gid(post, "identity")
    # the book's placement colours: Pre-LN violet, Post-LN magenta (as in every other figure)
    assert to_rgba(identity.get_color()) == to_rgba(style.PALETTE["pre"])
    assert to_rgba(pre.title.get_color()) == to_rgba(style.PALETTE["pre"])
    assert to_rgba(post.title.get_color()) == to_rgba(style.PALETTE["post"])
    assert to_rgba(style.PALETTE["pre"]) != to_rgba(style.PALETTE["post"])


# --- Seed 004's bar charts --------------------------------------------------------------


def mean_label(ax):
    return [t.get_text() for t in ax.texts if t.get_text().startswith("mean=")]


def test_post_ln_bars_are_ex1():
    example = get_example("004-ex1")
    left, right = build("post_ln_bars").axes
    np.testing.assert_allclose(bar_heights(left), example.value("z"))
    np.testing.assert_allclose(bar_heights(right), example.value("out"))
    (mean_line,) = by_gid(left, "mean")
    assert mean_line.get_ydata()[0] == pytest.approx(np.mean(example.value("z")))
    assert mean_label(left) == ["mean=4"]
    assert by_gid(right, "mean")[0].get_ydata()[0] == pytest.approx(0.0)
    assert mean_label(right) == ["mean=0"]


def test_pre_ln_bars_are_ex2():
    example = get_example("004-ex2")
    axes = build("pre_ln_bars").axes
    assert len(axes) == 3
    for ax, values in zip(axes, (example.value("x"), example.value("normed"), example.value("out"))):
        np.testing.assert_allclose(bar_heights(ax), values)
        assert by_gid(ax, "mean")[0].get_ydata()[0] == pytest.approx(np.mean(values), abs=1e-12)
    assert mean_label(axes[2]) == ["mean=4"]


# --- Depth -------------------------------------------------------------------------------


def test_gradient_over_depth_draws_a_random_stacks_typical_values_and_ranges_beside_the_toy():
    """The markers sit at the given typical values, the bars span the given ranges; bad values are refused."""
    measured = {"Post-LN": ([12, 48], [0.9, 1.1], [0.5, 0.2], [2.0, 7.0])}
    ax = figures.gradient_over_depth(layers=48, marks=(), measured=measured).axes[0]
    (container,) = [c for c in ax.containers if c.get_label() == "Post-LN, random stack"]
    marker, _, (bars,) = container.lines  # the typical values' markers, the caps, the bars
    np.testing.assert_allclose(marker.get_xydata(), [[12, 0.9], [48, 1.1]])
    spans = sorted(tuple(np.asarray(seg)[:, 1]) for seg in bars.get_segments())
    np.testing.assert_allclose(spans, [(0.2, 7.0), (0.5, 2.0)])
    assert ax.get_ylim()[0] < 0.2 and ax.get_ylim()[1] > 7.0
    with pytest.raises(ValueError, match="^measured"):
        figures.gradient_over_depth(measured={"Post-LN": ([12], [0.9], [1.0], [2.0])})  # lowest above typical
    with pytest.raises(ValueError, match="^measured"):
        figures.gradient_over_depth(measured={"sideways": ([12], [1.0], [0.5], [2.0])})


def test_gradient_over_depth_lines_are_gradient_factors():
    fig = figures.gradient_over_depth(pre_factor=1.3, post_factor=0.6, layers=30, marks=(3, 24, 96))
    (ax,) = fig.axes
    assert ax.get_yscale() == "log"
    for label, factor in (("Pre-LN", 1.3), ("Post-LN", 0.6)):
        (line,) = by_gid(ax, f"line-{label}")
        np.testing.assert_array_equal(line.get_xdata(), np.arange(1, 31))
        np.testing.assert_allclose(line.get_ydata(), gradient_factors(factor, 30), rtol=1e-15)
        marks = by_gid(ax, f"mark-{label}")
        assert [m.get_xdata()[0] for m in marks] == [3, 24]  # 96 lies beyond 30 layers
        assert [m.get_ydata()[0] for m in marks] == pytest.approx([factor**3, factor**24])
    labels = {t.get_text() for t in ax.texts}
    assert {"2.2", "0.216"} <= labels  # 1.3^3 = 2.197, 0.6^3 = 0.216 to 3 significant figures


def test_residual_growth_is_the_library():
    fig = figures.residual_growth(max_additions=30, branch_variance=2.0, samples=500, seed=3)
    (ax,) = fig.axes
    (analytic,) = by_gid(ax, "pre-analytic")
    np.testing.assert_allclose(analytic.get_ydata(), [residual_std(n, 2.0) for n in range(1, 31)])
    (points,) = by_gid(ax, "pre-monte-carlo")
    expected = [np.sqrt(residual_variance_monte_carlo(int(n), 2.0, 500, 3)) for n in points.get_xdata()]
    np.testing.assert_allclose(points.get_ydata(), expected)
    assert points.get_xdata()[0] == 1 and points.get_xdata()[-1] == 30
    (post,) = by_gid(ax, "post")
    np.testing.assert_allclose(post.get_ydata(), post_ln_stream_std(30, 2.0, 500, 3 + 1))
    np.testing.assert_allclose(post.get_ydata(), 1.0, atol=1e-4)


# --- Jacobians ---------------------------------------------------------------------------


def test_block_jacobian_singular_values_histogram_counts():
    fig = build("block_jacobian_singular_values")
    hist = fig.axes[0]
    counts_pre = sum(p.get_height() for p in by_gid(hist, "hist-pre"))
    counts_post = sum(p.get_height() for p in by_gid(hist, "hist-post"))
    assert counts_pre == counts_post == 200 * 16
    assert any("2 near-zero" in t.get_text() for t in hist.texts)
    # the right panel plots blocks.jacobian_singular_value_samples' largest values against 1/sigma
    pre, post, sigma = jacobian_singular_value_samples()
    scaling = fig.axes[1]
    for gid, values in (("post-largest", post[:, 0]),):
        (points,) = by_gid(scaling, gid)
        np.testing.assert_allclose(points.get_xdata(), 1 / sigma)
        np.testing.assert_allclose(points.get_ydata(), values)


# --- epsilon -----------------------------------------------------------------------------


def test_epsilon_effect_lines_are_layer_norm():
    (ax,) = build("epsilon_effect").axes
    assert ax.get_xscale() == "log"
    pattern = layer_norm(np.array([-3.0, -1.0, 1.0, 3.0]), eps=0)
    for eps in (0.0, 1e-5, 1e-2):
        (line,) = by_gid(ax, f"eps-{eps:g}")
        s, y = np.asarray(line.get_xdata()), np.asarray(line.get_ydata())
        assert np.all(s > 0) and np.all(np.isfinite(y))
        expected = np.max(np.abs(layer_norm(5.0 + s[:, None] * pattern, eps=eps)), axis=-1)
        np.testing.assert_allclose(y, expected)
        if eps == 0:
            np.testing.assert_allclose(y, np.max(np.abs(pattern)), rtol=1e-6)
        else:
            assert y[0] < 1e-3 * y[-1], "with eps > 0 the output fades as the spread goes to 0"


# --- Errata ------------------------------------------------------------------------------


def test_errata_chart_bars_are_seed_and_library_values():
    fig = build("errata_chart")
    rows = figures.numeric_errata()
    ids = {example.id for example, _, _ in rows}
    assert {"001-twenty-four-layers", "004-ex7"} <= ids
    titled = [ax for ax in fig.axes if ax.get_title()]
    assert [ax.get_gid() for ax in titled] == [example.id for example, _, _ in rows]  # titles: test_phone_text
    for ax, (example, stated, computed) in zip(titled, rows):
        assert example.agrees is False
        np.testing.assert_allclose(bar_heights(ax, "seed"), np.ravel(example.stated))
        np.testing.assert_allclose(bar_heights(ax, "library"), np.ravel(example.computed))
    assert dict(zip([a.get_gid() for a in titled], [a.get_yscale() for a in titled]))["004-ex7"] == "log"


def test_gain_split_scatter_draws_each_scales_typical_block_and_the_curve_where_gains_cancel():
    from lnworked.figures import gain_split_scatter

    # two blocks per scale: norm gains (0.5, 2) and (0.25, 1), add gains (2, 2) and (4, 4)
    fig = gain_split_scatter({1.0: (np.array([0.5, 2.0]), np.array([2.0, 2.0])),
                              2.0: (np.array([0.25, 1.0]), np.array([4.0, 4.0]))})
    ax = fig.axes[0]
    lines = {line.get_gid(): line for line in ax.get_lines()}
    # the typical block is the geometric mean of each gain: sqrt(0.5 * 2) = 1, and sqrt(0.25 * 1) = 0.5
    assert np.allclose(lines["typical-1"].get_xydata(), [[1.0, 2.0]])
    assert np.allclose(lines["typical-2"].get_xydata(), [[0.5, 4.0]])
    x, y = lines["product-one"].get_xydata().T
    assert np.allclose(x * y, 1.0)
    assert ax.get_xscale() == ax.get_yscale() == "log"
    # the smaller branch scale's tighter cloud is drawn above the wider one, which would hide it
    clouds = {c.get_gid(): c.get_zorder() for c in ax.collections}
    assert clouds["blocks-1"] > clouds["blocks-2"]
    assert min(lines["typical-1"].get_zorder(), lines["typical-2"].get_zorder()) > max(clouds.values())
    with pytest.raises(ValueError, match="^splits"):
        gain_split_scatter({})
    with pytest.raises(ValueError, match="^splits"):
        gain_split_scatter({1.0: (np.array([0.5]), np.array([-1.0]))})


def test_removed_share_figure_draws_the_mean_share_and_a_random_directions():
    """The line is 100 times the mean over seeds of each block's share, computed here; the dashed line is
    100 * 2 / width; bad shares or widths are refused by name."""
    from lnworked.figures import removed_share_figure

    share = np.array([[0.01, 0.02, 0.3], [0.03, 0.0, 0.1]])
    ax = removed_share_figure(share, 16).axes[0]
    lines = {line.get_gid(): line for line in ax.get_lines() if line.get_gid()}
    x, y = (np.asarray(v, float) for v in lines["from-above"].get_data())
    np.testing.assert_array_equal(x, [1, 2, 3])
    np.testing.assert_allclose(y, [2.0, 1.0, 20.0])
    assert lines["random"].get_ydata()[0] == pytest.approx(12.5)
    assert ax.get_yscale() == "log"
    for bad_share, bad_width, name in ((np.array([0.1, 0.2]), 16, "removed_share"),
                                       (np.array([[0.1, 1.5]]), 16, "removed_share"),
                                       (share, 2, "width"), (share, True, "width")):
        with pytest.raises(ValueError, match=f"^{name}:"):
            removed_share_figure(bad_share, bad_width)
