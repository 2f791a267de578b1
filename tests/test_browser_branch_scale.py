"""Chapter 6's branch-scale explorer in Chromium: the slider and the selects redraw with the library's values.

The page holds the kernel-free explorer (LNWORKED_STATIC_BUILD=1) alone; the expected texts come
from lnworked.stress.branch_scale_explorer.branch_scale_readouts on the stored rows.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from browser_support import explorer_page, explorer_state

pytestmark = pytest.mark.slow

OUT = Path(__file__).resolve().parent.parent / "test-output" / "browser"


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    from lnworked.stress.branch_scale_explorer import branch_scale_explorer

    explorers = [branch_scale_explorer]
    OUT.mkdir(parents=True, exist_ok=True)
    with explorer_page(tmp_path_factory, "branch scale", explorers) as (driver, url):
        yield driver, url


def _state(driver, root) -> dict:
    """The explorer's drawn state, with the kappa slider's echoed value as ``echo``."""
    state = explorer_state(driver, root)
    state["echo"] = driver.execute_script(
        "return arguments[0].querySelector('.lnw-param[data-param=\"kappa\"]').textContent;", root)
    return state


def _expected(controls: dict) -> dict:
    from lnworked.stress.branch_scale import branch_scale_summary, branch_scales
    from lnworked.stress.branch_scale_explorer import branch_scale_readouts
    from lnworked.stress.committed import committed_branch_scale

    rows = committed_branch_scale()[0]
    rate = {format(r["learning_rate"], "g"): r["learning_rate"] for r in rows}[controls["rate"]]
    seed = controls["seed"] if controls["seed"] == "mean" else int(controls["seed"])
    return branch_scale_readouts(branch_scale_summary(rows), branch_scales()[int(controls["kappa"])], seed, rate)


def test_moving_kappa_and_choosing_a_seed_redraw_with_the_librarys_values(page):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import Select

    driver, url = page
    driver.set_window_size(1280, 900)
    driver.get(url)
    (root,) = driver.find_elements(By.CSS_SELECTOR, 'div.lnw-explorer[data-explorer="branch-scale"]')
    assert root.get_attribute("data-lnw-ready") == "1"
    state = _state(driver, root)
    assert {"branch_share", "relative", "delivered", "pre-branch_share"} <= set(state["paths"])
    assert state["controls"]["kappa"] == "0" and state["echo"].startswith("1 ")
    assert state["readouts"] == _expected(state["controls"])
    slider = root.find_element(By.CSS_SELECTOR, 'input[type=range][name="kappa"]')
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", slider)
    for _ in range(5):  # as a reader does: five steps right, to DeepNorm's kappa
        slider.send_keys(Keys.RIGHT)
    new = _state(driver, root)
    assert new["controls"]["kappa"] == "5" and "DeepNorm" in new["echo"]
    assert new["marker"] != state["marker"], "the slider did not move the marker"
    assert new["readouts"] == _expected(new["controls"]) and new["readouts"]["sentence"] != state["readouts"]["sentence"]
    assert new["paths"] == state["paths"]  # the same seed and rate: the lines stay, the marker moves
    for name, value in (("seed", "9"), ("rate", format(min(float(o.get_attribute("value")) for o in
                                                             root.find_elements(By.CSS_SELECTOR, 'select[name="rate"] option')), "g"))):
        Select(root.find_element(By.CSS_SELECTOR, f'select[name="{name}"]')).select_by_value(value)
        after = _state(driver, root)
        assert after["controls"][name] == value
        assert after["paths"]["delivered"] != new["paths"]["delivered"] or name == "rate" and (
            after["paths"]["relative"] != new["paths"]["relative"]), f"choosing {name}={value} did not redraw"
        assert after["readouts"] == _expected(after["controls"]) and after["readouts"] != new["readouts"]
        new = after
    root.screenshot(str(OUT / "explorer-branch-scale.png"))
    errors = [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    assert not errors, errors


@pytest.mark.parametrize("width, height, smallest, canvas", [(1280, 900, 12, "0 0 520 280"), (390, 844, 11, "0 0 340 400")])
def test_chart_text_is_legible_and_nothing_scrolls_sideways(page, width, height, smallest, canvas):
    from test_browser import PHONE_OVERFLOW_JS
    from test_browser_first_step import TEXT_JS

    driver, url = page
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 480})
    try:
        driver.get(url)
        found = driver.execute_script(TEXT_JS)["branch-scale"]
        overflow = driver.execute_script(PHONE_OVERFLOW_JS)
        driver.save_screenshot(str(OUT / f"explorer-branch-scale--{width}.png"))
    finally:
        driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    assert found["box"] == canvas
    assert found["font"] >= smallest and found["height"] >= smallest, found
    assert not found["outside"], found["outside"]
    assert not found["overlaps"], found["overlaps"]
    assert overflow["scroll"] <= overflow["inner"] + 1, overflow
