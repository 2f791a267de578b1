"""Chapters 1 and 2, read from their notebook sources (no built book needed).

Chapter 1's plain-NumPy exercise: the solution shown on the page is the code a hidden cell
runs (so its glued differences are that code's), the starter differs from it only inside
the two functions, and the solution really agrees with the library and with finite
differences. Fig. 1.2 keeps its text off the dotted sqrt(eps) lines. Chapter 2: the
summary's spectrum numbers are in the main text, not only in a fold, and a printed
eigenvalue that is zero up to rounding is said to be so.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg

from lnworked import figures

CHAPTERS = Path(__file__).resolve().parent.parent / "book" / "chapters"


def cells(name: str):
    return nbformat.read(CHAPTERS / f"{name}.ipynb", as_version=4).cells


def directive(source: str, kind: str, label: str) -> str:
    """The body of the ````{kind} ... block whose label or argument is ``label``."""
    blocks = re.finditer(rf"^(`{{3,}})\{{{kind}\}}([^\n]*)\n(.*?)^\1\s*$", source, re.M | re.S)
    for block in blocks:
        if label in block.group(2) or f":label: {label}" in block.group(3):
            return block.group(3)
    raise AssertionError(f"no {kind} {label}")


def python_blocks(text: str) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```\s*$", text, re.M | re.S)


def chapter_one_exercise():
    source = "\n".join(c.source for c in cells("01_layernorm") if c.cell_type == "markdown")
    (starter,) = python_blocks(directive(source, "exercise", "ch1-ex-numpy"))
    solution_text = directive(source, "solution", "ch1-ex-numpy")
    (solution,) = python_blocks(solution_text)
    return starter, solution, solution_text


def test_numpy_exercise_solution_is_what_the_hidden_cell_runs():
    _, solution, solution_text = chapter_one_exercise()
    hidden = [c for c in cells("01_layernorm") if c.cell_type == "code" and solution.strip() in c.source]
    assert len(hidden) == 1, "no single code cell runs the solution shown on the page"
    assert "remove-cell" in hidden[0].metadata.get("tags", [])
    glued = set(re.findall(r'glue\("([^"]+)"', hidden[0].source))
    used = set(re.findall(r"\{glue:text\}`([^`:]+)", solution_text))
    assert used and used <= glued, f"glued elsewhere: {sorted(used - glued)}"


def test_numpy_exercise_starter_differs_only_inside_the_functions():
    starter, solution, _ = chapter_one_exercise()
    assert "..." in starter and "..." not in solution
    tail = solution[solution.index("rng = "):]
    assert starter.endswith(tail), "the starter's checks are not the solution's"
    assert all(len(line) <= 77 for line in (starter + solution).splitlines())


def test_numpy_exercise_starter_does_not_run_and_solution_agrees(capsys):
    starter, solution, _ = chapter_one_exercise()
    with pytest.raises(TypeError):  # ``...`` is not a number
        exec(compile(starter, "starter", "exec"), {})
    space: dict = {}
    exec(compile(solution, "solution", "exec"), space)
    assert space["gap_forward"] < 1e-12 and space["gap_library"] < 1e-12
    assert space["gap_numeric"] < 1e-6
    # An independent route: the backward pass against a Jacobian built by finite
    # differences of the library's own layer_norm, at a fresh input.
    from lnworked.norms import layer_norm
    rng = np.random.default_rng(5)
    x, g, gamma, beta = rng.normal(size=(4, 6))
    h = 1e-6
    jac = np.column_stack([(layer_norm(x + h * e, gamma, beta) - layer_norm(x - h * e, gamma, beta)) / (2 * h)
                           for e in np.eye(6)])
    np.testing.assert_allclose(space["my_layer_norm_backward"](x, gamma, g), jac.T @ g, atol=1e-7)
    # and it is wrong if the backward forgets gamma: the check would catch it
    assert np.abs(space["my_layer_norm_backward"](x, np.ones(6), g) - jac.T @ g).max() > 1e-3


def test_epsilon_figure_keeps_its_text_off_the_dotted_lines():
    fig = figures.epsilon_effect()
    (ax,) = fig.axes
    renderer = FigureCanvasAgg(fig).get_renderer()
    lines = [ax.transData.transform((line.get_xdata()[0], 1.0))[0]
             for line in ax.get_lines() if line.get_linestyle() == ":"]
    assert len(lines) == 2
    for text in ax.texts:
        box = text.get_window_extent(renderer)
        crossed = [x for x in lines if box.x0 + 1 < x < box.x1 - 1]
        assert not crossed, f"{text.get_text()!r} crosses a dotted line"


def without_folds(source: str) -> str:
    """Markdown with every ``:class: dropdown`` admonition (and what it nests) cut out."""
    out, skip = [], None
    lines = source.splitlines()
    for i, line in enumerate(lines):
        fence = re.match(r"^(:{3,})\{", line)
        if skip is None and fence and any(":class: dropdown" in nxt for nxt in lines[i + 1:i + 4]):
            skip = fence.group(1)
            continue
        if skip is not None:
            if line.strip() == skip:
                skip = None
            continue
        out.append(line)
    return "\n".join(out)


def test_without_folds_cuts_a_fold():
    text = "a\n:::{admonition} A\n:class: dropdown\nhidden\n:::\nb"
    assert without_folds(text) == "a\nb"


def test_chapter_two_summary_numbers_are_in_the_main_text():
    source = "\n".join(c.source for c in cells("02_placements") if c.cell_type == "markdown")
    body, summary = source.split("(ch2-summary)=")
    summary = summary.split("(ch2-exercises)=")[0]
    in_summary = set(re.findall(r"\{glue:text\}`([^`:]+)", summary))
    in_body = set(re.findall(r"\{glue:text\}`([^`:]+)", without_folds(body)))
    assert in_summary, "the summary glues no number"
    assert in_summary <= in_body, f"only in a fold or nowhere: {sorted(in_summary - in_body)}"


def test_chapter_two_says_the_printed_near_zero_eigenvalue_is_rounding():
    chapter = cells("02_placements")
    (i,) = [i for i, c in enumerate(chapter) if c.cell_type == "code" and "print(" in c.source
            and "eigvalsh" in c.source and "remove-cell" not in c.metadata.get("tags", [])]
    prose = next(c.source for c in chapter[i + 1:] if c.cell_type == "markdown")
    assert "{glue:text}`ch2-eig4-null" in prose and "rounding" in prose
