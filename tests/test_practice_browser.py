"""An offline handout in a real browser (Debian's Chromium through chromedriver, headless).

The handout is served on 127.0.0.1 by the logging server of tests/browser_support.py, with
every other host unresolvable. It must make no request but for the page itself, show its
maths typeset as MathML (laid out by the browser, no raw TeX), and fit a phone's width.
Without Chromium the test skips naming the Debian package; under ``CI=true`` it fails.
"""

from __future__ import annotations

import os
from urllib.parse import urlparse

import pytest

from browser_support import BookServer, missing_browser, network_events, start_chromium
from lnworked.practice.handouts import handout_html
from lnworked.practice.variants import make_assignment

PHONE = (390, 844)


@pytest.fixture(scope="module")
def driver():
    missing = missing_browser()
    if missing:
        if os.environ.get("CI") == "true":
            pytest.fail(missing)
        pytest.skip(missing)
    browser = start_chromium(width=PHONE[0], height=PHONE[1])
    yield browser
    browser.quit()


def test_handout_offline_typesets_maths_and_fits_a_phone(driver, tmp_path):
    student = "Zoë O'Brien"
    problems = make_assignment(2026, [student])[student]
    (tmp_path / "handout.html").write_text(handout_html(student, 2026, problems), encoding="utf-8")
    with BookServer(tmp_path) as server:
        mark = server.mark()
        network_events(driver)
        driver.get(server.url("handout.html"))
        requests = server.since(mark)
        events = network_events(driver)
        state = driver.execute_script("""
            const maths = [...document.querySelectorAll('math')];
            const boxes = maths.map(m => m.getBoundingClientRect());
            const fractions = [...document.querySelectorAll('mfrac')].map(f => f.getBoundingClientRect().height);
            return {
              count: maths.length,
              displays: [...new Set(maths.map(m => getComputedStyle(m).display))],
              laidOut: boxes.filter(b => b.width > 0 && b.height > 0).length,
              tallFractions: fractions.filter(h => h > 20).length,
              text: document.body.innerText,
              scroll: document.documentElement.scrollWidth,
              width: document.documentElement.clientWidth,
              scripts: document.scripts.length,
            };""")
    assert [r.path for r in requests] == ["/handout.html"] and all(r.status == 200 for r in requests)
    hosts = {urlparse(e["params"]["request"]["url"]).hostname for e in events if e["method"] == "Network.requestWillBeSent"}
    assert hosts <= {"127.0.0.1"}, hosts
    assert state["scripts"] == 0 and state["count"] > 10 and state["laidOut"] == state["count"]
    assert all(d.endswith("math") for d in state["displays"]), state["displays"]  # native MathML layout
    assert state["tallFractions"] >= 1  # a built-up fraction, not TeX text
    assert "\\frac" not in state["text"] and "\\(" not in state["text"] and "$" not in state["text"]
    assert student in state["text"]
    assert state["scroll"] <= state["width"], "the handout scrolls sideways on a phone"
