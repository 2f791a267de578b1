"""The house style of every figure: palette, font sizes, a white figure that shows itself as PNG.

Kept apart from the figures themselves so that anything can draw in the house style (the
stress test's figures, the explorers) without importing the book's maths.

:func:`new_figure` builds a :class:`BookFigure` (a :class:`matplotlib.figure.Figure`
subclass) directly, never through ``pyplot``: nothing auto-displays, nothing leaks into a
global figure list, and a notebook can ``glue`` the figure. ``BookFigure`` adds
``_repr_png_`` because a bare ``Figure`` has no PNG representation in a kernel where
``pyplot`` was never imported (it would show as ``<Figure size ...>``).

The style: an opaque white face colour so the figures stay readable in the theme's dark
mode, font sizes of 12-14 pt (:data:`FONT`) on figures at most :data:`PHONE_WIDTH` inches wide
(panels stacked, not side by side) so that a phone can read them, a title on every axes
(:func:`title`), and the seeds' palette (:data:`PALETTE`): violet for sublayers and Pre-LN, orange for the residual
highway, magenta for adds and Post-LN, navy for LayerNorm boxes, blue for seed 002's
identity highway and grey for a seed's stated value (or an input).
"""

from __future__ import annotations

import io

import numpy as np
from matplotlib.figure import Figure

__all__ = ["PALETTE", "FONT", "PHONE_WIDTH", "PHONE_SCREEN_PX", "BookFigure", "phone_font_px", "figure_png",
           "style_axes", "new_figure", "title", "labels", "legend"]

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
    "teal": "#00796b",  # teal and brown: further runs beside the five looks of a figure
    "brown": "#6d4c41",
    "green": "#2e7d32",  # green and gold: runs no other colour of their section names
    "gold": "#8a6100",
    "grid": "#d9d9d9",
    "background": "#ffffff",
}
PALETTE.update(violet=PALETTE["sublayer"], orange=PALETTE["highway"], magenta=PALETTE["add"],
               navy=PALETTE["norm"], blue=PALETTE["identity"], grey=PALETTE["seed"])

#: Font sizes in points.
FONT = {"title": 14, "label": 13, "tick": 12, "legend": 12, "annotation": 12, "box": 12}

#: The widest a figure should be, in inches: a phone (390 px wide, about 350 px of figure
#: width) shrinks a figure rendered at ``dpi`` to ``PHONE_SCREEN_PX / (width * dpi)`` of its
#: size, so at 5.4 inches a 12 pt font still shows at about 11 px (:func:`phone_font_px`).
PHONE_WIDTH = 5.4

#: The width, in CSS pixels, a figure gets on a 390 px phone screen (the book's column).
PHONE_SCREEN_PX = 350


class BookFigure(Figure):
    """A :class:`~matplotlib.figure.Figure` that renders itself as PNG in a notebook."""

    def _repr_png_(self) -> bytes:
        return figure_png(self)


def figure_png(fig: Figure, dpi: int = 110) -> bytes:
    """The figure as PNG bytes, keeping its opaque face colour."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi, facecolor=fig.get_facecolor(), bbox_inches="tight")
    return buffer.getvalue()


def phone_font_px(fontsize: float, image_width_px: float, dpi: int = 110, screen_px: float = PHONE_SCREEN_PX) -> float:
    """The height in CSS px of a ``fontsize``-pt text once the image is scaled to the screen.

    ``fontsize * dpi / 72`` pixels in the PNG, times ``min(1, screen_px / image_width_px)``
    (a browser shrinks a wide image to the column, never enlarges a narrow one).
    """
    return fontsize * dpi / 72 * min(1.0, screen_px / image_width_px)


def style_axes(ax, grid: bool = True):
    """Apply the house style to one axes: tick sizes, light grid, no top/right spines."""
    ax.set_facecolor(PALETTE["background"])
    ax.tick_params(which="both", labelsize=FONT["tick"], colors=PALETTE["text"])
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


def title(ax, text: str, color: str | None = None):
    """An axes title at the title size, in ``color`` (default: the text colour)."""
    ax.set_title(text, fontsize=FONT["title"], color=color or PALETTE["text"])


def labels(ax, xlabel: str, ylabel: str):
    """Both axis labels at the label size."""
    ax.set_xlabel(xlabel, fontsize=FONT["label"])
    ax.set_ylabel(ylabel, fontsize=FONT["label"])


def legend(ax, **kw):
    """A frameless legend at the legend size."""
    ax.legend(fontsize=FONT["legend"], frameon=False, **kw)
