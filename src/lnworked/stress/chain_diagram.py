"""Chapter 7's chain in one picture: branch share → sensitivity → the loss leaves its tangent, so a
full-rate first step delivers little.

:func:`chain_diagram` draws three boxes top to bottom, one per link of the chain that the
chapter measures (each carrying its Pre-LN and Post-LN values), and two side boxes for the
two fixes, each with an arrow to the link it acts on: DeepNorm's branch scale :math:`\\kappa`
lowers the branch share :math:`\\rho`, and warmup shrinks the first step. The function computes
and types no number: every value is a string the caller passes (the chapter passes the same
formatted values it glues into its prose), so the picture cannot drift from the page.

The layout is tall and narrow (:data:`WIDTH` inches) so that its 12 pt text stays about
14 px tall on a 390 px phone (measured: the image gets 342 px there).
"""

from __future__ import annotations

from collections.abc import Mapping

from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

from lnworked.style import FONT, PALETTE, new_figure

__all__ = ["CHAIN_KEYS", "OPEN_KEYS", "WIDTH", "chain_diagram"]

#: The values the diagram needs, each a formatted string: key -> what it is.
CHAIN_KEYS = {
    "rho_pre": "Pre-LN's branch shares (e.g. first block → last)",
    "rho_post": "Post-LN's branch shares (e.g. their range)",
    "move_pre": "Pre-LN's logit change (relative) under warmup's first step",
    "move_post": "Post-LN's logit change (relative) under warmup's first step",
    "move_ratio": "Post-LN's logit change over Pre-LN's, per unit of step",
    "delivered_pre": "share (%) of its promise Pre-LN's full-rate first step delivers",
    "delivered_post": "share (%) Post-LN's full-rate first step delivers",
    "warmup_factor": "how many times smaller warmup's first step is",
    "warmup_delivered": "share (%) Post-LN's first step delivers at warmup's rate",
    "kappa_fold": "how many times DeepNorm's kappa lowers Post-LN's mean branch share",
    "kappa_delivered": "share (%) Post-LN's full-rate first step delivers at DeepNorm's kappa",
}

#: The keys that may be None: DeepNorm's box then says its values are measured later.
OPEN_KEYS = ("kappa_fold", "kappa_delivered")

#: Figure width in inches: 12 pt text drawn at 110 dpi and shrunk to the 342 px a phone gives it stays >= 13 px.
WIDTH = 3.92

_HEIGHT = 6.35  # inches
_CHAIN = (0.05, 2.15)  # x range of the chain's boxes, inches
_SIDE = (2.3, 3.88)  # x range of the fixes' boxes, inches
_BOX_HEIGHT = 1.75
_GAP = 0.5


def _check(numbers: Mapping) -> dict:
    if not isinstance(numbers, Mapping):
        raise ValueError(f"numbers must be a mapping of the keys {sorted(CHAIN_KEYS)}, got {type(numbers).__name__}")
    missing = [key for key in CHAIN_KEYS if key not in numbers]
    if missing:
        raise ValueError(f"numbers is missing {', '.join(repr(k) for k in missing)} "
                         f"({'; '.join(CHAIN_KEYS[k] for k in missing)})")
    for key in CHAIN_KEYS:
        if key in OPEN_KEYS and numbers[key] is None:
            continue
        if not isinstance(numbers[key], str) or not numbers[key].strip():
            raise ValueError(f"numbers[{key!r}] must be a non-empty formatted string, got {numbers[key]!r}")
    if (numbers["kappa_fold"] is None) != (numbers["kappa_delivered"] is None):
        raise ValueError("numbers['kappa_fold'] and numbers['kappa_delivered'] must both be strings or both None")
    return {key: numbers[key] for key in CHAIN_KEYS}


def _box(ax, x0, x1, top, height, edge, dashed=False):
    ax.add_patch(FancyBboxPatch((x0, top - height), x1 - x0, height, boxstyle="round,pad=0,rounding_size=0.08",
                                facecolor=PALETTE["background"], edgecolor=edge, linewidth=2,
                                linestyle="--" if dashed else "-", zorder=2))


def _lines(ax, x, top, lines):
    """Draw ``lines`` [(text, colour, bold)] from ``top`` down, left-aligned at ``x``."""
    step = FONT["box"] * 1.45 / 72  # line height, inches
    for i, (text, colour, bold) in enumerate(lines):
        ax.text(x, top - 0.14 - i * step, text, fontsize=FONT["box"], color=colour, va="top", ha="left",
                fontweight="bold" if bold else "normal", zorder=3)


def _arrow(ax, start, end, colour, dashed=False):
    ax.add_patch(FancyArrowPatch(start, end, arrowstyle="-|>", mutation_scale=22, linewidth=2, color=colour,
                                 linestyle="--" if dashed else "-", zorder=1, shrinkA=0, shrinkB=0))


def chain_diagram(numbers: Mapping):
    """The chain, one box per link, with the caller's values; the two fixes as side arrows.

    ``numbers`` maps every key of :data:`CHAIN_KEYS` to a formatted string (no units: the
    diagram adds "%" and "×"). Raises ValueError naming any missing key. The keys of
    :data:`OPEN_KEYS` may be None together: DeepNorm's box then reads "ρ lower → measured
    below", for a page that shows the diagram before it measures DeepNorm.
    """
    n = _check(numbers)
    pre, post, text, fix = PALETTE["pre"], PALETTE["post"], PALETTE["text"], PALETTE["blue"]
    links = [
        [("Branch share ρ", text, True), ("first block → last:", text, False),
         (f"Pre-LN   {n['rho_pre']}", pre, False), (f"Post-LN  {n['rho_post']}", post, False)],
        [("Output moves more", text, True), ("per unit of step", text, True),
         ("logits' change,", text, False), ("warmup's rate:", text, False),
         (f"Pre-LN   {n['move_pre']}", pre, False),
         (f"Post-LN  {n['move_post']} ({n['move_ratio']}×)", post, False)],
        [("Loss leaves its", text, True), ("tangent sooner", text, True),
         ("a full-rate first step", text, False), ("keeps, of its promise:", text, False),
         (f"Pre-LN   {n['delivered_pre']}%", pre, False), (f"Post-LN  {n['delivered_post']}%", post, False)],
    ]
    fig, ax = new_figure(WIDTH, _HEIGHT)
    ax.set_axis_off()
    ax.set_xlim(0, WIDTH)
    ax.set_ylim(0, _HEIGHT)
    tops = [_HEIGHT - 0.05 - i * (_BOX_HEIGHT + _GAP) for i in range(len(links))]
    middle = (_CHAIN[0] + _CHAIN[1]) / 2
    for i, (top, lines) in enumerate(zip(tops, links)):
        _box(ax, *_CHAIN, top, _BOX_HEIGHT, PALETTE["norm"])
        _lines(ax, _CHAIN[0] + 0.12, top, lines)
        if i:
            _arrow(ax, (middle, tops[i - 1] - _BOX_HEIGHT), (middle, top), PALETTE["norm"])
    fixes = [
        (0, [("DeepNorm's κ", fix, True), (f"ρ {n['kappa_fold']}×", text, False), ("lower", text, False),
             (f"→ {n['kappa_delivered']}%", post, False), ("delivered", text, False)]
         if n["kappa_fold"] is not None else
         [("DeepNorm's κ", fix, True), ("ρ lower", text, False), ("→ measured", post, False),
          ("below", text, False)]),
        (2, [("Warmup", fix, True), ("first step", text, False), (f"{n['warmup_factor']}× smaller", text, False),
             (f"→ {n['warmup_delivered']}%", post, False), ("delivered", text, False)]),
    ]
    for link, lines in fixes:
        top = tops[link]
        _box(ax, *_SIDE, top, _BOX_HEIGHT, fix, dashed=True)
        _lines(ax, _SIDE[0] + 0.1, top, lines)
        y = top - _BOX_HEIGHT / 2
        _arrow(ax, (_SIDE[0], y), (_CHAIN[1], y), fix)
    return fig
