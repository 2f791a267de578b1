"""Going further than the article: sweep depth, learning rate and seed (seed 002 invites it).

The article suggests sweeping ``--layers`` and the learning rate "to observe how much
tuning each topology needs". :func:`sweep` trains the grid depths x rates x seeds for
each variant (by default the article's three: Pre-LN, Post-LN, Post-LN with a warmup
over two thirds of the steps). Runs of one depth share a shape (the placement is data,
see :mod:`lnworked.stress.train`), so they are batched with ``vmap`` into one compiled
program (each run with its own placement, its own seed's initial weights and data, and
its own rate schedule). The result is a tidy table, one
row per run.
"""

from __future__ import annotations

import csv
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

import jax
import numpy as np

from lnworked.stress.config import StressConfig, check_warmup, warmup_for
from lnworked.stress.data import make_batches
from lnworked.stress.device import describe_device, select_device
from lnworked.stress.optim import learning_rates
from lnworked.stress.table_csv import read_rows, write_rows
from lnworked.stress.train import DEFAULT_CHUNK, cut_at_divergence, train_logged, train_runs

__all__ = ["Variant", "ARTICLE_VARIANTS", "SweepResult", "sweep", "SeedRuns", "seed_runs", "write_sweep_csv", "read_sweep_csv",
           "SWEEP_COLUMNS", "SWEEP_STEP_COLUMNS", "write_sweep_steps_csv", "read_sweep_steps_csv",
           "write_seed_runs_csv", "read_seed_runs_csv", "SEED_COLUMNS", "largest_stable_rates",
           "STABLE_LOSS"]


@dataclass(frozen=True)
class Variant:
    """A topology and whether it warms up (over :func:`~lnworked.stress.config.warmup_for` steps)."""

    pre_norm: bool
    warmup: bool

    @property
    def name(self) -> str:
        return ("Pre-LN" if self.pre_norm else "Post-LN") + (" + warmup" if self.warmup else "")


ARTICLE_VARIANTS = (Variant(True, False), Variant(False, False), Variant(False, True))
SWEEP_COLUMNS = ("variant", "pre_norm", "warmup_steps", "layers", "learning_rate", "seed", "steps",
                 "steps_done", "final_loss", "max_gradient_norm", "diverged_at")


@dataclass
class SweepResult:
    """``rows`` (one per run, :data:`SWEEP_COLUMNS`) and ``curves``, parallel to ``rows``:
    each run's per-step ``(loss, gradient_norm)`` arrays, cut at divergence."""

    rows: list[dict]
    device: str
    seconds: float
    interrupted: bool = False
    curves: list = None


def _check_list(values, name, check):
    values = list(values)
    if not values:
        raise ValueError(f"{name}: give at least one value")
    for v in values:
        check(v)
    return values


def sweep(
    depths: Sequence[int],
    rates: Sequence[float],
    seeds: Sequence[int],
    base: StressConfig | None = None,
    variants: Sequence[Variant] = ARTICLE_VARIANTS,
    device="auto",
    *,
    warmup: int | None = None,
    chunk_steps: int = DEFAULT_CHUNK,
    progress: Callable[[str], None] | None = None,
) -> SweepResult:
    """Train every (variant, depth, rate, seed) of the grid; one row per run.

    ``base`` gives everything else (steps, width, ...). ``warmup`` defaults to two
    thirds of ``base.steps``. Ctrl-C returns the rows finished so far (``interrupted``).
    """
    base = StressConfig() if base is None else base
    depths = _check_list(depths, "depths", lambda d: base.replace(layers=d))
    rates = _check_list(rates, "rates", lambda r: base.replace(learning_rate=r))
    seeds = _check_list(seeds, "seeds", lambda s: base.replace(seed=s))
    warm = warmup_for(base.steps) if warmup is None else check_warmup(warmup, base.steps)
    device = select_device(device) if isinstance(device, str) else device
    started, rows, curves, interrupted = time.perf_counter(), [], [], False
    batches = {s: make_batches(base.replace(seed=s)) for s in seeds}
    try:
        with jax.default_device(device):
            for depth in depths:
                group = [(v, r, s) for v in variants for r in rates for s in seeds]
                done = _train_cell(base.replace(layers=depth), group, batches, warm, chunk_steps, device)
                rows += [row for row, _ in done]
                curves += [curve for _, curve in done]
                if progress is not None:
                    progress(f"layers={depth}: {len(group)} runs done ({time.perf_counter() - started:.0f} s)")
    except KeyboardInterrupt:
        interrupted = True
    return SweepResult(rows, describe_device(device), time.perf_counter() - started, interrupted, curves)


def _train_cell(config, group, batches, warm, chunk_steps, device):
    """All runs of one depth as one vmapped program; ``(row, (loss, norm))`` per run."""
    sources = np.stack([batches[s][0] for _, _, s in group])
    targets = np.stack([batches[s][1] for _, _, s in group])
    schedule = np.stack([learning_rates(r, config.steps, warm if v.warmup else 0) for v, r, _ in group])
    losses, norms, _ = train_runs(config, [v.pre_norm for v, _, _ in group],
                                  [s for _, _, s in group], sources, targets, schedule,
                                  device=device, chunk_steps=chunk_steps)
    rows = []
    for (variant, rate, seed), loss, norm in zip(group, losses, norms):
        loss, norm, diverged = cut_at_divergence(loss, norm)
        rows.append(({
            "variant": variant.name, "pre_norm": variant.pre_norm, "warmup_steps": warm if variant.warmup else 0,
            "layers": config.layers, "learning_rate": float(rate), "seed": int(seed), "steps": config.steps,
            "steps_done": len(loss), "final_loss": float(loss[-1]), "max_gradient_norm": float(norm.max()),
            "diverged_at": diverged,
        }, (loss, norm)))
    return rows


def write_sweep_csv(rows: Sequence[dict], path) -> Path:
    """The tidy table: one row per run, columns :data:`SWEEP_COLUMNS`
    (:func:`~lnworked.stress.table_csv.write_rows` with every value as ``str()``: floats in full, bools as
    ``True``/``False``; ``diverged_at = None`` as an empty cell)."""
    path = Path(path)
    write_rows(({k: row[k] for k in SWEEP_COLUMNS} for row in rows), path, SWEEP_COLUMNS)
    return path


#: The per-step table of a sweep: one row per run and step; a run is named by its
#: (variant, layers, learning_rate, seed), as in :data:`SWEEP_COLUMNS`.
SWEEP_STEP_COLUMNS = ("variant", "layers", "learning_rate", "seed", "step", "loss", "gradient_norm")


def write_sweep_steps_csv(rows: Sequence[dict], curves: Sequence, path) -> Path:
    """Every run's per-step loss and gradient norm (:data:`SWEEP_STEP_COLUMNS`);
    ``curves[i] = (loss, norm)`` belongs to ``rows[i]``."""
    path = Path(path)
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(SWEEP_STEP_COLUMNS)
        for row, (loss, norm) in zip(rows, curves, strict=True):
            for step, (value, size) in enumerate(zip(loss, norm), start=1):
                writer.writerow([row["variant"], row["layers"], row["learning_rate"], row["seed"], step,
                                 float(value), float(size)])
    return path


def read_sweep_steps_csv(path) -> dict:
    """``{(variant, layers, learning_rate, seed): (loss, gradient_norm)}`` from
    :func:`write_sweep_steps_csv`'s table; arrays in step order."""
    with Path(path).open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    logs: dict = {}
    for r in rows:
        key = (r["variant"], int(r["layers"]), float(r["learning_rate"]), int(r["seed"]))
        logs.setdefault(key, []).append((int(r["step"]), float(r["loss"]), float(r["gradient_norm"])))
    out = {}
    for key, entries in logs.items():
        entries.sort()
        out[key] = (np.array([e[1] for e in entries]), np.array([e[2] for e in entries]))
    return out


def read_sweep_csv(path) -> list[dict]:
    """Rows of a sweep CSV with their types restored (an empty ``diverged_at`` reads as None)."""
    return read_rows(path, SWEEP_COLUMNS, ints=("warmup_steps", "layers", "seed", "steps", "steps_done", "diverged_at"),
                     floats=("learning_rate", "final_loss", "max_gradient_norm"), bools=("pre_norm",),
                     defaults={"diverged_at": None})


class SeedRuns(dict):
    """``{seed: RunResult}``, with ``interrupted`` True when Ctrl-C cut the runs short."""

    interrupted: bool = False


def seed_runs(config: StressConfig, seeds: Sequence[int], pre_norm: bool = False, warmup: int = 0,
              device="auto", *, chunk_steps: int = DEFAULT_CHUNK,
              progress: Callable[[str, int, int, float], None] | None = None) -> SeedRuns:
    """One kind of run under several seeds (each its own initial weights and data), batched
    with ``vmap``; ``{seed: RunResult}`` with full per-step logs. ``progress(name, step,
    steps, loss)`` is called per seed after each chunk; Ctrl-C returns the steps done so far."""
    from lnworked.stress.config import RunSpec

    seeds = _check_list(seeds, "seeds", lambda s: config.replace(seed=s))
    warmup = check_warmup(warmup, config.steps)
    device = select_device(device) if isinstance(device, str) else device
    data = [make_batches(config.replace(seed=s)) for s in seeds]
    schedule = np.stack([learning_rates(config.learning_rate, config.steps, warmup)] * len(seeds))
    name = ("Pre-Norm" if pre_norm else "Post-Norm") + (f" · {warmup}-step warmup" if warmup else " · no warmup")
    results, _, interrupted = train_logged(
        config, [RunSpec(name, pre_norm, warmup)] * len(seeds), [f"seed {s}" for s in seeds], seeds,
        np.stack([d[0] for d in data]), np.stack([d[1] for d in data]), schedule, device,
        chunk_steps=chunk_steps, progress=progress)
    runs = SeedRuns(zip(seeds, results))
    runs.interrupted = interrupted
    return runs


SEED_COLUMNS = ("seed", "variant", "pre_norm", "warmup_steps", "step", "loss", "gradient_norm", "learning_rate")


def write_seed_runs_csv(runs: dict, path) -> Path:
    """:func:`seed_runs`'s logs as one tidy table, one row per seed and step (:data:`SEED_COLUMNS`)."""
    path = Path(path)
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(SEED_COLUMNS)
        for seed, run in runs.items():
            for step, loss, norm, rate in zip(run.steps, run.loss, run.gradient_norm, run.learning_rate):
                writer.writerow([seed, run.spec.name, run.spec.pre_norm, run.spec.warmup_steps, int(step),
                                 float(loss), float(norm), float(rate)])
    return path


def read_seed_runs_csv(path) -> dict:
    """``{seed: RunResult}`` from :func:`write_seed_runs_csv`'s table (a run whose last value
    is not finite diverged there)."""
    from lnworked.stress.config import RunSpec
    from lnworked.stress.results import RunResult

    with Path(path).open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    runs = {}
    for seed in dict.fromkeys(int(r["seed"]) for r in rows):
        mine = sorted((r for r in rows if int(r["seed"]) == seed), key=lambda r: int(r["step"]))
        spec = RunSpec(mine[0]["variant"], mine[0]["pre_norm"] == "True", int(mine[0]["warmup_steps"]))
        loss, norm, rate = (np.array([float(r[k]) for r in mine]) for k in ("loss", "gradient_norm", "learning_rate"))
        loss, norm = loss.astype(np.float32), norm.astype(np.float32)
        diverged = len(loss) if not (np.isfinite(loss[-1]) and np.isfinite(norm[-1])) else None
        runs[seed] = RunResult(spec, loss, norm, rate, diverged)
    return runs


STABLE_LOSS = 0.1  # "learned the task": 0.1 nats, against ln(64) = 4.16 for a uniform guess


def largest_stable_rates(rows: Sequence[dict], threshold: float = STABLE_LOSS,
                         statistic: str = "median") -> list[dict]:
    """The largest learning rate of the grid at which each (variant, depth) cell is stable.

    A cell (one variant, one depth, one rate, all its seeds) is *stable* when none of its
    runs diverged and ``statistic`` of its final losses over seeds is below ``threshold``:

        stable(v, L, eta) = no run diverged  and  stat_s loss(v, L, eta, s) < threshold,

    with ``stat`` the median over seeds (``statistic="median"``) or the worst seed
    (``statistic="max"``, stricter: every seed must be below the threshold). A diverged
    run counts as an infinite loss. The result is, for each variant and depth (in the
    order the rows first name them), ``eta*(v, L) = max {eta in the grid : stable}``,
    or ``None`` when no rate of the grid is stable.

    "Stable" here means "learned the task within the run's steps": a rate too small to
    learn in time fails the test as well, so ``eta*`` is the top of the stable rates, not
    the bottom of the unstable ones. One row per (variant, depth): ``variant``,
    ``layers``, ``largest_stable_rate``, ``largest_rate`` (the largest rate tried),
    ``stable_rates`` (all stable rates, ascending) and ``seeds`` (the smallest number of
    seeds in a cell).
    """
    if statistic not in ("median", "max"):
        raise ValueError(f"statistic: must be 'median' or 'max', got {statistic!r}")
    reduce = np.median if statistic == "median" else np.max
    cells: dict = {}
    for row in rows:
        loss = np.inf if row["diverged_at"] is not None else float(row["final_loss"])
        key = (row["variant"], int(row["layers"]))
        cells.setdefault(key, {}).setdefault(float(row["learning_rate"]), []).append(loss)
    table = []
    for (variant, layers), by_rate in cells.items():
        stable = sorted(r for r, losses in by_rate.items() if reduce(losses) < threshold)
        table.append({"variant": variant, "layers": layers,
                      "largest_stable_rate": stable[-1] if stable else None,
                      "largest_rate": max(by_rate), "stable_rates": stable,
                      "seeds": min(len(v) for v in by_rate.values())})
    return table
