"""The loss along AdamW's first step, over a grid of learning rates, and the largest rate it follows.

AdamW's first update from the initial weights ``theta_0`` is ``Delta theta = eta u`` with

    u = -(g / (|g| + eps) + wd theta_0)

independent of the rate ``eta`` (see :mod:`lnworked.stress.first_update`). So a step of rate
``eta``, stopped at the fraction ``t`` of its length, lands at ``theta_0 + s u`` with ``s = t eta``,
and the whole family is one function of one variable, the loss along the line ``u``:

    f(s) = L(theta_0 + s u),      f'(0) = <g, u>                 (the slope, < 0)

on the first batch of the configuration (default the article's). Its tangent at ``s = 0`` is
``f(0) + s <g, u>``; the step of rate ``eta`` delivers the share

    delivered(eta) = (f(eta) - f(0)) / (eta <g, u>)

of the decrease its tangent predicts (1: the loss follows its tangent; 0: the step does
nothing; below 0: the loss rose). :func:`safe_rate` is the largest rate whose delivered share is
still at least a threshold (default one half).

:func:`first_step_rows` measures ``f(t eta)`` and the RMS change of the logits for every rate of
:func:`step_rates` (warmup's first rate, then the target rate times ``2^k``, ``k = -6 .. 2``), every
position ``t`` of :data:`POSITIONS` (``0, 0.05, ..., 1``), both placements, the depths of
:data:`FIRST_STEP_DEPTHS` and the seeds, from :func:`~lnworked.stress.first_update.first_update_table`'s
one compiled program (its rates are the distinct ``s = t eta``). ``lnworked stress first-step``
stores them (``first-step.csv``); :func:`first_step_curves` gathers the rows per case.

Precision: the model computes in float32, so ``f(s) - f(0)`` carries a rounding error of a few
``5e-7`` nats (one float32 step at a loss near ``ln 64``). The smallest steps stored change the
loss by about ``1e-5``-``1e-4`` nats, so a delivered share there is good to a few percent; at
warmup's first rate itself (``t = 1``), to a fraction of a percent.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from lnworked.stress.config import StressConfig, warmup_for
from lnworked.stress.table_csv import read_rows, write_rows
from lnworked.validation import check_positive

__all__ = ["FIRST_STEP_DEPTHS", "FIRST_STEP_SEEDS", "POSITIONS", "PLACEMENTS", "step_rates", "first_step_rows",
           "write_first_step_csv", "read_first_step_csv", "first_step_curves", "delivered_share", "full_step_shares",
           "safe_rate", "safe_rates", "geometric_mean_rate", "mean_safe_rate", "safe_rate_figure"]

#: The depths measured (blocks).
FIRST_STEP_DEPTHS = (1, 2, 3, 6, 12, 24, 48)
#: The seeds measured (the article's 7 and two more).
FIRST_STEP_SEEDS = (7, 8, 9)
#: The positions ``t`` along each step: ``0, 0.05, ..., 1``.
POSITIONS = tuple(k / 20 for k in range(21))
#: Placement name -> ``pre_norm``.
PLACEMENTS = {"Pre-LN": True, "Post-LN": False}


def step_rates(config: StressConfig | None = None) -> tuple:
    """The rates of the grid, ascending: warmup's first rate ``eta / warmup`` (``warmup`` two thirds of
    the run, :func:`~lnworked.stress.config.warmup_for`), then ``eta 2^k`` for ``k = -6 .. 2``, with
    ``eta`` the configuration's target rate (default the article's: 1.67e-5, then 3.1e-5 .. 8e-3)."""
    config = StressConfig() if config is None else config
    eta = config.learning_rate
    return tuple(sorted({eta / warmup_for(config.steps), *(eta * 2.0 ** k for k in range(-6, 3))}))


def _check_positions(positions) -> list[float]:
    positions = list(positions) if not isinstance(positions, (str, bytes)) and hasattr(positions, "__iter__") else None
    if not positions:
        raise ValueError("positions: must be a non-empty sequence of numbers in [0, 1]")
    out = []
    for t in positions:
        if isinstance(t, bool) or not isinstance(t, (int, float, np.floating, np.integer)) or not 0 <= t <= 1:
            raise ValueError(f"positions: must be numbers in [0, 1], got {t!r}")
        out.append(float(t))
    if len(set(out)) != len(out):
        raise ValueError(f"positions: must be distinct, got {out!r}")
    return sorted(out)


def _step_key(step: float) -> float:
    """``s`` rounded to 12 significant digits: ``t eta`` reached from two rates is one step."""
    return float(f"{step:.12g}")


def first_step_rows(depths: Sequence[int] = FIRST_STEP_DEPTHS, seeds: Sequence[int] = FIRST_STEP_SEEDS,
                    config: StressConfig | None = None, rates: Sequence[float] | None = None,
                    positions: Sequence[float] = POSITIONS) -> list[dict]:
    """Tidy rows ``{placement, layers, seed, learning_rate, t, loss, loss_after, slope, rms_logits,
    rms_delta_logits}``, one per placement, depth, seed, rate ``eta`` (default :func:`step_rates`) and
    position ``t``: ``loss = f(0)``, ``loss_after = f(t eta)``, ``slope = <g, u>`` (so the tangent is
    ``loss + t eta slope``), ``rms_logits`` the RMS of the initial logits and ``rms_delta_logits`` the
    RMS of their change at ``theta_0 + t eta u`` (0 at ``t = 0``). One program for all steps
    (:func:`~lnworked.stress.first_update.first_update_table`, the distinct ``s = t eta > 0`` as its rates)."""
    from lnworked.stress.first_update import check_depths, check_rates, check_seeds, first_update_table

    config = StressConfig() if config is None else config
    depths, seeds = check_depths(depths), check_seeds(seeds)
    rates = sorted(check_rates(step_rates(config) if rates is None else rates))
    positions = _check_positions(positions)
    steps = sorted({_step_key(t * rate) for rate in rates for t in positions if t > 0})
    if not steps:
        raise ValueError("positions: must include a t > 0")
    table = {(r["pre_norm"], r["layers"], r["seed"], _step_key(r["learning_rate"])): r
             for r in first_update_table(depths, steps, seeds, config)}
    rows = []
    for placement, pre_norm in PLACEMENTS.items():
        for depth in depths:
            for seed in seeds:
                any_row = table[(pre_norm, depth, seed, steps[-1])]
                slope = any_row["linear_delta_loss"] / any_row["learning_rate"]
                for rate in rates:
                    for t in positions:
                        moved = table.get((pre_norm, depth, seed, _step_key(t * rate))) if t > 0 else None
                        rows.append({
                            "placement": placement, "layers": depth, "seed": seed, "learning_rate": rate, "t": t,
                            "loss": any_row["loss"], "loss_after": any_row["loss"] if moved is None
                            else moved["loss_after"], "slope": slope, "rms_logits": any_row["rms_logits"],
                            "rms_delta_logits": 0.0 if moved is None else moved["rms_delta_logits"]})
    return rows


FIELDS = ("placement", "layers", "seed", "learning_rate", "t", "loss", "loss_after", "slope", "rms_logits",
          "rms_delta_logits")
_FLOATS = ("learning_rate", "t", "loss", "loss_after", "slope", "rms_logits", "rms_delta_logits")


def write_first_step_csv(rows, path) -> None:
    """:func:`first_step_rows`' rows as CSV (floats to 9 significant digits, float32's precision and more)."""
    write_rows(rows, path, FIELDS, floats=_FLOATS)


def read_first_step_csv(path) -> list[dict]:
    """The rows :func:`write_first_step_csv` wrote, types restored."""
    return read_rows(path, FIELDS, ints=("layers", "seed"), floats=_FLOATS)


def first_step_curves(rows) -> dict:
    """``{(placement, layers, seed): {"rates": (R,), "positions": (T,), "loss": f(0), "slope": <g, u>,
    "rms_logits": float, "loss_after": (R, T), "rms_delta_logits": (R, T)}}`` from
    :func:`first_step_rows`' rows (rates and positions ascending); ValueError (naming ``rows``) if a
    case lacks a (rate, position) that another case has."""
    cases: dict = {}
    for r in rows:
        cases.setdefault((r["placement"], r["layers"], r["seed"]), []).append(r)
    if not cases:
        raise ValueError("rows: must hold at least one measurement")
    out = {}
    for key, mine in cases.items():
        rates = sorted({r["learning_rate"] for r in mine})
        positions = sorted({r["t"] for r in mine})
        cell = {(r["learning_rate"], r["t"]): r for r in mine}
        if len(cell) != len(rates) * len(positions) or len(mine) != len(cell):
            raise ValueError(f"rows: case {key} is not one row per rate and position")
        grid = [[cell[(rate, t)] for t in positions] for rate in rates]
        out[key] = {"rates": np.array(rates), "positions": np.array(positions), "loss": mine[0]["loss"],
                    "slope": mine[0]["slope"], "rms_logits": mine[0]["rms_logits"],
                    "loss_after": np.array([[c["loss_after"] for c in row] for row in grid]),
                    "rms_delta_logits": np.array([[c["rms_delta_logits"] for c in row] for row in grid])}
    shapes = {(len(c["rates"]), len(c["positions"])) for c in out.values()}
    if len(shapes) != 1:
        raise ValueError(f"rows: the cases do not share one grid of rates and positions ({sorted(shapes)})")
    return out


def delivered_share(loss, loss_after, slope, step):
    """``(f(s) - f(0)) / (s f'(0))`` with ``f(0) = loss``, ``f(s) = loss_after``, ``f'(0) = slope``, ``s = step``:
    the share of its tangent's predicted change that a step of size ``s`` delivers (arrays broadcast)."""
    return (np.asarray(loss_after, float) - np.asarray(loss, float)) / (np.asarray(step, float) * np.asarray(slope, float))


def full_step_shares(curves: dict, placement: str, layers: int, rate: float) -> np.ndarray:
    """The delivered share of the full step (``t = 1``) at ``rate``, ``(f(rate) - f(0)) / (rate <g, u>)``,
    for each seed of :func:`first_step_curves`' ``curves`` (seeds ascending)."""
    if placement not in PLACEMENTS:
        raise ValueError(f"placement: must be one of {tuple(PLACEMENTS)}, got {placement!r}")
    mine = sorted((key[2], c) for key, c in curves.items() if key[:2] == (placement, layers))
    if not mine:
        raise ValueError(f"layers: no stored case of {placement} with {layers!r} blocks")
    out = []
    for _, c in mine:
        where = np.flatnonzero(np.isclose(c["rates"], rate, rtol=1e-6, atol=0))
        if where.size != 1:
            raise ValueError(f"rate: must be one of {tuple(float(r) for r in c['rates'])}, got {rate!r}")
        out.append(delivered_share(c["loss"], c["loss_after"][where[0], -1], c["slope"], rate))
    return np.array(out, float)


def safe_rate(steps, shares, threshold: float = 0.5) -> float:
    """The largest step size ``s`` whose delivered share is still at least ``threshold``, interpolated on ``log s``.

    With ``s_1 < ... < s_n`` (``steps``, any order) and shares ``d_1 .. d_n``, let ``i`` be the
    largest index with ``d_i >= threshold`` (a NaN share counts as below). Then

        log s* = log s_i + (d_i - threshold) / (d_i - d_{i+1}) (log s_{i+1} - log s_i),

    the crossing of the straight line through ``(log s_i, d_i)`` and ``(log s_{i+1}, d_{i+1})``
    (``s_i`` itself if ``d_{i+1}`` is NaN); ``inf`` if ``i = n`` (every step measured delivers
    enough: the safe rate lies above the grid) and ``0.0`` if there is no such ``i`` (below it)."""
    threshold = check_positive(threshold, "threshold")
    steps, shares = np.asarray(steps, float), np.asarray(shares, float)
    if steps.ndim != 1 or steps.size < 1:
        raise ValueError(f"steps: must be a non-empty 1-D sequence, got shape {steps.shape}")
    if shares.shape != steps.shape:
        raise ValueError(f"shares: must have the shape of steps {steps.shape}, got {shares.shape}")
    if not np.all(np.isfinite(steps) & (steps > 0)) or np.unique(steps).size != steps.size:
        raise ValueError("steps: must be distinct finite numbers > 0")
    order = np.argsort(steps)
    steps, shares = steps[order], shares[order]
    enough = np.flatnonzero(np.nan_to_num(shares, nan=-np.inf) >= threshold)
    if enough.size == 0:
        return 0.0
    i = int(enough[-1])
    if i == steps.size - 1:
        return math.inf
    d_i, d_next = shares[i], shares[i + 1]
    if not np.isfinite(d_next):
        return float(steps[i])  # no line to interpolate along: the last step that delivers enough
    a, b = math.log(steps[i]), math.log(steps[i + 1])
    return float(math.exp(a + (d_i - threshold) / (d_i - d_next) * (b - a)))


def safe_rates(rows, threshold: float = 0.5) -> dict:
    """``{(placement, layers, seed): s*}``: :func:`safe_rate` of each case of :func:`first_step_rows`'
    rows, over every step size ``s = t eta > 0`` stored (each ``f(s)`` is the loss after a first step
    of rate ``s``), the delivered share ``(f(s) - f(0)) / (s <g, u>)``."""
    threshold = check_positive(threshold, "threshold")
    out = {}
    for key, c in first_step_curves(rows).items():
        s = np.outer(c["rates"], c["positions"]).ravel()
        after = c["loss_after"].ravel()
        keep = s > 0
        by_step = {}
        for step, value in zip(s[keep], after[keep]):
            by_step.setdefault(_step_key(step), value)
        steps = np.array(sorted(by_step))
        shares = delivered_share(c["loss"], [by_step[k] for k in steps], c["slope"], steps)
        out[key] = safe_rate(steps, shares, threshold)
    return out


def geometric_mean_rate(rates) -> float:
    """``exp(mean log s)`` of safe rates (over seeds, say); ``inf`` if any rate lies above the
    grid, ``0`` if any lies below it (:func:`safe_rate`'s two bounds)."""
    rates = np.asarray(rates, float)
    if np.any(np.isinf(rates)):
        return math.inf
    if np.any(rates == 0):
        return 0.0
    return float(np.exp(np.mean(np.log(rates))))


def mean_safe_rate(safe: dict, placement: str, layers: int, seeds: Sequence[int] | None = None) -> float:
    """The safe rate of ``placement`` at ``layers`` blocks averaged over seeds: the geometric mean

        exp( (1 / n) sum_k log s*_k ),     k over the seeds (n of them),

    of :func:`safe_rates`' ``safe[(placement, layers, seed)]`` (each ``s*_k`` the largest step size
    whose first step still delivers at least the threshold share of its tangent's decrease), over
    ``seeds`` (default every seed ``safe`` holds for that placement and depth), seeds ascending.
    ``inf`` if any seed's lies above the grid, ``0`` if any lies below it (:func:`geometric_mean_rate`).
    ValueError naming ``placement``, ``layers`` or ``seeds`` if ``safe`` holds no such case."""
    if placement not in PLACEMENTS:
        raise ValueError(f"placement: must be one of {tuple(PLACEMENTS)}, got {placement!r}")
    stored = sorted(k[2] for k in safe if k[:2] == (placement, layers))
    if not stored:
        raise ValueError(f"layers: no stored case of {placement} with {layers!r} blocks")
    if seeds is None:
        chosen = stored
    else:
        if isinstance(seeds, (str, bytes)) or not hasattr(seeds, "__iter__"):
            raise ValueError(f"seeds: must be a sequence of stored seeds, got {seeds!r}")
        given = list(seeds)
        chosen = sorted(set(given))
        if not chosen or len(chosen) != len(given):
            raise ValueError(f"seeds: must be a non-empty sequence of distinct seeds, got {seeds!r}")
        missing = [s for s in chosen if s not in stored]
        if missing:
            raise ValueError(f"seeds: {missing} not stored for {placement} with {layers} blocks (stored: {stored})")
    return geometric_mean_rate([safe[(placement, layers, s)] for s in chosen])


def safe_rate_figure(rows, threshold: float = 0.5, config: StressConfig | None = None):
    """The safe rate (:func:`safe_rates`) against depth, both placements (Pre-LN violet and solid, Post-LN
    magenta and dashed; geometric mean over the seeds, band = the seeds' range), log-log, with the
    configuration's target rate and warmup's first rate as dotted horizontal lines (default the
    article's). A depth at which some seed's safe rate lies above the largest stored rate is a
    triangle at that rate instead (its line stops there)."""
    from matplotlib.ticker import FixedLocator, NullLocator

    from lnworked.stress.warmup_figures import FONT_390, WIDTH
    from lnworked.style import PALETTE, new_figure

    config = StressConfig() if config is None else config
    safe = safe_rates(rows, threshold)
    top = max(r["learning_rate"] for r in rows)
    fig, ax = new_figure(WIDTH, 4.8)
    all_depths = sorted({k[1] for k in safe})
    for placement, style in (("Pre-LN", "-"), ("Post-LN", "--")):
        color = PALETTE["pre" if placement == "Pre-LN" else "post"]
        hollow = placement == "Post-LN"  # an open triangle around Pre-LN's filled one
        by_depth = {d: np.array([v for k, v in safe.items() if k[:2] == (placement, d)]) for d in all_depths}
        inside = [d for d, v in by_depth.items() if np.isfinite(v).all() and (v > 0).all()]
        above = [d for d, v in by_depth.items() if np.isinf(v).any()]
        values = [by_depth[d] for d in inside]
        ax.plot(inside, [mean_safe_rate(safe, placement, d) for d in inside], style, color=color, marker="o",
                markersize=4, linewidth=2.2, label=placement, gid=placement)
        ax.fill_between(inside, [v.min() for v in values], [v.max() for v in values], color=color, alpha=0.15)
        if above:
            ax.plot(above, [top] * len(above), "^", color=color, markersize=8 if hollow else 6, linestyle="none",
                    markerfacecolor="none" if hollow else color, gid=f"{placement} above")
    warm = config.learning_rate / warmup_for(config.steps)
    # both labels at the left, above their lines, where no curve runs (at the right the article's
    # covered Pre-LN's line, and warmup's covered Post-LN's end)
    # (the article's in two lines: in one it reached Pre-LN's line at 12 blocks)
    for rate, text, x, ha in ((config.learning_rate, "the article's\nrate, ", 0.02, "left"),
                              (warm, "warmup's first rate, ", 0.02, "left")):
        ax.axhline(rate, color=PALETTE["text"], linestyle=":", linewidth=1.2)
        ax.text(x, rate, f"{text}{rate:.3g}", transform=ax.get_yaxis_transform(), ha=ha, va="bottom",
                fontsize=FONT_390["tick"], color=PALETTE["text"])
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.xaxis.set_major_locator(FixedLocator(all_depths))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xticklabels([str(d) for d in all_depths])
    ax.set_ylim(warm / 2, top * 2)
    ax.set_xlabel("depth (blocks, log scale)", fontsize=FONT_390["label"])
    ax.set_ylabel("safe rate (log scale)", fontsize=FONT_390["label"])
    ax.tick_params(which="both", labelsize=FONT_390["tick"])
    fig.legend(*ax.get_legend_handles_labels(), loc="outside lower center", ncols=2,
               fontsize=FONT_390["legend"], frameon=False)
    return fig
