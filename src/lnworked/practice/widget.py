"""A small answer checker for a live kernel: pick a problem, type an answer, get feedback.

Built with ipywidgets; the book creates it only when
:func:`lnworked.explore.is_static_build` is false (a dead widget in static HTML would
mislead). Checking uses the safe parser of :mod:`lnworked.practice.answers`.
"""

from __future__ import annotations

import html

from lnworked.practice.answers import check_answer

__all__ = ["answer_checker", "feedback_html"]


def feedback_html(problem, text: str) -> str:
    """The verdict for ``text`` as a line of HTML (a tick or a cross and the message)."""
    verdict = check_answer(problem.answer, text)
    mark = "✔" if verdict.correct else "✘"
    colour = "green" if verdict.correct else "firebrick"
    return f'<span style="color:{colour}">{mark} {html.escape(verdict.message)}</span>'


def answer_checker(problems: dict):
    """``{label: Problem}`` -> an ipywidgets box: problem menu, answer box, Check button, feedback."""
    import ipywidgets as widgets

    menu = widgets.Dropdown(options=list(problems), description="Problem")
    box = widgets.Text(
        placeholder="e.g. 0.25, sqrt(5)/2, (1, -1, 1, -1) or B", description="Answer", continuous_update=False
    )
    button = widgets.Button(description="Check", button_style="primary")
    result = widgets.HTML(value="")

    def check(_=None):
        result.value = feedback_html(problems[menu.value], box.value)

    button.on_click(check)
    box.observe(check, names="value")  # Enter (or leaving the box) checks too
    menu.observe(lambda change: setattr(result, "value", ""), names="value")
    return widgets.VBox([menu, widgets.HBox([box, button]), result])
