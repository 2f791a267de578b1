"""Counting runs by whether they learn: two schedules compared on the same random seeds, and runs
sorted by where their full rate arrives.

Run two schedules on the same ``n`` seeds and mark, seed by seed, whether each learns. Seeds in
which both learn, or neither does, say nothing about which schedule is better; only the
*discordant* seeds do: ``a`` of them in which only the first learns, ``b`` in which only the
second does, ``d = a + b``. If the two schedules were equally good, each discordant seed would be
the first's or the second's with probability 1/2, like a fair coin. The two-sided sign test's
p-value is the chance of a split at least as uneven as the one seen:

    p = P(|X - d/2| >= |a - d/2|),  X ~ Binomial(d, 1/2),
      = min(1, 2 * sum_{i <= min(a, b)} C(d, i) / 2^d)    (p = 1 when d = 0).

:func:`arrival_outcomes` sorts runs into a 2 x 2 table: whether the product ``eta lam`` (the
full rate times Adam's preconditioned sharpness) is below the threshold where the run's full rate
arrives, and whether the run learns. A rule "a run learns when its full rate arrives below the
threshold" puts every run on the table's diagonal.
"""

from __future__ import annotations

from math import comb

import numpy as np

__all__ = ["arrival_outcomes", "sign_test"]


def _check_learned(values, name: str) -> np.ndarray:
    array = np.asarray(values)
    if array.ndim != 1 or array.size == 0:
        raise ValueError(f"{name}: must be a non-empty 1-D sequence of booleans, one per seed, got shape {array.shape}")
    if array.dtype != bool:
        raise ValueError(f"{name}: must hold booleans (learned or not, per seed), got dtype {array.dtype}")
    return array


def sign_test(first_learned, second_learned) -> tuple[int, int, float]:
    """``(a, b, p)`` for two schedules run on the same seeds: ``a`` seeds in which only the first
    learns, ``b`` in which only the second does, and the two-sided sign test's p-value (module
    docstring). ``first_learned[i]`` and ``second_learned[i]`` are booleans for the same seed ``i``."""
    first = _check_learned(first_learned, "first_learned")
    second = _check_learned(second_learned, "second_learned")
    if first.shape != second.shape:
        raise ValueError(f"second_learned: must have one value per seed of first_learned ({first.size}), "
                         f"got {second.size}")
    a, b = int(np.sum(first & ~second)), int(np.sum(second & ~first))
    d = a + b
    tail = sum(comb(d, i) for i in range(min(a, b) + 1))
    return a, b, min(1.0, 2 * tail / 2 ** d) if d else 1.0


def arrival_outcomes(products, learned, threshold: float) -> dict[tuple[bool, bool], int]:
    """``{(below, learns): count}`` over runs: ``below`` when ``products[i] < threshold`` (the
    product ``eta lam`` where run ``i``'s full rate arrives), ``learns`` as ``learned[i]``; all four
    keys are present, counts may be 0."""
    values = np.asarray(products, dtype=float)
    if values.ndim != 1 or values.size == 0 or not np.all(np.isfinite(values)) or np.any(values <= 0):
        raise ValueError(f"products: must be a non-empty 1-D sequence of positive finite numbers, one per run, "
                         f"got {products!r}")
    outcome = _check_learned(learned, "learned")
    if outcome.shape != values.shape:
        raise ValueError(f"learned: must have one value per run of products ({values.size}), got {outcome.size}")
    if not (np.isfinite(threshold) and threshold > 0):
        raise ValueError(f"threshold: must be a positive finite number, got {threshold!r}")
    below = values < threshold
    return {(b, l): int(np.sum((below == b) & (outcome == l))) for b in (True, False) for l in (True, False)}
