"""The first-step explorer (lnworked.stress.first_step_explorer) in a real browser, without a kernel.

Its static HTML (what the book build emits, ``LNWORKED_STATIC_BUILD=1``) is written into a page of
its own, served on 127.0.0.1 and driven in Debian's headless Chromium (tests/browser_support.py):
choosing a rate and a depth and moving the position slider, as a reader does, redraws the curves and
shows the library's readouts;
at a phone's 390 px the page does not scroll sideways. It needs no built book.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from browser_support import BookServer, missing_browser, start_chromium

pytestmark = pytest.mark.slow

OUT = Path(__file__).resolve().parent.parent / "test-output" / "browser"

PAGE = """<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><link rel="icon" href="data:,"><title>first step</title>
<style>body{font-family:sans-serif;margin:0 8px}</style></head><body>{body}</body></html>"""


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    problem = missing_browser()
    if problem:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true and the browser is missing. {problem}")
        pytest.skip(problem)
    from lnworked.stress.first_step_explorer import first_step_explorer

    folder = tmp_path_factory.mktemp("first-step-page")
    previous = os.environ.get("LNWORKED_STATIC_BUILD")
    os.environ["LNWORKED_STATIC_BUILD"] = "1"
    try:
        body = first_step_explorer().data
    finally:
        if previous is None:
            del os.environ["LNWORKED_STATIC_BUILD"]
        else:
            os.environ["LNWORKED_STATIC_BUILD"] = previous
    (folder / "index.html").write_text(PAGE.replace("{body}", body), encoding="utf-8")
    OUT.mkdir(parents=True, exist_ok=True)
    with BookServer(folder) as server:
        driver = start_chromium(tmp_path_factory.mktemp("chromium-profile"))
        try:
            yield driver, server.url("index.html")
        finally:
            driver.quit()


def _state(driver, root) -> dict:
    return driver.execute_script("""
const root = arguments[0];
const out = {paths: {}, readouts: {}, controls: {}};
root.querySelectorAll('path.lnw-line').forEach(e => out.paths[e.dataset.series] = e.getAttribute('d'));
root.querySelectorAll('.lnw-readout').forEach(e => out.readouts[e.dataset.key] = e.textContent.trim());
root.querySelectorAll('select[name], input[name]').forEach(e => out.controls[e.name] = e.value);
const marker = root.querySelector('line.lnw-marker');
out.marker = marker ? marker.getAttribute('x1') : null;
return out;""", root)


def _expected(controls: dict) -> dict:
    from lnworked.stress.committed import committed_first_step
    from lnworked.stress.first_step import first_step_curves, safe_rates
    from lnworked.stress.first_step_explorer import first_step_readouts

    rows = committed_first_step()[0]
    rate = {format(r["learning_rate"], "g"): r["learning_rate"] for r in rows}[controls["rate"]]  # the option's key
    return first_step_readouts(first_step_curves(rows), safe_rates(rows), int(controls["depth"]),
                               int(controls["seed"]), rate, float(controls["t"]))


def test_choosing_a_rate_and_a_depth_redraws_with_the_librarys_values(page):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import Select

    from lnworked.stress.committed import committed_first_step

    rates = sorted({r["learning_rate"] for r in committed_first_step()[0]})
    driver, url = page
    driver.set_window_size(1280, 900)
    driver.get(url)
    (root,) = driver.find_elements(By.CSS_SELECTOR, 'div.lnw-explorer[data-explorer="first-step"]')
    assert root.get_attribute("data-lnw-ready") == "1"
    state = _state(driver, root)
    assert set(state["paths"]) == {"pre", "post", "pre-tangent", "post-tangent"}
    assert all(d.count("L") >= 20 for d in state["paths"].values())  # 21 points each
    assert state["readouts"] == _expected(state["controls"])
    for name, value in (("rate", format(rates[0], "g")), ("depth", "48"), ("rate", format(rates[-1], "g")),
                        ("seed", "8"), ("depth", "1")):
        Select(root.find_element(By.CSS_SELECTOR, f'select[name="{name}"]')).select_by_value(value)
        new = _state(driver, root)
        assert new["controls"][name] == value
        assert new["paths"]["post"] != state["paths"]["post"], f"choosing {name}={value} did not redraw Post-LN"
        assert new["readouts"] == _expected(new["controls"]), f"after {name}={value}"
        assert new["readouts"] != state["readouts"], f"choosing {name}={value} left the readouts as they were"
        state = new
    slider = root.find_element(By.CSS_SELECTOR, 'input[type=range][name="t"]')
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", slider)
    slider.send_keys(Keys.LEFT)  # as a reader does: one position back along the step
    new = _state(driver, root)
    assert new["controls"]["t"] == "0.95" and new["marker"] != state["marker"], "the position slider did not move"
    assert new["readouts"] == _expected(new["controls"]) and new["readouts"] != state["readouts"]
    root.screenshot(str(OUT / "explorer-first-step.png"))
    errors = [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    assert not errors, errors


def test_at_phone_width_nothing_scrolls_sideways(page):
    from selenium.webdriver.common.by import By

    from test_browser import PHONE, PHONE_OVERFLOW_JS

    driver, url = page
    width, height = PHONE
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": True})
    try:
        driver.get(url)
        (root,) = driver.find_elements(By.CSS_SELECTOR, 'div.lnw-explorer[data-explorer="first-step"]')
        assert root.get_attribute("data-lnw-ready") == "1"
        result = driver.execute_script(PHONE_OVERFLOW_JS)
        assert result["inner"] <= width + 1, result
        assert result["scroll"] <= result["inner"] + 1, f"at {width} px the page scrolls sideways: {result}"
        box = driver.execute_script("return arguments[0].querySelector('svg.lnw-plot').getAttribute('viewBox')", root)
        assert box == "0 0 340 400", "the plot did not switch to its phone canvas"
        driver.save_screenshot(str(OUT / "explorer-first-step--phone.png"))
    finally:
        driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
