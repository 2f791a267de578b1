"""The teaching apparatus in a real browser (headless Chromium, as in tests/test_browser.py).

At desktop width (1280 px) no visible code block is cut off: each one is as wide as its
content. A forecast's answer and an exercise's solution are hidden until the reader opens
them, and opening them shows them.
"""

from __future__ import annotations

import re
import time

import pytest
from selenium.webdriver.common.by import By

from test_browser import HTML, PAGES, browser, driver, load, load_url, server  # noqa: F401  (fixtures)

pytestmark = pytest.mark.slow

CODE_OVERFLOW_JS = """
const blocks = Array.from(document.querySelectorAll('div.cell_input pre, div.highlight pre'));
return blocks.filter(b => b.offsetParent !== null && b.scrollWidth > b.clientWidth + 1)
             .map(b => b.innerText.split('\\n').sort((a, c) => c.length - a.length)[0].slice(0, 60));
"""


@pytest.mark.parametrize("name", PAGES)
def test_no_code_block_is_cut_off_at_desktop_width(browser, server, name):
    browser.set_window_size(1280, 900)
    load(browser, server, name)
    cut = browser.execute_script(CODE_OVERFLOW_JS)
    assert not cut, f"{name}: code blocks wider than their box at 1280 px: {cut}"


def _teaching_pages() -> list[str]:
    pages = [name for name in PAGES if re.match(r"chapters/0[1-6]_", name)]
    assert len(pages) == 14, pages  # 01-06, chapter 3's scalar-toy section, and chapter 6's five sections after
    # its first page: warmup over training, what its steps leave behind, the rate Adam tolerates, its test, the answer
    return pages


def _hidden_then_shown(browser, container) -> None:
    """A sphinx-togglebutton dropdown: its body is hidden, and its button shows it."""
    body = container.find_element(By.CSS_SELECTOR, ".admonition-title ~ *")
    assert not body.is_displayed(), "the answer is visible before the reader opens it"
    button = container.find_element(By.CSS_SELECTOR, "button.toggle-button")
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'});", button)
    button.click()
    deadline = time.time() + 3
    while not body.is_displayed() and time.time() < deadline:
        time.sleep(0.05)
    assert body.is_displayed(), "opening the answer does not show it"


@pytest.mark.parametrize("name", _teaching_pages())
def test_forecast_answers_and_solutions_open_on_click(browser, server, name):
    load(browser, server, name)
    prompts = browser.find_elements(By.CSS_SELECTOR, "div.forecast, div.self-check")
    solutions = browser.find_elements(By.CSS_SELECTOR, "div.solution.dropdown")
    assert solutions, f"{name}: no folded solution"
    for prompt in prompts:
        _hidden_then_shown(browser, prompt.find_element(By.CSS_SELECTOR, "div.dropdown"))
    _hidden_then_shown(browser, solutions[0])


LOSS_PANEL_JS = """
const panel = arguments[0].querySelector('svg.lnw-panel[data-panel="loss"]');
const frame = panel.querySelectorAll('g.lnw-axes line')[1];
return {d: panel.querySelector('path.lnw-line[data-series="loss"]').getAttribute('d'),
        top: +frame.getAttribute('y1'), bottom: +frame.getAttribute('y2'),
        shown: panel.getBoundingClientRect().height};"""


def test_chapter_5_explorer_redraws_the_committed_runs(browser, server):
    """Chapter 5's kernel-free explorer: choosing a run (as a reader does, by clicking an
    option) redraws the curves and shows that committed run's numbers; the loss has its own
    panel, fitted to the chosen run, so the failing run's dip and climb back (exercise 5.4)
    fill a visible part of it."""
    from selenium.webdriver.support.ui import Select

    from lnworked.explore import format_readout
    from lnworked.stress.committed import committed_sweep, committed_sweep_steps
    from test_browser import _controls, _state
    from test_stress_explorer import path_heights

    rows, _ = committed_sweep()
    logs, _ = committed_sweep_steps()
    find = {(r["variant"], r["layers"], r["learning_rate"], r["seed"]): r for r in rows}

    def expected(c):
        row = find[(c["variant"], int(c["layers"]), float(c["rate"]), int(c["seed"]))]
        return {"final-loss": format_readout(row["final_loss"]),
                "max-gradient-norm": format_readout(row["max_gradient_norm"]),
                "diverged-at": "no" if row["diverged_at"] is None else f"step {row['diverged_at']}"}

    load(browser, server, "chapters/05_stress_test")
    (root,) = browser.find_elements(By.CSS_SELECTOR, 'div.lnw-explorer[data-explorer="training"]')
    assert root.get_attribute("data-lnw-ready") == "1"
    state = _state(browser, root)
    assert state["readouts"] == expected(_controls(browser, root))
    for name, value in (("variant", "Pre-LN"), ("layers", "6"), ("rate", "0.008"), ("seed", "8"),
                        ("variant", "Post-LN + warmup"), ("variant", "Post-LN")):
        Select(root.find_element(By.CSS_SELECTOR, f'select[name="{name}"]')).select_by_value(value)
        new = _state(browser, root)
        assert new["svg"] != state["svg"], f"choosing {name}={value} did not redraw the plot"
        c = _controls(browser, root)
        assert new["readouts"] == expected(c), f"after {name}={value}"
        state = new
        panel = browser.execute_script(LOSS_PANEL_JS, root)
        assert panel["shown"] > 150, "the loss panel is drawn too small to read"   # CSS px at 1280 px wide
        loss = logs[(c["variant"], int(c["layers"]), float(c["rate"]), int(c["seed"]))][0]
        heights = path_heights(panel["d"], panel["top"], panel["bottom"])
        assert len(heights) == len(loss) and max(heights) - min(heights) > 0.5, f"squashed loss after {name}={value}"
    # Post-LN, 6 layers, rate 0.008, seed 8: the failing run; its dip and climb back are each a visible share
    lowest = int(loss.argmin())
    assert heights[0] - heights[lowest] > 0.25 and heights[-1] - heights[lowest] > 0.25
    errors = [e["message"] for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    assert not errors, errors


def test_chapter_3_random_stack_explorer_redraws_without_a_kernel(browser, server):
    """Chapter 3's random-stack explorer: moving the seed slider (keyboard) and choosing the
    placement, depth, branch scale and view (clicks) redraws the chart with the library's values."""
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import Select

    from lnworked.explore import random_stack_readouts
    from test_browser import _controls, _state

    def expected(c):
        return random_stack_readouts(c["placement"], int(c["depth"]), int(c["seed"]), float(c["branch_scale"]))

    load(browser, server, "chapters/03_gradients_through_depth")
    (root,) = browser.find_elements(By.CSS_SELECTOR, 'div.lnw-explorer[data-explorer="random-stack"]')
    assert root.get_attribute("data-lnw-ready") == "1"
    state = _state(browser, root)
    assert state["svg"].strip() and state["readouts"] == expected(_controls(browser, root))
    # it opens on Post-LN, the placement chapter 3's forecast asks about first
    assert _controls(browser, root)["placement"] == "post"
    slider = root.find_element(By.CSS_SELECTOR, 'input[type=range][name="seed"]')
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", slider)
    slider.send_keys(Keys.RIGHT)
    new = _state(browser, root)
    assert _controls(browser, root)["seed"] == "2" and new["svg"] != state["svg"], "the seed slider did not redraw"
    assert new["readouts"] == expected(_controls(browser, root))
    state = new
    for name, value in (("placement", "pre"), ("depth", "96"), ("branch_scale", "3"), ("view", "gain"),
                        ("placement", "post")):
        Select(root.find_element(By.CSS_SELECTOR, f'select[name="{name}"]')).select_by_value(value)
        new = _state(browser, root)
        assert new["svg"] != state["svg"], f"choosing {name}={value} did not redraw the plot"
        assert new["readouts"] == expected(_controls(browser, root)), f"after {name}={value}"
        state = new
    errors = [e["message"] for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    assert not errors, errors


ABOVE_JS = """
const root = arguments[0];
const points = [...root.querySelectorAll('circle.lnw-point')];
const above = points.filter(c => c.classList.contains('lnw-above'));
return {above: above.map(c => ({cy: parseFloat(c.getAttribute('cy')), fill: c.getAttribute('fill'),
                                 series: c.dataset.series})),
        highest: Math.min(...points.filter(c => !c.classList.contains('lnw-above'))
                                   .map(c => parseFloat(c.getAttribute('cy'))))};
"""


def test_chapter_6_schedule_explorer_draws_the_reading_above_its_top_hollow_on_the_edge(browser, server):
    """6.6's explorer ends its product axis at PRODUCT_TOP: the one stored reading above it (held small
    for 120 steps, seed 9) is drawn hollow on the panel's top edge, no dot lies above it, and the
    default pair (no reading above the top) has none."""
    from selenium.webdriver.support.ui import Select

    load(browser, server, "chapters/05_threshold_runs")
    (root,) = browser.find_elements(By.CSS_SELECTOR, 'div.lnw-explorer[data-explorer="schedules"]')
    assert root.get_attribute("data-lnw-ready") == "1"
    assert browser.execute_script(ABOVE_JS, root)["above"] == []
    for name, value in (("schedule", "held 120"), ("seed", "9")):
        Select(root.find_element(By.CSS_SELECTOR, f'select[name="{name}"]')).select_by_value(value)
    found = browser.execute_script(ABOVE_JS, root)
    assert [(a["fill"], a["series"]) for a in found["above"]] == [("white", "a")]
    assert found["highest"] >= found["above"][0]["cy"] - 0.5, found  # nothing drawn above the top edge
    errors = [e["message"] for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    assert not errors, errors


NOTE_JS = """
return [...arguments[0].querySelectorAll('svg.lnw-plot text.lnw-note')].map(t => t.textContent);
"""


def test_chapter_6_schedule_explorer_says_in_the_panel_which_run_has_no_measured_product(browser, server):
    """Read 152: for a run whose sharpness was not measured the middle panel was simply empty. The panel now
    says which run: none for the default pair (both measured), the solid run for a lower constant rate, both
    when the dashed run is one too; the linear warmup to step 60, measured since, has readings."""
    from selenium.webdriver.support.ui import Select

    load(browser, server, "chapters/05_threshold_runs")
    (root,) = browser.find_elements(By.CSS_SELECTOR, 'div.lnw-explorer[data-explorer="schedules"]')
    assert root.get_attribute("data-lnw-ready") == "1"
    assert browser.execute_script(NOTE_JS, root) == []
    choose = lambda name, value: Select(root.find_element(By.CSS_SELECTOR, f'select[name="{name}"]')).select_by_value(value)
    choose("schedule", "reduced 4")
    assert browser.execute_script(NOTE_JS, root) == ["not measured for the solid run"]
    choose("other", "reduced 8")
    assert browser.execute_script(NOTE_JS, root) == ["not measured for either run"]
    choose("schedule", "linear 60")
    assert browser.execute_script(NOTE_JS, root) == ["not measured for the dashed run"]
    errors = [e["message"] for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    assert not errors, errors


REFS_JS = """
return [...arguments[0].querySelectorAll('svg.lnw-plot svg.lnw-panel')].map(p => ({
  key: p.getAttribute('data-panel'), refs: [...p.querySelectorAll('line.lnw-ref')].map(l => parseFloat(l.getAttribute('y1')))}));
"""


@pytest.mark.parametrize("name", ["chapters/05_warmup_over_training", "chapters/05_threshold_runs"])
def test_chapter_6_schedule_explorer_marks_the_learned_loss_under_the_uniform_guess(browser, server, name):
    """Reads 169, 170: the explorer's loss panel had a line at a uniform guess but none at the mark below
    which a run has learned, which every static figure of the runs draws. It has both, the learned one
    lower on the panel (larger y)."""
    load(browser, server, name)
    (root,) = browser.find_elements(By.CSS_SELECTOR, 'div.lnw-explorer[data-explorer="schedules"]')
    assert root.get_attribute("data-lnw-ready") == "1"
    panels = {p["key"]: p["refs"] for p in browser.execute_script(REFS_JS, root)}
    assert len(panels["loss"]) == 2, panels
    uniform, learned = panels["loss"]
    assert learned > uniform, panels


def _shown_at(browser, target_id: str) -> bool:
    """Whether the element is displayed and at least partly inside the window."""
    return browser.execute_script("""
const el = document.getElementById(arguments[0]);
if (!el || el.offsetParent === null) return false;
const box = el.getBoundingClientRect();
return box.bottom > 0 && box.top < window.innerHeight;
""", target_id)


def test_a_link_into_a_closed_fold_opens_the_fold(browser, server):
    """Reads 182-183: a link to a figure inside a closed fold led to a blank spot. Opening a page at such an
    anchor, and following such a link on the page, opens every fold around the target and shows it; a
    forecast's answer stays closed when nothing links into it."""
    name = "chapters/05_warmup_over_training"
    # a figure in the first forecast's answer (the five schedules, one panel each), linked from Ex 6.6; the
    # figures of the other folds carry no number since 25e92f1, so nothing links to them by name
    target = "ch5w-fig-schedules-side"
    load(browser, server, name)
    assert not _shown_at(browser, target), "the folded figure is visible before any link is followed"
    links = [a for a in browser.find_elements(By.CSS_SELECTOR, f"a[href$='#{target}']") if a.is_displayed()]
    assert links, "no visible link to the folded figure"
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'});", links[0])
    links[0].click()
    deadline = time.time() + 3
    while not _shown_at(browser, target) and time.time() < deadline:
        time.sleep(0.05)
    assert _shown_at(browser, target), "following the link did not open the fold"
    # the fold's own button now says it is open, as after a reader's click
    fold = browser.find_element(By.ID, target).find_element(By.XPATH, "ancestor::div[contains(@class, 'toggle')][1]")
    assert fold.find_element(By.CSS_SELECTOR, "button.toggle-button").get_attribute("aria-expanded") == "true"
    # opened at the anchor from another page's link: the same
    load_url(browser, server, server.url(f"{name}.html") + f"#{target}")
    deadline = time.time() + 3
    while not _shown_at(browser, target) and time.time() < deadline:
        time.sleep(0.05)
    assert _shown_at(browser, target)
    answer = browser.find_element(By.CSS_SELECTOR, "#forecast-ch5w-holds .dropdown")
    assert "toggle-hidden" in answer.get_attribute("class"), "an answer nothing links to was opened"
