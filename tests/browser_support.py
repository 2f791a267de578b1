"""Support for the browser tests (tests/test_browser.py): a local server and headless Chromium.

- :class:`BookServer` serves the built HTML on 127.0.0.1 (a free port) from a thread and
  logs every request's path and status, so a test can assert that every asset a page
  asked for answered 200.
- :func:`start_chromium` starts Debian's ``/usr/bin/chromium`` through Debian's
  ``/usr/bin/chromedriver`` (Selenium 4; never a downloaded browser), headless, with a fresh
  profile, the browser console and the DevTools network events recorded
  (``goog:loggingPrefs``), the HTTP cache off (so every request reaches the server log) and
  every host but 127.0.0.1 unresolvable (a request to another host fails at once and shows up
  in the network events, instead of waiting for a network this machine may not have).
- :func:`chromium_session` and :func:`built_book_server` are the module fixtures' bodies.
- :func:`missing_browser` names the Debian package that is missing, if any.
- :func:`explorer_page` serves a page of kernel-free explorers (the HTML the book's build
  emits) to a fresh Chromium, and :func:`explorer_state` reads one explorer's drawn state,
  for the explorer tests.
"""

from __future__ import annotations

import functools
import contextlib
import json
import os
import shutil
import tempfile
import threading
from dataclasses import dataclass
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
INSTALL_HINT = "apt-get install chromium chromium-driver"


def missing_browser() -> str | None:
    """None when Debian's chromium and chromedriver are installed, else a message naming the package."""
    missing = []
    if not (shutil.which("chromium") or Path(CHROMIUM).exists()):
        missing.append("chromium")
    if not (shutil.which("chromedriver") or Path(CHROMEDRIVER).exists()):
        missing.append("chromium-driver")
    if not missing:
        return None
    return f"Debian package {' and '.join(missing)} not installed: {INSTALL_HINT}"


def _binary(name: str, default: str) -> str:
    return default if Path(default).exists() else shutil.which(name)


# --- the server --------------------------------------------------------------------------


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    status: int


class _Handler(SimpleHTTPRequestHandler):
    server: "_Server"

    def log_request(self, code="-", size="-"):  # called by send_response (and send_error)
        try:
            status = int(getattr(code, "value", code))
        except (TypeError, ValueError):
            status = 0
        with self.server.lock:
            self.server.requests.append(Request(self.command, self.path, status))

    def log_message(self, format, *args):  # keep pytest's output clean
        pass

    def end_headers(self):
        self.send_header("Cache-Control", "no-store")
        super().end_headers()


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address, handler):
        super().__init__(address, handler)
        self.lock = threading.Lock()
        self.requests: list[Request] = []


class BookServer:
    """The built book on ``http://127.0.0.1:<free port>/``, every request logged."""

    def __init__(self, directory: Path):
        self.directory = Path(directory)
        handler = functools.partial(_Handler, directory=str(self.directory))
        self._server = _Server(("127.0.0.1", 0), handler)
        self.port = self._server.server_address[1]
        self.origin = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self._server.serve_forever, name="book-server", daemon=True)

    def __enter__(self) -> "BookServer":
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._server.shutdown()
        self._server.server_close()

    def url(self, path: str) -> str:
        return f"{self.origin}/{path.lstrip('/')}"

    def mark(self) -> int:
        """A position in the request log; :meth:`since` gives the requests after it."""
        with self._server.lock:
            return len(self._server.requests)

    def since(self, mark: int) -> list[Request]:
        with self._server.lock:
            return list(self._server.requests[mark:])


# --- the browser -------------------------------------------------------------------------


CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--hide-scrollbars",
    # Only the local server resolves: a request to another host fails at once (and is
    # still reported by the network events, which the tests check).
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
)


def start_chromium(profile: Path | None = None, width: int = 1280, height: int = 900):
    """A Selenium ``webdriver.Chrome`` on Debian's Chromium, headless, with a fresh profile."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    os.environ.setdefault("SE_AVOID_STATS", "true")  # Selenium Manager: no telemetry
    profile = Path(profile or tempfile.mkdtemp(prefix="lnw-chromium-"))
    options = webdriver.ChromeOptions()
    options.binary_location = _binary("chromium", CHROMIUM)
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={profile}")
    options.add_argument(f"--window-size={width},{height}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    service = Service(executable_path=_binary("chromedriver", CHROMEDRIVER))
    driver = webdriver.Chrome(service=service, options=options)
    driver.set_page_load_timeout(60)
    driver.set_script_timeout(30)
    driver.execute_cdp_cmd("Network.enable", {})
    driver.execute_cdp_cmd("Network.setCacheDisabled", {"cacheDisabled": True})
    driver.get("about:blank")
    driver.get_log("browser"), driver.get_log("performance")  # the new-tab page's own requests
    return driver


@contextlib.contextmanager
def chromium_session(tmp_path_factory, **size):
    """:func:`start_chromium` with a fresh profile under pytest's ``tmp_path_factory``; quits on exit."""
    driver = start_chromium(tmp_path_factory.mktemp("chromium-profile"), **size)
    try:
        yield driver
    finally:
        driver.quit()


def built_book_server(html: Path) -> "BookServer":
    """A :class:`BookServer` on the built book at ``html``; fails the test, saying what to run,
    when the book is not built."""
    import pytest

    if not (html / "index.html").exists():
        pytest.fail(f"no built book at {html}: run `make book` first (`make test` builds it)")
    return BookServer(html)


def network_events(driver) -> list[dict]:
    """The DevTools ``Network.*`` events since the last call: ``{"method", "params"}``."""
    events = []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message.get("method", "").startswith("Network."):
            events.append(message)
    return events


PAGE = """<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><link rel="icon" href="data:,"><title>{title}</title>
<style>body{{font-family:sans-serif;margin:0 8px}}</style></head><body>{body}</body></html>"""


def require_browser() -> None:
    """Fail (under ``CI=true``, which installs the browser) or skip, naming the Debian package to
    install, when Chromium or its driver is missing."""
    import pytest

    problem = missing_browser()
    if problem:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true and the browser is missing. {problem}")
        pytest.skip(problem)


def static_explorer_html(explorers) -> str:
    """The HTML the book's build emits (``LNWORKED_STATIC_BUILD=1``) for each explorer function, joined."""
    previous = os.environ.get("LNWORKED_STATIC_BUILD")
    os.environ["LNWORKED_STATIC_BUILD"] = "1"
    try:
        return "".join(f().data for f in explorers)
    finally:
        if previous is None:
            del os.environ["LNWORKED_STATIC_BUILD"]
        else:
            os.environ["LNWORKED_STATIC_BUILD"] = previous


@contextlib.contextmanager
def explorer_page(tmp_path_factory, title: str, explorers):
    """``(driver, url)``: a page holding ``explorers``' kernel-free HTML, served on 127.0.0.1 to a
    fresh headless Chromium. Without the browser: a failure under ``CI=true``, else a skip naming
    the Debian package to install."""
    require_browser()
    folder = tmp_path_factory.mktemp(title.replace(" ", "-") + "-page")
    page = PAGE.format(title=title, body=static_explorer_html(explorers))
    (folder / "index.html").write_text(page, encoding="utf-8")
    with BookServer(folder) as server:
        driver = start_chromium(tmp_path_factory.mktemp("chromium-profile"))
        try:
            yield driver, server.url("index.html")
        finally:
            driver.quit()


EXPLORER_STATE_JS = """
const root = arguments[0];
const out = {paths: {}, readouts: {}, controls: {}};
root.querySelectorAll('path.lnw-line').forEach(e => out.paths[e.dataset.series] = e.getAttribute('d'));
root.querySelectorAll('.lnw-readout').forEach(e => out.readouts[e.dataset.key] = e.textContent.trim());
root.querySelectorAll('select[name], input[name]').forEach(e => out.controls[e.name] = e.value);
const marker = root.querySelector('line.lnw-marker');
out.marker = marker ? marker.getAttribute('x1') : null;
return out;"""


def explorer_state(driver, root) -> dict:
    """One explorer's drawn state: ``paths`` (each line's ``d`` by series), ``readouts`` (text by
    key), ``controls`` (value by name) and ``marker`` (the position marker's x, or None)."""
    return driver.execute_script(EXPLORER_STATE_JS, root)
