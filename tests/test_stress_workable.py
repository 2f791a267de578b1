"""Which constant rates are workable from a schedule's weights part-way (:mod:`lnworked.stress.workable`): a
small run continues a hold that is itself constant, the committed table is complete and agrees with the
committed schedules where it must, and bad input is refused."""

from __future__ import annotations

import numpy as np
import pytest

from lnworked.stress.config import StressConfig
from lnworked.stress.workable import (DIVISORS, WORKABLE_AT, WORKABLE_CURVE_AT, WORKABLE_START, best_divisors,
                                      check_workable, read_workable_csv, workable_losses, workable_rows,
                                      write_workable_csv)


def test_a_hold_continued_at_its_own_rate_is_the_hold_until_its_rate_changes(tmp_path):
    """On a two-block model for 12 steps: ("quarter", 8) trained 4 steps and continued at eta/4 is
    ("quarter", 8) itself over steps 5-8 (trained without a break by schedule_losses), and leaves it
    once the hold's rate jumps to eta; every divisor's first loss (on the weights alone) is the same."""
    from lnworked.stress.warmup_schedules import schedule_losses

    config = StressConfig(layers=2, steps=12)
    rows = workable_rows([3, 4], ("quarter", 8), 4, (1, 4), config)
    assert len(rows) == 2 * 2 * 8
    assert {(r["schedule"], r["k"], r["at"]) for r in rows} == {("quarter", 8, 4)}
    seeds, steps, losses = workable_losses(rows)
    assert seeds == [3, 4] and steps == list(range(5, 13)) and list(losses) == [1, 4]
    whole = schedule_losses([("quarter", 8)], [3, 4], config)[("quarter", 8)]
    assert np.allclose(losses[4][:, :4], whole[:, 4:8], rtol=1e-4)
    assert np.abs(losses[4][:, 5:] - whole[:, 9:]).max() > 1e-3
    assert np.allclose(losses[1][:, 0], losses[4][:, 0], rtol=1e-6)
    assert np.abs(losses[1][:, 1:] - losses[4][:, 1:]).max() > 1e-3
    write_workable_csv(rows, tmp_path / "workable.csv")
    assert read_workable_csv(tmp_path / "workable.csv") == [{**r, "loss": pytest.approx(r["loss"], rel=1e-8)}
                                                             for r in rows]


@pytest.mark.parametrize("at", [WORKABLE_AT, *WORKABLE_CURVE_AT])
def test_committed_workable_runs_are_complete_and_start_where_the_committed_warmup_is(at):
    """Every (divisor, seed) of each committed table (one per step ``at``) has steps at+1..180 once, finite
    losses, the row count, command and configuration of its provenance; the first loss after the break (the
    weights alone) is the committed linear warmup's at that step, trained another time."""
    from lnworked.stress.committed import (committed_warmup_schedules, committed_warmup_schedules_more_seeds,
                                           committed_warmup_workable)
    from lnworked.stress.warmup_schedules import join_seeds, summarise

    rows, about = committed_warmup_workable(at=at)
    config = StressConfig()
    assert about["rows"] == len(rows) and "warmup-workable" in about["command"]
    assert f"--at {at} " in about["command"] or at == WORKABLE_AT
    assert about["config"] == config.as_dict()
    assert {(r["schedule"], r["k"], r["at"]) for r in rows} == {(*WORKABLE_START, at)}
    seeds, steps, losses = workable_losses(rows)
    assert steps == list(range(at + 1, config.steps + 1)) and set(losses) == set(DIVISORS)
    assert len(rows) == len(DIVISORS) * len(seeds) * len(steps) and {7, 8, 9} <= set(seeds)
    assert all(np.isfinite(v).all() for v in losses.values())
    schedules = join_seeds(summarise(committed_warmup_schedules()[0]),
                           summarise(committed_warmup_schedules_more_seeds()[0]))
    warmup = schedules[1][WORKABLE_START][[schedules[0].index(s) for s in seeds], at]
    # trained by another program, the two copies differ by rounding only, which grows with the steps
    # trained (about 1e-7 of the loss at step 30, 1e-4 at step 45); another schedule differs by far more
    for d in DIVISORS:
        assert np.allclose(losses[d][:, 0], warmup, rtol=1e-5 if at <= WORKABLE_AT else 1e-3), d
    other = schedules[1][("constant", 0)][[schedules[0].index(s) for s in seeds], at]
    assert np.abs(other / warmup - 1).max() > 1e-2


@pytest.mark.parametrize("start, at, divisors, match", [
    (("warm", 60), 30, DIVISORS, "^start: kind"),
    ("linear", 30, DIVISORS, "^start: must be a schedule"),
    (("linear", 0), 30, DIVISORS, "^start: "),
    (("linear", 60), 0, DIVISORS, "^at: must be an integer from 1 to 179"),
    (("linear", 60), 180, DIVISORS, "^at: must be an integer from 1 to 179"),
    (("linear", 60), 61, DIVISORS, "^at: must be at most 60"),
    (("constant", 0), 1, DIVISORS, "^at: must be at most 0"),
    (("linear", 60), 30, (), "^divisors: must be a non-empty"),
    (("linear", 60), 30, (2, 2), "^divisors: must be distinct"),
    (("linear", 60), 30, (0, 2), "^divisors: must be an integer >= 1"),
    (("linear", 60), 30, (-4,), "^divisors: must be an integer >= 1"),
    (("linear", 60), 30, (1.5,), "^divisors: must be an integer >= 1"),
])
def test_bad_input_is_refused_naming_the_argument(start, at, divisors, match):
    with pytest.raises(ValueError, match=match):
        check_workable(start, at, divisors)
    with pytest.raises(ValueError, match=match):
        workable_rows([7], start, at, divisors)


@pytest.mark.parametrize("seeds", [[], [7, 7], [-1]])
def test_bad_seeds_are_refused(seeds):
    with pytest.raises(ValueError, match="^seeds: "):
        workable_rows(seeds)


def test_a_reduced_rate_may_stop_at_any_step():
    assert check_workable(("reduced", 2), 150) == (("reduced", 2), 150, DIVISORS)


@pytest.mark.parametrize("args, word", [(["--at", "0"], "at"), (["--at", "61"], "at"),
                                        (["--start", "warm", "60"], "start"), (["--start", "linear", "x"], "start"),
                                        (["--seeds", "7", "7"], "seeds")])
def test_the_command_refuses_bad_input_with_one_line_exit_2_and_writes_nothing(tmp_path, capsys, args, word):
    from lnworked.cli import main

    out = tmp_path / "out"
    assert main(["stress", "warmup-workable", *args, "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and word in err and "Traceback" not in err
    assert not out.exists()


def test_best_divisors_picks_each_seeds_lowest_final_loss():
    finals = {1: np.array([3.0, 0.01, 2.0]), 2: np.array([0.5, 0.02, 0.9]), 4: np.array([0.7, 0.5, 0.8])}
    assert best_divisors(finals).tolist() == [2, 1, 4]
    # the order of the dictionary does not matter, only which divisor ends lowest
    assert best_divisors(dict(reversed(finals.items()))).tolist() == [2, 1, 4]


@pytest.mark.parametrize("finals, match", [
    ({}, "^finals: needs"),
    ({1: [1.0, 2.0], 2: [1.0]}, "^finals: every divisor"),
    ({1: [1.0, float("nan")], 2: [1.0, 2.0]}, "^finals: holds a NaN"),
])
def test_best_divisors_refuses_bad_finals(finals, match):
    with pytest.raises(ValueError, match=match):
        best_divisors(finals)


def test_committed_workable_refuses_a_step_it_does_not_store():
    from lnworked.stress.committed import committed_warmup_workable

    with pytest.raises(ValueError, match="^at: the committed runs stop at steps"):
        committed_warmup_workable(at=11)


def test_committed_workable_curve_is_each_stored_step_s_lowest_final_loss_read_from_the_csv_rows():
    """The curve's best divisor per seed, recomputed from the stored CSV rows by plain dictionaries (the
    mean of each run's last 10 losses, the divisor with the lowest): at step 0 from the constant-rate
    schedules, at the other steps from the runs continued from the warmup's weights."""
    from lnworked.stress.committed import (committed_warmup_schedules, committed_warmup_schedules_more_seeds,
                                           committed_warmup_workable)
    from lnworked.stress.workable import committed_workable_curve

    def lowest(rows, key):
        runs = {}
        for r in rows:
            runs.setdefault((r["seed"], key(r)), []).append((r["step"], r["loss"]))
        finals = {run: sum(loss for _, loss in sorted(steps)[-10:]) / 10 for run, steps in runs.items()}
        seeds = sorted({seed for seed, _ in finals})
        return seeds, [min((finals[(s, d)], d) for (seed, d) in finals if seed == s)[1] for s in seeds]

    seeds, best = committed_workable_curve()
    assert sorted(best) == [0, *sorted({WORKABLE_AT, *WORKABLE_CURVE_AT})]
    constant = {("constant", 0): 1, **{("reduced", d): d for d in DIVISORS if d > 1}}
    rows = [r for r in committed_warmup_schedules()[0] + committed_warmup_schedules_more_seeds()[0]
            if (r["kind"], r["k"]) in constant]
    assert lowest(rows, lambda r: constant[(r["kind"], r["k"])]) == (seeds, best[0].tolist())
    for at in best:
        if at:
            assert lowest(committed_warmup_workable(at=at)[0], lambda r: r["divisor"]) == (seeds, best[at].tolist())
    # the curve rises: no seed's best rate at a later stored step is below its rate from the initial weights
    assert all(np.all(best[at] <= best[0]) for at in best)
