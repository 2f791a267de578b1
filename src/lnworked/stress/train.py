"""The fast path: every run in one compiled program, whole stretches of steps per call (seed 002).

The article's script compiles one step per run and calls it from a Python loop, reading
the loss back after every step. Here:

* the model's identical blocks are stacked parameters under one ``lax.scan``
  (:mod:`lnworked.stress.stacked`; unrolled by default, which steps faster on a CPU);
* the placement is data, a per-run flag (:meth:`lnworked.stress.model.Block.__call__`),
  so Pre-LN and Post-LN runs, with or without warmup, are one program ``vmap``-ed over
  runs and compiled once (:func:`lnworked.stress.compile.compile_program`);
* every run's initial weights and optimiser state come from one small compiled program
  (:func:`initial_state`), called once per seed and kept for the process: one
  compilation, where building them op by op compiles dozens of small programs;
* the batches are drawn up front (:func:`lnworked.stress.data.make_batches`) and a
  chunk of ``chunk_steps`` steps runs as one compiled ``lax.scan``.

The arithmetic per step is :func:`lnworked.stress.step.make_step`, as in the reference
loop, so the numbers agree to float32 rounding. A run whose loss or gradient norm turns
non-finite keeps its parameters frozen from then on; its log is cut after that step and
the step is recorded as ``diverged_at`` (the article's script stops there). Chunks keep
the progress display alive and let an interrupt (Ctrl-C) return everything so far.
"""

from __future__ import annotations

import functools
import time
from typing import Callable, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from lnworked.stress.compile import CPU_SETUP_OPTIONS, compile_program
from lnworked.stress.config import DEFAULT_CHUNK, RunSpec, StressConfig, default_runs
from lnworked.stress.data import make_batches
from lnworked.stress.device import describe_device, select_device
from lnworked.stress.optim import learning_rates, make_optimizer
from lnworked.stress.results import RunResult, StressResult
from lnworked.stress.stacked import make_logits, stacked_init
from lnworked.stress.step import make_step
from lnworked.validation import check_int

__all__ = ["make_start_fn", "initial_state", "make_chunk_fn", "train_runs", "train_logged", "train",
           "cut_at_divergence", "DEFAULT_CHUNK"]


def make_start_fn(config: StressConfig):
    """``start(seed) -> (params, opt_state)``: the initial weights from ``PRNGKey(seed)``
    (:func:`~lnworked.stress.stacked.stacked_init`, the same for both placements) and the
    optimiser's initial state; not yet jitted."""
    optimizer = make_optimizer(config)

    def start(seed):
        params = stacked_init(config, jax.random.PRNGKey(seed))
        return params, optimizer.init(params)

    return start


@functools.lru_cache(maxsize=8)
def _start_program(config: StressConfig, device):
    return compile_program(make_start_fn(config), (np.int32(config.seed),), device, CPU_SETUP_OPTIONS)


def initial_state(config: StressConfig, seeds: Sequence[int], device=None):
    """``((params, opt_state), compile_seconds)``, stacked over runs as host arrays: run ``r``
    starts from ``PRNGKey(seeds[r])``. The start program is compiled once per configuration
    and device in a process (later calls report 0 s), and run once per distinct seed."""
    device = jax.devices("cpu")[0] if device is None else device
    hits = _start_program.cache_info().hits
    program, seconds = _start_program(config, device)
    states = {seed: program(np.int32(seed)) for seed in dict.fromkeys(seeds)}
    stacked = jax.tree.map(lambda *leaves: np.stack(leaves), *[states[seed] for seed in seeds])
    return stacked, (0.0 if _start_program.cache_info().hits > hits else seconds)


def make_chunk_fn(config: StressConfig, shared_data: bool = True, unroll: int | None = None):
    """``chunk(params, opt_state, alive, pre_norm, sources, targets, rates, valid)``, over runs.

    ``unroll``: as in :func:`~lnworked.stress.stacked.make_logits` (``None``, the default,
    unrolls every block; ``1`` compiles faster and steps slower on a CPU).

    Every argument has a leading run axis except ``valid`` (and the data when
    ``shared_data``); the scan runs over the next (step) axis of ``sources``, ``targets``,
    ``rates`` and ``valid`` (padding steps have ``valid`` False and change nothing).
    Returns ``(params, opt_state, alive), (losses, gradient_norms)``, not yet jitted.
    """
    step = make_step(make_logits(config, unroll=unroll), make_optimizer(config))

    def one_run(params, opt_state, alive, pre_norm, sources, targets, rates, valid):
        def body(carry, xs):
            params, opt_state, alive = carry
            source, target, rate, ok_step = xs
            new_params, new_state, loss, grad_norm = step(params, opt_state, source, target, rate, pre_norm)
            finite = jnp.isfinite(loss) & jnp.isfinite(grad_norm)
            ok = alive & ok_step & finite

            def keep(new, old):
                return jax.tree.map(lambda a, b: jnp.where(ok, a, b), new, old)

            carry = keep(new_params, params), keep(new_state, opt_state), alive & (finite | ~ok_step)
            return carry, (loss, grad_norm)

        return jax.lax.scan(body, (params, opt_state, alive), (sources, targets, rates, valid))

    data_axis = None if shared_data else 0
    return jax.vmap(one_run, in_axes=(0, 0, 0, 0, data_axis, data_axis, 0, None))


def _pad(array, length, axis):
    missing = length - array.shape[axis]
    if missing == 0:
        return array
    widths = [(0, 0)] * array.ndim
    widths[axis] = (0, missing)
    return np.pad(array, widths)


def train_runs(
    config: StressConfig,
    pre_norms: Sequence[bool],
    seeds: Sequence[int],
    sources: np.ndarray,
    targets: np.ndarray,
    rates: np.ndarray,
    *,
    device=None,
    chunk_steps: int = DEFAULT_CHUNK,
    on_chunk: Callable[[int, np.ndarray], None] | None = None,
):
    """Train ``len(seeds)`` runs as one program: ``(losses, norms, compile_seconds)``.

    ``pre_norms``: each run's placement. ``seeds``: each run's initial weights
    (``PRNGKey(seed)``, as the article's ``config.seed``). ``sources``/``targets``: shared
    ``(steps, B, T)`` or per run ``(runs, steps, B, T)``. ``rates``: ``(runs, steps)``.
    After each chunk, ``on_chunk(steps_done, losses of shape (runs, n))``; an exception
    there (e.g. ``KeyboardInterrupt``) propagates after the chunk's logs are kept in
    ``losses``/``norms``, which are lists of per-chunk arrays ``(runs, n)`` filled in
    place, so pass your own lists to keep partial results: see :func:`train`.
    """
    losses, norms = [], []
    compile_seconds = _train_into(config, pre_norms, seeds, sources, targets, rates, device, chunk_steps,
                                  on_chunk, losses, norms)
    return _join(losses, len(seeds)), _join(norms, len(seeds)), compile_seconds


def _join(pieces, n_runs):
    if not pieces:
        return [np.zeros(0, np.float32) for _ in range(n_runs)]
    joined = np.concatenate(pieces, axis=1)
    return [joined[i] for i in range(n_runs)]


def _train_into(config, pre_norms, seeds, sources, targets, rates, device, chunk_steps, on_chunk, losses, norms):
    chunk_steps = check_int(chunk_steps, "chunk", minimum=1)
    device = jax.devices("cpu")[0] if device is None else device
    n_runs, steps = rates.shape
    shared = sources.ndim == 3
    chunk_steps = min(chunk_steps, steps)
    with jax.default_device(device):
        (params, opt_state), compile_seconds = initial_state(config, seeds, device)
        alive, pre = np.ones(n_runs, bool), np.asarray(pre_norms, bool)
        compiled = None
        for start in range(0, steps, chunk_steps):
            stop = min(start + chunk_steps, steps)
            axis = 0 if shared else 1
            src, tgt = (_pad(a[..., start:stop, :, :], chunk_steps, axis) for a in (sources, targets))
            rate = _pad(rates[:, start:stop].astype(np.float32), chunk_steps, 1)
            valid = np.arange(start, start + chunk_steps) < stop
            args = (params, opt_state, alive, pre, src, tgt, rate, valid)
            if compiled is None:
                compiled, seconds = compile_program(make_chunk_fn(config, shared), args, device)
                compile_seconds += seconds
            (params, opt_state, alive), (loss, norm) = compiled(*args)
            loss = np.asarray(loss)[:, : stop - start]
            losses.append(loss)
            norms.append(np.asarray(norm)[:, : stop - start])
            if on_chunk is not None:
                on_chunk(stop, loss)
            if not np.any(np.asarray(alive)):
                break
    return compile_seconds


def cut_at_divergence(loss: np.ndarray, norm: np.ndarray):
    """Cut a log after its first non-finite loss or norm: ``(loss, norm, diverged_at or None)``."""
    bad = ~(np.isfinite(loss) & np.isfinite(norm))
    if not bad.any():
        return loss, norm, None
    first = int(np.argmax(bad))
    return loss[: first + 1], norm[: first + 1], first + 1


def train_logged(
    config: StressConfig,
    specs: Sequence[RunSpec],
    names: Sequence[str],
    seeds: Sequence[int],
    sources: np.ndarray,
    targets: np.ndarray,
    rates: np.ndarray,
    device,
    *,
    chunk_steps: int = DEFAULT_CHUNK,
    progress: Callable[[str, int, int, float], None] | None = None,
):
    """:func:`train_runs` with each run's log as a :class:`RunResult` (cut at divergence):
    ``(results, compile_seconds, interrupted)``. ``progress(names[r], step, steps, loss)``
    after each chunk; Ctrl-C (or a ``KeyboardInterrupt`` from ``progress``) keeps the
    chunks done and sets ``interrupted``."""

    def on_chunk(done, losses):
        if progress is not None:
            for name, loss in zip(names, losses):
                progress(name, done, config.steps, float(loss[-1]))

    losses, norms, interrupted, compile_seconds = [], [], False, 0.0
    try:
        compile_seconds = _train_into(config, [s.pre_norm for s in specs], seeds, sources, targets, rates, device,
                                      chunk_steps, on_chunk, losses, norms)
    except KeyboardInterrupt:
        interrupted = True
    results = []
    for spec, rate, loss, norm in zip(specs, rates, _join(losses, len(specs)), _join(norms, len(specs))):
        loss, norm, diverged = cut_at_divergence(loss, norm)
        results.append(RunResult(spec, loss, norm, rate[: len(loss)], diverged))
    return results, compile_seconds, interrupted


def train(
    config: StressConfig | None = None,
    runs: Sequence[RunSpec] | None = None,
    device="auto",
    *,
    chunk_steps: int = DEFAULT_CHUNK,
    progress: Callable[[str, int, int, float], None] | None = None,
) -> StressResult:
    """Train the runs (default: the article's three) as one program and return their logs.

    ``progress(name, step, steps, loss)`` is called for each run after each chunk. Ctrl-C
    (or a ``KeyboardInterrupt`` from ``progress``) returns what was computed so far,
    marked ``interrupted``.
    """
    config = StressConfig() if config is None else config
    runs = tuple(default_runs(config) if runs is None else runs)
    device = select_device(device) if isinstance(device, str) else device
    started = time.perf_counter()
    sources, targets = make_batches(config)
    rates = np.stack([learning_rates(config.learning_rate, config.steps, r.warmup_steps) for r in runs])
    results, compile_seconds, interrupted = train_logged(
        config, runs, [r.name for r in runs], [config.seed] * len(runs), sources, targets, rates, device,
        chunk_steps=chunk_steps, progress=progress)
    seconds = time.perf_counter() - started
    return StressResult(config, describe_device(device), seconds, results, interrupted, compile_seconds)
