"""Adam's momentum along one direction: the roots of its recurrence (:func:`momentum_roots`) against
numpy.roots and against the walk's own growth, and section 6.6's walk explorer (its grid, readouts and
errors)."""

from __future__ import annotations

import numpy as np
import pytest

from lnworked.stress.sharpness import adam_threshold, momentum_roots, momentum_walk
from lnworked.stress.walk_explorer import (RATIO_DEFAULT, RATIO_HI, RATIO_LO, WALK_B1, WALK_FLOOR, WALK_READOUT_KEYS,
                                           WALK_STEPS, WALK_TOP, walk_explorer_spec, walk_readouts)


@pytest.mark.parametrize("b1", [0.0, 0.5, 0.9, 0.99])
@pytest.mark.parametrize("ratio", [0.3, 0.8, 1.0, 1.2])
def test_roots_are_numpys_and_one_reaches_minus_one_at_the_threshold(b1, ratio):
    eta_lam = ratio * adam_threshold(b1)
    roots = momentum_roots(eta_lam, b1)
    other = np.roots([1, -(1 + b1 - (1 - b1) * eta_lam), b1])
    assert sorted(abs(roots)) == pytest.approx(sorted(abs(other)), abs=1e-9)
    assert abs(roots[0]) >= abs(roots[1])
    if ratio == 1.0:
        assert roots[0] == pytest.approx(-1, abs=1e-9)
    assert (abs(roots[0]) < 1 - 1e-9) == (ratio < 1) and (abs(roots[0]) > 1 + 1e-9) == (ratio > 1)


@pytest.mark.parametrize("b1", [0.5, 0.9])
@pytest.mark.parametrize("ratio", [0.6, 1.2])
def test_the_walk_shrinks_or_grows_by_the_larger_root_s_size_per_step(b1, ratio):
    """The walk is A zeta_1^s + A' zeta_2^s: over 100 late steps its envelope (the largest size in a window of
    20 steps) changes by |zeta_1|^100, to 1 % in the logarithm's rate."""
    eta_lam = ratio * adam_threshold(b1)
    walk = np.abs(momentum_walk(eta_lam, b1, 220))
    rate = (np.log(walk[200:220].max()) - np.log(walk[100:120].max())) / 100
    assert rate == pytest.approx(np.log(abs(momentum_roots(eta_lam, b1)[0])), abs=1e-2)


def test_readouts_say_settles_swings_or_grows_on_either_side_of_the_threshold():
    assert walk_readouts(0.9, 1.0)["threshold"] == "38" and walk_readouts(0.9, 1.0)["eta-lam"] == "38"
    assert walk_readouts(0.9, 0.8)["verdict"].startswith("settles")
    # no momentum at half its threshold (eta lam = 1): the first step lands on the bottom, which the chart
    # cannot draw on its log axis, so the table says it (read 201 found an empty chart and no word)
    assert walk_readouts(0.0, 0.5)["verdict"].startswith("lands on the bottom in one step")
    assert walk_readouts(0.0, 0.45)["verdict"].startswith("settles")
    # how fast it settles: the envelope |zeta|^s halves in ln 2 / ln(1 / |zeta|) steps, checked on the walk itself
    assert "more than halving each step" in walk_readouts(0.0, 0.4)["verdict"]  # gradient descent: |1 - 0.8| = 0.2
    for b1 in (0.5, 0.99):
        readout = walk_readouts(b1, 0.8)
        half = float(readout["verdict"].split("halving every ")[1].split()[0])
        zeta = abs(momentum_roots(0.8 * adam_threshold(b1), b1)[0])
        assert zeta ** half == pytest.approx(0.5, rel=2e-2)
    assert walk_readouts(0.9, 1.0)["verdict"].startswith("swings")
    assert walk_readouts(0.9, 1.2)["verdict"].startswith("grows")
    assert walk_readouts(0.0, 1.0)["threshold"] == "2"  # gradient descent's limit
    assert walk_readouts(0.9, 0.8)["roots"].endswith("its conjugate")
    assert float(walk_readouts(0.9, 1.0)["last"]) == pytest.approx(19, rel=1e-2)  # (1 + b1) / (1 - b1)
    for bad in (0, -1, float("nan")):
        with pytest.raises(ValueError, match="^ratio"):
            walk_readouts(0.9, bad)
    with pytest.raises(ValueError, match="^b1"):
        walk_readouts(1.0, 0.8)


def test_the_grid_holds_every_setting_with_the_walk_s_sizes_inside_the_plot_s_range():
    spec = walk_explorer_spec()
    grid = spec.grid()
    ratios = spec.control("ratio").values
    assert ratios[0] == RATIO_LO and ratios[-1] == RATIO_HI and 1.0 in ratios
    assert set(grid["cells"]) == {f"{format(b, 'g')}|{i}" for b in WALK_B1 for i in range(len(ratios))}
    assert grid["readouts"] == list(WALK_READOUT_KEYS) and grid["steps"] == list(range(WALK_STEPS + 1))
    for b in WALK_B1:
        for i, r in enumerate(ratios):
            cell = grid["cells"][f"{format(b, 'g')}|{i}"]
            walk = np.abs(momentum_walk(r * adam_threshold(b), b, WALK_STEPS))
            shown = [(v, w) for v, w in zip(cell["walk"], walk) if v is not None]
            assert all(v == pytest.approx(w, rel=1e-3) for v, w in shown)
            assert all((v is None) == (not WALK_FLOOR <= w <= WALK_TOP) for v, w in zip(cell["walk"], walk))
            assert cell["readouts"] == [walk_readouts(b, r)[k] for k in WALK_READOUT_KEYS]
    # the fastest growth leaves the plot: beta 0.99 at 1.5 times its threshold
    assert None in grid["cells"][f"0.99|{len(ratios) - 1}"]["walk"]


def test_the_explorer_opens_on_a_setting_of_its_own_not_the_forecast_s():
    """6.6's forecast asks about the walk at 0.8 times the threshold, right above the explorer: opened
    there, its table said "settles" on the same screen. It opens at half the threshold, the article's
    momentum, a setting on the slider's grid."""
    spec = walk_explorer_spec()
    slider, b1 = spec.control("ratio"), spec.control("b1")
    assert slider.default == RATIO_DEFAULT == 0.5 and b1.default == 0.9
    assert slider.values[slider.position(slider.default)] == slider.default
