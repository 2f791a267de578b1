"""The practice families say only true things (issue 11, point 4) in the book's one notation
(issue 12, point 5).

A right answer holds in general, or the stem states the assumptions under which it holds
(the scalar toy; independent writes of fixed variance at initialisation). The tests check
the text for the stated assumptions and the library for the direction of each computed
claim, never a number copied from the code.
"""

from __future__ import annotations

import re

import jax
import numpy as np
import pytest

from lnworked.blocks import jacobian_singular_value_samples
from lnworked.depth import gradient_factor, residual_std
from lnworked.norms import layer_norm, layer_norm_jacobian
from lnworked.practice import FAMILIES, variant
from lnworked.practice.concepts import scalar_block_factors

SEEDS = range(30)


def texts(problem) -> str:
    """Everything a student or an instructor reads: stem, options, solution."""
    return "\n".join([problem.stem, *problem.answer.choices, problem.solution])


def right_choice(problem) -> str:
    return problem.answer.choices[problem.answer.value]


# --- notation (book/notation.md) ------------------------------------------------------------

RETIRED = {
    "\\epsilon (use \\varepsilon)": re.compile(r"(?<!var)\\epsilon\b"),
    "depth written as N": re.compile(r"\\sqrt\{?\s*N\b|x_\{?N\}?\b|\bN v\b|"
                                     r"(?:\$N\$|(?<![\w-])N) (?:additions|layers|blocks|sublayers)\b"),
    "\\mathrm{N} for the norm (use N)": re.compile(r"\\mathrm\{N\}"),
    "layer index i or l": re.compile(r"x_\{?[il]\s*\+\s*1\}?|x_l\b|F_l\b"),
    "'seed' for a source text": re.compile(r"\bseeds? (?:text )?00[0124]\b|\bseed texts?\b|\bthe seeds\b", re.I),
    "dF/dx for a sublayer slope (the book writes F'; f is the toy's per-layer factor)": re.compile(r"dF/dx"),
    "a for the toy's per-layer factor (the book writes f)": re.compile(r"\$a\s*=|\$a\^|\ba\^L\b|\(1 \+ F'\)\^L = a"),
    "r for the norm's factor (r_ell is the write-to-stream ratio; write gamma/sigma)": re.compile(r"\$r\s*=|\br\s*=\s*\\gamma"),
}


@pytest.mark.parametrize("family", list(FAMILIES))
def test_families_use_the_books_notation(family):
    for seed in SEEDS:
        problem = variant(seed, "notation", family)
        text = texts(problem) + FAMILIES[family].concept
        for rule, pattern in RETIRED.items():
            assert not pattern.search(text), (family, seed, rule, pattern.search(text).group(0))


def test_retired_patterns_catch_what_they_retire():
    samples = ["$\\epsilon = 0$", "after N additions", "$\\mathrm{N}(x)$", "$x_{i+1}$", "seed 004", "dF/dx = 0.3", "$a^L = 0.5$", "$r = 0.5$"]
    for (rule, pattern), sample in zip(RETIRED.items(), samples):
        assert pattern.search(sample), rule
    assert not RETIRED["\\epsilon (use \\varepsilon)"].search("\\varepsilon")


# --- the "+1" highway -----------------------------------------------------------------------


def test_no_family_says_the_identity_cannot_be_multiplied_away():
    for family in FAMILIES:
        for seed in SEEDS:
            text = texts(variant(seed, "highway", family))
            assert "cannot be multiplied away" not in text, (family, seed)


def test_pre_ln_gradient_depth_states_the_toy_and_what_fails_outside_it():
    for seed in SEEDS:
        problem = variant(seed, "highway", "pre_ln_gradient_depth")
        slope, layers = problem.params["slope"], problem.params["layers"]
        assert "scalar toy" in problem.stem and "\\ge 0" in problem.stem
        assert slope >= 0
        assert problem.answer.value >= 1  # the toy's claim, under the stem's F' >= 0
        # the contrast the solution quotes: a negative slope shrinks the gradient in the same toy
        shrunk = gradient_factor(1 - slope, layers)
        assert shrunk < 1 <= problem.answer.value
        assert "singular value can be below 1" in problem.solution


def test_a_pre_ln_block_jacobian_can_shrink_a_gradient():
    """What the solutions say outside the toy: I + J_F J_N has singular values below 1 somewhere."""
    pre, _, _ = jacobian_singular_value_samples(d=8, samples=100)
    assert (pre[:, -1] < 1).any()


def test_identity_path_numbers_and_caveat():
    for seed in SEEDS:
        problem = variant(seed, "highway", "identity_path")
        slope, r = problem.params["slope"], problem.params["norm_factor"]
        pre, post = scalar_block_factors(slope, r)
        assert right_choice(problem).startswith("Pre-LN")
        assert "scalar toy" in problem.stem
        assert post < pre  # Post-LN's norm scales the identity term too
        assert "does not guarantee" in problem.solution
    # the caveat's direction: a negative slope puts the Pre-LN toy's factor below 1
    assert scalar_block_factors(-0.3, 0.6)[0] < 1


def test_scalar_block_factors_agree_with_autodiff():
    for slope, r in [(0.3, 0.6), (-0.4, 0.5), (0.0, 0.9)]:
        pre, post = scalar_block_factors(slope, r)
        assert np.isclose(pre, float(jax.grad(lambda x: x + slope * (r * x))(1.0)))
        assert np.isclose(post, float(jax.grad(lambda x: r * (x + slope * x))(1.0)))


# --- steady factors are the toy's assumption --------------------------------------------------


@pytest.mark.parametrize("family", ["post_ln_gradient_depth", "depth_below_threshold"])
def test_steady_factor_families_state_the_toy(family):
    for seed in SEEDS:
        problem = variant(seed, "steady", family)
        assert "scalar toy" in problem.stem and "same" in problem.stem, (family, seed)
        assert "a real stack" in problem.solution or "Outside the toy" in problem.solution


# --- the residual stream --------------------------------------------------------------------


def test_why_stream_grows_states_its_assumptions_and_the_general_reason():
    for seed in SEEDS:
        problem = variant(seed, "stream", "why_stream_grows")
        assert "independent" in problem.stem and "initialisation" in problem.stem
        right = right_choice(problem)
        assert right.startswith("no norm ever rescales the running sum")
        assert "much faster" in problem.solution  # the sqrt law is scoped to independent writes
        assert "controls it" not in problem.solution


def test_why_stream_grows_numbers_point_the_right_way():
    for seed in SEEDS:
        problem = variant(seed, "stream", "why_stream_grows")
        layers, factor = problem.params["additions"], problem.params["factor"]
        std = residual_std(layers, 1.0)
        assert 1 < std < layers  # additive growth: more than one write's, less than linear
        assert residual_std(2 * layers, 1.0) > std  # unbounded: it keeps growing with depth
        assert f"{float(gradient_factor(factor, layers)):.5g}"[:4] in " ".join(problem.answer.choices)


def test_residual_growth_states_independence():
    for seed in SEEDS:
        problem = variant(seed, "stream", "residual_growth")
        assert "independent" in problem.stem and "initialisation" in problem.stem
        assert "much faster" in problem.solution


def test_final_norm_solution_scopes_what_the_norm_removes():
    for seed in SEEDS:
        problem = variant(seed, "final", "final_norm_homogeneity")
        assert "Suppose" in problem.stem
        assert "does not undo growth inside the stack" in problem.solution
        p = problem.params
        x = np.array(p["x"], float)
        if p["c"] > 0:  # zero-homogeneity, by the library
            np.testing.assert_allclose(layer_norm(p["c"] * x, p["gamma"], p["beta"], eps=0.0),
                                       layer_norm(x, p["gamma"], p["beta"], eps=0.0))


# --- the norm's backward factor -------------------------------------------------------------


def test_backward_scale_premise_is_a_supposition_and_its_spectrum_is_as_stated():
    for seed in SEEDS:
        problem = variant(seed, "backward", "post_ln_backward_scale")
        assert problem.stem.startswith("Suppose") and "initiali" not in problem.stem.split(".")[0]
        p = problem.params
        z = np.add(p["x"], p["F(x)"])
        jac = layer_norm_jacobian(z, p["gamma"], eps=p["eps"])
        var = float(np.var(z))
        bracket = np.sort(np.linalg.eigvalsh(jac * np.sqrt(var + p["eps"]) / p["gamma"]))
        # eigenvalues 0 (along 1), eps / (var + eps) (along z_hat), then 1 on the rest
        np.testing.assert_allclose(bracket, [0.0, p["eps"] / (var + p["eps"]), 1.0, 1.0], atol=1e-9)
        assert problem.answer.value < 1  # a large spread shrinks the gradient through the norm
