"""pyproject.toml and environment.yml declare the same environment.

environment.yml (conda / Binder) must list, under ``pip:``, exactly the requirements of
pyproject's ``dependencies`` plus the ``book`` extra, with the same version specifiers, and
install the package itself (``-e .``). The ``dev`` extra (pytest, hypothesis, selenium, ...)
is deliberately left out of environment.yml: Binder readers run the book, not the tests.
"""

import importlib
import tomllib
from importlib.metadata import entry_points
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
JAX_STACK = ["jax", "jaxlib", "flax", "optax"]


@pytest.fixture(scope="module")
def pyproject():
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def environment():
    return yaml.safe_load((ROOT / "environment.yml").read_text(encoding="utf-8"))


def _requirements(lines) -> dict:
    """``{canonical name: SpecifierSet}``; a name listed twice is an error."""
    out = {}
    for line in lines:
        req = Requirement(line)
        name = canonicalize_name(req.name)
        assert name not in out, f"{name} is listed twice"
        out[name] = req.specifier
    return out


def pyproject_requirements(pyproject) -> dict:
    project = pyproject["project"]
    return _requirements(project["dependencies"] + project["optional-dependencies"]["book"])


def _pip_section(environment) -> list:
    sections = [d["pip"] for d in environment["dependencies"] if isinstance(d, dict) and "pip" in d]
    assert len(sections) == 1, "environment.yml needs exactly one pip: section"
    return sections[0]


def environment_requirements(environment) -> dict:
    return _requirements(line for line in _pip_section(environment) if not line.startswith("-e"))


def drift(pyproject, environment) -> list:
    """Human-readable differences between the two files (empty when in sync)."""
    ours, theirs = pyproject_requirements(pyproject), environment_requirements(environment)
    problems = [f"{n}: in pyproject, missing from environment.yml" for n in sorted(set(ours) - set(theirs))]
    problems += [f"{n}: in environment.yml, not in pyproject" for n in sorted(set(theirs) - set(ours))]
    problems += [
        f"{n}: pyproject {ours[n] or '(any)'} vs environment.yml {theirs[n] or '(any)'}"
        for n in sorted(set(ours) & set(theirs))
        if ours[n] != theirs[n]
    ]
    return problems


# --- the two files agree ---------------------------------------------------------------------


def test_environment_yml_has_the_same_requirements_as_pyproject(pyproject, environment):
    assert drift(pyproject, environment) == []


def test_drift_check_notices_a_changed_missing_or_extra_requirement(pyproject, environment):
    import copy

    changed = copy.deepcopy(environment)
    pip = _pip_section(changed)
    pip[pip.index(next(line for line in pip if line.startswith("numpy")))] = "numpy>=2.0"
    assert any(p.startswith("numpy") for p in drift(pyproject, changed))

    missing = copy.deepcopy(environment)
    _pip_section(missing).remove(next(line for line in _pip_section(missing) if line.startswith("sympy")))
    assert any(p.startswith("sympy") for p in drift(pyproject, missing))

    extra = copy.deepcopy(environment)
    _pip_section(extra).append("pytest>=8.0")
    assert any(p.startswith("pytest") for p in drift(pyproject, extra))


def test_environment_yml_installs_the_package_itself(environment):
    assert any(line.replace(" ", "") in ("-e.", "-e./") for line in _pip_section(environment))


def test_environment_python_matches_requires_python(pyproject, environment):
    conda = [d for d in environment["dependencies"] if isinstance(d, str)]
    python = [Requirement(d) for d in conda if Requirement(d).name == "python"]
    assert len(python) == 1
    assert python[0].specifier == SpecifierSet(pyproject["project"]["requires-python"])


# --- version policy ------------------------------------------------------------------------------


@pytest.mark.parametrize("source", ["pyproject", "environment"])
@pytest.mark.parametrize("package", JAX_STACK)
def test_jax_stack_has_a_lower_bound_only(pyproject, environment, source, package):
    """Installing lnworked into Colab must never replace the JAX build Colab ships."""
    reqs = pyproject_requirements(pyproject) if source == "pyproject" else environment_requirements(environment)
    spec = reqs[package]
    assert len(spec) >= 1, f"{package} needs a lower bound"
    assert {s.operator for s in spec} == {">="}, f"{package}: {spec} is not lower-bounds-only"


@pytest.mark.parametrize("source", ["pyproject", "environment"])
def test_jupyter_book_is_pinned_below_2(pyproject, environment, source):
    """Jupyter Book 2 has no _toc.yml and no Colab button."""
    reqs = pyproject_requirements(pyproject) if source == "pyproject" else environment_requirements(environment)
    spec = reqs["jupyter-book"]
    assert any(s.operator == "<" and Version(s.version) <= Version("2") for s in spec)
    assert not spec.contains("2.0.0") and not spec.contains("2.0.0a1", prereleases=True)
    assert spec.contains("1.0.4.post1")  # the release that builds this book offline


def test_book_and_dev_extras_exist_and_dev_holds_the_test_tools(pyproject):
    extras = pyproject["project"]["optional-dependencies"]
    assert {"book", "dev"} <= set(extras)
    dev = _requirements(extras["dev"])
    assert {"pytest", "hypothesis", "pyyaml"} <= set(dev)


# --- console script ----------------------------------------------------------------------------


def test_lnworked_console_script_is_declared_and_points_at_a_callable(pyproject):
    target = pyproject["project"]["scripts"]["lnworked"]
    module, _, attribute = target.partition(":")
    assert callable(getattr(importlib.import_module(module), attribute))


def test_installed_console_script_matches_pyproject(pyproject):
    installed = entry_points(group="console_scripts", name="lnworked")
    assert [ep.value for ep in installed] == [pyproject["project"]["scripts"]["lnworked"]]
