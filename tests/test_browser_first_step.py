"""The first-step explorer (lnworked.stress.first_step_explorer) in a real browser, without a kernel.

Its static HTML (what the book build emits, ``LNWORKED_STATIC_BUILD=1``), followed by every other
explorer of the book, is written into a page of its own, served on 127.0.0.1 and driven in Debian's
headless Chromium (tests/browser_support.py): choosing a rate, a depth and a seed (or the mean of the
seeds, the default) and moving the position slider, as a reader does, redraws the curves and shows
the library's readouts, the mean's recomputed by hand from the stored rows; at a phone's 390 px the
page does not scroll sideways; every explorer's chart text is at least 12 px at 1280 px and 11 px at
390 px, inside its canvas, and no two labels overlap. It needs no built book.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from browser_support import explorer_page, explorer_state

pytestmark = pytest.mark.slow

OUT = Path(__file__).resolve().parent.parent / "test-output" / "browser"


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    from lnworked import explore
    from lnworked.stress.deepnorm_explorer import deepnorm_explorer
    from lnworked.stress.explorer import sweep_explorer
    from lnworked.stress.family_explorer import family_explorer
    from lnworked.stress.first_step_explorer import first_step_explorer
    from lnworked.stress.schedule_explorer import schedule_explorer

    # the first-step explorer first, then every other explorer of the book (for the text sizes)
    explorers = (first_step_explorer, explore.layer_norm_explorer, explore.depth_explorer,
                 explore.residual_explorer, explore.random_stack_explorer, sweep_explorer,
                 deepnorm_explorer, family_explorer, schedule_explorer)
    OUT.mkdir(parents=True, exist_ok=True)
    with explorer_page(tmp_path_factory, "first step", explorers) as (driver, url):
        yield driver, url


def _expected(controls: dict) -> dict:
    from lnworked.stress.committed import committed_first_step
    from lnworked.stress.first_step import first_step_curves
    from lnworked.stress.first_step_explorer import first_step_readouts

    rows = committed_first_step()[0]
    rate = {format(r["learning_rate"], "g"): r["learning_rate"] for r in rows}[controls["rate"]]  # the option's key
    seed = controls["seed"] if controls["seed"] == "mean" else int(controls["seed"])
    return first_step_readouts(first_step_curves(rows), int(controls["depth"]), seed, rate, float(controls["t"]))


def _mean_by_hand(controls: dict) -> dict:
    """The mean option's delivered shares from the stored rows by hand: the mean over the seeds of each
    seed's ``(f(t eta) - f(0)) / (t eta <g, u>)``."""
    from lnworked.stress.committed import committed_first_step

    rows = committed_first_step()[0]
    rate = {format(r["learning_rate"], "g"): r["learning_rate"] for r in rows}[controls["rate"]]
    layers, t = int(controls["depth"]), float(controls["t"])
    seeds = sorted({r["seed"] for r in rows})
    out = {}
    for placement, short in (("Pre-LN", "pre"), ("Post-LN", "post")):
        at = [r for r in rows if (r["placement"], r["layers"], r["learning_rate"]) == (placement, layers, rate)
              and abs(r["t"] - t) < 1e-9]
        assert sorted(r["seed"] for r in at) == seeds
        shares = [(r["loss_after"] - r["loss"]) / (t * rate * r["slope"]) for r in at]
        percent = round(100 * sum(shares) / len(shares), 1) + 0.0  # the readout never says "-0.0 %"
        out[f"{short}-delivered"] = f"{percent:.1f}\u00a0%"
    return out


def _assert_mean_by_hand(readouts: dict, controls: dict):
    assert readouts == _mean_by_hand(controls), controls


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
    state = explorer_state(driver, root)
    assert set(state["paths"]) == {"pre", "post", "pre-tangent", "post-tangent"}
    assert all(d.count("L") >= 20 for d in state["paths"].values())  # 21 points each
    assert state["readouts"] == _expected(state["controls"])
    assert state["controls"]["seed"] == "mean"  # by default the averages the chapter's text quotes
    _assert_mean_by_hand(state["readouts"], state["controls"])
    for name, value in (("rate", format(rates[0], "g")), ("depth", "48"), ("rate", format(rates[-1], "g")),
                        ("seed", "8"), ("depth", "1"), ("seed", "mean"), ("depth", "6")):
        Select(root.find_element(By.CSS_SELECTOR, f'select[name="{name}"]')).select_by_value(value)
        new = explorer_state(driver, root)
        assert new["controls"][name] == value
        assert new["paths"]["post"] != state["paths"]["post"], f"choosing {name}={value} did not redraw Post-LN"
        assert new["readouts"] == _expected(new["controls"]), f"after {name}={value}"
        assert new["readouts"] != state["readouts"], f"choosing {name}={value} left the readouts as they were"
        if new["controls"]["seed"] == "mean":
            _assert_mean_by_hand(new["readouts"], new["controls"])
        state = new
    slider = root.find_element(By.CSS_SELECTOR, 'input[type=range][name="t"]')
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", slider)
    slider.send_keys(Keys.LEFT)  # as a reader does: one position back along the step
    new = explorer_state(driver, root)
    assert new["controls"]["t"] == "0.95" and new["marker"] != state["marker"], "the position slider did not move"
    assert new["readouts"] == _expected(new["controls"]) and new["readouts"] != state["readouts"]
    _assert_mean_by_hand(new["readouts"], new["controls"])
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


#: Per explorer: the smallest rendered font size of its chart's text (computed font-size times the
#: canvas's scale on screen), the smallest bounding-box height (across the line for the rotated y
#: label), the texts that stick out of the canvas and the pairs of texts whose boxes overlap.
TEXT_JS = """
const out = {};
document.querySelectorAll('div.lnw-explorer').forEach(root => {
  const svg = root.querySelector('svg.lnw-plot'), sb = svg.getBoundingClientRect(), scale = svg.getScreenCTM().a;
  const boxes = [...svg.querySelectorAll('text')].filter(t => t.textContent.trim()).map(t => ({
    text: t.textContent, r: t.getBoundingClientRect(), font: parseFloat(getComputedStyle(t).fontSize) * scale,
    rotated: (t.getAttribute('transform') || '').includes('rotate')}));
  const overlaps = [];
  boxes.forEach((a, i) => boxes.slice(i + 1).forEach(b => {
    if (Math.min(a.r.right, b.r.right) - Math.max(a.r.left, b.r.left) > 1
        && Math.min(a.r.bottom, b.r.bottom) - Math.max(a.r.top, b.r.top) > 1) { overlaps.push([a.text, b.text]); }
  }));
  out[root.dataset.explorer] = {
    texts: boxes.length, box: svg.getAttribute('viewBox'),
    font: Math.min(...boxes.map(b => b.font)),
    height: Math.min(...boxes.map(b => b.rotated ? b.r.width : b.r.height)),
    outside: boxes.filter(b => b.r.left < sb.left - 0.5 || b.r.right > sb.right + 0.5
                          || b.r.top < sb.top - 0.5 || b.r.bottom > sb.bottom + 0.5).map(b => b.text),
    overlaps: overlaps};
});
return out;"""


@pytest.mark.parametrize("width, height, smallest, canvas", [(1280, 900, 12, "0 0 520 280"), (390, 844, 11, "0 0 340 400")])
def test_chart_text_is_legible_inside_its_canvas_and_unoverlapped(page, width, height, smallest, canvas):
    """Every explorer's axis labels, ticks and legend: at least 12 px at 1280 px, 11 px on a phone's canvas;
    the page of every explorer does not scroll sideways."""
    from test_browser import PHONE_OVERFLOW_JS

    driver, url = page
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 480})
    try:
        driver.get(url)
        found = driver.execute_script(TEXT_JS)
        scroll = driver.execute_script(PHONE_OVERFLOW_JS)
    finally:
        driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    assert scroll["scroll"] <= scroll["inner"] + 1, f"at {width} px the page scrolls sideways: {scroll}"
    assert set(found) == {"first-step", "layer-norm", "depth", "residual", "random-stack", "training", "deepnorm", "family",
                          "schedules"}
    from lnworked.explore import spec_grid
    from lnworked.stress.explorer import sweep_explorer_spec
    from lnworked.stress.schedule_explorer import schedule_explorer_spec

    # chapter 5's explorer (two panels) and chapter 6's (three) on taller canvases
    tall = {kind: grid["view_box"] if width >= 480 else grid["phone_view_box"]
            for kind, grid in (("training", spec_grid(sweep_explorer_spec())),
                               ("schedules", spec_grid(schedule_explorer_spec())))}
    for kind, m in found.items():
        assert m["box"] == tall.get(kind, canvas), (kind, m["box"])
        assert m["texts"] >= 6, (kind, m)
        assert m["font"] >= smallest and m["height"] >= smallest, f"{kind} at {width} px: text {m['font']:.1f} px"
        assert not m["outside"], f"{kind} at {width} px: {m['outside']} run past the canvas"
        assert not m["overlaps"], f"{kind} at {width} px: overlapping labels {m['overlaps']}"
