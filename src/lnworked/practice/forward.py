"""Forward-pass families: LayerNorm with gamma, beta, eps; Post-LN and Pre-LN blocks; the
degenerate (constant) input; zero-homogeneity of the final norm.

Every answer and every intermediate number of a solution is computed by
:mod:`lnworked.norms` and :mod:`lnworked.blocks`; this module only draws parameters and
writes the text.
"""

from __future__ import annotations

import numpy as np

from lnworked.blocks import Linear, post_ln, pre_ln
from lnworked.norms import DegenerateInputError, layer_norm
from lnworked.practice.problem import Answer, Problem, number_tex, vector_tex

__all__ = [
    "make_layer_norm_forward",
    "make_post_ln_forward",
    "make_pre_ln_forward",
    "make_degenerate_eps",
    "make_final_norm_homogeneity",
    "affine_tex",
    "tex_vec",
    "stats_steps",
]

D = 4  # features per vector: small enough to do by hand
HAT_X = "\\hat x"


def affine_tex(a: float, b: float, var: str = "u") -> str:
    """``a u + b`` in TeX without ``1 u`` or ``+ -1``."""
    head = {1.0: var, -1.0: f"-{var}"}.get(a, f"{number_tex(a)}\\,{var}")
    if b == 0:
        return head
    return f"{head} {'+' if b > 0 else '-'} {number_tex(abs(b))}"


def tex_vec(values) -> str:
    """Exact-looking TeX for given parameters: ints stay ints, others get 5 significant figures."""
    return "(" + ",\\ ".join(number_tex(float(v)) for v in values) + ")"


def _draw_vector(rng, low: int, high: int) -> list[int]:
    """Integers in ``[low, high]`` that are not all equal."""
    while True:
        x = [int(v) for v in rng.integers(low, high + 1, size=D)]
        if len(set(x)) > 1:
            return x


def stats_steps(z, eps: float, name: str = "z") -> str:
    """Markdown for the mean, variance, denominator and normalised vector of ``z``.

    ``mu = mean(z)``, ``var = mean((z - mu)^2)``, ``s = sqrt(var + eps)``; the normalised
    vector is LN with gamma 1 and beta 0, computed by :func:`lnworked.norms.layer_norm`.
    """
    z = np.asarray(z, dtype=float)
    mu = float(np.mean(z))
    var = float(np.mean((z - mu) ** 2))
    s = float(np.sqrt(var + eps))
    x_hat = layer_norm(z, eps=eps)
    eps_part = f" + {number_tex(eps)}" if eps else ""
    return (
        f"- Mean: $\\mu = {number_tex(mu)}$.\n"
        f"- Deviations: ${name} - \\mu = {vector_tex(z - mu)}$, variance "
        f"$\\sigma^2 = {number_tex(var)}$.\n"
        f"- Denominator: $\\sqrt{{\\sigma^2 + \\varepsilon}} = \\sqrt{{{number_tex(var)}{eps_part}}} "
        f"= {number_tex(s)}$.\n"
        f"- Normalised: $\\hat{{{name}}} = ({name} - \\mu)/\\sqrt{{\\sigma^2+\\varepsilon}} = {vector_tex(x_hat)}$.\n"
    )


def make_layer_norm_forward(rng) -> Problem:
    """``LN(x) = gamma * (x - mu) / sqrt(var + eps) + beta`` with non-trivial gamma, beta, eps."""
    x = _draw_vector(rng, -6, 9)
    gamma = [float(g) for g in rng.choice([0.5, 1.0, 1.5, 2.0, 3.0], size=D)]
    if rng.random() < 0.5:
        gamma = [gamma[0]] * D
    beta = [float(b) for b in rng.choice([-2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0], size=D)]
    eps = float(rng.choice([0.0, 0.0, 0.25, 1.0]))
    out = layer_norm(np.array(x, float), np.array(gamma), np.array(beta), eps=eps)
    statement = (
        f"Compute $\\mathrm{{LN}}(x) = \\gamma \\odot \\dfrac{{x - \\mu}}{{\\sqrt{{\\sigma^2 + \\varepsilon}}}} + \\beta$ for "
        f"$x = {tex_vec(x)}$ with $\\gamma = {tex_vec(gamma)}$, $\\beta = {tex_vec(beta)}$ and "
        f"$\\varepsilon = {number_tex(eps)}$. Keep the signs of the deviations. "
        f"Answer with the vector of {D} entries."
    )
    solution = (
        stats_steps(x, eps, "x")
        + f"- Scale by $\\gamma$ and shift by $\\beta$ entry by entry: "
        f"$\\mathrm{{LN}}(x) = {vector_tex(out)}$.\n"
    )
    return Problem(
        "layer_norm_forward", "LayerNorm forward with γ, β and ε", statement,
        Answer("vector", tuple(float(v) for v in out)), solution,
        {"x": x, "gamma": gamma, "beta": beta, "eps": eps},
    )


def _zero_linear(b) -> Linear:
    """A sublayer that returns the constant ``b`` (the statement gives ``F(x)`` directly)."""
    return Linear(np.zeros((D, D)), np.array(b, dtype=float))


def make_post_ln_forward(rng) -> Problem:
    """Post-LN forward ``x_out = LN(x + F(x))`` with ``F(x)`` given, gamma 1, beta 0."""
    eps = float(rng.choice([0.0, 1e-5]))
    while True:
        x = [int(v) for v in rng.integers(-3, 8, size=D)]
        f = [int(v) * int(rng.choice([-1, 1])) for v in rng.integers(1, 4, size=D)]
        z = np.add(x, f)
        if len(set(z.tolist())) > 1:
            break
    out = post_ln(np.array(x, float), _zero_linear(f), eps=eps)
    statement = (
        f"A vector $x = {tex_vec(x)}$ enters a **Post-LN** block, "
        f"$x_{{\\text{{out}}}} = \\mathrm{{LN}}(x + F(x))$, and the sublayer returns "
        f"$F(x) = {tex_vec(f)}$. Use $\\gamma = 1$, $\\beta = 0$, $\\varepsilon = {number_tex(eps)}$. "
        f"Compute $x_{{\\text{{out}}}}$."
    )
    solution = (
        f"- Post-LN adds first: $z = x + F(x) = {tex_vec(z)}$.\n"
        + stats_steps(z, eps, "z")
        + f"- With $\\gamma = 1, \\beta = 0$ that is the output: $x_{{\\text{{out}}}} = {vector_tex(out)}$ "
        "(mean 0 and variance 1 up to $\\varepsilon$, whatever the scale of $F$).\n"
    )
    return Problem(
        "post_ln_forward", "Post-LN forward pass", statement,
        Answer("vector", tuple(float(v) for v in out)), solution, {"x": x, "F(x)": f, "eps": eps},
    )


def make_pre_ln_forward(rng) -> Problem:
    """Pre-LN forward ``x_out = x + F(LN(x))`` with ``F(u) = a u + b``, gamma 1, beta 0, eps 0."""
    x = _draw_vector(rng, -4, 9)
    a = float(rng.choice([-1.0, 0.5, 1.0, 2.0, 3.0]))
    b = float(rng.choice([-1.0, 0.0, 0.0, 1.0, 2.0]))
    sublayer = Linear(a * np.eye(D), b)
    out = pre_ln(np.array(x, float), sublayer, eps=0.0)
    x_hat = layer_norm(np.array(x, float), eps=0.0)
    statement = (
        f"A vector $x = {tex_vec(x)}$ enters a **Pre-LN** block, "
        f"$x_{{\\text{{out}}}} = x + F(\\mathrm{{LN}}(x))$, whose sublayer is "
        f"$F(u) = {affine_tex(a, b)}$ (a number added to a vector is added to every entry). "
        f"Use $\\gamma = 1$, $\\beta = 0$, $\\varepsilon = 0$. Compute $x_{{\\text{{out}}}}$."
    )
    solution = (
        "- Pre-LN normalises only the copy that enters the branch:\n"
        + stats_steps(x, 0.0, "x")
        + f"- Sublayer: $F(\\hat x) = {affine_tex(a, b, HAT_X)} = {vector_tex(sublayer(x_hat))}$.\n"
        f"- Add the untouched stream: $x_{{\\text{{out}}}} = x + F(\\hat x) = {vector_tex(out)}$ "
        f"(its mean is $\\mu + {number_tex(b)} = {number_tex(float(np.mean(out)))}$: the stream is not re-centred).\n"
    )
    return Problem(
        "pre_ln_forward", "Pre-LN forward pass", statement,
        Answer("vector", tuple(float(v) for v in out)), solution, {"x": x, "a": a, "b": b, "eps": 0.0},
    )


def make_degenerate_eps(rng) -> Problem:
    """A constant input: ``x - mu = 0``, so ``LN(x) = gamma * 0 / sqrt(eps) + beta = beta`` for eps > 0."""
    c = int(rng.integers(-9, 10))
    x = [c] * D
    eps = float(rng.choice([1e-5, 1e-3, 0.01, 0.5, 1.0]))
    gamma = float(rng.choice([0.5, 2.0, 3.0, -1.0]))
    beta = [float(b) for b in rng.choice([-1.5, -1.0, 0.0, 0.5, 1.0, 2.0], size=D)]
    out = layer_norm(np.array(x, float), gamma, np.array(beta), eps=eps)
    try:
        layer_norm(np.array(x, float), gamma, np.array(beta), eps=0.0)
        zero_eps = "is defined"  # pragma: no cover - a constant vector is always degenerate
    except DegenerateInputError:
        zero_eps = "is $0/0$: the library raises `DegenerateInputError`, and a network would emit NaN"
    statement = (
        f"All features of $x = {tex_vec(x)}$ are equal (a padding token, say). Compute "
        f"$\\mathrm{{LN}}(x)$ with $\\gamma = {number_tex(gamma)}$, $\\beta = {tex_vec(beta)}$ and "
        f"$\\varepsilon = {number_tex(eps)}$. (What would happen with $\\varepsilon = 0$?)"
    )
    solution = (
        stats_steps(x, eps, "x")
        + f"- Zero numerator over a positive denominator: $\\gamma \\cdot 0 + \\beta = {vector_tex(out)}$, "
        "so the output is exactly $\\beta$.\n"
        f"- With $\\varepsilon = 0$ the same computation {zero_eps}. Keep $\\varepsilon > 0$.\n"
    )
    return Problem(
        "degenerate_eps", "Degenerate input: all features equal", statement,
        Answer("vector", tuple(float(v) for v in out)), solution,
        {"x": x, "gamma": gamma, "beta": beta, "eps": eps},
    )


def make_final_norm_homogeneity(rng) -> Problem:
    """Zero-homogeneity: ``LN(c x) = LN(x)`` for ``c > 0`` and ``-gamma*x_hat + beta`` for ``c < 0`` (eps 0)."""
    x = _draw_vector(rng, -5, 6)
    c = float(rng.choice([-100.0, -10.0, -2.0, 0.5, 2.0, 10.0, 50.0, 100.0]))
    gamma = float(rng.choice([1.0, 2.0, 0.5]))
    beta = float(rng.choice([0.0, 0.0, 1.0, -1.0]))
    y = c * np.array(x, float)
    out = layer_norm(y, gamma, beta, eps=0.0)
    ln_x = layer_norm(np.array(x, float), gamma, beta, eps=0.0)
    ln_neg = layer_norm(-np.array(x, float), gamma, beta, eps=0.0)
    statement = (
        f"Suppose that after many Pre-LN layers the residual stream is a scaled copy of a vector: "
        f"$y = {affine_tex(c, 0.0, 'x')}$ with $x = {tex_vec(x)}$. The final norm is a LayerNorm with $\\gamma = {number_tex(gamma)}$, "
        f"$\\beta = {number_tex(beta)}$, $\\varepsilon = 0$. Compute $\\mathrm{{LN}}(y)$. "
        "(Do you need to multiply out $y$ first?)"
    )
    sign = "positive" if c > 0 else "negative"
    rule = (
        "LN is zero-homogeneous: $\\mathrm{LN}(c x) = \\mathrm{LN}(x)$ for every $c > 0$"
        if c > 0
        else "for $c < 0$ the mean and deviations flip sign while $\\sigma$ scales by $|c|$, so "
        "$\\mathrm{LN}(c x) = \\mathrm{LN}(-x) = -\\gamma \\hat x + \\beta$ (sign trap)"
    )
    solution = (
        f"- The scale ${number_tex(c)}$ is {sign}; {rule}.\n"
        + stats_steps(x, 0.0, "x")
        + f"- $\\mathrm{{LN}}(x) = {vector_tex(ln_x)}$ and $\\mathrm{{LN}}(-x) = {vector_tex(ln_neg)}$.\n"
        f"- Hence $\\mathrm{{LN}}(y) = {vector_tex(out)}$: the final norm removes the stream's "
        "overall scale (exactly with $\\varepsilon = 0$, nearly once $\\sigma^2 \\gg \\varepsilon$), "
        "so the output head sees the same size at any depth. It does not undo growth inside the "
        "stack, and a sign flip still reaches the output.\n"
    )
    return Problem(
        "final_norm_homogeneity", "Zero-homogeneity of the final norm", statement,
        Answer("vector", tuple(float(v) for v in out)), solution,
        {"x": x, "c": c, "gamma": gamma, "beta": beta, "eps": 0.0},
    )
