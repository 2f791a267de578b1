"""Chapter 8's explorer over the trained family (lnworked.stress.family_explorer) and the stored-runs
explorer it shares with chapter 7's DeepNorm explorer (lnworked.stress.loss_explorer).

Every expected value is computed here from the committed CSV (``lnworked/data/family-runs.csv``)
read with the standard library's csv module, not through the library's reader."""

from __future__ import annotations

import csv
import math
from importlib import resources

import numpy as np
import pytest

from lnworked.explore import format_readout, spec_grid
from lnworked.stress.committed import committed_family
from lnworked.stress.config import StressConfig
from lnworked.stress.family_runs import family_table, summarise


def family_csv_steps() -> dict:
    """``{(variant, rate text, seed text): [(step, loss, gradient norm), ...] in step order}`` from the
    committed CSV, read with Python's csv module (not the library's reader)."""
    runs: dict = {}
    with resources.as_file(resources.files("lnworked") / "data" / "family-runs.csv") as path:
        with open(path, newline="", encoding="utf-8") as f:
            for row in csv.DictReader(f):
                runs.setdefault((row["variant"], row["learning_rate"], row["seed"]), []).append(
                    (int(row["step"]), float(row["loss"]), float(row["gradient_norm"])))
    return {key: sorted(steps) for key, steps in runs.items()}


@pytest.fixture(scope="module")
def csv_runs():
    return family_csv_steps()


def _by_hand(steps, last=10):
    """The run's final loss (mean of its last ``last`` losses) and its largest gradient norm."""
    losses = [loss for _, loss, _ in steps]
    return sum(losses[-last:]) / last, max(norm for _, _, norm in steps)


def test_grid_holds_one_run_per_committed_design_rate_and_seed(csv_runs):
    from lnworked.stress.family_explorer import family_explorer_spec

    spec = family_explorer_spec()
    grid = spec_grid(spec)
    assert grid["controls"] == ["variant", "rate", "seed"]
    # the keys the browser builds: the selects' option values joined with "|"
    assert set(grid["runs"]) == {f"{v}|{float(r):g}|{s}" for v, r, s in csv_runs}
    assert len(grid["runs"]) == len(csv_runs) == 6 * 2 * 3
    options = {c.name: [format(v, "g") if isinstance(v, float) else str(v) for v in c.values] for c in spec.controls}
    assert options == {"variant": list(dict.fromkeys(v for v, _, _ in csv_runs)),
                       "rate": sorted({r for _, r, _ in csv_runs}, key=float),
                       "seed": sorted({s for _, _, s in csv_runs}, key=int)}
    uniform = math.log(StressConfig().vocab_size)
    assert grid["uniform"] == pytest.approx(uniform, abs=1e-4)
    for (variant, rate, seed), steps in csv_runs.items():
        run = grid["runs"][f"{variant}|{float(rate):g}|{seed}"]
        loss = np.array([loss for _, loss, _ in steps])
        assert len(run["loss"]) == len(grid["steps"]) == len(loss)
        np.testing.assert_allclose(run["loss"], loss, rtol=5e-4)  # 4 significant digits
        assert grid["y_min"] <= loss.min() and max(loss.max(), uniform) <= grid["y_max"]


def test_readouts_are_each_runs_final_loss_and_largest_gradient_norm(csv_runs):
    from lnworked.stress.family_explorer import FAMILY_READOUT_KEYS, family_explorer_spec

    grid = spec_grid(family_explorer_spec())
    assert grid["readouts"] == list(FAMILY_READOUT_KEYS) == ["final-loss", "max-gradient-norm"]
    for (variant, rate, seed), steps in csv_runs.items():
        final, largest = _by_hand(steps)
        assert grid["runs"][f"{variant}|{float(rate):g}|{seed}"]["readouts"] == [format_readout(final),
                                                                               format_readout(largest)]


def test_the_seeds_final_losses_average_to_the_chapters_table(csv_runs):
    """The explorer's per-seed final losses, by hand, are what family_table averages for the page's table."""
    for row in family_table(summarise(committed_family()[0]), last=10):
        rate = format(row["learning_rate"], "g")
        finals = [_by_hand(steps)[0] for (v, r, _), steps in csv_runs.items() if v == row["variant"] and r == rate]
        assert len(finals) == len(row["seeds"]) == 3
        assert row["final_loss"] == pytest.approx(np.mean(finals), rel=1e-9)
        assert (row["final_min"], row["final_max"]) == pytest.approx((min(finals), max(finals)), rel=1e-9)


def test_last_sets_the_final_loss_window(csv_runs):
    from lnworked.stress.family_explorer import family_explorer_spec

    grid = spec_grid(family_explorer_spec(last=20))
    for (variant, rate, seed), steps in list(csv_runs.items())[::5]:
        final = format_readout(_by_hand(steps, last=20)[0])
        assert grid["runs"][f"{variant}|{float(rate):g}|{seed}"]["readouts"][0] == final
    assert "last 20" in family_explorer_spec(last=20).caption


def test_a_run_that_diverged_reads_diverged():
    from lnworked.stress.family_explorer import family_readouts

    loss = np.array([[4.0, 3.0, float("nan")], [4.0, 2.0, 1.0]])
    summary = {("Post-LN", 0.008): {"seeds": [7, 8], "loss": loss, "gradient_norm": np.ones_like(loss)}}
    assert family_readouts(summary, "Post-LN", 0.008, 7, last=2)["final-loss"] == "diverged"
    assert family_readouts(summary, "Post-LN", 0.008, 8, last=2)["final-loss"] == format_readout(1.5)


@pytest.mark.parametrize("variant, rate, seed, name", [("DeepNet", 0.002, 7, "variant"),
                                                       ("Pre-LN", 0.004, 7, "rate"),
                                                       ("Pre-LN", 0.002, 10, "seed"),
                                                       ("Pre-LN", 0.002, True, "seed")])
def test_readouts_reject_a_run_that_is_not_there(variant, rate, seed, name):
    from lnworked.stress.family_explorer import family_readouts

    with pytest.raises(ValueError, match=name):
        family_readouts(summarise(committed_family()[0]), variant, rate, seed)


def test_explorer_rejects_runs_that_are_not_a_full_grid(tmp_path):
    import shutil

    from lnworked.stress.family_explorer import family_explorer_spec
    from lnworked.stress.family_runs import write_family_csv

    rows, _ = committed_family()
    write_family_csv([r for r in rows if not (r["variant"] == "Peri-LN" and r["seed"] == 8)],
                     tmp_path / "family-runs.csv")
    with resources.as_file(resources.files("lnworked") / "data" / "family-runs-provenance.json") as path:
        shutil.copy(path, tmp_path)
    with pytest.raises(ValueError, match="folder"):
        family_explorer_spec(tmp_path)


def test_stored_loss_explorer_rejects_an_incomplete_mapping():
    from lnworked.explore import Choice, Series
    from lnworked.stress.loss_explorer import stored_loss_explorer

    with pytest.raises(ValueError, match="runs.*missing \\[\\('b', 2\\)\\]"):
        stored_loss_explorer("x", {("a", 1): [1.0], ("a", 2): [1.0], ("b", 1): [1.0]},
                             (Choice("p", "p", (("a", "a"), ("b", "b")), "a"), Choice("q", "q", ((1, "1"), (2, "2")), 1)),
                             readouts=lambda values: {}, rows=(), caption="", aria="", series=Series("loss", "", "#000"))


def test_static_family_explorer_responds_to_its_controls(monkeypatch, csv_runs):
    """The static HTML run by the book's explorer script (Node.js with a minimal DOM)."""
    from test_explore import _run_in_node

    from lnworked.stress.family_explorer import family_explorer

    monkeypatch.setenv("LNWORKED_STATIC_BUILD", "1")
    html = family_explorer().data
    assert 'data-explorer="family"' in html and 'aria-live="polite"' in html
    actions = [{"root": 0, "name": "variant", "value": "Post-LN", "event": "change"},
               {"root": 0, "name": "rate", "value": "0.008", "event": "change"},
               {"root": 0, "name": "seed", "value": "9", "event": "change"}]
    results = _run_in_node(html, actions)
    assert results[0]["initial"]["ready"] == "1" and results[0]["initial"]["lines"] == 1
    for result, key in zip(results[1:], [("Post-LN", "0.002", "7"), ("Post-LN", "0.008", "7"),
                                         ("Post-LN", "0.008", "9")]):
        final, largest = _by_hand(csv_runs[key])
        assert result["state"]["readouts"] == {"final-loss": format_readout(final),
                                               "max-gradient-norm": format_readout(largest)}, key
        assert result["state"]["lines"] == 1


def test_live_family_explorer_draws_the_run_and_the_uniform_guess(monkeypatch, csv_runs):
    from lnworked.stress.family_explorer import family_explorer

    monkeypatch.delenv("LNWORKED_STATIC_BUILD", raising=False)
    box = family_explorer()
    assert set(box.lnw_controls) == {"variant", "rate", "seed"}
    box.lnw_controls["variant"].value = "Post-LN, RMSNorm"
    box.lnw_controls["rate"].value = 0.008
    box.lnw_controls["seed"].value = 8
    final, largest = _by_hand(csv_runs[("Post-LN, RMSNorm", "0.008", "8")])
    assert box.lnw_values == {"final-loss": format_readout(final), "max-gradient-norm": format_readout(largest)}
    lines = {line.get_gid(): line for line in box.lnw_figure.axes[0].get_lines()}
    assert set(lines) == {"loss", "uniform"}
    np.testing.assert_allclose(lines["uniform"].get_ydata(), math.log(StressConfig().vocab_size))
    np.testing.assert_allclose(lines["loss"].get_ydata(),
                               [loss for _, loss, _ in csv_runs[("Post-LN, RMSNorm", "0.008", "8")]])
