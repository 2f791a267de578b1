"""Chapter 7's chain diagram: legible on a phone, shows every value it is given, types none itself."""

from __future__ import annotations

import re

import pytest
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

from lnworked import style
from lnworked.stress.chain_diagram import CHAIN_KEYS, chain_diagram

#: The image width measured in Chromium on a 390 px phone (device emulation): the figure box is
#: 358 px and its 8 px padding on each side leaves the image 342 px.
SCREEN_PX = 342


def tokens():
    """One distinctive value per key (letters only, so any digit drawn would be the diagram's own)."""
    return {key: f"v{chr(ord('A') + i)}q" for i, key in enumerate(CHAIN_KEYS)}


def texts(fig):
    return [t for ax in fig.axes for t in ax.texts if t.get_visible() and t.get_text().strip()]


def png_width(fig):
    return int.from_bytes(fig._repr_png_()[16:20], "big")  # the PNG header's IHDR width


def test_every_text_is_at_least_13_px_on_a_phone():
    fig = chain_diagram(tokens())
    width = png_width(fig)
    sizes = {t.get_text(): style.phone_font_px(t.get_fontsize(), width, screen_px=SCREEN_PX) for t in texts(fig)}
    assert sizes
    small = {text: round(px, 1) for text, px in sizes.items() if px < 13}
    assert not small, f"texts under 13 px at {SCREEN_PX} px: {small}"


def test_the_layout_is_tall_and_narrow():
    fig = chain_diagram(tokens())
    width, height = fig.get_size_inches()
    assert height > 1.5 * width
    assert width <= style.PHONE_WIDTH


def test_every_value_passed_appears_once():
    values = tokens()
    drawn = " | ".join(t.get_text() for t in texts(chain_diagram(values)))
    for key, value in values.items():
        assert drawn.count(value) == 1, f"{key} ({value}) drawn {drawn.count(value)} times"


def test_the_diagram_types_no_number_of_its_own():
    drawn = [t.get_text() for t in texts(chain_diagram(tokens()))]
    assert not [text for text in drawn if re.search(r"\d", text)]


def test_pre_and_post_values_are_in_their_placements_colours():
    values = tokens()
    fig = chain_diagram(values)
    colour = {t.get_text(): t.get_color() for t in texts(fig)}
    for key in ("rho", "move", "delivered"):
        pre = next(text for text in colour if values[f"{key}_pre"] in text)
        post = next(text for text in colour if values[f"{key}_post"] in text)
        assert pre.startswith("Pre-LN") and colour[pre] == style.PALETTE["pre"]
        assert post.startswith("Post-LN") and colour[post] == style.PALETTE["post"]


def test_three_links_two_arrows_between_them_and_two_side_arrows():
    fig = chain_diagram(tokens())
    ax = fig.axes[0]
    boxes = [p for p in ax.patches if isinstance(p, FancyBboxPatch)]
    arrows = [p for p in ax.patches if isinstance(p, FancyArrowPatch)]
    assert len(boxes) == 5  # three links, two fixes
    assert len(arrows) == 4
    chain = sorted((b for b in boxes if b.get_x() < 1), key=lambda b: -b.get_y())
    assert len(chain) == 3
    side = [a for a in arrows if a._posA_posB[0][1] == a._posA_posB[1][1]]  # horizontal arrows
    assert len(side) == 2
    # each side arrow ends on a chain box: DeepNorm's on the first link, warmup's on the last
    ends = sorted((a._posA_posB[1][1] for a in side), reverse=True)
    for y, box in zip(ends, (chain[0], chain[-1])):
        assert box.get_y() < y < box.get_y() + box.get_height()


@pytest.mark.parametrize("key", list(CHAIN_KEYS))
def test_a_missing_key_is_named(key):
    values = tokens()
    del values[key]
    with pytest.raises(ValueError, match=re.escape(repr(key))):
        chain_diagram(values)


def test_a_value_that_is_not_a_formatted_string_is_refused():
    values = tokens()
    values["delivered_post"] = 13.0
    with pytest.raises(ValueError, match="delivered_post"):
        chain_diagram(values)
    with pytest.raises(ValueError, match="numbers"):
        chain_diagram(["rho_pre"])


def test_deepnorm_box_left_open_reads_as_words():
    values = dict(tokens(), kappa_fold=None, kappa_delivered=None)
    fig = chain_diagram(values)
    drawn = " ".join(t.get_text() for t in texts(fig))
    assert "?" not in drawn and "None" not in drawn
    assert "measured" in drawn and "DeepNorm" in drawn
    assert "§" not in drawn  # plain words, no cross-reference sign squeezed into the box
    assert values["warmup_delivered"] in drawn  # the other box keeps its value
    width = png_width(fig)
    assert min(style.phone_font_px(t.get_fontsize(), width, screen_px=SCREEN_PX) for t in texts(fig)) >= 12


def test_deepnorm_values_open_only_together():
    with pytest.raises(ValueError, match="kappa_delivered"):
        chain_diagram(dict(tokens(), kappa_fold=None))
