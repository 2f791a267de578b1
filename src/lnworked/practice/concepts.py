"""Conceptual multiple-choice families: which term is normalized, why the Pre-LN stream
grows, which placement keeps the identity path of the gradient.

The options are shuffled by the variant's generator; the numbers quoted in options come from
:mod:`lnworked.depth`.
"""

from __future__ import annotations

from lnworked.depth import gradient_factor, residual_std
from lnworked.practice.problem import Answer, Problem, letter, number_tex

__all__ = ["make_which_normalized", "make_why_stream_grows", "make_identity_path", "shuffled"]

POST = "x_{\\ell+1} = \\mathrm{N}\\big(x_\\ell + F(x_\\ell)\\big)"
PRE = "x_{\\ell+1} = x_\\ell + F\\big(\\mathrm{N}(x_\\ell)\\big)"


def shuffled(rng, right: str, wrong: list[str]) -> tuple[tuple[str, ...], int]:
    """The options in a random order and the index of the right one."""
    options = [right, *wrong]
    order = rng.permutation(len(options))
    choices = tuple(options[i] for i in order)
    return choices, choices.index(right)


def _choice_problem(family, title, stem, choices, index, why, params) -> Problem:
    solution = f"**{letter(index)}.** {choices[index]}\n\n{why}\n"
    return Problem(family, title, stem, Answer("choice", index, choices=choices), solution, params)


def make_which_normalized(rng) -> Problem:
    """Post-LN normalizes the sum ``x + F(x)``; Pre-LN normalizes only the branch's input copy."""
    placement = str(rng.choice(["post", "pre"]))
    sum_term = "the sum $x_\\ell + F(x_\\ell)$, so the stream itself is rescaled every layer"
    copy_term = "only the copy of $x_\\ell$ that enters the sublayer; the stream $x_\\ell$ is added back unnormalized"
    output_term = "only the sublayer's output $F(\\cdot)$, before it is added"
    nothing = "nothing: a residual connection makes the norm unnecessary"
    right = sum_term if placement == "post" else copy_term
    wrong = [t for t in (sum_term, copy_term, output_term, nothing) if t != right]
    choices, index = shuffled(rng, right, wrong)
    name, update = ("Post-LN", POST) if placement == "post" else ("Pre-LN", PRE)
    stem = f"In the **{name}** update\n\n$${update}$$\n\nwhich term does the norm $\\mathrm{{N}}$ act on?"
    why = (
        "Post-LN adds first and then normalizes, so the norm sits on the residual path itself."
        if placement == "post"
        else "Pre-LN normalizes inside the branch; the highway $x_\\ell$ bypasses the norm."
    )
    return _choice_problem("which_normalized", "Which term is normalized", stem, choices, index, why,
                           {"placement": placement})


def make_why_stream_grows(rng) -> Problem:
    """The Pre-LN stream grows because unnormalized independent additions add variances: std = sqrt(N v)."""
    additions = int(rng.choice([12, 24, 48, 96, 192]))
    a = float(rng.choice([0.1, 0.2, 0.3]))
    std = residual_std(additions, 1.0)
    explode = gradient_factor(1.0 + a, additions)
    right = (
        "each block adds its branch output to a stream that no norm ever rescales; independent "
        f"additions add variances, so after ${additions}$ unit-variance additions the standard "
        f"deviation is $\\sqrt{{{additions}}} \\approx {number_tex(std)}$"
    )
    wrong = [
        "the norm multiplies the stream by $\\gamma/\\sigma > 1$ in every layer",
        f"each block multiplies the stream by $1 + {number_tex(a)}$, so it grows like "
        f"$(1 + {number_tex(a)})^{{{additions}}} \\approx {number_tex(explode)}$",
        "the gradient of the identity path is larger than one, and the forward values follow it",
    ]
    choices, index = shuffled(rng, right, wrong)
    stem = (
        f"A **Pre-LN** stack has ${additions}$ sublayers. Why does its residual stream grow in "
        "magnitude with depth?"
    )
    why = (
        "The norm in Pre-LN only sees a copy of the stream, so nothing rescales the running sum; "
        "the growth is additive ($\\sqrt N$ for the standard deviation), not multiplicative. "
        "A final norm before the output head controls it."
    )
    return _choice_problem("why_stream_grows", "Why the Pre-LN stream grows", stem, choices, index, why,
                           {"additions": additions, "a": a})


def make_identity_path(rng) -> Problem:
    """Only Pre-LN keeps the ``+ I`` of the residual add in the block Jacobian unscaled."""
    a = float(rng.choice([0.1, 0.2, 0.3, 0.4]))
    r = float(rng.choice([0.4, 0.5, 0.6]))
    right = (
        f"Pre-LN: $\\partial x_{{\\ell+1}}/\\partial x_\\ell = I + J_F J_N$, so with $dF/dx = {number_tex(a)}$ "
        f"a scalar block passes $1 + {number_tex(a)} = {number_tex(1 + a)}$"
    )
    wrong = [
        f"Post-LN: the norm after the add keeps the identity, so a block passes "
        f"${number_tex(r)} + {number_tex(a)} = {number_tex(r + a)}$",
        "both: a residual connection always adds the identity to the Jacobian, wherever the norm sits",
        "neither: the norm's Jacobian multiplies every path in both placements",
    ]
    choices, index = shuffled(rng, right, wrong)
    stem = (
        "Which placement keeps the identity term (the “$+1$” of the residual add) of the block "
        f"Jacobian unscaled? Take a scalar toy with $dF/dx = {number_tex(a)}$ and a norm factor "
        f"$\\gamma/\\sigma = {number_tex(r)}$."
    )
    why = (
        f"In Post-LN the norm wraps the sum, so its factor multiplies the identity too: "
        f"${number_tex(r)}(1 + {number_tex(a)}) = {number_tex(r * (1 + a))}$ per block."
    )
    return _choice_problem("identity_path", "Which placement keeps the identity path", stem, choices, index,
                           why, {"a": a, "norm_factor": r})
