"""The fast path: whole stretches of training as one compiled ``lax.scan`` (seed 002).

The article's script calls one jitted step per batch from a Python loop and reads the
loss back after every step. Here the batches are drawn up front
(:func:`lnworked.stress.data.make_batches`) and a chunk of ``chunk_steps`` steps runs
as one compiled scan; runs that share a shape (e.g. Post-LN with and without warmup,
whose only difference is the per-step rate array) can be batched with ``vmap`` and
share one compilation. The arithmetic per step is :func:`lnworked.stress.step.make_step`,
the same as the reference loop's, so the numbers agree (float32).

A run whose loss or gradient norm turns non-finite keeps its parameters frozen from
then on; its log is cut after that step and the step is recorded as ``diverged_at``
(the article's script stops there). Chunks keep the progress display alive and let an
interrupt (Ctrl-C) return everything computed so far.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FuturesTimeout
from typing import Callable, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from lnworked.stress.config import RunSpec, StressConfig, default_runs
from lnworked.stress.data import make_batches
from lnworked.stress.device import describe_device, select_device
from lnworked.stress.model import init_params, make_model
from lnworked.stress.optim import learning_rates, make_optimizer
from lnworked.stress.results import RunResult, StressResult
from lnworked.stress.step import make_step

__all__ = ["make_chunk_fn", "train_group", "train", "cut_at_divergence", "DEFAULT_CHUNK"]

DEFAULT_CHUNK = 30  # steps per compiled call: 6 progress updates in the default run


def make_chunk_fn(config: StressConfig, pre_norm: bool, batched: bool = False, shared_data: bool = True):
    """A jitted ``chunk(params, opt_state, alive, sources, targets, rates, valid)``.

    Scans the training step over the leading (step) axis of ``sources``, ``targets``,
    ``rates`` and ``valid`` (padding steps have ``valid`` False and change nothing).
    Returns ``(params, opt_state, alive), (losses, gradient_norms)``. With ``batched``
    every argument but ``valid`` (and the data, when ``shared_data``) has a leading run axis.
    """
    step = make_step(make_model(config, pre_norm), make_optimizer(config))

    def body(carry, xs):
        params, opt_state, alive = carry
        source, target, rate, valid = xs
        new_params, new_state, loss, grad_norm = step(params, opt_state, source, target, rate)
        finite = jnp.isfinite(loss) & jnp.isfinite(grad_norm)
        ok = alive & valid & finite

        def keep(new, old):
            return jax.tree.map(lambda a, b: jnp.where(ok, a, b), new, old)

        carry = keep(new_params, params), keep(new_state, opt_state), alive & (finite | ~valid)
        return carry, (loss, grad_norm)

    def chunk(params, opt_state, alive, sources, targets, rates, valid):
        return jax.lax.scan(body, (params, opt_state, alive), (sources, targets, rates, valid))

    if batched:
        data_axis = None if shared_data else 0
        chunk = jax.vmap(chunk, in_axes=(0, 0, 0, data_axis, data_axis, 0, None))
    return jax.jit(chunk)


def _stack(trees):
    return jax.tree.map(lambda *leaves: jnp.stack(leaves), *trees)


def _pad(array, length, axis):
    missing = length - array.shape[axis]
    if missing == 0:
        return array
    widths = [(0, 0)] * array.ndim
    widths[axis] = (0, missing)
    return np.pad(array, widths)


def train_group(
    config: StressConfig,
    pre_norm: bool,
    inits: Sequence,
    sources: np.ndarray,
    targets: np.ndarray,
    rates: np.ndarray,
    *,
    batched: bool = True,
    chunk_steps: int = DEFAULT_CHUNK,
    on_chunk: Callable[[list, int, np.ndarray], None] | None = None,
    log: list | None = None,
):
    """Train ``len(inits)`` runs of one topology, logging into ``log`` as it goes.

    ``inits``: initial parameter trees, one per run. ``sources``/``targets``: shared
    ``(steps, B, T)`` or per run ``(runs, steps, B, T)``. ``rates``: ``(runs, steps)``.
    ``log`` receives one ``(members, pieces)`` entry per program (all runs when batched,
    else one per run); each chunk appends ``(losses, norms)`` of shape ``(len(members), n)``
    to ``pieces`` and then calls ``on_chunk(members, done, losses)``. A program stops
    early once all its runs have diverged. Returns ``log``.
    """
    log = [] if log is None else log
    n_runs, steps = rates.shape
    shared = sources.ndim == 3
    batched = batched and n_runs > 1
    optimizer = make_optimizer(config)
    fn = make_chunk_fn(config, pre_norm, batched=batched, shared_data=shared)
    programs = [list(range(n_runs))] if batched else [[i] for i in range(n_runs)]
    for members in programs:
        params = _stack([inits[i] for i in members]) if batched else inits[members[0]]
        opt_state = optimizer.init(params) if not batched else _stack([optimizer.init(inits[i]) for i in members])
        alive = jnp.ones(len(members), bool) if batched else jnp.asarray(True)
        pieces: list = []
        log.append((members, pieces))
        for start in range(0, steps, chunk_steps):
            stop = min(start + chunk_steps, steps)
            src, tgt = _chunk_data(sources, targets, members, start, stop, chunk_steps, shared, batched)
            rate = _pad(rates[members, start:stop].astype(np.float32), chunk_steps, 1)
            valid = np.arange(start, start + chunk_steps) < stop
            (params, opt_state, alive), (loss, norm) = fn(
                params, opt_state, alive, src, tgt, rate if batched else rate[0], valid
            )
            loss = np.asarray(loss).reshape(len(members), -1)[:, : stop - start]
            norm = np.asarray(norm).reshape(len(members), -1)[:, : stop - start]
            pieces.append((loss, norm))
            if on_chunk is not None:
                on_chunk(members, stop, loss)
            if not np.any(np.asarray(alive)):
                break
    return log


def _chunk_data(sources, targets, members, start, stop, length, shared, batched):
    """The batches of steps ``start:stop``, padded to ``length`` steps, shaped for the program."""
    if shared:
        return (_pad(a[start:stop], length, 0) for a in (sources, targets))
    if batched:
        return (_pad(a[members, start:stop], length, 1) for a in (sources, targets))
    return (_pad(a[members[0], start:stop], length, 0) for a in (sources, targets))


def collect(log, n_runs: int):
    """Per-run ``(losses, norms)`` arrays from the chunks that :func:`train_group` logged."""
    losses = [np.zeros(0, np.float32) for _ in range(n_runs)]
    norms = [np.zeros(0, np.float32) for _ in range(n_runs)]
    for members, pieces in log:
        for k, i in enumerate(members):
            if pieces:
                losses[i] = np.concatenate([p[0][k] for p in pieces])
                norms[i] = np.concatenate([p[1][k] for p in pieces])
    return losses, norms


def cut_at_divergence(loss: np.ndarray, norm: np.ndarray):
    """Cut a log after its first non-finite loss or norm: ``(loss, norm, diverged_at or None)``."""
    bad = ~(np.isfinite(loss) & np.isfinite(norm))
    if not bad.any():
        return loss, norm, None
    first = int(np.argmax(bad))
    return loss[: first + 1], norm[: first + 1], first + 1


def train(
    config: StressConfig | None = None,
    runs: Sequence[RunSpec] | None = None,
    device="auto",
    *,
    batch_runs: bool = True,
    parallel: bool = True,
    chunk_steps: int = DEFAULT_CHUNK,
    progress: Callable[[str, int, int, float], None] | None = None,
) -> StressResult:
    """Train the runs (default: the article's three) and return their logs.

    Runs are grouped by topology (Pre-LN, Post-LN); a group's runs share one compilation
    and, with ``batch_runs``, one ``vmap``-ed program. With ``parallel`` the groups run in
    threads, so their compilations (which release the GIL) overlap. ``progress(name,
    step, steps, loss)`` is called after each chunk. Ctrl-C returns what was computed so
    far (``interrupted``): each group stops after its current chunk.
    """
    config = StressConfig() if config is None else config
    runs = tuple(default_runs(config) if runs is None else runs)
    device = select_device(device) if isinstance(device, str) else device
    started = time.perf_counter()
    sources, targets = make_batches(config)
    rates = np.stack([learning_rates(config.learning_rate, config.steps, r.warmup_steps) for r in runs])
    groups = [[i for i, r in enumerate(runs) if r.pre_norm == pre] for pre in dict.fromkeys(r.pre_norm for r in runs)]
    logs = [[] for _ in groups]
    stop = threading.Event()

    def run_group(g):
        members = groups[g]

        def on_chunk(local, done, losses):
            if progress is not None:
                for k, j in enumerate(local):
                    progress(runs[members[j]].name, done, config.steps, float(losses[k][-1]))
            if stop.is_set():
                raise KeyboardInterrupt

        with jax.default_device(device):
            init = init_params(config, runs[members[0]].pre_norm)
            train_group(config, runs[members[0]].pre_norm, [init] * len(members), sources, targets,
                        rates[members], batched=batch_runs, chunk_steps=chunk_steps, on_chunk=on_chunk,
                        log=logs[g])

    interrupted = _run_all(run_group, len(groups), parallel, stop)
    results = []
    for g, members in enumerate(groups):
        losses, norms = collect(logs[g], len(members))
        for k, i in enumerate(members):
            loss, norm, diverged = cut_at_divergence(losses[k], norms[k])
            results.append((i, RunResult(runs[i], loss, norm, rates[i, : len(loss)], diverged)))
    results = [r for _, r in sorted(results, key=lambda pair: pair[0])]
    seconds = time.perf_counter() - started
    return StressResult(config, describe_device(device), seconds, results, interrupted)


def _run_all(job, count: int, parallel: bool, stop: threading.Event) -> bool:
    """Run ``job(0..count-1)`` (in threads if ``parallel``); True if interrupted (Ctrl-C)."""
    if not parallel or count == 1:
        try:
            for g in range(count):
                job(g)
        except KeyboardInterrupt:
            return True
        return False
    interrupted = False
    with ThreadPoolExecutor(count) as pool:
        futures = [pool.submit(job, g) for g in range(count)]
        for future in futures:
            while True:
                try:
                    future.result(timeout=0.2)
                    break
                except FuturesTimeout:
                    continue
                except KeyboardInterrupt:
                    interrupted = True
                    stop.set()
                    try:
                        future.result()
                    except KeyboardInterrupt:
                        pass
                    break
    return interrupted
