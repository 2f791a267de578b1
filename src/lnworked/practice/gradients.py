"""Backward and depth families: the Post-LN backward factor for a large sublayer output,
gradient factors over depth (Pre-LN and Post-LN), the depth at which a gradient falls
below a threshold, and the growth of the Pre-LN residual stream.

Answers come from :mod:`lnworked.norms` (Jacobians) and :mod:`lnworked.depth`. The depth
families live in the *scalar toy* (every Jacobian a number, the same factor in every block);
their stems say so, and their solutions say what fails outside the toy. Notation as in
``book/notation.md``: depth :math:`L`, layer index :math:`\\ell`, per-layer factor :math:`f`,
:math:`F'` the slope of a scalar sublayer, :math:`\\varepsilon`.
"""

from __future__ import annotations

import numpy as np

from lnworked.depth import depth_below, gradient_factor, residual_std, residual_variance
from lnworked.norms import layer_norm_jacobian
from lnworked.practice.forward import stats_steps, tex_vec
from lnworked.practice.problem import Answer, Problem, number_tex

__all__ = [
    "make_post_ln_backward_scale",
    "make_pre_ln_gradient_depth",
    "make_post_ln_gradient_depth",
    "make_depth_below_threshold",
    "make_residual_growth",
    "backward_scale",
]

#: Gradient factors over depth span many decades, so only a relative test is meaningful;
#: the floor sits far below the smallest answer these families can draw (about 1e-15).
TINY_FLOOR = 1e-30


def backward_scale(z, gamma: float, eps: float) -> float:
    """Largest factor by which LN's Jacobian at ``z`` scales a gradient: its spectral norm.

    ``J = gamma (I - 1 1^T/d - z_hat z_hat^T/d) / s`` with ``s = sqrt(var + eps)`` and
    ``z_hat = (z - mu) / s``. The bracket has eigenvalue 0 along ``1``, ``eps / (var + eps)``
    along ``z_hat`` and 1 on the other ``d - 2`` directions, so for ``d >= 3`` the spectral
    norm equals ``|gamma| / sqrt(var + eps)``.
    """
    return float(np.linalg.norm(layer_norm_jacobian(np.asarray(z, float), gamma, eps=eps), 2))


def make_post_ln_backward_scale(rng) -> Problem:
    """Post-LN with a large sublayer output: the norm's backward factor ``gamma / sqrt(var + eps)``."""
    size = float(rng.choice([20.0, 50.0, 100.0, 200.0, 500.0, 1000.0]))
    signs = rng.permutation([1.0, 1.0, -1.0, -1.0])
    f = size * signs
    x = [int(v) for v in rng.integers(-2, 3, size=4)]
    gamma = float(rng.choice([0.5, 1.0, 2.0]))
    eps = 1e-5
    z = np.add(x, f)
    factor = backward_scale(z, gamma, eps)
    statement = (
        f"Suppose a sublayer's output is large: $F(x) = {tex_vec(f)}$ for the stream "
        f"$x = {tex_vec(x)}$. The block is **Post-LN**, $\\mathrm{{LN}}(x + F(x))$, with "
        f"$\\gamma = {number_tex(gamma)}$, $\\beta = 0$, $\\varepsilon = 10^{{-5}}$. The Jacobian "
        "of LN is $\\gamma/\\sqrt{\\sigma^2+\\varepsilon}$ times a matrix whose eigenvalues are "
        "0, $\\varepsilon/(\\sigma^2+\\varepsilon)$ and 1. By what factor (at most) does the norm "
        "scale a gradient passing backward through it?"
    )
    solution = (
        f"- $z = x + F(x) = {tex_vec(z)}$.\n"
        + stats_steps(z, eps, "z")
        + "- The Jacobian is $\\frac{\\gamma}{\\sqrt{\\sigma^2+\\varepsilon}}(I - "
        "\\tfrac{1}{d}\\mathbf{1}\\mathbf{1}^\\top - \\tfrac{1}{d}\\hat z \\hat z^\\top)$; the bracket "
        "has eigenvalue 0 along $\\mathbf{1}$, $\\varepsilon/(\\sigma^2+\\varepsilon) \\approx 0$ "
        "along $\\hat z$ and 1 on the other $d - 2$ directions.\n"
        f"- Backward factor $\\gamma/\\sqrt{{\\sigma^2+\\varepsilon}} = {number_tex(factor)}$ "
        "(the spectral norm of the library's Jacobian): the larger the spread of $z$, the more "
        "the norm shrinks the gradient.\n"
        "- This is the norm's factor alone; the whole block's Jacobian is $J_N(I + J_F)$. An "
        "output this large is the source text's premise, not what a standard initialisation "
        "gives, and this factor is not the reason the literature gives for Post-LN's warmup "
        "(see the book's errata page).\n"
    )
    return Problem(
        "post_ln_backward_scale", "Post-LN backward factor for a large sublayer output", statement,
        Answer("number", factor), solution, {"x": x, "F(x)": f.tolist(), "gamma": gamma, "eps": eps},
    )


def make_pre_ln_gradient_depth(rng) -> Problem:
    """Pre-LN scalar toy with slope ``F' >= 0``: per-layer factor ``f = 1 + F'``, over ``L``
    layers ``f^L``; the solution contrasts ``(1 - F')^L`` for the negative slope."""
    slope = float(rng.choice(np.round(np.arange(0.05, 0.55, 0.05), 2)))
    layers = int(rng.integers(2, 25))
    per_layer = 1.0 + slope
    total = gradient_factor(per_layer, layers)
    negative = gradient_factor(1.0 - slope, layers)
    statement = (
        "In the **scalar toy** (every Jacobian is a number) a **Pre-LN** block is "
        "$x_{\\ell+1} = x_\\ell + F(N(x_\\ell))$. Take the whole branch $x \\mapsto F(N(x))$ to "
        f"have the same slope $F' = {number_tex(slope)} \\ge 0$ in every block (the toy's "
        "assumptions). What factor multiplies the gradient between the output and the input "
        f"of $L = {layers}$ such blocks?"
    )
    solution = (
        f"- One block: $f = \\dfrac{{dx_{{\\ell+1}}}}{{dx_\\ell}} = 1 + F' = 1 + {number_tex(slope)} "
        f"= {number_tex(per_layer)}$; the $1$ is the identity path.\n"
        f"- $L = {layers}$ blocks multiply: $f^L = {number_tex(per_layer)}^{{{layers}}} = "
        f"{number_tex(total)}$.\n"
        "- The factor is at least 1 here only because $F' \\ge 0$. With slope "
        f"$-{number_tex(slope)}$ the same toy gives ${number_tex(1.0 - slope)}^{{{layers}}} = "
        f"{number_tex(negative)}$, and for vectors the block Jacobian $I + J_F J_N$ is a matrix "
        "whose smallest singular value can be below 1: the identity term survives, but it does "
        "not make the gradient at least as large as it was.\n"
    )
    return Problem(
        "pre_ln_gradient_depth", "Pre-LN gradient factor over depth (scalar toy)", statement,
        Answer("number", total), solution, {"slope": slope, "layers": layers},
    )


_OUTSIDE_THE_TOY = (
    "- Outside the toy the factor is neither steady nor necessarily below 1: a LayerNorm "
    "divides the gradient by its input's spread, which shrinks it only when $\\sigma > \\gamma$, "
    "and $I + J_F$ multiplies back; the book's random matrix stack (chapter 3) does not follow "
    "$f^L$.\n"
)


def make_post_ln_gradient_depth(rng) -> Problem:
    """Post-LN scalar toy: the same per-layer factor ``f`` in every block (given, or
    ``f = (gamma / sigma) (1 + F')``); over ``L`` layers ``f^L``."""
    layers = int(rng.integers(6, 49))
    if rng.random() < 1 / 3:
        per_layer = float(rng.choice(np.round(np.arange(0.5, 0.96, 0.05), 2)))
        total = gradient_factor(per_layer, layers)
        statement = (
            "In the **scalar toy**, suppose every layer of a **Post-LN** stack multiplies the "
            f"backward gradient by the same factor $f = {number_tex(per_layer)}$ (a steady factor "
            "is the toy's assumption). What is the gradient scale reaching the input of "
            f"$L = {layers}$ layers, for a gradient of $1$ at the output?"
        )
        solution = (
            f"- The factors multiply: $f^L = {number_tex(per_layer)}^{{{layers}}} = "
            f"{number_tex(total)}$.\n" + _OUTSIDE_THE_TOY
        )
        params = {"per_layer": per_layer, "layers": layers}
    else:
        while True:
            r = float(rng.choice(np.round(np.arange(0.4, 0.95, 0.05), 2)))
            slope = float(rng.choice(np.round(np.arange(0.0, 0.55, 0.1), 2)))
            per_layer = r * (1.0 + slope)
            if 0.5 <= per_layer <= 0.95:
                break
        total = gradient_factor(per_layer, layers)
        statement = (
            "In the **scalar toy** (every Jacobian is a number) each **Post-LN** block is "
            "$x_{\\ell+1} = N(x_\\ell + F(x_\\ell))$. Suppose every block has the same sublayer "
            f"slope $F' = {number_tex(slope)}$ and a norm that multiplies what passes through it "
            f"by the same $\\gamma/\\sigma = {number_tex(r)}$ (the toy's assumptions). What factor "
            f"multiplies the gradient between the output and the input of $L = {layers}$ blocks?"
        )
        solution = (
            "- One block: the norm wraps the whole sum, so its factor multiplies the identity "
            f"path too: $f = {number_tex(r)} \\times (1 + {number_tex(slope)}) = "
            f"{number_tex(per_layer)}$.\n"
            f"- $L = {layers}$ blocks: $f^L = {number_tex(per_layer)}^{{{layers}}} = "
            f"{number_tex(total)}$; in this toy it vanishes with depth because the same factor "
            "below 1 repeats in every block.\n" + _OUTSIDE_THE_TOY
        )
        params = {"norm_factor": r, "slope": slope, "layers": layers}
    return Problem(
        "post_ln_gradient_depth", "Post-LN gradient factor over depth (scalar toy)", statement,
        Answer("number", total, abs=TINY_FLOOR), solution, params,
    )


def make_depth_below_threshold(rng) -> Problem:
    """Scalar toy with a steady factor ``f``: smallest ``L`` with ``f^L < t``,
    ``floor(log t / log f) + 1``."""
    f = float(rng.choice(np.round(np.arange(0.5, 0.96, 0.05), 2)))
    exponent = int(rng.choice([1, 2, 3, 4, 6]))
    t = 10.0 ** (-exponent)
    depth = depth_below(f, t)
    previous = number_tex(gradient_factor(f, depth - 1)) if depth > 1 else "1"
    statement = (
        "In the **scalar toy**, suppose every **Post-LN** layer multiplies the backward gradient "
        f"by the same factor $f = {number_tex(f)}$. What is the smallest number of layers $L$ for "
        f"which the gradient reaching the input is below $10^{{-{exponent}}}$ of its value at the "
        "output? (An integer.)"
    )
    solution = (
        f"- We need ${number_tex(f)}^L < 10^{{-{exponent}}}$, i.e. "
        f"$L > \\dfrac{{\\ln 10^{{-{exponent}}}}}{{\\ln {number_tex(f)}}} = "
        f"{number_tex(np.log(t) / np.log(f))}$.\n"
        f"- The smallest such integer is $L = {depth}$: "
        f"${number_tex(f)}^{{{depth - 1}}} = {previous}$ is not below the threshold, "
        f"${number_tex(f)}^{{{depth}}} = {number_tex(gradient_factor(f, depth))}$ is.\n"
        "- This depth belongs to the toy's steady factor; a real stack's factor varies from "
        "layer to layer (chapter 3 measures one).\n"
    )
    return Problem(
        "depth_below_threshold", "Depth at which the toy's gradient falls below a threshold", statement,
        Answer("number", float(depth), rel=0.0, abs=1e-9), solution, {"per_layer": f, "threshold": t},
    )


def make_residual_growth(rng) -> Problem:
    """Pre-LN stream after ``L`` independent writes of variance ``v``: std ``sqrt(Var(x_0) + L v)``."""
    additions = int(rng.integers(2, 201))
    v = float(rng.choice([0.25, 0.5, 1.0, 2.0, 4.0]))
    v0 = float(rng.choice([0.0, 0.0, 1.0]))
    var = residual_variance(additions, v, v0)
    std = residual_std(additions, v, v0)
    start = "starts at zero" if v0 == 0 else f"starts with variance ${number_tex(v0)}$"
    statement = (
        f"In a **Pre-LN** stack the residual stream {start}, and each of $L = {additions}$ "
        f"sublayers adds a write of variance $v = {number_tex(v)}$, independent of the stream and "
        "of the other writes (as at initialisation). What is the standard deviation of the "
        "stream at the top?"
    )
    solution = (
        "- The stream is never normalised, and variances of independent terms add: "
        "$\\mathrm{Var}(x_L) = \\mathrm{Var}(x_0) + L v$.\n"
        f"- $\\mathrm{{Var}}(x_L) = {number_tex(v0)} + {additions} \\times {number_tex(v)} = "
        f"{number_tex(var)}$.\n"
        f"- Standard deviation $\\sqrt{{{number_tex(var)}}} = {number_tex(std)}$: growth like "
        "$\\sqrt L$ under these assumptions, unbounded but not exponential. During training the "
        "writes correlate and change size, and the stream can grow much faster.\n"
    )
    return Problem(
        "residual_growth", "Growth of the Pre-LN residual stream", statement,
        Answer("number", std), solution,
        {"additions": additions, "branch_variance": v, "initial_variance": v0},
    )
