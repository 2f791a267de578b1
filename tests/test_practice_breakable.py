"""Long inline equations of the practice page are cut into breakable formulas, and nothing
else changes: the pieces put back together are the original TeX."""

import re

import pytest

from lnworked.practice import FAMILIES, variant
from lnworked.practice.markup import breakable_equations, split_maths, tex_to_mathml


def _joined(markdown: str) -> str:
    """The maths of a Markdown text as one string, spaces and the ``\\ `` between a vector's
    entries removed: what a reader sees, up to spacing."""
    maths = "".join(part for kind, part in split_maths(markdown) if kind != "text")
    return re.sub(r"\\ |\s", "", maths)


def _texts(markdown: str) -> str:
    return "".join(part for kind, part in split_maths(markdown) if kind == "text").replace(" ", "")


def test_a_chain_ending_in_a_vector_is_cut_before_each_equals_and_after_each_entry():
    text = r"Normalised: $\hat{z} = (z - \mu)/\sqrt{\sigma^2+\varepsilon} = (0.4126,\ -1.6503)$."
    assert breakable_equations(text) == (
        r"Normalised: $\hat{z}$ $= (z - \mu)/\sqrt{\sigma^2+\varepsilon}$ $= (0.4126,$ $-1.6503)$.")


def test_braces_left_right_environments_display_maths_and_short_formulas_are_not_cut():
    kept = [r"$\mu = 1.25$", r"$\frac{a = b}{c,\ d} + \sqrt{x = y,\ z} + 1$",
            r"$\left(a = b,\ c\right) + \left(d = e,\ f\right)$",
            r"$\begin{aligned} a &= b \\ c &= d,\ e \end{aligned}$", r"$$a = b = (1,\ 2,\ 3)$$"]
    for text in kept:
        assert breakable_equations(text) == text


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_every_practice_text_keeps_its_maths_and_words(name):
    for seed in (2024, 7):
        problem = variant(seed, "book", name)
        for text in (problem.statement, problem.solution):
            broken = breakable_equations(text)
            assert _joined(broken) == _joined(text)
            assert _texts(broken) == _texts(text)
            for kind, part in split_maths(broken):
                if kind == "inline":
                    assert part.count("{") == part.count("}"), part
                    assert part.count(r"\left") == part.count(r"\right"), part
                    tex_to_mathml(part)  # each piece is TeX on its own
