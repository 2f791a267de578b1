"""The book's block diagrams, drawn with matplotlib patches in the house style.

:func:`block_diagrams` is seed 004's figure s01 (one Post-LN and one Pre-LN block);
:func:`transformer_block_diagrams` is a whole transformer block in each placement (attention,
MLP, two norms per block, and Pre-LN's final norm);
:func:`identity_path_diagram` is seed 002's diagram (stacked blocks: Pre-Norm's untouched
identity highway against Post-Norm's N on every path). Artists that tests look for carry a
``gid`` (``"highway"``, ``"identity"``, ``"box-norm"``, ``"box-sublayer"``, ``"box-add"``).
No maths here: positions only.
"""

from __future__ import annotations

from matplotlib.figure import Figure
from matplotlib.patches import Circle, FancyArrowPatch, FancyBboxPatch

from lnworked.style import FONT, PALETTE, new_figure
from lnworked.style import title as _title

__all__ = ["block_diagrams", "identity_path_diagram", "transformer_block_diagrams"]

_BOX_W, _BOX_H = 1.5, 0.7
_ADD_R = 0.32
#: :func:`block_diagrams`' one-block panels: wider boxes, the highway close beside them, and
#: text one point above the house size, so that every label is 12 px tall on a 390 px phone.
_BLOCK_W, _BLOCK_FONT = 1.8, FONT["box"] + 1
_HIGHWAY_X = 1.3


def _diagram_axes(ax, xlim, ylim):
    ax.set_xlim(*xlim)
    ax.set_ylim(*ylim)
    ax.set_aspect("equal")
    ax.axis("off")


def _box(ax, center, label, color, gid, width=_BOX_W, height=_BOX_H, font=FONT["box"]):
    """A rounded, filled box with white text, centred at ``center``; ``gid`` names it for tests."""
    x, y = center
    patch = FancyBboxPatch((x - width / 2, y - height / 2), width, height,
                           boxstyle="round,pad=0.02,rounding_size=0.12", facecolor=color,
                           edgecolor=color, zorder=3, gid=gid)
    ax.add_patch(patch)
    ax.text(x, y, label, ha="center", va="center", color="white", fontsize=font, zorder=4)
    return patch


def _add_node(ax, center, gid="box-add", radius=_ADD_R, font=FONT["box"]):
    patch = Circle(center, radius, facecolor=PALETTE["add"], edgecolor=PALETTE["add"], zorder=3, gid=gid)
    ax.add_patch(patch)
    ax.text(*center, "+", ha="center", va="center", color="white", fontsize=font + 3,
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


def _endpoint(ax, xy, label, va, font=FONT["box"]):
    ax.text(*xy, label, ha="center", va=va, fontsize=font, color=PALETTE["text"])


def _stem(ax, fork):
    """The input line up to the fork, where the residual branches off."""
    ax.plot([0], [fork], "o", color=PALETTE["text"], markersize=6, zorder=4)
    ax.plot([0, 0], [0.2, fork], color=PALETTE["text"], linewidth=1.8, zorder=2)


def _finish(ax, fork, out_y, note, title, color):
    """Input and output labels, the highway's note, the title and the diagram's frame."""
    _endpoint(ax, (0, 0.15), "$x_{in}$", "top", font=_BLOCK_FONT)
    _endpoint(ax, (0, out_y - 0.1), "$x_{out}$", "bottom", font=_BLOCK_FONT)
    ax.text(_HIGHWAY_X + 0.12, fork + 1.0, note, color=PALETTE["highway"], fontsize=_BLOCK_FONT, va="center")
    _title(ax, title, color)
    _diagram_axes(ax, (-1.0, 3.0), (-0.4, 7.1))


def _post_ln_diagram(ax):
    """Post-LN: fork -> F -> add -> LN; the orange highway runs into the add and on into LN."""
    fork, f_y, add_y, ln_y, out_y = 1.0, 2.4, 3.8, 5.2, 6.5
    _stem(ax, fork)
    _arrow(ax, (0, fork), (0, f_y - _BOX_H / 2), PALETTE["text"])
    _box(ax, (0, f_y), "Sublayer F", PALETTE["sublayer"], "box-sublayer", width=_BLOCK_W, font=_BLOCK_FONT)
    _arrow(ax, (0, f_y + _BOX_H / 2), (0, add_y - _ADD_R), PALETTE["text"])
    _add_node(ax, (0, add_y), font=_BLOCK_FONT)
    _box(ax, (0, ln_y), "LayerNorm", PALETTE["norm"], "box-norm", width=_BLOCK_W, font=_BLOCK_FONT)
    _arrow(ax, (0, ln_y + _BOX_H / 2), (0, out_y - 0.15), PALETTE["text"])
    _highway(ax, [(0, fork), (_HIGHWAY_X, fork), (_HIGHWAY_X, add_y), (_ADD_R, add_y),
                  (0, add_y), (0, ln_y - _BOX_H / 2)])
    _finish(ax, fork, out_y, "highway\nenters LN", "Post-LN\n$x_{\\ell+1} = \\mathrm{LN}(x_\\ell + F(x_\\ell))$", PALETTE["post"])


def _pre_ln_diagram(ax):
    """Pre-LN: fork -> LN -> F -> add; the orange highway bypasses every box into the add."""
    fork, ln_y, f_y, add_y, out_y = 1.0, 2.4, 3.8, 5.2, 6.5
    _stem(ax, fork)
    _arrow(ax, (0, fork), (0, ln_y - _BOX_H / 2), PALETTE["text"])
    _box(ax, (0, ln_y), "LayerNorm", PALETTE["norm"], "box-norm", width=_BLOCK_W, font=_BLOCK_FONT)
    _arrow(ax, (0, ln_y + _BOX_H / 2), (0, f_y - _BOX_H / 2), PALETTE["text"])
    _box(ax, (0, f_y), "Sublayer F", PALETTE["sublayer"], "box-sublayer", width=_BLOCK_W, font=_BLOCK_FONT)
    _arrow(ax, (0, f_y + _BOX_H / 2), (0, add_y - _ADD_R), PALETTE["text"])
    _add_node(ax, (0, add_y), font=_BLOCK_FONT)
    _arrow(ax, (0, add_y + _ADD_R), (0, out_y - 0.15), PALETTE["text"])
    _highway(ax, [(0, fork), (_HIGHWAY_X, fork), (_HIGHWAY_X, add_y), (_ADD_R, add_y)])
    _finish(ax, fork, out_y, "highway\nbypasses\nevery box", "Pre-LN\n$x_{\\ell+1} = x_\\ell + F(\\mathrm{LN}(x_\\ell))$",
            PALETTE["pre"])


def block_diagrams(stacked: bool = False) -> Figure:
    """Seed 004's figure s01: Post-LN (left, or top) and Pre-LN (right, or bottom) blocks.

    The orange residual highway enters the navy LayerNorm box in Post-LN and bypasses every
    box in Pre-LN, going straight up into the magenta add. ``stacked=True`` puts the two
    blocks one above the other, in a figure narrow enough to show at full size on a phone.
    """
    if stacked:
        fig, (post, pre) = new_figure(3.1, 10.0, nrows=2)
    else:
        fig, (post, pre) = new_figure(5.0, 4.9, ncols=2)  # narrow: 12 px text on a phone
    _post_ln_diagram(post)
    _pre_ln_diagram(pre)
    return fig


def _stacked_column(ax, layers: int, pre: bool):
    """One column of ``layers`` blocks for :func:`identity_path_diagram`."""
    step, bottom, small = 2.0, 0.6, {"width": 0.8, "height": 0.4}
    top = bottom + layers * step + 0.3
    stream = PALETTE["pre"] if pre else PALETTE["seed"]  # the book's placement colour for Pre-LN
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
    _diagram_axes(ax, (-0.9, 2.1), (bottom - 0.7, top + 0.7))


def identity_path_diagram(layers: int = 4) -> Figure:
    """Seed 002's diagram: ``layers`` stacked blocks, Pre-Norm (left) and Post-Norm (right).

    Pre-Norm: an identity line in Pre-LN's colour (violet, gid ``identity``) runs the full height, untouched; the
    branches tap it, pass N and F, and add back. Post-Norm: the residual is still added,
    but an N box sits on the stream after every add, so every path passes through N.
    """
    fig, (pre, post) = new_figure(4.4, 1.8 + 1.4 * layers, ncols=2)  # narrow: legible on a phone
    _stacked_column(pre, layers, pre=True)
    _title(pre, "Pre-LN: untouched\nidentity highway", PALETTE["pre"])
    _stacked_column(post, layers, pre=False)
    _title(post, "Post-LN: every path\npasses through N", PALETTE["post"])
    return fig


def _block_column(ax, pre: bool, font: int):
    """One transformer block, bottom to top, for :func:`transformer_block_diagrams`.

    Pre-LN: ``x = x + attn(ln_1(x)); x = x + mlp(ln_2(x))``, and after the last block the
    final norm ``ln_f``. Post-LN: ``x = ln_1(x + attn(x)); x = ln_2(x + mlp(x))``, no final norm.
    The orange highway is the residual copy of each sub-block.
    """
    width, height, radius, side = 2.1, 0.72, 0.3, 1.75
    text = PALETTE["text"]
    ax.plot([0, 0], [0.2, 0.8], color=text, linewidth=1.8, zorder=2)
    _endpoint(ax, (0, 0.15), "$x_\\ell$", "top")
    y = 0.8
    for sub, (name, gid_name) in enumerate((("Attention", "box-attention"), ("MLP", "box-mlp"))):
        fork = y
        ax.plot([0], [fork], "o", color=text, markersize=6, zorder=4)
        centres = [fork + 1.0, fork + 2.1] if pre else [fork + 1.0]
        labels = [("LayerNorm", PALETTE["norm"], "box-norm", f"ln_{sub + 1}"), (name, PALETTE["sublayer"], gid_name, None)]
        if not pre:
            labels = labels[1:]
        previous = fork
        for centre, (label, color, gid, note) in zip(centres, labels):
            _arrow(ax, (0, previous if previous == fork else previous + height / 2), (0, centre - height / 2), text)
            _box(ax, (0, centre), label, color, gid, width=width, height=height)
            if note:
                ax.text(-width / 2 - 0.12, centre, note, ha="right", va="center", fontsize=font - 1,
                        color=text, family="monospace")
            previous = centre
        add_y = previous + 1.05
        _arrow(ax, (0, previous + height / 2), (0, add_y - radius), text)
        _add_node(ax, (0, add_y), radius=radius)
        _highway(ax, [(0, fork), (side, fork), (side, add_y), (radius, add_y)])
        y = add_y
        if not pre:
            norm_y = add_y + 1.0
            _arrow(ax, (0, add_y + radius), (0, norm_y - height / 2), text)
            _box(ax, (0, norm_y), "LayerNorm", PALETTE["norm"], "box-norm", width=width, height=height)
            ax.text(-width / 2 - 0.12, norm_y, f"ln_{sub + 1}", ha="right", va="center", fontsize=font - 1,
                    color=text, family="monospace")
            y = norm_y + height / 2
        top = y + 0.75
        if sub == 0:  # a plain line up to the next fork
            ax.plot([0, 0], [y + (0 if not pre else radius), top], color=text, linewidth=1.8, zorder=2)
        else:
            _arrow(ax, (0, y + (0 if not pre else radius)), (0, top), text)
        y = top
    ax.text(0, y + 0.08, "$x_{\\ell+1}$", ha="center", va="bottom", fontsize=font, color=text)
    end = y + 0.75
    if pre:
        ax.text(0, end + 0.35, "after the last block:", ha="center", va="center", fontsize=font - 1, color=text)
        final_y = end + 1.2
        _box(ax, (0, final_y), "LayerNorm", PALETTE["norm"], "box-final-norm", width=width, height=height)
        ax.text(-width / 2 - 0.12, final_y, "ln_f", ha="right", va="center", fontsize=font - 1, color=text,
                family="monospace")
        _arrow(ax, (0, final_y + height / 2), (0, final_y + 1.0), text)
        ax.text(0, final_y + 1.05, "readout", ha="center", va="bottom", fontsize=font, color=text)
    else:
        ax.text(0, end + 0.35, "after the last block:", ha="center", va="center", fontsize=font - 1, color=text)
        _arrow(ax, (0, end + 0.7), (0, end + 1.5), text)
        ax.text(0, end + 1.55, "readout\n(no final norm)", ha="center", va="bottom", fontsize=font, color=text)
    return end + 2.6


def transformer_block_diagrams() -> Figure:
    """One whole transformer block in each placement: Post-LN (left) and Pre-LN (right).

    Each block has two sub-blocks, attention and then the MLP, each with its own norm and its
    own residual add (the orange highway): Post-LN normalises after each add
    (``x = ln_1(x + attn(x))``, ``x = ln_2(x + mlp(x))``, as in the original transformer);
    Pre-LN normalises the copy entering each sublayer (``x = x + attn(ln_1(x))``,
    ``x = x + mlp(ln_2(x))``, as in GPT-2) and adds one final norm ``ln_f`` after the last
    block. Norms carry gid ``box-norm`` (Pre-LN's final one ``box-final-norm``), sublayers
    ``box-attention`` and ``box-mlp``, adds ``box-add``, residual copies ``highway``.
    """
    font = FONT["box"] + 1
    fig, (post, pre) = new_figure(4.4, 7.6, ncols=2)  # narrow: its text about 13 px on a phone
    tops = []
    for ax, is_pre, name, color in ((post, False, "Post-LN\n(original transformer)", PALETTE["post"]),
                                    (pre, True, "Pre-LN\n(GPT-2, LLaMA)", PALETTE["pre"])):
        tops.append(_block_column(ax, is_pre, font))
        _title(ax, name, color)
    for ax in (post, pre):
        _diagram_axes(ax, (-2.05, 2.15), (-0.5, max(tops)))
    return fig
