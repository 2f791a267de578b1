"""Speed of the stress test: the article's step-by-step loop against the library's fast path.

Runs in one process, on the default configuration (seed 002's three runs) on the CPU:

* reference: the article's method, written out here: per run, ``jax.jit`` one training
  step, then a Python loop that draws each batch on the host, takes one step and reads
  the loss back; runs one after another;
* fast: :func:`lnworked.stress.train.train`: batches drawn up front, chunks of steps as
  one compiled ``lax.scan``, the two Post-LN runs batched with ``vmap``, the Pre-LN and
  Post-LN programs compiled and run in parallel threads.

Checks that both give the same Pre-LN numbers, then prints the ratio of end-to-end times
(compilation included), and the compile time and time per step of each.

    .venv/bin/python benchmarks/stress_speed.py [--steps N] [--layers L]
"""

from __future__ import annotations

import argparse
import time

import jax
import jax.numpy as jnp
import numpy as np

from lnworked.stress.config import StressConfig, default_runs
from lnworked.stress.data import SEED_OFFSET, make_batch, make_batches
from lnworked.stress.model import init_params, make_model
from lnworked.stress.optim import learning_rates, make_optimizer
from lnworked.stress.step import make_step
from lnworked.stress.train import make_chunk_fn, train


def reference(config, device):
    """The article's loop; returns (seconds, compile seconds, seconds per step, Pre-LN losses)."""
    started = time.perf_counter()
    compile_s, step_times, pre_losses = 0.0, [], None
    for spec in default_runs(config):
        model, optimizer = make_model(config, spec.pre_norm), make_optimizer(config)
        params = jax.device_put(init_params(config, spec.pre_norm), device)
        opt_state = optimizer.init(params)
        step_fn = jax.jit(make_step(model, optimizer))
        generator = np.random.default_rng(config.seed + SEED_OFFSET)
        losses = []
        for step in range(1, config.steps + 1):
            t0 = time.perf_counter()
            source, target = (jax.device_put(a, device) for a in make_batch(config, generator))
            rate = config.learning_rate * (min(1.0, step / spec.warmup_steps) if spec.warmup_steps else 1.0)
            params, opt_state, loss, norm = step_fn(params, opt_state, source, target,
                                                    jnp.asarray(rate, dtype=jnp.float32))
            losses.append(float(loss))
            float(norm)
            elapsed = time.perf_counter() - t0
            if step == 1:
                compile_s += elapsed
            else:
                step_times.append(elapsed)
        pre_losses = np.array(losses) if spec.pre_norm else pre_losses
    per_step = float(np.mean(step_times))
    compile_s -= len(default_runs(config)) * per_step  # the first step's own work
    return time.perf_counter() - started, compile_s, per_step, pre_losses


def fast_compile_and_step(config, device):
    """Compile time and time per step of the fast path's Pre-LN program, measured alone."""
    sources, targets = make_batches(config)
    fn = make_chunk_fn(config, True)
    params = jax.device_put(init_params(config, True), device)
    opt_state = make_optimizer(config).init(params)
    rates = learning_rates(config.learning_rate, config.steps, 0).astype(np.float32)
    args = (params, opt_state, jnp.asarray(True), sources, targets, rates, np.ones(config.steps, bool))
    t0 = time.perf_counter()
    compiled = fn.lower(*args).compile()
    t1 = time.perf_counter()
    (_, _, _), (loss, _) = compiled(*args)
    np.asarray(loss)
    return t1 - t0, (time.perf_counter() - t1) / config.steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=StressConfig().steps)
    parser.add_argument("--layers", type=int, default=StressConfig().layers)
    args = parser.parse_args()
    config = StressConfig(steps=args.steps, layers=args.layers)
    device = jax.devices("cpu")[0]
    print(f"device: {device.platform}, layers={config.layers}, steps={config.steps}, three runs")

    ref_s, ref_compile, ref_step, ref_pre = reference(config, device)
    print(f"reference: {ref_s:6.1f} s end to end; compile {ref_compile:.1f} s (3 programs); "
          f"{ref_step * 1e3:.1f} ms per step")

    t0 = time.perf_counter()
    result = train(config, device=device)
    fast_s = time.perf_counter() - t0
    fast_compile, fast_step = fast_compile_and_step(config, device)
    print(f"fast:      {fast_s:6.1f} s end to end; compile {fast_compile:.1f} s (Pre-LN program alone); "
          f"{fast_step * 1e3:.1f} ms per step (Pre-LN, one scan)")

    pre = result.runs[0]
    np.testing.assert_allclose(pre.loss, ref_pre, rtol=1e-4, atol=1e-6)
    print(f"same Pre-LN numbers: final loss {pre.final_loss:.6f} vs {ref_pre[-1]:.6f} "
          f"(max relative difference {np.max(np.abs(pre.loss - ref_pre) / np.abs(ref_pre)):.1e})")
    print(f"ratio (reference / fast, end to end): {ref_s / fast_s:.2f}x")


if __name__ == "__main__":
    main()
