"""The JAX stress test of seed 002 (Zhejian Peng's article): Pre-LN vs Post-LN, with and without warmup.

Modules, one concept each: :mod:`~lnworked.stress.config` (the article's configuration),
:mod:`~lnworked.stress.data` (arithmetic token sequences), :mod:`~lnworked.stress.model`
(the Flax transformer), :mod:`~lnworked.stress.stacked` (its blocks as one scan),
:mod:`~lnworked.stress.optim` (Adam + weight decay, warmup), :mod:`~lnworked.stress.step`
(one training step), :mod:`~lnworked.stress.compile` (compiler options, persistent
cache), :mod:`~lnworked.stress.train` (the compiled fast path), :mod:`~lnworked.stress.reference` (the article's step-by-step loop),
:mod:`~lnworked.stress.device`, :mod:`~lnworked.stress.article` (the article's own log),
:mod:`~lnworked.stress.report` (CSV, figure, summary), :mod:`~lnworked.stress.sweep`
(grids over depth, rate and seed; one run under several seeds),
:mod:`~lnworked.stress.probe` (per-layer gradient norms at initialisation),
:mod:`~lnworked.stress.committed` (results shipped with their provenance),
:mod:`~lnworked.stress.explorer` (the chapter's explorer over the committed sweep, and live training controls) and
:mod:`~lnworked.stress.cli` (``lnworked stress``).

JAX, Flax and Optax load only when a name below is first used (``lnworked.stress.cli``
registers its parser without them), so ``lnworked examples`` starts quickly. Training is
``lnworked.stress.train.train`` (not re-exported here: the submodule of the same name
would shadow it once loaded).
"""

from importlib import import_module

_WHERE = {
    "StressConfig": "config", "RunSpec": "config", "default_runs": "config", "select_device": "device",
    "RunResult": "results", "StressResult": "results",
}
__all__ = list(_WHERE)


def __getattr__(name):
    if name in _WHERE:
        return getattr(import_module(f"lnworked.stress.{_WHERE[name]}"), name)
    raise AttributeError(f"module 'lnworked.stress' has no attribute {name!r}")
