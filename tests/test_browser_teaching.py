"""The teaching apparatus in a real browser (headless Chromium, as in tests/test_browser.py).

At desktop width (1280 px) no visible code block is cut off: each one is as wide as its
content. A forecast's answer and an exercise's solution are hidden until the reader opens
them, and opening them shows them.
"""

from __future__ import annotations

import pytest
from selenium.webdriver.common.by import By

from test_browser import HTML, PAGES, browser, driver, load, server  # noqa: F401  (fixtures)

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
    return [name for name in PAGES if name.startswith("chapters/0") and name[9] in "123456"]


def _hidden_then_shown(browser, container, body_selector: str, toggle_selector: str) -> None:
    body = container.find_element(By.CSS_SELECTOR, body_selector)
    assert not body.is_displayed(), "the answer is visible before the reader opens it"
    toggle = container.find_element(By.CSS_SELECTOR, toggle_selector)
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'});", toggle)
    toggle.click()
    browser.implicitly_wait(0)
    assert body.is_displayed(), "opening the answer does not show it"


@pytest.mark.parametrize("name", _teaching_pages())
def test_forecast_answers_and_solutions_open_on_click(browser, server, name):
    load(browser, server, name)
    prompts = browser.find_elements(By.CSS_SELECTOR, "div.forecast, div.self-check")
    solutions = browser.find_elements(By.CSS_SELECTOR, "details.solution, div.solution.dropdown")
    assert solutions, f"{name}: no folded solution"
    for prompt in prompts:
        answer = prompt.find_element(By.CSS_SELECTOR, "div.dropdown, details")
        if answer.tag_name == "details":
            _hidden_then_shown(browser, answer, "details > :not(summary)", "summary")
        else:
            _hidden_then_shown(browser, answer, ".admonition-title ~ *", ".admonition-title")
    first = solutions[0]
    if first.tag_name == "details":
        _hidden_then_shown(browser, first, "details > :not(summary)", "summary")
    else:
        _hidden_then_shown(browser, first, ".solution-title ~ *, .admonition-title ~ *", ".admonition-title")
