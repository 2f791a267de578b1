"""Every worked example of the four seed texts, computed by the library.

Each function returns an :class:`Example` record: what went in, the steps, what the
library computed, what the seed text stated, and whether they agree. A computed value
agrees with a number the seed states when, written to the seed's last digit, it gives the
seed's text: rounded ("0.22" for 0.216) or, where the seed writes "...", truncated
("0.013462..." for 0.0134627).

The seed texts were extracted from web pages and lost square-root signs ("σ = 5" where
√5 is meant). A lost symbol is read as the author meant it and noted; an arithmetic or
conceptual error makes ``agrees`` false, with the reason in ``note``.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from decimal import Decimal
from functools import lru_cache
from typing import Any, Callable

import numpy as np

from lnworked.blocks import Linear, MLP, autodiff_jacobian, input_gradient, post_ln, post_ln_jacobian, pre_ln, pre_ln_jacobian
from lnworked.depth import gradient_factor, residual_std, residual_variance, residual_variance_monte_carlo
from lnworked.norms import DegenerateInputError, layer_norm, layer_norm_jacobian, rms_norm

__all__ = ["Example", "SEEDS", "all_examples", "get_example", "agrees_with_stated", "stated_unit"]

#: The seed texts by their number, as file names in ``shared/seeds/``.
SEEDS = {
    "000": "000_f9e1e8d91e2510fa.txt",
    "001": "001_1fcc2bb1239e31ab.txt",
    "002": "002_0f4d1ff343504309.txt",
    "004": "004_eca1ca6fb71bffa6.txt",
}


@dataclass
class Example:
    """One worked example: inputs, steps, the computed result and the seed's stated one."""

    id: str
    seed: str
    title: str
    inputs: dict
    computed: Any
    stated: Any
    agrees: bool | None
    note: str | None = None
    steps: list = field(default_factory=list)

    def to_dict(self) -> dict:
        return _jsonable(asdict(self))


def _jsonable(value):
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return _jsonable(value.tolist())
    if isinstance(value, (np.floating, float)):
        value = float(value)
        return value if math.isfinite(value) else str(value)
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, np.bool_):
        return bool(value)
    return value


def stated_unit(text: str) -> float:
    """One unit in the last digit of a decimal as written: ``"0.22"`` -> 0.01, ``"2.2e-6"`` -> 1e-7."""
    exponent = Decimal(_digits(text)).as_tuple().exponent
    return float(Decimal(1).scaleb(exponent))


def _digits(text: str) -> str:
    """The number of a stated value without a trailing "..." (which marks truncation)."""
    return text.strip().removesuffix("...").rstrip(".")


def agrees_with_stated(computed, stated_text) -> bool:
    """Whether each computed value, written to the seed's digits, gives the seed's text.

    A value written as ``"0.22"`` is rounded: ``|computed - 0.22| <= 0.005`` (half a unit in
    the last digit). A value written as ``"0.013462..."`` is truncated:
    ``0.013462 <= |computed| < 0.013463``.
    """
    texts = [stated_text] if isinstance(stated_text, str) else list(stated_text)
    values = np.atleast_1d(np.asarray(computed, dtype=float))
    if len(texts) != values.size:
        raise ValueError(f"stated_text: {len(texts)} numbers for {values.size} computed values")
    return all(_agrees_one(v, t) for v, t in zip(values, texts))


def _agrees_one(value: float, text: str) -> bool:
    stated, unit = float(_digits(text)), stated_unit(text)
    slack = unit * 1e-9
    if text.strip().endswith("..."):
        return abs(stated) - slack <= abs(value) < abs(stated) + unit and value * stated >= 0
    return abs(value - stated) <= unit / 2 + slack


def _stated(texts):
    return [float(_digits(t)) for t in texts] if not isinstance(texts, str) else float(_digits(texts))


def _number_example(id, seed, title, inputs, computed, stated_text, steps, note=None) -> Example:
    """An example whose seed states numbers (given as written, e.g. ``"0.22"``)."""
    return Example(
        id=id, seed=SEEDS[seed], title=title, inputs=inputs, computed=computed,
        stated=_stated(stated_text), agrees=agrees_with_stated(computed, stated_text),
        note=note, steps=steps,
    )


def _claim_example(id, seed, title, inputs, computed, stated, holds, steps, note=None) -> Example:
    """An example whose seed states a claim or formula; ``holds`` is the library's check of it."""
    return Example(id=id, seed=SEEDS[seed], title=title, inputs=inputs, computed=computed,
                   stated=stated, agrees=bool(holds), note=note, steps=steps)


# --- Seed 000: tracing one gradient step ---------------------------------------------

_X000 = np.array([2.0, -1.0])
_G000 = np.array([0.5, 0.5])
_F000 = Linear(0.1 * np.eye(2))
_EPS = 1e-5


def seed000_pre_ln_gradient() -> Example:
    """Gradient at layer 2's input, Pre-LN: ``(I + J_s J_LN)^T g`` with the true J_LN."""
    j_ln = layer_norm_jacobian(_X000, eps=_EPS)
    branch = input_gradient(_F000.W @ j_ln, _G000)
    total = input_gradient(pre_ln_jacobian(_X000, _F000, eps=_EPS), _G000)
    return _number_example(
        "000-pre-ln-gradient", "000", "Pre-LN: the gradient reaching layer 2's input",
        {"x": _X000, "upstream": _G000, "J_s": "0.1 I", "eps": _EPS}, total, ["0.55", "0.55"],
        steps=[("J_LN at x", j_ln), ("J_LN (1, 1)^T", j_ln @ np.ones(2)),
               ("sublayer branch (J_s J_LN)^T g", branch), ("residual + branch", total)],
        note="The seed assumes J_LN ≈ I and gets 0.55. The true LayerNorm Jacobian removes the "
             "mean direction, J_LN (1,1)^T = 0 for every x and ε, and it is symmetric, so the "
             "upstream gradient (0.5, 0.5) gives the sublayer branch nothing: exactly (0.5, 0.5) "
             "arrives, all of it through the +1 residual path. (For d = 2, J_LN is ≈ 0 outright: "
             "LN maps every non-constant 2-vector to ±(1, −1).)",
    )


def seed000_post_ln_gradient() -> Example:
    """Gradient at layer 2's input, Post-LN: ``(J_LN (I + J_s))^T g`` with the true J_LN."""
    total = input_gradient(post_ln_jacobian(_X000, _F000, eps=_EPS), _G000)
    z = _X000 + _F000(_X000)
    j_ln = layer_norm_jacobian(z, eps=_EPS)
    return Example(
        id="000-post-ln-gradient", seed=SEEDS["000"],
        title="Post-LN: the gradient reaching layer 2's input",
        inputs={"x": _X000, "upstream": _G000, "J_s": "0.1 I", "eps": _EPS},
        computed=total, stated=None, agrees=None,
        steps=[("z = x + F(x)", z), ("J_LN at z", j_ln), ("J_LN g", j_ln @ _G000),
               ("(I + J_s)^T J_LN g", total)],
        note="The seed gives only the formula. With the true J_LN the upstream gradient lies in "
             "LayerNorm's null space, so nothing reaches layer 2's input: Post-LN has no "
             "untouched path around J_LN.",
    )


# --- Seed 001: tracing a gradient through depth --------------------------------------


def seed001_three_blocks() -> Example:
    """Post-LN factor 0.6 per layer over 3 blocks: ``0.6^3``; Pre-LN's identity path keeps 1."""
    post = gradient_factor(0.6, 3)
    return _number_example(
        "001-three-blocks", "001", "Three blocks at 0.6 per layer",
        {"per_layer": 0.6, "layers": 3, "upstream": 1.0}, post, "0.22",
        steps=[("Pre-LN identity path (1.0^3)", gradient_factor(1.0, 3)), ("Post-LN 0.6^3", post)],
    )


def seed001_twenty_four_layers() -> Example:
    """The same 0.6 per layer over 24 layers: ``0.6^24``."""
    value = gradient_factor(0.6, 24)
    return _number_example(
        "001-twenty-four-layers", "001", "Twenty-four layers at 0.6 per layer",
        {"per_layer": 0.6, "layers": 24}, value, "0.0000022",
        steps=[("log10(0.6^24) = 24 log10 0.6", 24 * math.log10(0.6)), ("0.6^24", value)],
        note=f"0.6^24 is about {value:.2g}, not 2.2e-6 (2.2e-6 would be 0.6^{math.log(2.2e-6) / math.log(0.6):.1f}). "
             "The conclusion (effectively zero) stands.",
    )


def seed001_practice() -> Example:
    """Practice question 2: factor 0.8 per layer over 12 layers, ``0.8^12``."""
    value = gradient_factor(0.8, 12)
    return Example(
        id="001-practice-12-layers", seed=SEEDS["001"],
        title="Practice: 0.8 per layer over 12 layers", inputs={"per_layer": 0.8, "layers": 12},
        computed=value, stated=None, agrees=None, steps=[("0.8^12", value)],
        note="The seed asks the question without an answer.",
    )


# --- Seed 002: the identity path ------------------------------------------------------

_X002 = np.array([0.7, -1.2, 2.0, 0.4])
_MLP002 = MLP.random(4, 16, seed=2)


def seed002_block_jacobians() -> Example:
    """``I + J_F J_N`` (Pre-LN) and ``J_N (I + J_F)`` (Post-LN): analytic against ``jax.jacfwd``."""
    diffs = {}
    steps = []
    for placement, analytic in (("pre", pre_ln_jacobian), ("post", post_ln_jacobian)):
        exact = analytic(_X002, _MLP002)
        auto = autodiff_jacobian(placement, _X002, _MLP002)
        diffs[placement] = float(np.max(np.abs(exact - auto)))
        steps += [(f"{placement}-LN analytic Jacobian", exact), (f"{placement}-LN max |analytic - jacfwd|", diffs[placement])]
    return _claim_example(
        "002-block-jacobians", "002", "The two block Jacobians",
        {"x": _X002, "sublayer": "GELU MLP 4→16→4, seed 2", "norm": "LayerNorm", "eps": 1e-5},
        diffs, {"pre": "I + J_F J_N", "post": "J_N (I + J_F)"}, max(diffs.values()) < 1e-10, steps,
    )


def seed002_zero_homogeneity() -> Example:
    """``N(c x) = N(x)`` for ``c > 0`` (exact with ε = 0, approximate with ε > 0)."""
    scales = [0.01, 0.5, 2.0, 1000.0]
    worst = {}
    for name, norm in (("layer", layer_norm), ("rms", rms_norm)):
        worst[name] = max(float(np.max(np.abs(norm(c * _X002, eps=0) - norm(_X002, eps=0)))) for c in scales)
    with_eps = float(np.max(np.abs(layer_norm(0.01 * _X002, eps=1e-5) - layer_norm(_X002, eps=1e-5))))
    return _claim_example(
        "002-zero-homogeneity", "002", "The final norm as scale anchor: N(cx) = N(x)",
        {"x": _X002, "c": scales, "eps": 0}, worst, "N(cx) = N(x) for c > 0", max(worst.values()) < 1e-12,
        steps=[("max |LN(cx) − LN(x)|, ε = 0", worst["layer"]), ("max |RMS(cx) − RMS(x)|, ε = 0", worst["rms"]),
               ("|LN(0.01 x) − LN(x)| with ε = 1e-5", with_eps)],
        note="Exact for ε = 0; with ε > 0 it is approximate, as the seed says, and the gap grows as cx shrinks toward √ε.",
    )


def seed002_unrolled_residual() -> Example:
    """``x_L = x_0 + sum_l F_l(N(x_l))`` on a 4-layer Pre-LN stack, against the layer loop."""
    sublayers = [MLP.random(4, 16, seed=10 + layer) for layer in range(4)]
    x, writes = _X002, []
    for sublayer in sublayers:
        writes.append(sublayer(layer_norm(x)))
        x = pre_ln(x, sublayer)
    unrolled = _X002 + np.sum(writes, axis=0)
    gap = float(np.max(np.abs(x - unrolled)))
    return _claim_example(
        "002-unrolled-residual", "002", "The unrolled Pre-LN residual sum",
        {"x_0": _X002, "layers": 4, "sublayers": "GELU MLPs 4→16→4, seeds 10..13"}, gap,
        "x_L = x_0 + Σ F_l(N(x_l))", gap < 1e-12,
        steps=[("x_L by the layer loop", x), ("x_0 + Σ F_l(N(x_l))", unrolled), ("max gap", gap)],
    )


# --- Seed 004: Ex 1 to Ex 8 and the self-check ----------------------------------------

_X = np.array([1.0, 3.0, 5.0, 7.0])


def _stats(v) -> list:
    mu = float(np.mean(v))
    var = float(np.mean((v - mu) ** 2))
    return [("mean μ", mu), ("variance σ²", var), ("σ", math.sqrt(var))]


def ex1_post_ln_forward() -> Example:
    """``LN(x + F(x))`` for x = (1,3,5,7), F(x) = (1,−1,1,−1), γ=1, β=0, ε=0."""
    f = np.array([1.0, -1.0, 1.0, -1.0])
    out = post_ln(_X, lambda v: f, eps=0)
    return _number_example(
        "004-ex1", "004", "Ex 1: an ordinary Post-LN forward pass",
        {"x": _X, "F(x)": f, "gamma": 1, "beta": 0, "eps": 0}, out, ["-1", "-1", "1", "1"],
        steps=[("z = x + F(x)", _X + f), *_stats(_X + f), ("x_out = LN(z)", out),
               ("output mean", float(np.mean(out))), ("output variance", float(np.var(out)))],
    )


def ex2_pre_ln_forward() -> Example:
    """``x + F(LN(x))`` with ``F`` the identity, x = (1,3,5,7), ε = 0."""
    normed = layer_norm(_X, eps=0)
    out = pre_ln(_X, lambda u: u, eps=0)
    return _number_example(
        "004-ex2", "004", "Ex 2: the same numbers through Pre-LN",
        {"x": _X, "F": "identity", "eps": 0}, out, ["-0.3416", "2.5528", "5.4472", "8.3416"],
        steps=[*_stats(_X), ("LN(x)", normed), ("x_out = x + LN(x)", out), ("output mean", float(np.mean(out)))],
        note=f"The seed's \"σ = 5\" and \"/5\" are √5 ≈ {math.sqrt(5):.7f} with the root sign lost in extraction; "
             "its decimals use √5 and are right.",
    )


def ex3_degenerate() -> Example:
    """LN of a constant vector (5,5,5,5): 0/0 with ε = 0, the zero vector with ε = 1e-5."""
    x = np.full(4, 5.0)
    out = layer_norm(x, eps=1e-5)
    nan_out = layer_norm(x, eps=0, allow_degenerate=True)
    try:
        layer_norm(x, eps=0)
        message = None
    except DegenerateInputError as err:
        message = str(err)
    return _number_example(
        "004-ex3", "004", "Ex 3: degenerate input, all features equal",
        {"x": x, "eps": [0, 1e-5]}, out, ["0", "0", "0", "0"],
        steps=[*_stats(x), ("ε = 0: LN(x) (opt-in allow_degenerate=True)", nan_out),
               ("ε = 0 by default", message), ("denominator √(0 + 1e-5)", math.sqrt(1e-5)),
               ("ε = 1e-5: LN(x)", out)],
        note="The seed's \"0 + 10^-5 ≈ 0.00316\" is √(0 + 10^-5), root sign lost in extraction.",
    )


_F4 = np.array([100.0, -100.0, 100.0, -100.0])


def ex4_post_ln_large_sublayer() -> Example:
    """Post-LN with x = 0, F(x) = (100,−100,100,−100), ε = 1e-5: output ≈ (1,−1,1,−1), backward ≈ 1/100."""
    x = np.zeros(4)
    sublayer = Linear(np.zeros((4, 4)), _F4)
    out = post_ln(x, sublayer)
    jac = layer_norm_jacobian(x + sublayer(x))
    factor = float(np.linalg.norm(jac, 2))
    return _number_example(
        "004-ex4-post-ln", "004", "Ex 4: a large sublayer output through Post-LN",
        {"x": x, "F(x)": _F4, "eps": 1e-5}, [*out, factor], ["1", "-1", "1", "-1", "0.01"],
        steps=[("z = x + F(x)", x + _F4), *_stats(x + _F4), ("x_out = LN(z)", out),
               ("backward factor γ/√(σ² + ε) (largest singular value of J_LN)", factor)],
        note="The seed's \"σ² + ε = 10000.00001 ≈ 100\", \"γ/(σ² + ε)\" and \"1/10000 = 1/100\" are "
             "√(σ² + ε) with the root sign lost; read so, its numbers are right.",
    )


def ex4_pre_ln_large_sublayer() -> Example:
    """Pre-LN with the same x = 0 and the same F: F sees LN(0) = 0, so x_out = F(0)."""
    x = np.zeros(4)
    sublayer = Linear(np.zeros((4, 4)), _F4)
    zero_bias = MLP.random(4, 16, seed=4)
    out_same_f = pre_ln(x, sublayer)
    out_zero_bias = pre_ln(x, zero_bias)
    return _number_example(
        "004-ex4-pre-ln", "004", "Ex 4: the same sublayer through Pre-LN",
        {"x": x, "F(0)": _F4, "eps": 1e-5}, out_same_f, ["0", "0", "0", "0"],
        steps=[("LN(0) with ε = 1e-5", layer_norm(x)), ("x_out = 0 + F(LN(0)) with the F of Post-LN", out_same_f),
               ("x_out with a zero-bias GELU MLP instead (F(0) = 0)", out_zero_bias)],
        note="Inconsistent in the seed: both placements feed F the zero vector (x = 0 in Post-LN, "
             "LN(0) = 0 in Pre-LN), so the same F cannot give (100, −100, 100, −100) in one and 0 in "
             "the other. With the F of the Post-LN case, Pre-LN writes the full (100, −100, 100, −100) "
             "into the unnormalized stream: Pre-LN does not gate a large F; it leaves the stream "
             "unnormalized. The seed's 0 holds only for a different, zero-bias F.",
    )


def ex5_plus_one_highway() -> Example:
    """Scalar toy F(x) = 0.3x: Pre-LN derivative 1.3, ``1.3^10``; Post-LN 0.5·1.3 = 0.65, ``0.65^10``."""
    pre, post = 1 + 0.3, 0.5 * (1 + 0.3)
    pre10, post10 = gradient_factor(pre, 10), gradient_factor(post, 10)
    return _number_example(
        "004-ex5", "004", "Ex 5: the gradient \"+1\" highway",
        {"dF/dx": 0.3, "1/σ": 0.5, "layers": 10}, [pre, pre10, post, post10, 1 / post10],
        ["1.3", "13.7858...", "0.65", "0.013462...", "74"],
        steps=[("Pre-LN per layer 1 + 0.3", pre), ("1.3^10", pre10), ("Post-LN per layer 0.5 × 1.3", post),
               ("0.65^10", post10), ("shrink 1 / 0.65^10", 1 / post10)],
        note=f"\"0.013462...\" is truncated; 0.65^10 = {post10:.7f} agrees.",
    )


def ex6_residual_growth() -> Example:
    """Var(x_N) = N v for N independent additions of variance v = 1; std = √N for N = 1, 24, 96."""
    depths = [1, 24, 96]
    std = [residual_std(n) for n in depths]
    monte_carlo = [residual_variance_monte_carlo(n, 1.0, samples=20_000, seed=6) for n in depths]
    return _number_example(
        "004-ex6", "004", "Ex 6: residual-stream growth over depth",
        {"branch_variance": 1.0, "N": depths}, std, ["1", "4.8990", "9.7980"],
        steps=[("Var(x_N) = N v", [residual_variance(n) for n in depths]), ("σ_stream = √N", std),
               ("Monte Carlo variance (20 000 samples, seed 6)", monte_carlo)],
        note="The seed's \"σ_stream = N\", \"σ = 24\" and \"σ = 96\" are √N, √24, √96 with the root "
             "sign lost; its decimals are the square roots and are right.",
    )


def ex7_ninety_six_layers() -> Example:
    """The 96-layer word problem: ``0.65^96`` (Post-LN) against a Pre-LN factor ≥ 1."""
    value = gradient_factor(0.65, 96)
    return _number_example(
        "004-ex7", "004", "Ex 7: choosing the architecture for 96 layers",
        {"per_layer": 0.65, "layers": 96}, value, "1.9e-18",
        steps=[("96 log10 0.65", 96 * math.log10(0.65)), ("0.65^96", value),
               ("Pre-LN per-layer 1.3 over 96 layers", gradient_factor(1.3, 96))],
        note=f"0.65^96 ≈ {value:.2g}, not 1.9e-18. The decision (Pre-LN) stands.",
    )


def ex8_exam_twist() -> Example:
    """LN(x) for x = (−2,0,2,4), γ = 2, β = 1, ε = 0: signs kept, mean β, variance γ²."""
    x = np.array([-2.0, 0.0, 2.0, 4.0])
    gamma, beta = np.full(4, 2.0), np.full(4, 1.0)
    out = layer_norm(x, gamma, beta, eps=0)
    return _number_example(
        "004-ex8", "004", "Ex 8: exam twist with γ, β and a sign trap",
        {"x": x, "gamma": gamma, "beta": beta, "eps": 0}, out, ["-1.6833", "0.1056", "1.8944", "3.6833"],
        steps=[*_stats(x), ("(x − μ)/σ", layer_norm(x, eps=0)), ("γ (x − μ)/σ + β", out),
               ("output mean", float(np.mean(out))), ("output variance", float(np.var(out)))],
        note="The seed's \"σ = 5\" and \"/5\" are √5, root sign lost in extraction.",
    )


def selfcheck1_post_ln_statistics() -> Example:
    """Self-check 1: Post-LN pins the output's mean to 0 and variance to 1 (Ex 1's output)."""
    out = ex1_post_ln_forward().computed
    return _number_example(
        "004-selfcheck-1", "004", "Self-check 1: Post-LN output statistics",
        {"x_out": out}, [float(np.mean(out)), float(np.var(out))], ["0", "1"],
        steps=[("mean of Ex 1's output", float(np.mean(out))), ("variance of Ex 1's output", float(np.var(out)))],
    )


def selfcheck2_stream_grows() -> Example:
    """Self-check 2: the un-normalized Pre-LN stream's variance grows like N (Monte Carlo / N)."""
    depths = [1, 24, 96]
    ratios = [residual_variance_monte_carlo(n, 1.0, samples=20_000, seed=2) / n for n in depths]
    # Standard error of a sample variance over N is about sqrt(2/samples) = 1 %; allow 5 standard errors.
    holds = all(abs(r - 1) < 5 * math.sqrt(2 / 20_000) for r in ratios)
    return _claim_example(
        "004-selfcheck-2", "004", "Self-check 2: the Pre-LN stream accumulates",
        {"branch_variance": 1.0, "N": depths, "samples": 20_000}, ratios, "variance grows like N", holds,
        steps=[("Monte Carlo Var(x_N) / N", ratios)],
    )


def selfcheck3_epsilon() -> Example:
    """Self-check 3: ε prevents 0/0 on a constant vector."""
    x = np.full(4, 5.0)
    with_eps = layer_norm(x, eps=1e-5)
    without = layer_norm(x, eps=0, allow_degenerate=True)
    holds = bool(np.all(np.isfinite(with_eps)) and not np.any(np.isfinite(without)))
    return _claim_example(
        "004-selfcheck-3", "004", "Self-check 3: the role of ε",
        {"x": x}, {"eps=0": without, "eps=1e-5": with_eps}, "ε prevents division by zero when σ = 0", holds,
        steps=[("LN(x), ε = 0", without), ("LN(x), ε = 1e-5", with_eps)],
    )


def selfcheck4_identity_term() -> Example:
    """Self-check 4: Pre-LN's Jacobian minus ``J_F J_N`` is exactly ``I``; Post-LN has no such term."""
    pre = pre_ln_jacobian(_X002, _MLP002)
    branch = _MLP002.jacobian(layer_norm(_X002)) @ layer_norm_jacobian(_X002)
    gap = float(np.max(np.abs(pre - branch - np.eye(4))))
    post = post_ln_jacobian(_X002, _MLP002)
    return _claim_example(
        "004-selfcheck-4", "004", "Self-check 4: the protected \"+1\" term",
        {"x": _X002, "sublayer": "GELU MLP 4→16→4, seed 2"}, gap, "the +1 identity Jacobian of the residual add",
        gap < 1e-12,
        steps=[("max |J_pre − J_F J_N − I|", gap),
               ("Post-LN: smallest singular value of J_post (J_N kills a direction)", float(np.linalg.svd(post, compute_uv=False)[-1]))],
    )


def selfcheck5_ten_layers() -> Example:
    """Self-check 5: 1.3^10 against 0.65^10."""
    values = [gradient_factor(1.3, 10), gradient_factor(0.65, 10)]
    return _number_example(
        "004-selfcheck-5", "004", "Self-check 5: 1.3 against 0.65 over 10 layers",
        {"per_layer": [1.3, 0.65], "layers": 10}, values, ["13.79", "0.0135"],
        steps=[("1.3^10", values[0]), ("0.65^10", values[1])],
    )


_REGISTRY: list[Callable[[], Example]] = [
    seed000_pre_ln_gradient, seed000_post_ln_gradient,
    seed001_three_blocks, seed001_twenty_four_layers, seed001_practice,
    seed002_block_jacobians, seed002_zero_homogeneity, seed002_unrolled_residual,
    ex1_post_ln_forward, ex2_pre_ln_forward, ex3_degenerate, ex4_post_ln_large_sublayer,
    ex4_pre_ln_large_sublayer, ex5_plus_one_highway, ex6_residual_growth, ex7_ninety_six_layers,
    ex8_exam_twist, selfcheck1_post_ln_statistics, selfcheck2_stream_grows, selfcheck3_epsilon,
    selfcheck4_identity_term, selfcheck5_ten_layers,
]


@lru_cache(maxsize=1)
def _computed() -> tuple[Example, ...]:
    return tuple(make() for make in _REGISTRY)


def all_examples() -> list[Example]:
    """Every worked example, in the order of the seeds (computed once per process)."""
    return list(_computed())


def get_example(example_id: str) -> Example:
    """The example with this ``id``."""
    for example in all_examples():
        if example.id == example_id:
            return example
    raise ValueError(f"example_id: no worked example {example_id!r}; see `lnworked examples`")
