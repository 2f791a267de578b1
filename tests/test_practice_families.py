"""Every practice family, solved again by an independent route for many seeds, and the
variants' determinism and independence."""

from __future__ import annotations

import re
from fractions import Fraction

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest
import sympy as sp

from lnworked.norms import layer_norm
from lnworked.practice import FAMILIES, variant
from lnworked.practice.answers import check_answer
from lnworked.practice.variants import assignment_slots, make_assignment, variant_rng
from lnworked.symbolic import exact, layer_norm_exact

SEEDS = range(25)


def sympy_floats(matrix) -> np.ndarray:
    return np.array([float(sp.N(v, 30)) for v in matrix])


def ln_exact(x, gamma=1, beta=0, eps=0):
    gamma = list(gamma) if isinstance(gamma, (list, tuple)) else gamma
    beta = list(beta) if isinstance(beta, (list, tuple)) else beta
    return sympy_floats(layer_norm_exact([exact(v) for v in x], gamma, beta, eps))


def independent(problem):
    """The family's answer recomputed without the library's float code."""
    p = problem.params
    name = problem.family
    if name == "layer_norm_forward":
        return ln_exact(p["x"], p["gamma"], p["beta"], p["eps"])
    if name == "post_ln_forward":
        return ln_exact(np.add(p["x"], p["F(x)"]).tolist(), eps=p["eps"])
    if name == "pre_ln_forward":
        return np.array(p["x"], float) + p["a"] * ln_exact(p["x"]) + p["b"]
    if name == "degenerate_eps":
        return ln_exact(p["x"], p["gamma"], p["beta"], p["eps"])
    if name == "final_norm_homogeneity":
        y = [exact(p["c"]) * v for v in p["x"]]
        return ln_exact(y, p["gamma"], p["beta"], 0)
    if name == "post_ln_backward_scale":
        z = jnp.asarray(np.add(p["x"], p["F(x)"]), dtype=jnp.float32)
        jac = jax.jacfwd(lambda v: layer_norm(v, p["gamma"], eps=p["eps"]))(z)
        return float(np.linalg.norm(np.asarray(jac, float), 2))
    if name == "pre_ln_gradient_depth":
        return float((1 + exact(p["slope"])) ** p["layers"])
    if name == "post_ln_gradient_depth":
        per_layer = (exact(p["per_layer"]) if "per_layer" in p
                     else exact(p["norm_factor"]) * (1 + exact(p["slope"])))
        return float(per_layer ** p["layers"])
    if name == "depth_below_threshold":
        f, t = Fraction(str(p["per_layer"])), Fraction(str(p["threshold"]))
        depth = 1
        while f**depth >= t:
            depth += 1
        return float(depth)
    if name == "residual_growth":
        var = exact(p["initial_variance"]) + p["additions"] * exact(p["branch_variance"])
        return float(sp.sqrt(var))
    if name == "adam_first_update":
        return optax_first_update(p)
    if name == "branch_share":
        return share_of_explicit_vectors(p, seed=len(problem.stem))
    if name == "one_logit_step":
        return np.array([one_logit_share_exact(u) for u in (exact(p["a"]), p["k"] * exact(p["a"]))])
    raise KeyError(name)


def one_logit_share_exact(u) -> float:
    """SymPy, 30 digits: the loss drop ln 2 - ln(1 + e^(-u)) over the tangent's drop
    -phi'(0) u, with phi'(0) taken by differentiating phi(o) = ln(1 + e^(-o)) symbolically."""
    o = sp.Symbol("o")
    phi = sp.log(1 + sp.exp(-o))
    slope = sp.diff(phi, o).subs(o, 0)
    return float(sp.N((phi.subs(o, 0) - phi.subs(o, u)) / (-slope * u), 30))


def optax_first_update(p) -> np.ndarray:
    """One step of Optax's ``adamw`` (the book's optimiser's parts, in float32) from the
    problem's parameters and gradient: the update it returns is ``Delta theta``."""
    theta0 = jnp.asarray(p["theta0"], dtype=jnp.float32)
    g = jnp.asarray(p["g"], dtype=jnp.float32)
    optimiser = optax.adamw(p["learning_rate"], b1=0.9, b2=0.95, eps=p["eps"],
                            weight_decay=p["weight_decay"])
    updates, _ = optimiser.update(g, optimiser.init(theta0), theta0)
    return np.asarray(updates, float)


def share_of_explicit_vectors(p, seed: int, d: int = 8) -> float:
    """Vectors x, F in a random orthonormal frame of R^d with the stated ||x||^2, ||F||^2 and
    <x, F>, then ||F||^2 / ||alpha x + F||^2 computed from the vectors themselves."""
    rng = np.random.default_rng(seed)
    frame, _ = np.linalg.qr(rng.normal(size=(d, d)))
    x_norm = np.sqrt(p["x_sq"])
    along = p["inner"] / x_norm
    x = x_norm * frame[:, 0]
    f = along * frame[:, 0] + np.sqrt(p["F_sq"] - along**2) * frame[:, 1]
    np.testing.assert_allclose([x @ x, f @ f, x @ f], [p["x_sq"], p["F_sq"], p["inner"]], rtol=1e-12, atol=1e-12)
    alpha = float(np.sqrt(np.sqrt(2 * p["layers"])))  # DeepNorm's (2L)^(1/4), decoder-only
    return float(f @ f / np.sum((alpha * x + f) ** 2))


NUMERIC = [f for f, fam in FAMILIES.items() if fam.kind != "choice"]
CHOICE = [f for f, fam in FAMILIES.items() if fam.kind == "choice"]


def test_at_least_ten_families_cover_all_answer_kinds():
    assert len(FAMILIES) >= 10
    assert {fam.kind for fam in FAMILIES.values()} == {"number", "vector", "choice"}


@pytest.mark.parametrize("family", NUMERIC)
def test_family_answer_matches_independent_route(family):
    rel = {"post_ln_backward_scale": 1e-5, "adam_first_update": 1e-5}.get(family, 1e-9)
    for seed in SEEDS:
        problem = variant(seed, f"student-{seed}", family)
        got = np.atleast_1d(np.array(problem.answer.value, float))
        want = np.atleast_1d(independent(problem))
        np.testing.assert_allclose(got, want, rtol=rel, atol=1e-12, err_msg=f"{family} seed {seed}")


@pytest.mark.parametrize("family", NUMERIC + CHOICE)
def test_key_text_is_accepted_and_a_wrong_answer_rejected(family):
    for seed in SEEDS:
        answer = variant(seed, "ada", family).answer
        assert check_answer(answer, answer.text).correct, (family, seed, answer.text)
        if answer.kind == "choice":
            wrong = "ABCD"[(answer.value + 1) % len(answer.choices)]
        elif answer.kind == "number":
            wrong = repr(answer.value * 1.01 + (1 if answer.rel == 0 else 0))
        else:
            values = list(answer.value)
            values[seed % len(values)] += 0.01 * max(abs(v) for v in values) + 1e-3
            wrong = "(" + ", ".join(repr(v) for v in values) + ")"
        assert not check_answer(answer, wrong).correct, (family, seed, wrong)


def test_which_normalized_matches_the_placement():
    for seed in SEEDS:
        problem = variant(seed, "ada", "which_normalized")
        right = problem.answer.choices[problem.answer.value]
        if problem.params["placement"] == "post":
            assert "the sum" in right
        else:
            assert "only the copy" in right


def test_why_stream_grows_quotes_sqrt_n():
    for seed in SEEDS:
        problem = variant(seed, "ada", "why_stream_grows")
        right = problem.answer.choices[problem.answer.value]
        n = problem.params["additions"]
        assert f"\\sqrt{{{n}}}" in right
        std = float(sp.sqrt(n))
        assert f"{std:.5g}" in right


def test_adam_first_update_is_the_books_optimiser_step():
    """The stress test's own optimiser (lnworked.stress.optim, float32) with the problem's
    weight decay, its first update applied at the problem's rate, moves theta by the answer."""
    from lnworked.stress.config import StressConfig
    from lnworked.stress.optim import apply_rate, make_optimizer

    for seed in range(10):
        p = variant(seed, "ada", "adam_first_update").params
        optimiser = make_optimizer(StressConfig().replace(weight_decay=p["weight_decay"]))
        theta0 = jnp.asarray(p["theta0"], dtype=jnp.float32)
        updates, _ = optimiser.update(jnp.asarray(p["g"], dtype=jnp.float32), optimiser.init(theta0), theta0)
        moved = np.asarray(apply_rate(theta0, updates, p["learning_rate"]), float) - np.asarray(theta0, float)
        answer = np.array(variant(seed, "ada", "adam_first_update").answer.value)
        np.testing.assert_allclose(moved, answer, rtol=0, atol=1e-3 * np.abs(answer).max())


def test_adam_first_update_moves_every_entry_by_about_the_rate():
    """The solution's claim, against Optax: every entry moves by about eta although the
    gradients span six or more decades; multiplying the gradient by 1000 barely changes it."""
    for seed in SEEDS:
        p = variant(seed, "ada", "adam_first_update").params
        g = np.abs(p["g"])
        assert g.max() / g.min() > 1e5
        step = np.abs(optax_first_update(p)) / p["learning_rate"]
        assert np.all((step > 0.75) & (step < 1.25)), (seed, step)
        louder = optax_first_update({**p, "g": [1000 * v for v in p["g"]]})
        np.testing.assert_allclose(louder, optax_first_update(p), atol=0.1 * p["learning_rate"])


def test_one_logit_step_the_more_sensitive_logit_keeps_less():
    """Vary the cause: the same step on a logit k times as sensitive delivers a smaller share,
    and both shares follow 1 - u/4 to second order (within u^2/16 of it here)."""
    for seed in SEEDS:
        problem = variant(seed, "ada", "one_logit_step")
        share_a, share_b = problem.answer.value
        a, k = problem.params["a"], problem.params["k"]
        assert k >= 2 and 0 < share_b < share_a < 1, (seed, share_a, share_b)
        for u, share in ((a, share_a), (k * a, share_b)):
            assert abs(share - (1 - u / 4)) <= u * u / 16, (seed, u, share)


def test_branch_share_falls_with_alpha_on_explicit_vectors():
    """The solution's claim that alpha lowers the share, on vectors built with the stated norms."""
    for seed in SEEDS:
        problem = variant(seed, "ada", "branch_share")
        p = problem.params
        with_alpha = share_of_explicit_vectors(p, seed)
        plain = share_of_explicit_vectors({**p, "layers": 0.5}, seed)  # (2 * 0.5)^(1/4) = 1
        assert 0 < with_alpha < plain < 1, (seed, with_alpha, plain)
        assert f"{plain:.5g}" in problem.solution


def test_why_warmup_answer_is_the_update_sensitivity():
    stems = set()
    for seed in SEEDS:
        problem = variant(seed, "ada", "why_warmup")
        choices = problem.answer.choices
        right = choices[problem.answer.value]
        assert "AdamW's first update" in right and "branch share" in right
        assert len(set(choices)) == 4
        assert sum("gradient" in c.split(":")[0] for c in choices) == 2  # the two gradient stories
        assert any("\\sqrt{L}" in c and "Post-LN" in c for c in choices if c != right)
        stems.add(problem.stem)
    assert len(stems) == 2


@pytest.mark.parametrize("family", ["which_normalized", "why_warmup", "identity_path"])
def test_right_option_does_not_stand_out_by_its_length(family):
    """A reader noticed that the right option was the longest, most qualified one; in these
    families every option has one form and about one length, so its length gives nothing away."""
    for seed in SEEDS:
        problem = variant(seed, "ada", family)
        choices = problem.answer.choices
        right = choices[problem.answer.value]
        longest_wrong = max(len(c) for c in choices if c != right)
        assert len(right) <= 1.1 * longest_wrong, (seed, len(right), longest_wrong)


def test_why_warmup_claims_only_what_the_book_measures():
    """Post-LN's logits move several times as much per unit of a small step (chapter 6), not
    "far more" at the full rate, where both move by about their own size."""
    for seed in SEEDS:
        problem = variant(seed, "ada", "why_warmup")
        right = problem.answer.choices[problem.answer.value]
        assert "per unit of a small step" in right and "far more" not in right
        assert "At the full rate both placements' logits move by about their own size" in problem.solution


def test_identity_path_answer_is_pre_ln_by_autodiff():
    """A scalar toy by jax.grad, the norm as multiplication by r and the sublayer F(u) = s u:
    Pre-LN x + F(N(x)) has derivative 1 + s r, Post-LN N(x + F(x)) has r (1 + s)."""
    for seed in SEEDS:
        problem = variant(seed, "ada", "identity_path")
        s, r = problem.params["slope"], problem.params["norm_factor"]
        pre = float(jax.grad(lambda x: x + s * (r * x))(1.0))
        post = float(jax.grad(lambda x: r * (x + s * x))(1.0))
        right = problem.answer.choices[problem.answer.value]
        assert right.startswith("Pre-LN")
        assert f"{pre:.5g}" in right
        assert f"{post:.5g}" in problem.solution


def test_solutions_state_the_answer():
    for family in FAMILIES:
        for seed in range(5):
            problem = variant(seed, "bo", family)
            if problem.answer.kind == "vector":
                assert problem.answer.text[1:-1].split(", ")[0] in problem.solution
            elif problem.answer.kind == "number":
                assert problem.answer.text.split("e")[0] in problem.solution
            text = problem.statement + problem.solution
            assert not re.search(r"\b(nan|inf)\b", text), (family, seed)  # float formatting of NaN/inf


def test_variant_is_deterministic():
    for family in FAMILIES:
        assert variant(7, "ada", family) == variant(7, "ada", family)


def test_variant_does_not_depend_on_roster_or_order():
    roster = [f"s{i:02d}" for i in range(10)]
    full = make_assignment(3, roster)
    reversed_small = make_assignment(3, ["zed", *reversed(roster[:4])])
    for student in roster[:4]:
        assert full[student] == reversed_small[student]


def test_variant_does_not_depend_on_other_families():
    alone = make_assignment(3, ["ada"], families=["residual_growth"])["ada"][0][1]
    assert alone == variant(3, "ada", "residual_growth")


def test_thirty_students_get_thirty_different_assignments():
    roster = [f"student{i}" for i in range(30)]
    assignment = make_assignment(2024, roster)
    statements = {tuple(p.statement for _, p in problems) for problems in assignment.values()}
    assert len(statements) == 30


def test_numeric_families_differ_between_most_students():
    for family in NUMERIC:
        answers = {variant(11, f"s{i}", family).answer.text for i in range(30)}
        assert len(answers) >= 15, family


def test_seed_changes_variants():
    assert variant(1, "ada", "layer_norm_forward") != variant(2, "ada", "layer_norm_forward")


def test_rng_comes_from_sha256_not_hash():
    a = variant_rng(5, "ada", "x").integers(0, 2**62)
    b = variant_rng(5, "ada", "x").integers(0, 2**62)
    assert a == b
    assert variant_rng(5, " ada ", "x").integers(0, 2**62) == a  # ids are stripped


def test_slots_and_bad_arguments():
    slots = assignment_slots(["residual_growth", "identity_path"], count=2)
    assert [s.id for s in slots] == ["Q1", "Q2", "Q3", "Q4"]
    assert variant(1, "ada", "residual_growth", 0) != variant(1, "ada", "residual_growth", 1)
    with pytest.raises(ValueError, match="unknown family"):
        assignment_slots(["nope"])
    with pytest.raises(ValueError, match="count"):
        assignment_slots(None, count=0)
    with pytest.raises(ValueError, match="twice"):
        make_assignment(1, ["ada", "ada"])
    with pytest.raises(ValueError, match="seed"):
        variant_rng("1", "ada", "x")


def test_warmup_formulas_reject_bad_input():
    from lnworked.practice.warmup import adamw_first_update, branch_share

    with pytest.raises(ValueError, match="theta0"):
        adamw_first_update([1.0, 2.0], [0.0], 1e-3, 1e-8, 0.01)
    with pytest.raises(ValueError, match="eps"):
        adamw_first_update([1.0], [0.0], 1e-3, 0.0, 0.01)
    with pytest.raises(ValueError, match="inner"):
        branch_share(1.0, 1.0, 1.5)  # |<x, F>| > ||x|| ||F||
    with pytest.raises(ValueError, match="x_sq"):
        branch_share(-1.0, 1.0, 0.0)
    with pytest.raises(ValueError, match="alpha"):
        branch_share(1.0, 1.0, -1.0)  # F = -x: alpha x + F = 0
