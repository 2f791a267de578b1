"""Xiong et al. (2020)'s W2 gradient at initialisation (lnworked.stress.xiong): autodiff against
finite differences, the stacked route against the unrolled Flax model, Theorem 1's direction
across seeds, the committed sweep against a fresh recomputation, bad arguments."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from lnworked.stress.committed import committed_xiong
from lnworked.stress.config import StressConfig
from lnworked.stress.data import make_batches
from lnworked.stress.model import init_params, make_model
from lnworked.stress.step import make_loss, module_logits
from lnworked.stress.xiong import (article_path, loglog_slope, summarise, sweep_path, theory_path, w2_batch_table,
                                   w2_gradient_norms, w2_table, xiong_like, xiong_theory)

TINY = StressConfig(vocab_size=8, sequence_length=4, width=8, heads=2, layers=2, batch_size=2)


def _unrolled_w2_grads(config, pre_norm, seed, batches=1):
    """``d loss_b / d block_l.mlp_out.kernel`` through the unrolled Flax TinyLM, as numpy arrays
    of shape ``(batches, layers, m, n)``."""
    params = init_params(config, pre_norm, jax.random.PRNGKey(seed))
    sources, targets = make_batches(config.replace(steps=batches))
    grad = jax.grad(make_loss(module_logits(make_model(config, pre_norm))))
    return np.array([[np.asarray(grad(params, s, t)[f"block_{l}"]["mlp_out"]["kernel"], np.float64)
                      for l in range(config.layers)] for s, t in zip(sources, targets)])


def _unrolled_w2(config, pre_norm, seed):
    """``||d loss / d block_l.mlp_out.kernel||_F`` on the first batch, through the unrolled Flax TinyLM."""
    return np.linalg.norm(_unrolled_w2_grads(config, pre_norm, seed)[0], axis=(1, 2))


@pytest.mark.parametrize("config", [TINY, xiong_like(TINY), xiong_theory(TINY)], ids=["article", "xiong-like", "theory"])
@pytest.mark.parametrize("pre_norm", [True, False])
def test_stacked_route_matches_the_unrolled_flax_model_at_depth_2(config, pre_norm):
    stacked = w2_gradient_norms(config, pre_norm, seeds=[3])[0]
    np.testing.assert_allclose(stacked, _unrolled_w2(config, pre_norm, 3), rtol=1e-4)


@pytest.mark.parametrize("config", [TINY, xiong_theory(TINY)], ids=["article", "theory"])
@pytest.mark.parametrize("pre_norm", [True, False])
def test_expected_gradient_is_the_norm_of_the_batch_mean_of_unrolled_gradients(config, pre_norm):
    """Xiong et al.'s Fig. 3 quantity: average the per-batch gradients (here by hand, in numpy,
    from the unrolled Flax model), then take the Frobenius norm."""
    batches = 3
    table = w2_batch_table(config, [2], [pre_norm], [5], batches=batches)[0]
    grads = _unrolled_w2_grads(config, pre_norm, 5, batches)  # (batches, layers, m, n)
    np.testing.assert_allclose(table[0], np.linalg.norm(grads[0], axis=(1, 2)), rtol=1e-4)
    np.testing.assert_allclose(table[1], np.linalg.norm(grads.mean(axis=0), axis=(1, 2)), rtol=1e-4)
    np.testing.assert_allclose(table[2], np.linalg.norm(grads, axis=(2, 3)).mean(axis=0), rtol=1e-4)


def test_expected_gradient_norm_is_at_most_the_mean_batch_norm():
    """The triangle inequality: ||mean_b G_b|| <= mean_b ||G_b||, strictly when the batches' gradients
    point different ways; at one batch the three norms coincide."""
    config = xiong_theory(TINY).replace(layers=3)
    table = w2_batch_table(config, [3, 2, 3], [True, False, False], [0, 1, 2], batches=4)
    assert np.all(table[:, 1] <= table[:, 2] * (1 + 1e-6))
    assert np.all(table[:, 1, :2] < table[:, 2, :2])
    one = w2_batch_table(config, [3], [False], [0], batches=1)[0]
    np.testing.assert_allclose(one[1], one[0], rtol=1e-6)
    np.testing.assert_allclose(one[2], one[0], rtol=1e-6)


def test_theory_setting_starts_with_uniform_attention_and_d_by_d_mlp():
    """Zero W^Q, W^K: every score is 0, so (without the causal mask) each position's attention
    output is the same average; the MLP's W1, W2 are d x d; the readout is the embedding."""
    from lnworked.stress.model import Block

    config = xiong_theory(TINY)
    params = init_params(config, True, jax.random.PRNGKey(0))
    block = params["block_0"]
    assert np.all(np.asarray(block["qkv"]["kernel"][:, : 2 * config.width]) == 0)
    assert np.any(np.asarray(block["qkv"]["kernel"][:, 2 * config.width:]) != 0)
    assert block["mlp_in"]["kernel"].shape == block["mlp_out"]["kernel"].shape == (config.width, config.width)
    assert "output" not in params
    x = jax.random.normal(jax.random.PRNGKey(1), (2, 5, config.width))
    mixed = Block(config.width, 1, True, causal=False, zero_qk=True).apply(
        {"params": block}, x, method=lambda m, x: m.attn(x))
    np.testing.assert_allclose(mixed, jnp.broadcast_to(mixed[:, :1], mixed.shape), atol=1e-6)
    tokens = jnp.array([[1, 2, 3, 0]])
    hidden = jnp.take(params["embedding"]["embedding"], tokens, axis=0)
    # ReLU: the MLP's nonlinearity is max(0, .)
    relu = Block(config.width, 1, True, activation="relu", mlp_ratio=1).apply(
        {"params": block}, hidden, method=lambda m, x: m.mlp(x))
    pre = hidden @ block["mlp_in"]["kernel"] + block["mlp_in"]["bias"]
    np.testing.assert_allclose(relu, np.maximum(pre, 0) @ block["mlp_out"]["kernel"] + block["mlp_out"]["bias"],
                               rtol=1e-5, atol=1e-6)


def test_tied_readout_reads_out_with_the_embedding():
    config = xiong_theory(TINY)
    params = init_params(config, False, jax.random.PRNGKey(0))
    tokens = jnp.array([[1, 2, 3, 0]])
    logits = make_model(config, False).apply({"params": params}, tokens)
    untied = config.replace(tied_readout=False)
    params_untied = {**params, "output": {"kernel": params["embedding"]["embedding"].T}}
    np.testing.assert_allclose(logits, make_model(untied, False).apply({"params": params_untied}, tokens),
                               rtol=1e-5, atol=1e-6)


def test_theory_path_moves_one_difference_at_a_time_and_ends_at_the_article():
    from lnworked.stress.xiong import THEORY_TO_ARTICLE

    path = theory_path()
    assert path[0][1] == xiong_theory() and path[-1][1] == StressConfig()
    for (_, before), (_, after), (_, fields) in zip(path, path[1:], THEORY_TO_ARTICLE):
        changed = {k for k, v in before.as_dict().items() if after.as_dict()[k] != v}
        assert changed == set(fields)
    # the untying step keeps the blocks' input: N(0, 1/d) times sqrt(d) is the N(0, 1) embedding
    untie = [i for i, (_, fields) in enumerate(THEORY_TO_ARTICLE, 1) if "tied_readout" in fields][0]
    a, b = (init_params(path[k][1].replace(layers=1), True)["embedding"]["embedding"] for k in (untie - 1, untie))
    np.testing.assert_allclose(np.asarray(a) * path[0][1].width ** 0.5, b, rtol=1e-5, atol=1e-6)


def test_w2_gradient_matches_finite_differences():
    """Directional derivative of the loss along a random direction in W2 of the last block, in float64."""
    config = xiong_like(TINY)
    with jax.enable_x64(True):
        params = jax.tree.map(lambda a: jnp.asarray(a, jnp.float64), init_params(config, False, jax.random.PRNGKey(1)))
        sources, targets = make_batches(config.replace(steps=1))
        loss = make_loss(module_logits(make_model(config, False)))
        grad = jax.grad(loss)(params, sources[0], targets[0])["block_1"]["mlp_out"]["kernel"]
        direction = jax.random.normal(jax.random.PRNGKey(2), grad.shape, jnp.float64)

        def moved(t):
            p = jax.tree.map(lambda a: a, params)
            p["block_1"]["mlp_out"]["kernel"] = params["block_1"]["mlp_out"]["kernel"] + t * direction
            return loss(p, sources[0], targets[0])

        h = 1e-5
        finite = (moved(h) - moved(-h)) / (2 * h)
        assert float(finite) == pytest.approx(float(jnp.sum(grad * direction)), rel=1e-6)


def test_loglog_slope_recovers_a_power_law():
    depths = np.array([3, 6, 12, 24])
    assert loglog_slope(depths, 5.0 * depths ** -0.5) == pytest.approx(-0.5)
    assert loglog_slope(depths, np.full(4, 2.0)) == pytest.approx(0.0, abs=1e-12)


@pytest.mark.slow
def test_theorem_1_direction_across_seeds_in_the_xiong_like_config():
    """Pre-LN's last-layer W2 gradient shrinks with depth, Post-LN's much less (small width: the
    direction, not the constant)."""
    config = xiong_like(StressConfig(width=32, heads=4, batch_size=8))
    rows = sweep_path(depths=(2, 4, 8, 16), seeds=(0, 1, 2), path=[("Xiong-like", config)])
    summary = {s["pre_norm"]: s for s in summarise(rows, profile_depth=4)}
    assert all(slope < -0.2 for slope in summary[True]["seed_slopes"])
    assert all(post > pre for post, pre in zip(summary[False]["seed_slopes"], summary[True]["seed_slopes"]))
    assert summary[False]["last_over_first"] > summary[True]["last_over_first"]


def test_article_path_moves_one_difference_at_a_time_and_ends_at_the_article():
    path = article_path()
    assert path[0][1] == xiong_like() and path[-1][1] == StressConfig()
    for (_, before), (_, after) in zip(path, path[1:]):
        changed = {k for k, v in before.as_dict().items() if after.as_dict()[k] != v}
        assert 1 <= len(changed) <= 2  # the embedding's two fields move together


def test_committed_xiong_sweep_matches_a_fresh_computation():
    rows, info = committed_xiong()
    assert info["command"].startswith("lnworked stress xiong") and info["rows"] == len(rows)
    batches = int(info["command"].split("--batches")[1].split()[0])
    path = theory_path()
    assert [r["config"] for r in rows if r["layer"] == 1 and r["layers"] == rows[0]["layers"]
            and r["seed"] == rows[0]["seed"] and r["pre_norm"]] == [label for label, _ in path]
    depth, seed = min(r["layers"] for r in rows), min(r["seed"] for r in rows)
    for step, (label, config) in ((0, path[0]), (len(path) - 1, path[-1])):
        for pre_norm in (True, False):
            stored = sorted((r for r in rows if r["step"] == step and r["pre_norm"] == pre_norm
                             and r["layers"] == depth and r["seed"] == seed), key=lambda r: r["layer"])
            grads = _unrolled_w2_grads(config.replace(layers=depth), pre_norm, seed, batches)
            np.testing.assert_allclose([r["w2_gradient_norm"] for r in stored],
                                       np.linalg.norm(grads[0], axis=(1, 2)), rtol=1e-4)
            np.testing.assert_allclose([r["expected_w2_gradient_norm"] for r in stored],
                                       np.linalg.norm(grads.mean(axis=0), axis=(1, 2)), rtol=1e-4)


@pytest.mark.parametrize("call", [
    lambda: w2_table(TINY, [3], [True], [0]),          # depth beyond the tree
    lambda: w2_table(TINY, [1, 2], [True], [0]),       # lengths differ
    lambda: w2_table(TINY, [], [], []),                # nothing to do
    lambda: loglog_slope([1, 2], [1.0, -1.0]),
    lambda: loglog_slope([1], [1.0]),
    lambda: sweep_path(depths=(0,), seeds=(0,)),
    lambda: StressConfig(init="he"),
    lambda: StressConfig(positions="rope"),
    lambda: StressConfig(embedding_std=0.0),
    lambda: StressConfig(causal="yes"),
    lambda: StressConfig(activation="tanh"),
    lambda: StressConfig(mlp_ratio=0),
    lambda: StressConfig(zero_qk=1),
    lambda: StressConfig(tied_readout="no"),
    lambda: w2_batch_table(TINY, [1], [True], [0], batches=0),
])
def test_bad_arguments_raise_value_error(call):
    with pytest.raises(ValueError):
        call()


def test_xiong_cli_interrupt_keeps_the_configurations_done(monkeypatch, tmp_path):
    import json

    from lnworked.cli import main
    from lnworked.stress import cli as stress_cli
    from lnworked.stress.xiong import read_xiong_csv

    def interrupt(label):
        raise KeyboardInterrupt

    monkeypatch.setattr(stress_cli, "_xiong_progress", interrupt)
    out = tmp_path / "x"
    assert main(["stress", "xiong", "--depths", "1", "2", "--seeds", "0", "--no-cache", "--out", str(out)]) == 130
    rows = read_xiong_csv(out / "xiong.csv")
    assert {r["step"] for r in rows} == {0} and len(rows) == 2 * (1 + 2)
    info = json.loads((out / "xiong-provenance.json").read_text(encoding="utf-8"))
    assert info["interrupted"] is True and info["rows"] == len(rows)


@pytest.mark.parametrize("args", [["--depths", "0"], ["--seeds", "-1"], ["--batches", "0"]])
def test_xiong_cli_bad_arguments_exit_2(args, tmp_path, capsys):
    from lnworked.cli import main

    assert main(["stress", "xiong", *args, "--out", str(tmp_path)]) == 2
    assert "Traceback" not in capsys.readouterr().err


def test_readout_swaps_change_only_the_output_layer():
    from lnworked.stress.xiong import readout_swaps

    (_, xiong_swapped), (_, article_swapped) = readout_swaps()
    for swapped, original in ((xiong_swapped, xiong_like()), (article_swapped, StressConfig())):
        changed = {k for k, v in swapped.as_dict().items() if original.as_dict()[k] != v}
        assert changed == {"readout_std"}


def test_committed_readout_swaps_match_a_fresh_computation():
    from lnworked.stress.committed import committed_xiong_readout
    from lnworked.stress.xiong import readout_swaps

    rows, info = committed_xiong_readout()
    assert "--readout-swaps" in info["command"] and info["rows"] == len(rows)
    depth, seed = min(r["layers"] for r in rows), min(r["seed"] for r in rows)
    for step, (label, config) in enumerate(readout_swaps()):
        stored = sorted((r for r in rows if r["step"] == step and not r["pre_norm"] and r["layers"] == depth
                         and r["seed"] == seed), key=lambda r: r["layer"])
        assert stored and stored[0]["config"] == label
        fresh = _unrolled_w2(config.replace(layers=depth), False, seed)
        np.testing.assert_allclose([r["w2_gradient_norm"] for r in stored], fresh, rtol=1e-4)


def test_theory_swaps_change_only_the_named_fields():
    from lnworked.stress.xiong import theory_swaps

    fields = ("tied_readout", "embedding_std", "embedding_scale", "readout_std")
    (_, theory_swapped), (_, article_swapped) = theory_swaps(fields)
    for swapped, original in ((theory_swapped, xiong_theory()), (article_swapped, StressConfig())):
        changed = {k for k, v in swapped.as_dict().items() if original.as_dict()[k] != v}
        assert changed <= set(fields) and changed
    with pytest.raises(ValueError):
        theory_swaps(("no_such_field",))


def test_committed_swap_matches_a_fresh_computation():
    from lnworked.stress.committed import committed_xiong_swap
    from lnworked.stress.xiong import theory_swaps

    rows, info = committed_xiong_swap()
    assert "--swap" in info["command"] and info["rows"] == len(rows)
    fields = info["command"].split("--swap")[1].split("--device")[0].split()
    batches = int(info["command"].split("--batches")[1].split()[0])
    depth, seed = min(r["layers"] for r in rows), min(r["seed"] for r in rows)
    for step, (label, config) in enumerate(theory_swaps(fields)):
        stored = sorted((r for r in rows if r["step"] == step and not r["pre_norm"] and r["layers"] == depth
                         and r["seed"] == seed), key=lambda r: r["layer"])
        assert stored and stored[0]["config"] == label
        grads = _unrolled_w2_grads(config.replace(layers=depth), False, seed, batches)
        np.testing.assert_allclose([r["expected_w2_gradient_norm"] for r in stored],
                                   np.linalg.norm(grads.mean(axis=0), axis=(1, 2)), rtol=1e-4)
