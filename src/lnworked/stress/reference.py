"""The article's method, kept as the reference: a Python loop, one jitted step per batch.

This is how seed 002's script trains (Zhejian Peng): per run, build the model, compile
one step with ``jax.jit``, then for each step draw the batch on the host, send it to the
device, take the step and read the loss back. Runs go one after another, each compiling
its own step. The fast path (:mod:`lnworked.stress.train`) must give the same numbers;
the tests compare the two, and ``benchmarks/stress_speed.py`` times this loop as the
faithful reference (``step_seconds`` records each step's wall time, the first one
including its compilation).
"""

from __future__ import annotations

import math
import time
from typing import Sequence

import jax
import jax.numpy as jnp
import numpy as np

from lnworked.stress.config import RunSpec, StressConfig, default_runs
from lnworked.stress.data import SEED_OFFSET, make_batch
from lnworked.stress.device import describe_device, select_device
from lnworked.stress.model import init_params, make_model
from lnworked.stress.optim import learning_rate_at, make_optimizer
from lnworked.stress.results import RunResult, StressResult
from lnworked.stress.step import make_step, module_logits

__all__ = ["reference_run", "reference_train"]


def reference_run(config: StressConfig, spec: RunSpec, device, step_seconds: list | None = None) -> RunResult:
    """One run, step by step, stopping after the first non-finite loss or gradient norm.

    ``step_seconds``, if given, receives the wall time of each step (batch, step, read-back).
    """
    model, optimizer = make_model(config, spec.pre_norm), make_optimizer(config)
    params = jax.device_put(init_params(config, spec.pre_norm), device)
    opt_state = optimizer.init(params)
    train_step = jax.jit(make_step(module_logits(model), optimizer))
    generator = np.random.default_rng(config.seed + SEED_OFFSET)
    losses, norms, rates, diverged = [], [], [], None
    for step in range(1, config.steps + 1):
        started = time.perf_counter()
        source, target = (jax.device_put(a, device) for a in make_batch(config, generator))
        rate = learning_rate_at(config.learning_rate, step, spec.warmup_steps)
        params, opt_state, loss, norm = train_step(
            params, opt_state, source, target, jnp.asarray(rate, dtype=jnp.float32)
        )
        losses.append(float(loss))
        norms.append(float(norm))
        rates.append(rate)
        if step_seconds is not None:
            step_seconds.append(time.perf_counter() - started)
        if not (math.isfinite(losses[-1]) and math.isfinite(norms[-1])):
            diverged = step
            break
    return RunResult(spec, np.array(losses, np.float32), np.array(norms, np.float32), np.array(rates), diverged)


def reference_train(
    config: StressConfig | None = None, runs: Sequence[RunSpec] | None = None, device="auto",
    step_seconds: list | None = None,
) -> StressResult:
    """All runs (default: the article's three), one after another.

    ``step_seconds``, if given, receives one list of per-step wall times per run.
    """
    config = StressConfig() if config is None else config
    runs = default_runs(config) if runs is None else runs
    device = select_device(device) if isinstance(device, str) else device
    started = time.perf_counter()
    results = []
    for spec in runs:
        times = None if step_seconds is None else []
        results.append(reference_run(config, spec, device, times))
        if step_seconds is not None:
            step_seconds.append(times)
    return StressResult(config, describe_device(device), time.perf_counter() - started, results)
