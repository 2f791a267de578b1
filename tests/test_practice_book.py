"""The practice chapter (book/chapters/07_practice.ipynb), the live checker and the
instructor switch that builds the book without solutions."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import nbformat
import pytest
import yaml
from nbclient import NotebookClient

from lnworked.practice import FAMILIES, variant
from lnworked.practice.markup import breakable_equations
from lnworked.practice.widget import answer_checker

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
from bookconfig import main as bookconfig_main  # noqa: E402  (book tooling, not the library)
from bookconfig import without_solutions  # noqa: E402
CHAPTER = ROOT / "book" / "chapters" / "07_practice.ipynb"


@pytest.fixture(scope="module")
def notebook():
    return nbformat.read(CHAPTER, as_version=4)


def test_chapter_is_committed_clean(notebook):
    nbformat.validate(notebook)
    assert notebook.metadata.kernelspec.name == "python3"
    first, title, setup = notebook.cells[:3]
    assert first.cell_type == "code" and "remove-cell" in first.metadata.get("tags", [])
    assert first.source == "# colab-install (filled in by tools/sync_notebooks.py)" or "pip" in first.source
    # the title comes first on the page, then what the page is for; the imports are hidden
    assert title.cell_type == "markdown" and title.source.startswith("# Practice problems")
    assert ":class: goals" in title.source and ":class: prerequisites" in title.source
    assert setup.cell_type == "code" and "import" in setup.source
    assert "remove-cell" in setup.metadata.get("tags", [])
    for cell in notebook.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None


def test_code_cells_are_hidden_plumbing_with_short_lines(notebook):
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        tags = cell.metadata.get("tags", [])
        if "glue(" in cell.source or cell.source.lstrip().startswith(("from ", "import ")):
            assert "remove-cell" in tags, cell.source[:60]
        assert "remove-cell" in tags or "remove-input" in tags, cell.source[:60]
        if cell is not notebook.cells[0]:  # the install cell is managed by tools/sync_notebooks.py
            assert all(len(line) < 80 for line in cell.source.splitlines()), cell.source[:60]


def test_every_family_is_an_exercise_with_a_collapsed_solution(notebook):
    markdown = "\n".join(c.source for c in notebook.cells if c.cell_type == "markdown")
    for name in FAMILIES:
        label = f"ex-{name.replace('_', '-')}"
        assert re.search(rf"::::{{exercise}}[^\n]*\n:label: {label}\n\n\(Practises [^\n]*\)\n\n"
                         rf"```{{glue:md}} {name}-statement", markdown), name
        assert re.search(
            rf"::::{{solution}} {label}\n:class: dropdown\n\n```{{glue:md}} {name}-solution", markdown
        )


def chapter_labels() -> set[str]:
    """The MyST labels ``(chN-...)=`` and ``(chNw-...)=`` (the why-warmup chapter) of the chapter notebooks."""
    found = set()
    for path in sorted((ROOT / "book" / "chapters").glob("*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type == "markdown":
                found.update(re.findall(r"^\((ch[0-9]w?-[a-z0-9-]+)\)=", cell.source, re.M))
    return found


def exercise_blocks(notebook) -> dict[str, str]:
    markdown = "\n".join(c.source for c in notebook.cells if c.cell_type == "markdown")
    blocks = re.findall(r"::::{exercise}[^\n]*\n:label: ex-([a-z-]+)\n(.*?)\n::::", markdown, re.S)
    return {label.replace("-", "_"): body for label, body in blocks}


def test_every_family_links_to_the_section_that_teaches_it(notebook):
    """Issue 12, point 7: each problem links to an existing chapter section (not a solution)."""
    labels = chapter_labels()
    blocks = exercise_blocks(notebook)
    assert set(blocks) == set(FAMILIES)
    for name, body in blocks.items():
        refs = re.findall(r"{ref}`(?:[^`<]*<)?([^`<>]+)>?`", body.split("```{glue:md}")[0])
        sections = [r for r in refs if re.match(r"ch[1-6]w?-", r)]
        assert sections, f"{name} links to no chapter section"
        missing = [r for r in sections if r not in labels]
        assert not missing, f"{name} links to labels no chapter defines: {missing}"


def test_erratum_links_name_real_conceptual_errata(notebook):
    from lnworked.conceptual_errata import conceptual_errata

    anchors = {record.anchor for record in conceptual_errata()}
    used = set()
    for name, body in exercise_blocks(notebook).items():
        for ref in re.findall(r"{ref}`(?:[^`<]*<)?(concept-[^`<>]+)>?`", body):
            assert ref in anchors, (name, ref)
            used.add(ref)
    # the topics the source texts get wrong are linked from the problems that practise them
    for ref in ("concept-004-ex5-highway", "concept-004-ex6-bounded", "concept-004-ex7-toy-depth"):
        assert ref in used, ref


def test_chapter_executes_and_glues_every_statement_and_solution(notebook, monkeypatch):
    monkeypatch.setenv("LNWORKED_STATIC_BUILD", "1")
    nb = nbformat.from_dict(notebook)
    NotebookClient(nb, timeout=600, kernel_name="python3",
                   resources={"metadata": {"path": str(CHAPTER.parent)}}).execute()
    glued = {}
    printed = []
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            scrapbook = output.get("metadata", {}).get("scrapbook", {})
            markdown_key = scrapbook.get("mime_prefix", "") + "text/markdown"
            if scrapbook.get("name") and markdown_key in output["data"]:
                glued[scrapbook["name"]] = output["data"][markdown_key]
            if "text/markdown" in output.get("data", {}):
                printed.append(output["data"]["text/markdown"])
    seed_cell = next(c.source for c in nb.cells if "BOOK_SEED =" in c.source)
    seed = int(re.search(r"BOOK_SEED = (\d+)", seed_cell).group(1))
    for name in FAMILIES:
        problem = variant(seed, "book", name)
        # a numeric problem says how close an answer must be, in the handouts' own sentence
        tolerance = ("" if problem.answer.kind == "choice"
                     else f"\n\n*{problem.answer.tolerance_sentence()}*")
        assert glued[f"{name}-statement"] == breakable_equations(problem.statement) + tolerance
        assert glued[f"{name}-solution"].startswith(breakable_equations(problem.solution))
        assert problem.answer.text in glued[f"{name}-solution"]
        assert "|r_j|" not in glued[f"{name}-solution"]  # the rule's jargon stays in the handouts' key
    html = [o["data"]["text/html"] for c in nb.cells for o in c.get("outputs", []) if "text/html" in o.get("data", {})]
    assert any('class="lnw-checker"' in text and "lnwAnswers" in text for text in html)
    assert not any("widget-view" in str(c.get("outputs")) for c in nb.cells)


def test_live_checker_gives_feedback():
    problems = {name: variant(5, "book", name) for name in ("residual_growth", "identity_path")}
    box = answer_checker(problems)
    menu, row, result = box.children
    text, button = row.children
    menu.value = "residual_growth"
    text.value = problems["residual_growth"].answer.text
    button.click()
    assert "correct" in result.value and "✔" in result.value
    text.value = "__import__('os')"
    assert "could not read" in result.value and "✘" in result.value
    menu.value = "identity_path"
    assert result.value == ""
    text.value = "Z"
    button.click()
    assert "one letter" in result.value


def test_instructor_config_hides_solutions_and_keeps_the_rest(tmp_path):
    source = ROOT / "book" / "_config.yml"
    original = yaml.safe_load(source.read_text())
    target = tmp_path / "nested" / "_config_no_solutions.yml"
    assert bookconfig_main([str(source), str(target)]) == 0
    derived = yaml.safe_load(target.read_text())
    assert derived["sphinx"]["config"]["hide_solutions"] is True
    assert {k: v for k, v in derived.items() if k != "sphinx"} == {k: v for k, v in original.items() if k != "sphinx"}
    for name, path in (derived["sphinx"].get("local_extensions") or {}).items():
        assert os.path.isabs(path) and Path(path) == (source.parent / original["sphinx"]["local_extensions"][name]).resolve()
    assert "hide_solutions" not in (original["sphinx"].get("config") or {})


def test_without_solutions_does_not_change_its_input():
    config = {"title": "t", "sphinx": {"config": {"a": 1}, "local_extensions": {"ext": "_ext"}}}
    derived = without_solutions(config, "/book")
    assert config == {"title": "t", "sphinx": {"config": {"a": 1}, "local_extensions": {"ext": "_ext"}}}
    assert derived["sphinx"]["config"] == {"a": 1, "hide_solutions": True}
    assert derived["sphinx"]["local_extensions"] == {"ext": str(Path("/book/_ext").resolve())}
    assert without_solutions({})["sphinx"]["config"] == {"hide_solutions": True}


def test_bookconfig_reports_a_missing_file(tmp_path, capsys):
    assert bookconfig_main([str(tmp_path / "missing.yml"), str(tmp_path / "out.yml")]) == 2
    assert "bookconfig:" in capsys.readouterr().err
