"""The stress test's data: arithmetic progressions of tokens (seed 002).

Each sequence starts at a random token ``s`` and continues ``s+1, s+2, ...`` (mod the
vocabulary), so the next token is always the current one plus 1. Every batch's start
tokens come from one NumPy ``default_rng(seed + 116)`` stream, ``integers(0, V,
size=(batch, 1))`` per step, exactly as the article draws them; all runs see the same
batches.
"""

from __future__ import annotations

import numpy as np

from lnworked.stress.config import StressConfig

__all__ = ["make_batch", "make_batches"]

SEED_OFFSET = 116  # the article's data stream is default_rng(seed + 116)


def make_batch(config: StressConfig, generator: np.random.Generator):
    """One ``(source, target)`` pair of int32 arrays of shape ``(batch, length)``."""
    starts = generator.integers(0, config.vocab_size, size=(config.batch_size, 1), dtype=np.int32)
    offsets = np.arange(config.sequence_length + 1, dtype=np.int32)[None, :]
    sequence = (starts + offsets) % config.vocab_size
    return sequence[:, :-1], sequence[:, 1:]


def make_batches(config: StressConfig):
    """All steps' batches at once: ``(sources, targets)`` of shape ``(steps, batch, length)``."""
    generator = np.random.default_rng(config.seed + SEED_OFFSET)
    pairs = [make_batch(config, generator) for _ in range(config.steps)]
    return np.stack([p[0] for p in pairs]), np.stack([p[1] for p in pairs])
