"""Figures a student reader could not read on a 390 px phone (Figs. 3.3, 5.4, 6.1-6.3 and the appendix's
Theorem 1 figure): every text of each, scaled to the phone's column, is at least 13 px tall, and Fig. 5.4
tells its six lines apart by panel, line style and marker.

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


def drawn_texts(fig):
    """The figure's non-empty visible texts (titles, labels, ticks, legends, annotations)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig).draw()  # ticks and their labels exist only once drawn
    for text in fig.findobj(Text):
        if text.get_visible() and text.get_text().strip():
            yield text


def smallest_px(fig) -> tuple[float, str]:
    """The smallest text's height in CSS px once the figure's PNG is shown :data:`SCREEN_PX` wide, and the text."""
    png = fig._repr_png_()
    width = int.from_bytes(png[16:20], "big")  # the PNG header's IHDR width
    return min((style.phone_font_px(t.get_fontsize(), width, screen_px=SCREEN_PX), t.get_text())
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
    from lnworked.stress.warmup_figures import first_update_figure

    rows = [dict(pre_norm=p, seed=s, layers=d, learning_rate=lr, relative=d * lr * s, delta_loss=-d * lr * s)
            for p in (True, False) for s in (7, 8) for d in (1, 2, 4, 8) for lr in (2e-3, 2e-3 / 120)]
    return first_update_figure(rows, 2e-3, 2e-3 / 120)


def _loss_along_figure():
    from lnworked.stress.warmup_figures import loss_along_update_figure

    first_t = 1 / 120
    ts = np.concatenate([first_t * np.array([0, 1, 2, 4, 8]), np.linspace(0.125, 1, 8)])
    curves = {pre_norm: dict(loss=4.2 - slope * ts + 0.1 * ts ** 2, slope=-slope)
              for pre_norm, slope in ((True, 0.36), (False, 0.25))}
    return loss_along_update_figure(ts, curves, first_t)


def _safe_rate_figure():
    from lnworked.stress.committed import committed_first_step
    from lnworked.stress.first_step import safe_rate_figure

    return safe_rate_figure(committed_first_step()[0])


def _theorem1_figure():
    from lnworked.stress.committed import committed_xiong
    from lnworked.stress.xiong import theorem1_figure

    return theorem1_figure(committed_xiong()[0], column="expected_w2_gradient_norm")


def _fig3_figure():
    from lnworked.stress.committed import committed_xiong
    from lnworked.stress.xiong import fig3_figure

    return fig3_figure(committed_xiong()[0], depth=6, column="expected_w2_gradient_norm")


#: The book's calls of each figure (chapter 3, chapter 5, chapter 6 three times, the appendix).
FIGURES = {
    "Fig. 3.3 gradient_over_depth": lambda: figures.gradient_over_depth(marks=(24, 96)),
    "Fig. 5.4 layer_gradient_figure": _layer_figure,
    "Fig. 6.1 loss_along_update_figure": _loss_along_figure,
    "Fig. 6.2 first_update_figure": _first_update_figure,
    "Fig. 6.3 safe_rate_figure": _safe_rate_figure,
    "appendix theorem1_figure": _theorem1_figure,
    "appendix fig3_figure": _fig3_figure,
}


@pytest.mark.parametrize("name", FIGURES)
def test_every_text_is_at_least_13_px_on_a_phone(name):
    px, text = smallest_px(FIGURES[name]())
    assert px >= FLOOR_PX, f"{name}: {text!r} is {px:.1f} px at {SCREEN_PX} px"


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

    fig = figures.gradient_over_depth(marks=(24, 96))
    renderer = FigureCanvasAgg(fig).get_renderer()
    fig.draw(renderer)
    (ax,) = fig.axes
    box = ax.get_window_extent(renderer)
    for text in ax.texts:
        extent = text.get_window_extent(renderer)
        assert box.y0 <= extent.y0 and extent.y1 <= box.y1, text.get_text()
