"""One full-rate step of each run's own optimiser from its trained weights
(lnworked.stress.profiles.step_responses, ``lnworked stress profiles --step-response``):
step 0 against the first-update table (another program over the same first update), the
first-order limit at a tiny rate, the committed table against the article's loop and
hand-applied AdamW, the CLI."""

from __future__ import annotations

import json

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

from lnworked.cli import main
from lnworked.stress.committed import committed_step_response
from lnworked.stress.config import StressConfig, default_runs
from lnworked.stress.data import make_batches
from lnworked.stress.first_update import first_update_table
from lnworked.stress.model import init_params, make_model
from lnworked.stress.optim import learning_rate_at, make_optimizer
from lnworked.stress.profiles import read_step_response_csv, step_responses
from lnworked.stress.step import make_loss, make_step, module_logits


def _row(rows, run, step):
    (row,) = [r for r in rows if r["run"] == run and r["step"] == step]
    return row


def test_committed_table_carries_provenance_and_covers_the_three_runs():
    rows, info = committed_step_response()
    config = StressConfig()
    assert info["command"].startswith("lnworked stress profiles") and "--step-response" in info["command"]
    assert info["rows"] == len(rows) and info["interrupted"] is False
    assert {r["run"] for r in rows} == {spec.name for spec in default_runs(config)}
    assert {r["step"] for r in rows} >= {0, config.steps}
    assert all(r["learning_rate"] == pytest.approx(config.learning_rate) for r in rows)
    for r in rows:
        assert r["delivered"] == pytest.approx(r["delta_loss"] / r["linear_delta_loss"], rel=1e-6)
        assert r["relative"] == pytest.approx(r["rms_delta_logits"] / r["rms_logits"], rel=1e-6)


def test_step_0_matches_the_first_update_table():
    """At step 0 the optimiser's state is its initial one, so the step is the first update:
    the first-update module's program (depth-cut tree, one case at a time) must agree."""
    rows, _ = committed_step_response()
    config = StressConfig()
    table = first_update_table([config.layers], [config.learning_rate], [config.seed], config)
    for spec in default_runs(config):
        (other,) = [t for t in table if t["pre_norm"] == spec.pre_norm]
        mine = _row(rows, spec.name, 0)
        assert mine["delivered"] == pytest.approx(other["delta_loss"] / other["linear_delta_loss"], rel=2e-3)
        assert mine["linear_delta_loss"] == pytest.approx(other["linear_delta_loss"], rel=1e-4)
        assert mine["relative"] == pytest.approx(other["relative"], rel=1e-3)


def test_a_tiny_rate_delivers_the_first_order_promise():
    """Fresh, on a small model: at rate eta/1000 the loss change is the first-order
    prediction (delivered fraction about 1), at every snapshot and for each run."""
    config = StressConfig(layers=2, steps=6)
    tiny = config.learning_rate / 1000
    rows, interrupted = step_responses(config, snapshots=(0, 3, 6), rates=[tiny, config.learning_rate])
    assert not interrupted and len(rows) == 3 * 3 * 2
    for r in rows:
        assert r["linear_delta_loss"] < 0  # the promise is a drop
        if r["learning_rate"] == tiny:
            assert 0.9 < r["delivered"] < 1.1, r
            assert r["relative"] < 0.05, r


@pytest.mark.slow
def test_committed_step_10_matches_the_articles_loop_and_a_hand_applied_step():
    """Ten steps of the article's loop (unrolled model, one jitted step per batch), then the
    optimiser's next update from that state on the first batch, applied by hand at the full rate."""
    rows, _ = committed_step_response()
    config = StressConfig()
    sources, targets = make_batches(config)
    optimizer = make_optimizer(config)
    for spec in (default_runs(config)[0], default_runs(config)[2]):
        logits = module_logits(make_model(config, spec.pre_norm))
        params = init_params(config, spec.pre_norm)
        state = optimizer.init(params)
        step = jax.jit(make_step(logits, optimizer))
        for s in range(10):
            rate = jnp.float32(learning_rate_at(config.learning_rate, s + 1, spec.warmup_steps))
            params, state, _, _ = step(params, state, sources[s], targets[s], rate)
        loss, grads = jax.value_and_grad(make_loss(logits))(params, sources[0], targets[0])
        update, _ = optimizer.update(grads, state, params)
        moved = jax.tree.map(lambda p, u: p + config.learning_rate * u, params, update)
        z0, z1 = logits(params, sources[0]), logits(moved, sources[0])
        after = jnp.mean(optax.softmax_cross_entropy_with_integer_labels(z1, targets[0]))
        promise = config.learning_rate * sum(float(jnp.vdot(g, u)) for g, u in
                                             zip(jax.tree.leaves(grads), jax.tree.leaves(update)))
        stored = _row(rows, spec.name, 10)
        assert stored["loss"] == pytest.approx(float(loss), rel=1e-3)
        assert stored["linear_delta_loss"] == pytest.approx(promise, rel=5e-3)
        assert stored["delivered"] == pytest.approx(float(after - loss) / promise, rel=2e-2, abs=5e-3)
        rel = float(jnp.sqrt(jnp.mean((z1 - z0) ** 2)) / jnp.sqrt(jnp.mean(z0 ** 2)))
        assert stored["relative"] == pytest.approx(rel, rel=5e-3)


def test_cli_writes_step_response_and_provenance(tmp_path):
    out = tmp_path / "r"
    assert main(["stress", "profiles", "--step-response", "--layers", "2", "--steps", "4", "--snapshots", "0", "2",
                 "--no-cache", "--out", str(out)]) == 0
    rows = read_step_response_csv(out / "step-response.csv")
    assert len(rows) == 3 * 2 and {r["step"] for r in rows} == {0, 2}
    info = json.loads((out / "step-response-provenance.json").read_text(encoding="utf-8"))
    assert info["rows"] == len(rows) and "--step-response" in info["command"]
    post = [r for r in rows if r["step"] == 0 and not r["pre_norm"]]
    assert post[0]["delivered"] == post[1]["delivered"]  # at step 0 the two Post-LN runs are one model
    assert not (out / "profiles.csv").exists()


def test_step_responses_bad_arguments_raise_value_error():
    with pytest.raises(ValueError, match="snapshots"):
        step_responses(StressConfig(layers=1, steps=4), snapshots=[5])
    with pytest.raises(ValueError, match="rates"):
        step_responses(StressConfig(layers=1, steps=4), snapshots=[0], rates=[0.0])
