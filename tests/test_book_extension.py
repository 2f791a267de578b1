"""The book's Sphinx extension: stale outputs and CDN scripts (book/_ext/lnworked_build.py)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "book" / "_ext"))
import lnworked_build  # noqa: E402


def _env(docs, stored=None):
    env = SimpleNamespace(found_docs=set(docs))
    if stored is not None:
        env.lnworked_library_hash = stored
    return env


def test_first_build_stores_the_library_hash_and_marks_nothing_extra():
    env = _env({"intro", "chapters/01"})
    assert lnworked_build._outdated_on_library_change(None, env, set(), set(), set()) == []
    assert env.lnworked_library_hash == lnworked_build.library_hash()


def test_unchanged_library_marks_nothing_extra():
    env = _env({"intro", "chapters/01"}, stored=lnworked_build.library_hash())
    assert lnworked_build._outdated_on_library_change(None, env, set(), {"intro"}, set()) == []


def test_changed_library_marks_every_other_page_outdated():
    env = _env({"intro", "chapters/01", "chapters/02"}, stored="hash-of-older-library")
    outdated = lnworked_build._outdated_on_library_change(None, env, set(), {"intro"}, set())
    assert outdated == ["chapters/01", "chapters/02"]


def test_library_hash_changes_when_a_library_file_changes(tmp_path, monkeypatch):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "norms.py").write_text("A = 1\n")
    monkeypatch.setattr(lnworked_build.lnworked, "__file__", str(package / "__init__.py"))
    before = lnworked_build.library_hash()
    (package / "norms.py").write_text("A = 2\n")
    assert lnworked_build.library_hash() != before


def test_thebe_scripts_are_dropped_and_others_kept():
    thebe_config = SimpleNamespace(filename=None, attributes={"body": 'const THEBE_JS_URL = "https://unpkg.com/x"'})
    thebe_js = SimpleNamespace(filename="sphinx-thebe.js", attributes={})
    mathjax = SimpleNamespace(filename="mathjax/tex-chtml.js", attributes={})
    context = {"script_files": [thebe_config, thebe_js, mathjax]}
    lnworked_build._drop_thebe_scripts(None, "intro", "page.html", context, None)
    assert context["script_files"] == [mathjax]


def test_setup_sets_the_static_build_flag(monkeypatch):
    monkeypatch.setenv("LNWORKED_STATIC_BUILD", "0")
    app = SimpleNamespace(connect=lambda *args: None)
    lnworked_build.setup(app)
    assert os.environ["LNWORKED_STATIC_BUILD"] == "1"


def _build_one_page(tmp_path, extensions):
    """Build a one-page sphinx-book-theme site and return its HTML."""
    import subprocess

    tmp_path.mkdir(parents=True)
    (tmp_path / "index.rst").write_text("Title\n=====\n\nHello.\n")
    (tmp_path / "conf.py").write_text(
        f"import sys\nsys.path.insert(0, {str(ROOT / 'book' / '_ext')!r})\n"
        f"extensions = {extensions!r}\nhtml_theme = 'sphinx_book_theme'\n"
        "html_theme_options = {'search_bar_text': 'Search this book...'}\n")
    done = subprocess.run([sys.executable, "-m", "sphinx", "-q", "-b", "html", str(tmp_path), str(tmp_path / "_build")],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return (tmp_path / "_build" / "index.html").read_text()


def test_one_search_field_no_header_search_bar(tmp_path):
    """pydata-sphinx-theme adds a header search bar (navbar_persistent) unless the options name it;
    the extension names it empty, leaving the sidebar's search field only."""
    plain = _build_one_page(tmp_path / "plain", [])
    assert "navbar-persistent--container" in plain  # the theme's own behaviour: the cause
    html = _build_one_page(tmp_path / "book", ["lnworked_build"])
    assert "navbar-persistent" not in html
    assert html.count("search-button-field") == 1
