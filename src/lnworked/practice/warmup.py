"""Families on training and warmup: AdamW's first update, a Post-LN sublayer's branch share
under DeepNorm's residual weight, and which measured quantity explains why Post-LN needs
warmup.

AdamW's first update, with Adam's bias-corrected statistics :math:`\\hat m_1 = g` and
:math:`\\hat v_1 = g^2`, is the book's optimiser's step (:mod:`lnworked.stress.optim`:
``scale_by_adam``, decoupled weight decay, the rate applied last):

.. math:: \\Delta\\theta = -\\eta\\Big(\\frac{g}{\\sqrt{\\hat v_1} + \\varepsilon} + \\lambda\\,\\theta_0\\Big)
          = -\\eta\\Big(\\frac{g}{|g| + \\varepsilon} + \\lambda\\,\\theta_0\\Big).

A step that moves one two-class example's logit margin from 0 by :math:`a` promises the drop
:math:`a/2` (the slope of :math:`\\ln(1 + e^{-o})` at 0 is :math:`-1/2`) and delivers
:math:`\\ln 2 - \\ln(1 + e^{-a})` (:mod:`lnworked.stress.one_logit`).

The branch share of a DeepNorm sum :math:`N(\\alpha x + F)` is
:math:`\\rho = \\lVert F\\rVert^2 / \\lVert \\alpha x + F\\rVert^2`, with
:math:`\\alpha = (2L)^{1/4}` for a decoder of :math:`L` blocks
(:func:`lnworked.placements.deepnorm_constants`). Notation as in ``book/notation.md``.
"""

from __future__ import annotations

import numpy as np

from lnworked.placements import deepnorm_constants
from lnworked.practice.concepts import _choice_problem, shuffled
from lnworked.practice.forward import tex_vec
from lnworked.practice.problem import Answer, Problem, number_tex, vector_tex
from lnworked.stress.one_logit import HALF_SHARE_MOVE, one_logit_share, one_logit_walk

__all__ = ["adamw_first_update", "branch_share", "make_adam_first_update", "make_one_logit_step",
           "make_branch_share", "make_why_warmup"]

#: Adam's epsilon in the book's optimiser (Optax's ``scale_by_adam`` default).
ADAM_EPS = 1e-8


def adamw_first_update(g, theta0, learning_rate: float, eps: float, weight_decay: float) -> np.ndarray:
    """AdamW's first update ``-lr (g / (|g| + eps) + wd theta0)``: Adam's first step with
    ``m_hat = g``, ``v_hat = g^2`` (``sqrt(v_hat) = |g|``), plus decoupled weight decay."""
    g = np.asarray(g, dtype=float)
    theta0 = np.asarray(theta0, dtype=float)
    if g.shape != theta0.shape:
        raise ValueError(f"theta0: shape {theta0.shape} differs from the gradient's {g.shape}")
    if not eps > 0:
        raise ValueError(f"eps: must be positive, got {eps!r}")
    return -learning_rate * (g / (np.abs(g) + eps) + weight_decay * theta0)


def branch_share(x_sq: float, f_sq: float, inner: float, alpha: float = 1.0) -> float:
    """``rho = ||F||^2 / ||alpha x + F||^2 = f_sq / (alpha^2 x_sq + 2 alpha <x, F> + f_sq)``."""
    if x_sq < 0 or f_sq < 0:
        raise ValueError(f"x_sq, f_sq: squared norms must be non-negative, got {x_sq!r}, {f_sq!r}")
    if inner * inner > x_sq * f_sq:
        raise ValueError(f"inner: |<x, F>| = {abs(inner)!r} exceeds ||x|| ||F|| (Cauchy-Schwarz)")
    denominator = alpha * alpha * x_sq + 2.0 * alpha * inner + f_sq
    if denominator <= 0:
        raise ValueError("alpha: alpha x + F is zero, so its share is undefined")
    return float(f_sq / denominator)


def _draw_gradient(rng) -> list[float]:
    """Four entries of very different sizes, one of them tiny (near Adam's epsilon)."""
    mantissas = rng.integers(11, 99, size=4) / 10.0  # 1.1 .. 9.8
    tiny = int(rng.choice([6, 7]))
    exponents = [0, -2, -4, -tiny]
    signs = rng.choice([-1.0, 1.0], size=4)
    values = [float(s * m * 10.0**e) for s, m, e in zip(signs, mantissas, exponents)]
    return [values[i] for i in rng.permutation(4)]


def make_adam_first_update(rng) -> Problem:
    """AdamW's first update of four parameters whose gradients differ by many orders of magnitude."""
    g = _draw_gradient(rng)
    theta0 = [float(v) / 10.0 for v in rng.integers(-15, 16, size=4)]
    rate = float(rng.choice([1e-3, 2e-3, 5e-3]))
    decay = float(rng.choice([0.01, 0.1]))
    eps = ADAM_EPS
    update = adamw_first_update(g, theta0, rate, eps, decay)
    ratio = np.asarray(g) / (np.abs(g) + eps)
    smallest = int(np.argmin(np.abs(g)))
    stem = (
        "Four parameters start at $\\theta_0 = " + tex_vec(theta0) + "$, and the loss's gradient "
        "at the first step is $g = " + tex_vec(g) + "$. AdamW takes its first step with rate "
        f"$\\eta = {number_tex(rate)}$, Adam's $\\varepsilon = {number_tex(eps)}$ and decoupled "
        f"weight decay $\\lambda = {number_tex(decay)}$. After bias correction its statistics are "
        "$\\hat m_1 = g$ and $\\hat v_1 = g^2$, and the update is "
        "$\\Delta\\theta = -\\eta\\big(\\hat m_1/(\\sqrt{\\hat v_1} + \\varepsilon) + "
        "\\lambda\\,\\theta_0\\big)$. What is $\\Delta\\theta$?"
    )
    solution = (
        "- $\\sqrt{\\hat v_1} = |g|$, so each entry's Adam ratio is $g/(|g| + \\varepsilon) = "
        f"{vector_tex(ratio)}$: the sign of $g$, up to $\\varepsilon$.\n"
        f"- Weight decay: $\\lambda\\,\\theta_0 = {vector_tex(decay * np.asarray(theta0))}$.\n"
        f"- $\\Delta\\theta = -{number_tex(rate)} \\times$ (their sum) $= {vector_tex(update)}$.\n"
        "- Every entry moves by about $\\eta$, whether its gradient is "
        f"${number_tex(max(abs(v) for v in g))}$ or ${number_tex(g[smallest])}$: the first step "
        "divides the gradient by its own size, so its size is set by the rate, not by the "
        "gradient. Only an entry with $|g|$ near $\\varepsilon$ moves visibly less (here the "
        f"ratio ${number_tex(ratio[smallest])}$), and $\\lambda\\theta_0$ adds a small shift. "
        "That is why a warmup, which makes $\\eta$ small at first, is the way to make the first "
        "steps small under AdamW.\n"
    )
    params = {"g": g, "theta0": theta0, "learning_rate": rate, "eps": eps, "weight_decay": decay}
    return Problem("adam_first_update", "AdamW's first update", stem, Answer("vector", tuple(update)),
                   solution, params)


def make_one_logit_step(rng) -> Problem:
    """The same step on two logits, one ``k`` times as sensitive as the other: the share of its
    promise ``a / 2`` each delivers, ``(ln 2 - ln(1 + e^(-a))) / (a / 2)``, at the logit's moves
    ``a`` and ``k a``."""
    move = float(rng.integers(2, 17)) / 8.0  # 0.25 .. 2
    k = int(rng.integers(2, 6))  # 2 .. 5
    moves = (move, k * move)
    shares = tuple(float(one_logit_share(u)) for u in moves)
    lines = []
    for name, a, share in zip("AB", moves, shares):
        drop = -float(one_logit_walk(a, 1.0)[0])
        lines.append(
            f"- Model {name}, $a$ = {number_tex(a)}: promise {number_tex(a / 2)} nats, drop "
            f"$\\ln 2 - \\ln(1 + e^{{-{number_tex(a)}}}) = {number_tex(drop)}$ nats, share "
            f"${number_tex(drop)}/{number_tex(a / 2)} = {number_tex(share)}$.\n")
    stem = (
        "Two models start from a uniform guess on one example with two classes: the logit margin "
        "$o$ (the right class's logit minus the other's) is 0 and the loss is "
        "$\\phi(o) = \\ln(1 + e^{-o}) = \\ln 2$. The same first step moves model A's margin by "
        f"{number_tex(move)} and model B's by {k} × {number_tex(move)} = {number_tex(k * move)}: "
        f"B's output is {k} times as sensitive to the step. What share of the drop its gradient "
        "promises (the tangent's drop) does the step deliver in each model? Answer "
        "$(\\text{share}_A, \\text{share}_B)$."
    )
    solution = (
        "- The slope at the start is $\\phi'(0) = -1/(1 + e^0) = -\\tfrac12$, so a step that moves "
        "the margin by $a$ (the logit's move) promises the drop $a/2$ nats, and delivers "
        "$\\ln 2 - \\ln(1 + e^{-a})$.\n"
        + "".join(lines)
        + f"- B's step promises {k} times as much, but keeps a smaller share of it: its loss "
        "leaves its tangent sooner. For a small move the share is about $1 - a/4$ (the "
        "curvature $\\phi''(0) = \\tfrac14$ bends the loss up), and it falls to one half at a "
        f"move of {number_tex(HALF_SHARE_MOVE)}. So the more sensitive output needs a smaller "
        "step to follow its gradient: chapter 6 measures the same effect on Post-LN's logits, "
        "and a warmup's small first steps are what keep it on its tangent.\n"
    )
    params = {"a": move, "k": k}
    return Problem("one_logit_step", "One step on one logit: the share of its promise",
                   stem, Answer("vector", shares), solution, params)


def make_branch_share(rng) -> Problem:
    """A Post-LN sum's branch share with DeepNorm's ``alpha = (2L)^(1/4)``, from the squared
    norms and the inner product; the solution contrasts plain Post-LN (``alpha = 1``)."""
    layers = int(rng.choice([6, 12, 24, 50, 100]))
    alpha = deepnorm_constants(layers)[0]
    x_sq = float(rng.choice([4, 8, 16, 32, 64]))
    f_sq = float(rng.integers(5, 41)) * x_sq / 20.0  # between a quarter and twice ||x||^2
    cosine = float(rng.choice([-0.4, -0.3, -0.2, -0.1, 0.1, 0.2, 0.3, 0.4]))
    inner = round(cosine * float(np.sqrt(x_sq * f_sq)), 2)
    share = branch_share(x_sq, f_sq, inner, alpha)
    plain = branch_share(x_sq, f_sq, inner, 1.0)
    dropped = f_sq / (alpha**2 * x_sq + f_sq)
    denominator = alpha**2 * x_sq + 2 * alpha * inner + f_sq
    stem = (
        "A **DeepNorm** sublayer of a decoder with $L = " + str(layers) + "$ blocks computes "
        "$N(\\alpha x + F)$ with $\\alpha = (2L)^{1/4}$, where $x$ is the stream entering the "
        "sublayer and $F$ the branch's output. At initialisation "
        f"$\\lVert x\\rVert^2 = {number_tex(x_sq)}$, $\\lVert F\\rVert^2 = {number_tex(f_sq)}$ and "
        f"$\\langle x, F\\rangle = {number_tex(inner)}$. What is the branch share "
        "$\\rho = \\lVert F\\rVert^2/\\lVert \\alpha x + F\\rVert^2$?"
    )
    solution = (
        f"- $\\alpha = (2 \\times {layers})^{{1/4}} = {number_tex(alpha)}$, "
        f"$\\alpha^2 = {number_tex(alpha**2)}$.\n"
        "- Expand the square: $\\lVert \\alpha x + F\\rVert^2 = \\alpha^2\\lVert x\\rVert^2 + "
        "2\\alpha\\langle x, F\\rangle + \\lVert F\\rVert^2 = "
        f"{number_tex(alpha**2 * x_sq)} + ({number_tex(2 * alpha * inner)}) + {number_tex(f_sq)} "
        f"= {number_tex(denominator)}$.\n"
        f"- $\\rho = {number_tex(f_sq)}/{number_tex(denominator)} = {number_tex(share)}$.\n"
        f"- Plain Post-LN ($\\alpha = 1$) would give $\\rho = {number_tex(f_sq)}/"
        f"{number_tex(x_sq + 2 * inner + f_sq)} = {number_tex(plain)}$: $\\alpha$ multiplies the "
        "stream's part of the sum by $\\alpha^2$, so the branch's share falls. Dropping the cross "
        f"term, as for a branch uncorrelated with the stream, gives ${number_tex(dropped)}$.\n"
        "- A smaller share means a change in this sublayer's parameters changes the normalised "
        "sum, and so the output, less: the book's tiny model trains at the full rate without "
        "warmup once DeepNorm lowers Post-LN's branch shares.\n"
    )
    params = {"layers": layers, "alpha": alpha, "x_sq": x_sq, "F_sq": f_sq, "inner": inner}
    return Problem("branch_share", "Branch share under DeepNorm's α", stem, Answer("number", share),
                   solution, params)


def make_why_warmup(rng) -> Problem:
    """Why Post-LN needs warmup on the book's model: the output's sensitivity to AdamW's
    first update, large in Post-LN because each sublayer keeps a large branch share."""
    asked = str(rng.choice(["post", "pre"]))
    # four options of one form, about one length and one degree of hedging ("several times")
    right = (
        "the output's sensitivity to AdamW's first update: per unit of a small step, Post-LN's "
        "logits move several times as much as Pre-LN's (large branch shares $\\rho$)"
    )
    wrong = [
        "the gradient vanishing toward the input: each Post-LN block shrinks the gradient by a "
        "steady factor below 1, so after many blocks the early layers receive almost none",
        "the gradient at the output: at initialisation Post-LN's is several times larger than "
        "Pre-LN's, so at the same rate each parameter takes a larger first step than in Pre-LN",
        "the residual stream's growth: Post-LN's stream grows like $\\sqrt{L}$ with depth, so "
        "the late blocks see inputs several times too large for the full rate",
    ]
    choices, index = shuffled(rng, right, wrong)
    question = ("why Post-LN needs warmup here and Pre-LN does not" if asked == "post"
                else "why Pre-LN trains without warmup here and Post-LN does not")
    stem = (
        "On the book's tiny decoder-only model (chapters 5 and 6), at the same rate and from "
        "the same start, Post-LN without warmup fails to learn the synthetic task, Post-LN "
        "with warmup learns it, and Pre-LN learns it without warmup. Which measured quantity "
        f"does the book tie to {question}, and test by changing its cause?"
    )
    why = (
        "AdamW's first update moves every parameter by about the rate whatever its gradient, "
        "so the question is what a step of that size does to each model. Measured at the "
        "initial weights, per unit of a small step (warmup's first rate) the same step moves "
        "Post-LN's logits several times as much as Pre-LN's, and more so the deeper the stack. "
        "At the full rate both placements' logits move by about their own size, so the size of "
        "the move no longer separates them; what differs is that Post-LN's loss stops following "
        "its tangent earlier in the step, so its full-rate step delivers only a small part of "
        "the loss drop that the gradient promises, while warmup's small first steps deliver it. "
        "The cause, tested by varying it: each Post-LN sublayer keeps a large "
        "branch share $\\rho$ at every depth, and lowering it with DeepNorm's $\\alpha$ or "
        "$\\kappa$ lets Post-LN train at the full rate without warmup. Pre-LN's shares fall with "
        "depth, because each branch is added to an ever larger stream.\n\n"
        "The other options are not what the book measures: Post-LN's per-block gradient at "
        "initialisation stays within a small factor from block to block (it does not vanish "
        "toward the input); the gradient is of the same order in both placements, and under "
        "AdamW a larger gradient would not take a larger first step anyway; and it is "
        "Pre-LN's stream that grows with depth, since Post-LN normalises its stream in every "
        "block. These conclusions are for this tiny model and task, at initialisation and over "
        "the first steps. The book shows the sensitivity is consistent with the runs and that "
        "lowering its cause removes the need for warmup; it does not show that the first step's "
        "shortfall is why the constant-rate run fails: over training, what the runs that learn "
        "share is enough steps at a rate at which Post-LN learns before the full rate."
    )
    return _choice_problem("why_warmup", "Why Post-LN needs warmup", stem, choices, index, why,
                           {"asked": asked})
