"""An exercise's code as the book shows it, and what it prints.

A chapter keeps an exercise's code in a string, shows the same lines in a ```python block
(``tests/test_exercise_code.py`` checks they agree) and glues what :func:`printed` returns into the
solution, so the solution prints exactly what the reader's copy of the code would.
"""

from __future__ import annotations

import contextlib
import io

__all__ = ["printed"]


def printed(code: str, namespace: dict | None = None):
    """What ``code`` prints when run in a fresh namespace (so it needs none of the page's hidden
    cells), as a Markdown ```text block for ``{glue:md}``; ``namespace`` (a dict) keeps what the code
    defined, for the notebook's own checks."""
    from IPython.display import Markdown

    if not isinstance(code, str) or not code.strip():
        raise ValueError("code: needs the exercise's code as a non-empty string")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(code, {} if namespace is None else namespace)
    return Markdown("```text\n" + out.getvalue() + "```")
