"""Figures a student reader could not read on a 390 px phone (Figs. 1.1, 1.2, chapter 2's forecast bar
charts, 2.3, 3.3, 4.1, 5.3, 5.4, 6.1-6.3, 10.1 and the appendix's Theorem 1 figure): every text of each,
scaled to the phone's column, is at least 13 px tall; Fig. 5.4 tells its six lines apart by panel, line
style and marker; Fig. 2.3's scatter keeps its points and legend clear of each other and of the edges;
Fig. 10.1's panels carry the errata's titles, not their ids.

The size of a text on the phone is its size in the PNG the book shows (``fontsize * dpi / 72`` px at the
PNG's dpi) times the column's width over the PNG's width (:func:`lnworked.style.phone_font_px`); the
PNG's width is read from its header, so a legend or label that widens the saved image is counted.
"""

from __future__ import annotations

import numpy as np
import pytest
from matplotlib.text import Text

from lnworked import figures, style

#: The figure's width on a 390 px phone: the column less the figure box's padding (chapter 7's
#: chain-diagram test measured 342 px in Chromium; the brief's 343-350 px).
SCREEN_PX = 343
#: The smallest text height, px, on that screen.
FLOOR_PX = 13
#: Figures shown in a narrower column: chapter 2's bar charts sit in a forecast's folded answer, a fold inside
#: a fold (book/_static/maths.css: one fold has about 290 px at 390 px; the reader saw the PNG at ~51 %, 245 px).
COLUMN_PX = {"ch2 post_ln_bars": 250, "ch2 pre_ln_bars": 250}


def drawn_texts(fig):
    """The figure's non-empty visible texts (titles, labels, ticks, legends, annotations)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig).draw()  # ticks and their labels exist only once drawn
    for text in fig.findobj(Text):
        if text.get_visible() and text.get_text().strip():
            yield text


def smallest_px(fig, screen_px: float = SCREEN_PX) -> tuple[float, str]:
    """The smallest text's height in CSS px once the figure's PNG is shown ``screen_px`` wide, and the text."""
    png = fig._repr_png_()
    width = int.from_bytes(png[16:20], "big")  # the PNG header's IHDR width
    return min((style.phone_font_px(t.get_fontsize(), width, screen_px=screen_px), t.get_text())
               for t in drawn_texts(fig))


def layer_rows():
    """Per-block gradient norms of three depths, both placements: ``(depth + layer) * (2 for Post-LN) / 100``."""
    return [dict(layers=depth, pre_norm=pre_norm, layer=layer,
                 gradient_norm=(depth + layer) * (1 if pre_norm else 2) / 100)
            for depth in (3, 6, 12) for pre_norm in (True, False) for layer in range(1, depth + 1)]


def _layer_figure():
    from lnworked.stress.figures import layer_gradient_figure

    return layer_gradient_figure(layer_rows())


def _first_update_figure():
    from lnworked.stress.first_step_figures import first_update_figure

    rows = [dict(pre_norm=p, seed=s, layers=d, learning_rate=lr, relative=d * lr * s, delta_loss=-d * lr * s,
                 linear_delta_loss=-2 * d * lr * s)
            for p in (True, False) for s in (7, 8) for d in (1, 2, 4, 8) for lr in (2e-3, 2e-3 / 120)]
    return first_update_figure(rows, 2e-3, 2e-3 / 120)


def _loss_along_figure():
    from lnworked.stress.first_step_figures import loss_along_update_figure

    first_t = 1 / 120
    ts = np.concatenate([first_t * np.array([0, 1, 2, 4, 8]), np.linspace(0.125, 1, 8)])
    curves = {pre_norm: dict(loss=4.2 - slope * ts + 0.1 * ts ** 2, slope=-slope)
              for pre_norm, slope in ((True, 0.36), (False, 0.25))}
    return loss_along_update_figure(ts, curves, first_t)


def _safe_rate_figure():
    from lnworked.stress.committed import committed_first_step
    from lnworked.stress.first_step import safe_rate_figure

    return safe_rate_figure(committed_first_step()[0])


def _schedule_figure():
    from lnworked.stress.committed import committed_warmup_schedules
    from lnworked.stress.deepnorm import final_loss
    from lnworked.stress.warmup_figures import warmup_schedule_figure
    from lnworked.stress.warmup_schedules import summarise

    losses = summarise(committed_warmup_schedules()[0])[1]
    return warmup_schedule_figure({s: final_loss(v) for s, v in losses.items()}, 64, 0.1)


def _theorem1_figure():
    from lnworked.stress.committed import committed_xiong
    from lnworked.stress.xiong import theorem1_figure

    return theorem1_figure(committed_xiong()[0], column="expected_w2_gradient_norm")


def _fig3_figure():
    from lnworked.stress.committed import committed_xiong
    from lnworked.stress.xiong import fig3_figure

    return fig3_figure(committed_xiong()[0], depth=6, column="expected_w2_gradient_norm")


def _stability_map():
    from lnworked.stress.committed import committed_sweep
    from lnworked.stress.figures import stability_map

    return stability_map(committed_sweep()[0])


def _schedules_side_figure():
    from lnworked.stress.committed import committed_warmup_schedules
    from lnworked.stress.config import StressConfig
    from lnworked.stress.warmup_figures import schedules_figure
    from lnworked.stress.warmup_schedules import schedule_rates, summarise

    config = StressConfig()
    losses = summarise(committed_warmup_schedules()[0])[1]
    return schedules_figure([(f"{kind} {k}", schedule_rates((kind, k), config) / config.learning_rate, losses[(kind, k)])
                             for kind, k in (("constant", 0), ("held", 120), ("cut", 30), ("cut", 60), ("linear", 120))],
                            config.vocab_size, 0.1)


def _sharpness_figure():
    from lnworked.stress.committed import committed_warmup_sharpness
    from lnworked.stress.sharpness import RUNS, adam_threshold
    from lnworked.stress.warmup_figures import SCHEDULE_LOOKS
    from lnworked.stress.threshold_figures import sharpness_figure

    rows = committed_warmup_sharpness()[0]
    seeds, steps = sorted({r["seed"] for r in rows}), sorted({r["step"] for r in rows})
    runs = []
    for (pre_norm, (kind, k)), look in zip(RUNS, SCHEDULE_LOOKS + (SCHEDULE_LOOKS[0],)):
        table = {(r["seed"], r["step"]): r["sharpness"] for r in rows
                 if (r["placement"] == "Pre-LN") == pre_norm and (r["kind"], r["k"]) == (kind, k)}
        runs.append((f"{kind} {k}", steps, [[table[s, t] for t in steps] for s in seeds], look, min(k, 120)))
    # as the book draws it: one run to a panel (reads 263, 265)
    return sharpness_figure([(run[0], [run]) for run in runs], adam_threshold(0.9),
                            center="median", panel_height=3.0, legend=False)


def _ceiling_figure():
    from lnworked.stress.committed import committed_warmup_workable_sharpness
    from lnworked.stress.config import StressConfig
    from lnworked.stress.sharpness import adam_threshold
    from lnworked.stress.threshold_figures import workable_products_figure
    from lnworked.stress.warmup_schedules import schedule_rates
    from lnworked.stress.workable import WORKABLE_START, committed_workable_curve

    config = StressConfig()
    reading = {(r["seed"], r["step"]): r["sharpness"] for r in committed_warmup_workable_sharpness()[0]}
    seeds, best = committed_workable_curve()
    ceiling = {s: [adam_threshold(0.9) / reading[seed, s] for seed in seeds] for s in best}
    return workable_products_figure(best, schedule_rates(WORKABLE_START, config) / config.learning_rate, ceiling)


def _workable_curve_figure():
    """As 6.6 draws it: the best constant rate along the steep warmup, beside the warmup's next rate (read 270:
    its labels were about 7 px on a phone while its legend entry was a sentence long)."""
    from lnworked.stress.config import StressConfig
    from lnworked.stress.warmup_figures import workable_curve_figure
    from lnworked.stress.warmup_schedules import schedule_rates
    from lnworked.stress.workable import WORKABLE_START, committed_workable_curve

    config = StressConfig()
    _, best = committed_workable_curve()
    return workable_curve_figure(best, schedule_rates(WORKABLE_START, config)[:61] / config.learning_rate,
                                 "the warmup's next rate")


def _valley_figure():
    from lnworked.stress.sharpness import adam_threshold, momentum_walk
    from lnworked.stress.threshold_figures import valley_figure

    return valley_figure({r * 2: momentum_walk(r * 2, 0.0, 4) for r in (0.8, 1.0, 1.2)}, adam_threshold(0))


#: The book's calls of each figure (chapters 1-6, the errata page, the appendix).
FIGURES = {
    "Fig. 1.1 layer_norm_geometry": figures.layer_norm_geometry,
    "Fig. 1.2 epsilon_effect": figures.epsilon_effect,
    "ch2 post_ln_bars": figures.post_ln_bars,
    "ch2 pre_ln_bars": figures.pre_ln_bars,
    "Fig. 2.3 block_jacobian_singular_values": figures.block_jacobian_singular_values,
    "Fig. 4.1 residual_growth": figures.residual_growth,
    "Fig. 5.3 stability_map": _stability_map,
    "Fig. 10.1 errata_chart": figures.errata_chart,
    "Fig. 3.3 gradient_over_depth": lambda: figures.gradient_over_depth(layers=48, marks=(24, 48)),
    "appendix layer_gradient_figure": _layer_figure,
    "ch3 gain_split_scatter": lambda: figures.gain_split_scatter(
        {b: (np.exp(0.1 * np.arange(1, 7) / b), np.exp(-0.1 * np.arange(1, 7) * b)) for b in (0.5, 1.0, 2.0)}),
    "Fig. 6.1 loss_along_update_figure": _loss_along_figure,
    "Fig. 6.2 first_update_figure": _first_update_figure,
    "Fig. 6.3 safe_rate_figure": _safe_rate_figure,
    "Fig. 6.6 warmup_schedule_figure": _schedule_figure,
    "ch6 schedules_figure": _schedules_side_figure,
    "ch6 sharpness_figure": _sharpness_figure,
    "ch6 valley_figure": _valley_figure,
    "ch6 workable_products_figure": _ceiling_figure,
    "ch6 workable_curve_figure": _workable_curve_figure,
    "appendix theorem1_figure": _theorem1_figure,
    "appendix fig3_figure": _fig3_figure,
    "gains appendix removed_share_figure": lambda: figures.removed_share_figure(
        np.linspace(0.001, 0.2, 48 * 8).reshape(8, 48), 16),
}


@pytest.mark.parametrize("name", FIGURES)
def test_every_text_is_at_least_13_px_on_a_phone(name):
    screen = COLUMN_PX.get(name, SCREEN_PX)
    px, text = smallest_px(FIGURES[name](), screen)
    assert px >= FLOOR_PX, f"{name}: {text!r} is {px:.1f} px at {screen} px"


def test_smallest_px_is_the_font_over_the_shrink():
    """The measure by another route: the smallest font size times 110 dpi / 72, times 343 over the width
    of the decoded PNG (matplotlib's image reader, not the header)."""
    import io

    from matplotlib.image import imread

    fig, ax = style.new_figure(8, 3)
    ax.set_title("wide figure", fontsize=14)
    ax.set_xlabel("x", fontsize=10)
    ax.tick_params(labelsize=12)
    width = imread(io.BytesIO(fig._repr_png_())).shape[1]
    assert width > SCREEN_PX  # a shrunk image
    px, text = smallest_px(fig)
    assert text == "x" and px == pytest.approx(10 * 110 / 72 * SCREEN_PX / width)


def test_layer_gradient_figure_tells_its_six_lines_apart():
    """One panel per placement on one y scale; within a panel each depth its own line style and marker,
    the same in both panels, and its depth written at the line's end; the lines are the rows."""
    rows = layer_rows()
    fig = _layer_figure()
    pre, post = [ax for ax in fig.axes]
    assert (pre.get_title(), post.get_title()) == ("Pre-LN", "Post-LN")
    assert pre.get_ylim() == post.get_ylim() and pre.get_yscale() == "log"
    looks = []
    for ax, pre_norm in ((pre, True), (post, False)):
        lines = [line for line in ax.get_lines() if line.get_gid()]
        assert len(lines) == 3
        look = {}
        for line in lines:
            depth = int(line.get_gid().split(", ")[1].split()[0])
            mine = [r for r in rows if r["layers"] == depth and r["pre_norm"] == pre_norm]
            np.testing.assert_array_equal(line.get_xdata(), [r["layer"] for r in mine])
            np.testing.assert_array_equal(line.get_ydata(), [r["gradient_norm"] for r in mine])
            look[depth] = (line.get_linestyle(), line.get_marker())
            ends = [t for t in ax.texts if t.xy == (depth, mine[-1]["gradient_norm"])]
            assert [t.get_text() for t in ends] == [str(depth)]
        assert len(set(look.values())) == 3
        looks.append(look)
    assert looks[0] == looks[1]
    (legend,) = fig.legends
    assert [t.get_text() for t in legend.get_texts()] == ["3 blocks", "6 blocks", "12 blocks"]


def test_gradient_over_depth_keeps_the_marks_values_inside_the_axes():
    """The values written at the marks (and the legend, below the axes) stay inside the figure's own box."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    fig = figures.gradient_over_depth(layers=48, marks=(24, 48))
    renderer = FigureCanvasAgg(fig).get_renderer()
    fig.draw(renderer)
    (ax,) = fig.axes
    box = ax.get_window_extent(renderer)
    for text in ax.texts:
        extent = text.get_window_extent(renderer)
        assert box.y0 <= extent.y0 and extent.y1 <= box.y1, text.get_text()


def test_jacobian_scatter_keeps_points_and_legend_apart_and_labels_its_lowest_values():
    """Fig. 2.3's bottom panel: every point's centre at least 6 % of the axes' size from each edge (matplotlib's
    default margin, 4.5 % on this log scale, put the extreme points against the frame); the legend below
    the axes, so it covers no point; a labelled y tick below the lowest point's value plus a quarter of
    the range (the reader found none below 1.5)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    fig = figures.block_jacobian_singular_values()
    renderer = FigureCanvasAgg(fig).get_renderer()
    fig.draw(renderer)
    scaling = fig.axes[1]
    (points,) = [line for line in scaling.get_lines() if line.get_gid() == "post-largest"]
    box = scaling.get_window_extent(renderer)
    xy = scaling.transData.transform(np.column_stack([points.get_xdata(), points.get_ydata()]))
    margin_x, margin_y = 0.06 * box.width, 0.06 * box.height
    assert np.all(xy[:, 0] - margin_x >= box.x0) and np.all(xy[:, 0] + margin_x <= box.x1)
    assert np.all(xy[:, 1] - margin_y >= box.y0) and np.all(xy[:, 1] + margin_y <= box.y1)
    legend = scaling.get_legend().get_window_extent(renderer)
    assert legend.y1 < box.y0, "the legend sits below the axes"
    y = np.asarray(points.get_ydata())
    shown = [float(tick.get_text()) for tick in scaling.get_yticklabels() if tick.get_text()
             and scaling.get_ylim()[0] <= tick.get_position()[1] <= scaling.get_ylim()[1]]
    assert min(shown) <= y.min() + 0.25 * (y.max() - y.min()), shown


def test_errata_chart_panels_are_titled_by_the_errata_titles():
    """Fig. 10.1: each panel's title is its erratum's title as the page shows it (not its id), on lines
    no wider than the axes; the id stays on the axes as its gid."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from lnworked.display import display_title, numeric_errata

    fig = figures.errata_chart()
    renderer = FigureCanvasAgg(fig).get_renderer()
    fig.draw(renderer)
    rows = numeric_errata()
    panels = [ax for ax in fig.axes if ax.get_title()]
    assert [ax.get_gid() for ax in panels] == [example.id for example, _, _ in rows]
    for ax, (example, _, _) in zip(panels, rows):
        assert " ".join(ax.get_title().split()) == display_title(example)
        assert example.id not in ax.get_title()
        assert ax.title.get_window_extent(renderer).width <= ax.get_window_extent(renderer).width
