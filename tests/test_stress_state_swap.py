"""Weights against Adam's state (:mod:`lnworked.stress.state_swap`): the committed table's own
runs reproduce the committed holds, a small run is computed here, and bad input is refused."""

from __future__ import annotations

import numpy as np
import pytest

from lnworked.stress.config import StressConfig
from lnworked.stress.state_swap import SWAP_PAIR, read_swap_csv, swap_rows, write_swap_csv
from lnworked.stress.warmup_schedules import full_rate_from, summarise


def _losses(rows):
    """``{(weights, state): losses (seeds, steps)}`` and the seeds, from :func:`swap_rows`' rows."""
    seeds = sorted({r["seed"] for r in rows})
    steps = sorted({r["step"] for r in rows})
    out = {}
    for r in rows:
        out.setdefault((r["weights"], r["state"]), np.full((len(seeds), len(steps)), np.nan))[
            seeds.index(r["seed"]), steps.index(r["step"])] = r["loss"]
    return seeds, steps, out


def test_committed_swap_runs_with_their_own_state_are_the_committed_holds():
    """The diagonal (weights and Adam state of the same hold) is that hold, trained another time and
    stored in ``warmup-holds.csv``: the same losses after the jump, to float32 rounding."""
    from lnworked.stress.committed import committed_warmup_holds, committed_warmup_swap

    rows, about = committed_warmup_swap()
    assert about["rows"] == len(rows) and "warmup-swap" in about["command"]
    seeds, steps, swapped = _losses(rows)
    hold_seeds, holds = summarise(committed_warmup_holds()[0])
    k = full_rate_from(SWAP_PAIR[0])
    assert steps == list(range(k + 1, StressConfig().steps + 1)) and seeds == hold_seeds
    kinds = [kind for kind, _ in SWAP_PAIR]
    assert set(swapped) == {(a, b) for a in kinds for b in kinds}
    for kind, _ in SWAP_PAIR:
        own = holds[(kind, k)][:, k:]
        assert np.allclose(swapped[kind, kind], own, rtol=1e-5), kind
    # and the exchange changes the runs: each off-diagonal run differs from both of its parents
    for a in kinds:
        for b in kinds:
            if a != b:
                assert np.abs(swapped[a, b] - swapped[a, a]).max() > 1e-3
                assert np.abs(swapped[a, b] - swapped[b, b]).max() > 1e-3


def test_a_small_swap_keeps_each_run_and_its_csv_round_trip(tmp_path):
    """On a two-block model for 12 steps, held 4 steps: the diagonal continues the run trained without a
    break (the same program's losses), and the CSV reads back what was written."""
    from lnworked.stress.warmup_schedules import schedule_losses

    config = StressConfig(layers=2, steps=12)
    pair = (("half", 4), ("quarter", 4))
    rows = swap_rows([3], pair, config)
    seeds, steps, swapped = _losses(rows)
    assert steps == list(range(5, 13)) and len(rows) == 4 * 8
    whole = schedule_losses(pair, [3], config)
    for kind, _ in pair:
        assert np.allclose(swapped[kind, kind], whole[(kind, 4)][:, 4:], rtol=1e-4), kind
    # the first loss after the break is measured on the weights alone: the state does not enter it yet
    assert swapped["half", "quarter"][0, 0] == pytest.approx(swapped["half", "half"][0, 0], rel=1e-6)
    write_swap_csv(rows, tmp_path / "swap.csv")
    assert read_swap_csv(tmp_path / "swap.csv") == [{**r, "loss": pytest.approx(r["loss"], rel=1e-8)} for r in rows]


@pytest.mark.parametrize("pair", [(("half", 60),), (("half", 60), ("half", 60)), (("half", 60), ("quarter", 20)),
                                  (("constant", 0), ("half", 0)), (("reduced", 2), ("half", 60))])
def test_a_pair_that_cannot_be_swapped_is_refused(pair):
    with pytest.raises(ValueError, match="pair"):
        swap_rows([7], pair)


@pytest.mark.parametrize("seeds", [["-1"], ["7", "7"]])
def test_cli_bad_seeds_exit_2_with_one_line_and_no_file(tmp_path, capsys, seeds):
    from lnworked.cli import main

    assert main(["stress", "warmup-swap", "--seeds", *seeds, "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "seeds" in err and "Traceback" not in err
    assert not (tmp_path / "warmup-swap.csv").exists()
