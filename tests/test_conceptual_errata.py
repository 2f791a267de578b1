"""Conceptual errata: each record's evidence is checked by an independent route, and each is
linked both ways (errata page -> chapter that teaches it -> errata page)."""

from __future__ import annotations

import math
import re
from pathlib import Path

import jax
import jax.numpy as jnp
import nbformat
import numpy as np
import pytest
import sympy as sp

from lnworked.blocks import MLP
from lnworked.conceptual_errata import conceptual_erratum_markdown, conceptual_errata, get_conceptual_erratum

jax.config.update("jax_enable_x64", True)

ROOT = Path(__file__).resolve().parent.parent
BOOK = ROOT / "book"
RECORDS = {record.id: record for record in conceptual_errata()}
SEED_DIR = ROOT.parent / "shared" / "seeds"


def _ln(x, eps=1e-5):
    mu = jnp.mean(x)
    return (x - mu) / jnp.sqrt(jnp.mean((x - mu) ** 2) + eps)


def test_jacobian_eigenvalues_by_autodiff():
    """J_LN's spectrum from jax.jacfwd: near zero in d = 2, at most 1/√(σ² + ε) in d = 4."""
    evidence = RECORDS["000-eigenvalues"].evidence
    d2 = np.linalg.eigvals(np.asarray(jax.jacfwd(_ln)(jnp.array([2.0, -1.0]))))
    d4 = np.linalg.eigvals(np.asarray(jax.jacfwd(_ln)(jnp.array([1.0, 3.0, 5.0, 7.0]))))
    assert np.abs(d2).max() < 1e-4 and math.isclose(evidence["d2_largest"], np.abs(d2).max(), rel_tol=1e-6)
    assert math.isclose(evidence["d4_largest"], np.abs(d4).max(), rel_tol=1e-9)
    assert evidence["d4_largest"] < 1 and math.isclose(evidence["d4_largest"], 1 / math.sqrt(5 + 1e-5), rel_tol=1e-9)
    assert evidence["d4_smallest"] < 1e-12


def test_post_ln_step_in_the_chain_rules_order_is_zero_and_matches_autodiff():
    evidence = RECORDS["000-post-formula-order"].evidence
    assert evidence["gradient_norm"] < 1e-12 and evidence["autodiff_gap"] < 1e-6


def test_pre_ln_blocks_can_shrink_a_gradient():
    evidence = RECORDS["001-at-least-one"].evidence
    assert evidence["count_below_one"] >= 1 and evidence["smallest"] < 1


def test_two_pre_ln_blocks_have_a_cross_term_by_autodiff():
    """d(x2)/d(x0) − I − A1 − A2 for two Pre-LN blocks equals A2 A1, a non-zero product."""
    x = jnp.array([0.7, -1.2, 2.0, 0.4])
    f1, f2 = MLP.random(4, 16, seed=11), MLP.random(4, 16, seed=12)

    def block(f):
        return lambda v: v + f(_ln(v))

    j1 = np.asarray(jax.jacfwd(block(f1))(x))
    x1 = block(f1)(x)
    j2 = np.asarray(jax.jacfwd(block(f2))(x1))
    whole = np.asarray(jax.jacfwd(lambda v: block(f2)(block(f1)(v)))(x))
    cross = whole - np.eye(4) - (j1 - np.eye(4)) - (j2 - np.eye(4))
    assert math.isclose(RECORDS["001-never-multiplied"].evidence["cross"], np.linalg.norm(cross, 2), rel_tol=1e-6)
    assert np.linalg.norm(cross, 2) > 1e-3


def test_post_ln_backward_factor_at_init_is_of_order_one_not_one_hundredth():
    evidence = RECORDS["004-ex4-warmup"].evidence
    assert math.isclose(evidence["factor"], 1 / math.sqrt(evidence["sigma"] ** 2 + 1e-5), rel_tol=1e-6)
    assert 0.1 < evidence["factor"] < 10 * evidence["ex4_factor"] * 100
    assert math.isclose(evidence["ex4_factor"], 1 / math.sqrt(100.0 ** 2 + 1e-5), rel_tol=1e-9)


def test_the_random_stack_does_not_follow_the_scalar_toy():
    depth = RECORDS["004-ex7-toy-depth"].evidence
    assert depth["typical_96"] > 1e6 * depth["toy_96"]
    assert math.isclose(depth["toy_96"], 0.65 ** 96, rel_tol=1e-12)
    products = RECORDS["000-eigenvalue-products"].evidence
    assert products["per_layer_24"] > 0.6 and products["typical_24"] > 1e3 * products["toy_24"]


def test_ex1_difference_carries_fs_signs_exactly():
    """LN(x + F) − LN(x) for x = (1, 3, 5, 7), F = (1, −1, 1, −1), in exact arithmetic (SymPy)."""
    def ln(v):
        mu = sum(v) / len(v)
        sigma = sp.sqrt(sum((e - mu) ** 2 for e in v) / len(v))
        return [(e - mu) / sigma for e in v]
    x, f = [sp.Integer(v) for v in (1, 3, 5, 7)], [sp.Integer(v) for v in (1, -1, 1, -1)]
    exact_difference = [sp.nsimplify(a - b) for a, b in zip(ln([a + b for a, b in zip(x, f)]), ln(x))]
    assert [sp.sign(e) for e in exact_difference] == f
    evidence = RECORDS["004-ex1-pattern"].evidence
    assert np.allclose(evidence["difference"], [float(e) for e in exact_difference], rtol=0, atol=1e-12)
    assert evidence["signs"] == "+ − + −"


def test_ex2_mean_moves_with_a_real_sublayer_by_jax():
    """mean(x + F(LN(x))) − mean(x) = mean(F(LN(x))), with F rebuilt in JAX from the weights (jax.nn.gelu)."""
    x = jnp.array([1.0, 3.0, 5.0, 7.0])
    shifts = []
    for seed in range(8):
        mlp = MLP.random(4, 16, seed=seed)
        u = _ln(x, eps=0.0)
        write = jnp.asarray(mlp.W2) @ jax.nn.gelu(jnp.asarray(mlp.W1) @ u + mlp.b1, approximate=True) + mlp.b2
        shifts.append(float(jnp.mean(write)))
    evidence = RECORDS["004-ex2-centre"].evidence
    assert evidence["x_mean"] == 4.0
    assert math.isclose(evidence["seed0_mean"], 4.0 + shifts[0], rel_tol=1e-9)
    assert math.isclose(evidence["largest_shift"], max(abs(s) for s in shifts), rel_tol=1e-9)
    assert evidence["largest_shift"] > 0.1


def test_toy_pre_ln_factor_explodes_at_depth_96_exactly():
    evidence = RECORDS["004-ex7-toy-depth"].evidence
    exact = sp.Rational(13, 10) ** 96
    assert math.isclose(evidence["toy_pre_96"], float(exact), rel_tol=1e-12) and exact > 10 ** 10


def test_product_of_two_nilpotent_matrices_has_a_nonzero_eigenvalue():
    a = sp.Matrix([[0, 2], [0, 0]])
    assert set(a.eigenvals()) == {0} and set(a.T.eigenvals()) == {0}
    assert math.isclose(RECORDS["000-eigenvalue-products"].evidence["product_eigenvalue"], max((a * a.T).eigenvals()))


def test_square_root_growth_is_unbounded():
    evidence = RECORDS["004-ex6-bounded"].evidence
    assert evidence["std_96"] < evidence["std_10000"] < evidence["std_1e6"]
    assert math.isclose(evidence["std_1e6"], 1000.0)


# --- the records and their links --------------------------------------------------------------


def _labels_in(path: Path) -> set:
    text = path.read_text() if path.suffix == ".md" else "\n".join(
        c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "markdown")
    return set(re.findall(r"^\(([\w-]+)\)=", text, re.M))


def _chapter_path(record) -> Path:
    for suffix in (".ipynb", ".md"):
        if (BOOK / (record.chapter + suffix)).exists():
            return BOOK / (record.chapter + suffix)
    raise AssertionError(f"{record.id}: no page {record.chapter}")


def test_every_record_is_complete_and_its_truth_is_filled():
    bib = (BOOK / "references.bib").read_text()
    for record in RECORDS.values():
        assert record.quote and record.title and record.verdict in ("wrong", "misleading")
        assert record.location and record.check, f"{record.id}: no location or no checkable reason"
        assert "{" not in record.check_text(), record.id
        assert record.evidence or record.cites, f"{record.id}: neither computed nor cited"
        text = record.truth_text()
        assert "{" not in text, record.id
        for key in record.cites:
            assert f"{{{key}," in bib, f"{record.id}: {key} is not in references.bib"
        if record.section:
            assert record.section in _labels_in(_chapter_path(record)), f"{record.id}: no label {record.section}"


def test_links_in_the_texts_name_labels_of_the_book():
    """A ``[text](#label)`` link in a check or truth text names a label of some page (another
    erratum's ``concept-<id>``, or a section of a chapter)."""
    labels = {record.anchor for record in RECORDS.values()}
    for path in list((BOOK / "chapters").glob("*.ipynb")) + list((BOOK / "chapters").glob("*.md")):
        labels |= _labels_in(path)
    linked = 0
    for record in RECORDS.values():
        for target in re.findall(r"\]\(#([\w-]+)\)", record.check_text() + record.truth_text()):
            assert target in labels, f"{record.id}: no label {target}"
            linked += 1
    assert linked >= 1


def test_each_erratum_is_linked_from_the_chapter_that_teaches_it():
    for record in RECORDS.values():
        path = _chapter_path(record)
        text = path.read_text()
        assert record.anchor in text, f"{path.name} does not link to {record.anchor}"


def test_markdown_carries_the_anchor_heading_quote_and_the_way_back():
    record = get_conceptual_erratum("004-ex6-bounded")
    markdown = conceptual_erratum_markdown(record)
    assert markdown.startswith(f"({record.anchor})=\n### ")
    assert f"> {record.quote}" in markdown and record.chapter in markdown
    assert f"**Why it is wrong.** {record.check_text()}" in markdown and record.location in markdown
    with pytest.raises(ValueError, match=r"^erratum_id:"):
        get_conceptual_erratum("nope")


@pytest.mark.skipif(not SEED_DIR.is_dir(), reason=f"source texts not found at {SEED_DIR}")
def test_quotes_are_the_source_texts_words():
    """Every quoted fragment (between the marks … and [..]) occurs in its source text."""
    def normal(text):
        text = re.sub(r"\$|\\|\{|\}|\s+", "", text)
        return text.replace("−", "-").replace("ϵ", "ε").replace("ℓ", "ell").lower()
    texts = {p.name[:3]: normal(p.read_text(encoding="utf-8")) for p in SEED_DIR.glob("*.txt")}
    for record in RECORDS.values():
        for fragment in re.split(r"…|\[[^\]]*\]", record.quote):
            words = normal(fragment).strip(".")
            if len(words) > 25 and not re.search(r"[⁰-⁹₀-₉²ᵀ×≈∝√γσ∂·≥]", fragment):
                assert words in texts[record.source], (record.id, fragment)


def test_final_norm_leaves_the_stream_as_it_is_by_jax():
    """The same random Pre-LN stack rebuilt in JAX (jax.nn.gelu): the stream's spread at the top, and
    the final norm's output spread 1 whatever the stream's spread."""
    evidence = RECORDS["001-final-norm"].evidence
    x = jnp.asarray(np.random.default_rng(0).normal(size=64))
    for layer in range(evidence["layers"]):
        mlp = MLP.random(64, 256, seed=layer)
        u = _ln(x)
        x = x + jnp.asarray(mlp.W2) @ jax.nn.gelu(jnp.asarray(mlp.W1) @ u, approximate=True)
    assert math.isclose(evidence["stream_top"], float(jnp.std(x)), rel_tol=1e-9)
    assert evidence["stream_top"] > 2 * evidence["stream_0"]
    assert math.isclose(float(jnp.std(_ln(x))), 1.0, rel_tol=1e-5) and math.isclose(evidence["final"], 1.0, rel_tol=1e-5)


def test_summary_table_has_one_linked_row_per_erratum():
    """The errata page's table: three columns, one row per erratum of the page, each linking to the
    label that the entry's own markdown opens with."""
    from lnworked.conceptual_errata import SUMMARY_WORDS, errata_summary_markdown
    from lnworked.display import arithmetic_erratum_markdown, errata

    arithmetic, concepts = errata(), conceptual_errata()
    lines = errata_summary_markdown(arithmetic, concepts).strip().splitlines()
    rows = [[cell.strip() for cell in line.strip("|").split(" | ")] for line in lines[2:]]
    assert len(rows) == len(arithmetic) + len(concepts) and all(len(row) == 3 for row in rows)
    entries = ([arithmetic_erratum_markdown(e) for e in arithmetic]
               + [conceptual_erratum_markdown(c) for c in concepts])
    for row, entry, source in zip(rows, entries, [e.seed[:3] for e in arithmetic] + [c.source for c in concepts]):
        (target,) = re.findall(r"\]\(#([\w-]+)\)$", row[2])
        assert entry.startswith(f"({target})=\n") and row[0] == source
    for record in concepts:
        assert all(0 < len(part.split()) <= SUMMARY_WORDS for part in record.summary), record.id


def test_a_summary_longer_than_its_limit_is_refused():
    record = get_conceptual_erratum("004-ex6-bounded")
    fields = {k: getattr(record, k) for k in record.__dataclass_fields__}
    with pytest.raises(ValueError, match=r"^summary:"):
        type(record)(**{**fields, "summary": ("one two three four five six seven eight nine", "ok")})
    with pytest.raises(ValueError, match=r"^summary:"):
        type(record)(**{**fields, "summary": ("only one half",)})


def test_warmup_summary_agrees_with_chapter_six_not_with_xiong():
    """The warmup erratum's entry concludes that on this model the gradients at initialisation are of the same
    order in both placements and the first update's effect on the output differs; its one-line summary must say
    that, not Xiong et al.'s "large gradients/updates near the output" (which the entry reports as not measured here)."""
    from lnworked.conceptual_errata import conceptual_errata
    record = next(r for r in conceptual_errata() if r.id == "001-warmup-cause")
    truth = record.summary[1].lower()
    assert "output" in truth and "ch5w-answer" in record.truth
    assert "xiong" not in truth and "large" not in truth
