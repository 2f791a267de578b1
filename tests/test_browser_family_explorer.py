"""Chapter 8's explorer over the trained family (lnworked.stress.family_explorer) in a real browser, without a kernel.

Its static HTML (what the book build emits, ``LNWORKED_STATIC_BUILD=1``) is written into a page of its
own, served on 127.0.0.1 and driven in Debian's headless Chromium (tests/browser_support.py): choosing
a design, a rate and a seed, as a reader does, redraws the line as the chosen run's losses (read here
from the committed CSV with the csv module) and shows that run's final loss and largest gradient norm.
Its chart text and phone width are checked with every other explorer's in tests/test_browser_first_step.py.
It needs no built book.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from browser_support import explorer_page, explorer_state

pytestmark = pytest.mark.slow

OUT = Path(__file__).resolve().parent.parent / "test-output" / "browser"


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    from lnworked.stress.family_explorer import family_explorer

    OUT.mkdir(parents=True, exist_ok=True)
    with explorer_page(tmp_path_factory, "family", (family_explorer,)) as (driver, url):
        yield driver, url


@pytest.fixture(scope="module")
def csv_runs():
    """``{(variant, rate text, seed text): [(loss, gradient norm), ...] in step order}`` from the CSV."""
    from test_family_explorer import family_csv_steps

    return {key: [(loss, norm) for _, loss, norm in steps] for key, steps in family_csv_steps().items()}


def _expected_readouts(run) -> dict:
    from lnworked.explore import format_readout

    losses = [loss for loss, _ in run]
    return {"final-loss": format_readout(sum(losses[-10:]) / 10),
            "max-gradient-norm": format_readout(max(norm for _, norm in run))}


def _points(path: str, run):
    """The path's points and log10 of the run's losses, one per step."""
    points = np.array([[float(a), float(b)] for a, b in re.findall(r"[ML]([-\d.]+),([-\d.]+)", path)])
    assert len(points) == len(run), "one point per step"
    return points, np.log10([loss for loss, _ in run])


def _axis(path: str, run):
    """The straight map ``y = a + b log10(loss)`` (``b`` < 0: larger losses drawn higher) that takes the
    run's losses to the path's screen y, fitted; with the path's rounding to 0.1 px, at most 0.05 px off."""
    points, logs = _points(path, run)
    design = np.stack([np.ones_like(logs), logs], axis=1)
    coef, *_ = np.linalg.lstsq(design, points[:, 1], rcond=None)
    assert coef[1] < 0 and np.abs(design @ coef - points[:, 1]).max() < 0.1, coef
    return coef


def _off(path: str, run, axis) -> float:
    """How far (px, at most) the path's points are from the run's losses drawn on ``axis``."""
    points, logs = _points(path, run)
    return float(np.abs(axis[0] + axis[1] * logs - points[:, 1]).max())


def test_choosing_a_design_a_rate_and_a_seed_draws_that_run(page, csv_runs):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    driver, url = page
    driver.set_window_size(1280, 900)
    driver.get(url)
    (root,) = driver.find_elements(By.CSS_SELECTOR, 'div.lnw-explorer[data-explorer="family"]')
    assert root.get_attribute("data-lnw-ready") == "1"
    state = explorer_state(driver, root)
    assert set(state["paths"]) == {"loss"}
    assert len(root.find_elements(By.CSS_SELECTOR, "line.lnw-ref")) == 1  # ln V, the uniform guess
    variants = list(dict.fromkeys(v for v, _, _ in csv_runs))
    rates = sorted({r for _, r, _ in csv_runs}, key=float)
    seeds = sorted({s for _, _, s in csv_runs}, key=int)
    key = (state["controls"]["variant"], state["controls"]["rate"], state["controls"]["seed"])
    assert key == (variants[0], rates[0], seeds[0])
    assert state["readouts"] == _expected_readouts(csv_runs[key])
    axis = _axis(state["paths"]["loss"], csv_runs[key])  # the chart's fixed log axis, from the first run
    told_apart = 0
    for name, value in (("variant", "Post-LN"), ("rate", rates[-1]), ("seed", seeds[-1]),
                        ("variant", "Post-LN, RMSNorm"), ("rate", rates[0]), ("variant", "Peri-LN"),
                        ("seed", seeds[1])):
        Select(root.find_element(By.CSS_SELECTOR, f'select[name="{name}"]')).select_by_value(value)
        new = explorer_state(driver, root)
        assert new["controls"][name] == value
        new_key = (new["controls"]["variant"], new["controls"]["rate"], new["controls"]["seed"])
        assert new["readouts"] == _expected_readouts(csv_runs[new_key]), f"after {name}={value}"
        assert new["readouts"] != state["readouts"], f"choosing {name}={value} left the readouts as they were"
        assert new["paths"]["loss"] != state["paths"]["loss"], f"choosing {name}={value} did not redraw"
        assert _off(new["paths"]["loss"], csv_runs[new_key], axis) < 0.15, f"after {name}={value}: not {new_key}'s run"
        # two seeds of a run that stays near ln V can lie within the path's rounding of each other
        apart = np.abs(np.diff(axis[1] * np.log10([[loss for loss, _ in csv_runs[k]] for k in (key, new_key)]),
                               axis=0)).max()
        if apart > 1:
            told_apart += 1
            assert _off(new["paths"]["loss"], csv_runs[key], axis) > apart / 2, f"after {name}={value}: still {key}'s"
        state, key = new, new_key
    assert told_apart >= 4  # the changes of design and rate move the line visibly
    root.screenshot(str(OUT / "explorer-family.png"))
    errors = [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    assert not errors, errors
