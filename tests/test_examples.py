"""The worked-example registry against independent routes.

Every ``computed`` value is recomputed here without the code under test: SymPy exact
arithmetic (``layer_norm_exact``, ``exact_power``, ``exact_sqrt``, the symbolically
differentiated LayerNorm Jacobian). Only the seeds' *inputs* are written here; no expected
output is. ``agrees`` is then re-decided by an independent rule: the seed's number is the
exact value rounded or truncated at the seed's last digit. Errata are exactly the four
records listed in :data:`ERRATA`; every other record with a stated number agrees.
"""

import json
import math
import re
from decimal import ROUND_DOWN, ROUND_HALF_EVEN, Decimal, localcontext
from pathlib import Path

import numpy as np
import pytest
import sympy as sp

from lnworked.examples import SEEDS, Example, Quantity, agrees_with_stated, all_examples, get_example, stated_unit
from lnworked.symbolic import exact, exact_power, exact_sqrt, layer_norm_exact, layer_norm_jacobian_exact

#: Every worked example the issue names.
REQUIRED_IDS = [
    "000-pre-ln-gradient", "000-post-ln-gradient",
    "001-three-blocks", "001-twenty-four-layers", "001-practice-12-layers",
    "002-block-jacobians", "002-zero-homogeneity", "002-unrolled-residual",
    "004-ex1", "004-ex2", "004-ex3", "004-ex4-post-ln", "004-ex4-pre-ln", "004-ex5", "004-ex6",
    "004-ex7", "004-ex8",
    "004-selfcheck-1", "004-selfcheck-2", "004-selfcheck-3", "004-selfcheck-4", "004-selfcheck-5",
]

#: The records whose seed number is wrong (``agrees`` is False).
ERRATA = {"000-pre-ln-gradient", "001-twenty-four-layers", "004-ex4-pre-ln", "004-ex7"}

SEED_DIR = Path(__file__).resolve().parents[2] / "shared" / "seeds"


@pytest.fixture(scope="module")
def records():
    return {r.id: r for r in all_examples()}


# --- the seeds' inputs, and the independent routes ------------------------------------------------

# Seed 000: x = (2, -1), upstream (0.5, 0.5), J_s = 0.1 I.
X000, G000, JS000 = ["2", "-1"], sp.Matrix([exact("0.5")] * 2), exact("0.1")
# Seed 004: x = (1, 3, 5, 7), Ex 1's F(x) = (1, -1, 1, -1), Ex 4's F = (100, -100, 100, -100).
X004, F1, F4 = [1, 3, 5, 7], [1, -1, 1, -1], [100, -100, 100, -100]


def _jacobian_2norm(matrix: sp.Matrix) -> float:
    """Largest singular value of an exact matrix, evaluated to 30 digits first."""
    return float(np.linalg.svd(np.array(matrix.evalf(30), dtype=float), compute_uv=False)[0])


def route_000_pre(eps):
    """(I + J_s J_LN)^T g = g + J_LN^T J_s^T g with the symbolic J_LN at x."""
    j_ln = layer_norm_jacobian_exact(X000, eps)
    return list(G000 + j_ln.T * (JS000 * G000))


def route_000_post(eps):
    """(J_LN(z) (I + J_s))^T g = (1 + 0.1) J_LN(z)^T g, z = x + J_s x."""
    z = [(1 + JS000) * exact(v) for v in X000]
    return list((1 + JS000) * layer_norm_jacobian_exact(z, eps).T * G000)


def route_ex4_post(eps):
    z = [a + b for a, b in zip([0, 0, 0, 0], F4)]
    return [*layer_norm_exact(z, eps=eps), _jacobian_2norm(layer_norm_jacobian_exact(z, eps))]


def route_selfcheck1():
    y = layer_norm_exact([a + b for a, b in zip(X004, F1)])
    mean = sum(y) / len(y)
    return [mean, sum((v - mean) ** 2 for v in y) / len(y)]


#: id -> (the seed's inputs as the record must hold them, exact values in ``computed``'s order).
ROUTES = {
    "000-pre-ln-gradient": ({"x": X000, "upstream": ["0.5", "0.5"]}, lambda r: route_000_pre(r.value("eps"))),
    "000-post-ln-gradient": ({"x": X000, "upstream": ["0.5", "0.5"]}, lambda r: route_000_post(r.value("eps"))),
    "001-three-blocks": ({"per_layer": "0.6", "layers": 3}, lambda r: [exact_power("0.6", 3)]),
    "001-twenty-four-layers": ({"per_layer": "0.6", "layers": 24}, lambda r: [exact_power("0.6", 24)]),
    "001-practice-12-layers": ({"per_layer": "0.8", "layers": 12}, lambda r: [exact_power("0.8", 12)]),
    "004-ex1": ({"x": X004, "F_x": F1}, lambda r: list(layer_norm_exact([a + b for a, b in zip(X004, F1)]))),
    "004-ex2": ({"x": X004}, lambda r: [exact(a) + b for a, b in zip(X004, layer_norm_exact(X004))]),
    "004-ex3": ({"x": [5, 5, 5, 5]}, lambda r: list(layer_norm_exact([5, 5, 5, 5], eps="1e-5"))),
    "004-ex4-post-ln": ({"x": [0, 0, 0, 0], "F_x": F4, "eps": "1e-5"}, lambda r: route_ex4_post("1e-5")),
    # Pre-LN with Post-LN's F, i.e. F(u) = 0 u + F4: x + F(LN(x)) with x = 0 and exact LN(0).
    "004-ex4-pre-ln": ({"x": [0, 0, 0, 0], "F_0": F4, "eps": "1e-5"},
                       lambda r: [0 + exact(f) + 0 * v for f, v in zip(F4, layer_norm_exact([0, 0, 0, 0], eps="1e-5"))]),
    "004-ex5": ({"dF_dx": "0.3", "inv_sigma": "0.5", "layers": 10}, lambda r: [
        1 + exact("0.3"), exact_power(1 + exact("0.3"), 10), exact("0.5") * (1 + exact("0.3")),
        exact_power(exact("0.5") * (1 + exact("0.3")), 10), 1 / exact_power(exact("0.5") * (1 + exact("0.3")), 10)]),
    "004-ex6": ({"L": [1, 24, 96], "branch_variance": 1}, lambda r: [exact_sqrt(n) for n in (1, 24, 96)]),
    "004-ex7": ({"per_layer": "0.65", "layers": 96}, lambda r: [exact_power("0.65", 96)]),
    "004-ex8": ({"x": [-2, 0, 2, 4], "gamma": [2, 2, 2, 2], "beta": [1, 1, 1, 1], "eps": 0},
                lambda r: list(layer_norm_exact([-2, 0, 2, 4], 2, 1))),
    "004-selfcheck-1": ({}, lambda r: route_selfcheck1()),
    "004-selfcheck-5": ({"per_layer": ["1.3", "0.65"], "layers": 10},
                        lambda r: [exact_power("1.3", 10), exact_power("0.65", 10)]),
}

CLAIMS = ["002-block-jacobians", "002-zero-homogeneity", "002-unrolled-residual",
          "004-selfcheck-2", "004-selfcheck-3", "004-selfcheck-4"]


def _as_float(value) -> float:
    return float(sp.N(value, 30)) if isinstance(value, sp.Basic) else float(value)


def _as_decimal(value) -> Decimal:
    return Decimal(str(sp.N(value, 40))) if isinstance(value, sp.Basic) else Decimal(repr(float(value)))


def seed_agrees(exact_value, stated: float) -> bool:
    """The stated number is the exact value rounded, or truncated, at the stated last digit.

    The stated digits are those of the stated number's shortest repr (``74.0`` is "74").
    """
    text = repr(float(stated))
    text = text[:-2] if text.endswith(".0") else text
    quantum = Decimal(1).scaleb(Decimal(text).as_tuple().exponent)
    with localcontext() as ctx:
        ctx.prec = 80
        value = _as_decimal(exact_value)
        return any(value.quantize(quantum, rounding=mode) == Decimal(text) for mode in (ROUND_HALF_EVEN, ROUND_DOWN))


def _flat(value) -> list:
    return [float(v) for v in np.ravel(np.asarray(value, dtype=float))]


# --- the registry ------------------------------------------------------------------------------------


def test_registry_holds_every_worked_example_named_by_the_issue_once(records):
    ids = [r.id for r in all_examples()]
    assert len(ids) == len(set(ids))
    assert set(REQUIRED_IDS) <= set(ids)


def test_every_record_names_a_seed_and_has_agrees_only_where_the_seed_states_something(records):
    for r in records.values():
        assert isinstance(r, Example)
        assert r.seed in SEEDS.values(), r.id
        assert r.id[:3] in SEEDS and SEEDS[r.id[:3]] == r.seed, r.id
        assert r.title and all(isinstance(q, Quantity) for q in r.quantities()), r.id
        assert (r.agrees is None) == (r.stated is None), r.id
        if r.agrees is False:
            assert r.note, f"{r.id}: an erratum must say why in its note"


def test_errata_are_exactly_the_four_known_records(records):
    assert {r.id for r in records.values() if r.agrees is False} == ERRATA


def test_routes_cover_every_record_that_states_a_number(records):
    numeric = {r.id for r in records.values() if r.stated is not None and r.claim is None}
    assert numeric <= set(ROUTES)


@pytest.mark.parametrize("example_id", sorted(ROUTES))
def test_record_inputs_are_the_seeds_inputs(records, example_id):
    expected, _ = ROUTES[example_id]
    for key, value in expected.items():
        held = records[example_id].inputs[key].value
        assert _flat([_as_float(exact(v)) for v in np.ravel(np.asarray(value, dtype=object))]) == _flat(held), key


@pytest.mark.parametrize("example_id", sorted(ROUTES))
def test_computed_equals_the_independent_exact_route(records, example_id):
    r = records[example_id]
    expected = [_as_float(v) for v in ROUTES[example_id][1](r)]
    computed = _flat(r.computed)
    assert len(computed) == len(expected)
    np.testing.assert_allclose(computed, expected, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("example_id", sorted(ROUTES))
def test_agrees_is_decided_honestly_against_the_exact_value(records, example_id):
    r = records[example_id]
    if r.stated is None:  # the seed states no number here
        assert r.agrees is None
        return
    exact_values = ROUTES[example_id][1](r)
    stated = np.ravel(np.asarray(r.stated, dtype=float))
    assert len(stated) == len(exact_values)
    assert r.agrees == all(seed_agrees(e, s) for e, s in zip(exact_values, stated))


# --- claim records (the seed states a formula, the library checks it) -----------------------------------


@pytest.mark.parametrize("example_id", CLAIMS)
def test_claim_records_hold_and_are_labelled_as_holding(records, example_id):
    r = records[example_id]
    assert r.claim is not None and r.agrees is True


def test_block_jacobian_claim_reports_analytic_minus_autodiff_gaps_at_rounding_level(records):
    gaps = records["002-block-jacobians"].computed
    assert set(gaps) == {"pre", "post"}
    assert all(0 <= g < 1e-10 for g in gaps.values())


def test_zero_homogeneity_and_unrolled_residual_claims_report_rounding_level_gaps(records):
    assert all(0 <= g < 1e-12 for g in records["002-zero-homogeneity"].computed.values())
    assert 0 <= records["002-unrolled-residual"].computed < 1e-12
    assert 0 <= records["004-selfcheck-4"].computed < 1e-12


def test_stream_growth_claim_ratios_are_within_five_standard_errors_of_one(records):
    r = records["004-selfcheck-2"]
    standard_error = math.sqrt(2 / (r.value("samples") - 1))
    assert all(abs(ratio - 1) < 5 * standard_error for ratio in r.computed)


def test_epsilon_claim_shows_nan_without_eps_and_the_exact_zero_vector_with_it(records):
    computed = records["004-selfcheck-3"].computed
    assert np.all(np.isnan(computed["eps=0"]))
    np.testing.assert_array_equal(computed["eps=1e-5"], np.array(layer_norm_exact([5] * 4, eps="1e-5"), dtype=float).ravel())


def test_ex3_steps_show_the_default_degenerate_error_message(records):
    messages = [q.value for q in records["004-ex3"].steps.values() if isinstance(q.value, str)]
    assert any("variance is 0" in m and "eps" in m for m in messages)


# --- stated values come from the seed texts ----------------------------------------------------------------


def _numbers_in(text: str) -> set:
    """Every number a seed text writes: decimals, a × 10^{-k}, \\frac{a}{b} and a/b."""
    found = {abs(float(m)) for m in re.findall(r"\d+(?:\.\d+)?", text)}
    for mantissa, power in re.findall(r"(\d+(?:\.\d+)?)\s*\\times\s*1\s*0\s*\^\{\s*-\s*(\d+)\s*\}", text):
        found.add(float(f"{mantissa}e-{power}"))
    for a, b in re.findall(r"\\frac\{(\d+)\}\{(\d+)\}", text) + re.findall(r"(?<![\d.])(\d+)\s*/\s*(\d+)", text):
        if int(b):
            found.add(int(a) / int(b))
    return found


@pytest.mark.skipif(not SEED_DIR.is_dir(), reason=f"seed texts not found at {SEED_DIR}")
def test_every_stated_number_is_written_in_its_seed_text(records):
    texts = {name: (SEED_DIR / name).read_text(encoding="utf-8") for name in SEEDS.values()}
    numbers = {name: _numbers_in(text) for name, text in texts.items()}
    for r in records.values():
        if r.stated is None or r.claim is not None:
            continue
        for value in np.ravel(np.asarray(r.stated, dtype=float)):
            assert any(math.isclose(abs(value), n, rel_tol=1e-12) for n in numbers[r.seed]), (r.id, value)


# --- helpers and serialisation ----------------------------------------------------------------------------


def test_every_record_serialises_to_strict_json(records):
    for r in records.values():
        text = json.dumps(r.to_dict(), allow_nan=False)
        back = json.loads(text)
        assert back["id"] == r.id and back["agrees"] == r.agrees


def test_get_example_finds_by_id_and_rejects_an_unknown_id_by_name():
    assert get_example("004-ex7").id == "004-ex7"
    with pytest.raises(ValueError, match=r"^example_id:"):
        get_example("004-ex99")


@pytest.mark.parametrize("text", ["0.22", "0.0000022", "2.2e-6", "74", "13.7858", "1.9e-18"])
def test_stated_unit_is_one_in_the_last_written_digit(text):
    assert stated_unit(text) == float(Decimal(1).scaleb(Decimal(text).as_tuple().exponent))


def test_agrees_with_stated_rounds_plain_numbers_and_truncates_ellipses():
    assert agrees_with_stated(float(exact_power("0.6", 3)), "0.22")
    assert not agrees_with_stated(float(exact_power("0.6", 24)), "0.0000022")
    assert agrees_with_stated([float(exact_power("0.65", 10))], ["0.013462..."])
    assert not agrees_with_stated([float(exact_power("0.65", 10))], ["0.013462"])  # rounds to ...463
    assert not agrees_with_stated(0.9, "0")  # half a unit, not a whole one
    assert not agrees_with_stated(-0.0134627, "0.013462...")
    with pytest.raises(ValueError, match=r"^stated_text:"):
        agrees_with_stated([1.0, 2.0], ["1"])


def test_ids_are_safe_html_anchors():
    """The book anchors each example as ``example-<id>``; docutils rewrites other characters."""
    for example in all_examples():
        assert re.fullmatch(r"[0-9a-z]+(-[0-9a-z]+)*", example.id), example.id


# --- each arithmetic erratum says where, why (one checkable sentence) and what is true ---------------------


def _sci(value, digits):
    mantissa, exponent = f"{value:.{digits - 1}e}".split("e")
    return f"{mantissa} × 10{str(int(exponent)).translate(str.maketrans('-0123456789', '⁻⁰¹²³⁴⁵⁶⁷⁸⁹'))}"


def test_every_erratum_has_its_words_its_place_and_a_checkable_reason(records):
    wrong = [r for r in records.values() if r.agrees is False]
    assert wrong
    for r in wrong:
        assert r.quote and r.location and r.check, r.id
        assert "{" not in r.check and "seed" not in r.check + r.quote, r.id


def test_erratum_checks_carry_numbers_computed_by_an_independent_route(records):
    """The numbers in the check sentences, from SymPy's exact powers and mpmath's logarithm."""
    p12, p24 = sp.Rational(3, 5) ** 12, sp.Rational(3, 5) ** 24
    check = records["001-twenty-four-layers"].check
    assert f"{float(p12):.6f}" in check and _sci(float(p24), 3) in check
    log10 = 96 * sp.log(sp.Rational(13, 20), 10)
    check = records["004-ex7"].check
    assert f"{float(log10):.4f}".replace("-", "−") in check
    assert _sci(float(sp.Rational(13, 20) ** 96), 2) in check
    assert "(100, −100, 100, −100)" in records["004-ex4-pre-ln"].check


@pytest.mark.skipif(not SEED_DIR.is_dir(), reason=f"source texts not found at {SEED_DIR}")
def test_each_erratums_stated_number_is_in_its_quote_and_the_quote_in_its_source(records):
    def normal(text):
        return re.sub(r"[\s$\\{}^]", "", text).replace("−", "-").lower()
    for r in (r for r in records.values() if r.agrees is False):
        source = normal((SEED_DIR / r.seed).read_text(encoding="utf-8"))
        for q in r.results.values():
            for stated in ([q.stated] if isinstance(q.stated, str) else q.stated or ()):
                written = stated.replace("e-18", "").replace("e-", "")
                assert written in normal(r.quote), (r.id, stated)
        words = [w for w in re.findall(r"[a-z][a-z_ -]{12,}", r.quote.lower())]
        for w in words:
            assert normal(w) in source, (r.id, w)


def test_worked_example_title_names_its_source_not_its_id():
    from lnworked.display import SOURCE_NAMES, arithmetic_erratum_markdown, example_markdown

    for example in all_examples():
        anchor, title = example_markdown(example.id).splitlines()[:2]
        assert anchor == f"(example-{example.id})="
        number = example.id[:3]
        link = f"{{ref}}`{SOURCE_NAMES[number]} <source-{number}>`"
        assert title.startswith("**Worked example: ") and f"(from {link}" in title, title
        # the only markup with backticks is that link: no code-formatted id
        assert "`" not in title.replace(link, "") and example.id not in title
    markdown = arithmetic_erratum_markdown(get_example("004-ex7"))
    assert "(#example-004-ex7)" in markdown and "the worked-examples notes (004, Ex 7" in markdown
    assert "**Why it is wrong.**" in markdown and "> " in markdown


def test_each_source_short_name_heads_its_labelled_section_of_the_introduction():
    """The chapters link the sources as {ref}`<short name> <source-NNN>`: the label must sit right above a
    heading that gives the same short name and the file number the errata page uses."""
    from lnworked.display import SOURCE_NAMES, source_link

    intro = (Path(__file__).resolve().parent.parent / "book" / "intro.md").read_text(encoding="utf-8")
    for number, name in SOURCE_NAMES.items():
        match = re.search(rf"^\(source-{number}\)=\n### (.+)$", intro, re.M)
        assert match, f"no labelled heading for source {number}"
        assert match.group(1).lower() == f"{name} ({number})".lower(), match.group(1)
    with pytest.raises(ValueError, match="number"):
        source_link("003")


def test_a_folded_worked_example_is_a_named_dropdown_around_the_whole_record():
    from lnworked.display import example_markdown

    plain, folded = example_markdown("004-ex7"), example_markdown("004-ex7", folded=True)
    lines = folded.splitlines()
    assert lines[0] == "(example-004-ex7)=" and lines[2] == ":class: dropdown"
    assert lines[1].startswith("::::{admonition} Worked example: ") and "<source-004>`, Ex 7)" in lines[1]
    assert lines[-1] == "::::"
    # the erratum admonition (three colons) sits inside the four-colon dropdown, the steps unchanged
    assert ":::{admonition} Erratum" in "\n".join(lines[3:-1])
    assert plain.split("\n", 2)[2].strip() == "\n".join(lines[3:-1]).strip()


def test_a_worked_example_shows_a_matrix_as_a_displayed_pmatrix_of_its_values():
    import re

    from lnworked.display import example_markdown

    example = get_example("002-block-jacobians")
    text = example_markdown(example.id)
    assert "[(" not in text  # no run of tuples
    blocks = re.findall(r"\$\$\n\s+\\small\\begin\{pmatrix\}(.*?)\\end\{pmatrix\}\n\s+\$\$", text)
    assert len(blocks) == 2
    for block, key in zip(blocks, ("pre_jacobian", "post_jacobian")):
        shown = np.array([[float(v) for v in row.split("&")] for row in block.split(r"\\")])
        np.testing.assert_allclose(shown, example.steps[key].value, rtol=5e-3, atol=5e-6)  # 3 significant figures
