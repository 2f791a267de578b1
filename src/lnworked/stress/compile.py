"""Compiling the stress test's programs: per-program compiler options and a persistent cache.

Two things make a cold ``lnworked stress`` start faster, and a second one faster still:

* :func:`compile_program` compiles one jitted function ahead of time with options for
  that program only on the CPU (not process-wide ``XLA_FLAGS``); other platforms keep
  their defaults. :data:`CPU_COMPILER_OPTIONS`, for the training program: with the
  backend optimisation level 1 this model's training step ran faster than with the
  default level in side-by-side measurements on 2-core CPUs, with the same losses.
  :data:`CPU_SETUP_OPTIONS`, for a program that runs once (the initial weights): the
  least optimisation, as compiling it costs more than running it.
* :func:`enable_compilation_cache` turns on JAX's persistent compilation cache in a user
  cache folder (:func:`default_cache_dir`): ``$LNWORKED_CACHE_DIR``, else
  ``$XDG_CACHE_HOME/lnworked/jax``, else ``~/.cache/lnworked/jax``. A later process that
  compiles the same program (same shapes, options, JAX version and machine) loads it
  instead. It must be called before the process's first compilation.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import jax

__all__ = ["CPU_COMPILER_OPTIONS", "CPU_SETUP_OPTIONS", "compile_program", "default_cache_dir",
           "enable_compilation_cache"]

CPU_COMPILER_OPTIONS = {"xla_backend_optimization_level": 1}
CPU_SETUP_OPTIONS = {"xla_backend_optimization_level": 0, "xla_llvm_disable_expensive_passes": True}


def compile_program(fn, args, device=None, cpu_options=CPU_COMPILER_OPTIONS):
    """``(compiled, seconds)``: ``jax.jit(fn)`` lowered for ``args`` and compiled for ``device``'s
    platform, with ``cpu_options`` on a CPU."""
    platform = device.platform if device is not None else jax.default_backend()
    options = cpu_options if platform == "cpu" else None
    started = time.perf_counter()
    compiled = jax.jit(fn).lower(*args).compile(compiler_options=options)
    return compiled, time.perf_counter() - started


def default_cache_dir() -> Path:
    """Where :func:`enable_compilation_cache` keeps compiled programs by default."""
    if os.environ.get("LNWORKED_CACHE_DIR"):
        return Path(os.environ["LNWORKED_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "lnworked" / "jax"


def enable_compilation_cache(path=None) -> Path:
    """Use JAX's persistent compilation cache in ``path`` (default :func:`default_cache_dir`)."""
    path = Path(path) if path is not None else default_cache_dir()
    path.mkdir(parents=True, exist_ok=True)
    jax.config.update("jax_compilation_cache_dir", str(path))
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
    return path
