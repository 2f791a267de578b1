"""Backward and depth families: the Post-LN backward factor for a large sublayer output,
gradient factors over depth (Pre-LN and Post-LN), the depth at which a gradient falls
below a threshold, and the growth of the Pre-LN residual stream.

Answers come from :mod:`lnworked.norms` (Jacobians) and :mod:`lnworked.depth`.
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

    ``J = gamma (I - 1 1^T/d - x_hat x_hat^T/d) / s`` is ``gamma / s`` times an orthogonal
    projector, so the spectral norm equals ``|gamma| / sqrt(var + eps)``.
    """
    return float(np.linalg.norm(layer_norm_jacobian(np.asarray(z, float), gamma, eps=eps), 2))


def make_post_ln_backward_scale(rng) -> Problem:
    """Post-LN at init with a large sublayer output: backward factor ``gamma / sqrt(var + eps)``."""
    size = float(rng.choice([20.0, 50.0, 100.0, 200.0, 500.0, 1000.0]))
    signs = rng.permutation([1.0, 1.0, -1.0, -1.0])
    f = size * signs
    x = [int(v) for v in rng.integers(-2, 3, size=4)]
    gamma = float(rng.choice([0.5, 1.0, 2.0]))
    eps = 1e-5
    z = np.add(x, f)
    factor = backward_scale(z, gamma, eps)
    statement = (
        f"At initialization a sublayer's output is large: $F(x) = {tex_vec(f)}$ for the stream "
        f"$x = {tex_vec(x)}$. The block is **Post-LN**, $\\mathrm{{LN}}(x + F(x))$, with "
        f"$\\gamma = {number_tex(gamma)}$, $\\beta = 0$, $\\epsilon = 10^{{-5}}$. The Jacobian of LN "
        "is $\\gamma/\\sqrt{\\sigma^2+\\epsilon}$ times a projection. By what factor (at most) does "
        "the norm scale a gradient passing backward through it?"
    )
    solution = (
        f"- $z = x + F(x) = {tex_vec(z)}$.\n"
        + stats_steps(z, eps, "z")
        + "- The Jacobian is $\\frac{\\gamma}{\\sqrt{\\sigma^2+\\epsilon}}(I - \\tfrac{1}{d}\\mathbf{1}\\mathbf{1}^\\top "
        "- \\tfrac{1}{d}\\hat z \\hat z^\\top)$, and the bracket is a projection (eigenvalues 0 and 1).\n"
        f"- Backward factor $\\gamma/\\sqrt{{\\sigma^2+\\epsilon}} = {number_tex(factor)}$ "
        "(the spectral norm of the library's Jacobian): the larger $F$, the smaller the gradient.\n"
    )
    return Problem(
        "post_ln_backward_scale", "Post-LN backward factor for a large sublayer output", statement,
        Answer("number", factor), solution, {"x": x, "F(x)": f.tolist(), "gamma": gamma, "eps": eps},
    )


def make_pre_ln_gradient_depth(rng) -> Problem:
    """Pre-LN scalar toy: per-layer derivative ``1 + a``, over ``L`` layers ``(1 + a)^L``."""
    a = float(rng.choice(np.round(np.arange(0.05, 0.55, 0.05), 2)))
    layers = int(rng.integers(2, 25))
    per_layer = 1.0 + a
    total = gradient_factor(per_layer, layers)
    statement = (
        f"In a scalar toy **Pre-LN** stack each block is $x_{{\\ell+1}} = x_\\ell + F(x_\\ell)$ with "
        f"$dF/dx_\\ell = {number_tex(a)}$ (the norm's factor is inside $F$). What factor multiplies "
        f"the gradient between the output and the input of ${layers}$ such blocks?"
    )
    solution = (
        f"- One block: $\\dfrac{{dx_{{\\ell+1}}}}{{dx_\\ell}} = 1 + {number_tex(a)} = {number_tex(per_layer)}$; "
        "the $1$ is the identity path and cannot be multiplied away.\n"
        f"- ${layers}$ blocks multiply: ${number_tex(per_layer)}^{{{layers}}} = {number_tex(total)}$.\n"
    )
    return Problem(
        "pre_ln_gradient_depth", "Pre-LN gradient factor over depth", statement,
        Answer("number", total), solution, {"a": a, "layers": layers},
    )


def make_post_ln_gradient_depth(rng) -> Problem:
    """Post-LN: per-layer factor ``r (1 + a)`` with ``r = gamma / sigma``; over ``L`` layers ``(r (1 + a))^L``."""
    layers = int(rng.integers(6, 49))
    if rng.random() < 1 / 3:
        per_layer = float(rng.choice(np.round(np.arange(0.5, 0.96, 0.05), 2)))
        total = gradient_factor(per_layer, layers)
        statement = (
            f"Each layer of a **Post-LN** stack shrinks the backward gradient by a factor "
            f"${number_tex(per_layer)}$. What is the gradient scale reaching the input of a "
            f"${layers}$-layer stack, for a gradient of $1$ at the output?"
        )
        solution = (
            f"- The factors multiply: ${number_tex(per_layer)}^{{{layers}}} = {number_tex(total)}$.\n"
        )
        params = {"per_layer": per_layer, "layers": layers}
    else:
        while True:
            r = float(rng.choice(np.round(np.arange(0.4, 0.95, 0.05), 2)))
            a = float(rng.choice(np.round(np.arange(0.0, 0.55, 0.1), 2)))
            per_layer = r * (1.0 + a)
            if 0.5 <= per_layer <= 0.95:
                break
        total = gradient_factor(per_layer, layers)
        statement = (
            f"In a scalar toy **Post-LN** stack each block is $x_{{\\ell+1}} = \\mathrm{{N}}(x_\\ell + F(x_\\ell))$ "
            f"with $dF/dx_\\ell = {number_tex(a)}$, and the norm scales what passes through it by "
            f"$\\gamma/\\sigma = {number_tex(r)}$. What factor multiplies the gradient between the output "
            f"and the input of ${layers}$ blocks?"
        )
        solution = (
            f"- One block: the norm wraps the whole sum, so its factor multiplies the identity path too: "
            f"${number_tex(r)} \\times (1 + {number_tex(a)}) = {number_tex(per_layer)}$.\n"
            f"- ${layers}$ blocks: ${number_tex(per_layer)}^{{{layers}}} = {number_tex(total)}$, "
            "vanishing with depth because the per-layer factor is below 1.\n"
        )
        params = {"norm_factor": r, "a": a, "layers": layers}
    return Problem(
        "post_ln_gradient_depth", "Post-LN gradient factor over depth", statement,
        Answer("number", total, abs=TINY_FLOOR), solution, params,
    )


def make_depth_below_threshold(rng) -> Problem:
    """Smallest ``L`` with ``f^L < t``: ``floor(log t / log f) + 1``."""
    f = float(rng.choice(np.round(np.arange(0.5, 0.96, 0.05), 2)))
    exponent = int(rng.choice([1, 2, 3, 4, 6]))
    t = 10.0 ** (-exponent)
    depth = depth_below(f, t)
    statement = (
        f"Each **Post-LN** layer multiplies the backward gradient by ${number_tex(f)}$. "
        f"What is the smallest number of layers $L$ for which the gradient reaching the input "
        f"is below $10^{{-{exponent}}}$ of its value at the output? (An integer.)"
    )
    solution = (
        f"- We need ${number_tex(f)}^L < 10^{{-{exponent}}}$, i.e. "
        f"$L > \\dfrac{{\\ln 10^{{-{exponent}}}}}{{\\ln {number_tex(f)}}} = {number_tex(np.log(t) / np.log(f))}$.\n"
        f"- The smallest such integer is $L = {depth}$: "
        f"${number_tex(f)}^{{{depth - 1}}} = {number_tex(gradient_factor(f, depth - 1)) if depth > 1 else '1'}$ "
        f"is not below the threshold, ${number_tex(f)}^{{{depth}}} = {number_tex(gradient_factor(f, depth))}$ is.\n"
    )
    return Problem(
        "depth_below_threshold", "Depth at which the gradient falls below a threshold", statement,
        Answer("number", float(depth), rel=0.0, abs=1e-9), solution, {"per_layer": f, "threshold": t},
    )


def make_residual_growth(rng) -> Problem:
    """Pre-LN stream after ``N`` independent additions of variance ``v``: std ``sqrt(Var(x_0) + N v)``."""
    additions = int(rng.integers(2, 201))
    v = float(rng.choice([0.25, 0.5, 1.0, 2.0, 4.0]))
    v0 = float(rng.choice([0.0, 0.0, 1.0]))
    var = residual_variance(additions, v, v0)
    std = residual_std(additions, v, v0)
    start = "starts at zero" if v0 == 0 else f"starts with variance ${number_tex(v0)}$"
    statement = (
        f"In a **Pre-LN** stack the residual stream {start}, and each of ${additions}$ sublayers adds "
        f"an independent branch output of variance ${number_tex(v)}$. What is the standard deviation "
        "of the stream at the top?"
    )
    solution = (
        "- The stream is never normalized, and variances of independent sums add: "
        "$\\mathrm{Var}(x_N) = \\mathrm{Var}(x_0) + N v$.\n"
        f"- $\\mathrm{{Var}}(x_N) = {number_tex(v0)} + {additions} \\times {number_tex(v)} = {number_tex(var)}$.\n"
        f"- Standard deviation $\\sqrt{{{number_tex(var)}}} = {number_tex(std)}$: growth like $\\sqrt N$, "
        "not exponential.\n"
    )
    return Problem(
        "residual_growth", "Growth of the Pre-LN residual stream", statement,
        Answer("number", std), solution, {"additions": additions, "branch_variance": v, "initial_variance": v0},
    )
