"""The wider family (lnworked.placements, random_stack, family_table): each block against its
formula re-computed directly, the analytic gradient route against jax autodiff, and the
seed-002 claims that hold in the random stack.

The claims are asserted over fixed seed sets with wide margins; they were checked on five
disjoint sets of ten seeds before being written down (see the chapter "The wider family").
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import pytest

from lnworked import attention_logits, backward_gains, family_table as family_table_module, placements, random_stack, residual_writes
from lnworked.blocks import MLP, Linear, post_ln, pre_ln
from lnworked.family_table import family_table, format_family_table
from lnworked.placements import (
    VARIANTS,
    deepnorm,
    deepnorm_constants,
    deepnorm_jacobian,
    final_norm,
    final_norm_jacobian,
    normformer,
    normformer_jacobian,
    sandwich,
    sandwich_jacobian,
)
from lnworked.random_stack import seed_spread, stack_profile, stack_sublayers

EPS = 1e-5


# ----------------------------------------------------------------- direct re-computations


def ln(v, eps=EPS):
    v = np.asarray(v, float)
    mu = v.mean(-1, keepdims=True)
    return (v - mu) / np.sqrt(((v - mu) ** 2).mean(-1, keepdims=True) + eps)


def rms(v, eps=EPS):
    v = np.asarray(v, float)
    return v / np.sqrt((v**2).mean(-1, keepdims=True) + eps)


def gelu(z):
    return 0.5 * z * (1 + np.tanh(math.sqrt(2 / math.pi) * (z + 0.044715 * z**3)))


def mlp_direct(f, u):
    return gelu(u @ f.W1.T + f.b1) @ f.W2.T + f.b2


@pytest.fixture
def setup():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(5, 8)) * 2 + 0.5
    f = MLP.random(8, 24, seed=4, scale=1.3, bias=True)
    return x, f


def test_post_and_pre_are_the_blocks_module(setup):
    x, f = setup
    assert VARIANTS["post"].block(x, f, 4) is not None
    np.testing.assert_allclose(VARIANTS["post"].block(x, f, 4), ln(x + mlp_direct(f, x)), atol=1e-12)
    np.testing.assert_allclose(VARIANTS["pre"].block(x, f, 4), x + mlp_direct(f, ln(x)), atol=1e-12)
    np.testing.assert_allclose(VARIANTS["pre_rms"].block(x, f, 4), x + mlp_direct(f, rms(x)), atol=1e-12)
    np.testing.assert_allclose(VARIANTS["pre_rms"].block(x, f, 4), pre_ln(x, f, "rms"), atol=0)
    np.testing.assert_allclose(VARIANTS["post"].block(x, f, 4), post_ln(x, f), atol=0)


def test_deepnorm_formula(setup):
    x, f = setup
    alpha = 1.7
    np.testing.assert_allclose(deepnorm(x, f, alpha), ln(alpha * x + mlp_direct(f, x)), atol=1e-12)
    np.testing.assert_allclose(deepnorm(x, f, 1.0), post_ln(x, f), atol=1e-12)
    np.testing.assert_allclose(deepnorm(x, f, alpha, "rms"), rms(alpha * x + mlp_direct(f, x)), atol=1e-12)


def test_deepnorm_constants_match_the_paper():
    # Wang et al. 2022: encoder-only / decoder-only alpha = (2N)^(1/4), beta = (8N)^(-1/4);
    # decoder of an encoder-decoder model alpha = (3M)^(1/4), beta = (12M)^(-1/4).
    for n in (1, 6, 12, 100, 1000):
        a, b = deepnorm_constants(n)
        assert a == pytest.approx((2 * n) ** 0.25, rel=1e-14)
        assert b == pytest.approx((8 * n) ** -0.25, rel=1e-14)
        a3, b3 = deepnorm_constants(n, sublayers_per_layer=3)
        assert a3 == pytest.approx((3 * n) ** 0.25, rel=1e-14)
        assert b3 == pytest.approx((12 * n) ** -0.25, rel=1e-14)
    a, b = deepnorm_constants(16, sublayers_per_layer=1)
    assert (a, b) == pytest.approx((2.0, 64 ** -0.25))


def test_sandwich_formula(setup):
    x, f = setup
    np.testing.assert_allclose(sandwich(x, f), x + ln(mlp_direct(f, ln(x))), atol=1e-12)
    np.testing.assert_allclose(sandwich(x, f, "rms"), x + rms(mlp_direct(f, rms(x))), atol=1e-12)


def test_normformer_formula(setup):
    x, f = setup
    hidden = gelu(ln(x) @ f.W1.T + f.b1)
    np.testing.assert_allclose(normformer(x, f), x + ln(hidden) @ f.W2.T + f.b2, atol=1e-12)
    np.testing.assert_allclose(normformer(x, f, branch="attention"), sandwich(x, f), atol=0)
    lin = Linear(np.eye(8) * 2.0, 0.1)
    np.testing.assert_allclose(normformer(x, lin, branch="attention"), x + ln(ln(x) @ (2 * np.eye(8)) + 0.1), atol=1e-12)


def test_final_norm_is_the_norm_and_scale_invariant():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(4, 16)) * 3
    np.testing.assert_allclose(final_norm(x), ln(x), atol=1e-12)
    for c in (1e-3, 0.5, 7.0, 1e4):
        # exact zero-homogeneity with eps = 0 ...
        np.testing.assert_allclose(final_norm(c * x, eps=0.0), final_norm(x, eps=0.0), atol=1e-12)
        np.testing.assert_allclose(final_norm(c * x, "rms", eps=0.0), final_norm(x, "rms", eps=0.0), atol=1e-12)
    # ... and, with eps > 0, the larger the stream the closer: N(c x) -> N(x) as c grows.
    gaps = [np.abs(final_norm(c * x) - final_norm(x, eps=0.0)).max() for c in (1.0, 10.0, 100.0)]
    assert gaps[0] > gaps[1] > gaps[2] and gaps[2] < 1e-8
    # Radial direction is killed: J_N(x) x = 0, so inflating x_L changes nothing to first order.
    jac = final_norm_jacobian(x[0], eps=0.0)
    np.testing.assert_allclose(jac @ x[0], 0, atol=1e-12)


# ----------------------------------------------------------------- analytic Jacobians vs differences


def _jacfwd(fn, x):
    import jax
    import jax.numpy as jnp

    with jax.enable_x64(True):
        return np.asarray(jax.jacfwd(fn)(jnp.asarray(x, dtype=jnp.float64)))


def _central_difference(fn, x, h=1e-6):
    """d fn / d x by central differences, one column per input coordinate (NumPy only)."""
    x = np.asarray(x, float)
    columns = []
    for j in range(x.size):
        step = np.zeros_like(x)
        step[j] = h
        columns.append((np.asarray(fn(x + step)) - np.asarray(fn(x - step))) / (2 * h))
    return np.stack(columns, axis=-1)


@pytest.mark.parametrize("norm", ["layer", "rms"])
def test_block_jacobians_match_differences(norm):
    rng = np.random.default_rng(11)
    x = rng.normal(size=10) * 1.5 + 0.3
    f = MLP.random(10, 20, seed=2, scale=1.2, bias=True)
    cases = [
        (lambda v: deepnorm(v, f, 2.1, norm), deepnorm_jacobian(x, f, 2.1, norm)),
        (lambda v: sandwich(v, f, norm), sandwich_jacobian(x, f, norm)),
        (lambda v: normformer(v, f, norm), normformer_jacobian(x, f, norm)),
        (lambda v: normformer(v, f, norm, branch="attention"), normformer_jacobian(x, f, norm, branch="attention")),
        (lambda v: final_norm(v, norm), final_norm_jacobian(x, norm)),
    ]
    for fn, analytic in cases:
        np.testing.assert_allclose(analytic, _central_difference(fn, x), rtol=1e-6, atol=1e-7)


def test_variant_jacobians_match_differences():
    rng = np.random.default_rng(5)
    x = rng.normal(size=12)
    f = MLP.random(12, 48, seed=9)
    for spec in VARIANTS.values():
        np.testing.assert_allclose(
            spec.jacobian(x, f, 8), _central_difference(lambda v: spec.block(v, f, 8), x), rtol=1e-6, atol=1e-7,
            err_msg=spec.name,
        )


# ----------------------------------------------------------------- the gradient, second route


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_stack_gradients_match_jax_autodiff(variant):
    """Route 1 (the library): product of analytic block Jacobians.
    Route 2 (here): jax.jacfwd of the readouts w . y_l, l = 1..L, through the whole stack."""
    import jax.numpy as jnp

    layers, width = 8, 8
    spec = VARIANTS[variant]
    profile = stack_profile(variant, layers, width=width, seed=1, branch_scale=1.5)
    x0, readout, sublayers = stack_sublayers(variant, layers, width=width, seed=1, branch_scale=1.5)

    def readouts(v):
        outs = []
        for f in sublayers:
            v = spec.block(v, f, layers)
            y = final_norm(v, spec.final) if spec.final else v
            outs.append(jnp.dot(y, readout))
        return jnp.stack(outs)

    jac = _jacfwd(readouts, x0)  # (layers, width): row l-1 is d(w . y_l)/d x_0
    np.testing.assert_allclose(profile.input_grad_norm, np.linalg.norm(jac, axis=1), rtol=1e-8)

    # The forward RMS profile, recomputed directly.
    v, expected = np.asarray(x0), [math.sqrt(np.mean(x0**2))]
    for f in sublayers:
        v = spec.block(v, f, layers)
        expected.append(math.sqrt(np.mean(v**2)))
    np.testing.assert_allclose(profile.stream_rms, expected, rtol=1e-12)
    np.testing.assert_allclose(profile.final_stream, v, rtol=1e-12)


def test_deepnorm_sublayers_are_scaled_by_beta():
    _, _, plain = stack_sublayers("post", 16, seed=2)
    _, _, scaled = stack_sublayers("deepnorm", 16, seed=2)
    beta = deepnorm_constants(16, sublayers_per_layer=1)[1]
    for a, b in zip(plain, scaled):
        np.testing.assert_allclose(b.W1, beta * a.W1, rtol=1e-12)
        np.testing.assert_allclose(b.W2, beta * a.W2, rtol=1e-12)


def test_profile_shapes_and_determinism():
    p = stack_profile("pre", 5, width=6, seed=4)
    assert p.stream_rms.shape == (6,) and p.input_grad_norm.shape == (5,)
    q = stack_profile("pre", 5, width=6, seed=4)
    np.testing.assert_array_equal(p.stream_rms, q.stream_rms)
    assert p.identity_path and not stack_profile("post", 2).identity_path


# ----------------------------------------------------------------- seed 002's claims, measured

SEEDS = tuple(range(8))
DEPTH = 64


@lru_cache(maxsize=None)
def _profiles(variant, branch_scale=1.0):
    return tuple(stack_profile(variant, DEPTH, seed=s, branch_scale=branch_scale) for s in SEEDS)


def _log_grads(variant, branch_scale=1.0):
    return np.log10(np.array([p.input_grad_norm for p in _profiles(variant, branch_scale)]))


def test_normalised_streams_stay_bounded():
    """Post-LN and DeepNorm end every block with N: the stream's RMS is at most 1 at every layer."""
    for variant in ("post", "deepnorm"):
        for p in _profiles(variant):
            assert np.all(p.stream_rms[1:] <= 1.0 + 1e-12)
            assert np.all(p.stream_rms[1:] > 0.99)


@pytest.mark.parametrize("variant", ["pre", "pre_rms", "sandwich", "normformer"])
def test_identity_path_streams_grow_with_depth(variant):
    """Every variant that keeps the identity path lets the stream grow (sandwich included)."""
    for p in _profiles(variant):
        assert p.stream_rms[DEPTH] > 1.3 * p.stream_rms[8] > 1.3 * p.stream_rms[0]


def test_sandwich_bounds_the_writes_not_the_stream():
    """Sandwich / Peri-LN: the stream is (nearly) independent of the branch weights' scale,
    while Pre-LN's scales with them."""
    sandwich_1 = np.array([p.final_stream_rms for p in _profiles("sandwich", 1.0)])
    sandwich_3 = np.array([p.final_stream_rms for p in _profiles("sandwich", 3.0)])
    pre_1 = np.array([p.final_stream_rms for p in _profiles("pre", 1.0)])
    pre_3 = np.array([p.final_stream_rms for p in _profiles("pre", 3.0)])
    assert np.all((sandwich_3 / sandwich_1 > 0.5) & (sandwich_3 / sandwich_1 < 2.0))
    assert np.all(pre_3 / pre_1 > 4.0)
    # NormFormer normalises the hidden activation, not the write: its stream still scales.
    normformer_1 = np.array([p.final_stream_rms for p in _profiles("normformer", 1.0)])
    normformer_3 = np.array([p.final_stream_rms for p in _profiles("normformer", 3.0)])
    assert np.all(normformer_3 / normformer_1 > 1.3)
    # Each sandwich write has RMS at most 1, so the stream moves by at most 1 (RMS) per layer.
    for p in _profiles("sandwich", 3.0):
        assert np.all(np.abs(np.diff(p.stream_rms)) <= 1.0 + 1e-12)


def test_final_norm_anchors_what_the_head_sees():
    for p in _profiles("pre_final") + _profiles("pre_final", 3.0):
        assert p.final_stream_rms > 3.0  # the stream itself still grew
        assert p.output_rms == pytest.approx(1.0, abs=1e-5)


def test_pre_ln_input_gradient_does_not_vanish():
    """Identity-path variants: at every depth 1..64 and every seed the input gradient stays above 0.3."""
    for variant in ("pre", "pre_rms", "sandwich", "normformer"):
        assert _log_grads(variant).min() > math.log10(0.3), variant


def test_post_ln_input_gradient_drifts_and_spreads():
    """Post-LN's input gradient is a multiplicative random walk over depth: its spread across
    seeds widens with depth, and with stronger branches (scale 2) its median falls."""
    post = _log_grads("post")
    assert post[:, DEPTH - 1].std() > 1.5 * post[:, 7].std()
    assert post[:, DEPTH - 1].std() > 2.0 * _log_grads("deepnorm")[:, DEPTH - 1].std()
    strong = _log_grads("post", 2.0)
    assert np.median(strong[:, DEPTH - 1]) < np.median(strong[:, 0]) - 0.25
    assert np.median(_log_grads("pre")[:, DEPTH - 1]) > np.median(post[:, DEPTH - 1]) + 0.3


def test_deepnorm_input_gradient_is_flat_over_depth():
    """DeepNorm's up-weighted residual (alpha = L^(1/4)) and beta-scaled branches make each
    block nearly the identity on normalised vectors: the gradient barely moves with depth."""
    logs = _log_grads("deepnorm")
    assert np.all(logs.max(axis=1) - logs.min(axis=1) < 0.15)


# ----------------------------------------------------------------- table, formatting, validation


def test_family_table_rows():
    rows = family_table(layers=6, width=8, seed=2)
    assert [r["variant"] for r in rows] == list(VARIANTS)
    for row in rows:
        p = stack_profile(row["variant"], 6, width=8, seed=2)
        assert row["final_stream_rms"] == p.final_stream_rms
        assert row["input_grad_norm"] == p.final_input_grad_norm
        assert row["identity_path"] == VARIANTS[row["variant"]].identity_path
    identity = {r["variant"]: r["identity_path"] for r in rows}
    assert identity == {"post": False, "pre": True, "deepnorm": False, "sandwich": True,
                        "normformer": True, "pre_rms": True, "pre_final": True}
    assert [r["variant"] for r in family_table(layers=2, variants=["pre", "post"])] == ["pre", "post"]
    for row in family_table(layers=3, width=8, seed=2, variants=["llama", "reordered"]):
        _, w, _ = stack_sublayers(row["variant"], 3, 8, 2)
        p = stack_profile(row["variant"], 3, width=8, seed=2)
        assert row["relative_input_grad_norm"] == pytest.approx(p.final_input_grad_norm / np.linalg.norm(w))


def test_format_family_table():
    rows = family_table(layers=3, width=4)
    html = format_family_table(rows)
    assert html.startswith("<table") and html.count("<tr>") == len(rows) + 1
    md = format_family_table(rows, fmt="markdown")
    lines = md.rstrip("\n").split("\n")
    assert len(lines) == len(rows) + 2 and set(lines[1]) <= set("|-: ")
    cells = [[c.strip() for c in line.strip().strip("|").split("|")] for line in lines]
    assert cells[0][0] == "variant" and len(cells[0]) == 6
    for row, line in zip(rows, cells[2:]):
        assert line[0] == row["label"]
        assert line[1] == ("yes" if row["identity_path"] else "no")
        assert float(line[4]) == pytest.approx(row["relative_input_grad_norm"], rel=5e-3)
        assert line[5] == f"`{row['formula']}`"  # code, so underscores are not emphasis
    # without the formula: the same first five columns, and no sixth
    narrow = format_family_table(rows, fmt="markdown", formula=False).rstrip("\n").split("\n")
    assert [line[:5] for line in cells] == [
        [c.strip() for c in line.strip().strip("|").split("|")] for line in narrow]
    assert "block" not in format_family_table(rows, formula=False) and "block" in html
    with pytest.raises(ValueError, match="fmt"):
        format_family_table(rows, fmt="latex")
    with pytest.raises(ValueError, match="^digits:"):
        format_family_table(rows, digits=0)


def test_speed_of_the_default_profile():
    import time

    start = time.perf_counter()
    stack_profile("normformer", 64, width=16)
    assert time.perf_counter() - start < 2.0  # well under a second when the machine is idle


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"variant": "mid"}, "variant"),
        ({"layers": 0}, "layers"),
        ({"layers": 2.5}, "layers"),
        ({"layers": True}, "layers"),
        ({"layers": 10_000}, "layers"),
        ({"width": 1}, "width"),
        ({"width": 10_000}, "width"),
        ({"seed": -1}, "seed"),
        ({"branch_scale": 0.0}, "branch_scale"),
        ({"branch_scale": float("nan")}, "branch_scale"),
    ],
)
def test_stack_profile_validation(kwargs, name):
    args = {"variant": "pre", "layers": 3} | kwargs
    with pytest.raises(ValueError, match=f"^{name}:"):
        stack_profile(**args)


def test_block_validation(setup):
    x, f = setup
    with pytest.raises(ValueError, match="^alpha:"):
        deepnorm(x, f, 0.0)
    with pytest.raises(ValueError, match="^norm:"):
        sandwich(x, f, norm="batch")
    with pytest.raises(ValueError, match="^branch:"):
        normformer(x, f, branch="cross")
    with pytest.raises(ValueError, match="^sublayer:"):
        normformer(x, Linear(np.eye(8)))
    with pytest.raises(ValueError, match="^x:"):
        final_norm([1.0, float("inf")])
    with pytest.raises(ValueError, match="^layers:"):
        deepnorm_constants(0)
    with pytest.raises(ValueError, match="^sublayers_per_layer:"):
        deepnorm_constants(4, sublayers_per_layer=0)
    with pytest.raises(ValueError, match="^variant:"):
        family_table(layers=2, variants=["pre", "nope"])


@pytest.mark.parametrize("module", [placements, random_stack, backward_gains, residual_writes,
                                    attention_logits, family_table_module])
def test_module_exports(module):
    for name in module.__all__:
        assert hasattr(module, name)


# ----------------------------------------------------------------- the figure (figures.family_profiles)


def test_family_profiles_figure():
    from matplotlib.colors import to_rgba
    from matplotlib.figure import Figure

    from lnworked.figures import family_profiles

    layers, width, seed = 10, 8, 3
    fig = family_profiles(layers=layers, width=width, seed=seed)
    assert isinstance(fig, Figure)
    assert to_rgba(fig.get_facecolor()) == (1.0, 1.0, 1.0, 1.0)
    assert fig.patch.get_alpha() in (None, 1.0)
    lines = {line.get_gid(): line for ax in fig.axes for line in ax.get_lines() if line.get_gid()}
    for name, spec in VARIANTS.items():
        p = stack_profile(name, layers, width=width, seed=seed)
        _, w, _ = stack_sublayers(name, layers, width, seed)
        np.testing.assert_allclose(lines[f"grad-{name}"].get_ydata(), p.input_grad_norm / np.linalg.norm(w), rtol=1e-14)
        np.testing.assert_array_equal(lines[f"grad-{name}"].get_xdata(), np.arange(1, layers + 1))
        if spec.final:
            assert lines[f"head-{name}"].get_ydata()[0] == p.output_rms
        else:
            np.testing.assert_array_equal(lines[f"rms-{name}"].get_ydata(), p.stream_rms)
    assert fig.axes[1].get_yscale() == "log"
    png = fig._repr_png_()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"


def test_seed_spread_summarises_stack_profiles():
    summary = seed_spread("post", layers=6, seeds=[0, 1, 2], width=8)
    grads = [stack_profile("post", 6, width=8, seed=s).final_input_grad_norm for s in (0, 1, 2)]
    assert summary["seeds"] == 3
    assert summary["median_grad"] == pytest.approx(np.median(grads))
    assert summary["min_grad"] == min(grads) and summary["max_grad"] == max(grads)
    assert summary["log10_spread"] == pytest.approx(np.log10(grads).std())
    assert summary["min_grad_any_depth"] <= summary["min_grad"]
    with pytest.raises(ValueError, match="^seeds:"):
        seed_spread("post", seeds=[])


def test_readout_norm_and_the_relative_gradient():
    """readout_norm is ||w|| of the stack's own readout; the relative minimum is the minimum of
    input_grad_norm / ||w|| over seeds and depths (re-computed here from the profiles)."""
    seeds = [0, 1, 2]
    profiles = [stack_profile("pre", 6, width=8, seed=s) for s in seeds]
    for s, p in zip(seeds, profiles):
        assert p.readout_norm == pytest.approx(np.linalg.norm(stack_sublayers("pre", 6, 8, s)[1]))
    summary = seed_spread("pre", layers=6, seeds=seeds, width=8)
    expected = min(float((p.input_grad_norm / np.linalg.norm(stack_sublayers("pre", 6, 8, s)[1])).min())
                   for s, p in zip(seeds, profiles))
    assert summary["min_relative_grad_any_depth"] == pytest.approx(expected)


def test_independent_write_ratio_against_monte_carlo():
    """A wide stream plus independent writes of size r_1 ||x_0||: the measured ratio at block l
    matches r_1 / sqrt(1 + (l - 1) r_1^2)."""
    from lnworked.residual_writes import independent_write_ratio

    rng = np.random.default_rng(0)
    d, r1 = 20_000, 0.6
    x = rng.normal(size=d)
    for block in range(1, 41):
        write = rng.normal(size=d) * r1
        if block in (1, 10, 40):
            assert np.linalg.norm(write) / np.linalg.norm(x) == pytest.approx(independent_write_ratio(r1, block), rel=0.02)
        x = x + write
    assert independent_write_ratio(r1, 1) == r1
    with pytest.raises(ValueError, match="^block:"):
        independent_write_ratio(r1, 0)
    with pytest.raises(ValueError, match="^first_ratio:"):
        independent_write_ratio(-1.0, 3)



def test_relative_input_gradients_are_the_product_of_the_backward_gains():
    """Two routes to ||d(w . y_L)/dx_0|| / ||w||: stack_profile's product of block Jacobians
    divided by the readout's norm, and backward_gains' block-by-block walk of the vector
    g_L = w (the product of its gains is ||g_0|| / ||g_L||)."""
    from lnworked.family_table import relative_input_gradients

    seeds = [0, 1, 2]
    for variant in ("post", "pre", "deepnorm"):
        relative = relative_input_gradients(variant, layers=6, seeds=seeds, width=8)
        gains = backward_gains.backward_gains(variant, layers=6, seeds=seeds, width=8)["gain"]
        np.testing.assert_allclose(relative, np.prod(gains, axis=1), rtol=1e-10)
    raw = seed_spread("post", layers=6, seeds=seeds, width=8)
    relative = relative_input_gradients("post", layers=6, seeds=seeds, width=8)
    norms = [np.linalg.norm(stack_sublayers("post", 6, 8, s)[1]) for s in seeds]
    assert raw["max_grad"] == pytest.approx(max(relative * norms))
    with pytest.raises(ValueError, match="^seeds:"):
        relative_input_gradients("post", seeds=[])
