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
from lnworked.stress.xiong import (article_path, loglog_slope, summarise, sweep_path, w2_gradient_norms, w2_table,
                                   xiong_like)

TINY = StressConfig(vocab_size=8, sequence_length=4, width=8, heads=2, layers=2, batch_size=2)


def _unrolled_w2(config, pre_norm, seed):
    """``||d loss / d block_l.mlp_out.kernel||_F`` through the unrolled Flax TinyLM."""
    params = init_params(config, pre_norm, jax.random.PRNGKey(seed))
    sources, targets = make_batches(config.replace(steps=1))
    grads = jax.grad(make_loss(module_logits(make_model(config, pre_norm))))(params, sources[0], targets[0])
    return np.array([float(jnp.linalg.norm(grads[f"block_{l}"]["mlp_out"]["kernel"])) for l in range(config.layers)])


@pytest.mark.parametrize("config", [TINY, xiong_like(TINY)], ids=["article", "xiong-like"])
@pytest.mark.parametrize("pre_norm", [True, False])
def test_stacked_route_matches_the_unrolled_flax_model_at_depth_2(config, pre_norm):
    stacked = w2_gradient_norms(config, pre_norm, seeds=[3])[0]
    np.testing.assert_allclose(stacked, _unrolled_w2(config, pre_norm, 3), rtol=1e-4)


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
    first, last = article_path()[0], article_path()[-1]
    assert {r["config"] for r in rows} >= {first[0], last[0]}
    depth, seed = min(r["layers"] for r in rows), min(r["seed"] for r in rows)
    for step, (label, config) in ((0, first), (len(article_path()) - 1, last)):
        for pre_norm in (True, False):
            stored = sorted((r for r in rows if r["step"] == step and r["pre_norm"] == pre_norm
                             and r["layers"] == depth and r["seed"] == seed), key=lambda r: r["layer"])
            fresh = _unrolled_w2(config.replace(layers=depth), pre_norm, seed)
            np.testing.assert_allclose([r["w2_gradient_norm"] for r in stored], fresh, rtol=1e-4)


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


@pytest.mark.parametrize("args", [["--depths", "0"], ["--seeds", "-1"]])
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
