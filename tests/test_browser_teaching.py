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
    pages = [name for name in PAGES if re.match(r"chapters/0[1-6]_", name)]
    assert len(pages) == 6, pages
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
