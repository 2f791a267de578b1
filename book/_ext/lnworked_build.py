"""Sphinx extension for the lnworked book build.

1. Sets ``LNWORKED_STATIC_BUILD=1`` before any notebook runs, so that explorers emit
   kernel-free HTML instead of ipywidgets (see ``lnworked.explore``).
2. Makes a change in the library re-execute every chapter: Sphinx re-reads only pages
   whose source changed, so on each build it hashes ``src/lnworked`` and, when the
   hash differs from the one stored with the previous build, marks every page outdated.
   With ``execute_notebooks: force`` a re-read page is re-executed, so no output computed
   by older library code can be published.
3. Keeps the pages free of CDN references: Jupyter Book always loads sphinx-thebe, which
   writes the unpkg.com URL of thebe into every page even with thebe off. This book has
   no thebe button, so those two scripts are dropped from each page.
4. Mends two accessibility faults of the generated HTML (tests/test_accessibility.py):
   docutils marks each bibliography entry ``role="doc-biblioentry"``, a role DPUB-ARIA 1.1
   deprecated (w3c/dpub-aria#22: use list items), inside a ``role="list"`` that then has no
   list item: the entries become ``role="listitem"``. myst-nb names each fold of a hidden cell "Toggle hidden content"
   (``aria-label``) over a visible title ("Open the worked example"), against WCAG 2.5.3
   (label in name): the label is dropped, so the fold is named by the title it shows.
   The theme's script-only buttons are mended by ``_static/a11y.js``.
5. Keeps one search field: pydata-sphinx-theme 0.17 fills ``navbar_persistent`` with its
   search field whenever the user's ``html_theme_options`` do not name it, overriding
   sphinx-book-theme's empty default, so a second "Search Ctrl+K" header bar appeared above
   the page (a theme behaviour, not ``_static/a11y.js``). The book sets it empty: the search
   stays in the sidebar and, on a phone, in the article header.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import lnworked


def library_hash() -> str:
    """SHA-256 over the paths and bytes of every source and data file of the package."""
    root = Path(lnworked.__file__).parent
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            digest.update(str(path.relative_to(root)).encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


def _outdated_on_library_change(app, env, added, changed, removed):
    current = library_hash()
    previous = getattr(env, "lnworked_library_hash", None)
    env.lnworked_library_hash = current
    if previous is not None and previous != current:
        return sorted(env.found_docs - set(added) - set(changed))
    return []


def _is_thebe_script(script) -> bool:
    body = getattr(script, "attributes", {}).get("body", "") or ""
    return "thebe" in str(getattr(script, "filename", script) or "") or "THEBE_JS_URL" in body


def _drop_thebe_scripts(app, pagename, templatename, context, doctree):
    if "script_files" in context:
        context["script_files"] = [js for js in context["script_files"] if not _is_thebe_script(js)]


#: (generated HTML, its accessible replacement) in each page's body.
A11Y_REPLACEMENTS = (
    ('role="doc-biblioentry"', 'role="listitem"'),
    ('<summary aria-label="Toggle hidden content">', "<summary>"),
)


def _mend_accessibility(app, pagename, templatename, context, doctree):
    body = context.get("body")
    if body:
        for old, new in A11Y_REPLACEMENTS:
            body = body.replace(old, new)
        context["body"] = body


def _no_header_search_bar(app, config):
    """Name ``navbar_persistent`` (empty) so pydata-sphinx-theme adds no header search bar."""
    config.html_theme_options = {**(config.html_theme_options or {})}
    config.html_theme_options.setdefault("navbar_persistent", [])


def setup(app):
    os.environ["LNWORKED_STATIC_BUILD"] = "1"
    app.connect("config-inited", _no_header_search_bar)
    app.connect("env-get-outdated", _outdated_on_library_change)
    app.connect("html-page-context", _drop_thebe_scripts)
    app.connect("html-page-context", _mend_accessibility)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "env_version": 1}
