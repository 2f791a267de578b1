"""The kernel-free answer checker of the practice page: its JavaScript parser
(src/lnworked/data/answers.js) against the Python one (lnworked.practice.answers), and the
checker form in a real browser with no kernel.

The differential tests run the JavaScript under Node on the same inputs as Python's
``parse_answer`` / ``check_answer`` (valid numbers, fractions, sqrt, powers, vectors, Unicode
signs, the hostile answers of test_practice_answers.py, the book's own problems and random
text) and require the same value, the same accept-or-refuse and the same message. The one
allowed difference: Python names a refused character with ``unicodedata.name``; the
JavaScript knows the names of a table of likely characters (checked here against
``unicodedata``) and names any other by its code point only.
Without Node the differential tests skip (failing under ``CI=true``); without Chromium the
browser test skips naming the Debian package.
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import subprocess
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from browser_support import explorer_page
from lnworked.practice import FAMILIES, variant
from lnworked.practice.answers import MAX_DEPTH, MAX_LENGTH, AnswerError, check_answer, parse_answer
from lnworked.practice.problem import Answer
from lnworked.practice.widget import answers_script, show_checker, static_checker
from test_practice_answers import hostile_answers

ROOT = Path(__file__).resolve().parents[1]
ANSWERS_JS = ROOT / "src" / "lnworked" / "data" / "answers.js"

# Reads {"parse": [text...], "check": [[answer, text]...], "format": [[x, p]...], "names": [ch...]}
# on stdin; writes the JavaScript's results as JSON.
NODE = r"""
const api = require(process.argv[1]);
let input = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (d) => { input += d; });
process.stdin.on("end", () => {
  const job = JSON.parse(input);
  const out = {
    parse: (job.parse || []).map((t) => api.tryParse(t)),
    check: (job.check || []).map(([a, t]) => api.checkAnswer(a, t)),
    format: (job.format || []).map(([x, p]) => api.formatG(x, p)),
    names: (job.names || []).map((c) => api.charName(c)),
    table: Object.keys(api.NAMES),
  };
  process.stdout.write(JSON.stringify(out));
});
"""


def run_js(**job) -> dict:
    node = shutil.which("node")
    if node is None:
        if os.environ.get("CI") == "true":
            pytest.fail("CI=true and node is missing (Debian: apt-get install nodejs)")
        pytest.skip("Node.js is not installed (Debian: apt-get install nodejs)")
    done = subprocess.run([node, "-e", NODE, str(ANSWERS_JS)], input=json.dumps(job), capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def python_parse(text):
    try:
        value = parse_answer(text)
    except AnswerError as err:
        return {"ok": False, "error": str(err)}
    return {"ok": True, "value": list(value) if isinstance(value, tuple) else value}


_UNNAMED = re.compile(r"(unexpected character U\+[0-9A-F]{4,6}) .+?( at position \d+)$")


def same_message(python: str, js: str, exact: bool = False) -> bool:
    """Equal, or (unless ``exact``) equal once Python's character name is dropped."""
    return js == python or (not exact and js == _UNNAMED.sub(r"\1\2", python))


def same_value(python, js) -> bool:
    if isinstance(python, list):
        return isinstance(js, list) and len(js) == len(python) and all(map(same_value, python, js))
    if python is None or js is None:
        return python is js
    # Math.pow and C's pow may differ in the last bit; everything else is IEEE arithmetic.
    return not isinstance(js, list) and math.isclose(python, js, rel_tol=1e-14, abs_tol=0.0)


VALID = [
    "0.25", "  -3 ", "1.5e-3", "2E2", "3/4", "1 + 2*3", "(1 + 2)*3", "-2^2", "2^3^2", "2**-1", "0.65**10",
    "sqrt(5)", "√5/2", "1/sqrt(4 + 1e-5)", "−1 × 2 ÷ 4", "3·2", ".5", "5.", "1.e5", "–2", "SQRT(2)", "Sqrt 9",
    "2 ** 0.5", "(-2)^3", "(-2)^-3", "0^0", "1e100", "-1e100", "1e-320", "0.1+0.2",
    "(1, -1, 1, -1)", "[0.5, 1/2]", "1, 2, 3", "(-3/sqrt(5), 2^-1)", "1,5", "(1,2)", "[ 1 , 2 ]",
    "\u00a012\u00a0", "\t7", "- - 3", "+-+1", "2×*3", "((2))", "√√16", "sqrt(2)^2", "10**64", "10**-64",
    "(" * (MAX_DEPTH - 1) + "1" + ")" * (MAX_DEPTH - 1), " " * (MAX_LENGTH - 1) + "1",
    ",".join(["1"] * 64), "-0", "0*-1",
]

REFUSED = [
    "１２３", "１", "٣", "\u200f12", "1\u202e2", "1\x00", "🙂", "", "   ", "\t\n", "1/0", "0^-1", "sqrt(-1)", "(-8)^(1/3)",
    "1,", ",", "()", "(1,2)+1", "((1,2))", "1e", "nan", "inf", "1_000", "0x10", "1 2", "+", "x", "abc",
    "foo(1)", "__import__('os')", "eval('2')", "9**9**9**9", "9^9^9^9", "2**1000", "10**10**10", "1e999999",
    "1e308", "1e9999", "(10**64)**(10**64)", "2^65", "2^-65", ".", "1..2", "1e+", "(1", "1)", "(1,2", "[1,2,",
    "(" * (MAX_DEPTH + 1) + "1" + ")" * (MAX_DEPTH + 1), "-" * 150 + "1", "sqrt(" * 30 + "2" + ")" * 30,
    " " * MAX_LENGTH + "1", "x" * 10**4, "1" * 1000, ",".join(["1"] * 65), ",".join(["1"] * 99), "½", "π",
    "2²", "1 000\u202f000", "1\u20092", "1=1", "1;2", "'1'", "1%", "−−", "3 * ", "*3", "1 / / 2", "√",
]

# Characters whose name the JavaScript must give exactly as Python does.
MUST_NAME = ["１２３", "１", "\u200f12", "1\u202e2", "__import__('os')", "½", "π", "2²", "1;2", "'1'", "1%", "1=1"]


def test_javascript_parses_like_python():
    texts = VALID + REFUSED
    js = run_js(parse=texts)["parse"]
    for text, got in zip(texts, js):
        want = python_parse(text)
        assert got["ok"] == want["ok"], (text[:40], want, got)
        if want["ok"]:
            assert same_value(want["value"], got["value"]), (text, want, got)
        else:
            assert same_message(want["error"], got["error"], exact=text in MUST_NAME), (text[:40], want, got)
    assert sum(python_parse(t)["ok"] for t in VALID) == len(VALID)
    assert not any(python_parse(t)["ok"] for t in REFUSED)


def test_javascript_refuses_the_hostile_answers_as_python_does(tmp_path):
    _, answers = hostile_answers(tmp_path)
    js = run_js(parse=answers)["parse"]
    for text, got in zip(answers, js):
        want = python_parse(text)
        assert not want["ok"] and not got["ok"], text[:40]
        assert same_message(want["error"], got["error"]), (text[:40], want, got)


def book_answers() -> list[Answer]:
    return [variant(2024, "book", name).answer for name in FAMILIES] + [
        Answer("number", 1.0), Answer("number", 0.0), Answer("number", -2.5e-7, rel=0, abs=1e-9),
        Answer("number", 45.0, rel=0, abs=0.1), Answer("vector", (1.0, 2.0)), Answer("vector", (0.0, 0.0, 1e-9)),
        Answer("choice", 2, choices=("p", "q", "r", "s")),
    ]


def typed_attempts(answer: Answer) -> list[str]:
    """The right text, near misses on both sides of the tolerance, the wrong shape and garbage."""
    attempts = [answer.text, "A", " b ", "(C)", "D.", "d)", "E", "AB", "", "Ａ", "ı", "maybe", "1", "1,2", "x",
                "(1, 2, 3)", "9**9**9**9", "__import__('os')"]
    tol = answer.tolerance()
    if answer.kind == "number":
        for k in (0.5, 0.99, 1.01, 2, 10):
            attempts += [repr(answer.value + k * tol), repr(answer.value - k * tol)]
    elif answer.kind == "vector":
        for k in (0.5, 1.5):
            moved = list(answer.value)
            moved[-1] += k * tol
            attempts.append("(" + ", ".join(map(repr, moved)) + ")")
        attempts.append("[" + ", ".join(map(repr, answer.value)) + "]")
        attempts.append(", ".join(map(repr, answer.value[:-1])))
    return attempts


def test_javascript_checks_like_python():
    pairs = [(answer, text) for answer in book_answers() for text in typed_attempts(answer)]
    js = run_js(check=[[answer.to_json(), text] for answer, text in pairs])["check"]
    verdicts = {True: 0, False: 0}
    for (answer, text), got in zip(pairs, js):
        want = check_answer(answer, text)
        assert got["correct"] == want.correct, (answer.text, text, want, got)
        assert same_message(want.message, got["message"]), (answer.text, text, want.message, got["message"])
        python_value = list(want.value) if isinstance(want.value, tuple) else want.value
        assert same_value(python_value, got["value"]), (text, want.value, got["value"])
        verdicts[want.correct] += 1
    # every problem's own key is accepted; the corpus has both verdicts in number
    assert all(check_answer(a, a.text).correct for a in book_answers())
    assert verdicts[True] >= len(book_answers()) and verdicts[False] > 5 * len(book_answers())


def test_javascript_formats_numbers_as_python_g():
    values = [0.0, -0.0, 1.0, -1.0, 0.1, 1e-5, 1.5e-5, 0.0001, 0.00012345678, 123456.0, 999999.4, 999999.6,
              1234567.0, 1e100, 3.87420489e8, 0.049938, 4.4721e-3, 5e-7, 1e-6, 123.456789, 2.0 ** 60, 1 / 3]
    job = [[x, p] for x in values for p in (3, 6)]
    got = run_js(format=job)["format"]
    assert got == [format(x, f".{p}g") for x, p in job]


@settings(max_examples=8, deadline=None)
@given(st.lists(st.floats(allow_nan=False, allow_infinity=False), min_size=100, max_size=100))
def test_javascript_g_format_on_random_floats(values):
    job = [[x, p] for x in values for p in (3, 6)]
    assert run_js(format=job)["format"] == [format(x, f".{p}g") for x, p in job]


GRAMMAR = list("0123456789.eE+-*/^(),[] ") + ["sqrt", "√", "−", "×", "·", "÷", "\u00a0", "**", "x", "_", "１"]


@settings(max_examples=8, deadline=None)
@given(st.lists(st.lists(st.sampled_from(GRAMMAR), max_size=25).map("".join) | st.text(max_size=12),
                min_size=150, max_size=150))
def test_javascript_agrees_on_random_text(texts):
    js = run_js(parse=texts)["parse"]
    for text, got in zip(texts, js):
        want = python_parse(text)
        assert got["ok"] == want["ok"], (text, want, got)
        if want["ok"]:
            assert same_value(want["value"], got["value"]), (text, want, got)
        else:
            assert same_message(want["error"], got["error"]), (text, want, got)


def test_javascript_character_names_are_unicode_names():
    characters = (run_js()["table"] + [chr(c) for c in range(0xFF10, 0xFF1A)] + [chr(c) for c in range(0xFF21, 0xFF3B)]
                  + [chr(c) for c in range(0xFF41, 0xFF5B)] + [chr(c) for c in range(0x660, 0x66A)]
                  + [chr(c) for c in range(0x966, 0x970)] + ["\x00", "\n", "\x7f", "\x9f"])
    names = run_js(names=characters)["names"]
    assert names == [unicodedata.name(c, "unnamed character") for c in characters]


def test_no_dynamic_evaluation_in_the_javascript():
    source = answers_script()
    code = re.sub(r"/\*.*?\*/|//[^\n]*", "", source, flags=re.S)
    for word in ("eval(", "Function(", "setTimeout(", "setInterval(", "innerHTML", "import("):
        assert word not in code, word


def test_static_checker_embeds_each_problem_answer_and_refuses_no_problems():
    problems = {variant(2024, "book", name).title: variant(2024, "book", name) for name in FAMILIES}
    page = static_checker(problems)
    data = re.search(r'<script type="application/json" class="lnw-answers">(.*?)</script>', page).group(1)
    assert json.loads(data) == [p.answer.to_json() for p in problems.values()]
    options = re.findall(r'<option value="(\d+)">', page)
    assert options == [str(i) for i in range(len(problems))]
    assert "eval(" not in page
    with pytest.raises(ValueError, match="problems"):
        static_checker({})


# --- the form in Chromium, no kernel -------------------------------------------------------------

BOOK_PROBLEMS = {variant(2024, "book", name).title: variant(2024, "book", name)
                 for name in ("residual_growth", "layer_norm_forward", "identity_path")}


def test_checker_in_a_browser_without_a_kernel(tmp_path_factory, monkeypatch):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import Select, WebDriverWait

    with explorer_page(tmp_path_factory, "practice checker", [lambda: show_checker(BOOK_PROBLEMS)]) as (driver, url):
        driver.get(url)
        WebDriverWait(driver, 10).until(
            lambda d: d.find_element(By.CSS_SELECTOR, "form.lnw-checker").get_attribute("data-lnw-ready") == "1")
        form = driver.find_element(By.CSS_SELECTOR, "form.lnw-checker")
        menu = Select(form.find_element(By.NAME, "problem"))
        box = form.find_element(By.NAME, "answer")
        button = form.find_element(By.CSS_SELECTOR, "button[type=submit]")
        verdict = form.find_element(By.CSS_SELECTOR, ".lnw-verdict")
        assert verdict.get_attribute("aria-live") == "polite"
        # every control has a label that names it
        for control in (form.find_element(By.NAME, "problem"), box):
            label = form.find_element(By.CSS_SELECTOR, f'label[for="{control.get_attribute("id")}"]')
            assert label.text in ("Problem", "Answer")

        def check(title, text, enter=False):
            menu.select_by_visible_text(title)
            box.clear()
            box.send_keys(text)
            if enter:
                box.send_keys(Keys.ENTER)
            else:
                button.click()
            return verdict.text

        residual, vector, choice = BOOK_PROBLEMS.values()
        assert check(residual.title, residual.answer.text) == "✔ correct"
        assert driver.current_url == url  # the form checked; it did not submit anywhere
        wrong = residual.answer.value * 1.1
        expected = check_answer(residual.answer, repr(wrong)).message
        assert check(residual.title, repr(wrong), enter=True) == f"✘ {expected}"
        assert "wrong" in expected
        assert check(vector.title, vector.answer.text, enter=True) == "✔ correct"
        assert check(vector.title, "１") == "✘ " + check_answer(vector.answer, "１").message
        assert "FULLWIDTH DIGIT ONE" in verdict.text and "could not read" in verdict.text
        assert check(vector.title, "9**9**9**9") == "✘ " + check_answer(vector.answer, "9**9**9**9").message
        letter = choice.answer.text
        assert check(choice.title, letter.lower()) == "✔ correct"
        other = "B" if letter != "B" else "A"
        assert check(choice.title, other) == f"✘ wrong: {other} is not the right choice"
        menu.select_by_visible_text(residual.title)  # a new problem clears the old verdict
        assert verdict.text == ""
        # keyboard only: Tab from the menu reaches the answer box, then the button
        state = driver.execute_script("""
            const f = document.querySelector('form.lnw-checker');
            f.querySelector('select').focus();
            return [document.activeElement.name, getComputedStyle(f.querySelector('.lnw-verdict')).color];""")
        assert state[0] == "problem"
        driver.switch_to.active_element.send_keys(Keys.TAB)
        assert driver.switch_to.active_element.get_attribute("name") == "answer"
        errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
        assert not errors, errors


def test_checker_has_no_wcag_violation_with_either_verdict(tmp_path_factory):
    """axe-core's WCAG 2.1 A/AA rules on the checker, with a right and then a wrong verdict shown."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    from test_accessibility import AXE, AXE_HINT, AXE_RUN_JS, WCAG_TAGS, describe

    if not AXE.exists():
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true and axe-core is missing at {AXE}: {AXE_HINT}")
        pytest.skip(f"axe-core not installed at {AXE}: {AXE_HINT}")
    with explorer_page(tmp_path_factory, "practice checker axe", [lambda: show_checker(BOOK_PROBLEMS)]) as (driver, url):
        driver.get(url)
        WebDriverWait(driver, 10).until(
            lambda d: d.find_element(By.CSS_SELECTOR, "form.lnw-checker").get_attribute("data-lnw-ready") == "1")
        driver.execute_script(AXE.read_text(encoding="utf-8"))
        residual = next(iter(BOOK_PROBLEMS.values()))
        for text in (residual.answer.text, "9**9**9**9"):
            box = driver.find_element(By.NAME, "answer")
            box.clear()
            box.send_keys(text)
            driver.find_element(By.CSS_SELECTOR, "form.lnw-checker button").click()
            assert driver.find_element(By.CSS_SELECTOR, ".lnw-verdict").text
            driver.set_script_timeout(120)
            violations = driver.execute_async_script(AXE_RUN_JS, WCAG_TAGS, {})
            assert not violations, f"checker with verdict for {text!r}:\n{describe(violations)}"


def _menu_labels(html_text: str) -> list[str]:
    import html as html_module

    select = re.search(r'<select[^>]*name="problem"[^>]*>(.*?)</select>', html_text, re.S).group(1)
    return [html_module.unescape(label) for label in re.findall(r"<option[^>]*>(.*?)</option>", select)]


def _page_menu():
    from lnworked.practice.widget import page_numbered

    problems = {name: variant(2024, "book", name) for name in FAMILIES}
    chapters = ROOT / "book" / "chapters"
    return problems, page_numbered(problems, chapters / "07_practice.ipynb", ROOT / "book" / "_toc.yml")


def test_checker_menu_follows_the_page_order_of_the_notebook():
    """Read the raw notebook JSON line by line (not through nbformat): the order in which the
    exercises show each family's statement is the order of the menu, and the k-th option is numbered k."""
    problems, menu = _page_menu()
    raw = (ROOT / "book" / "chapters" / "07_practice.ipynb").read_text(encoding="utf-8")
    shown = re.findall(r"glue:md\}\s+(\w+)-statement", raw)
    assert [problem.family for problem in menu.values()] == shown
    assert sorted(shown) == sorted(problems)
    labels = _menu_labels(static_checker(menu))
    assert [label.split(" ", 1)[0].split(".")[1] for label in labels] == [str(k) for k in range(1, len(labels) + 1)]
    titles = re.findall(r"\{exercise\}\s*([^\n\"]*?)\\n", raw)
    assert [label.split(" ", 1)[1] for label in labels] == [json.loads(f'"{t}"') for t in titles]


def test_checker_menu_matches_the_built_pages_exercise_numbers():
    """The built book is the page a reader sees: its "Exercise N.k (title)" headings, in order, are the menu."""
    page = Path(os.environ.get("LNWORKED_BOOK_HTML", ROOT / "book" / "_build" / "html")) / "chapters" / "07_practice.html"
    if not page.exists():
        pytest.skip(f"the built practice page {page} is missing (run `make book`)")
    import html as html_module

    headings = re.findall(r"Exercise (\d+\.\d+) </span> \((.*?)\)</p>", page.read_text(encoding="utf-8"))
    built = [f"{number} {html_module.unescape(title)}" for number, title in dict.fromkeys(headings)]
    built = [label.replace("\u2019", "'") for label in built]  # Sphinx's smart quotes
    assert _menu_labels(static_checker(_page_menu()[1])) == built


def test_page_numbered_refuses_a_problem_the_page_does_not_show():
    from lnworked.practice.widget import page_numbered

    problems = {name: variant(2024, "book", name) for name in FAMILIES}
    extra = {**problems, "not_on_the_page": problems[next(iter(problems))]}
    extra["not_on_the_page"] = type(extra["not_on_the_page"])(**{**extra["not_on_the_page"].__dict__, "family": "not_on_the_page"})
    with pytest.raises(ValueError, match=r"^problems: .*not_on_the_page"):
        page_numbered(extra, ROOT / "book" / "chapters" / "07_practice.ipynb", ROOT / "book" / "_toc.yml")
