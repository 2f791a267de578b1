"""``lnworked stress`` and ``lnworked stress sweep``: outputs, bad arguments, interrupts."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from lnworked.cli import main
from lnworked.stress import cli as stress_cli
from lnworked.stress.cli import STORED_COMMANDS
from lnworked.stress.sweep import SWEEP_COLUMNS, read_sweep_csv

SMALL = ["--device", "cpu", "--layers", "1", "--steps", "6", "--no-cache"]


def test_stress_writes_csv_figure_and_summary(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["stress", *SMALL, "--warmup", "3", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "device: cpu" in printed and "article's final loss" in printed
    with (out / "stress.csv").open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert list(rows[0]) == ["run", "step", "loss", "gradient_norm", "learning_rate"]
    assert len(rows) == 3 * 6
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["device"].startswith("cpu") and summary["config"]["layers"] == 1
    assert isinstance(summary["seconds"], float)
    assert [r["pre_norm"] for r in summary["runs"]] == [True, False, False]
    assert [r["warmup_steps"] for r in summary["runs"]] == [0, 0, 3]
    for run in summary["runs"]:
        assert set(run) >= {"name", "pre_norm", "warmup_steps", "final_loss", "max_gradient_norm", "diverged_at"}
        last = [r for r in rows if r["run"] == run["name"]][-1]
        assert run["final_loss"] == pytest.approx(float(last["loss"]))
    assert (out / "stress.png").read_bytes()[:4] == b"\x89PNG"
    assert b"<svg" in (out / "stress.svg").read_bytes()[:500]


@pytest.mark.parametrize(
    "args, word",
    [(["--layers", "0"], "layers"), (["--steps", "-5"], "steps"), (["--lr=-1e-3"], "lr"),
     (["--steps", "10", "--warmup", "11"], "warmup"), (["--seed", "-1"], "seed")],
)
def test_bad_arguments_exit_2_with_one_line(args, word, tmp_path, capsys):
    assert main(["stress", "--device", "cpu", *args, "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and word in err and "Traceback" not in err


def test_unwritable_output_exits_2(tmp_path, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    assert main(["stress", *SMALL, "--out", str(blocker / "sub")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "out" in err


def test_gpu_request_without_gpu_exits_2(monkeypatch, capsys, tmp_path):
    import jax

    def no_gpu(backend=None):
        raise RuntimeError("Unknown backend gpu")

    monkeypatch.setattr(jax, "devices", no_gpu)
    assert main(["stress", "--device", "gpu", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "jax[cuda12]" in err


def test_interrupt_writes_partial_outputs(monkeypatch, tmp_path):
    def interrupt(*args):
        raise KeyboardInterrupt

    monkeypatch.setattr(stress_cli, "_progress", interrupt)
    out = tmp_path / "partial"
    assert main(["stress", *SMALL, "--chunk", "2", "--out", str(out)]) == 130
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["interrupted"] is True
    assert 0 < sum(r["steps_done"] for r in summary["runs"]) < 3 * 6


def test_sweep_writes_tidy_csv_and_provenance(tmp_path, capsys):
    out = tmp_path / "sweep"
    code = main(["stress", "sweep", "--device", "cpu", "--depths", "1", "2", "--lrs", "1e-3", "4e-3",
                 "--seeds", "1", "--steps", "4", "--out", str(out)])
    assert code == 0
    rows = read_sweep_csv(out / "sweep.csv")
    assert len(rows) == 2 * 2 * 1 * 3
    assert {(r["layers"], r["learning_rate"], r["variant"]) for r in rows} == {
        (d, lr, v) for d in (1, 2) for lr in (1e-3, 4e-3) for v in ("Pre-LN", "Post-LN", "Post-LN + warmup")}
    assert list(csv.DictReader((out / "sweep.csv").open(encoding="utf-8")).fieldnames) == list(SWEEP_COLUMNS)
    info = json.loads((out / "sweep-provenance.json").read_text(encoding="utf-8"))
    assert info["command"].startswith("lnworked stress sweep --depths 1 2")
    assert info["device"].startswith("cpu") and info["versions"]["jax"] and info["runs"] == len(rows)
    assert (out / "sweep.png").exists() and (out / "sweep.svg").exists()


def test_seeds_writes_per_step_logs_that_read_back_and_provenance(tmp_path, capsys):
    """``lnworked stress seeds``: the table reads back to the runs ``seed_runs`` trains."""
    from lnworked.stress.config import StressConfig
    from lnworked.stress.sweep import read_seed_runs_csv, seed_runs

    out = tmp_path / "seeds"
    code = main(["stress", "seeds", "--device", "cpu", "--seeds", "3", "4", "--layers", "2", "--steps", "5",
                 "--out", str(out)])
    assert code == 0
    runs = read_seed_runs_csv(out / "seeds.csv")
    assert list(runs) == [3, 4]
    expected = seed_runs(StressConfig(layers=2, steps=5), [3, 4], pre_norm=False, device="cpu")
    for seed, run in runs.items():
        assert run.spec == expected[seed].spec and not run.spec.pre_norm and run.diverged_at is None
        np.testing.assert_allclose(run.loss, expected[seed].loss, rtol=1e-6)
        np.testing.assert_allclose(run.gradient_norm, expected[seed].gradient_norm, rtol=1e-6)
        np.testing.assert_allclose(run.learning_rate, expected[seed].learning_rate, rtol=1e-12)
    info = json.loads((out / "seeds-provenance.json").read_text(encoding="utf-8"))
    assert info["command"] == f"lnworked stress seeds --seeds 3 4 --steps 5 --layers 2 --lr 0.002 --device cpu --out {out}"
    assert info["runs"] == 2 and info["interrupted"] is False and info["versions"]["jax"]
    assert (out / "seeds.png").exists() and "seed 4: final loss" in capsys.readouterr().out


def test_seeds_interrupt_writes_the_steps_done(monkeypatch, tmp_path):
    from lnworked.stress.sweep import read_seed_runs_csv

    def interrupt(*args):
        raise KeyboardInterrupt

    monkeypatch.setattr(stress_cli, "_progress", interrupt)
    out = tmp_path / "partial"
    code = main(["stress", "seeds", "--device", "cpu", "--seeds", "3", "4", "--layers", "1", "--steps", "6",
                 "--chunk", "2", "--out", str(out)])
    assert code == 130
    runs = read_seed_runs_csv(out / "seeds.csv")
    assert list(runs) == [3, 4] and all(len(run.loss) == 2 for run in runs.values())
    assert json.loads((out / "seeds-provenance.json").read_text(encoding="utf-8"))["interrupted"] is True


def test_seeds_bad_arguments_exit_2(tmp_path, capsys):
    assert main(["stress", "seeds", "--device", "cpu", "--seeds", "-1", "--out", str(tmp_path)]) == 2
    assert "seed" in capsys.readouterr().err
    assert main(["stress", "seeds", "--device", "cpu", "--warmup", "999", "--out", str(tmp_path)]) == 2
    assert "warmup" in capsys.readouterr().err
    assert main(["stress", "seeds", "--device", "cpu", "--lr", "0", "--out", str(tmp_path)]) == 2
    assert "lr:" in capsys.readouterr().err


def test_sweep_bad_arguments_exit_2(tmp_path, capsys):
    assert main(["stress", "sweep", "--device", "cpu", "--depths", "0", "--out", str(tmp_path)]) == 2
    assert "layers" in capsys.readouterr().err


def test_importing_the_cli_loads_no_jax_flax_or_optax():
    """``lnworked examples`` and ``lnworked practice`` must not pay for the stress stack."""
    code = ("import sys, lnworked.cli; lnworked.cli.build_parser(); "
            "print(sorted(m for m in ('jax', 'flax', 'optax') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert done.stdout.strip() == "[]"


def test_compilation_cache_is_used_unless_opted_out(tmp_path):
    """A run fills the cache folder ($LNWORKED_CACHE_DIR); ``--no-cache`` leaves it alone."""
    tiny = ["-m", "lnworked.cli", "stress", "--device", "cpu", "--layers", "1", "--steps", "2"]
    for flag, cache in (("--no-cache", tmp_path / "off"), (None, tmp_path / "on")):
        env = {**os.environ, "LNWORKED_CACHE_DIR": str(cache)}
        args = [sys.executable, *tiny, "--out", str(tmp_path / "out"), *([flag] if flag else [])]
        subprocess.run(args, capture_output=True, text=True, timeout=300, check=True, env=env)
    assert not (tmp_path / "off").exists()
    assert any((tmp_path / "on").iterdir())


def test_stored_run_writes_its_rows_and_provenance(tmp_path):
    """The body shared by the commands whose output the book stores: the seeds checked, rows from
    `compute` on the chosen device, written by `write`, and a provenance file naming the command
    that made them. Repeated seeds are refused before anything is computed or written."""
    import argparse
    import json

    from lnworked.stress.cli import _run_stored

    def write(rows, path):
        path.write_text("seed\n" + "".join(f"{r['seed']}\n" for r in rows), encoding="utf-8")

    args = argparse.Namespace(seeds=[7, 8], out=str(tmp_path / "out"), device="cpu", cache_dir=None, no_cache=True)
    assert _run_stored(args, "first-step", lambda s: [{"seed": x} for x in s], write) == 0
    assert (tmp_path / "out" / "first-step.csv").read_text(encoding="utf-8") == "seed\n7\n8\n"
    info = json.loads((tmp_path / "out" / "first-step-provenance.json").read_text(encoding="utf-8"))
    assert info["rows"] == 2
    assert info["command"].startswith("lnworked stress first-step --seeds 7 8 --device cpu")
    again = argparse.Namespace(seeds=[7, 7], out=str(tmp_path / "again"), device="cpu", cache_dir=None,
                               no_cache=True)
    with pytest.raises(ValueError, match="^seeds: must be distinct"):
        _run_stored(again, "first-step", lambda s: [{"seed": x} for x in s], write)
    assert not (tmp_path / "again").exists()


@pytest.mark.parametrize("command", [name for name, *_ in STORED_COMMANDS])
@pytest.mark.parametrize("seeds", [["-1"], ["7", "7"]])
def test_every_stored_command_refuses_bad_seeds_with_one_line_exit_2_and_writes_nothing(tmp_path, capsys, command,
                                                                                      seeds):
    """Every command whose output the book stores (one table, STORED_COMMANDS): a negative or repeated
    seed is a one-line message and exit 2, no traceback, and nothing written in --out."""
    from lnworked.cli import main

    out = tmp_path / "out"
    assert main(["stress", command, "--seeds", *seeds, "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "seeds" in err and "Traceback" not in err
    assert not out.exists()
