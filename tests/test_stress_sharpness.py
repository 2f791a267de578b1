"""Adam's preconditioned sharpness (lnworked.stress.sharpness).

Independent routes: the stability threshold against heavy-ball momentum simulated on a
one-dimensional quadratic just below and just above it; Lanczos against NumPy's dense
eigenvalues; the preconditioned Hessian-vector product against JAX's dense Hessian of the
flattened loss, and its preconditioner against the update AdamW itself takes."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.flatten_util import ravel_pytree

from lnworked.stress import StressConfig
from lnworked.stress.data import make_batches
from lnworked.stress.optim import make_optimizer
from lnworked.stress.sharpness import (adam_threshold, lanczos_extremes, make_sharpness_fns, momentum_walk,
                                       read_sharpness_csv, run_rates, sharpness_rows, write_sharpness_csv)
from lnworked.stress.stacked import make_logits
from lnworked.stress.step import make_loss
from lnworked.stress.train import initial_state

TINY = StressConfig(layers=1, steps=6, batch_size=2, sequence_length=4, width=8, heads=2, vocab_size=8)


@pytest.mark.parametrize("b1", [0.0, 0.5, 0.9])
def test_threshold_separates_shrinking_from_growing_heavy_ball(b1):
    """The walk itself is checked against its closed form below; here the threshold's formula
    against where the walk turns from shrinking to growing."""
    threshold = adam_threshold(b1)
    assert abs(momentum_walk(0.97 * threshold, b1, 4000)[-1]) < 1e-3
    assert abs(momentum_walk(1.03 * threshold, b1, 400)[-1]) > 1e3  # 400 steps: more overflow to inf


def test_threshold_is_38_for_the_articles_b1_and_2_without_momentum():
    assert adam_threshold(StressConfig().b1) == pytest.approx(38)
    assert adam_threshold(0) == 2


@pytest.mark.parametrize("ratio", [0.8, 1.0, 1.2])
def test_momentum_walk_is_the_closed_form_of_its_characteristic_roots(ratio):
    """theta_s = A z1^s + B z2^s, z the roots of z^2 - (1 + b1 - (1 - b1) eta_lam) z + b1, fitted to
    theta_0 = 1 and theta_1 = 1 - (1 - b1) eta_lam (the first step from m_0 = 0)."""
    b1 = 0.9
    eta_lam = ratio * adam_threshold(b1)
    z = np.roots([1, -(1 + b1 - (1 - b1) * eta_lam), b1]).astype(complex)
    coeffs = np.linalg.solve(np.array([[1, 1], z]), np.array([1, 1 - (1 - b1) * eta_lam], complex))
    s = np.arange(61)
    closed = (coeffs[:, None] * z[:, None] ** s).sum(axis=0)
    assert np.allclose(closed.imag, 0, atol=1e-9)
    assert np.allclose(momentum_walk(eta_lam, b1, 60), closed.real, rtol=1e-9, atol=1e-9)


def test_momentum_walk_shrinks_below_the_threshold_holds_at_it_and_grows_above():
    threshold = adam_threshold(0.9)
    below, at, above = (np.abs(momentum_walk(r * threshold, 0.9, 400)) for r in (0.8, 1.0, 1.2))
    assert below[-50:].max() < 1e-3 * below[:50].max()
    assert above[-50:].max() > 1e3 * above[:50].max()
    assert 0.1 < at[-50:].max() / at[:50].max() < 10


@pytest.mark.parametrize("kwargs, name", [({"eta_lam": 0}, "eta_lam"), ({"eta_lam": float("nan")}, "eta_lam"),
                                          ({"b1": 1.0}, "b1"), ({"steps": 0}, "steps")])
def test_momentum_walk_rejects_bad_arguments_by_name(kwargs, name):
    args = {"eta_lam": 30.0, "b1": 0.9, "steps": 10, **kwargs}
    with pytest.raises(ValueError, match=f"^{name}"):
        momentum_walk(**args)


@pytest.mark.parametrize("b1", [1.0, -0.1])
def test_threshold_rejects_b1_outside_0_1(b1):
    with pytest.raises(ValueError, match="^b1"):
        adam_threshold(b1)


def test_lanczos_finds_the_extreme_eigenvalues_of_dense_matrices():
    rng = np.random.default_rng(3)
    mats = [(lambda a: a + a.T)(rng.standard_normal((30, 30))) for _ in range(2)]
    top, low = lanczos_extremes(lambda q: np.stack([m @ v for m, v in zip(mats, q)]), 2, 30, iterations=30)
    exact = [np.linalg.eigvalsh(m) for m in mats]
    assert np.allclose(top, [e[-1] for e in exact]) and np.allclose(low, [e[0] for e in exact])
    # fewer iterations: estimates from inside the spectrum
    top8, low8 = lanczos_extremes(lambda q: np.stack([m @ v for m, v in zip(mats, q)]), 2, 30, iterations=8)
    assert np.all(top8 <= top + 1e-9) and np.all(low8 >= low - 1e-9)


def test_lanczos_rejects_more_iterations_than_dimensions():
    with pytest.raises(ValueError, match="^iterations"):
        lanczos_extremes(lambda q: q, 1, 4, iterations=5)


def _tiny_state():
    (params, opt_state), _ = initial_state(TINY, [0])
    one = jax.tree.map(lambda leaf: jnp.asarray(leaf[0]), (params, opt_state))
    sources, targets = make_batches(TINY)
    return one, sources[0], targets[0]


def test_preconditioned_product_matches_the_dense_hessian():
    (params, opt_state), source, target = _tiny_state()
    scale, apply = make_sharpness_fns(TINY)
    adam = opt_state[0]
    loss, s = scale(params, adam.nu, adam.count, source, target, False)
    flat, unravel = ravel_pytree(params)
    loss_fn = make_loss(make_logits(TINY, unroll=1))
    hessian = jax.hessian(lambda f: loss_fn(unravel(f), source, target, False))(flat)
    w = jax.random.normal(jax.random.PRNGKey(1), flat.shape)
    mine, dense = apply(params, s, w, source, target, False), s * (hessian @ (s * w))
    assert np.linalg.norm(mine - dense) <= 1e-4 * np.linalg.norm(dense)
    assert np.isclose(loss, loss_fn(params, source, target, False))


def test_preconditioner_is_what_adamw_divides_the_first_gradient_by():
    (params, opt_state), source, target = _tiny_state()
    scale, _ = make_sharpness_fns(TINY)
    adam = opt_state[0]
    _, s = scale(params, adam.nu, adam.count, source, target, True)
    grads = jax.grad(make_loss(make_logits(TINY, unroll=1)))(params, source, target, True)
    update, _ = make_optimizer(TINY).update(grads, opt_state, params)
    # AdamW's first update: -(g / (|g| + eps) + wd theta)
    decay = TINY.weight_decay * ravel_pytree(params)[0]
    assert np.allclose(-ravel_pytree(update)[0] - decay, ravel_pytree(grads)[0] * s ** 2, rtol=1e-4, atol=1e-6)


def test_rows_cover_every_run_seed_and_snapshot_and_round_trip(tmp_path):
    runs = ((False, ("constant", 0)), (False, ("linear", 4)), (True, ("constant", 0)))
    rows = sharpness_rows([0, 1], runs, (0, 2), TINY, iterations=4)
    assert len(rows) == 3 * 2 * 2
    warm = [r for r in rows if r["kind"] == "linear" and r["step"] == 2]
    assert all(r["rate"] == pytest.approx(3 / 4) for r in warm)
    assert all(r["lowest"] <= r["sharpness"] for r in rows)
    # at step 0 both Post-LN runs share their weights, so their measures agree
    first = {(r["kind"], r["seed"]): r["sharpness"] for r in rows if r["step"] == 0 and r["placement"] == "Post-LN"}
    assert first[("constant", 0)] == pytest.approx(first[("linear", 0)], rel=1e-4)
    write_sharpness_csv(rows, tmp_path / "s.csv")
    back = read_sharpness_csv(tmp_path / "s.csv")
    assert [(r["placement"], r["kind"], r["k"], r["seed"], r["step"]) for r in back] == \
        [(r["placement"], r["kind"], r["k"], r["seed"], r["step"]) for r in rows]
    assert np.allclose([r["sharpness"] for r in back], [r["sharpness"] for r in rows], rtol=1e-7)


def test_run_rates_are_the_schedules_rates_for_either_placement():
    """Pre-LN held small (chapter 6's divisor split) takes the same rates as Post-LN held small."""
    from lnworked.stress.warmup_schedules import schedule_rates

    for schedule in (("constant", 0), ("held", 3), ("linear", 4)):
        rates = schedule_rates(schedule, TINY)
        assert np.array_equal(run_rates((True, schedule), TINY), rates)
        assert np.array_equal(run_rates((False, schedule), TINY), rates)
    assert run_rates((True, ("held", 3)), TINY)[0] < run_rates((True, ("constant", 0)), TINY)[0]
    with pytest.raises(ValueError):
        run_rates((True, ("warm", 4)), TINY)


@pytest.mark.parametrize("snapshots", [(), (-1,), (6,)])
def test_rows_reject_bad_snapshots_naming_them(snapshots):
    with pytest.raises(ValueError, match="^snapshots"):
        sharpness_rows([0], snapshots=snapshots, config=TINY)


def test_committed_table_covers_every_run_seed_and_step_and_its_losses_are_the_schedules_runs():
    """The stored measurement: every run of RUNS for seeds 7-9 at every snapshot; its losses on the
    first batch at step 0 are the stored schedules' first losses (same weights, same batch)."""
    from lnworked.stress.committed import committed_warmup_schedules, committed_warmup_sharpness
    from lnworked.stress.sharpness import RUNS, SNAPSHOTS
    from lnworked.stress.warmup_schedules import summarise

    rows, about = committed_warmup_sharpness()
    keys = {((r["placement"] == "Pre-LN"), (r["kind"], r["k"]), r["seed"], r["step"]) for r in rows}
    assert keys == {(pre, schedule, seed, step) for pre, schedule in RUNS for seed in (7, 8, 9) for step in SNAPSHOTS}
    assert about["rows"] == len(rows) and "warmup-sharpness" in about["command"]
    seeds, losses = summarise(committed_warmup_schedules()[0])
    for r in rows:
        if r["step"] == 0 and r["placement"] == "Post-LN" and (r["kind"], r["k"]) in losses:
            assert r["loss"] == pytest.approx(losses[(r["kind"], r["k"])][seeds.index(r["seed"]), 0], rel=1e-5)


def test_committed_step_0_matches_a_fresh_measurement():
    """Recompute the initial weights' measure for seed 7, both placements, with the same Lanczos
    iterations from the same start. The stored run measured 18 runs together, this one 2: the
    float32 rounding of the Hessian-vector products differs with the batch of runs, and a
    16-iteration estimate moves with it by under a percent (a clean clone gave 317.0 against the
    stored 315.8); a wrong preconditioner or Hessian would move it by far more."""
    from lnworked.stress.committed import committed_warmup_sharpness

    fresh = sharpness_rows([7], ((False, ("constant", 0)), (True, ("constant", 0))), (0,), StressConfig())
    stored = {r["placement"]: r["sharpness"] for r in committed_warmup_sharpness()[0]
              if r["seed"] == 7 and r["step"] == 0 and r["kind"] == "constant"}
    for r in fresh:
        assert r["sharpness"] == pytest.approx(stored[r["placement"]], rel=2e-2)


def test_figure_rejects_runs_without_their_full_rate_step():
    from lnworked.stress.threshold_figures import sharpness_figure

    with pytest.raises(ValueError, match="^runs"):
        sharpness_figure([("panel", [("a", [0, 10], [[1.0, 2.0]], ("k", "-", "o"), 5)])], 38)
    with pytest.raises(ValueError, match="^runs"):
        sharpness_figure([], 38)
    with pytest.raises(ValueError, match="^runs"):
        sharpness_figure([("panel", [])], 38)
    with pytest.raises(ValueError, match="^threshold"):
        sharpness_figure([("panel", [("a", [0, 10], [[1.0, 2.0]], ("k", "-", "o"), 10)])], 0)


def test_figure_draws_each_panel_in_units_of_the_threshold():
    """Each run's line is the geometric mean over seeds divided by the threshold; the dashed line sits
    at 1; the ring marks the full rate's step. Every point means what a full-rate step from there would face
    (the full rate times the sharpness; reads 259-261: a second product, the run's own rate's, was hard to
    keep apart from it), so every line is drawn alike, thick with markers and each seed's marker, before
    the ring as after it (reads 127-139: a thin "what the full rate would face" line was read as the
    run's own state, and over-encoded the figure)."""
    from lnworked.stress.threshold_figures import sharpness_figure

    values = np.array([[76.0, 19.0, 38.0], [19.0, 76.0, 38.0]])
    fig = sharpness_figure([("top", [("a", [0, 10, 20], values, ("k", "-", "o"), 10)]),
                            ("bottom", [("b", [10, 20], values[:, 1:] * 2, ("r", "--", "s"), 10)])], 38.0)
    top, bottom = fig.axes[:2]
    assert [ax.get_title() for ax in (top, bottom)] == ["top", "bottom"]
    assert {ax.get_ylabel() for ax in (top, bottom)} == {"η × sharpness / threshold"}
    mean, *seeds_top, ring = top.get_lines()[:4]
    assert list(mean.get_xdata()) == [0, 10, 20] and mean.get_label() == "a" and mean.get_linewidth() > 2
    np.testing.assert_allclose(mean.get_ydata(), [1.0, 1.0, 1.0])
    assert [list(m.get_xdata()) for m in seeds_top] == [[0, 10, 20], [0, 10, 20]]
    # each seed a thin line, so a mean below the threshold cannot hide seeds that swing across it
    assert all(m.get_linestyle() == "-" and m.get_linewidth() < 1.5 for m in seeds_top)
    assert list(ring.get_xdata()) == [10] and ring.get_markersize() > 10
    mean, *rest = bottom.get_lines()  # a run drawn from its ring on
    assert list(mean.get_xdata()) == [10, 20]
    np.testing.assert_allclose(mean.get_ydata(), 2 * np.ones(2))
    assert list(rest[2].get_xdata()) == [10]
    assert [line.get_ydata()[0] for line in rest if line.get_linestyle() == "--" and len(line.get_ydata()) == 2
            and line.get_xdata()[0] == 0 and line.get_xdata()[1] == 1] == [1.0]
    widths = {line.get_linewidth() for ax in (top, bottom) for line in ax.get_lines()
              if line.get_linestyle() in ("-", "--") and line.get_label() in ("a", "b")}
    assert len(widths) == 1  # one look for every run's line


def test_figure_as_small_multiples_labels_its_shared_axes_once():
    """Reads 263, 265: three runs' seed lines crossing in one panel were a tangle. With ``legend=False`` each
    run gets its own panel, named by its title: no legends, each panel's products' axis labelled in short
    (read 270: one label spanning six panels fell outside a screenful) and the steps' axis under the last
    panel only; each panel ``panel_height`` inches tall."""
    from lnworked.stress.threshold_figures import sharpness_figure

    values = np.array([[76.0, 19.0, 38.0], [19.0, 76.0, 38.0]])
    runs = [("a", [0, 10, 20], values, ("k", "-", "o"), 10), ("b", [0, 10, 20], values / 2, ("r", "--", "s"), 0)]
    fig = sharpness_figure([(name, [run]) for name, run in zip(("a", "b"), runs)], 38.0, panel_height=2.5,
                           legend=False)
    top, bottom = fig.axes[:2]
    assert [ax.get_title() for ax in (top, bottom)] == ["a", "b"]
    assert top.get_legend() is None and bottom.get_legend() is None
    assert (top.get_xlabel(), bottom.get_xlabel()) == ("", "step")
    assert top.get_ylabel() == bottom.get_ylabel() == "ηΛ / 38"
    assert fig.get_figheight() == pytest.approx(5.0)
    np.testing.assert_allclose(bottom.get_lines()[0].get_ydata(), np.exp(np.log(values / 76.0).mean(axis=0)))
    with pytest.raises(ValueError, match="^panel_height"):
        sharpness_figure([("a", runs[:1])], 38.0, panel_height=0)


def test_figure_draws_the_median_seed_when_asked():
    """Read 213: a geometric mean over three seeds that swing from 0.03 to 36 times the threshold sits
    below it and reads as a run that settles. ``center="median"`` draws the middle seed at each step
    (here a different seed at each step, so the line swings as the seeds do); anything else is refused."""
    from lnworked.stress.threshold_figures import sharpness_figure

    values = 38.0 * np.array([[0.03, 30.0, 0.5], [0.5, 0.04, 20.0], [36.0, 0.6, 0.05]])
    fig = sharpness_figure([("panel", [("a", [0, 10, 20], values, ("k", "-", "o"), 0)])], 38.0, center="median")
    line = fig.axes[0].get_lines()[0]
    np.testing.assert_allclose(line.get_ydata(), [0.5, 0.6, 0.5])
    gmean = sharpness_figure([("panel", [("a", [0, 10, 20], values, ("k", "-", "o"), 0)])], 38.0)
    np.testing.assert_allclose(gmean.axes[0].get_lines()[0].get_ydata(),
                               np.exp(np.log(values / 38.0).mean(axis=0)))  # the default is unchanged
    with pytest.raises(ValueError, match="center"):
        sharpness_figure([("panel", [("a", [0, 10, 20], values, ("k", "-", "o"), 0)])], 38.0, center="mean")


def test_figure_draws_a_run_without_a_full_rate_step_whole_and_without_a_ring():
    """``full_from=None``: no ring."""
    from lnworked.stress.threshold_figures import sharpness_figure

    values = np.array([[3.8, 19.0, 38.0]])
    fig = sharpness_figure([("panel", [("own", [0, 10, 20], values, ("k", ":", "v"), None)])], 38.0)
    line, seed, *rest = fig.axes[0].get_lines()
    assert list(line.get_xdata()) == [0, 10, 20] and line.get_label() == "own"
    assert list(seed.get_xdata()) == [0, 10, 20]
    assert not any(r.get_marker() == "o" and r.get_markersize() > 10 for r in rest)  # no ring


def test_figure_labels_its_log_axis_as_numbers_at_1_and_3_of_each_decade():
    """Read 126: a panel whose values lie between 0.2 and 1.5 had labels at 1 and 10 only. The y ticks
    are at 1 and 3 times each power of ten, written as plain numbers."""
    from lnworked.stress.threshold_figures import sharpness_figure

    values = 38.0 * np.array([[0.2, 0.5, 1.5], [0.3, 0.6, 1.2]])
    fig = sharpness_figure([("panel", [("a", [0, 10, 20], values, ("k", "-", "o"), 0)])], 38.0)
    fig.canvas.draw()
    ax = fig.axes[0]
    low, high = ax.get_ylim()
    shown = {t.get_text() for t, v in zip(ax.get_yticklabels(), ax.get_yticks()) if low <= v <= high}
    assert {"0.3", "1"} <= shown and not any("10^" in t or "$" in t for t in shown)


def test_workable_products_figure_draws_each_rate_as_what_its_step_faces():
    """Reads 201, 204, 205, 208, 212: the figure of the threshold beside the workable rate was the page's
    one figure in rates while the others are in products. Each rate r (over the full rate) faces
    r / ceiling, where ceiling is the rate at the threshold: the full rate 1 / ceiling, the best rate
    (1/d) / ceiling, the warmup's next rate rates[s] / ceiling; each seed a marker, a thick line through
    the median of the seeds; the threshold dashed at 1. Inputs that do not line up are refused."""
    from lnworked.stress.threshold_figures import workable_products_figure

    ceiling = {0: [0.05, 0.25, 0.2], 10: [1.0, 0.5, 2.0]}
    best = {0: [4, 4, 4], 10: [2, 4, 2]}
    rates = np.arange(11) / 10
    fig = workable_products_figure(best, rates, ceiling)
    ax = fig.axes[0]
    by_gid = {ln.get_gid(): ln for ln in ax.get_lines() if ln.get_gid()}
    np.testing.assert_allclose(sorted(by_gid["the full rate η 0"].get_ydata()), [4.0, 5.0, 20.0])
    np.testing.assert_allclose(sorted(by_gid["the best constant rate 10"].get_ydata()), [0.25, 0.5, 0.5])
    np.testing.assert_allclose(sorted(by_gid["the warmup's next rate 10"].get_ydata()), [0.5, 1.0, 2.0])
    np.testing.assert_allclose(by_gid["the full rate η median"].get_ydata(), [5.0, 1.0])
    np.testing.assert_allclose(by_gid["the best constant rate median"].get_ydata(), [1.25, 0.5])
    np.testing.assert_allclose(by_gid["the warmup's next rate median"].get_ydata(), [0.0, 1.0])
    assert by_gid["the full rate η median"].get_linewidth() > 2
    assert [ln.get_ydata()[0] for ln in ax.get_lines() if ln.get_label() == "threshold"] == [1.0]
    assert ax.get_yscale() == "log"
    with pytest.raises(ValueError, match="^best"):
        workable_products_figure({0: [4, 4]}, rates, {0: [0.1, 0.2, 0.3]})
    with pytest.raises(ValueError, match="^ceiling"):
        workable_products_figure({0: [4]}, rates, {0: [0.0]})
    with pytest.raises(ValueError, match="^rates"):
        workable_products_figure(best, rates[:5], ceiling)
