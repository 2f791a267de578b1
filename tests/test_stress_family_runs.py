"""The wider family trained on the stress test's model (lnworked.stress.family_runs), and Peri-LN's
switch in the model (config.peri_norm)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg

from lnworked.norms import layer_norm
from lnworked.placements import deepnorm_constants
from lnworked.stress.committed import committed_family
from lnworked.stress.config import StressConfig
from lnworked.stress.data import make_batches
from lnworked.stress.family_runs import (RATES, VARIANTS, check_rates, family_figure, family_rows, family_table,
                                         loss_curves, read_family_csv, summarise, variant_setup, write_family_csv)
from lnworked.stress.model import init_params, make_block, make_model

TINY = StressConfig(layers=1, steps=3, batch_size=4, sequence_length=8)
FLAX_EPS = 1e-6  # flax.linen.LayerNorm's and RMSNorm's default epsilon


# -- Peri-LN in the model


def _leaves(tree) -> dict:
    import jax

    return {jax.tree_util.keystr(path): np.asarray(leaf) for path, leaf in jax.tree_util.tree_flatten_with_path(tree)[0]}


def test_peri_ln_block_is_the_sandwich_formula_by_hand():
    """x + N_out(attn(N_in(x))), then the same around the MLP, with LayerNorm written out in float64
    (lnworked.norms) and the output norms' gains and shifts moved off 1 and 0, so that a norm used
    twice, or left out, shows."""
    import jax
    import jax.numpy as jnp

    config = TINY.replace(peri_norm=True)
    block = make_block(config, pre_norm=True)
    x = jax.random.normal(jax.random.PRNGKey(1), (2, config.sequence_length, config.width))
    params = dict(init_params(config, True)["block_0"])  # (the block's field `init` hides Module.init)
    rng = np.random.default_rng(3)
    for name in ("ln_1_out", "ln_2_out"):
        params[name] = {"scale": jnp.asarray(1 + 0.3 * rng.standard_normal(config.width), jnp.float32),
                        "bias": jnp.asarray(0.2 * rng.standard_normal(config.width), jnp.float32)}
    variables = {"params": params}

    def sublayer(name, v):
        return np.asarray(block.apply(variables, jnp.asarray(v, jnp.float32), method=lambda m, u: getattr(m, name)(u)),
                          np.float64)

    def norm(name, v):
        p = {k: np.asarray(a, np.float64) for k, a in params[name].items()}
        return layer_norm(v, p["scale"], p["bias"], eps=FLAX_EPS)

    h = np.asarray(x, np.float64)
    h = h + norm("ln_1_out", sublayer("attn", norm("ln_1", h)))
    h = h + norm("ln_2_out", sublayer("mlp", norm("ln_2", h)))
    np.testing.assert_allclose(block.apply(variables, x), h, rtol=1e-5, atol=1e-5)
    traced = jax.jit(lambda v, p: block.apply(variables, v, p))(x, jnp.asarray(True))  # placement as data
    np.testing.assert_allclose(traced, h, rtol=1e-5, atol=1e-5)


def test_peri_ln_adds_only_new_output_norms_and_keeps_the_articles_weights():
    """With the switch off the tree is the article's; on, it has the same leaves bit for bit plus
    two norms per block (identity at the start), and Pre-LN's final norm."""
    config = StressConfig(layers=3)
    article = _leaves(init_params(config, True))
    peri = _leaves(init_params(config.replace(peri_norm=True), True))
    assert set(article) <= set(peri)
    for path, leaf in article.items():
        np.testing.assert_array_equal(peri[path], leaf)
    added = set(peri) - set(article)
    assert added == {f"['block_{i}']['{n}']['{p}']" for i in range(3) for n in ("ln_1_out", "ln_2_out")
                     for p in ("scale", "bias")}
    for path in added:
        assert np.all(peri[path] == (1.0 if path.endswith("['scale']") else 0.0))
    assert "['final_norm']['scale']" in peri
    assert not any("ln_1_out" in path or "ln_2_out" in path for path in _leaves(init_params(config, False)))


def test_peri_ln_needs_the_pre_ln_placement():
    import jax.numpy as jnp

    from lnworked.stress.stacked import make_logits, stacked_init

    config = TINY.replace(peri_norm=True)
    with pytest.raises(ValueError, match="peri_norm"):
        make_model(config, False)
    with pytest.raises(ValueError, match="peri_norm"):
        make_logits(config)(stacked_init(config), make_batches(config)[0][0], jnp.asarray(False))


@pytest.mark.parametrize("bad", [1, "yes", None])
def test_peri_norm_must_be_a_bool(bad):
    with pytest.raises(ValueError, match="peri_norm"):
        StressConfig(peri_norm=bad)


# -- the variants


def test_variants_are_the_designs_they_name():
    config = StressConfig()
    alpha, kappa = deepnorm_constants(config.layers)
    expected = {"Pre-LN": (config, True), "Post-LN": (config, False),
                "DeepNorm (α and κ)": (config.replace(residual_scale=alpha, branch_init_scale=kappa), False),
                "Peri-LN": (config.replace(peri_norm=True), True),
                "Pre-LN, RMSNorm": (config.replace(norm="rmsnorm"), True),
                "Post-LN, RMSNorm": (config.replace(norm="rmsnorm"), False)}
    assert {v: variant_setup(v) for v in VARIANTS} == expected
    assert RATES == (config.learning_rate, 4 * config.learning_rate)
    with pytest.raises(ValueError, match="variant"):
        variant_setup("Sandwich")


@pytest.mark.parametrize("bad", [[], [0.0], [-1e-3], [float("nan")], [True], [1e-3, 1e-3], "0.002"])
def test_bad_rates_raise_naming_them(bad):
    with pytest.raises(ValueError, match="rates"):
        check_rates(bad)


@pytest.fixture(scope="module")
def tiny_rows():
    return family_rows([7, 8], config=TINY)


def test_tiny_rows_round_trip_through_the_csv(tiny_rows, tmp_path):
    assert len(tiny_rows) == len(VARIANTS) * len(RATES) * 2 * TINY.steps
    write_family_csv(tiny_rows, tmp_path / "family-runs.csv")
    back = read_family_csv(tmp_path / "family-runs.csv")
    assert [{k: r[k] for k in ("variant", "learning_rate", "seed", "step")} for r in back] == \
           [{k: r[k] for k in ("variant", "learning_rate", "seed", "step")} for r in tiny_rows]
    for ours, theirs in zip(back, tiny_rows):
        assert ours["loss"] == pytest.approx(theirs["loss"], rel=1e-8)
        assert ours["gradient_norm"] == pytest.approx(theirs["gradient_norm"], rel=1e-8)
    summary = summarise(back)
    assert set(summary) == {(v, r) for v in VARIANTS for r in RATES}
    assert all(d["seeds"] == [7, 8] and d["loss"].shape == (2, TINY.steps) for d in summary.values())


def test_each_runs_first_loss_is_its_unrolled_model_at_initialisation(tiny_rows):
    """Step 1's loss is logged before the first update: the cross-entropy of the unrolled TinyLM
    (not the stacked program that trains) with the variant's configuration and PRNGKey(seed)."""
    import jax
    import optax

    source, target = (a[0] for a in make_batches(TINY))
    for variant in VARIANTS:
        config, pre_norm = variant_setup(variant, TINY)
        for seed in (7, 8):
            params = init_params(config, pre_norm, jax.random.PRNGKey(seed))
            logits = make_model(config, pre_norm).apply({"params": params}, source)
            expected = float(optax.softmax_cross_entropy_with_integer_labels(logits, target).mean())
            for rate in RATES:
                (row,) = [r for r in tiny_rows if (r["variant"], r["learning_rate"], r["seed"], r["step"])
                          == (variant, rate, seed, 1)]
                assert row["loss"] == pytest.approx(expected, rel=1e-5), (variant, seed, rate)


def test_a_run_is_a_direct_train_runs_call(tiny_rows):
    """Peri-LN at the higher rate, seed 8, trained alone by train_runs with a constant-rate schedule."""
    from lnworked.stress.train import train_runs

    config = TINY.replace(peri_norm=True)
    sources, targets = make_batches(TINY)
    losses, norms, _ = train_runs(config, [True], [8], sources, targets, np.full((1, TINY.steps), RATES[1]))
    mine = sorted((r["step"], r["loss"], r["gradient_norm"]) for r in tiny_rows
                  if r["variant"] == "Peri-LN" and r["learning_rate"] == RATES[1] and r["seed"] == 8)
    np.testing.assert_allclose([m[1] for m in mine], losses[0], rtol=1e-5)
    np.testing.assert_allclose([m[2] for m in mine], norms[0], rtol=1e-5)
    assert mine[-1][1] < mine[0][1]  # it learns


def test_the_rate_changes_the_run_and_nothing_else(tiny_rows):
    """Both rates start from the same weights (same step-1 loss) and then part."""
    summary = summarise(tiny_rows)
    for variant in VARIANTS:
        low, high = (summary[(variant, r)]["loss"] for r in RATES)
        np.testing.assert_array_equal(low[:, 0], high[:, 0])
        assert np.all(low[:, -1] != high[:, -1])


def test_family_table_by_hand():
    rows = [{"variant": "Peri-LN", "learning_rate": 0.002, "seed": seed, "step": step,
             "loss": loss, "gradient_norm": 1.0 + step}
            for seed, losses in ((7, [4.0, 3.0, 2.0]), (8, [4.5, 3.5, 1.0]), (9, [4.0, float("nan"), 4.0]))
            for step, loss in enumerate(losses, start=1)]
    (row,) = family_table(summarise(rows), last=2)
    assert row["seeds"] == [7, 8, 9] and row["diverged"] == 1
    assert (row["final_min"], row["final_max"]) == pytest.approx((2.25, 2.5))  # seeds 7, 8: steps 2-3
    assert row["final_loss"] == pytest.approx(2.375)
    assert row["start_loss"] == pytest.approx((4.0 + 4.5 + 4.0) / 3)
    assert row["max_gradient_norm"] == 4.0


def test_final_loss_cells_by_hand():
    from lnworked.stress.family_runs import final_loss_markdown, format_final

    small = {"final_loss": 0.00187, "final_min": 0.00184, "final_max": 0.0019}
    assert format_final(small) == "1.87 × 10⁻³ (1.84–1.9)"
    assert format_final({"final_loss": 9.94e-5, "final_min": 9.9e-5, "final_max": 1.03e-4}) == "9.94 × 10⁻⁵ (9.9–10.3)"
    assert format_final({"final_loss": 3.3246, "final_min": 2.993, "final_max": 3.9461}) == "3.32 (2.99–3.95)"
    assert format_final({"final_loss": math.nan, "final_min": math.nan, "final_max": math.nan}) == "diverged"
    table = [{"variant": "DeepNorm (α and κ)", "learning_rate": 0.002, "diverged": 0, **small},
             {"variant": "DeepNorm (α and κ)", "learning_rate": 0.008, "diverged": 1,
              "final_loss": 4.0, "final_min": 3.5, "final_max": 4.5}]
    assert final_loss_markdown(table).splitlines() == [
        "| design | rate 0.002 | rate 0.008 |", "|---|---:|---:|",
        "| DeepNorm | 1.87 × 10⁻³ (1.84–1.9) | 4 (3.5–4.5), + 1 diverged |"]


# -- the committed measurement


@pytest.fixture(scope="module")
def committed():
    rows, info = committed_family()
    return summarise(rows), info


def test_committed_family_is_complete_and_carries_its_provenance(committed):
    summary, info = committed
    config = StressConfig()
    assert info["command"].startswith("lnworked stress family --seeds 7 8 9") and info["seconds"] > 0
    assert info["versions"]["jax"] and info["date"] and StressConfig(**info["config"]) == config
    assert set(summary) == {(v, r) for v in VARIANTS for r in RATES}
    assert info["rows"] == len(VARIANTS) * len(RATES) * 3 * config.steps
    for key, data in summary.items():
        assert data["seeds"] == [7, 8, 9], key
        assert data["loss"].shape == data["gradient_norm"].shape == (3, config.steps), key
    for row in family_table(summary):  # a run is finite, or counted as diverged
        finite = np.isfinite(summary[(row["variant"], row["learning_rate"])]["loss"]).all(axis=1)
        assert row["diverged"] == int((~finite).sum())
        assert row["diverged"] == 3 or math.isfinite(row["final_loss"])


def test_committed_start_is_each_designs_loss_at_initialisation(committed):
    """Step 1 of every committed run, one seed per variant, from the unrolled model at the article's
    configuration (float32: 1e-5 relative)."""
    import jax
    import optax

    summary, _ = committed
    source, target = (a[0] for a in make_batches(StressConfig(steps=1)))
    for variant in VARIANTS:
        config, pre_norm = variant_setup(variant)
        params = init_params(config, pre_norm, jax.random.PRNGKey(9))
        logits = make_model(config, pre_norm).apply({"params": params}, source)
        expected = float(optax.softmax_cross_entropy_with_integer_labels(logits, target).mean())
        for rate in RATES:
            assert summary[(variant, rate)]["loss"][2, 0] == pytest.approx(expected, rel=1e-5), (variant, rate)


def test_committed_family_figure_reads_on_a_phone(committed):
    """One panel per rate, a line per variant and the uniform guess; at most 5 in wide, one legend
    below the panels with text of at least 13 pt, the loss on a log axis."""
    summary, _ = committed
    fig = family_figure(summary)
    axes = fig.axes
    assert len(axes) == len(RATES) and fig.get_figwidth() <= 5.0
    for ax in axes:
        assert ax.get_yscale() == "log" and ax.get_legend() is None
        gids = {line.get_gid() for line in ax.get_lines()}
        assert gids >= {f"loss-{v}" for v in VARIANTS}
        assert any(np.allclose(line.get_ydata(), math.log(64)) for line in ax.get_lines())
    rows, _ = committed_family()
    for ax, rate in zip(axes, RATES):  # the label names the runs that end within 1.5x of the lowest
        last = {v: np.mean([r["loss"] for r in rows if (r["variant"], r["learning_rate"], r["step"])
                            == (v, rate, StressConfig().steps)]) for v in VARIANTS}
        close = {v for v in VARIANTS if last[v] <= 1.5 * min(last.values())}
        (label,) = [t.get_text() for t in ax.texts if t.get_gid() == "together"]
        named = {n.strip() for line in label.splitlines()[1:] for n in line.split("·")}
        short = {"DeepNorm (α and κ)": "DeepNorm", "Pre-LN, RMSNorm": "Pre-LN, RMS", "Post-LN, RMSNorm": "Post-LN, RMS"}
        assert named == {short.get(v, v) for v in close}
    texts = fig.legends[0].get_texts()
    assert len(fig.legends) == 1 and len(texts) == len(VARIANTS)
    assert min(t.get_fontsize() for t in texts) >= 13
    renderer = FigureCanvasAgg(fig).get_renderer()
    fig.draw(renderer)
    assert fig.legends[0].get_window_extent(renderer).y1 <= axes[-1].get_tightbbox(renderer).y0 + 1


@pytest.mark.slow
def test_committed_family_recomputes():
    """Seed 7's first 5 steps of Peri-LN and of Post-LN with RMSNorm at the higher rate, recomputed
    (float32 rounding compounds over steps and the chunk length differs: 1e-4 relative)."""
    summary = summarise(committed_family()[0])
    variants = ["Peri-LN", "Post-LN, RMSNorm"]
    curves = loss_curves([7], [RATES[1]], variants=variants, steps=5)
    for variant in variants:
        np.testing.assert_allclose(curves[(variant, RATES[1])][0][0], summary[(variant, RATES[1])]["loss"][0, :5],
                                   rtol=1e-4)
