"""The one CSV format of the stored stress-test tables (lnworked.stress.table_csv).

Independent routes: the written text against a file spelled out by hand; the float format
against IEEE float32's property that 9 significant digits identify every float32 (and 8 do not);
every committed data file against its own bytes after a read and a write back.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

import lnworked
from lnworked.stress.branch_scale import read_branch_scale_csv, write_branch_scale_csv
from lnworked.stress.deepnorm import read_deepnorm_csv, write_deepnorm_csv
from lnworked.stress.family_runs import read_family_csv, write_family_csv
from lnworked.stress.first_step import read_first_step_csv, write_first_step_csv
from lnworked.stress.profiles import (read_profiles_csv, read_step_response_csv, write_profiles_csv,
                                      write_step_response_csv)
from lnworked.stress.sweep import read_sweep_csv, write_sweep_csv
from lnworked.stress.table_csv import read_rows, write_rows
from lnworked.stress.xiong import read_xiong_csv, write_xiong_csv

DATA = Path(lnworked.__file__).parent / "data"
FIELDS = ("name", "n", "x", "ok", "note")
ROWS = [{"name": "Post-LN, α only", "n": 3, "x": 0.1 + 0.2, "ok": True, "note": None},
        {"name": "Pre-LN", "n": -12, "x": 2.5e-7, "ok": False, "note": "kept as text"}]


def _write(tmp_path, text: str) -> Path:
    path = tmp_path / "t.csv"
    path.write_bytes(text.encode("utf-8"))
    return path


def test_written_text_is_the_format_spelled_out_by_hand(tmp_path):
    write_rows(ROWS, tmp_path / "t.csv", FIELDS, floats=("x",), bools=("ok",))
    assert (tmp_path / "t.csv").read_bytes().decode("utf-8") == (
        "name,n,x,ok,note\r\n"
        '"Post-LN, α only",3,0.3,1,\r\n'
        "Pre-LN,-12,2.5e-07,0,kept as text\r\n")


def test_round_trip_restores_ints_floats_bools_and_strings(tmp_path):
    write_rows(ROWS, tmp_path / "t.csv", FIELDS, floats=("x",), bools=("ok",))
    back = read_rows(tmp_path / "t.csv", FIELDS, ints=("n",), floats=("x",), bools=("ok",), defaults={"note": None})
    assert back == [{**ROWS[0], "x": 0.3}, ROWS[1]]
    assert [type(v) for v in back[1].values()] == [str, int, float, bool, str]
    # without a default an empty cell of a text column stays the empty string
    assert read_rows(tmp_path / "t.csv", FIELDS, ints=("n",))[0]["note"] == ""


def test_a_float_that_needs_nine_digits_survives_and_eight_would_not(tmp_path):
    x = 1.23456789
    for digits, expected in ((9, x), (8, 1.2345679)):
        write_rows([{"x": x}], tmp_path / "t.csv", ("x",), floats=("x",), digits=digits)
        value = read_rows(tmp_path / "t.csv", ("x",), floats=("x",))[0]["x"]
        assert value == float(f"{x:.{digits}g}") == expected
    # a float64 keeps 9 significant digits, not all of its 17
    write_rows([{"x": 1 / 3}], tmp_path / "t.csv", ("x",), floats=("x",))
    value = read_rows(tmp_path / "t.csv", ("x",), floats=("x",))[0]["x"]
    assert value == float(f"{1 / 3:.9g}") != 1 / 3 and math.isclose(value, 1 / 3, rel_tol=1e-9)


def test_nine_digits_round_trip_every_float32_and_eight_do_not(tmp_path):
    """IEEE 754: 9 significant decimal digits identify every float32; 8 do not."""
    rng = np.random.default_rng(0)
    values = (rng.standard_normal(2000) * 10.0 ** rng.integers(-8, 8, 2000)).astype(np.float32)
    rows = [{"x": v} for v in values]
    survived = {}
    for digits in (9, 8):
        write_rows(rows, tmp_path / "t.csv", ("x",), floats=("x",), digits=digits)
        back = np.array([r["x"] for r in read_rows(tmp_path / "t.csv", ("x",), floats=("x",))], np.float32)
        survived[digits] = int((back == values).sum())
    assert survived[9] == len(values) and survived[8] < len(values)


def test_optional_columns_read_as_their_default(tmp_path):
    fields = ("a", "b")
    absent = _write(tmp_path, "a,extra\r\n1,ignored\r\n")
    row, = read_rows(absent, fields, ints=("a",), floats=("b",), defaults={"b": math.nan})
    assert list(row) == ["a", "b"] and row["a"] == 1 and math.isnan(row["b"])  # the extra column is ignored
    empty = _write(tmp_path, "a,b\r\n1,\r\n2,0.5\r\n")
    assert read_rows(empty, fields, ints=("a",), floats=("b",), defaults={"b": None}) == [
        {"a": 1, "b": None}, {"a": 2, "b": 0.5}]
    # a default covers empty cells only: a filled cell must still parse
    with pytest.raises(ValueError, match=r"line 3, column 'b'"):
        read_rows(empty, fields, ints=("a", "b"), defaults={"b": None})


def test_bools_read_from_either_spelling(tmp_path):
    path = _write(tmp_path, "ok\r\n1\r\nTrue\r\n0\r\nFalse\r\n")
    assert [r["ok"] for r in read_rows(path, ("ok",), bools=("ok",))] == [True, True, False, False]
    with pytest.raises(ValueError, match=r"column 'ok'.*'yes' is not a bool"):
        read_rows(_write(tmp_path, "ok\r\nyes\r\n"), ("ok",), bools=("ok",))


def test_a_row_missing_a_column_or_with_an_unknown_one_is_refused(tmp_path):
    with pytest.raises(ValueError, match=r"rows\[1\]: lacks column\(s\) \['x'\]"):
        write_rows([{"n": 1, "x": 0.5}, {"n": 2}], tmp_path / "t.csv", ("n", "x"), floats=("x",))
    with pytest.raises(ValueError, match=r"rows\[0\]: has column\(s\) \['y'\] not in fields"):
        write_rows([{"n": 1, "x": 0.5, "y": 2}], tmp_path / "t.csv", ("n", "x"))
    with pytest.raises(ValueError, match=r"floats: \['z'\] are not in fields"):
        write_rows([], tmp_path / "t.csv", ("n", "x"), floats=("z",))


def test_a_file_lacking_a_required_column_or_cell_is_refused(tmp_path):
    path = _write(tmp_path, "n,x\r\n1,0.5\r\n")
    with pytest.raises(ValueError, match=r"path: .*t\.csv' lacks column\(s\) \['ok'\]"):
        read_rows(path, ("n", "x", "ok"), ints=("n",), floats=("x",), bools=("ok",))
    with pytest.raises(ValueError, match=r"ints: \['m'\] are not in fields"):
        read_rows(path, ("n", "x"), ints=("m",))
    with pytest.raises(ValueError, match=r"line 2, column 'x'"):
        read_rows(_write(tmp_path, "n,x\r\n1,abc\r\n"), ("n", "x"), ints=("n",), floats=("x",))
    with pytest.raises(ValueError, match=r"line 2 has no cell for column 'x'"):
        read_rows(_write(tmp_path, "n,x\r\n1\r\n"), ("n", "x"), ints=("n",))


STORED = [("branch-scale", read_branch_scale_csv, write_branch_scale_csv),
          ("deepnorm", read_deepnorm_csv, write_deepnorm_csv),
          ("family-runs", read_family_csv, write_family_csv),
          ("first-step", read_first_step_csv, write_first_step_csv),
          ("profiles", read_profiles_csv, write_profiles_csv),
          ("step-response", read_step_response_csv, write_step_response_csv),
          ("xiong", read_xiong_csv, write_xiong_csv),
          ("xiong-swap", read_xiong_csv, write_xiong_csv),
          ("sweep", read_sweep_csv, write_sweep_csv)]


@pytest.mark.parametrize("name, read, write", STORED, ids=[s[0] for s in STORED])
def test_every_stored_table_writes_back_to_its_own_bytes(name, read, write, tmp_path):
    write(read(DATA / f"{name}.csv"), tmp_path / "back.csv")
    assert (tmp_path / "back.csv").read_bytes() == (DATA / f"{name}.csv").read_bytes()


def test_the_stored_table_without_the_expected_gradient_reads_it_as_nan(tmp_path):
    """xiong-readout.csv predates expected_w2_gradient_norm: it reads as nan, and the rows survive a write back."""
    rows = read_xiong_csv(DATA / "xiong-readout.csv")
    assert "expected_w2_gradient_norm" not in (DATA / "xiong-readout.csv").read_text(encoding="utf-8").splitlines()[0]
    assert rows and all(math.isnan(r["expected_w2_gradient_norm"]) for r in rows)
    write_xiong_csv(rows, tmp_path / "back.csv")
    back = read_xiong_csv(tmp_path / "back.csv")
    assert [{k: v for k, v in r.items() if k != "expected_w2_gradient_norm"} for r in back] == [
        {k: v for k, v in r.items() if k != "expected_w2_gradient_norm"} for r in rows]
