"""An exercise's code, as the page shows it, is the code its notebook runs to print the solution.

A notebook that glues what an exercise's code prints keeps that code in a string ``NAME_CODE = \"\"\"...\"\"\"``
and runs it with ``exec``; the page shows the same lines in a ```python block. If the two drifted, the
solution would print what the shown code does not.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

CHAPTERS = Path(__file__).resolve().parent.parent / "book" / "chapters"


def _run_strings(notebook: Path) -> dict:
    """``{NAME: code}`` for every ``NAME_CODE = "..."`` assignment in the notebook's code cells."""
    found = {}
    for cell in json.loads(notebook.read_text(encoding="utf-8"))["cells"]:
        if cell["cell_type"] != "code":
            continue
        for node in ast.walk(ast.parse("".join(cell["source"]))):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
                for target in node.targets:
                    if isinstance(target, ast.Name) and target.id.endswith("_CODE"):
                        found[target.id] = node.value.value
    return found


def _shown_blocks(notebook: Path) -> list[str]:
    """The ```python blocks of the notebook's markdown cells."""
    text = "\n".join("".join(c["source"]) for c in json.loads(notebook.read_text(encoding="utf-8"))["cells"]
                     if c["cell_type"] == "markdown")
    return [m.group(1) for m in re.finditer(r"```python\n(.*?)```", text, re.S)]


NOTEBOOKS = sorted(p for p in CHAPTERS.glob("*.ipynb") if _run_strings(p))


def test_some_notebooks_run_their_exercise_code():
    assert NOTEBOOKS, "no notebook keeps an exercise's code in a NAME_CODE string"


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_each_exercise_code_the_notebook_runs_is_shown_on_its_page(notebook):
    shown = _shown_blocks(notebook)
    for name, code in _run_strings(notebook).items():
        assert code in shown, f"{notebook.name}: {name} is run but not shown as a ```python block"


def test_the_check_catches_code_that_drifted(tmp_path):
    cells = [{"cell_type": "markdown", "source": ["```python\nprint(1)\n```"]},
             {"cell_type": "code", "source": ['EX_CODE = """\\\nprint(2)\n"""\nexec(EX_CODE, {})']}]
    path = tmp_path / "drift.ipynb"
    path.write_text(json.dumps({"cells": cells}), encoding="utf-8")
    assert _run_strings(path) == {"EX_CODE": "print(2)\n"} and "print(2)\n" not in _shown_blocks(path)
