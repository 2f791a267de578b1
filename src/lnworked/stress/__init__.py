"""The JAX stress test of seed 002 (Zhejian Peng's article): Pre-LN vs Post-LN, with and without warmup.

Modules, one concept each: :mod:`~lnworked.stress.config` (the article's configuration),
:mod:`~lnworked.stress.data` (arithmetic token sequences), :mod:`~lnworked.stress.model`
(the Flax transformer), :mod:`~lnworked.stress.optim` (Adam + weight decay, warmup),
:mod:`~lnworked.stress.step` (one training step), :mod:`~lnworked.stress.train` (the
compiled fast path), :mod:`~lnworked.stress.reference` (the article's step-by-step loop),
:mod:`~lnworked.stress.device`, :mod:`~lnworked.stress.article` (the article's own log),
:mod:`~lnworked.stress.report` (CSV, figure, summary), :mod:`~lnworked.stress.sweep`
(grids over depth, rate and seed; per-layer gradient norms) and
:mod:`~lnworked.stress.cli` (``lnworked stress``).
"""

from lnworked.stress.config import RunSpec, StressConfig, default_runs
from lnworked.stress.device import select_device
from lnworked.stress.results import RunResult, StressResult
from lnworked.stress.train import train

__all__ = ["StressConfig", "RunSpec", "default_runs", "select_device", "RunResult", "StressResult", "train"]
