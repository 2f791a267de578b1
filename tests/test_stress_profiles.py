"""Per-layer profiles of the three runs (lnworked.stress.profiles, ``lnworked stress profiles``):
the committed table against an independent route (the unrolled Flax model, block by block,
trained by the article's step-by-step loop), the CLI's outputs, interrupts and bad arguments."""

from __future__ import annotations

import json

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from lnworked.cli import main
from lnworked.stress import cli as stress_cli
from lnworked.stress.committed import committed_profiles
from lnworked.stress.config import StressConfig, default_runs
from lnworked.stress.data import make_batches
from lnworked.stress.model import Block, init_params, make_model
from lnworked.stress.optim import learning_rate_at, make_optimizer
from lnworked.stress.profiles import QUANTITIES, read_profiles_csv, trained_profiles
from lnworked.stress.step import make_loss, make_step, module_logits


def _rms(x):
    return float(jnp.sqrt(jnp.mean(x ** 2)))


def _unrolled_profile(config, params, pre_norm, source, target):
    """The profile written out for the unrolled model: each block's sublayers called one by one."""
    c = config
    x = params["embedding"]["embedding"][source] + params["position"][:, : source.shape[1]]
    out = {q: [] for q in QUANTITIES}
    for l in range(c.layers):
        block = Block(c.width, c.heads, pre_norm, c.norm)
        p = {"params": params[f"block_{l}"]}
        out["stream_rms"].append(_rms(x))
        ln1 = lambda v: block.apply(p, v, method=lambda m, v: m.ln_1(v))  # noqa: E731
        ln2 = lambda v: block.apply(p, v, method=lambda m, v: m.ln_2(v))  # noqa: E731
        attn = lambda v: block.apply(p, v, method=lambda m, v: m.attn(v))  # noqa: E731
        mlp = lambda v: block.apply(p, v, method=lambda m, v: m.mlp(v))  # noqa: E731
        if pre_norm:
            a = attn(ln1(x)); out["attn_write_ratio"].append(_rms(a) / _rms(x)); x = x + a  # noqa: E702
            m = mlp(ln2(x)); out["mlp_write_ratio"].append(_rms(m) / _rms(x)); x = x + m  # noqa: E702
        else:
            a = attn(x); out["attn_write_ratio"].append(_rms(a) / _rms(x)); x = ln1(x + a)  # noqa: E702
            m = mlp(x); out["mlp_write_ratio"].append(_rms(m) / _rms(x)); x = ln2(x + m)  # noqa: E702
    grads = jax.grad(make_loss(module_logits(make_model(c, pre_norm))))(params, source, target)
    for l in range(c.layers):
        g = grads[f"block_{l}"]
        out["w2_gradient_norm"].append(float(jnp.linalg.norm(g["mlp_out"]["kernel"])))
        out["block_gradient_norm"].append(float(jnp.sqrt(sum(jnp.sum(leaf ** 2) for leaf in jax.tree.leaves(g)))))
    return {q: np.array(v) for q, v in out.items()}


def _stored(rows, run, step):
    mine = sorted((r for r in rows if r["run"] == run and r["step"] == step), key=lambda r: r["layer"])
    return {q: np.array([r[q] for r in mine]) for q in QUANTITIES}


def test_committed_profiles_carry_provenance_and_cover_the_three_runs():
    rows, info = committed_profiles()
    assert info["command"].startswith("lnworked stress profiles") and info["rows"] == len(rows)
    assert info["interrupted"] is False
    config = StressConfig()
    assert {r["run"] for r in rows} == {spec.name for spec in default_runs(config)}
    assert {r["step"] for r in rows} >= {0, config.steps}
    assert {r["layer"] for r in rows} == set(range(1, config.layers + 1))


def test_committed_step_0_profile_matches_a_fresh_unrolled_computation():
    rows, _ = committed_profiles()
    config = StressConfig()
    sources, targets = make_batches(config.replace(steps=1))
    for spec in default_runs(config)[:2]:
        fresh = _unrolled_profile(config, init_params(config, spec.pre_norm), spec.pre_norm, sources[0], targets[0])
        stored = _stored(rows, spec.name, 0)
        for q in QUANTITIES:
            np.testing.assert_allclose(stored[q], fresh[q], rtol=2e-4, err_msg=f"{spec.name} {q}")


@pytest.mark.slow
def test_committed_step_10_profile_matches_the_articles_loop():
    """Ten steps of the article's loop (unrolled model, one jitted step per batch), then the
    unrolled profile; Pre-LN and the warmed-up Post-LN (the chaotic run is left out)."""
    rows, _ = committed_profiles()
    config = StressConfig()
    sources, targets = make_batches(config)
    optimizer = make_optimizer(config)
    for spec in (default_runs(config)[0], default_runs(config)[2]):
        params = init_params(config, spec.pre_norm)
        state = optimizer.init(params)
        step = jax.jit(make_step(module_logits(make_model(config, spec.pre_norm)), optimizer))
        for s in range(10):
            rate = jnp.float32(learning_rate_at(config.learning_rate, s + 1, spec.warmup_steps))
            params, state, _, _ = step(params, state, sources[s], targets[s], rate)
        fresh = _unrolled_profile(config, params, spec.pre_norm, sources[0], targets[0])
        stored = _stored(rows, spec.name, 10)
        for q in QUANTITIES:
            np.testing.assert_allclose(stored[q], fresh[q], rtol=2e-3, err_msg=f"{spec.name} {q}")


def test_profiles_cli_writes_rows_and_provenance(tmp_path, capsys):
    out = tmp_path / "p"
    assert main(["stress", "profiles", "--layers", "2", "--steps", "4", "--snapshots", "0", "2",
                 "--no-cache", "--out", str(out)]) == 0
    rows = read_profiles_csv(out / "profiles.csv")
    assert len(rows) == 3 * 2 * 2 and {r["step"] for r in rows} == {0, 2}
    info = json.loads((out / "profiles-provenance.json").read_text(encoding="utf-8"))
    assert info["rows"] == len(rows) and info["interrupted"] is False
    step0 = [r for r in rows if r["step"] == 0]
    # at step 0 the three runs share their weights; the two Post-LN runs are one model
    post = [r for r in step0 if not r["pre_norm"]]
    assert post[0]["w2_gradient_norm"] == post[2]["w2_gradient_norm"]


def test_profiles_cli_interrupt_keeps_the_snapshots_done(monkeypatch, tmp_path):
    calls = []

    def interrupt(step):
        calls.append(step)
        if len(calls) == 2:
            raise KeyboardInterrupt

    monkeypatch.setattr(stress_cli, "_snapshot_progress", interrupt)
    out = tmp_path / "partial"
    assert main(["stress", "profiles", "--layers", "1", "--steps", "4", "--snapshots", "0", "2", "4",
                 "--no-cache", "--out", str(out)]) == 130
    assert {r["step"] for r in read_profiles_csv(out / "profiles.csv")} == {0, 2}
    assert json.loads((out / "profiles-provenance.json").read_text(encoding="utf-8"))["interrupted"] is True


@pytest.mark.parametrize("args", [["--snapshots", "999"], ["--snapshots", "-1"], ["--layers", "0"]])
def test_profiles_cli_bad_arguments_exit_2(args, tmp_path, capsys):
    assert main(["stress", "profiles", *args, "--out", str(tmp_path)]) == 2
    assert "Traceback" not in capsys.readouterr().err


def test_trained_profiles_bad_snapshots_raise_value_error():
    with pytest.raises(ValueError, match="snapshots"):
        trained_profiles(StressConfig(layers=1, steps=4), snapshots=[])
    with pytest.raises(ValueError, match="snapshots"):
        trained_profiles(StressConfig(layers=1, steps=4), snapshots=[5])
