"""The published HTML, in a real browser: Debian's Chromium, headless, through chromedriver.

The built book (``book/_build/html``, or ``$LNWORKED_BOOK_HTML``) is served on 127.0.0.1 by
a logging server (tests/browser_support.py); one browser session serves the whole module.

Per page of ``_toc.yml``: it loads, every request answers 200 and goes to 127.0.0.1 only,
the console shows no error, the maths is typeset by MathJax (no raw ``$$`` or ``\\(`` in the
visible text), every image has loaded and has alt text or a caption, a screenshot is written
to ``test-output/browser/``; a phone-width viewport does not scroll sideways; a notebook
page's Colab button names an ``.ipynb`` of this repository and its download button gives a
valid notebook. Across the book: each kernel-free explorer redraws when a control moves and
shows the library's values; search finds "LayerNorm" and its links work; figures keep a light,
opaque background in dark mode.

Without Chromium the tests skip, naming the Debian package; under ``CI=true`` they fail.
"""

from __future__ import annotations

import io
import math
import os
import time
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import urlparse

import nbformat
import numpy as np
import pytest
import yaml
from PIL import Image

from browser_support import built_book_server, chromium_session, network_events, require_browser
from book_toc import toc_files

ROOT = Path(__file__).resolve().parent.parent
BOOK = ROOT / "book"
HTML = Path(os.environ.get("LNWORKED_BOOK_HTML", BOOK / "_build" / "html")).resolve()
OUT = ROOT / "test-output" / "browser"
PHONE = (390, 844)

pytestmark = pytest.mark.slow


PAGES = toc_files()


def is_notebook(name: str) -> bool:
    return (BOOK / f"{name}.ipynb").exists() or (HTML / "_sources" / f"{name}.ipynb").exists()


def slug(name: str) -> str:
    return name.replace("/", "__")


# --- fixtures ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def server():
    require_browser()
    OUT.mkdir(parents=True, exist_ok=True)
    with built_book_server(HTML) as book_server:
        yield book_server


@pytest.fixture(scope="module")
def driver(server, tmp_path_factory):
    with chromium_session(tmp_path_factory) as browser:
        yield browser


@pytest.fixture
def browser(driver):
    """The module's browser, back in the default state after the test (light mode, desktop size)."""
    yield driver
    try:
        driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
        driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})
        driver.execute_script("try { localStorage.clear(); } catch (e) {}")
    except Exception:  # a test that broke the session must not hide its own failure
        pass


# --- loading a page ------------------------------------------------------------------------

SETTLE_JS = """
const done = arguments[arguments.length - 1];
const deadline = Date.now() + 20000;
function settled() {
  const imgs = Array.from(document.images);
  const mathPending = document.querySelector('.math') && (!window.MathJax || !window.MathJax.startup
                       || !document.querySelector('mjx-container'));
  return document.readyState === 'complete' && imgs.every(i => i.complete) && !mathPending;
}
(function poll() {
  if (settled() || Date.now() > deadline) {
    const p = (window.MathJax && MathJax.startup && MathJax.startup.promise) || Promise.resolve();
    p.then(() => (document.fonts ? document.fonts.ready : null))
     .then(() => done(true), () => done(false));
  } else { setTimeout(poll, 50); }
})();
"""


class Load:
    """What one page load did: the server's log, the network events and the console."""

    def __init__(self, driver, server, url: str):
        driver.get_log("browser"), network_events(driver)  # drop what came before
        mark = server.mark()
        driver.get(url)
        driver.execute_async_script(SETTLE_JS)
        time.sleep(0.2)  # late requests (fonts, idle callbacks)
        self.url = url
        self.requests = server.since(mark)
        self.events = network_events(driver)
        self.console = driver.get_log("browser")
        self.origin = server.origin
        self.declares_icon = driver.execute_script("return !!document.querySelector('link[rel~=\"icon\"]')")

    def urls(self) -> list[str]:
        return [e["params"]["request"]["url"] for e in self.events if e["method"] == "Network.requestWillBeSent"]

    def failures(self) -> list[str]:
        """Requests that did not answer 200, but for the browser's own ``/favicon.ico`` probe.

        A page without ``<link rel="icon">`` does not ask for an icon; Chromium tries
        ``/favicon.ico`` at the root of the host by itself. That request (and its console
        line) is the browser's, not the page's, and where the book is published under a
        path (``/lnworked/``) the host's root is not the book's to serve.
        """
        bad = [f"{r.status} {r.method} {r.path}" for r in self.requests
               if r.status != 200 and not self._favicon_probe(r.path)]
        ids = {e["params"]["requestId"]: e["params"]["request"]["url"]
               for e in self.events if e["method"] == "Network.requestWillBeSent"}
        for e in self.events:
            if e["method"] == "Network.responseReceived":
                response = e["params"]["response"]
                if (response["url"].startswith("http") and response["status"] != 200
                        and not self._favicon_probe(urlparse(response["url"]).path)):
                    bad.append(f"{response['status']} {response['url']}")
            elif e["method"] == "Network.loadingFailed" and not e["params"].get("canceled"):
                bad.append(f"failed ({e['params'].get('errorText')}) {ids.get(e['params']['requestId'], '?')}")
        return bad

    def _favicon_probe(self, path: str) -> bool:
        return path == "/favicon.ico" and not self.declares_icon

    def foreign(self) -> list[str]:
        return [u for u in self.urls()
                if not (u.startswith(self.origin + "/") or u.split(":", 1)[0] in ("data", "blob", "about"))]

    def errors(self) -> list[str]:
        return [f"{e['level']}: {e['message']}" for e in self.console if e["level"] == "SEVERE"
                and not (self._favicon_probe("/favicon.ico") and e["message"].startswith(f"{self.origin}/favicon.ico "))]


def load(driver, server, name: str) -> Load:
    page = load_url(driver, server, server.url(f"{name}.html"))
    assert driver.execute_script("return document.body.innerText.trim().length") > 0, f"{name} is blank"
    return page


def load_url(driver, server, url: str) -> Load:
    return Load(driver, server, url)


# --- per page --------------------------------------------------------------------------------

VISIBLE_TEXT_JS = """
const skip = 'pre, code, script, style, textarea, mjx-container, mjx-assistive-mml, .highlight';
const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
const parts = [];
for (let n = walker.nextNode(); n; n = walker.nextNode()) {
  const el = n.parentElement;
  if (!el || el.closest(skip)) continue;
  if (el.checkVisibility && !el.checkVisibility({checkOpacity: false, checkVisibilityCSS: true})) continue;
  parts.push(n.textContent);
}
return parts.join(' ');
"""

IMAGES_JS = """
const main = document.querySelector('main') || document.body;
return Array.from(main.querySelectorAll('img')).map(img => {
  const fig = img.closest('figure');
  const cap = fig && fig.querySelector('figcaption');
  return {src: img.getAttribute('src'), complete: img.complete, width: img.naturalWidth,
          alt: (img.getAttribute('alt') || '').trim(),
          caption: cap ? cap.innerText.trim() : ''};
});
"""


def full_page_screenshot(driver, path: Path) -> None:
    """A PNG of the whole page (beyond the viewport), through the DevTools protocol."""
    import base64

    metrics = driver.execute_cdp_cmd("Page.getLayoutMetrics", {})
    size = metrics.get("cssContentSize") or metrics["contentSize"]
    width = driver.execute_script("return window.innerWidth")
    height = min(int(size["height"]), 16000)
    shot = driver.execute_cdp_cmd("Page.captureScreenshot", {
        "format": "png", "captureBeyondViewport": True,
        "clip": {"x": 0, "y": 0, "width": width, "height": height, "scale": 1},
    })
    path.write_bytes(base64.b64decode(shot["data"]))


@pytest.mark.parametrize("name", PAGES)
def test_page_loads_cleanly(browser, server, name):
    """Loads; every request answers 200 from 127.0.0.1; no console error; a screenshot."""
    page = load(browser, server, name)
    try:
        full_page_screenshot(browser, OUT / f"{slug(name)}.png")
    finally:
        assert page.requests, f"{name}: the server saw no request"
        assert not page.failures(), f"{name}: requests that did not answer 200: {page.failures()}"
        assert not page.foreign(), f"{name}: requests to another host: {page.foreign()}"
        assert not page.errors(), f"{name}: console errors: {page.errors()}"
    assert (OUT / f"{slug(name)}.png").stat().st_size > 1000


@pytest.mark.parametrize("name", PAGES)
def test_maths_is_typeset(browser, server, name):
    source = (HTML / f"{name}.html").read_text(encoding="utf-8")
    load(browser, server, name)
    if 'class="math' in source:
        rendered = browser.execute_script("return document.querySelectorAll('mjx-container').length")
        assert rendered > 0, f"{name} has maths but MathJax typeset nothing"
        errors = browser.execute_script(
            "return Array.from(document.querySelectorAll('mjx-merror')).map(e => e.getAttribute('data-mjx-error') || e.textContent)")
        assert not errors, f"{name}: MathJax errors: {errors}"
    text = browser.execute_script(VISIBLE_TEXT_JS)
    for raw in ("$$", "\\(", "\\[", "$\\"):
        at = text.find(raw)
        assert at < 0, f"{name}: raw maths {raw!r} in the visible text: ...{text[max(0, at - 60):at + 60]}..."


@pytest.mark.parametrize("name", PAGES)
def test_images_load_and_are_described(browser, server, name):
    load(browser, server, name)
    images = browser.execute_script(IMAGES_JS)
    broken = [i["src"] for i in images if not (i["complete"] and i["width"] > 0)]
    assert not broken, f"{name}: images that did not load: {broken}"
    undescribed = [i["src"] for i in images if not (i["alt"] or i["caption"])]
    assert not undescribed, f"{name}: images without alt text or caption: {undescribed}"


PHONE_OVERFLOW_JS = """
const limit = window.innerWidth + 1;
function scrollsItself(el) {
  for (let a = el.parentElement; a && a !== document.body; a = a.parentElement) {
    const s = getComputedStyle(a);
    if (['auto', 'scroll', 'hidden', 'clip'].includes(s.overflowX)) return true;
  }
  return false;
}
const wide = [];
for (const el of document.querySelectorAll('body *')) {
  const r = el.getBoundingClientRect();
  if (r.width === 0 || r.right <= limit || scrollsItself(el)) continue;
  if (el.parentElement && wide.some(w => w.el.contains(el))) continue;
  const s = getComputedStyle(el);
  if (s.position === 'fixed' && s.visibility === 'hidden') continue;
  wide.push({el: el, text: el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') +
             (el.className && typeof el.className === 'string' ? '.' + el.className.trim().split(/\\s+/).join('.') : '') +
             ' right=' + Math.round(r.right)});
}
return {scroll: document.documentElement.scrollWidth, body: document.body.scrollWidth,
        inner: window.innerWidth, wide: wide.slice(0, 12).map(w => w.text)};
"""


@pytest.mark.parametrize("name", PAGES)
def test_phone_width_does_not_scroll_sideways(browser, server, name):
    width, height = PHONE
    browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": True})
    load(browser, server, name)
    result = browser.execute_script(PHONE_OVERFLOW_JS)
    assert result["inner"] <= width + 1, f"{name}: the page is not laid out at phone width: {result}"
    browser.save_screenshot(str(OUT / f"{slug(name)}--phone.png"))
    assert result["scroll"] <= result["inner"] + 1, (
        f"{name}: at {width} px the page scrolls sideways (scrollWidth {result['scroll']} > "
        f"{result['inner']}); elements past the right edge: {result['wide']}")


@pytest.mark.parametrize("name", [name for name in PAGES if is_notebook(name)])
def test_launch_and_download_buttons(browser, server, name):
    load(browser, server, name)
    config = yaml.safe_load((BOOK / "_config.yml").read_text())
    repo = urlparse(config["repository"]["url"]).path.strip("/")
    branch = config["repository"]["branch"]

    from selenium.webdriver.common.by import By

    colab = browser.find_elements(By.CSS_SELECTOR, 'a[href*="colab.research.google.com"]')
    assert colab, f"{name}: no Colab launch button"
    # the rocket dropdown opens and shows the Colab entry
    toggle = browser.find_elements(By.CSS_SELECTOR, ".dropdown-launch-buttons button")
    assert toggle, f"{name}: no launch dropdown"
    toggle[0].click()
    time.sleep(0.3)
    assert colab[0].is_displayed(), f"{name}: the launch menu does not show its Colab entry"
    href = colab[0].get_attribute("href")
    prefix = f"https://colab.research.google.com/github/{repo}/blob/{branch}/"
    assert href.startswith(prefix), f"{name}: Colab link {href} does not start with {prefix}"
    path = href[len(prefix):]
    assert path.endswith(".ipynb"), f"{name}: Colab link to {path}, not a notebook"
    assert path == f"{config['repository']['path_to_book']}/{name}.ipynb", f"{name}: Colab opens {path}"
    assert (ROOT / path).is_file(), f"{name}: Colab link to {path}, which is not in the repository"

    downloads = [a.get_attribute("href") for a in
                 browser.find_elements(By.CSS_SELECTOR, 'a[href*="_sources/"][href$=".ipynb"]')]
    assert downloads, f"{name}: no download-notebook button"
    for url in set(downloads):
        assert url.startswith(server.origin + "/"), url
        with urllib.request.urlopen(url, timeout=10) as response:
            assert response.status == 200
            notebook = nbformat.reads(response.read().decode("utf-8"), as_version=4)
        nbformat.validate(notebook)
        assert any(cell.cell_type == "markdown" for cell in notebook.cells), f"{url}: no text cells"


# --- across the book -----------------------------------------------------------------------


def test_search_finds_layernorm_and_its_links_work(browser, server):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    page = load_url(browser, server, server.url("search.html?q=LayerNorm"))
    assert not page.failures() and not page.foreign() and not page.errors(), (
        page.failures(), page.foreign(), page.errors())
    WebDriverWait(browser, 30).until(lambda d: d.execute_script(
        "return !!document.querySelector('#search-results .search-summary') ||"
        " document.querySelectorAll('#search-results ul.search li a').length > 0"))
    time.sleep(0.5)  # results are appended one by one
    links = [a.get_attribute("href") for a in browser.find_elements(By.CSS_SELECTOR, "#search-results ul.search li a")]
    assert links, "search for LayerNorm gave no result"
    for link in links:
        parts = urlparse(link)
        assert link.startswith(server.origin + "/"), link
        with urllib.request.urlopen(f"{server.origin}{parts.path}", timeout=10) as response:
            assert response.status == 200, link
            text = response.read().decode("utf-8")
        if parts.fragment:
            assert f'id="{parts.fragment}"' in text, f"search result {link}: no anchor #{parts.fragment}"
    browser.find_elements(By.CSS_SELECTOR, "#search-results ul.search li a")[0].click()
    WebDriverWait(browser, 20).until(lambda d: d.current_url != page.url and
                                     d.execute_script("return document.readyState") == "complete")
    assert "LayerNorm" in browser.execute_script("return document.body.innerText")
    assert not [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]


CORNERS_JS = """
const img = arguments[0];
const c = document.createElement('canvas');
c.width = img.naturalWidth; c.height = img.naturalHeight;
const ctx = c.getContext('2d');
ctx.drawImage(img, 0, 0);
const w = c.width - 1, h = c.height - 1;
return [[0, 0], [w, 0], [0, h], [w, h]].map(([x, y]) => Array.from(ctx.getImageData(x, y, 1, 1).data));
"""


def _luminance(rgb) -> float:
    r, g, b = (float(v) for v in rgb[:3])
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def test_figures_keep_a_light_background_in_dark_mode(browser, server):
    from selenium.webdriver.common.by import By

    # A reader whose system is dark: the theme's default ("auto") follows prefers-color-scheme.
    browser.execute_cdp_cmd("Emulation.setEmulatedMedia",
                            {"features": [{"name": "prefers-color-scheme", "value": "dark"}]})
    checked, problems = 0, []
    for name in PAGES:
        load(browser, server, name)
        assert browser.execute_script("return document.documentElement.dataset.theme") == "dark", name
        background = browser.execute_script("return getComputedStyle(document.body).backgroundColor")
        # the content's figures (the header's launch-menu logos are icons, not figures)
        images = browser.find_elements(By.CSS_SELECTOR, "article.bd-article img")
        for index, img in enumerate(images):
            src = img.get_attribute("src")
            browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", img)
            for x, y, rgba in zip("lrlr", "ttbb", browser.execute_script(CORNERS_JS, img)):
                if rgba[3] < 255:
                    problems.append(f"{name}: {src} corner {y}{x} is transparent (alpha {rgba[3]})")
            checked += 1
            if not img.is_displayed() or img.size["width"] < 8 or img.size["height"] < 8:
                continue  # folded away (a closed dropdown): its pixels were checked above
            # An element screenshot of a figure taller than the window shows the page around it:
            # make the window tall enough for the whole figure, then restore it.
            window = browser.get_window_size()
            if img.size["height"] + 40 > browser.execute_script("return window.innerHeight"):
                browser.set_window_size(window["width"], img.size["height"] + 400)
                browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", img)
            shot = Image.open(io.BytesIO(img.screenshot_as_png)).convert("RGB")
            browser.set_window_size(window["width"], window["height"])
            if index == 0:
                shot.save(OUT / f"{slug(name)}--dark-figure.png")
            pixels = np.asarray(shot)
            h, w = pixels.shape[:2]
            for label, (y, x) in {"top left": (2, 2), "top right": (2, w - 3), "bottom left": (h - 3, 2),
                                  "bottom right": (h - 3, w - 3)}.items():
                lum = _luminance(pixels[y, x])
                if lum < 170:
                    problems.append(f"{name}: {src} is dark at its {label} corner in dark mode "
                                    f"(luminance {lum:.0f}, page background {background})")
    browser.save_screenshot(str(OUT / "dark-mode-last-page.png"))
    assert checked, "no figure in the book to check"
    assert not problems, "\n".join(problems)


# --- explorers -------------------------------------------------------------------------------


def _explorer_pages(kind: str) -> list[str]:
    return [name for name in PAGES if (HTML / f"{name}.html").exists()
            and f'data-explorer="{kind}"' in (HTML / f"{name}.html").read_text(encoding="utf-8")]


def _state(driver, root) -> dict:
    return driver.execute_script("""
const root = arguments[0];
const out = {svg: root.querySelector('svg.lnw-plot').innerHTML, readouts: {}, params: {}};
root.querySelectorAll('.lnw-readout').forEach(e => out.readouts[e.dataset.key] = e.textContent.trim());
root.querySelectorAll('.lnw-param').forEach(e => out.params[e.dataset.param] = e.textContent.trim());
return out;""", root)


def _set(driver, root, name: str, value: str) -> None:
    """Set a control the way a script would: its value, then an ``input`` event."""
    driver.execute_script("""
const el = arguments[0].querySelector('[name="' + arguments[1] + '"]');
el.value = arguments[2];
el.dispatchEvent(new Event(el.tagName === 'SELECT' ? 'change' : 'input', {bubbles: true}));""", root, name, value)


def _choose(driver, root, name: str, value: str) -> None:
    """Choose an option the way a reader does (selenium's Select clicks the option)."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    Select(root.find_element(By.CSS_SELECTOR, f'select[name="{name}"]')).select_by_value(value)


def _nudge(driver, root, name: str, key) -> None:
    """Move a slider with the keyboard, as a reader does."""
    from selenium.webdriver.common.by import By

    slider = root.find_element(By.CSS_SELECTOR, f'input[type=range][name="{name}"]')
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", slider)
    slider.send_keys(key)


def _fmt(value) -> str:
    from lnworked.explore import format_readout  # the documented readout format

    return format_readout(value)


def _expected_layer_norm(x, gamma, beta, eps, sublayer="identity") -> dict:
    from lnworked.explore import ln_sublayer
    from lnworked.norms import layer_norm

    x = np.asarray(x, dtype=float)
    g, b = np.full(x.shape, gamma), np.full(x.shape, beta)
    f = ln_sublayer(sublayer)
    post = layer_norm(x + f(x), g, b, eps, allow_degenerate=True)  # LN(x + F(x))
    pre = x + f(layer_norm(x, g, b, eps, allow_degenerate=True))    # x + F(LN(x))
    return {**{f"post-{i + 1}": _fmt(v) for i, v in enumerate(post)},
            **{f"pre-{i + 1}": _fmt(v) for i, v in enumerate(pre)}}


def _expected_depth(f, a, depth) -> dict:
    from lnworked.depth import depth_below, gradient_factor

    return {"post": _fmt(gradient_factor(f, depth)), "pre": _fmt(gradient_factor(1 + a, depth)),
            "post-depth-below": "never" if f >= 1 else str(depth_below(f, 0.01)),
            "pre-depth-below": "never" if 1 + a >= 1 else str(depth_below(1 + a, 0.01))}


def _expected_residual(n, v) -> dict:
    from lnworked.depth import residual_std, residual_variance

    return {"variance": _fmt(residual_variance(n, v)), "std": _fmt(residual_std(n, v))}


def _expected_walk(b1: float, ratio: float) -> dict:
    """The walk explorer's readouts by another route: the roots by numpy.roots of zeta^2 - psi zeta + b1, the
    walk by its two lines written out here; formatted as the explorer formats them."""
    import numpy as np

    top = (2 + 2 * b1) / (1 - b1)
    eta_lam = ratio * top
    roots = sorted(np.roots([1, -(1 + b1 - (1 - b1) * eta_lam), b1]).astype(complex), key=lambda z: -abs(z))
    theta, m = 1.0, 0.0
    for _ in range(100):
        m = b1 * m + (1 - b1) * theta
        theta -= eta_lam * m

    def text(z):
        return f"{z.real:.3g}" if abs(z.imag) < 1e-12 else \
            f"{z.real:.3g} {'+' if z.imag > 0 else '−'} {abs(z.imag):.3g}i"

    pair = abs(roots[0].imag) > 1e-12
    if pair and roots[0].imag < 0:  # the explorer names the root of positive imaginary part first
        roots = roots[::-1]
    size = abs(roots[0])
    return {"threshold": f"{top:.4g}", "eta-lam": f"{eta_lam:.4g}",
            "roots": f"{text(roots[0])}, its conjugate" if pair else f"{text(roots[0])} and {text(roots[1])}",
            "size": f"{size:.4f}", "last": f"{abs(theta):.3g}",
            "verdict": "lands on the bottom in one step and stays there (θ₁ = 0, below the chart)" if size < 1e-12 else
                       ("settles: its overshoots shrink by |ζ| a step, "
                        + ("more than halving each step" if size <= 0.5 else
                           f"halving every {math.log(2) / -math.log(size):.3g} steps") if size < 1 - 1e-9 else
                        "swings for ever at a fixed size" if size <= 1 + 1e-9 else
                        "grows: its overshoots grow by |ζ| a step")}


def _controls(driver, root) -> dict:
    return driver.execute_script("""
const out = {};
arguments[0].querySelectorAll('input[name], select[name]').forEach(e => out[e.name] = e.value);
return out;""", root)


def _expected(kind: str, c: dict) -> dict:
    if kind == "layer-norm":
        vector = [int(v) for v in c["preset"].split(",")]
        vector[int(c["component"]) - 1] = int(c["value"])
        return _expected_layer_norm(vector, float(c["gamma"]), float(c["beta"]), float(c["eps"]), c["sublayer"])
    if kind == "depth":
        return _expected_depth(float(c["post_factor"]), float(c["branch"]), int(c["depth"]))
    if kind == "momentum-walk":
        return _expected_walk(float(c["b1"]), float(c["ratio"]))
    return _expected_residual(int(c["n"]), float(c["branch_variance"]))


# Each step: (how, control, value). "key" moves a slider by the keyboard, "choose" picks a
# select option with a click, "set" sets a value and dispatches the event.
STEPS = {
    "layer-norm": [("key", "value", "RIGHT"), ("set", "value", "7"), ("choose", "gamma", "2"),
                   ("choose", "beta", "1"), ("choose", "eps", "0.1"), ("choose", "component", "3"),
                   ("set", "value", "-2"), ("choose", "preset", "0,0,0,0"), ("choose", "eps", "0"),
                   ("choose", "preset", "-2,0,2,4"), ("choose", "sublayer", "identity"), ("choose", "sublayer", "mlp-1")],
    "depth": [("key", "depth", "RIGHT"), ("set", "depth", "96"), ("set", "post_factor", "0.8"),
              ("key", "post_factor", "RIGHT"), ("set", "branch", "0.1"), ("set", "post_factor", "1"),
              ("set", "depth", "1"), ("set", "post_factor", "0.5"), ("set", "depth", "128"), ("set", "branch", "-0.3")],
    "momentum-walk": [("key", "ratio", "RIGHT"), ("set", "ratio", "1"), ("set", "ratio", "1.2"),
                      ("choose", "b1", "0"), ("set", "ratio", "0.5"), ("choose", "b1", "0.99"),
                      ("set", "ratio", "1.5"), ("choose", "b1", "0.5")],
    "residual": [("key", "n", "RIGHT"), ("set", "n", "100"), ("choose", "branch_variance", "4"),
                 ("set", "n", "1"), ("choose", "branch_variance", "0.25"), ("set", "n", "256")],
}


@pytest.mark.parametrize("kind", sorted(STEPS))
def test_explorer_responds_with_the_librarys_values(browser, server, kind):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    pages = _explorer_pages(kind)
    assert pages, f"no page of the book has a {kind} explorer"
    explorers = 0
    for name in pages:
        load(browser, server, name)  # the page's own console is test_page_loads_cleanly's
        roots = browser.find_elements(By.CSS_SELECTOR, f'div.lnw-explorer[data-explorer="{kind}"]')
        assert roots, f"{name}: the {kind} explorer is in the HTML but not in the page"
        for root in roots:
            where = f"{name} #{root.get_attribute('id')}"
            assert root.get_attribute("data-lnw-ready") == "1", f"{where}: the script did not initialise it"
            state = _state(browser, root)
            assert state["svg"].strip(), f"{where}: nothing drawn"
            assert state["readouts"] == _expected(kind, _controls(browser, root)), f"{where}: initial readouts"
            for how, control, value in STEPS[kind]:
                before = _controls(browser, root)
                if how == "key":
                    _nudge(browser, root, control, getattr(Keys, value))
                elif how == "choose":
                    _choose(browser, root, control, value)
                else:
                    _set(browser, root, control, value)
                after = _controls(browser, root)
                assert after != before, f"{where}: {how} {control}={value} did not change the control"
                new = _state(browser, root)
                step = f"{where}: after {how} {control}={value} (controls {after})"
                assert new["svg"] != state["svg"], f"{step}: the plot was not redrawn"
                assert new["readouts"] == _expected(kind, after), f"{step}: readouts differ from the library"
                if kind == "layer-norm":
                    vector = [int(v) for v in after["preset"].split(",")]
                    vector[int(after["component"]) - 1] = int(after["value"])
                    assert new["params"]["x"] == "(" + ", ".join(map(str, vector)) + ")", step
                state = new
            root.screenshot(str(OUT / f"explorer-{kind}-{explorers}.png"))
            explorers += 1
        errors = [e["message"] for e in browser.get_log("browser") if e["level"] == "SEVERE"]
        assert not errors, f"{name}: console errors while using the {kind} explorer: {errors}"
    assert explorers
