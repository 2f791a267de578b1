"""Weights against Adam's state, and grafted groups of weights (:mod:`lnworked.stress.state_swap`): the
committed tables' own runs reproduce the committed holds, small runs are computed here, and bad input is
refused."""

from __future__ import annotations

import numpy as np
import pytest

from lnworked.stress.config import StressConfig
from lnworked.stress.state_swap import (GRAFT_GROUPS, SWAP_PAIR, graft, graft_rows, read_graft_csv, read_swap_csv,
                                        swap_rows, write_graft_csv, write_swap_csv)
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


#: The committed tables and the holds they continue: random seeds 7-9, and the eight more, 10-17.
STORED = [("committed_warmup_swap", "committed_warmup_graft", "committed_warmup_holds"),
          ("committed_warmup_swap_more_seeds", "committed_warmup_graft_more_seeds", "committed_warmup_holds_more_seeds")]
#: How closely each table's diagonal (each hold trained again) follows the stored holds: seeds 7-9 were
#: trained with the runs batched alike and agree at every step; seeds 10-17 were not (float32 sums in another
#: order), and Post-LN spreads that difference, so they agree only at the first full-rate step, the eta/4 hold to
#: 1e-5 and the eta/2 hold, after 60 steps past its best rate, to 2 %.
DIAGONAL = {"committed_warmup_holds": (None, {"half": 1e-5, "quarter": 1e-5}),
            "committed_warmup_holds_more_seeds": (1, {"half": 2e-2, "quarter": 1e-4})}


@pytest.mark.parametrize("swap_name, _, holds_name", STORED)
def test_committed_swap_runs_with_their_own_state_are_the_committed_holds(swap_name, _, holds_name):
    """The diagonal (weights and Adam state of the same hold) is that hold, trained another time and
    stored in ``warmup-holds.csv`` (or, for seeds 10-17, ``warmup-holds-more-seeds.csv``): the same losses
    after the jump, as closely as :data:`DIAGONAL` says."""
    from lnworked.stress import committed

    rows, about = getattr(committed, swap_name)()
    assert about["rows"] == len(rows) and "warmup-swap" in about["command"]
    seeds, steps, swapped = _losses(rows)
    hold_seeds, holds = summarise(getattr(committed, holds_name)()[0])
    k = full_rate_from(SWAP_PAIR[0])
    assert steps == list(range(k + 1, StressConfig().steps + 1)) and seeds == hold_seeds
    kinds = [kind for kind, _ in SWAP_PAIR]
    assert set(swapped) == {(a, b) for a in kinds for b in kinds}
    steps_compared, rtol = DIAGONAL[holds_name]
    for kind, _ in SWAP_PAIR:
        own = holds[(kind, k)][:, k:]
        assert np.allclose(swapped[kind, kind][:, :steps_compared], own[:, :steps_compared], rtol=rtol[kind]), kind
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


def test_graft_takes_exactly_the_groups_leaves_and_the_groups_cover_the_model():
    import jax

    from lnworked.stress.model import init_params

    config = StressConfig(layers=2)
    base, donor = init_params(config, False, jax.random.PRNGKey(0)), init_params(config, False, jax.random.PRNGKey(1))
    paths = [tuple(getattr(k, "key", None) for k in path) for path, _ in jax.tree_util.tree_flatten_with_path(base)[0]]
    for group, names in GRAFT_GROUPS.items():
        mixed = graft(base, donor, names)
        for path, a, b, m in zip(paths, jax.tree.leaves(base), jax.tree.leaves(donor), jax.tree.leaves(mixed)):
            assert np.array_equal(m, b if set(path) & set(names) else a), (group, path)
    # every leaf is in some group: grafting all of them gives the donor
    everything = graft(base, donor, [n for names in GRAFT_GROUPS.values() for n in names])
    assert all(np.array_equal(m, b) for m, b in zip(jax.tree.leaves(everything), jax.tree.leaves(donor)))
    # the blocks' groups are disjoint: each block leaf is in exactly one
    for path in paths:
        if any(str(k).startswith("block") for k in path):
            assert sum(bool(set(path) & set(names)) for names in GRAFT_GROUPS.values()) == 1, path


def test_a_small_graft_keeps_each_run_and_moves_it_by_the_graft(tmp_path):
    """On a two-block model for 12 steps, held 4 steps: group "none" continues the run trained without a
    break; a grafted run's first loss after the break differs from both parents' unless nothing moved."""
    from lnworked.stress.warmup_schedules import schedule_losses

    config = StressConfig(layers=2, steps=12)
    pair = (("half", 4), ("quarter", 4))
    rows = graft_rows([3], pair, ("mlp", "ends"), config)
    assert len(rows) == (2 + 2 * 2) * 8 and {r["step"] for r in rows} == set(range(5, 13))
    runs = {}
    for r in rows:
        runs.setdefault((r["weights"], r["donor"], r["group"]), []).append(r["loss"])
    whole = schedule_losses(pair, [3], config)
    for kind, _ in pair:
        assert np.allclose(runs[kind, kind, "none"], whole[(kind, 4)][0, 4:], rtol=1e-4), kind
    for group in ("mlp", "ends"):
        for a, b in (("half", "quarter"), ("quarter", "half")):
            assert abs(runs[a, b, group][0] - runs[a, a, "none"][0]) > 1e-6
            assert abs(runs[a, b, group][0] - runs[b, b, "none"][0]) > 1e-6
    write_graft_csv(rows, tmp_path / "graft.csv")
    assert read_graft_csv(tmp_path / "graft.csv") == [{**r, "loss": pytest.approx(r["loss"], rel=1e-8)} for r in rows]


@pytest.mark.parametrize("groups", [(), ("mlp", "mlp"), ("blocks",), ("none",)])
def test_an_unknown_graft_group_is_refused(groups):
    with pytest.raises(ValueError, match="^groups: must be distinct keys"):
        graft_rows([7], SWAP_PAIR, groups)


@pytest.mark.parametrize("_, graft_name, holds_name", STORED)
def test_committed_grafts_keep_the_committed_holds(_, graft_name, holds_name):
    """Group "none" of the committed grafts is each hold itself: the losses of warmup-holds.csv (or
    warmup-holds-more-seeds.csv) after the jump, as closely as :data:`DIAGONAL` says; every other group moves
    the run."""
    from lnworked.stress import committed

    rows, about = getattr(committed, graft_name)()
    assert about["rows"] == len(rows) and "warmup-graft" in about["command"]
    hold_seeds, holds = summarise(getattr(committed, holds_name)()[0])
    k = full_rate_from(SWAP_PAIR[0])
    runs = {}
    for r in rows:
        runs.setdefault((r["weights"], r["donor"], r["group"]), {})[(r["seed"], r["step"])] = r["loss"]
    kinds = [kind for kind, _ in SWAP_PAIR]
    assert set(runs) == ({(a, a, "none") for a in kinds}
                         | {(a, b, g) for a in kinds for b in kinds if a != b for g in GRAFT_GROUPS})
    steps = range(k + 1, StressConfig().steps + 1)
    steps_compared, rtol = DIAGONAL[holds_name]
    for kind in kinds:
        own = np.array([[runs[kind, kind, "none"][seed, step] for step in steps] for seed in hold_seeds])
        assert np.allclose(own[:, :steps_compared], holds[(kind, k)][:, k:][:, :steps_compared], rtol=rtol[kind]), kind
    for (a, b, g), losses in runs.items():
        if g != "none":
            assert max(abs(losses[key] - runs[a, a, "none"][key]) for key in losses) > 1e-3, (a, g)
