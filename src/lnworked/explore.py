"""Interactive explorers: ipywidgets in a live kernel, kernel-free HTML in the built book.

:func:`is_static_build` tells which: the book build sets ``LNWORKED_STATIC_BUILD=1``
(see ``book/_ext/lnworked_build.py``), so a chapter executed for the HTML never emits
ipywidgets (whose Python callbacks would be dead there and whose JavaScript would come
from a CDN).
"""

from __future__ import annotations

import os

__all__ = ["is_static_build"]


def is_static_build() -> bool:
    """True while the book is being built (outputs go to static HTML, no live kernel)."""
    return os.environ.get("LNWORKED_STATIC_BUILD") == "1"
