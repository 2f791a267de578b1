"""A small answer checker: pick a problem, type an answer, get feedback.

Two forms, chosen by :func:`show_checker` as the book's explorers are
(:func:`lnworked.explore.is_static_build`):

* live (a kernel: Jupyter, Colab): :func:`answer_checker`, an ipywidgets box whose
  callback runs the safe parser of :mod:`lnworked.practice.answers`;
* kernel-free (the built book): :func:`static_checker`, plain HTML (a form with a
  ``<select name="problem">``, an ``<input name="answer">``, a Check button and a polite
  live region ``p.lnw-verdict``), the problems' answers as JSON (``Answer.to_json()``;
  the page shows the worked solutions anyway) and two inlined scripts:
  ``lnworked/data/answers.js``, a JavaScript port of :mod:`lnworked.practice.answers`
  (same grammar, bounds, tolerance rule and messages; no ``eval``), and
  ``lnworked/data/checker.js``, which wires the form. The form gets
  ``data-lnw-ready="1"`` once its script has run.
"""

from __future__ import annotations

import html
import json
import re
import uuid
from importlib import resources
from pathlib import Path

from lnworked.practice.answers import check_answer

__all__ = ["answer_checker", "feedback_html", "page_numbered", "static_checker", "show_checker", "answers_script"]


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


def answers_script() -> str:
    """The JavaScript port of the safe parser and checker (``lnworked/data/answers.js``)."""
    return resources.files("lnworked").joinpath("data/answers.js").read_text(encoding="utf-8")


def _checker_script() -> str:
    return resources.files("lnworked").joinpath("data/checker.js").read_text(encoding="utf-8")


# Contrast: #1a7f37 and #b42318 on white, #6fdd8b and #ff8a80 on the dark theme's background
# are all above 4.5:1 (WCAG AA for text).
_STYLE = """<style>
.lnw-checker{border:1px solid rgba(128,128,128,.45);border-radius:6px;padding:.6em .9em;margin:1em 0}
.lnw-checker .lnw-row{display:flex;flex-wrap:wrap;gap:.4em .8em;align-items:center;margin:.3em 0}
.lnw-checker select,.lnw-checker input{max-width:100%;font:inherit;padding:.15em .3em}
.lnw-checker input{width:22em}
.lnw-checker button{font:inherit;padding:.2em .9em;cursor:pointer}
.lnw-checker :focus-visible{outline:2px solid currentColor;outline-offset:2px}
.lnw-checker .lnw-verdict{min-height:1.4em;margin:.4em 0 0 0}
.lnw-checker .lnw-right{color:#1a7f37}.lnw-checker .lnw-wrong{color:#b42318}
html[data-theme="dark"] .lnw-checker .lnw-right{color:#6fdd8b}
html[data-theme="dark"] .lnw-checker .lnw-wrong{color:#ff8a80}
</style>"""


_EXERCISE = re.compile(r"^(:{3,})\{exercise\}[ \t]*(.*)$", re.MULTILINE)
_STATEMENT = re.compile(r"\{glue:md\}[ \t]+([A-Za-z0-9_]+)-statement")


def chapter_number(chapter: str | Path, toc: str | Path) -> int:
    """The number Jupyter Book gives ``chapter`` (a path like ``chapters/07_practice``, any suffix):
    its 1-based position among the chapters of the numbered parts of ``toc`` (``_toc.yml``),
    counted across parts as ``use_multitoc_numbering`` does."""
    import yaml

    target = Path(chapter).with_suffix("").as_posix()
    numbered = [Path(entry["file"]).with_suffix("").as_posix()
                for part in yaml.safe_load(Path(toc).read_text(encoding="utf-8"))["parts"]
                if part.get("numbered") for entry in part.get("chapters", [])]
    if target not in numbered:
        raise ValueError(f"chapter: {target!r} is not a numbered chapter of {toc}")
    return numbered.index(target) + 1


def page_numbered(problems: dict, notebook: str | Path, toc: str | Path) -> dict:
    """``{family: Problem}`` -> ``{"N.k Title": Problem}`` in the order the page shows them.

    The page is ``notebook``: its k-th ``{exercise}`` directive (``:nonumber:`` ones skipped) is
    exercise N.k, N the chapter's number (:func:`chapter_number`), its title the directive's and
    its problem the family whose ``{glue:md} family-statement`` the directive shows. So the
    checker's menu reads as the page's numbered exercises do."""
    import nbformat

    notebook = Path(notebook)
    text = "\n".join(cell.source for cell in nbformat.read(notebook, as_version=4).cells
                     if cell.cell_type == "markdown")
    number = chapter_number(notebook.resolve().relative_to(Path(toc).resolve().parent), toc)
    labelled, k = {}, 0
    for match in _EXERCISE.finditer(text):
        fence = match.group(1)
        end = text.find("\n" + fence + "\n", match.end())
        body = text[match.end(): end if end >= 0 else len(text)]
        if re.search(r"^:nonumber:", body, re.MULTILINE):
            continue
        k += 1
        family = _STATEMENT.search(body)
        if family is None or family.group(1) not in problems:
            continue
        labelled[f"{number}.{k} {match.group(2).strip()}"] = problems[family.group(1)]
    missing = set(problems) - {p.family for p in labelled.values()}
    if missing:
        raise ValueError(f"problems: {sorted(missing)} not shown as an exercise on {notebook.name}")
    return labelled


def static_checker(problems: dict) -> str:
    """``{label: Problem}`` -> the kernel-free checker as HTML (see the module docstring)."""
    if not problems:
        raise ValueError("problems: must name at least one problem")
    root = f"lnw-checker-{uuid.uuid4().hex[:12]}"
    options = "".join(f'<option value="{i}">{html.escape(str(label))}</option>' for i, label in enumerate(problems))
    answers = json.dumps([p.answer.to_json() for p in problems.values()], separators=(",", ":"))
    answers = answers.replace("</", "<\\/")
    script = (answers_script() + "\n" + _checker_script()).replace("</", "<\\/")
    placeholder = "e.g. 0.25, sqrt(5)/2, (1, -1, 1, -1) or B"
    return (
        f'{_STYLE}<form class="lnw-checker" id="{root}" autocomplete="off">'
        f'<div class="lnw-row"><label for="{root}-problem">Problem</label>'
        f'<select id="{root}-problem" name="problem">{options}</select></div>'
        f'<div class="lnw-row"><label for="{root}-answer">Answer</label>'
        f'<input id="{root}-answer" name="answer" type="text" spellcheck="false" autocapitalize="off" '
        f'placeholder="{html.escape(placeholder, quote=True)}" aria-describedby="{root}-verdict">'
        f'<button type="submit">Check</button></div>'
        f'<p class="lnw-verdict" id="{root}-verdict" role="status" aria-live="polite"></p>'
        f'<script type="application/json" class="lnw-answers">{answers}</script>'
        f"</form><script>{script}\nwindow.lnwChecker.init({json.dumps(root)});</script>"
    )


def show_checker(problems: dict):
    """Either form: kernel-free HTML in the book build, the ipywidgets box in a kernel."""
    from lnworked.explore import is_static_build

    if is_static_build():
        from IPython.display import HTML

        return HTML(static_checker(problems))
    return answer_checker(problems)
