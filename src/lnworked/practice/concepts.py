"""Conceptual multiple-choice families: which term is normalised, why the Pre-LN stream
grows, which placement keeps the identity term of the block Jacobian.

Every right answer is true as stated, or the stem states the assumptions under which it is
(the scalar toy; independent writes of fixed variance at initialisation). The options are
shuffled by the variant's generator; the numbers quoted in options and solutions come from
:mod:`lnworked.depth`.

Notation as in ``book/notation.md``: depth :math:`L`, layer index :math:`\\ell`, the norm
:math:`N(\\cdot)`, the per-layer gradient factor of the scalar toy :math:`f`; :math:`F'` is
the derivative of a scalar sublayer.
"""

from __future__ import annotations

from lnworked.depth import gradient_factor, residual_std
from lnworked.practice.problem import Answer, Problem, letter, number_tex

__all__ = ["make_which_normalized", "make_why_stream_grows", "make_identity_path", "shuffled",
           "scalar_block_factors"]

POST = "x_{\\ell+1} = N\\big(x_\\ell + F(x_\\ell)\\big)"
PRE = "x_{\\ell+1} = x_\\ell + F\\big(N(x_\\ell)\\big)"


def shuffled(rng, right: str, wrong: list[str]) -> tuple[tuple[str, ...], int]:
    """The options in a random order and the index of the right one."""
    options = [right, *wrong]
    order = rng.permutation(len(options))
    choices = tuple(options[i] for i in order)
    return choices, choices.index(right)


def scalar_block_factors(slope: float, norm_factor: float) -> tuple[float, float]:
    """The scalar toy's block derivatives ``(pre, post)`` for a sublayer slope ``F' = slope``
    and a norm that multiplies what passes through it by ``norm_factor`` (the toy's :math:`\\gamma/\\sigma`):

    * Pre-LN ``x + F(N(x))``: ``1 + F' norm_factor`` (the norm sits inside the branch);
    * Post-LN ``N(x + F(x))``: ``norm_factor (1 + F')`` (the norm multiplies the identity too).
    """
    return 1.0 + slope * norm_factor, norm_factor * (1.0 + slope)


def _choice_problem(family, title, stem, choices, index, why, params) -> Problem:
    solution = f"**{letter(index)}.** {choices[index]}\n\n{why}\n"
    return Problem(family, title, stem, Answer("choice", index, choices=choices), solution, params)


def make_which_normalized(rng) -> Problem:
    """Post-LN normalises the sum ``x + F(x)``; Pre-LN normalises only the branch's input copy."""
    placement = str(rng.choice(["post", "pre"]))
    # four options of one form and about one length, so the right one does not stand out
    sum_term = ("the sum $x_\\ell + F(x_\\ell)$ after the add, so the stream itself is rescaled "
                "in every layer")
    copy_term = ("only the copy of $x_\\ell$ that enters the sublayer; the stream $x_\\ell$ is "
                 "added back unnormalised")
    output_term = ("only the sublayer's output $F(\\cdot)$ before the add; the stream $x_\\ell$ is "
                   "added back unnormalised")
    nothing = ("nothing: the residual connection already keeps the stream's scale, so $N$ leaves "
               "its input as it is")
    right = sum_term if placement == "post" else copy_term
    wrong = [t for t in (sum_term, copy_term, output_term, nothing) if t != right]
    choices, index = shuffled(rng, right, wrong)
    name, update = ("Post-LN", POST) if placement == "post" else ("Pre-LN", PRE)
    stem = f"In the **{name}** update\n\n$${update}$$\n\nwhich term does the norm $N$ act on?"
    why = (
        "Post-LN adds first and then normalises, so the norm sits on the residual path itself."
        if placement == "post"
        else "Pre-LN normalises inside the branch; the highway $x_\\ell$ bypasses the norm."
    )
    why += (" (Normalising only the sublayer's output, $x_\\ell + N(F(x_\\ell))$, is a third "
            "placement, used by OLMo 2; it is not the update shown here. And the norm is not idle: "
            "it rescales whatever it is applied to, whatever the residual connection does.)")
    return _choice_problem("which_normalized", "Which term is normalised", stem, choices, index, why,
                           {"placement": placement})


def make_why_stream_grows(rng) -> Problem:
    """The Pre-LN stream grows because no norm rescales the running sum; under independent writes
    of fixed variance ``v = 1`` (as at initialisation) its standard deviation is ``sqrt(L)``."""
    additions = int(rng.choice([12, 24, 48, 96, 192]))
    factor = float(rng.choice([1.1, 1.2, 1.3]))
    std = residual_std(additions, 1.0)
    explode = gradient_factor(factor, additions)
    # one line each, each a reason and a number, so the right one does not stand out by its form
    right = (
        "no norm ever rescales the running sum, so the independent writes' variances add: "
        f"$\\sqrt{{{additions}}} \\approx {number_tex(std)}$"
    )
    wrong = [
        "the norm multiplies the stream by $\\gamma/\\sigma > 1$ in every layer, so the factors "
        f"compound: $(\\gamma/\\sigma)^{{{additions}}}$",
        f"each block multiplies the stream by ${number_tex(factor)}$ (the identity plus the write): "
        f"${number_tex(factor)}^{{{additions}}} \\approx {number_tex(explode)}$",
        "nothing rescales the stream, so the writes' standard deviations add, one per block: "
        f"$L \\cdot 1 = {additions}$",
    ]
    choices, index = shuffled(rng, right, wrong)
    stem = (
        f"A **Pre-LN** stack, $x_{{\\ell+1}} = x_\\ell + F_\\ell\\big(N(x_\\ell)\\big)$, has "
        f"$L = {additions}$ blocks and starts from $x_0 = 0$. Assume, as at initialisation, that "
        "the writes $F_\\ell(N(x_\\ell))$ are independent of each other, each with mean 0 and "
        "variance 1 per feature. Why does the residual stream grow in magnitude with depth, "
        "and how large is its standard deviation at the top?"
    )
    why = (
        "In Pre-LN the norm only sees a copy of the stream, so nothing rescales the running sum "
        "$x_L = x_0 + \\sum_\\ell F_\\ell(N(x_\\ell))$: that is why it grows, under any assumptions. "
        "How fast depends on the writes. Since $N$ removes the stream's scale before each sublayer, "
        "a write does not grow in proportion to the stream, so the growth is additive, not a "
        "product. With independent writes of fixed variance the variances add and the standard "
        "deviation grows like $\\sqrt L$ (unbounded, but slowly); standard deviations would add, "
        "to $L$, only if every write were the same vector. During training the writes "
        "correlate and change size, and measured growth can be much faster than $\\sqrt L$. A "
        "final norm rescales what the output head sees; it does not stop the growth inside the "
        "stack, where each later write becomes small against the stream."
    )
    return _choice_problem("why_stream_grows", "Why the Pre-LN stream grows", stem, choices, index, why,
                           {"additions": additions, "factor": factor})


def make_identity_path(rng) -> Problem:
    """Only Pre-LN keeps the ``I`` of the residual add as a bare term of the block Jacobian
    ``I + J_F J_N``; Post-LN's ``J_N (I + J_F)`` scales it. The scalar toy's numbers come from
    :func:`scalar_block_factors`."""
    slope = float(rng.choice([0.1, 0.2, 0.3, 0.4]))
    r = float(rng.choice([0.4, 0.5, 0.6]))
    pre, post = scalar_block_factors(slope, r)
    right = (
        "Pre-LN: $\\partial x_{\\ell+1}/\\partial x_\\ell = I + J_F J_N$; in the toy a block "
        f"passes $1 + {number_tex(slope)} \\times {number_tex(r)} = {number_tex(pre)}$"
    )
    wrong = [
        f"Post-LN: the norm after the add keeps the identity, so a block passes "
        f"${number_tex(r)} + {number_tex(slope)} = {number_tex(r + slope)}$",
        "both: a residual add puts $I$ into $\\partial x_{\\ell+1}/\\partial x_\\ell$ wherever the norm "
        f"sits, so a block passes $1 + {number_tex(slope)} = {number_tex(1 + slope)}$",
        "neither: the norm's Jacobian multiplies every path in both placements, so a block passes "
        f"${number_tex(r)} \\times {number_tex(1 + slope)} = {number_tex(post)}$",
    ]
    choices, index = shuffled(rng, right, wrong)
    stem = (
        "Which placement keeps the identity term (the “$+1$” of the residual add) of the block "
        "Jacobian $\\partial x_{\\ell+1}/\\partial x_\\ell$ as a bare, unscaled term? For the "
        "numbers take the scalar toy (every Jacobian a number): the sublayer has slope "
        f"$F' = {number_tex(slope)}$ and the norm multiplies what passes through it by "
        f"$\\gamma/\\sigma = {number_tex(r)}$."
    )
    why = (
        f"In Pre-LN the norm sits inside the branch, so only the branch is scaled: "
        f"$1 + F'\\,\\gamma/\\sigma = {number_tex(pre)}$. In Post-LN the norm wraps the sum, so its "
        f"factor multiplies the identity too: $\\gamma/\\sigma\\,(1 + F') = "
        f"{number_tex(r)}(1 + {number_tex(slope)}) = {number_tex(post)}$ per block.\n\n"
        "What the bare identity does not guarantee: that a block passes a factor of at least 1. "
        "In the toy a negative slope gives $1 + F'\\gamma/\\sigma < 1$, and for vectors "
        "$I + J_F J_N$ is a matrix whose smallest singular value can be below 1 (the branch can "
        "point against the identity)."
    )
    return _choice_problem("identity_path", "Which placement keeps the identity term", stem, choices,
                           index, why, {"slope": slope, "norm_factor": r})
