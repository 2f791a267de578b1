"""Conceptual errata: sentences of the source texts that are wrong or misleading as stated.

The arithmetic errata live on the worked examples (:mod:`lnworked.examples`, ``agrees``).
These are the other kind: a statement whose numbers may be fine but whose claim is not. Each
:class:`ConceptualErratum` holds the source text's words and where they are (``location``), one
sentence a student can check that shows why they are wrong (``check``), a verdict (``"wrong"`` or
``"misleading"``), what is true, and its evidence: named values that the library computes
when the record is made (``evidence``) and/or the papers that say it (``cites``, keys of
``book/references.bib``). ``chapter`` and ``section`` name where the book teaches the topic;
the errata page links there and the chapter links back to ``concept-<id>``.

The ``truth`` and ``check`` texts are templates: ``{name}`` fields are filled from ``evidence`` (formatted
by :func:`lnworked.display.format_value`), so no computed number is typed here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from types import MappingProxyType
from typing import Callable, Mapping

import numpy as np

from lnworked.blocks import (MLP, Linear, autodiff_jacobian, input_gradient, jacobian_singular_value_samples,
                             post_ln_jacobian, pre_ln, pre_ln_jacobian)
from lnworked.backward_gains import backward_gains
from lnworked.depth import gradient_factor, gradient_norm_profile, residual_std
from lnworked.display import SOURCE_NAMES, format_value
from lnworked.norms import layer_norm, layer_norm_jacobian

__all__ = ["ConceptualErratum", "conceptual_errata", "get_conceptual_erratum", "conceptual_erratum_markdown",
           "errata_summary_markdown"]

VERDICTS = ("wrong", "misleading")

#: The most words each half of a record's ``summary`` (the errata page's summary table) may have.
SUMMARY_WORDS = 8


@dataclass(frozen=True)
class ConceptualErratum:
    """One statement of a source text that is wrong or misleading as stated."""

    id: str
    title: str
    source: str
    quote: str
    verdict: str
    truth: str
    evidence: Mapping[str, float]
    cites: tuple[str, ...]
    chapter: str
    section: str | None = None
    location: str = ""
    check: str = ""
    summary: tuple[str, str] = ()

    def __post_init__(self):
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict: must be one of {VERDICTS}, got {self.verdict!r}")
        if self.summary and (len(self.summary) != 2
                             or any(not 0 < len(part.split()) <= SUMMARY_WORDS for part in self.summary)):
            raise ValueError(f"summary: must be (claim, truth), each 1 to {SUMMARY_WORDS} words, got {self.summary!r}")
        object.__setattr__(self, "evidence", MappingProxyType(dict(self.evidence)))

    @property
    def anchor(self) -> str:
        """The label of this erratum on the errata page: ``concept-<id>``."""
        return f"concept-{self.id}"

    def truth_text(self, digits: int = 4) -> str:
        """:attr:`truth` with every ``{name}`` filled from :attr:`evidence`."""
        return self.truth.format(**{k: format_value(v, digits) for k, v in self.evidence.items()})

    def check_text(self, digits: int = 4) -> str:
        """:attr:`check` (one sentence a student can verify) with ``{name}`` filled from :attr:`evidence`."""
        return self.check.format(**{k: format_value(v, digits) for k, v in self.evidence.items()})


# --- evidence: each function computes named values with the library ----------------------


def _jacobian_eigenvalues() -> dict:
    """Eigenvalues of J_N (γ = 1, ε = 1e-5) at source text 000's x = (2, −1) and at (1, 3, 5, 7)."""
    d2 = np.linalg.eigvalsh(layer_norm_jacobian(np.array([2.0, -1.0]), eps=1e-5))
    d4 = np.linalg.eigvalsh(layer_norm_jacobian(np.array([1.0, 3.0, 5.0, 7.0]), eps=1e-5))
    return {"d2_largest": float(np.abs(d2).max()), "d4_smallest": float(np.abs(d4).min()),
            "d4_largest": float(d4.max()), "d4_inverse_sigma": 1 / math.sqrt(5.0 + 1e-5)}


@lru_cache(maxsize=None)
def _spread(layers: int) -> dict:
    """Chapter 3's depth table for Post-LN at ``L = layers``: ``||g_0|| / ||g_L||`` over seeds.

    A separate ``layers``-block random stack per seed (seeds 0 .. 7, width 16), its per-block
    gains from :func:`backward_gains` multiplied out by :func:`gradient_norm_profile`: the
    computation of chapter 3's table (``explore.random_stack_gains`` is the same call), so an
    erratum quotes the table's own statistic, the typical value (the geometric mean over seeds,
    ``exp(mean(log ratio))``), and its range.
    """
    ratios = np.array([gradient_norm_profile(row)[0] for row in backward_gains("post", layers)["gain"]])
    typical = float(np.exp(np.mean(np.log(ratios))))
    return {"typical": typical, "per_layer": typical ** (1 / layers),
            "min": float(ratios.min()), "max": float(ratios.max())}


def _eigenvalue_products() -> dict:
    spread = _spread(24)
    a = np.array([[0.0, 2.0], [0.0, 0.0]])
    return {"typical_24": spread["typical"], "per_layer_24": spread["per_layer"], "toy_24": gradient_factor(0.6, 24),
            "product_eigenvalue": float(np.max(np.linalg.eigvals(a @ a.T).real))}


def _ex1_pattern() -> dict:
    """Source text 004's Ex 1: what F = (1, −1, 1, −1) changes in LN(x + F) against LN(x), x = (1, 3, 5, 7)."""
    x, f = np.array([1.0, 3.0, 5.0, 7.0]), np.array([1.0, -1.0, 1.0, -1.0])
    difference = layer_norm(x + f, eps=0) - layer_norm(x, eps=0)
    return {"difference": difference, "signs": " ".join("+" if v > 0 else "−" for v in difference)}


def _ex2_centre() -> dict:
    """Source text 004's Ex 2 with a random zero-bias GELU MLP as F: the mean of x + F(LN(x)), seeds 0..7."""
    x = np.array([1.0, 3.0, 5.0, 7.0])
    means = [float(np.mean(x + MLP.random(4, 16, seed=seed)(layer_norm(x, eps=0)))) for seed in range(8)]
    return {"x_mean": float(np.mean(x)), "seed0_mean": means[0],
            "largest_shift": max(abs(m - float(np.mean(x))) for m in means)}


def _post_formula() -> dict:
    """Source text 000's Post-LN step in the chain rule's order, against ``jax.jacfwd`` of the block."""
    x, g, sublayer = np.array([2.0, -1.0]), np.array([0.5, 0.5]), Linear(0.1 * np.eye(2))
    analytic = input_gradient(post_ln_jacobian(x, sublayer), g)
    auto = input_gradient(autodiff_jacobian("post", x, sublayer), g)
    return {"gradient_norm": float(np.linalg.norm(analytic)), "autodiff_gap": float(np.max(np.abs(analytic - auto)))}


@lru_cache(maxsize=None)
def _pre_ln_singular_values() -> dict:
    pre, _, _ = jacobian_singular_value_samples()
    smallest = pre[:, -1]
    return {"inputs": pre.shape[0], "count_below_one": int(np.sum(smallest < 1)),
            "smallest": float(smallest.min())}


def _cross_term() -> dict:
    """Two Pre-LN blocks: ``(I + A_2)(I + A_1) = I + A_1 + A_2 + A_2 A_1``; the size of ``A_2 A_1``."""
    x = np.array([0.7, -1.2, 2.0, 0.4])
    f1, f2 = MLP.random(4, 16, seed=11), MLP.random(4, 16, seed=12)
    j1 = pre_ln_jacobian(x, f1)
    x1 = x + f1(layer_norm(x))
    j2 = pre_ln_jacobian(x1, f2)
    a1, a2 = j1 - np.eye(4), j2 - np.eye(4)
    return {"cross": float(np.linalg.norm(a2 @ a1, 2)), "branch_1": float(np.linalg.norm(a1, 2)),
            "branch_2": float(np.linalg.norm(a2, 2))}


def _post_ln_backward_at_init() -> dict:
    """Largest singular value of J_N at z = x + F(x), x ~ N(0, I_64), F a random GELU MLP 64→256→64."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=64)
    z = x + MLP.random(64, 256, seed=0)(x)
    return {"factor": float(np.linalg.norm(layer_norm_jacobian(z), 2)), "sigma": float(np.std(z)),
            "ex4_factor": float(np.linalg.norm(layer_norm_jacobian(np.array([100.0, -100.0, 100.0, -100.0])), 2))}


def _highway() -> dict:
    return {"scalar_negative": 1 + (-0.5), **_pre_ln_singular_values()}


def _unbounded() -> dict:
    return {"std_96": residual_std(96), "std_10000": residual_std(10_000), "std_1e6": residual_std(1_000_000)}


def _final_norm(layers: int = 48, width: int = 64) -> dict:
    """A random Pre-LN stack (GELU MLPs ``width → 4 width → width``, seeds 0..layers−1, x₀ ~ N(0, I)
    with seed 0): the stream's spread at the bottom and top, and the spread of the final norm's output."""
    x = np.random.default_rng(0).normal(size=width)
    start = float(np.std(x))
    for layer in range(layers):
        x = pre_ln(x, MLP.random(width, 4 * width, seed=layer))
    return {"layers": layers, "stream_0": start, "stream_top": float(np.std(x)),
            "final": float(np.std(layer_norm(x)))}


def _toy_depth() -> dict:
    spread = _spread(96)
    return {"toy_96": gradient_factor(0.65, 96), "toy_pre_96": gradient_factor(1.3, 96), "typical_96": spread["typical"], "min_96": spread["min"],
            "max_96": spread["max"]}


# --- the records ----------------------------------------------------------------------------

_SPECS: list[tuple[dict, Callable[[], dict] | None]] = [
    (dict(id="000-eigenvalues", title="LayerNorm's Jacobian is not close to the identity", source="000", verdict="wrong",
          chapter="chapters/02_placements", section="ch2-jacobian-ln",
          location="the post-norm case, the paragraph under the formula",
          quote="In a well-behaved layer, J_LN has eigenvalues close to 1 and this is fine.",
          check="Add the same number c to every feature: the mean moves by c and the spread does not change, so "
                "LN(x + c·1) = LN(x) and J_LN·1 = 0. Every LayerNorm Jacobian has the eigenvalue 0, in every layer.",
          truth="LayerNorm's Jacobian always has the eigenvalue 0 along (1, …, 1) and one near 0 along x̂ "
                "(scaling x changes nothing); only the remaining d − 2 eigenvalues are γ/√(σ² + ε), close to 1 "
                "when the spread σ of the input is close to γ (at x = (1, 3, 5, 7), σ² = 5, they are {d4_largest}). "
                "At the text's own x = (2, −1), d = 2 leaves no remaining direction: the largest |eigenvalue| is "
                "{d2_largest}, so J_LN is zero to within ε, and the example's [0.5, 0.5], which lies along "
                "(1, 1), is removed entirely.",
          cites=()), _jacobian_eigenvalues),
    (dict(id="000-eigenvalue-products", title='Eigenvalues of a product are not products of eigenvalues', source="000",
          verdict="misleading", chapter="chapters/03_gradients_through_depth",
          location="the post-norm case, the paragraph under the formula",
          quote="Stack 24 such layers, and those sub-unit eigenvalues multiply together, creating the gradient "
                "attenuation we visualized earlier.",
          check="A = [[0, 2], [0, 0]] and its transpose Aᵀ each have only the eigenvalue 0, yet their product "
                "A Aᵀ has the eigenvalue {product_eigenvalue}: multiply them out.",
          truth="The eigenvalues of a product of matrices that do not commute are not the products of "
                "their eigenvalues: the Jacobians rotate the gradient as well as shrink it, and (I + J_F) "
                "re-amplifies what J_N shrinks. In the book's random Post-LN stack (width 16, 8 random "
                "seeds, a 24-block stack) the typical value over seeds (their geometric mean, as in chapter 3's depth "
                "table) of the input gradient relative to the readout's, ‖g₀‖/‖g_L‖, is {typical_24} (its 24th root is "
                "{per_layer_24}; chapter 3's random-stack explorer shows depth 24 seed by seed), "
                "not the steady-factor toy's 0.6²⁴ = {toy_24}.",
          cites=()), _eigenvalue_products),
    (dict(id="000-post-formula-order", title='The Post-LN gradient, in the right order', source="000", verdict="wrong",
          chapter="chapters/03_gradients_through_depth",
          location="the post-norm case, the formula for ∂L/∂x₂",
          quote="∂L/∂x₂ = J_LN · [0.5, 0.5]ᵀ · (1 + J_s)",
          check="J_LN · [0.5, 0.5]ᵀ is a column vector (2 × 1), and a 2 × 1 vector times the 2 × 2 matrix "
                "(1 + J_s) on its right is undefined: the shapes do not match.",
          truth="The chain rule puts (I + J_s)ᵀ at the far end: ∂L/∂x = (I + J_s)ᵀ J_LNᵀ g. The "
                "upstream gradient g first crosses LayerNorm's Jacobian, then the block's (I + J_s). For the "
                "text's own x = (2, −1), g = (0.5, 0.5), J_s = 0.1 I this gives a gradient of length "
                "{gradient_norm}, because g lies in J_LN's null space; "
                "automatic differentiation of the block (jax.jacfwd) gives the same vector, to within {autodiff_gap}.",
          cites=()), _post_formula),
    (dict(id="001-at-least-one", title='The identity path does not guarantee a gradient of at least 1', source="001",
          verdict="wrong", chapter="chapters/03_gradients_through_depth",
          location="worked example 1",
          quote="Because pre-norm's residual path is a pure identity, the gradient reaching x₀ is at least 1.0 "
                "from the identity path alone, plus whatever flows through the sub-layer branches.",
          check="In one dimension a block x + F(x) with slope F′ = −0.5 has derivative 1 + F′ = {scalar_negative}: "
                "what flows through the branch is added, and an added negative number makes the total smaller than 1.",
          truth="The identity path delivers the upstream gradient g itself, but the branches add vectors "
                "that can point against it, so the total can be smaller than g. Over {inputs} random inputs "
                "the smallest singular value of a Pre-LN block Jacobian I + J_F J_N is below 1 at "
                "{count_below_one} of them (smallest {smallest}): for some gradients one Pre-LN block "
                "shrinks them.",
          cites=()), _highway),
    (dict(id="001-factor-below-one", title="A norm's backward factor is not typically below 1", source="001",
          verdict="misleading", chapter="chapters/03_gradients_through_depth",
          location="worked example 1",
          quote="In a post-norm stack, each of the 3 layer-norms multiplies the gradient by some factor "
                "typically less than 1.",
          check="On the directions it keeps, LayerNorm multiplies the gradient by γ/√(σ² + ε): with γ = 1 this is "
                "below 1 only when the spread σ of the norm's input is above 1, and the block's (I + J_F) then "
                "multiplies back.",
          truth="In the book's random Post-LN stack of 24 blocks (width 16, 8 seeds), ‖g₀‖/‖g_L‖, the "
                "input gradient relative to the readout's, has a typical value (the geometric mean over seeds) of "
                "{typical_24} (its 24th root is {per_layer_24}, near 1; chapter 3's random-stack explorer shows depth "
                "24 seed by seed): the 0.6 per layer of the text is an assumption, "
                "not a typical value.",
          cites=()), _eigenvalue_products),
    (dict(id="001-never-multiplied", title='Pre-LN branch Jacobians do multiply', source="001", verdict="wrong",
          chapter="chapters/03_gradients_through_depth",
          location="“The mechanics”, the paragraph “In words”",
          quote="In pre-norm, the gradient w.r.t. x_ℓ has a clean, direct identity path back to the first layer, "
                "with sub-layer gradients only ever added on top, never multiplied in.",
          check="Multiply two Pre-LN block Jacobians out: (I + A₂)(I + A₁) = I + A₁ + A₂ + A₂A₁, and the last "
                "term is a product of the branches' Jacobians A_ℓ = J_F J_N.",
          truth="The identity path is there, and so are products of branch Jacobians. For two random GELU-MLP "
                "Pre-LN blocks the cross term A₂A₁ has norm {cross}, against {branch_1} and {branch_2} for the "
                "branches themselves.",
          cites=()), _cross_term),
    (dict(id="001-warmup-cause", title='Why Post-LN needs warmup', source="001", verdict="misleading",
          chapter="chapters/05_why_sensitive", section="ch5w-answer",
          location="worked example 2",
          quote="The gradient reaching the earliest layers is effectively zero, and those layers barely update "
                "without intervention. This is precisely why the original post-norm transformer needed a "
                "careful learning-rate warmup schedule to avoid diverging before normalization statistics "
                "stabilized.",
          check="Read the abstract of Xiong et al. (2020): the mechanism they prove is that the gradients of the "
                "parameters near the output are large at initialisation, so a large learning rate on them makes "
                "training unstable; and Liu et al. (2020) write that fixing gradient vanishing alone cannot "
                "stabilise Post-LN training.",
          truth="The direction of the text's picture is right: Xiong et al. (2020) find Post-LN's gradient norms "
                "largest near the output and smaller toward the input at initialisation (their theorem bounds "
                "the parameters of the last layer; their section 3.3 gives a preliminary extension to the "
                "parameters of the other layers). But the reason they "
                "give for warmup is the size of the first updates near the output, and they call warmup "
                "practically helpful for avoiding it, not the only remedy. Liu et al. (2020) add that vanishing "
                "gradients are not the direct cause of Post-LN's instability: its strong dependence on its "
                "residual branches amplifies small parameter changes. On the book's own tiny model, chapter 7 "
                "measured otherwise than Xiong et al.: the gradients at initialisation are of the same order in "
                "both placements ([the gradient at initialisation](#ch5w-xiong)); what differs is how far AdamW's "
                "first update, about the learning rate per parameter, moves Post-LN's output "
                "([the answer](#ch5w-answer)). And \"effectively zero\" is the scalar toy's "
                "0.6²⁴, not a measured gradient (see [the erratum on that factor](#concept-001-factor-below-one)).",
          cites=("xiong2020layer", "liu2020admin")), None),
    (dict(id="001-deep-post-ln", title='Deep Post-LN does train, with residual scaling', source="001",
          verdict="misleading", chapter="chapters/06_wider_family", section="ch6-deepnorm",
          location="the opening paragraph",
          quote="[Moving the norm] is the difference between a 100-layer transformer training smoothly and one that "
                "barely trains at all without extremely careful, slow learning-rate warmup.",
          check="DeepNet (Wang et al., 2022) keeps the norm after the add, as Post-LN does, and trains "
                "transformers of up to 1,000 layers: the placement alone does not decide whether a deep stack trains.",
          truth="Plain Post-LN at the usual initialisation is indeed hard to train deep, but with residual scaling "
                "at initialisation Post-LN-style blocks train far deeper: Admin (Liu et al., 2020) rescales the "
                "residual branch to stabilise deep Post-LN training, and DeepNorm (Wang et al., 2022) up-weights "
                "the residual and initialises the branches small.",
          cites=("liu2020admin", "wang2022deepnet")), None),
    (dict(id="001-final-norm", title="A final norm does not control the stream's growth", source="001",
          verdict="misleading", chapter="chapters/02_placements", section="ch2-block",
          location="“What this means in practice”",
          quote="pre-norm's unnormalized, ever-growing residual stream can itself grow to very large magnitudes at "
                "great depth, which some newer normalization variants (like a final normalization layer at the very "
                "end of the stack) are specifically designed to control.",
          check="The final norm sits after the last block, so no block's input x_ℓ changes when it is added or "
                "removed: it rescales only the vector the readout sees, not the stream inside the stack.",
          truth="In a random Pre-LN stack of {layers} blocks (width 64) the stream's spread grows from {stream_0} "
                "to {stream_top} with or without a final norm; the final norm's output has spread {final}. It is "
                "not new either: GPT-2 (2019) already added it after the last block, and the same paper scales "
                "the residual layers' weights at initialisation by 1/√S to account for the accumulation on the "
                "residual path with depth, a change inside the stack. Peng's article (002) gives the final norm its actual job: a stable scale for the "
                "language-model head.",
          cites=("radford2019language",)), _final_norm),
    (dict(id="004-ex1-pattern", title="Ex 1: the staircase that survives is x's, not F's", source="004",
          verdict="wrong", chapter="chapters/02_placements",
          location="Ex 1, the Verify line",
          quote="Notice the pattern of F survived (the last two entries are larger), but its absolute scale was erased.",
          check="F(x) = (1, −1, 1, −1) alternates; it has no \"last two larger\" pattern. The rising staircase of the "
                "output comes from x = (1, 3, 5, 7).",
          truth="What F changes is seen by comparing with the output without F: LN(x + F(x)) − LN(x) = {difference}, "
                "whose signs ({signs}) are F's alternating pattern. F's pattern survives in that difference; the "
                "\"last two larger\" shape is x's.",
          cites=()), _ex1_pattern),
    (dict(id="004-ex2-centre", title="Ex 2: Pre-LN keeps the stream's mean only when the write has mean 0",
          source="004", verdict="misleading", chapter="chapters/02_placements",
          location="Ex 2, the description of figure s03",
          quote="This is the visual proof that the Pre-LN highway preserves the stream's centre.",
          check="The output is x + F(LN(x)), and its mean is mean(x) + mean(F(LN(x))): the mean stays 4 only "
                "because the chosen F is the identity, whose output LN(x) has mean 0.",
          truth="With a random GELU MLP as F (zero biases, seeds 0 to 7) the stream's mean moves from {x_mean} by "
                "up to {largest_shift} in one block (seed 0: to {seed0_mean}). The highway carries x through "
                "unchanged; the write F(LN(x)) is added on top, with whatever mean it has.",
          cites=()), _ex2_centre),
    (dict(id="004-ex4-warmup", title="Ex 4's 1/100 is not why Post-LN needs warmup", source="004",
          verdict="misleading", chapter="chapters/04_forward_scale",
          location="Ex 4, the Post-LN step and the Verify line",
          quote="The backward Jacobian now carries a factor γ/(σ² + ε) ≈ 1/100, shrinking gradients by 100× … This "
                "is exactly why Post-LN needs learning-rate warmup and Pre-LN is more forgiving.",
          check="The 1/100 needs a sum x + F(x) of spread 100, but at a standard initialisation x has spread about 1 "
                "and a freshly initialised F writes about as much: the sum's spread is of order 1, and so is 1/σ.",
          truth="For x ~ N(0, I) of width 64 and a random GELU MLP, σ = {sigma} and the norm's backward factor is "
                "{factor} (Ex 4's sum of spread 100 gives {ex4_factor}). And the reason Xiong et al. (2020) give for "
                "warmup is large gradients near the output at initialisation, not a small backward factor; on the "
                "book's own tiny model chapter 7 measured even that otherwise: the gradients at initialisation are "
                "of the same order in both placements ([the gradient at initialisation](#ch5w-xiong)), and what "
                "differs is how far AdamW's first update moves Post-LN's output ([the answer](#ch5w-answer)).",
          cites=("xiong2020layer",)), _post_ln_backward_at_init),
    (dict(id="004-ex5-highway", title='The "+1" is not a factor of at least 1', source="004", verdict="misleading",
          chapter="chapters/03_scalar_toy", section="ch3-highway",
          location="Ex 5, the Pre-LN steps",
          quote="The 1 is the highway (the straight orange arrow in figure s01) — it cannot be multiplied away. … "
                "Because each is ≥ 1, the signal survives depth.",
          check="Each factor is 1 + F′, and it is ≥ 1 only when F′ ≥ 0: with F′ = −0.5 the same toy gives "
                "1 + F′ = {scalar_negative}.",
          truth="For vectors the block Jacobian I + J_F J_N is a matrix whose smallest "
                "singular value is below 1 at {count_below_one} of {inputs} random inputs "
                "(smallest {smallest}). What survives at any depth is the bare I in the expanded product, one "
                "path among many, not a factor of at least 1.",
          cites=()), _highway),
    (dict(id="004-ex6-bounded", title='√L growth is not bounded', source="004", verdict="wrong",
          chapter="chapters/04_forward_scale",
          location="Ex 6, the Verify line",
          quote="Growth is ∝ √N [the source prints ∝ N, its root sign missing], bounded and predictable — not the exponential "
                "blow-up a naive reader might forecast.",
          check="√L has no upper bound: √10,000 = {std_10000} and √1,000,000 = {std_1e6}.",
          truth="√L is slow, not bounded: {std_96} at 96 independent unit-variance writes. The law itself holds "
                "only for independent writes of fixed variance, as at initialisation; during training writes "
                "correlate and grow (Peng's article, 002, says the growth law depends on initialisation, training, "
                "correlations and residual scaling, and the Peri-LN paper measures Pre-LN hidden-state variance "
                "growing far faster than that with depth during training, and links Pre-LN to massive activations).",
          cites=("kim2025periln",)), _unbounded),
    (dict(id="004-ex7-toy-depth", title="0.65⁹⁶ is the toy's number, not a real stack's", source="004",
          verdict="misleading", chapter="chapters/03_scalar_toy", section="ch3-ninety-six",
          location="Ex 7, steps 1 and 2",
          quote="Over 96 layers a per-layer factor 0.65 gives 0.65⁹⁶ ≈ 1.9 × 10⁻¹⁸ — effectively zero gradient in "
                "early layers. … A per-layer factor ≥ 1 keeps early-layer gradients alive across all 96 layers.",
          check="By the toy's own numbers the Pre-LN factor of Ex 5, 1.3, gives 1.3⁹⁶ = {toy_pre_96} over 96 layers, "
                "an exploding gradient: in the toy a factor ≥ 1 does not keep the gradient healthy either.",
          truth="Both numbers belong to the scalar toy. In the book's random matrix stack (8 seeds, width 16) "
                "Post-LN's input gradient relative to the readout's, ‖g₀‖/‖g_L‖, at depth 96 has a typical value "
                "(the geometric mean over seeds) of {typical_96} (range {min_96} to {max_96}; chapter 3's depth table, "
                "L = 96), "
                "against the toy's {toy_96}. The case for Pre-LN in a single-shot deep run rests on its "
                "robustness to the learning rate and warmup (Xiong et al., 2020; chapter 5's stress test), "
                "not on a 10⁻¹⁸ gradient.",
          cites=("xiong2020layer",)), _toy_depth),
    (dict(id="004-ex7-palm-warmup", title="PaLM did not warm up its learning rate", source="004",
          verdict="misleading", chapter="chapters/06_wider_family", section="ch6-tradeoffs",
          location="Ex 7, the decision",
          quote="though warmup is still used at this scale — GPT-3/PaLM keep it",
          check="PaLM's training setup states its rate: 10⁻² (Adafactor) for the first 10,000 steps, then a "
                "decay as 1/√k at step k; a rate that starts at its full value has no warmup.",
          truth="Of the two Pre-LN models named, GPT-3 does warm up (linearly, over its first 375 million "
                "tokens), PaLM does not: it starts at its full rate. Large Pre-LN models differ in whether they "
                "warm up; the placement makes warmup optional, and some runs still use it.",
          cites=("brown2020language", "chowdhery2022palm")), None),
]


#: Each record's ``summary``: what the source text claims and what is true, in at most 8 words each.
_SUMMARIES = {
    "000-eigenvalues": ("J_LN's eigenvalues are close to 1", "It always has eigenvalues 0 and near 0"),
    "000-eigenvalue-products": ("Stacked layers' sub-unit eigenvalues multiply together",
                                "A product's eigenvalues are not their products"),
    "000-post-formula-order": ("∂L/∂x₂ = J_LN·g·(1 + J_s)", "g crosses the norm, then (I + J_s)"),
    "001-at-least-one": ("Pre-LN's gradient at x₀ is at least 1", "Branches can point against it and shrink it"),
    "001-factor-below-one": ("Each Post-LN norm typically shrinks the gradient",
                             "Random stacks' factor per layer is near 1"),
    "001-never-multiplied": ("Pre-LN branch gradients are never multiplied", "Products of branch Jacobians appear too"),
    "001-warmup-cause": ("Vanishing early gradients are why Post-LN warms up",
                         "Here: first updates move Post-LN's output more"),
    "001-deep-post-ln": ("Deep Post-LN barely trains without careful warmup",
                         "With residual scaling it trains very deep"),
    "001-final-norm": ("A final norm tames the stream's growth", "It rescales the output, not the stream"),
    "004-ex1-pattern": ("F's pattern survived: last entries are larger", "That shape is x's; F's alternates signs"),
    "004-ex2-centre": ("The Pre-LN highway preserves the stream's centre", "Only when the write has mean 0"),
    "004-ex4-warmup": ("A 1/100 backward factor explains Post-LN's warmup",
                       "Typical factors are near 1; warmup's cause differs"),
    "004-ex5-highway": ("Each block's factor is at least 1", "Sampled blocks' smallest singular value falls below 1"),
    "004-ex6-bounded": ("√L growth is bounded", "√L grows without bound, only slowly"),
    "004-ex7-toy-depth": ("0.65⁹⁶: early layers get zero gradient", "A random matrix stack's is far larger"),
    "004-ex7-palm-warmup": ("GPT-3 and PaLM both warm up", "GPT-3 warms up; PaLM does not"),
}


@lru_cache(maxsize=1)
def _records() -> tuple[ConceptualErratum, ...]:
    return tuple(ConceptualErratum(**spec, summary=_SUMMARIES[spec["id"]], evidence=(compute() if compute else {}))
                 for spec, compute in _SPECS)


def errata_summary_markdown(arithmetic=None, conceptual=None) -> str:
    """The errata page's summary: a three-column Markdown table (source text | the text says | what is
    true), one row per erratum, arithmetic ones first, each "what is true" cell linking to its entry.

    An arithmetic erratum (:func:`lnworked.display.errata`) says its title and stated value and is
    answered by the computed value; a conceptual one by its :attr:`ConceptualErratum.summary`.
    """
    from lnworked.display import display_title, errata

    arithmetic = errata() if arithmetic is None else arithmetic
    conceptual = conceptual_errata() if conceptual is None else conceptual
    rows = ["| source | the text says | what is true |", "|---|---|---|"]
    for example in arithmetic:
        rows.append(f"| {example.seed[:3]} | {display_title(example)}: {format_value(example.stated)} "
                    f"| [{format_value(example.computed)}](#erratum-{example.id}) |")
    for record in conceptual:
        claim, truth = record.summary
        rows.append(f"| {record.source} | {claim} | [{truth}](#{record.anchor}) |")
    return "\n".join(rows) + "\n"


def conceptual_errata() -> list[ConceptualErratum]:
    """Every conceptual erratum, in the order of the source texts (computed once per process)."""
    return list(_records())


def get_conceptual_erratum(erratum_id: str) -> ConceptualErratum:
    """The conceptual erratum with this ``id`` (e.g. ``"004-ex6-bounded"``)."""
    for record in _records():
        if record.id == erratum_id:
            return record
    raise ValueError(f"erratum_id: no conceptual erratum {erratum_id!r}")


def conceptual_erratum_markdown(record: ConceptualErratum) -> str:
    """One conceptual erratum as MyST: a ``###`` heading labelled ``concept-<id>`` (so a chapter's
    {ref}`concept-<id>` resolves with the heading as its text), where the source text says it and its
    words, why it is wrong (one sentence a student can check), what is true with the evidence, and a
    link to where the book teaches the topic."""
    where = f"{{ref}}`{record.section}`" if record.section else f"{{doc}}`/{record.chapter}`"
    cited = " ".join(f"{{cite}}`{key}`" for key in record.cites)
    verdict = "Wrong as stated" if record.verdict == "wrong" else "Misleading as stated"
    place = f", {record.location}" if record.location else ""
    lines = [
        f"({record.anchor})=",
        f"### {record.title}",
        "",
        f":::{{admonition}} {verdict}: {SOURCE_NAMES[record.source]} ({record.source}{place})",
        ":class: warning conceptual-erratum",
        "",
        f"> {record.quote}",
        "",
        f"**Why it is wrong.** {record.check_text()}",
        "",
        f"**What is true.** {record.truth_text()}" + (f" {cited}" if cited else ""),
        "",
        f"*Evidence:* {'computed on this page by `lnworked`' if record.evidence else 'the papers cited'}; "
        f"taught in {where}.",
        ":::",
    ]
    return "\n".join(lines) + "\n"
