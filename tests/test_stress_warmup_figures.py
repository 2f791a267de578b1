"""The why-warmup chapter's figures: they draw the numbers they are given, in text a phone can read.

Small synthetic inputs whose means and ranges are worked out here by hand, so each check compares
the plotted line with an independent computation, not with the figure code's own helper.
"""

from __future__ import annotations

import numpy as np
import pytest
from matplotlib.colors import to_hex

from lnworked.stress.warmup_figures import (FONT_390, workable_curve_figure, constant_rates_figure,
                                            rate_rise_figure, schedules_figure, warmup_schedule_figure)
from lnworked.stress.first_step_figures import (amplification_figure, argument_figure,
                                                first_steps_figure, first_update_figure,
                                                loss_along_update_figure, step_response_figure)
from lnworked.stress.threshold_figures import momentum_walk_figure, valley_figure

RATE, SMALL = 2e-3, 2e-3 / 120


def _first_update_rows():
    """Two seeds, three depths, two rates: ``relative`` = depth * (2 for Post-LN) * (seed - 6) * rate."""
    rows = []
    for pre_norm in (True, False):
        for seed in (7, 8):
            for layers in (1, 2, 4):
                for lr in (RATE, SMALL):
                    rows.append(dict(pre_norm=pre_norm, seed=seed, layers=layers, learning_rate=lr,
                                     relative=layers * (1 if pre_norm else 2) * (seed - 6) * lr,
                                     delta_loss=-layers * lr * (seed - 6),
                                     linear_delta_loss=-2 * layers * lr * (seed - 6) * (1 if pre_norm else seed - 5)))
    return rows


def _profile_rows():
    """Step-0 rows of three runs over 3 blocks; the warmed-up run has different numbers so it must be left out."""
    rows = []
    for pre_norm, warmup, base in ((True, 0, 1.0), (False, 0, 10.0), (False, 120, 99.0)):
        for layer in (1, 2, 3):
            for step in (0, 60):
                rows.append(dict(pre_norm=pre_norm, warmup=warmup, step=step, layer=layer,
                                 block_gradient_norm=base * layer + step))
    return rows


def _shares():
    """Two seeds of 3 blocks (6 sublayers)."""
    return {True: np.array([[0.5, 0.4, 0.3, 0.2, 0.1, 0.05], [0.7, 0.6, 0.5, 0.4, 0.3, 0.25]]),
            False: np.array([[0.5, 0.5, 0.5, 0.5, 0.5, 0.5], [0.6, 0.6, 0.6, 0.6, 0.6, 0.6]])}


def _line(ax, label):
    (line,) = [ln for ln in ax.get_lines() if ln.get_label() == label]
    return line


def test_argument_figure_draws_the_three_links():
    fig = argument_figure(_shares(), _profile_rows(), _first_update_rows(), SMALL)
    forward, backward, update = fig.axes
    # forward: mean over the two seeds, attention at l - 1/4 and MLP at l + 1/4
    x, y = _line(forward, "Post-LN").get_data()
    np.testing.assert_allclose(x, [0.75, 1.25, 1.75, 2.25, 2.75, 3.25])
    np.testing.assert_allclose(y, [0.55] * 6)
    np.testing.assert_allclose(_line(forward, "Pre-LN").get_ydata(), [0.6, 0.5, 0.4, 0.3, 0.2, 0.15])
    # backward: the step-0 rows of the run without warmup, block by block
    x, y = _line(backward, "Post-LN").get_data()
    np.testing.assert_allclose(x, [1, 2, 3])
    np.testing.assert_allclose(y, [10, 20, 30])
    np.testing.assert_allclose(_line(backward, "Pre-LN").get_ydata(), [1, 2, 3])
    # update: mean over seeds 7 and 8 (factor (1 + 2) / 2) at the small rate only
    x, y = _line(update, "Post-LN").get_data()
    np.testing.assert_allclose(x, [1, 2, 4])
    np.testing.assert_allclose(y, np.array([1, 2, 4]) * 2 * 1.5 * SMALL)
    assert update.get_yscale() == "log" and backward.get_yscale() == "linear" and backward.get_ylim()[0] == 0


@pytest.mark.parametrize("change, argument", [
    (lambda a: a[0].pop(False), "shares"),
    (lambda a: a.__setitem__(1, [r for r in a[1] if r["pre_norm"] or r["warmup"]]), "profile_rows"),
    (lambda a: a.__setitem__(3, 1e-5), "small_rate"),
])
def test_argument_figure_rejects_missing_inputs(change, argument):
    args = [_shares(), _profile_rows(), _first_update_rows(), SMALL]
    change(args)
    with pytest.raises(ValueError, match=argument):
        argument_figure(*args)


def test_warmed_up_curves_differ_in_colour_and_marker():
    curves = {name: np.ones((2, 5)) * k for k, name in
              enumerate(("Pre-LN", "Post-LN", "Pre-LN + warmup", "Post-LN + warmup"), 1)}
    (ax,) = first_steps_figure(curves).axes
    means = [_line(ax, name) for name in curves]
    assert len({to_hex(line.get_color()) for line in means}) == 4
    assert len({line.get_marker() for line in means}) == 4


def _response_rows():
    """Three runs at two steps; the delivered share is 0.5 + step / 100 (+ 0.2 for Pre-LN), the promise
    (minus ``linear_delta_loss``) 0.3 - step / 300 (+ 0.1 for warmup)."""
    return [dict(run=run, pre_norm=pre_norm, warmup=warmup, step=step, delivered=0.5 + step / 100 + 0.2 * pre_norm,
                 linear_delta_loss=-(0.3 - step / 300 + 0.1 * bool(warmup)))
            for run, pre_norm, warmup in (("Pre-Norm · no warmup", True, 0), ("Post-Norm · no warmup", False, 0),
                                          ("Post-Norm · 120-step warmup", False, 120))
            for step in (60, 0)]


def test_step_response_figure_draws_each_runs_shares_in_step_order():
    fig = step_response_figure(_response_rows())
    ax = fig.axes[0]
    pre = _line(ax, "Pre-LN, no warmup")
    assert list(pre.get_xdata()) == [0, 60]
    assert np.allclose(pre.get_ydata(), [0.7, 1.3])
    assert np.allclose(_line(ax, "Post-LN, 120-step warmup").get_ydata(), [0.5, 1.1])
    warm, post = _line(ax, "Post-LN, 120-step warmup"), _line(ax, "Post-LN, no warmup")
    assert (warm.get_color(), warm.get_marker()) != (post.get_color(), post.get_marker())


def test_step_response_figure_draws_each_share_above_its_promise():
    """The bottom panel: the promise -linear_delta_loss of each run, in step order, on a log scale."""
    bottom = step_response_figure(_response_rows()).axes[1]
    assert bottom.get_yscale() == "log"
    assert np.allclose(_line(bottom, "Pre-LN, no warmup").get_ydata(), [0.3, 0.1])
    assert np.allclose(_line(bottom, "Post-LN, 120-step warmup").get_ydata(), [0.4, 0.2])


def test_step_response_figure_text_is_at_least_12_px_on_a_358_px_wide_screen():
    """Shown 358 px wide, a point of the figure is 358 / (width in points) px."""
    fig = step_response_figure(_response_rows())
    ax = fig.axes[0]
    texts = [ax.xaxis.label, ax.yaxis.label] + ax.get_xticklabels() + ax.get_yticklabels() + list(fig.legends[0].get_texts())
    px_per_point = 358 / (fig.get_figwidth() * 72)
    assert min(t.get_fontsize() for t in texts if t.get_text()) * px_per_point >= 12


def _finals():
    """Final losses of two seeds: 4 and 3 at the constant rate, held k: 4 / k and 3 / k, linear k: 1 / k and 2 / k."""
    finals = {("constant", 0): np.array([4.0, 3.0])}
    for k in (2, 8):
        finals[("held", k)] = np.array([4.0 / k, 3.0 / k])
        finals[("linear", k)] = np.array([1.0 / k, 2.0 / k])
    return finals


def test_warmup_schedule_figure_draws_each_kinds_geometric_mean_from_the_constant_rate():
    fig = warmup_schedule_figure(_finals(), 64, 0.1)
    for ax, kind, scale in zip(fig.axes, ("held", "linear"), (np.sqrt(12.0), np.sqrt(2.0))):
        (line,) = [ln for ln in ax.get_lines() if ln.get_gid() == kind]
        assert np.allclose(line.get_ydata(), [np.sqrt(12.0), scale / 2, scale / 8])
        assert [t.get_text() for t in ax.get_xticklabels()] == ["0", "2", "8"]
        assert ax.get_yscale() == "log"
    with pytest.raises(ValueError, match="finals"):
        warmup_schedule_figure({("held", 2): np.ones(2)}, 64, 0.1)


def _rise_losses():
    """Two seeds, 12 steps: the loss of schedule number i is (i + 1) * (seed 1: 1, seed 2: 3) at every step."""
    names = [("constant", 0), ("reduced", 2), ("reduced", 4), ("cut", 3), ("cut", 6), ("linear", 12)]
    return {name: np.outer([1.0, 3.0], np.full(12, i + 1.0)) for i, name in enumerate(names)}


def test_rate_rise_figure_draws_each_schedules_mean_over_seeds_on_log_axes():
    losses = _rise_losses()
    fig = rate_rise_figure(losses, 12, 64, 0.1)
    top, bottom = fig.axes
    for ax, gid, name in ((top, "reduced-1", ("constant", 0)), (top, "reduced-4", ("reduced", 4)),
                          (bottom, "cut-6", ("cut", 6)), (bottom, "cut-12", ("linear", 12))):
        (line,) = [ln for ln in ax.get_lines() if ln.get_gid() == gid]
        # the mean of the two seeds' losses, 1 and 3 times the schedule's number: twice that number
        assert np.allclose(line.get_ydata(), (1.0 + 3.0) / 2 * losses[name][0] / 1.0)
        assert ax.get_yscale() == "log"
    labels = [t.get_text() for t in bottom.get_legend().get_texts()]
    assert labels == ["k = 3", "k = 6", "k = 12 (whole)"]
    assert [t.get_text() for t in top.get_legend().get_texts()] == ["η (full)", "η/2", "η/4"]
    # a tick on the top edge at each step where the full rate starts
    ticks = sorted(ln.get_xdata()[0] for ln in bottom.get_lines() if ln.get_gid() is None and ln.get_linewidth() == 3)
    assert ticks == [3, 6, 12]


def test_each_run_keeps_its_look_in_every_figure_of_the_section():
    """Read 125: a colour named one run in one figure and another in the next. The constant rate, the
    cut warmups and the whole warmup look as in the five schedules' figure, the lower constant rates as
    the holds at the same rate; no two different runs share a colour."""
    from lnworked.stress.warmup_figures import (CUT_LOOKS, HOLD_LOOKS, REDUCED_LOOKS, SCHEDULE_LOOKS,
                                                WHOLE_LOOK)

    constant, held, cut30, cut60, whole = SCHEDULE_LOOKS
    eighth, quarter, half, steep = HOLD_LOOKS  # the holds' figure: eta/8, eta/4, eta/2, the linear warmup
    assert REDUCED_LOOKS == {1: constant, 2: half, 4: quarter, 8: eighth}
    assert CUT_LOOKS[30] == cut30 and CUT_LOOKS[60] == cut60 and WHOLE_LOOK == whole
    runs = [constant, held, cut30, cut60, whole, eighth, quarter, half, steep, CUT_LOOKS[90]]
    assert len({color for color, _, _ in runs}) == len(runs)
    # and the figure draws them so: the cut at 30 orange, the whole warmup navy, eta/2 as the eta/2 hold
    losses = _rise_losses()
    losses[("cut", 30)] = losses.pop(("cut", 3))
    top, bottom = rate_rise_figure(losses, 12, 64, 0.1).axes
    drawn = {ln.get_gid(): ln.get_color() for ax in (top, bottom) for ln in ax.get_lines() if ln.get_gid()}
    assert drawn["cut-30"] == cut30[0] and drawn["cut-12"] == whole[0] and drawn["reduced-2"] == half[0]


def test_rate_rise_figure_needs_the_full_rate_the_whole_warmup_and_both_kinds():
    losses = _rise_losses()
    for missing in (("constant", 0), ("linear", 12)):
        with pytest.raises(ValueError, match="^losses"):
            rate_rise_figure({k: v for k, v in losses.items() if k != missing}, 12, 64, 0.1)
    with pytest.raises(ValueError, match="^losses"):
        rate_rise_figure({k: v for k, v in losses.items() if k[0] != "cut"}, 12, 64, 0.1)


def test_rate_rise_figure_draws_only_the_panels_asked_for():
    """6.5's body draws the constant rates alone: the cut warmups answer a forecast and sit in its fold."""
    losses = _rise_losses()
    only_constant = {k: v for k, v in losses.items() if k[0] in ("constant", "reduced")}
    (ax,) = rate_rise_figure(only_constant, 12, 64, 0.1, panels=("constant",)).axes
    assert sorted(ln.get_gid() for ln in ax.get_lines() if ln.get_gid()) == ["reduced-1", "reduced-2", "reduced-4"]
    assert not [ln for ln in ax.get_lines() if ln.get_linewidth() == 3]  # no ticks of a cut
    assert ax.get_title() == "a constant rate"
    # the range is set by the curves drawn: a cut run far lower, given but not drawn, does not stretch it
    lower = {**losses, ("cut", 3): losses[("cut", 3)] * 1e-6}
    (alone,) = rate_rise_figure(lower, 12, 64, 0.1, panels=("constant",)).axes
    assert alone.get_ylim()[0] == pytest.approx(0.1 / 2)
    (cut,) = rate_rise_figure({k: v for k, v in losses.items() if k[0] in ("cut", "linear")}, 12, 64, 0.1,
                              panels=("cut",)).axes
    assert sorted(ln.get_gid() for ln in cut.get_lines() if ln.get_gid()) == ["cut-12", "cut-3", "cut-6"]
    # both, asked for in either order, are drawn constant rates on top
    top, bottom = rate_rise_figure(losses, 12, 64, 0.1, panels=("cut", "constant")).axes
    assert (top.get_title(), bottom.get_title()) == ("a constant rate", "warmup, full rate from step k")


def test_rate_rise_figure_rejects_unknown_or_no_panels_and_missing_runs_of_a_drawn_panel():
    losses = _rise_losses()
    for panels in ((), ("constant", "holds"), "constant"):
        with pytest.raises(ValueError, match="^panels"):
            rate_rise_figure(losses, 12, 64, 0.1, panels=panels)
    with pytest.raises(ValueError, match="^losses"):
        rate_rise_figure({k: v for k, v in losses.items() if k[0] != "reduced"}, 12, 64, 0.1, panels=("constant",))
    with pytest.raises(ValueError, match="^losses"):
        rate_rise_figure({k: v for k, v in losses.items() if k != ("linear", 12)}, 12, 64, 0.1, panels=("cut",))


def _schedule_runs():
    """Two runs over 12 steps, two seeds: run i's loss is (i + 1) * (seed 1: 1, seed 2: 3), its rate ramps or is held."""
    ramp, held = np.minimum(1.0, np.arange(1, 13) / 6), np.where(np.arange(1, 13) <= 6, 0.1, 1.0)
    return [("ramp", ramp, np.outer([1.0, 3.0], np.full(12, 1.0))), ("held", held, np.outer([1.0, 3.0], np.full(12, 2.0)))]


def test_schedules_figure_draws_one_panel_per_run_with_every_seed_coloured_by_whether_it_learns():
    """Reads 222-224: the runs' bands lay on top of each other on one axis; one panel each, every seed drawn."""
    from lnworked.style import PALETTE
    runs = _schedule_runs()
    losses = np.array([[3.0] * 12, [3.0] * 10 + [0.05, 0.05], [0.05] * 12])  # seeds: fails, learns, learns
    runs = runs + [("three seeds", np.ones(12), losses)]
    fig = schedules_figure(runs, 64, 0.1, last=2)
    panels = [ax for ax in fig.axes if ax.get_title(loc="left")]
    assert len(panels) == 3
    # the titles count the seeds whose final loss (the mean of their last `last` losses) ends below the mark
    assert [ax.get_title(loc="left") for ax in panels] == ["ramp: 0 of 2 learn", "held: 0 of 2 learn",
                                                           "three seeds: 2 of 3 learn"]
    for i, (ax, (label, rates, run_losses)) in enumerate(zip(panels, runs)):
        seeds = [ln for ln in ax.get_lines() if (ln.get_gid() or "").startswith(f"seed-{i}-")]
        assert len(seeds) == len(run_losses)
        for line, seed_loss in zip(seeds, run_losses):
            assert np.allclose(line.get_ydata(), seed_loss)
            learned = seed_loss[-2:].mean() < 0.1
            assert to_hex(line.get_color()) == to_hex(PALETTE["navy"] if learned else PALETTE["grey"])
        (center,) = [ln for ln in ax.get_lines() if ln.get_gid() == f"loss-{i}"]
        assert np.allclose(center.get_ydata(), np.median(run_losses, axis=0))
        assert ax.get_yscale() == "log"
    # where the full rate arrives: step 6 of the ramp, step 7 of the held run; none when it starts there
    for i, step in ((0, 6), (1, 7)):
        (arrives,) = [ln for ln in panels[i].get_lines() if ln.get_gid() == f"arrives-{i}"]
        assert np.allclose(arrives.get_xdata(), step)
    assert not [ln for ln in panels[2].get_lines() if ln.get_gid() == "arrives-2"]
    # one step axis and one loss axis for every panel, and one legend naming what the lines are
    assert len({ax.get_xlim() for ax in panels}) == 1 and len({ax.get_ylim() for ax in panels}) == 1
    (legend,) = fig.legends
    assert [t.get_text() for t in legend.get_texts()] == [
        "a random seed that learns", "a random seed that does not", "their median", "the full rate η from here",
        "ln 64: a uniform guess", "0.1 nats: learned"]


def test_momentum_walk_figure_draws_each_walks_size_on_a_log_axis():
    from lnworked.stress.sharpness import adam_threshold, momentum_walk
    walks = {r: momentum_walk(r * adam_threshold(0.9), 0.9, 40) for r in (0.8, 1.0, 1.2)}
    fig = momentum_walk_figure(walks)
    (ax,) = fig.axes
    assert ax.get_yscale() == "log"
    for r, thetas in walks.items():
        (line,) = [ln for ln in ax.get_lines() if ln.get_gid() == f"walk {r:g}"]
        assert np.allclose(line.get_ydata(), np.abs(thetas))
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["0.8 × the threshold", "at the threshold",
                                                                  "1.2 × the threshold"]
    with pytest.raises(ValueError, match="^walks"):
        momentum_walk_figure({})


def test_momentum_walk_figure_with_a_top_keeps_the_axis_and_names_the_walk_that_leaves_it():
    from lnworked.stress.sharpness import adam_threshold, momentum_walk
    walks = {r: momentum_walk(r * adam_threshold(0.9), 0.9, 100) for r in (0.8, 1.0, 1.2)}
    fig = momentum_walk_figure(walks, top=1e4)
    (ax,) = fig.axes
    assert ax.get_ylim()[1] == 1e4
    # the walk above the threshold grows past 1e4; the other two stay under it and keep their labels
    assert np.abs(walks[1.2]).max() > 1e4 > max(np.abs(walks[0.8]).max(), np.abs(walks[1.0]).max())
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["0.8 × the threshold", "at the threshold",
                                                                  "1.2 × the threshold (past the top)"]
    for bad in (1.0, 0.5, float("inf"), float("nan")):
        with pytest.raises(ValueError, match="^top"):
            momentum_walk_figure(walks, top=bad)


def test_valley_figure_puts_each_walk_on_the_bowl_and_names_its_fate():
    """Plain gradient descent is Adam's momentum walk without momentum: theta_s = (1 - eta H)^s."""
    from lnworked.stress.sharpness import adam_threshold, momentum_walk
    limit = adam_threshold(0)
    walks = {r * limit: momentum_walk(r * limit, 0.0, 4) for r in (0.8, 1.0, 1.2)}
    for eta_h, thetas in walks.items():
        assert np.allclose(thetas, (1 - eta_h) ** np.arange(5))
    fig = valley_figure(walks, limit)
    assert [ax.get_title() for ax in fig.axes] == ["ηH = 1.6: the steps settle", "ηH = 2: it swings for ever",
                                                   "ηH = 2.4: it bounces out"]
    for ax, (eta_h, thetas) in zip(fig.axes, sorted(walks.items())):
        (walk,) = [ln for ln in ax.get_lines() if ln.get_gid() == f"walk {eta_h:g}"]
        assert np.allclose(walk.get_xdata(), thetas) and np.allclose(walk.get_ydata(), thetas ** 2 / 2)
        left, right = ax.get_xlim()
        assert left < thetas.min() and thetas.max() < right  # every point inside its panel
    # the swing's points coincide, so their steps share one label per point
    assert sorted(t.get_text() for t in fig.axes[1].texts) == ["0, 2, 4", "1, 3"]
    with pytest.raises(ValueError, match="^walks"):
        valley_figure({}, limit)


def test_schedules_figure_can_draw_the_mean_instead_of_the_median():
    """Read 203: a mean over seeds stayed above the learned mark where most seeds were below it."""
    rates = np.ones(4)
    losses = np.array([[3.0] * 4, [3.0] * 4, [3.0, 1.0, 0.05, 0.01], [3.0, 1.0, 0.05, 0.01], [3.0, 1.0, 0.05, 0.01]])
    mean = schedules_figure([("hold", rates, losses)], 64, 0.1, center="mean", last=1)
    median = schedules_figure([("hold", rates, losses)], 64, 0.1, last=1)
    (by_mean,) = [ln for ln in mean.axes[0].get_lines() if ln.get_gid() == "loss-0"]
    (by_median,) = [ln for ln in median.axes[0].get_lines() if ln.get_gid() == "loss-0"]
    assert np.allclose(by_mean.get_ydata(), losses.mean(axis=0)) and by_mean.get_ydata()[-1] > 0.1
    assert np.allclose(by_median.get_ydata(), [3.0, 1.0, 0.05, 0.01]) and by_median.get_ydata()[-1] < 0.1
    with pytest.raises(ValueError, match="^center"):
        schedules_figure([("hold", rates, losses)], 64, 0.1, center="mode", last=1)


def test_schedules_figure_rejects_no_runs_mismatched_steps_and_a_bad_last():
    with pytest.raises(ValueError, match="^runs"):
        schedules_figure([], 64, 0.1)
    label, rates, losses = _schedule_runs()[0]
    with pytest.raises(ValueError, match="ramp"):
        schedules_figure([(label, rates[:-1], losses)], 64, 0.1)
    for last in (0, 13):
        with pytest.raises(ValueError, match="^last"):
            schedules_figure([(label, rates, losses)], 64, 0.1, last=last)


def test_step_response_figure_rejects_no_rows():
    with pytest.raises(ValueError, match="rows"):
        step_response_figure([])


@pytest.mark.parametrize("make", [
    lambda: argument_figure(_shares(), _profile_rows(), _first_update_rows(), SMALL),
    lambda: first_update_figure(_first_update_rows(), RATE, SMALL),
    lambda: first_steps_figure({"Pre-LN": np.ones((2, 5)), "Post-LN": np.ones((2, 5))}),
    lambda: amplification_figure([dict(r, output_change=r["relative"]) for r in _first_update_rows()
                                  if r["learning_rate"] == RATE], _shares()),
    lambda: step_response_figure(_response_rows()),
    lambda: warmup_schedule_figure(_finals(), 64, 0.1),
    lambda: rate_rise_figure(_rise_losses(), 12, 64, 0.1),
    lambda: rate_rise_figure(_rise_losses(), 12, 64, 0.1, panels=("constant",)),
    lambda: schedules_figure(_schedule_runs(), 64, 0.1),
    lambda: momentum_walk_figure({0.8: [1.0, -0.5, 0.2], 1.2: [1.0, -2.0, 4.0]}),
    lambda: _outcome_map(),
    lambda: _arrival_strip(),
    lambda: momentum_walk_figure({0.8: [1.0, -0.5, 0.2], 1.2: [1.0, -2.0, 4.0]}, top=3.0),
    lambda: workable_curve_figure({0: [4, 4], 30: [2, 1]}, np.minimum(np.arange(61) / 60, 1), "the warmup"),
    lambda: constant_rates_figure({1: [3.0, 2.0], 2: [1.0, 1.2], 4: [0.8, 0.9], 8: [1.9, 2.0]}),
])
def test_every_text_is_large_enough_for_a_phone(make):
    fig = make()
    fig.canvas.draw() if hasattr(fig.canvas, "draw") else None
    texts = [t for ax in fig.axes for t in (ax.title, ax.xaxis.label, ax.yaxis.label) if t.get_text()]
    texts += [t for ax in fig.axes for t in ax.get_xticklabels() + ax.get_yticklabels() if t.get_text()]
    texts += [t for legend in fig.legends + [ax.get_legend() for ax in fig.axes if ax.get_legend()]
              for t in legend.get_texts()]
    texts += [t for ax in fig.axes for t in ax.texts]
    assert texts
    smallest = min(FONT_390.values())
    assert min(t.get_fontsize() for t in texts) >= smallest >= 14


def _overlaps(a, b) -> bool:
    return a.x0 < b.x1 and b.x0 < a.x1 and a.y0 < b.y1 and b.y0 < a.y1


@pytest.mark.parametrize("make", [
    lambda: argument_figure(_shares(), _profile_rows(), _first_update_rows(), SMALL),
])
def test_no_title_covers_a_tick_or_axis_label(make):
    """A title wider than its axes overhangs the top y tick label (chapter 6's "1.0" was covered)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    fig = make()
    renderer = FigureCanvasAgg(fig).get_renderer()
    fig.draw(renderer)
    labels = [t for ax in fig.axes for t in (ax.get_xticklabels() + ax.get_yticklabels()
                                             + [ax.xaxis.label, ax.yaxis.label]) if t.get_text() and t.get_visible()]
    for ax in fig.axes:
        box = ax.title.get_window_extent(renderer)
        hit = [t.get_text() for t in labels if _overlaps(box, t.get_window_extent(renderer))]
        assert not hit, f"title {ax.title.get_text()!r} covers {hit}"


def test_argument_figure_labels_at_least_three_gradient_ticks_on_a_narrow_range():
    # a band narrower than a decade (0.044 to 0.15, as on the page), where a log axis labels 0.05 and 0.1 only
    profile_rows = [dict(pre_norm=pre_norm, warmup=0, step=0, layer=layer, block_gradient_norm=value)
                    for pre_norm, values in ((True, (0.044, 0.06, 0.08)), (False, (0.09, 0.12, 0.15)))
                    for layer, value in zip((1, 2, 3), values)]
    fig = argument_figure(_shares(), profile_rows, _first_update_rows(), SMALL)
    backward = fig.axes[1]
    fig.canvas.draw()
    low, high = backward.get_ylim()
    shown = [label.get_text() for tick, label in zip(backward.get_yticks(), backward.get_yticklabels())
             if label.get_text() and low <= tick <= high]
    assert len(shown) >= 3, shown


def _along_curves():
    """Two placements' loss along the step, and their slopes."""
    ts = np.array([0.0, 0.25, 0.5, 1.0])
    return ts, {True: dict(loss=np.array([4.0, 3.9, 3.8, 3.7]), slope=-0.4),
                False: dict(loss=np.array([4.0, 3.98, 3.97, 3.97]), slope=-0.3)}


@pytest.mark.parametrize("make", [
    lambda: loss_along_update_figure(*_along_curves(), 0.01),
    lambda: first_steps_figure({"Pre-LN": np.ones((2, 5)), "Post-LN": np.ones((2, 5))}),
    lambda: amplification_figure([dict(r, output_change=r["relative"]) for r in _first_update_rows()
                                  if r["learning_rate"] == RATE], _shares()),
    lambda: argument_figure(_shares(), _profile_rows(), _first_update_rows(), SMALL),
    lambda: step_response_figure(_response_rows()),
])
def test_legend_sits_below_every_axes(make):
    """A phone shows these figures small: a legend inside an axes would cover curves."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    fig = make()
    assert all(ax.get_legend() is None for ax in fig.axes) and len(fig.legends) == 1
    renderer = FigureCanvasAgg(fig).get_renderer()
    fig.draw(renderer)
    legend_top = fig.legends[0].get_window_extent(renderer).y1
    assert legend_top <= min(ax.get_tightbbox(renderer).y0 for ax in fig.axes) + 1


def _stream_rows():
    """Three runs over 3 blocks at two steps: Pre-LN's stream grows (1, 2, 3 at step 60), both Post-LN
    runs' stay at 1 +- 0.004, noise a narrow y-range would magnify into structure."""
    rows = []
    for run, pre_norm, warmup in (("pre", True, 0), ("post", False, 0), ("warm", False, 120)):
        for step in (0, 60):
            for layer in (1, 2, 3):
                value = (1 + (layer - 1) * step / 60) if pre_norm else 1 + 0.004 * (-1) ** layer
                rows.append(dict(run=run, pre_norm=pre_norm, warmup=warmup, step=step, layer=layer,
                                 stream_rms=value))
    return rows


def test_trained_profiles_share_one_y_axis_from_zero_and_one_y_label():
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from lnworked.stress.profiles import profiles_figure

    fig = profiles_figure(_stream_rows(), "stream_rms", log=False)
    pre, post, warm = fig.axes
    np.testing.assert_allclose(_line(pre, "step 60").get_ydata(), [1, 2, 3])
    assert pre.get_ylim() == post.get_ylim() == warm.get_ylim()
    assert pre.get_ylim()[0] == 0 and pre.get_ylim()[1] >= 3
    # one label for the three panels, so no panel's label runs into the next one's
    assert not any(ax.get_ylabel() for ax in fig.axes) and fig.get_supylabel()
    renderer = FigureCanvasAgg(fig).get_renderer()
    fig.draw(renderer)
    boxes = [ax.get_tightbbox(renderer) for ax in fig.axes]
    assert all(upper.y0 >= lower.y1 - 1 for upper, lower in zip(boxes, boxes[1:]))


def test_trained_profiles_legend_keys_the_steps_in_no_run_s_hue():
    """The legend's lines are in the text colour, shaded as the steps are: not the first panel's (Pre-LN's) violet."""
    from matplotlib.colors import to_hex

    from lnworked.stress.profiles import profiles_figure
    from lnworked.style import PALETTE

    fig = profiles_figure(_stream_rows(), "stream_rms", log=False)
    (legend,) = fig.legends
    keys = legend.get_lines()
    steps = sorted({r["step"] for r in _stream_rows()})
    assert [t.get_text() for t in legend.get_texts()] == [f"step {s}" for s in steps]
    assert {to_hex(k.get_color()) for k in keys} == {to_hex(PALETTE["text"])}
    assert [k.get_alpha() for k in keys] == [line.get_alpha() for line in fig.axes[1].get_lines()]


def _walk_like_the_page(first_t):
    """A walk shaped like the page's: the t's near warmup's first step and up to 1; Pre-LN bends
    gently, Post-LN flattens early."""
    ts = np.concatenate([first_t * np.array([0, 1, 2, 4, 8]), np.linspace(0.125, 1, 8)])
    return ts, {True: dict(loss=4.2 - 0.36 * ts + 0.12 * ts ** 2, slope=-0.36),
                False: dict(loss=4.2 - 0.03 * (1 - np.exp(-ts / 0.08)) - 0.2 * ts * np.exp(-ts / 0.08),
                            slope=-0.23)}


@pytest.mark.parametrize("first_t, written", [(1 / 120, "t = 1/120"), (0.003, "t = 0.003")])
def test_zoom_labels_warmups_first_step_clear_of_the_curves(first_t, written):
    """The zoom panel marks warmup's first step with a dashed vertical line at ``t = first_t`` and a
    label saying so (with the t, as 1/n when it is one), inside the panel and off every curve."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    fig = loss_along_update_figure(*_walk_like_the_page(first_t), first_t)
    top, bottom = fig.axes
    (marker,) = [line for line in bottom.get_lines() if line.get_gid() == "warmup's first step"]
    assert list(marker.get_xdata()) == [first_t, first_t] and marker.get_linestyle() == "--"
    (label,) = bottom.texts
    assert label.get_text() == f"warmup's\nfirst step,\n{written}"
    assert label.get_fontsize() >= FONT_390["legend"]
    renderer = FigureCanvasAgg(fig).get_renderer()
    fig.draw(renderer)
    box = label.get_window_extent(renderer)
    panel = bottom.get_window_extent(renderer)
    assert panel.x0 <= box.x0 and box.x1 <= panel.x1 and panel.y0 <= box.y0 and box.y1 <= panel.y1
    assert box.x0 >= bottom.transData.transform((first_t, 0))[0]  # right of the line, not on it
    for line in bottom.get_lines():
        if line is marker or len(line.get_xdata()) < 2:
            continue
        x, y = np.asarray(line.get_xdata(), float), np.asarray(line.get_ydata(), float)
        dense = np.linspace(x.min(), x.max(), 400)
        points = bottom.transData.transform(np.column_stack([dense, np.interp(dense, x, y)]))
        inside = (box.x0 <= points[:, 0]) & (points[:, 0] <= box.x1) & (box.y0 <= points[:, 1]) & (points[:, 1] <= box.y1)
        assert not inside.any(), line.get_label()


def test_one_logit_figure_draws_the_walk_it_names():
    """The worked example's figure: each move's loss curve is ln(1 + e^(-a t)) - ln 2 and its tangent
    -a t / 2, computed here from the formula; the dot sits where the drawn curve over the drawn tangent
    is one half, found here on the drawn points; only the move that reaches one half inside the step
    gets one."""
    from lnworked.stress.first_step_figures import ONE_LOGIT_LOOKS, one_logit_figure

    ax = one_logit_figure().axes[0]
    lines = {line.get_gid(): line for line in ax.get_lines() if line.get_gid()}
    for move, *_ in ONE_LOGIT_LOOKS:
        t, loss = (np.asarray(v, float) for v in lines[f"loss {move:g}"].get_data())
        _, tangent = (np.asarray(v, float) for v in lines[f"tangent {move:g}"].get_data())
        np.testing.assert_allclose(loss, np.log1p(np.exp(-move * t)) - np.log(2), atol=1e-12)
        np.testing.assert_allclose(tangent, -move * t / 2, atol=1e-12)
        share = loss[1:] / tangent[1:]
        if share[-1] < 0.5:
            (x,), (y,) = lines[f"half {move:g}"].get_data()
            assert x == pytest.approx(t[1:][np.argmin(np.abs(share - 0.5))], abs=0.01)
            assert y == pytest.approx(np.log1p(np.exp(-move * x)) - np.log(2))
        else:
            assert f"half {move:g}" not in lines
    assert sum("half" in gid for gid in lines) == 1
    assert all(text.get_fontsize() >= FONT_390["legend"] for text in ax.texts if text.get_text())


def _outcome_groups():
    """Two groups over seeds (7, 8, 9): learned where the final loss is below 0.1, worked out by hand:
    row a learns in seeds 7 and 9, row b in none, row c in all three."""
    return [("first", [("a", np.array([0.05, 2.0, 0.01])), ("b", np.array([1.0, 0.1, 3.0]))]),
            ("second", [("c", np.array([0.02, 0.03, 0.09]))])]


def test_outcome_map_fills_exactly_the_cells_of_runs_that_learned():
    from lnworked.stress.warmup_figures import outcome_map_figure

    fig = outcome_map_figure(_outcome_groups(), (7, 8, 9), 0.1, split_after=7)
    ax = fig.axes[0]
    cells = {c.get_gid(): {tuple(p) for p in c.get_offsets().tolist()} for c in ax.collections}
    # (column, row): a in columns 0 and 2, c in all three; a loss of exactly 0.1 is not below the mark
    assert cells["learned"] == {(0, 0), (2, 0), (0, 2), (1, 2), (2, 2)}
    assert cells["not-learned"] == {(1, 0), (0, 1), (1, 1), (2, 1)}
    assert [t.get_text() for t in ax.texts if t.get_gid() == "count"] == ["2/3", "0/3", "3/3"]
    assert [t.get_text() for t in ax.texts if t.get_gid() == "label"] == ["a", "b", "c"]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["7", "8", "9"]
    # one line between the two groups (below row b), one dashed line after seed 7
    assert [ln.get_ydata()[0] for ln in ax.lines if ln.get_linestyle() == "-"] == [1.2]
    assert [ln.get_xdata()[0] for ln in ax.lines if ln.get_linestyle() == "--"] == [0.5]


@pytest.mark.parametrize("kwargs, message", [
    (dict(groups=[("g", [])]), "groups: every group"),
    (dict(groups=[("g", [("a", np.ones(2))])]), "groups: 'a' needs one final loss per seed"),
    (dict(threshold=0.0), "threshold: must be positive"),
    (dict(split_after=9), "split_after: must be one of the seeds before the last"),
])
def test_outcome_map_rejects_bad_input_naming_the_argument(kwargs, message):
    from lnworked.stress.warmup_figures import outcome_map_figure

    args = dict(groups=_outcome_groups(), seeds=(7, 8, 9), threshold=0.1)
    args.update(kwargs)
    with pytest.raises(ValueError, match=message):
        outcome_map_figure(**args)


def _outcome_map():
    from lnworked.stress.warmup_figures import outcome_map_figure

    return outcome_map_figure(_outcome_groups(), (7, 8, 9), 0.1)


def test_first_update_figure_draws_each_seeds_delivered_share_averaged_over_seeds():
    # delta_loss / linear_delta_loss, by hand from _first_update_rows: Pre-LN 1/2 at every depth and seed;
    # Post-LN 1 / (2 (seed - 5)), so 1/4 for seed 7 and 1/6 for seed 8, mean 5/24
    fig = first_update_figure(_first_update_rows(), RATE, SMALL)
    top = fig.axes[0]
    lines = {ln.get_gid(): ln for ln in top.lines if ln.get_gid()}
    for full in ("full", "first"):
        assert np.allclose(lines[f"delivered-Pre-LN-{full}"].get_ydata(), [50, 50, 50])
        assert np.allclose(lines[f"delivered-Post-LN-{full}"].get_ydata(), [100 * 5 / 24] * 3)
        assert list(lines[f"delivered-Post-LN-{full}"].get_xdata()) == [1, 2, 4]


def _arrival_rows():
    """Two runs, products in raw units (threshold 38): at the threshold's 0.5 and 2 times, and at 1."""
    return [("warmups", np.array([19.0, 76.0]), np.array([0.05, 3.0])),
            ("holds", np.array([38.0]), np.array([0.2]))]


def _arrival_strip(**kwargs):
    from lnworked.stress.threshold_figures import arrival_strip_figure

    return arrival_strip_figure(_arrival_rows(), 38.0, 0.1, **kwargs)


def test_arrival_strip_puts_each_seed_at_its_product_over_the_threshold_in_its_runs_row():
    from matplotlib.colors import to_hex

    from lnworked.style import PALETTE

    fig = _arrival_strip(bold=["holds"])
    ax = fig.axes[0]
    points = {c.get_gid(): c.get_offsets().tolist() for c in ax.collections if len(c.get_offsets())}
    # row 0 (top) the warmups, its two seeds a little apart up and down; row 1 the holds
    assert points == {"warmups learned": [[0.5, -0.08]], "warmups not learned": [[2.0, 0.08]],
                      "holds not learned": [[1.0, 1.0]]}
    filled = {c.get_gid(): to_hex(c.get_facecolors()[0]) for c in ax.collections if len(c.get_offsets())}
    assert filled == {"warmups learned": PALETTE["navy"], "warmups not learned": "#ffffff",
                      "holds not learned": "#ffffff"}
    assert ax.get_xscale() == "log" and ax.get_ylim()[0] > ax.get_ylim()[1]  # the first row on top
    assert [t.get_text() for t in ax.get_yticklabels()] == ["warmups", "holds"]
    assert [t.get_fontweight() for t in ax.get_yticklabels()] == ["normal", "bold"]
    assert [ln.get_xdata()[0] for ln in ax.lines] == [1.0]  # the threshold, 1 in these units
    assert [t.get_text() for t in fig.legends[0].get_texts()] == [
        "learned (final loss below 0.1 nats)", "did not learn", "threshold (38)"]


@pytest.mark.parametrize("kwargs, message", [
    (dict(rows=[]), "rows: needs at least one"),
    (dict(rows=[("g", np.ones(2), np.ones(3))]), "rows: 'g' needs as many"),
    (dict(rows=[("g", -np.ones(2), np.ones(2))]), "rows: 'g' needs as many positive"),
    (dict(threshold=0.0), "threshold: must be positive"),
    (dict(learned_below=-1.0), "learned_below: must be positive"),
    (dict(bold=["nobody"]), "bold: 'nobody' is not the label of a row"),
])
def test_arrival_strip_rejects_bad_input_naming_the_argument(kwargs, message):
    from lnworked.stress.threshold_figures import arrival_strip_figure

    args = dict(rows=_arrival_rows(), threshold=38.0, learned_below=0.1)
    args.update(kwargs)
    with pytest.raises(ValueError, match=message):
        arrival_strip_figure(**args)


def test_workable_curve_figure_puts_one_disc_per_chosen_rate_and_counts_the_seeds():
    from lnworked.stress.warmup_figures import workable_curve_figure
    rates = np.minimum(np.arange(61) / 60, 1)
    best = {0: [4, 4, 4], 30: [2, 2, 1]}
    fig = workable_curve_figure(best, rates, "the warmup")
    (ax,) = fig.axes
    discs = {c.get_gid(): c.get_offsets()[0].tolist() for c in ax.collections if c.get_gid()}
    assert discs == {"best 0 4": [0, 0.25], "best 30 2": [30, 0.5], "best 30 1": [30, 1.0]}
    assert sorted(t.get_text() for t in ax.texts) == ["1", "2", "3"]
    (line,) = [ln for ln in ax.get_lines() if ln.get_gid() == "warmup"]
    assert np.allclose(line.get_ydata(), rates[1:]) and ax.get_yscale() == "log"
    assert [t.get_text() for t in ax.get_yticklabels()] == ["η", "η/2", "η/4", "η/8"]
    with pytest.raises(ValueError, match="^best"):
        workable_curve_figure({}, rates, "w")
    with pytest.raises(ValueError, match="^best: divisors"):
        workable_curve_figure({0: [16]}, rates, "w")
    with pytest.raises(ValueError, match="^rates"):
        workable_curve_figure(best, [0.5], "w")


def test_workable_curve_figure_draws_the_threshold_rate_per_seed_and_its_geometric_mean():
    from lnworked.stress.warmup_figures import workable_curve_figure
    rates = np.minimum(np.arange(61) / 60, 1)
    ceiling = {0: [0.05, 0.2], 30: [2.0, 8.0]}
    fig = workable_curve_figure({0: [4, 4], 30: [2, 1]}, rates, "the warmup", ceiling=ceiling)
    (ax,) = fig.axes
    seeds = {ln.get_gid(): sorted(ln.get_ydata()) for ln in ax.get_lines() if str(ln.get_gid()).startswith("ceiling")}
    assert seeds == {"ceiling 0": [0.05, 0.2], "ceiling 30": [2.0, 8.0]}
    (mean,) = [ln for ln in ax.get_lines() if ln.get_label().startswith("rate at Adam's threshold")]
    assert np.allclose(mean.get_xdata(), [-1.5, 28.5]) and np.allclose(mean.get_ydata(), [0.1, 4.0])
    low, high = ax.get_ylim()
    assert low < 0.05 and high > 8.0
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels[0] == "8η" and "η" in labels and labels[-1] == "η/32"
    with pytest.raises(ValueError, match="^ceiling"):
        workable_curve_figure({0: [4]}, rates, "w", ceiling={0: [0.0]})


def test_constant_rates_figure_draws_each_seed_and_rings_its_lowest_rate():
    finals = {8: [1.9, 2.0, 1.8], 1: [3.0, 0.04, 2.5], 4: [0.8, 0.9, 0.7], 2: [1.0, 1.2, 0.6]}
    fig = constant_rates_figure(finals)
    (ax,) = fig.axes
    lines = {ln.get_gid(): ln for ln in ax.get_lines() if ln.get_gid()}
    assert np.allclose(lines["seed 1"].get_xdata(), [1 / 8, 1 / 4, 1 / 2, 1])
    assert np.allclose(lines["seed 1"].get_ydata(), [2.0, 0.9, 1.2, 0.04])
    (best,) = [c for c in ax.collections if c.get_gid() == "best"]
    assert np.allclose(best.get_offsets(), [[1 / 4, 0.8], [1, 0.04], [1 / 2, 0.6]])
    assert [t.get_text() for t in ax.get_xticklabels()] == ["η/8", "η/4", "η/2", "η"]
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    # shaded: the rates workable in every seed, from the left edge up to the lowest seed's best rate (eta/4)
    (shade,) = [p for p in ax.patches if p.get_gid() == "workable"]
    assert np.isclose(shade.get_x() + shade.get_width(), 1 / 4) and shade.get_x() <= 1 / 8
    for bad in ({}, {1: [1.0], 2: [1.0, 2.0]}, {1: [0.0], 2: [1.0]}):
        with pytest.raises(ValueError, match="^finals"):
            constant_rates_figure(bad)


def test_schedules_over_workable_figure_draws_each_rate_to_just_past_its_jump_styled_by_how_many_learn():
    from lnworked.stress.warmup_figures import schedules_over_workable_figure
    hold = np.r_[np.full(10, 0.125), np.ones(30)]  # eta/8 for 10 steps, then eta
    rise = np.minimum(np.arange(1, 41) / 20, 1)  # linear, first at eta after 19 steps
    low = np.full(40, 0.01)  # never reaches eta: drawn whole
    panels = [("holds", [("hold", hold, 5, "#00796b"), ("rise", rise, 2, "#2e7d32")]), ("low", [("low", low, 0, "#8a8a8a")])]
    fig = schedules_over_workable_figure({0: [4, 4, 2], 10: [2, 2, 2]}, panels, total=6, after=3)
    top, bottom = fig.axes[:2]
    lines = {ln.get_gid(): ln for ax in (top, bottom) for ln in ax.get_lines() if ln.get_gid()}
    # up to 3 steps past the first step at eta: index 10 for the hold (14 points), 19 for the rise (23 points)
    assert np.allclose(lines["schedule hold"].get_ydata(), hold[:14])
    assert np.allclose(lines["schedule rise"].get_ydata(), rise[:23])
    assert np.allclose(lines["schedule low"].get_ydata(), low) and lines["schedule low"].get_xdata()[-1] == 39
    # solid where most of the 6 learn (5), dash-dot where some (2), dashed where none (0)
    assert [lines[f"schedule {k}"].get_linestyle() for k in ("hold", "rise", "low")] == ["-", "-.", "--"]
    # each run in the colour it is given (its colour in the section's other figures)
    assert [to_hex(lines[f"schedule {k}"].get_color()) for k in ("hold", "rise", "low")] == ["#00796b", "#2e7d32", "#8a8a8a"]
    assert [t.get_text() for t in top.get_legend().get_texts()] == ["best constant rate", "hold: 5/6", "rise: 2/6"]
    discs = {c.get_gid(): (c.get_offsets()[0].tolist(), float(c.get_sizes()[0]))
             for c in top.collections if c.get_gid()}
    # one disc per step and chosen divisor, sized 40 + 25 per seed that chose it
    assert discs == {"best 0 4": ([0, 0.25], 90.0), "best 0 2": ([0, 0.5], 65.0), "best 10 2": ([10, 0.5], 115.0)}
    assert top.get_yscale() == "log" and top.get_ylim()[0] < 0.01 < 1 < top.get_ylim()[1]
    # every rate the text names is ticked (read 202 found eta/8 and eta/2 unlabelled), then every other power
    assert [t.get_text() for t in top.get_yticklabels()] == ["η", "η/2", "η/4", "η/8", "η/32", "η/128"]
    # each panel's step axis ends just past its own last step: the top panel's runs end at step 22, the
    # bottom's at 39, and neither before the last disc (step 10)
    assert top.get_xlim() == (-2, 24) and bottom.get_xlim() == (-2, 41)
    for bad, message in ((dict(panels=[("p", [])]), "^panels"), (dict(total=0), "^total"),
                         (dict(best={}), "^best"), (dict(panels=[("p", [("x", hold, 7, "#000000")])]), "^panels: 'x'"),
                         (dict(panels=[("p", [("x", -hold, 1, "#000000")])]), "^panels: 'x'")):
        args = dict(best={0: [4]}, panels=panels, total=6)
        args.update(bad)
        with pytest.raises(ValueError, match=message):
            schedules_over_workable_figure(**args)


def test_rate_name_writes_a_multiple_of_the_full_rate_as_the_book_does():
    from lnworked.stress.warmup_figures import rate_name
    assert [rate_name(r) for r in (1, 4, 0.25, 1 / 120, 1.5)] == ["η", "4η", "η/4", "η/120", "1.5η"]
    for bad in (0, -1, float("nan")):
        with pytest.raises(ValueError, match="^ratio"):
            rate_name(bad)


def test_placement_rates_figure_draws_each_seed_per_placement_and_rings_its_lowest():
    from lnworked.stress.warmup_figures import placement_rates_figure
    finals = {"Pre-LN": {0.25: [1.2, 1.1], 1: [0.02, 0.03], 4: [5e-4, 4e-4]},
              "Post-LN": {0.25: [2.5, 2.6], 1: [3.7, 3.4], 4: [4.1, 2.0]}}
    fig = placement_rates_figure(finals, 90)
    (ax,) = fig.axes
    lines = {ln.get_gid(): ln for ln in ax.get_lines() if ln.get_gid()}
    assert np.allclose(lines["Pre-LN seed 1"].get_ydata(), [1.1, 0.03, 4e-4])
    assert np.allclose(lines["Post-LN seed 0"].get_xdata(), [0.25, 1, 4])
    rings = {c.get_gid(): c.get_offsets().tolist() for c in ax.collections if c.get_gid()}
    # Pre-LN's lowest is the largest rate in both seeds; Post-LN's the smallest in seed 0, the largest in seed 1
    assert np.allclose(rings["Pre-LN best"], [[4, 5e-4], [4, 4e-4]])
    assert np.allclose(rings["Post-LN best"], [[0.25, 2.5], [4, 2.0]])
    assert [t.get_text() for t in ax.get_xticklabels()] == ["η/4", "η", "4η"] and ax.get_title() == "Constant rates, 90 steps"
    for bad in ({}, {"Mid-LN": finals["Pre-LN"]}, {"Pre-LN": {1: [1.0]}}, {"Pre-LN": {1: [1.0], 2: [1.0, 2.0]}},
                {"Pre-LN": {1: [0.0], 2: [1.0]}}):
        with pytest.raises(ValueError, match="^finals"):
            placement_rates_figure(bad, 90)


def test_constant_rates_figure_draws_pre_ln_below_on_the_same_rate_axis():
    finals = {8: [1.9, 2.0], 4: [0.8, 0.9], 2: [1.0, 1.2], 1: [3.0, 2.5]}
    pre = {0.125: [2.5, 2.6], 1.0: [0.05, 0.04], 4.0: [0.002, 0.003], 2.0: [0.01, 0.004]}
    fig = constant_rates_figure(finals, pre_ln=pre)
    top, bottom = fig.axes[:2]
    lines = {ln.get_gid(): ln for ln in bottom.get_lines() if ln.get_gid()}
    assert np.allclose(lines["Pre-LN seed 1"].get_xdata(), [1 / 8, 1, 2, 4])
    assert np.allclose(lines["Pre-LN seed 1"].get_ydata(), [2.6, 0.04, 0.004, 0.003])
    (best,) = [c for c in bottom.collections if c.get_gid() == "Pre-LN best"]
    assert np.allclose(best.get_offsets(), [[4, 0.002], [4, 0.003]])
    (post_best,) = [c for c in top.collections if c.get_gid() == "Post-LN best"]
    assert np.allclose(post_best.get_offsets(), [[1 / 4, 0.8], [1 / 4, 0.9]])
    for ax in (top, bottom):  # one rate axis: every rate of either panel ticked on both
        assert [t.get_text() for t in ax.get_xticklabels()] == ["η/8", "η/4", "η/2", "η", "2η", "4η"]
        assert top.get_xlim() == bottom.get_xlim()
    # the rates Post-LN was not tried at say so (read 199 looked for missing data), and only in its panel
    (untried,) = [t for t in top.texts if t.get_gid() == "Post-LN not tried"]
    assert untried.get_text() == "not tried" and 1 < untried.get_position()[0] < 4
    assert not [t for t in bottom.texts if t.get_gid() == "Pre-LN not tried"]
    # a legend per panel once squeezed both axes to a sliver of the width (read 180's build): one legend, below
    fig.canvas.draw()
    assert all(ax.get_position().width > 0.6 for ax in (top, bottom))
    assert len(fig.legends) == 1 and not top.get_legend() and not bottom.get_legend()
    for bad in ({}, {1.0: [1.0], 2.0: [1.0, 2.0]}):
        with pytest.raises(ValueError, match="^pre_ln"):
            constant_rates_figure(finals, pre_ln=bad)


def test_schedule_sketches_figure_draws_each_schedule_once_as_steps_and_no_outcome():
    from lnworked.stress.warmup_figures import schedule_sketches_figure
    ramp = np.minimum(np.arange(1, 41) / 20, 1)
    hold = np.r_[np.full(10, 0.125), np.ones(30)]
    fig = schedule_sketches_figure([("a ramp", ramp), ("a hold", hold)], shown=30)
    assert [ax.get_title(loc="left") for ax in fig.axes] == ["a ramp", "a hold"]
    for ax, rates in zip(fig.axes, (ramp, hold)):
        (line,) = [ln for ln in ax.get_lines() if (ln.get_gid() or "").startswith("sketch")]
        assert np.allclose(line.get_ydata(), rates[:30]) and line.get_drawstyle() == "steps-post"
        assert [t.get_text() for t in ax.get_yticklabels()] == ["0", "η/2", "η"]
    assert fig.axes[0].get_xlim() == fig.axes[1].get_xlim() == (0, 31)
    assert not fig.legends and not any(ax.get_legend() for ax in fig.axes)  # nothing about which runs learn
    for bad, message in (([], "^sketches"), ([("x", np.array([0.5]))], "^sketches: 'x'"),
                         ([("x", 2 * ramp)], "^sketches: 'x'")):
        with pytest.raises(ValueError, match=message):
            schedule_sketches_figure(bad)
    with pytest.raises(ValueError, match="^shown"):
        schedule_sketches_figure([("a ramp", ramp)], shown=41)


def test_log_axis_shows_three_or_more_labels_below_and_above_1_on_a_range_under_a_decade():
    """Read 240: Post-LN's panel of the constant rates (final losses 0.55 to 4.5) was labelled at 1 and 3
    only, so the ringed best rates (all below 1) could not be read. A log axis spanning about a decade is
    labelled at 1, 1.5, 2, 3, 5 and 7 of it; one spanning several decades keeps 1 and 3 of each."""
    finals = {8: np.linspace(1.9, 2.3, 5), 4: np.linspace(0.55, 1.2, 5), 2: np.linspace(0.7, 1.8, 5),
              1: np.linspace(3.0, 4.5, 5)}
    pre_ln = {r: np.full(5, v) for r, v in zip((1 / 8, 1, 4), (1.2, 2e-3, 1.3e-4))}
    fig = constant_rates_figure(finals, pre_ln)
    fig.canvas.draw()
    post, pre = fig.axes[:2]

    def shown(ax):
        low, high = ax.get_ylim()
        return [t.get_text() for t, v in zip(ax.get_yticklabels(), ax.get_yticks()) if low <= v <= high]

    assert {"0.7", "1", "2", "3"} <= set(shown(post)) and len([t for t in shown(post) if float(t) < 1]) >= 1
    assert {"0.001", "0.003", "1"} <= set(shown(pre)) and "0.002" not in shown(pre)
