"""WCAG 2.1 A/AA, measured by axe-core 4 in Debian's Chromium; the explorers from the keyboard.

Every page of ``_toc.yml`` in the built book (``book/_build/html`` or ``$LNWORKED_BOOK_HTML``),
in light and in dark mode (the theme's ``default_mode: auto`` follows the reader's
``prefers-color-scheme``), and one offline HTML practice handout are loaded in headless
Chromium (tests/browser_support.py); axe-core (npm, installed by ``.ci/run`` into
``.tools/axe-core``) is injected and run with the WCAG 2.0/2.1 A and AA rules. No violation
may remain; a failure lists each rule with its impact and first targets.

The explorers from the keyboard alone: on every built page with a kernel-free explorer,
Tab from the top of the page reaches each of its controls, ArrowRight (or ArrowLeft at the
end of a range) changes the control and redraws the plot, the readouts sit in a polite live
region, and each control has an accessible name.

Without Chromium or axe-core the tests skip, naming what is missing; under ``CI=true`` they fail.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from book_toc import toc_files
from browser_support import BookServer, built_book_server, chromium_session, missing_browser

ROOT = Path(__file__).resolve().parent.parent
HTML = Path(os.environ.get("LNWORKED_BOOK_HTML", ROOT / "book" / "_build" / "html")).resolve()
AXE = Path(os.environ.get("LNWORKED_AXE", ROOT / ".tools" / "axe-core" / "node_modules" / "axe-core" / "axe.min.js"))
AXE_HINT = "npm install --prefix .tools/axe-core axe-core@4"
WCAG_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
PAGES = toc_files()
MODES = ("light", "dark")

# Rules switched off, each with the upstream issue and why it cannot be fixed here: none.
DISABLED_RULES: dict[str, str] = {}

pytestmark = pytest.mark.slow


def _require_tools() -> None:
    problems = [p for p in (missing_browser(),
                            None if AXE.exists() else f"axe-core not installed at {AXE}: {AXE_HINT}") if p]
    if problems:
        if os.environ.get("CI") == "true":
            pytest.fail("CI=true and a tool is missing. " + " ".join(problems))
        pytest.skip(" ".join(problems))


@pytest.fixture(scope="module")
def axe_source() -> str:
    _require_tools()
    return AXE.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def driver(axe_source, tmp_path_factory):
    with chromium_session(tmp_path_factory) as browser:
        yield browser


@pytest.fixture(scope="module")
def server(axe_source):
    with built_book_server(HTML) as book_server:
        yield book_server


# --- axe ---------------------------------------------------------------------------------------

SETTLE_JS = """
const done = arguments[arguments.length - 1];
const deadline = Date.now() + 20000;
function settled() {
  const mathPending = document.querySelector('.math') && (!window.MathJax || !window.MathJax.startup
                       || !document.querySelector('mjx-container'));
  return document.readyState === 'complete' && Array.from(document.images).every(i => i.complete) && !mathPending;
}
(function poll() {
  if (settled() || Date.now() > deadline) {
    const p = (window.MathJax && MathJax.startup && MathJax.startup.promise) || Promise.resolve();
    p.then(() => (document.fonts ? document.fonts.ready : null)).then(() => done(true), () => done(false));
  } else { setTimeout(poll, 50); }
})();
"""

AXE_RUN_JS = """
const done = arguments[arguments.length - 1];
const options = {runOnly: {type: 'tag', values: arguments[0]}, rules: arguments[1], resultTypes: ['violations']};
axe.run(document, options).then(
  r => done(r.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
        nodes: v.nodes.map(n => ({target: n.target.join(' '), summary: n.failureSummary}))}))),
  e => done([{id: 'axe-error', impact: 'error', help: String(e), nodes: []}]));
"""


def set_mode(driver, mode: str) -> None:
    """The reader's system colour scheme; the theme (``default_mode: auto``) follows it."""
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia",
                           {"features": [{"name": "prefers-color-scheme", "value": mode}]})


def axe_violations(driver, axe_source: str, url: str) -> list[dict]:
    driver.get(url)
    driver.execute_async_script(SETTLE_JS)
    driver.execute_script(axe_source)
    driver.set_script_timeout(120)
    try:
        return driver.execute_async_script(AXE_RUN_JS, WCAG_TAGS,
                                           {rule: {"enabled": False} for rule in DISABLED_RULES})
    finally:
        driver.set_script_timeout(30)


def describe(violations: list[dict], targets: int = 4) -> str:
    lines = []
    for v in violations:
        lines.append(f"- {v['id']} ({v['impact']}, {len(v['nodes'])} elements): {v['help']}")
        for node in v["nodes"][:targets]:
            summary = " ".join((node["summary"] or "").split())[:220]
            lines.append(f"    {node['target']}  {summary}")
    return "\n".join(lines)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", PAGES)
def test_book_page_has_no_wcag_violation(driver, server, axe_source, name, mode):
    set_mode(driver, mode)
    try:
        violations = axe_violations(driver, axe_source, server.url(f"{name}.html"))
        theme = driver.execute_script("return document.documentElement.dataset.theme")
    finally:
        driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})
    assert theme == mode, f"{name}: the theme did not follow prefers-color-scheme={mode} (data-theme={theme})"
    assert not violations, f"{name} ({mode} mode): axe-core WCAG 2.1 A/AA violations\n{describe(violations)}"


def test_practice_handout_has_no_wcag_violation(driver, axe_source, tmp_path):
    from lnworked.practice.handouts import handout_html
    from lnworked.practice.variants import make_assignment

    student = "Zoë O'Brien"
    problems = make_assignment(2026, [student])[student]
    (tmp_path / "handout.html").write_text(handout_html(student, 2026, problems), encoding="utf-8")
    with BookServer(tmp_path) as handout_server:
        violations = axe_violations(driver, axe_source, handout_server.url("handout.html"))
    assert not violations, f"the HTML handout: axe-core WCAG 2.1 A/AA violations\n{describe(violations)}"


# --- the explorers from the keyboard ---------------------------------------------------------

EXPLORER_PAGES = [name for name in PAGES if (HTML / f"{name}.html").exists()
                  and 'class="lnw-explorer"' in (HTML / f"{name}.html").read_text(encoding="utf-8")]

# What Tab has focused: an explorer control (its explorer's id and its name) or anything else.
FOCUS_JS = """
const el = document.activeElement;
const root = el && el.closest && el.closest('div.lnw-explorer');
if (!root || !el.matches('input, select')) { return null; }
return {root: root.id, name: el.getAttribute('name'), value: el.value};
"""

# An explorer's visible state: readout text, the plot's markup, and a token that changes
# whenever the script redraws the plot (it clears the SVG and draws it afresh).
STATE_JS = """
const root = document.getElementById(arguments[0]);
const svg = root.querySelector('svg.lnw-plot');
if (svg.firstChild && !svg.firstChild.lnwToken) { svg.firstChild.lnwToken = Math.random(); }
return {readouts: Array.from(root.querySelectorAll('.lnw-readout, .lnw-param')).map(e => e.textContent).join('|'),
        svg: svg.innerHTML, token: svg.firstChild ? svg.firstChild.lnwToken : null,
        value: document.activeElement.value};
"""

CONTROLS_JS = """
return Array.from(document.querySelectorAll('div.lnw-explorer')).map(root => ({
  root: root.id,
  names: Array.from(root.querySelectorAll('input[name], select[name]')).map(e => e.getAttribute('name')),
  live: Array.from(root.querySelectorAll('.lnw-readout')).map(e => {
    const region = e.closest('[aria-live]');
    return region ? region.getAttribute('aria-live') : null;
  }),
}));
"""


def test_explorers_work_from_the_keyboard(driver, server):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    assert EXPLORER_PAGES, f"no page of {HTML} has a kernel-free explorer"
    reached = 0
    for name in EXPLORER_PAGES:
        driver.get(server.url(f"{name}.html"))
        driver.execute_async_script(SETTLE_JS)
        explorers = driver.execute_script(CONTROLS_JS)
        assert explorers, f"{name}: the explorer is in the HTML but not in the page"
        problems = []
        for explorer in explorers:
            where = f"{name} #{explorer['root']}"
            if not explorer["live"] or any(live != "polite" for live in explorer["live"]):
                problems.append(f"{where}: readouts not in an aria-live=polite region ({explorer['live']})")
            root = driver.find_element(By.ID, explorer["root"])
            for control in root.find_elements(By.CSS_SELECTOR, "input[name], select[name]"):
                if not (control.accessible_name or "").strip():
                    problems.append(f"{where}: control {control.get_attribute('name')} has no accessible name")
        wanted = {(e["root"], n) for e in explorers for n in e["names"]}
        # Tab through the page from its top, as a keyboard reader does.
        driver.execute_script("document.activeElement && document.activeElement.blur(); window.scrollTo(0, 0);")
        seen: set = set()
        announced: set = set()  # explorers whose readouts or plot changed from the keyboard
        for _ in range(3000):
            if seen == wanted:
                break
            ActionChains(driver).send_keys(Keys.TAB).perform()
            focus = driver.execute_script(FOCUS_JS)
            if not focus or (focus["root"], focus["name"]) in seen:
                continue
            key = (focus["root"], focus["name"])
            seen.add(key)
            before = driver.execute_script(STATE_JS, focus["root"])
            ActionChains(driver).send_keys(Keys.ARROW_RIGHT).perform()
            after = driver.execute_script(STATE_JS, focus["root"])
            if after["value"] == before["value"]:  # at the end of its range: the other way
                ActionChains(driver).send_keys(Keys.ARROW_LEFT).perform()
                after = driver.execute_script(STATE_JS, focus["root"])
            where = f"{name} #{key[0]} control {key[1]}"
            if after["value"] == before["value"]:
                problems.append(f"{where}: the arrow keys did not change it (value {before['value']})")
            elif after["token"] == before["token"]:
                problems.append(f"{where}: {before['value']} -> {after['value']} did not redraw the plot")
            if after["readouts"] != before["readouts"] or after["svg"] != before["svg"]:
                announced.add(key[0])
            reached += 1
        missing = sorted(wanted - seen)
        quiet = sorted({e["root"] for e in explorers} - announced)
        if quiet:
            # (a control may leave the values as they are, e.g. choosing which component the
            # slider edits, but every explorer must respond to some key press)
            problems.append(f"{name}: no key press changed the readouts or plot of {quiet}")
        if missing:
            problems.append(f"{name}: Tab never reached {missing}")
        assert not problems, "\n".join(problems)
    assert reached
