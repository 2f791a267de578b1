"""Post-LN under other rate schedules (lnworked.stress.warmup_schedules).

Independent routes: the rates against the schedule's definition written out by hand; the runs
against :func:`lnworked.stress.train.train`, the stress test's own path, which trains the article's
constant-rate and warmed-up Post-LN runs; the stored table against the stored DeepNorm runs, which
trained the same constant-rate Post-LN runs another time."""

import numpy as np
import pytest

from lnworked.stress import StressConfig
from lnworked.stress.config import default_runs, warmup_for
from lnworked.stress.train import train
from lnworked.stress.warmup_schedules import (GRID, HOLD_DIVISORS, HOLDS, PRE_RATES, constant_ratio, full_rate_from,
                                              held_rates, learns, read_schedule_csv, schedule_losses, schedule_rates,
                                              schedule_rows, summarise, write_schedule_csv)

TINY = StressConfig(layers=1, steps=3, batch_size=4, sequence_length=8)


def test_held_rates_by_hand():
    assert held_rates(0.5, 4, 2, 0.01).tolist() == [0.01, 0.01, 0.5, 0.5]
    assert held_rates(0.5, 3, 0, 0.01).tolist() == [0.5, 0.5, 0.5]


def test_schedule_rates_follow_their_definitions():
    config = StressConfig()
    eta, warm = config.learning_rate, warmup_for(config.steps)
    assert np.all(schedule_rates(("constant", 0), config) == eta)
    held = schedule_rates(("held", 5), config)
    assert np.allclose(held[:5], eta / warm) and np.all(held[5:] == eta)
    linear = schedule_rates(("linear", 20), config)
    assert np.allclose(linear, [eta * min(1, s / 20) for s in range(1, config.steps + 1)])
    assert np.allclose(schedule_rates(("reduced", 4), config), eta / 4)
    assert np.allclose(schedule_rates(("raised", 4), config), 4 * eta)
    assert full_rate_from(("raised", 2)) is None and full_rate_from(("reduced", 2)) is None
    # the constant schedules' rate over eta is what schedule_rates gives them
    for schedule in PRE_RATES:
        assert np.allclose(schedule_rates(schedule, config) / eta, constant_ratio(schedule))
    with pytest.raises(ValueError, match="^schedule"):
        constant_ratio(("linear", 20))
    cut = schedule_rates(("cut", 30), config)
    assert np.allclose(cut, [eta * s / warm if s <= 30 else eta for s in range(1, config.steps + 1)])
    quarter = schedule_rates(("quarter", 60), config)
    assert np.allclose(quarter[:60], eta / 4) and np.all(quarter[60:] == eta)
    assert [schedule_rates((kind, 3), config)[0] * d / eta for kind, d in (("half", 2), ("eighth", 8))] == [1, 1]
    assert full_rate_from(("eighth", 20)) == 20
    # cut at the end of the article's warmup is the article's warmup
    assert np.array_equal(schedule_rates(("cut", warm), config), schedule_rates(("linear", warm), config))


@pytest.mark.parametrize("schedule", [("cosine", 5), ("held", 0), ("linear", 500), ("constant", 3), ("reduced", 1),
                                      ("raised", 1), ("cut", 0), ("cut", 121), ("half", 0), ("quarter", 181)])
def test_schedule_rates_reject_bad_schedules_naming_them(schedule):
    with pytest.raises(ValueError, match="^schedule"):
        schedule_rates(schedule, StressConfig())


def test_schedule_losses_reject_repeated_or_no_schedules():
    for schedules in ([], [("held", 1), ("held", 1)]):
        with pytest.raises(ValueError, match="^schedules"):
            schedule_losses(schedules, [0], TINY)


def test_constant_and_linear_runs_are_the_stress_tests_own():
    """The article's Post-LN runs (constant rate; linear warmup of two thirds of the run) trained by
    ``train`` from the same seed and batches give the same losses."""
    warm = warmup_for(TINY.steps)
    mine = schedule_losses([("constant", 0), ("linear", warm)], [TINY.seed], TINY)
    runs = {r.spec.name: r for r in train(TINY, device="cpu").runs}
    post, post_warm = (runs[spec.name].loss for spec in default_runs(TINY)[1:])
    assert np.allclose(mine[("constant", 0)][0], post, rtol=1e-5)
    assert np.allclose(mine[("linear", warm)][0], post_warm, rtol=1e-5)


def test_pre_norm_runs_are_the_stress_tests_own_pre_ln_run():
    """With ``pre_norm`` the constant-rate run is the article's Pre-LN run trained by ``train``; a
    placement that is not a bool is refused, naming the argument."""
    mine = schedule_losses([("constant", 0)], [TINY.seed], TINY, pre_norm=True)
    runs = {r.spec.name: r for r in train(TINY, device="cpu").runs}
    pre = runs[default_runs(TINY)[0].name].loss
    assert default_runs(TINY)[0].pre_norm
    assert np.allclose(mine[("constant", 0)][0], pre, rtol=1e-5)
    post = schedule_losses([("constant", 0)], [TINY.seed], TINY)
    assert not np.allclose(mine[("constant", 0)], post[("constant", 0)], rtol=1e-3)
    with pytest.raises(ValueError, match="^pre_norm"):
        schedule_losses([("constant", 0)], [TINY.seed], TINY, pre_norm="pre")


def test_rows_round_trip_through_csv_and_summarise(tmp_path):
    rows = schedule_rows([0, 1], [("constant", 0), ("held", 1)], TINY)
    assert len(rows) == 2 * 2 * TINY.steps
    write_schedule_csv(rows, tmp_path / "s.csv")
    back = read_schedule_csv(tmp_path / "s.csv")
    seeds, losses = summarise(back)
    assert seeds == [0, 1] and list(losses) == [("constant", 0), ("held", 1)]
    assert np.allclose(losses[("held", 1)][1], [r["loss"] for r in rows if r["k"] == 1 and r["seed"] == 1])
    with pytest.raises(ValueError, match="^rows"):
        summarise(back[:-1])


def test_learns_needs_every_run_finite_and_below_the_threshold():
    assert learns([0.01, 0.05], 0.1)
    assert not learns([0.01, 0.2], 0.1)
    assert not learns([0.01, float("nan")], 0.1)
    assert not learns([], 0.1)


def test_stored_schedules_cover_the_grid_and_the_constant_rate_matches_the_deepnorm_runs():
    """Every schedule of the grid for every seed and step; the constant-rate runs are the stored
    DeepNorm table's plain Post-LN runs (same model, seeds and batches), trained at another time."""
    from lnworked.stress.committed import committed_deepnorm, committed_warmup_schedules
    from lnworked.stress.deepnorm import summarise as summarise_deepnorm

    seeds, losses = summarise(committed_warmup_schedules()[0])
    assert set(losses) == set(GRID)
    assert all(v.shape == (len(seeds), StressConfig().steps) for v in losses.values())
    deepnorm = summarise_deepnorm(committed_deepnorm()[0])["Post-LN"]
    assert deepnorm["seeds"] == seeds
    assert np.allclose(losses[("constant", 0)][:, :5], deepnorm["loss"][:, :5], rtol=1e-4)


def test_stored_pre_ln_rates_cover_their_grid_and_the_full_rate_matches_the_deepnorm_runs():
    """Pre-LN at every constant rate of PRE_RATES on seeds 7-17, all 180 steps, finite; every rate of a
    seed starts from the same initial weights and first batch (one loss at step 1); at the full rate the
    runs are the stored DeepNorm table's Pre-LN runs on the seeds both have, trained at another time."""
    from lnworked.stress.committed import committed_deepnorm, committed_warmup_pre_rates
    from lnworked.stress.deepnorm import summarise as summarise_deepnorm

    seeds, losses = summarise(committed_warmup_pre_rates()[0])
    assert set(losses) == set(PRE_RATES) and seeds == list(range(7, 18))
    assert all(v.shape == (len(seeds), StressConfig().steps) and np.isfinite(v).all() for v in losses.values())
    first = np.stack([v[:, 0] for v in losses.values()])
    assert np.allclose(first, first[0], rtol=1e-5)
    deepnorm = summarise_deepnorm(committed_deepnorm()[0])["Pre-LN"]
    common = [seeds.index(seed) for seed in deepnorm["seeds"]]
    assert len(common) == len(deepnorm["seeds"]) >= 3
    assert np.allclose(losses[("constant", 0)][common, :5], deepnorm["loss"][:, :5], rtol=1e-4)


def test_holds_on_more_seeds_cover_the_same_grid_on_seeds_the_holds_do_not_use():
    """The check on eight more seeds: every hold, seeds 10-17 (none of the holds' 7-9), all 180 steps;
    for each seed every hold starts from the same initial weights and first batch (one loss at step 1)
    and the holds at one rate are one run until the shorter one's jump (to float32 rounding)."""
    from lnworked.stress.committed import committed_warmup_holds, committed_warmup_holds_more_seeds

    seeds, holds = summarise(committed_warmup_holds_more_seeds()[0])
    assert set(holds) == set(HOLDS) and seeds == list(range(10, 18))
    assert not set(seeds) & set(summarise(committed_warmup_holds()[0])[0])
    assert all(v.shape == (len(seeds), StressConfig().steps) and np.isfinite(v).all() for v in holds.values())
    first = np.stack([v[:, 0] for v in holds.values()])
    assert np.allclose(first, first[0], rtol=1e-5)
    for kind in HOLD_DIVISORS:
        assert np.allclose(holds[(kind, 20)][:, :20], holds[(kind, 60)][:, :20], rtol=1e-4), kind


def test_schedules_on_more_seeds_cover_the_grid_and_agree_with_the_holds_trained_apart():
    """Every schedule of the grid on the holds' eight more seeds, all 180 steps, finite or NaN only after
    a run turns non-finite; every run of a seed starts from the same initial weights and first batch
    (one loss at step 1); and a lower constant rate ``eta / d`` is the hold at ``eta / d`` until the
    hold's jump, trained by another command (``warmup-holds``), to float32 rounding."""
    from lnworked.stress.committed import committed_warmup_holds_more_seeds, committed_warmup_schedules_more_seeds

    seeds, schedules = summarise(committed_warmup_schedules_more_seeds()[0])
    hold_seeds, holds = summarise(committed_warmup_holds_more_seeds()[0])
    assert set(schedules) == set(GRID) and seeds == hold_seeds == list(range(10, 18))
    assert all(v.shape == (len(seeds), StressConfig().steps) for v in schedules.values())
    first = np.stack([v[:, 0] for v in schedules.values()])
    assert np.allclose(first, first[0], rtol=1e-5)
    for (kind, k), losses in holds.items():
        reduced = schedules[("reduced", HOLD_DIVISORS[kind])]
        # as on the first three seeds: float32 rounding over the first 20 steps, grown to a few per cent by
        # the longer holds' jump; the jump's effect is of order 1
        assert np.allclose(losses[:, :20], reduced[:, :20], rtol=1e-4), (kind, k)
        assert np.allclose(losses[:, :k], reduced[:, :k], rtol=2e-2), (kind, k)
        assert np.abs(losses[:, k + 5:] - reduced[:, k + 5:]).max() > 0.5, (kind, k)


def test_stored_holds_cover_their_grid_and_follow_the_lower_constant_rates_until_the_jump():
    """Every moderate hold for every seed and step. Until its full rate arrives, a hold at
    ``eta / d`` is the constant rate ``eta / d`` (``("reduced", d)``), trained another time in the
    schedules' table: the same losses up to the jump, different ones after."""
    from lnworked.stress.committed import committed_warmup_holds, committed_warmup_schedules

    seeds, holds = summarise(committed_warmup_holds()[0])
    schedule_seeds, schedules = summarise(committed_warmup_schedules()[0])
    assert set(holds) == set(HOLDS) and seeds == schedule_seeds
    for (kind, k), losses in holds.items():
        reduced = schedules[("reduced", HOLD_DIVISORS[kind])]
        # the same to float32 rounding over the first 20 steps; the two batched programs' rounding
        # grows with training (to 1% by step 60 at eta / 2), the jump's effect is of order 1
        assert np.allclose(losses[:, :20], reduced[:, :20], rtol=1e-4), (kind, k)
        assert np.allclose(losses[:, :k], reduced[:, :k], rtol=2e-2), (kind, k)
        assert np.abs(losses[:, k + 5:] - reduced[:, k + 5:]).max() > 0.5, (kind, k)


def test_join_seeds_stacks_each_shared_schedule_in_the_order_of_the_seeds():
    from lnworked.stress.warmup_schedules import join_seeds

    first = ([7, 8], {("linear", 60): np.array([[1.0, 2.0], [3.0, 4.0]]), ("cut", 30): np.zeros((2, 2))})
    more = ([10], {("linear", 60): np.array([[5.0, 6.0]])})
    seeds, losses = join_seeds(first, more)
    assert seeds == [7, 8, 10]
    assert list(losses) == [("linear", 60)]  # the cut is not in the second summary
    assert losses[("linear", 60)].tolist() == [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]


@pytest.mark.parametrize("summaries, match", [
    ((), "^summaries: needs at least one"),
    ((([7], {("linear", 60): np.ones((1, 2))}), ([7], {("linear", 60): np.ones((1, 2))})), "^summaries: a seed appears twice"),
    ((([7], {("linear", 60): np.ones((1, 2))}), ([8], {("linear", 60): np.ones((1, 3))})), "^summaries: schedule"),
])
def test_join_seeds_rejects_bad_input_naming_the_argument(summaries, match):
    from lnworked.stress.warmup_schedules import join_seeds

    with pytest.raises(ValueError, match=match):
        join_seeds(*summaries)


def test_schedule_name_says_what_the_rates_do():
    """Every short name of chapter 6's schedules is read against the schedule's own rates (over eta):
    "×k" means the first k steps at the rate named, then eta; "warmup cut at k" the article's rising rates up
    to step k, then eta; "steep warmup to k" a straight rise reaching eta at step k; "constant" one rate
    throughout. No two schedules share a name."""
    import re

    from lnworked.stress.schedule_explorer import SCHEDULE_OPTIONS
    from lnworked.stress.warmup_schedules import schedule_name

    config = StressConfig()
    eta, warm = config.learning_rate, warmup_for(config.steps)
    names = {}
    for schedule in SCHEDULE_OPTIONS + (("cut", 30), ("linear", 20)):
        name, rates = schedule_name(schedule, warm), schedule_rates(schedule, config) / eta
        names.setdefault(name, set()).add(schedule)
        if m := re.fullmatch(r"(held small|η/(\d+)) ×(\d+)", name):
            k, first = int(m[3]), 1 / warm if m[1] == "held small" else 1 / int(m[2])
            assert np.allclose(rates[:k], first) and np.all(rates[k:] == 1), name
        elif m := re.fullmatch(r"warmup cut at (\d+)", name):
            k = int(m[1])
            assert np.all(np.diff(rates[:k]) > 0) and rates[k - 1] < 1 and np.all(rates[k:] == 1), name
        elif m := re.fullmatch(r"steep warmup to (\d+)", name):
            k = int(m[1])
            assert k < warm and np.allclose(np.diff(rates[:k]), 1 / k) and np.all(rates[k - 1:] == 1), name
        elif name == "whole warmup":
            assert np.allclose(np.diff(rates[:warm]), 1 / warm) and np.all(rates[warm - 1:] == 1)
        elif m := re.fullmatch(r"constant η(?:/(\d+))?", name):
            assert np.allclose(rates, 1 / int(m[1] or 1)), name
        else:
            raise AssertionError(f"unexpected name {name!r}")
    assert all(len(s) == 1 for s in names.values()), names
    with pytest.raises(ValueError, match="^schedule"):
        schedule_name(("ramp", 3), warm)
