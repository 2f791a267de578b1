"""The results shipped with the package (chapter 5 reads them): provenance, shape, and
agreement with what this code computes now."""

from __future__ import annotations

import numpy as np
import pytest

from lnworked.stress.committed import committed_seed_runs, committed_sweep, provenance_markdown, provenance_table
from lnworked.stress.config import StressConfig, default_runs
from lnworked.stress.sweep import seed_runs
from lnworked.stress.train import train


def test_committed_tables_carry_their_provenance():
    rows, sweep_info = committed_sweep()
    runs, seeds_info = committed_seed_runs()
    assert sweep_info["command"].startswith("lnworked stress sweep") and sweep_info["runs"] == len(rows)
    assert seeds_info["command"].startswith("lnworked stress seeds") and seeds_info["runs"] == len(runs)
    for info in (sweep_info, seeds_info):
        assert info["date"] and info["device"] and info["versions"]["jax"] and info["seconds"] > 0


def test_provenance_markdown_lists_each_field_and_hides_the_output_folder():
    about = {"command": "lnworked stress seeds --seeds 7 8 --out /home/me/runs --device cpu",
             "device": "cpu:0 (cpu)", "seconds": 12.5, "runs": 2, "extra": "not shown",
             "versions": {"lnworked": "0.1.0", "jax": "0.4.30"}}
    lines = provenance_markdown(about).splitlines()
    assert lines[0] == "- command: `lnworked stress seeds --seeds 7 8 --out <folder> --device cpu`"
    assert lines[1:4] == ["- device: `cpu:0 (cpu)`", "- seconds: `12.5`", "- runs: `2`"]
    assert lines[4] == "- versions: lnworked 0.1.0, jax 0.4.30" and len(lines) == 5
    assert "--out <folder>" in provenance_markdown({**about, "command": "x --out=/tmp/a"})


def test_provenance_table_has_one_row_per_run_and_the_versions_once():
    about = {"command": "lnworked stress seeds --seeds 7 8 --out /home/me/runs --device cpu",
             "device": "cpu:0 (cpu)", "date": "2026-12-05T05:30:18+00:00", "seconds": 150.0,
             "versions": {"lnworked": "0.1.0", "jax": "0.4.30"}}
    lines = provenance_table([("the seeds", about), ("the sweep", {**about, "seconds": 30})]).splitlines()
    assert lines[2] == "| the seeds | `lnworked stress seeds --seeds 7 8 --out <folder>` | cpu:0, 2026-12-05 | 2 |"
    assert lines[3].startswith("| the sweep |") and lines[3].endswith("| < 1 |") and len(lines) == 6
    assert lines[5] == "Versions: lnworked 0.1.0, jax 0.4.30."
    other = {**about, "versions": {"lnworked": "0.1.0", "jax": "0.5.0"}}
    tail = provenance_table([("a", about), ("b", other), ("c", about)]).splitlines()[-2:]
    assert tail == ["- versions of a; c: lnworked 0.1.0, jax 0.4.30", "- versions of b: lnworked 0.1.0, jax 0.5.0"]
    for bad in ([], [("a", {"command": "x"})]):
        with pytest.raises(ValueError, match="^runs"):
            provenance_table(bad)


def test_provenance_markdown_refuses_a_dict_without_versions():
    with pytest.raises(ValueError, match="about"):
        provenance_markdown({"command": "lnworked stress seeds"})


def test_committed_seed_runs_are_post_ln_at_the_articles_settings():
    runs, info = committed_seed_runs()
    config = StressConfig()
    assert f"--steps {config.steps} --layers {config.layers} --lr {config.learning_rate:g}" in info["command"]
    assert config.seed in runs and len(runs) >= 3
    for run in runs.values():
        assert not run.spec.pre_norm and run.spec.warmup_steps == 0 and len(run.loss) == config.steps
        np.testing.assert_array_equal(run.learning_rate, config.learning_rate)


@pytest.mark.slow
def test_committed_seed_runs_start_where_this_code_starts():
    """Step 1 (before any update compounds rounding) recomputed for every committed seed."""
    runs, _ = committed_seed_runs()
    fresh = seed_runs(StressConfig(steps=1), list(runs), pre_norm=False, device="cpu")
    for seed, run in runs.items():
        assert run.loss[0] == pytest.approx(fresh[seed].loss[0], rel=1e-5)
        assert run.gradient_norm[0] == pytest.approx(fresh[seed].gradient_norm[0], rel=1e-4)


@pytest.mark.slow
def test_a_committed_stable_sweep_cell_is_reproduced():
    """A stable run (Pre-LN, 2 layers, the smallest rate, seed 7) retrained now ends where
    the committed sweep says; chaotic cells are not compared digit by digit."""
    rows, _ = committed_sweep()
    row = next(r for r in rows if r["variant"] == "Pre-LN" and r["layers"] == 2 and r["seed"] == 7
               and r["learning_rate"] == min(x["learning_rate"] for x in rows))
    config = StressConfig(layers=2, steps=row["steps"], learning_rate=row["learning_rate"], seed=7)
    run = train(config, [default_runs(config)[0]], device="cpu").runs[0]
    assert run.final_loss == pytest.approx(row["final_loss"], rel=1e-3)


def test_a_folder_of_ones_own_run_reads_the_same_way(tmp_path):
    """``committed_seed_runs(folder)`` reads what ``lnworked stress seeds --out folder`` wrote."""
    from lnworked.cli import main

    assert main(["stress", "seeds", "--device", "cpu", "--seeds", "5", "--layers", "1", "--steps", "3",
                 "--out", str(tmp_path)]) == 0
    runs, info = committed_seed_runs(tmp_path)
    assert list(runs) == [5] and len(runs[5].loss) == 3 and info["runs"] == 1
    with pytest.raises(FileNotFoundError):
        committed_sweep(tmp_path)


def test_seed_figure_gives_every_committed_seed_its_own_colour():
    import matplotlib

    matplotlib.use("Agg")
    from lnworked.stress.figures import seed_figure

    runs, _ = committed_seed_runs()
    ax = seed_figure(runs).axes[0]
    lines = ax.get_lines()
    assert [line.get_label() for line in lines] == [f"seed {s}" for s in runs]
    assert len({line.get_color() for line in lines}) == len(runs)
