"""``lnworked examples``, run as the real console script in a subprocess.

The console script next to this interpreter (``.venv/bin/lnworked``) is used; where it is
missing (an unusual install) the same entry point runs as ``python -m lnworked.cli``.
"""

import functools
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from lnworked import cli
from lnworked.examples import all_examples

REQUIRED_KEYS = {"id", "seed", "title", "inputs", "computed", "stated", "agrees", "note"}


def _command() -> list:
    script = Path(sys.executable).with_name("lnworked")
    if script.exists():
        return [str(script)]
    found = shutil.which("lnworked")
    return [found] if found else [sys.executable, "-m", "lnworked.cli"]


@functools.lru_cache(maxsize=None)
def run(*args, timeout=120):
    """Run ``lnworked *args`` once per process (each start imports the whole CLI)."""
    return subprocess.run([*_command(), *args], capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def table():
    return run("examples")


@pytest.fixture(scope="module")
def as_json():
    return run("examples", "--json")


@pytest.fixture(scope="module")
def library():
    return {r.id: r for r in all_examples()}


def test_examples_prints_a_table_with_a_header_and_one_row_per_record(table, library):
    assert table.returncode == 0, table.stderr
    assert table.stderr == ""
    lines = table.stdout.rstrip("\n").splitlines()
    assert lines[0].split() == ["id", "result", "computed", "stated", "agrees"]
    assert len(lines) == 1 + len(library)
    assert [line.split()[0] for line in lines[1:]] == list(library)


def test_table_marks_exactly_the_errata_rows(table, library):
    rows = {line.split()[0]: line for line in table.stdout.splitlines()[1:]}
    for example_id, record in library.items():
        marked = "NO (erratum)" in rows[example_id]
        assert marked == (record.agrees is False), example_id
        if record.agrees is True:
            assert rows[example_id].rstrip().endswith("yes"), example_id


def test_json_is_a_list_of_records_with_the_required_keys(as_json, library):
    assert as_json.returncode == 0, as_json.stderr

    def no_bare_nan(token):
        raise AssertionError(f"non-standard JSON constant {token}")

    records = json.loads(as_json.stdout, parse_constant=no_bare_nan)
    assert isinstance(records, list)
    assert [r["id"] for r in records] == list(library)
    for r in records:
        assert REQUIRED_KEYS <= set(r), r.get("id")


def test_json_records_carry_the_librarys_values(as_json, library):
    for r in json.loads(as_json.stdout):
        expected = library[r["id"]].to_dict()
        for key in REQUIRED_KEYS | {"quantities", "results"}:
            assert r[key] == expected[key], (r["id"], key)


def test_json_names_every_quantity_and_the_results_among_them(as_json, library):
    for r in json.loads(as_json.stdout):
        record = library[r["id"]]
        keys = [q["key"] for q in r["quantities"]]
        assert keys == [*record.inputs, *record.steps], r["id"]
        assert set(r["results"]) <= set(keys) and r["results"], r["id"]
        for q in r["quantities"]:
            assert q["label"] == record.quantity(q["key"]).label
            # A seed number sits on the quantity it states, with that quantity's own verdict.
            assert (q["stated"] is None) == (q["agrees"] is None), (r["id"], q["key"])


def test_table_shows_the_results_labels(table, library):
    rows = {line.split()[0]: line for line in table.stdout.splitlines()[1:]}
    for example_id, record in library.items():
        first_label = next(iter(record.results.values())).label
        assert first_label[:20] in rows[example_id], example_id


@pytest.mark.parametrize(
    "args, mentions",
    [
        (["examples", "--bogus"], "--bogus"),
        (["nonsense"], "nonsense"),
        ([], "command"),
    ],
)
def test_bad_arguments_exit_2_with_an_error_line_and_no_traceback(args, mentions):
    result = run(*args)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert result.stdout == ""
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("lnworked") and "error" in last and mentions in last


def test_bad_arguments_print_exactly_one_line():
    result = run("examples", "--bogus")
    assert len(result.stderr.strip().splitlines()) == 1


def test_a_value_error_inside_a_subcommand_becomes_one_line_and_exit_2(monkeypatch, capsys):
    """In-process: the CLI turns a library ValueError into one stderr line, never a traceback."""
    from lnworked import examples_cli

    def broken():
        raise ValueError("example_id: no worked example 'x'")

    monkeypatch.setattr(examples_cli, "all_examples", broken)
    assert cli.main(["examples"]) == 2
    err = capsys.readouterr().err
    assert err.strip().splitlines() == ["lnworked examples: example_id: no worked example 'x'"]
