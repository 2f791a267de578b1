"""DeepNorm's alpha (residual weight) and beta (branch initial scale) in the stress test's model, and the
committed measurement that varies them (lnworked.stress.deepnorm)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg

from lnworked.stress.committed import committed_deepnorm
from lnworked.stress.config import StressConfig, warmup_for
from lnworked.stress.data import make_batches
from lnworked.stress.deepnorm import (VARIANTS, branch_shares, deepnorm_figure, final_loss, first_update_fractions,
                                      loss_curves, summarise, variant_setup, variant_table)
from lnworked.stress.model import BRANCH_SCALED_KERNELS, init_params, make_block, make_model
from lnworked.stress.stacked import make_logits, stack_params
from lnworked.stress.step import module_logits

SMALL = StressConfig(layers=3, steps=6)
ALPHA, BETA = 1.7, 0.45  # any values != 1


@pytest.mark.parametrize("name", ["residual_scale", "branch_init_scale"])
@pytest.mark.parametrize("bad", [0, -1.0, float("nan"), float("inf"), True, "2"])
def test_bad_scales_raise_naming_the_field(name, bad):
    with pytest.raises(ValueError, match=name):
        StressConfig(**{name: bad})


def test_the_defaults_are_the_articles_model():
    config = StressConfig()
    assert config.residual_scale == 1.0 and config.branch_init_scale == 1.0


@pytest.mark.parametrize("pre_norm", [True, False])
@pytest.mark.parametrize("unroll", [1, None])
def test_stacked_model_equals_the_unrolled_one_with_alpha_and_beta(pre_norm, unroll):
    import jax.numpy as jnp

    config = SMALL.replace(residual_scale=ALPHA, branch_init_scale=BETA)
    params = init_params(config, pre_norm)
    source = make_batches(config.replace(steps=1))[0][0]
    theirs = module_logits(make_model(config, pre_norm))(params, source)
    ours = make_logits(config, unroll)(stack_params(params, config), source, jnp.asarray(pre_norm))
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-5)


# -- one Post-LN block by hand (numpy, float64): x -> LN(alpha x + Attn(x)) -> LN(alpha h + MLP(h))


def _layer_norm(x, scale, bias, eps=1e-6):  # Flax's LayerNorm defaults
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * scale + bias


def _gelu(x):  # Flax's nn.gelu (tanh approximation)
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))


def _attention(x, p, heads):
    batch, length, width = x.shape
    qkv = x @ p["qkv"]["kernel"] + p["qkv"]["bias"]
    q, k, v = (qkv[..., i * width:(i + 1) * width].reshape(batch, length, heads, -1) for i in range(3))
    scores = np.einsum("bthd,bshd->bhts", q, k) / np.sqrt(width // heads)
    scores = np.where(np.tril(np.ones((length, length), bool)), scores, -np.inf)
    weights = np.exp(scores - scores.max(-1, keepdims=True))
    weights /= weights.sum(-1, keepdims=True)
    mixed = np.einsum("bhts,bshd->bthd", weights, v).reshape(batch, length, width)
    return mixed @ p["attention_output"]["kernel"] + p["attention_output"]["bias"]


def _mlp(x, p):
    return _gelu(x @ p["mlp_in"]["kernel"] + p["mlp_in"]["bias"]) @ p["mlp_out"]["kernel"] + p["mlp_out"]["bias"]


@pytest.mark.parametrize("alpha", [1.0, ALPHA])
def test_one_post_ln_block_by_hand(alpha):
    import flax.linen as nn
    import jax

    config = SMALL.replace(residual_scale=alpha)
    block = make_block(config, pre_norm=False)
    x = np.asarray(jax.random.normal(jax.random.PRNGKey(3), (2, 5, config.width)), np.float32)
    params = nn.Module.init(block, jax.random.PRNGKey(4), x)["params"]  # the field ``init`` shadows the method
    p = jax.tree.map(lambda a: np.asarray(a, np.float64), params)
    h = _layer_norm(alpha * x + _attention(x.astype(np.float64), p, config.heads), **p["ln_1"])
    expected = _layer_norm(alpha * h + _mlp(h, p), **p["ln_2"])
    np.testing.assert_allclose(block.apply({"params": params}, x), expected, rtol=2e-4, atol=2e-5)
    traced = block.apply({"params": params}, x, np.asarray(False))  # the placement as data
    np.testing.assert_allclose(traced, expected, rtol=2e-4, atol=2e-5)


def test_beta_scales_value_output_and_mlp_kernels_only():
    import jax

    for zero_qk in (False, True):
        base = SMALL.replace(zero_qk=zero_qk)
        plain = jax.tree_util.tree_flatten_with_path(init_params(base, True))[0]
        scaled = dict(jax.tree_util.tree_flatten_with_path(init_params(base.replace(branch_init_scale=BETA), True))[0])
        width = base.width
        changed = set()
        for path, old in plain:
            new, names = np.asarray(scaled[path]), [getattr(k, "key", None) for k in path]
            old = np.asarray(old)
            if names[-1] == "kernel" and names[-2] in BRANCH_SCALED_KERNELS:
                first = 2 * width if names[-2] == "qkv" else 0  # W^Q, W^K keep their scale
                np.testing.assert_allclose(new[:, first:], BETA * old[:, first:], rtol=1e-6)
                np.testing.assert_array_equal(new[:, :first], old[:, :first])
                changed.add(names[-2])
            else:
                np.testing.assert_array_equal(new, old)
        assert changed == {"qkv", "attention_output", "mlp_in", "mlp_out"}


def test_variants_use_the_papers_decoder_only_constants():
    """Wang et al. 2022 (Fig. 2 / Table 1, decoder-only, N layers): alpha = (2N)^(1/4), beta = (8N)^(-1/4)."""
    config = StressConfig()
    deep, pre_norm, warmup = variant_setup("DeepNorm (α and κ)", config)
    assert not pre_norm and warmup == 0
    assert deep.residual_scale == pytest.approx((2 * config.layers) ** 0.25)
    assert deep.branch_init_scale == pytest.approx((8 * config.layers) ** -0.25)
    assert variant_setup("Post-LN, α only")[0].branch_init_scale == 1.0
    assert variant_setup("Post-LN, κ only")[0].residual_scale == 1.0
    assert variant_setup("Post-LN + warmup")[2] == warmup_for(config.steps)
    with pytest.raises(ValueError, match="variant"):
        variant_setup("Sandwich")


def test_branch_share_honours_alpha():
    """rho_i = ||a||^2 / ||alpha s + a||^2, recomputed sublayer by sublayer with the block's own
    attention, MLP and norms (no scan, no placement flag)."""
    import jax
    import jax.numpy as jnp

    from lnworked.stress.amplification import branch_dependence
    from lnworked.stress.train import initial_state

    config = SMALL.replace(layers=2, residual_scale=ALPHA, branch_init_scale=BETA)
    shares = branch_dependence([7], config)[False][0]
    params = jax.tree.map(lambda leaf: leaf[0], initial_state(config, [7])[0][0])
    source = make_batches(config.replace(steps=1))[0][0]
    x = jnp.take(params["embedding"]["embedding"], source, axis=0) + params["position"][:, : source.shape[1]]
    block, expected = make_block(config, pre_norm=False), []
    for l in range(config.layers):
        layer = {"params": jax.tree.map(lambda leaf: leaf[l], params["blocks"])}
        for branch, norm in (("attn", "ln_1"), ("mlp", "ln_2")):
            a = block.apply(layer, x, method=lambda m, v: getattr(m, branch)(v))
            y = ALPHA * x + a
            expected.append(float(jnp.sum(a ** 2) / jnp.sum(y ** 2)))
            x = block.apply(layer, y, method=lambda m, v: getattr(m, norm)(v))
    np.testing.assert_allclose(shares, expected, rtol=1e-4)


def test_final_loss_is_the_mean_of_the_last_steps():
    losses = np.arange(30.0).reshape(2, 15)
    np.testing.assert_allclose(final_loss(losses, 10), [np.mean(range(5, 15)), np.mean(range(20, 30))])
    with pytest.raises(ValueError, match="last"):
        final_loss(losses, 16)


def test_variant_table_by_hand():
    rows = [{"variant": "Post-LN", "seed": seed, "quantity": q, "index": i, "value": v}
            for seed, shares, dl, lin in ((7, [0.1, 0.2, 0.3, 0.4], -0.1, -0.4), (8, [0.3, 0.4, 0.5, 0.6], -0.3, -0.6))
            for q, i, v in [*(("branch_share", i, x) for i, x in enumerate(shares)),
                            ("delta_loss", 0, dl), ("linear_delta_loss", 0, lin),
                            *(("loss", step, 4.0 - step + seed) for step in (1, 2, 3))]]
    (row,) = variant_table(summarise(rows), last=2)
    assert row["seeds"] == [7, 8]
    assert row["rho_first"] == pytest.approx((0.1 + 0.2 + 0.3 + 0.4) / 4)  # block 1: sublayers 1, 2
    assert row["rho_last"] == pytest.approx((0.3 + 0.4 + 0.5 + 0.6) / 4)
    assert row["rho_mean"] == pytest.approx(0.35)
    assert row["delivered"] == pytest.approx((0.25 + 0.5) / 2)
    assert (row["final_min"], row["final_max"]) == pytest.approx((8.5, 9.5))  # mean of steps 2, 3
    assert row["start_loss"] == pytest.approx(10.5)


# -- the committed measurement


@pytest.fixture(scope="module")
def committed():
    rows, info = committed_deepnorm()
    return summarise(rows), info


def test_committed_deepnorm_is_complete_and_carries_its_provenance(committed):
    summary, info = committed
    config = StressConfig()
    assert info["command"].startswith("lnworked stress deepnorm") and info["seconds"] > 0
    assert info["versions"]["jax"] and info["date"] and StressConfig(**info["config"]) == config
    assert set(summary) == set(VARIANTS)
    for variant, data in summary.items():
        assert data["seeds"] == [7, 8, 9]
        assert data["loss"].shape == (3, config.steps) and np.all(np.isfinite(data["loss"]))
        if variant != "Post-LN + warmup":
            assert data["branch_share"].shape == (3, 2 * config.layers)
            assert np.all((data["branch_share"] > 0) & (data["branch_share"] < 1))
            assert data["delta_loss"].shape == (3, 1) and np.all(data["linear_delta_loss"] < 0)


def test_committed_deepnorm_figure(committed):
    summary, _ = committed
    fig = deepnorm_figure(summary)
    top, bottom = fig.axes[:2]
    assert any(np.allclose(line.get_ydata(), math.log(64)) for line in top.get_lines())
    assert len(bottom.get_lines()) == len(VARIANTS) - 1


def test_deepnorm_figure_reads_on_a_phone(committed):
    """At 350-390 px: at most 5 in wide, one legend below the panels (not over the curves) with text of
    at least 13 pt, and the loss on a log axis, so curves near 1e-3 nats do not sit on the zero line."""
    summary, _ = committed
    fig = deepnorm_figure(summary)
    top, bottom = fig.axes[:2]
    assert fig.get_figwidth() <= 5.0
    assert top.get_yscale() == "log" and bottom.get_yscale() == "log"
    assert top.get_legend() is None and bottom.get_legend() is None and len(fig.legends) == 1
    texts = fig.legends[0].get_texts()
    assert len(texts) == len(VARIANTS)
    assert min(t.get_fontsize() for t in texts) >= 13
    assert max(len(t.get_text()) for t in texts) <= 16
    renderer = FigureCanvasAgg(fig).get_renderer()
    fig.draw(renderer)  # the constrained layout places the legend
    legend_top = fig.legends[0].get_window_extent(renderer).y1
    assert legend_top <= bottom.get_tightbbox(renderer).y0 + 1  # below the lower panel and its labels
    # the four converged curves hide one another: a label on the plot names them, and only them
    (label,) = [t.get_text() for t in top.texts if "on top of one another" in t.get_text()]
    named = label.split(":")[0].split(", ")
    assert sorted(named) == sorted(["Pre-LN", "α", "κ", "DeepNorm"])


@pytest.mark.slow
def test_committed_deepnorm_recomputes(committed):
    """Seed 7 recomputed: branch shares and the first update (one float32 forward/backward: a few ulp
    of the ~4.2 nat loss, so 1e-5 absolute on loss differences) and the first 5 training steps
    (float32 rounding compounds over steps and the chunk length differs: 1e-4 relative)."""
    summary, _ = committed
    config = StressConfig()
    variants = ["Post-LN", "DeepNorm (α and κ)"]
    shares = branch_shares([7], config, variants)
    first = first_update_fractions([7], config, variants)
    curves = loss_curves([7], config, variants, steps=5)
    for variant in variants:
        np.testing.assert_allclose(shares[variant][0], summary[variant]["branch_share"][0], rtol=1e-4)
        for key in ("delta_loss", "linear_delta_loss"):
            np.testing.assert_allclose(first[variant][key][0], summary[variant][key][0, 0], atol=1e-5)
        np.testing.assert_allclose(curves[variant][0][0], summary[variant]["loss"][0, :5], rtol=1e-4)


# -- the section's explorer (lnworked.stress.deepnorm_explorer)


def _by_hand(rows, variant, seed, quantity):
    """The committed rows of one run's ``quantity``, in index order (read here from the CSV's rows)."""
    mine = sorted((r["index"], r["value"]) for r in rows
                  if r["variant"] == variant and r["seed"] == seed and r["quantity"] == quantity)
    return np.array([v for _, v in mine])


def test_deepnorm_explorer_offers_exactly_the_committed_runs():
    from lnworked.stress.deepnorm_explorer import deepnorm_explorer_spec

    rows, _ = committed_deepnorm()
    options = {c.name: list(c.values) for c in deepnorm_explorer_spec().controls}
    assert options == {"variant": list(dict.fromkeys(r["variant"] for r in rows)),
                       "seed": sorted({r["seed"] for r in rows})}
    assert options["variant"] == list(VARIANTS)


def test_deepnorm_readouts_are_the_runs_and_average_to_the_sections_table():
    """Each run's readouts from the CSV's rows by hand; their means over the seeds are variant_table's."""
    from lnworked.explore import format_readout
    from lnworked.stress.deepnorm_explorer import deepnorm_readouts

    rows, _ = committed_deepnorm()
    summary = summarise(rows)
    for row in variant_table(summary):
        variant, texts = row["variant"], []
        for seed in row["seeds"]:
            shown = deepnorm_readouts(summary, variant, seed)
            assert shown["final-loss"] == format_readout(_by_hand(rows, variant, seed, "loss")[-10:].mean())
            shares = _by_hand(rows, variant, seed, "branch_share")
            delta = _by_hand(rows, variant, seed, "delta_loss")
            if shares.size:
                assert shown["branch-share"] == format_readout(shares.mean())
                share = delta[0] / _by_hand(rows, variant, seed, "linear_delta_loss")[0]
                assert shown["delivered"] == f"{round(100 * share, 1) + 0.0:.1f}\u00a0%"  # the book's unit
            else:
                assert shown["branch-share"].startswith("not measured") and shown["delivered"].startswith("not")
            texts.append(shown)
        mean = {k: np.mean([float(t[k].removesuffix("\u00a0%")) for t in texts])
                for k in ("final-loss", "branch-share", "delivered") if not texts[0][k].startswith("not")}
        # the readouts show 3 significant digits (format_readout): their mean is within half a unit of the third
        assert mean["final-loss"] == pytest.approx(row["final_loss"], rel=5e-3)
        if row["delivered"] is None:
            assert set(mean) == {"final-loss"}
        else:
            assert mean["branch-share"] == pytest.approx(row["rho_mean"], rel=5e-3)
            # one decimal of a percentage: each seed's within 0.05 points
            assert mean["delivered"] == pytest.approx(100 * row["delivered"], abs=0.05)


def test_deepnorm_explorer_grid_holds_every_run_with_the_uniform_guess():
    from lnworked.explore import spec_grid
    from lnworked.stress.deepnorm_explorer import DEEPNORM_READOUT_KEYS, deepnorm_explorer_spec, deepnorm_readouts

    rows, _ = committed_deepnorm()
    summary = summarise(rows)
    grid = spec_grid(deepnorm_explorer_spec())
    assert grid["uniform"] == pytest.approx(math.log(StressConfig().vocab_size), abs=1e-4)
    assert len(grid["runs"]) == len(VARIANTS) * 3
    for variant in VARIANTS:
        for seed in (7, 8, 9):
            run = grid["runs"][f"{variant}|{seed}"]
            loss = _by_hand(rows, variant, seed, "loss")
            np.testing.assert_allclose(run["loss"], loss, rtol=1e-3)
            assert grid["y_min"] <= loss.min() and max(loss.max(), math.log(64)) <= grid["y_max"]
            shown = deepnorm_readouts(summary, variant, seed)
            assert run["readouts"] == [shown[k] for k in DEEPNORM_READOUT_KEYS]


@pytest.mark.parametrize("variant, seed, name", [("DeepNet", 7, "variant"), ("Post-LN", 10, "seed"),
                                                 ("Post-LN", "7", "seed")])
def test_deepnorm_readouts_reject_a_run_that_is_not_there(variant, seed, name):
    from lnworked.stress.deepnorm_explorer import deepnorm_readouts

    with pytest.raises(ValueError, match=name):
        deepnorm_readouts(summarise(committed_deepnorm()[0]), variant, seed)


def test_deepnorm_explorer_rejects_runs_that_are_not_a_full_grid(tmp_path):
    import shutil

    from importlib import resources

    from lnworked.stress.deepnorm import write_deepnorm_csv
    from lnworked.stress.deepnorm_explorer import deepnorm_explorer_spec

    rows, _ = committed_deepnorm()
    write_deepnorm_csv([r for r in rows if not (r["variant"] == "Pre-LN" and r["seed"] == 9)], tmp_path / "deepnorm.csv")
    with resources.as_file(resources.files("lnworked") / "data" / "deepnorm-provenance.json") as path:
        shutil.copy(path, tmp_path)
    with pytest.raises(ValueError, match="folder"):
        deepnorm_explorer_spec(tmp_path)


def test_static_deepnorm_explorer_responds_to_its_controls(monkeypatch):
    """The static HTML run by the book's explorer script (Node.js with a minimal DOM)."""
    from test_explore import _run_in_node

    from lnworked.stress.deepnorm_explorer import DEEPNORM_READOUT_KEYS, deepnorm_explorer, deepnorm_readouts

    monkeypatch.setenv("LNWORKED_STATIC_BUILD", "1")
    summary = summarise(committed_deepnorm()[0])
    html = deepnorm_explorer().data
    assert 'data-explorer="deepnorm"' in html and 'aria-live="polite"' in html
    actions = [{"root": 0, "name": "variant", "value": "DeepNorm (α and κ)", "event": "change"},
               {"root": 0, "name": "seed", "value": "9", "event": "change"},
               {"root": 0, "name": "variant", "value": "Post-LN + warmup", "event": "change"}]
    results = _run_in_node(html, actions)
    assert results[0]["initial"]["ready"] == "1" and results[0]["initial"]["lines"] == 1
    for result, key in zip(results[1:], [("DeepNorm (α and κ)", 7), ("DeepNorm (α and κ)", 9),
                                         ("Post-LN + warmup", 9)]):
        shown = deepnorm_readouts(summary, *key)
        assert result["state"]["readouts"] == {k: shown[k] for k in DEEPNORM_READOUT_KEYS}, key
        assert result["state"]["lines"] == 1


def test_live_deepnorm_explorer_draws_the_run_and_the_uniform_guess(monkeypatch):
    from lnworked.stress.deepnorm_explorer import deepnorm_explorer, deepnorm_readouts

    monkeypatch.delenv("LNWORKED_STATIC_BUILD", raising=False)
    rows, _ = committed_deepnorm()
    box = deepnorm_explorer()
    assert set(box.lnw_controls) == {"variant", "seed"}
    box.lnw_controls["variant"].value = "Post-LN, κ only"
    box.lnw_controls["seed"].value = 8
    assert box.lnw_values == deepnorm_readouts(summarise(rows), "Post-LN, κ only", 8)
    lines = {line.get_gid(): line for line in box.lnw_figure.axes[0].get_lines()}
    assert set(lines) == {"loss", "uniform"}
    np.testing.assert_allclose(lines["uniform"].get_ydata(), math.log(StressConfig().vocab_size))
    np.testing.assert_allclose(lines["loss"].get_ydata(), _by_hand(rows, "Post-LN, κ only", 8, "loss"))
