"""The teaching apparatus, read from the built HTML and the notebook sources.

Every teaching page (chapters 1 to 8 in the book's numbering, chapter 3's section page on the
scalar toy and chapter 6's on warmup over training) starts with its title, then its learning goals and
prerequisites, and ends with a summary and at least three exercises whose solutions are
folded; every forecast and self-check prompt of the source texts is on a page with a folded
answer; no page shows plumbing (a ``glue(`` call, an import-only cell); the chapters use the
book's one notation (book/notation.md), not the retired spellings.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import nbformat
import pytest
from bs4 import BeautifulSoup

from book_toc import toc_files

ROOT = Path(__file__).resolve().parent.parent
BOOK = ROOT / "book"
HTML = Path(os.environ.get("LNWORKED_BOOK_HTML", BOOK / "_build" / "html")).resolve()
TEACHING = [name for name in toc_files() if re.match(r"chapters/0[1-6]_", name)]
BUILT = [name for name in toc_files() if (HTML / f"{name}.html").exists()] or toc_files()
PROMPTS = ([f"forecast-004-ex{n}" for n in range(1, 9)] + [f"selfcheck-004-{n}" for n in range(1, 6)])


def soup(name: str) -> BeautifulSoup:
    path = HTML / f"{name}.html"
    if not path.exists():
        pytest.fail(f"no built page {path}: run `make book` first (`make test` builds it)")
    return BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")


def article(name: str):
    return soup(name).select_one("article.bd-article") or soup(name).select_one("main")


def test_there_are_fourteen_teaching_pages():
    """Chapters 1 to 8, chapter 3's section page on the scalar toy, and chapter 6's five on warmup over
    training, on what its steps leave behind, on the rate Adam tolerates, on what that rate explains
    about the runs, and on the chapter's answer."""
    assert len(TEACHING) == 14 and {"chapters/03_scalar_toy", "chapters/05_warmup_over_training",
                                    "chapters/05_warmup_leaves", "chapters/05_rate_threshold",
                                    "chapters/05_threshold_runs", "chapters/05_warmup_answer"} <= set(TEACHING)


@pytest.mark.slow
@pytest.mark.parametrize("name", TEACHING)
def test_chapter_opens_with_title_goals_and_prerequisites(name):
    body = article(name)
    first = next(el for el in body.find_all(True) if el.name in ("h1", "h2", "div") and (
        el.name != "div" or "cell" in el.get("class", []) or "admonition" in el.get("class", [])))
    assert first.name == "h1", f"{name}: the first thing on the page is {first.name} {first.get('class')}"
    first_section = body.find("h2")
    goals = body.select_one("div.admonition.goals")
    prerequisites = body.select_one("div.admonition.prerequisites")
    assert goals is not None and prerequisites is not None, name
    order = list(body.find_all(True))
    assert order.index(goals) < order.index(prerequisites) < order.index(first_section), name
    assert 3 <= len(goals.find_all("li")) <= 5, f"{name}: {len(goals.find_all('li'))} goals"
    assert prerequisites.find("a"), f"{name}: prerequisites link nowhere"


@pytest.mark.slow
@pytest.mark.parametrize("name", TEACHING)
def test_chapter_closes_with_summary_and_folded_exercises(name):
    body = article(name)
    headings = [re.sub(r"^[\d.]+\s*", "", h.get_text(" ", strip=True).rstrip("#").strip())
                for h in body.find_all("h2")]  # without the section number
    assert headings[-2:] == ["Summary", "Exercises"], f"{name}: last sections {headings[-3:]}"
    exercises_section = body.find_all("h2")[-1].find_parent("section")
    exercises = exercises_section.select("div.exercise")
    solutions = exercises_section.select("div.solution, details.solution")
    assert len(exercises) >= 3, f"{name}: {len(exercises)} exercises"
    assert len(solutions) == len(exercises), f"{name}: {len(solutions)} solutions for {len(exercises)} exercises"
    for solution in solutions:
        classes = solution.get("class", [])
        assert solution.name == "details" or "dropdown" in classes, f"{name}: a solution is not folded: {classes}"
        assert not solution.has_attr("open"), f"{name}: a solution is open"
    for exercise in exercises:
        assert exercise.select_one("a.reference.internal"), f"{name}: an exercise does not link to what it practises"


@pytest.mark.slow
def test_every_source_prompt_is_on_a_page_with_a_folded_answer():
    found = {}
    for name in toc_files():
        page = soup(name)
        for prompt in PROMPTS:
            element = page.find(id=prompt)
            if element is not None:
                found[prompt] = (name, element)
    missing = sorted(set(PROMPTS) - set(found))
    assert not missing, f"prompts not on any page: {missing}"
    for prompt, (name, element) in found.items():
        answer = element.select_one(".dropdown, details")
        assert answer is not None, f"{prompt} on {name} has no folded answer"
        assert not answer.has_attr("open"), f"{prompt} on {name}: the answer is open"


def _visible_code_cells(name: str) -> list[str]:
    return [pre.get_text() for pre in soup(name).select("div.cell_input pre")]


IMPORT_LINE = re.compile(r"^\s*(?:from\s+\S+\s+)?import\s|^\s*$|^\s*#")


@pytest.mark.slow
@pytest.mark.parametrize("name", toc_files())
def test_no_page_shows_glue_calls_or_import_only_cells(name):
    for code in _visible_code_cells(name):
        assert "glue(" not in code, f"{name} shows a glue call: {code[:80]!r}"
        assert not all(IMPORT_LINE.match(line) for line in code.splitlines()), f"{name} shows an import-only cell"


@pytest.mark.slow
@pytest.mark.parametrize("name", toc_files())
def test_visible_code_lines_fit_a_desktop_column(name):
    long = [line for code in _visible_code_cells(name) for line in code.splitlines() if len(line) > 77]
    assert not long, f"{name}: {len(long)} code lines longer than 77 characters (the column at 1280 px), e.g. {long[0][:60]!r}"


# --- notation, on the sources --------------------------------------------------------------

RETIRED = {
    r"\\epsilon": re.compile(r"(?<!var)\\epsilon\b"),
    "depth written as N": re.compile(r"\\sqrt\{?\s*N\b|x_\{?N\}?\b|\$N\s*=|\$N\$ (?:layers|additions|blocks)|"
                                     r"(?:after|over|of) \$N\$|\(x_N\)"),
    "layer index i or l": re.compile(r"x_\{?[il]\s*\+\s*1\}?|x_l\b|F_l\b|\\partial x_[il]\b"),
    "'seed' for a source text": re.compile(r"\bseeds? (?:text )?00[0124]\b|\bseed texts?\b|\bthe seeds\b", re.I),
}


def _prose(path: Path) -> str:
    if path.suffix == ".md":
        return path.read_text(encoding="utf-8")
    cells = nbformat.read(path, as_version=4).cells
    return "\n".join(cell.source for cell in cells if cell.cell_type == "markdown")


def _pages() -> list[Path]:
    found = []
    for name in toc_files():
        for suffix in (".ipynb", ".md"):
            if (BOOK / f"{name}{suffix}").exists():
                found.append(BOOK / f"{name}{suffix}")
    return found


@pytest.mark.parametrize("rule", RETIRED, ids=list(RETIRED))
def test_pages_do_not_use_retired_notation(rule):
    pattern = RETIRED[rule]
    offenders = {}
    for path in _pages():
        if path.name == "notation.md":
            continue  # it names the retired spellings to retire them
        hits = pattern.findall(_prose(path))
        if hits:
            offenders[path.name] = hits[:3]
    assert not offenders, f"{rule}: {offenders}"


def test_retired_patterns_catch_what_they_retire():
    samples = {r"\\epsilon": r"$\epsilon = 0$", "depth written as N": r"$\sqrt{N}$ growth",
               "layer index i or l": r"$x_{i+1} = x_i$", "'seed' for a source text": "seed 004's Ex 3"}
    for rule, sample in samples.items():
        assert RETIRED[rule].search(sample), rule
    assert not RETIRED[r"\\epsilon"].search(r"\varepsilon")


# --- forecasts hide their answers, on the sources ------------------------------------------

FORECAST = re.compile(r"^(?P<fence>:{3,})\{admonition\} Forecast[ \t]*$", re.M)
GLUE_KEY = re.compile(r"\{glue(?::\w+)?\}`((?:[^`:]+::)?[^`:]+)")  # a key, or doc::key from another page
FOLDED = {"remove-cell", "remove-output", "hide-output", "hide-cell"}
AFTER_CHARS = 300
FIGURE_BLOCK = re.compile(r"^```\{glue:figure\}.*?^```[ \t]*$", re.M | re.S)


def forecast_leaks(cells) -> list[str]:
    """What a reader sees right under each forecast without opening its answer.

    A leak is a code cell with visible output directly after a cell that ends with the
    forecast, or a glue key used in the forecast's answer within the first AFTER_CHARS
    characters of the markdown that follows the forecast (across cells, skipping code).
    """
    leaks = []
    for index, cell in enumerate(cells):
        if cell.cell_type != "markdown":
            continue
        for match in FORECAST.finditer(cell.source):
            close = re.compile(rf"^{match['fence']}[ \t]*$", re.M).search(cell.source, match.end())
            assert close is not None, f"cell {index}: a forecast admonition is not closed"
            body = cell.source[match.end():close.start()]
            answer = body.split("{admonition} Answer", 1)[1] if "{admonition} Answer" in body else ""
            # a figure folded into the answer is hidden with it; its caption's keys (the setup: steps,
            # seeds) are not the answer
            keys = set(GLUE_KEY.findall(FIGURE_BLOCK.sub("", answer)))
            after = cell.source[close.end():].strip()
            for follower in cells[index + 1:]:
                if len(after) >= AFTER_CHARS:
                    break
                if follower.cell_type == "markdown":
                    after += "\n\n" + follower.source.strip()
                elif not after and not FOLDED & set(follower.metadata.get("tags", [])):
                    leaks.append(f"cell {index}: a code cell with visible output directly follows the forecast")
            shown = sorted(keys & set(GLUE_KEY.findall(after[:AFTER_CHARS])))
            if shown:
                leaks.append(f"cell {index}: the text under the forecast shows its answer's {shown}")
    return leaks


@pytest.mark.parametrize("name", TEACHING)
def test_forecasts_do_not_show_their_answers_under_the_fold(name):
    cells = nbformat.read(BOOK / f"{name}.ipynb", as_version=4).cells
    assert any(FORECAST.search(cell.source) for cell in cells if cell.cell_type == "markdown"), f"{name}: no forecast"
    assert forecast_leaks(cells) == [], name


def test_forecast_leak_check_catches_the_old_patterns():
    new_md, new_code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell
    forecast = ("::::{admonition} Forecast\n:class: forecast\n\nWhich one squashes it?\n\n"
                ":::{admonition} Answer\n:class: dropdown\n\nPost-LN: {glue:text}`out`.\n:::\n::::\n")
    printed = new_code("print(change)")
    leaked = [new_md(forecast), new_code("glue('out', 1)", metadata={"tags": ["remove-cell"]}),
              new_md("LayerNorm divides the sum back to unit spread: {glue:text}`out`.")]
    assert len(forecast_leaks([new_md(forecast), printed, new_md("Two consequences.")])) == 1
    assert len(forecast_leaks(leaked)) == 1
    assert len(forecast_leaks([new_md(forecast + "\nPost-LN adds and then normalises:")] + leaked[1:])) == 1
    assert len(forecast_leaks([new_md(forecast + "\nIt maps the sum to {glue:text}`out`.")])) == 1
    printed.metadata["tags"] = ["hide-output"]
    hidden = [new_md(forecast), printed, new_md("Two consequences.\n\n" + "x" * AFTER_CHARS + " {glue:text}`out`")]
    assert forecast_leaks(hidden) == []
    # a number glued on another page (doc::key) is the same number under the fold
    other = forecast.replace("{glue:text}`out`", "{glue:text}`05_a.ipynb::out:s`")
    assert len(forecast_leaks([new_md(other + "\nIt maps the sum to {glue:text}`05_a.ipynb::out:.2f`.")])) == 1
    # a figure folded into the answer: its caption's keys under the fold are the setup, not a leak; the
    # answer's own words still are
    folded = forecast.replace("Post-LN: {glue:text}`out`.", "Post-LN: {glue:text}`out`.\n\n```{glue:figure} fig\n"
                              ":name: fig\n\nOver {glue:text}`steps` steps.\n```")
    assert forecast_leaks([new_md(folded + "\nFor {glue:text}`steps` steps.")]) == []
    assert len(forecast_leaks([new_md(folded + "\nIt is {glue:text}`out`.")])) == 1
    assert forecast_leaks([new_md(other + "\nIt maps the sum to {glue:text}`05_a.ipynb::other:.2f`.")]) == []


# --- the chain of chapter 6's argument says how each link is known -----------------------------

EVIDENCE = re.compile(r"\b(shown|shows|measured|open)\b")


def chain_links(chain) -> list[tuple[str, str]]:
    """The chain's parts in order, as (kind, text): kind is "box" or "arrow"."""
    parts = [(("box" if "chain-box" in el.get("class", []) else "arrow" if "chain-arrow" in el.get("class", [])
               else "other"), " ".join(el.get_text(" ").split())) for el in chain.find_all("div", recursive=False)]
    return parts


def chain_problems(parts) -> list[str]:
    kinds = [kind for kind, _ in parts]
    problems = []
    if not kinds or kinds[0] != "box" or kinds[-1] != "box":
        problems.append("the chain must start and end with a box")
    problems += [f"part {i}: two {a}s in a row" for i, (a, b) in enumerate(zip(kinds, kinds[1:])) if a == b]
    problems += [f"part {i}: not a box or an arrow" for i, kind in enumerate(kinds) if kind == "other"]
    problems += [f"arrow {i}: '{text[:40]}' does not say how the link is known" for i, (kind, text) in enumerate(parts)
                 if kind == "arrow" and not EVIDENCE.search(text)]
    return problems


@pytest.mark.slow
def test_chapter_6_chain_alternates_boxes_and_arrows_that_say_how_each_link_is_known():
    chain = article("chapters/05_warmup_answer").select_one("div.chain")
    assert chain is not None, "6.9, the chapter's answer, has no chain"
    parts = chain_links(chain)
    assert sum(kind == "box" for kind, _ in parts) >= 4
    assert chain_problems(parts) == []


ARROW_KINDS = {"shown": re.compile(r"(?<!not )\b(shows|shown)\b"), "measured": re.compile(r"\bmeasured\b"),
               "open": re.compile(r"\b(not shown|open)\b")}


def arrow_kind_problems(arrows: list[tuple[set[str], str]]) -> list[str]:
    """Each arrow, as (its classes, its text), is drawn as one kind (a class of ARROW_KINDS) that its words say."""
    problems = []
    for i, (classes, text) in enumerate(arrows):
        kinds = classes & set(ARROW_KINDS)
        if len(kinds) != 1:
            problems.append(f"arrow {i}: drawn as {sorted(kinds) or 'no kind'}")
        elif not ARROW_KINDS[next(iter(kinds))].search(text):
            problems.append(f"arrow {i}: drawn {next(iter(kinds))}, but its words say otherwise: '{text[:50]}'")
    return problems


@pytest.mark.slow
def test_chapter_6_chain_draws_each_arrow_as_the_kind_its_words_say():
    chain = article("chapters/05_warmup_answer").select_one("div.chain")
    arrows = [(set(el.get("class", [])), " ".join(el.get_text(" ").split()))
              for el in chain.find_all("div", recursive=False) if "chain-arrow" in el.get("class", [])]
    assert {kind for classes, _ in arrows for kind in classes & set(ARROW_KINDS)} == set(ARROW_KINDS)
    assert arrow_kind_problems(arrows) == []


def test_arrow_kind_check_catches_a_wrong_or_missing_kind():
    assert arrow_kind_problems([({"chain-arrow", "open"}, "consistent, not shown")]) == []
    assert len(arrow_kind_problems([({"chain-arrow", "shown"}, "consistent, not shown")])) == 1
    assert len(arrow_kind_problems([({"chain-arrow"}, "measured here")])) == 1
    assert len(arrow_kind_problems([({"chain-arrow", "shown", "open"}, "shown; why is open")])) == 1


def test_chain_check_catches_a_bare_arrow_and_two_boxes_in_a_row():
    good = [("box", "a"), ("arrow", "measured here"), ("box", "b")]
    assert chain_problems(good) == []
    assert len(chain_problems([("box", "a"), ("arrow", "so"), ("box", "b")])) == 1
    assert len(chain_problems([("box", "a"), ("box", "b")])) == 1
    assert len(chain_problems([("arrow", "measured"), ("box", "b")])) == 1


# --- 6.5 states the accounts' predictions before the runs that test them ----------------------

def account_order_problems(sources: list[str]) -> list[str]:
    """Where 6.5's accounts, forecasts and the measured moving workable rate (6.6) sit, in book order.

    The accounts (with what each predicts) come before the first forecast; the measurement that
    the workable rate moves, which the account *workable steps* leans on, comes only after the
    holds forecast that tests that account, so the forecast is a prediction, not a restatement.
    """
    text = "\n".join(sources)
    where = {key: text.find(marker) for key, marker in {
        "accounts": "(ch5w-accounts)=", "first forecast": ":class: forecast",
        "holds forecast": ":name: forecast-ch5w-holds", "moving workable": "```{glue:figure} ch5w-fig-workable-curve"}.items()}
    problems = [f"no {key}" for key, at in where.items() if at < 0]
    if not problems and where["accounts"] > where["first forecast"]:
        problems.append("the accounts come after the first forecast")
    if not problems and where["moving workable"] < where["holds forecast"]:
        problems.append("the moving workable rate is shown before the holds forecast")
    return problems


def test_chapter_6_5_states_accounts_before_forecasts_and_measures_after():
    cells = [cell for name in ("05_warmup_over_training", "05_warmup_leaves")
             for cell in nbformat.read(BOOK / "chapters" / f"{name}.ipynb", as_version=4).cells]
    sources = [cell.source for cell in cells if cell.cell_type == "markdown"]
    assert account_order_problems(sources) == []
    assert "| account: Post-LN needs |" in "\n".join(sources), "6.5's accounts are not a table of predictions"


def test_account_order_check_catches_the_old_order():
    accounts, forecast = "(ch5w-accounts)=", ":class: forecast\n:name: forecast-ch5w-holds"
    figure = "```{glue:figure} ch5w-fig-workable-curve"
    assert account_order_problems([accounts, forecast, figure]) == []
    assert account_order_problems([accounts, figure, forecast]) == ["the moving workable rate is shown before the holds forecast"]
    assert account_order_problems([forecast, accounts, figure]) == ["the accounts come after the first forecast"]
    assert account_order_problems([accounts, forecast]) == ["no moving workable"]
