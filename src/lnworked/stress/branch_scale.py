"""A dose-response test of the why-warmup chapter's "because": vary Post-LN's branch scale, watch each link.

The chapter's chain: Post-LN's sublayers keep large branch shares at initialisation,

    rho_i = ||a_i||^2 / ||s_i + a_i||^2                (the branch a_i, the stream s_i entering the sum),

so AdamW's first step, which moves every parameter by about the rate whatever the gradient's size,
moves the logits more,

    relative = RMS(z_1 - z_0) / RMS(z_0),      z_0 = logits(theta_0),  z_1 = logits(theta_0 + Delta theta),

the loss leaves its tangent sooner and the full step delivers a smaller share of the decrease its
tangent promises,

    delivered = (L(theta_0 + Delta theta) - L(theta_0)) / <g, Delta theta>.

This module varies the cause alone and continuously: Post-LN at the configuration's depth (default the
article's 12 blocks) with its value/output projections and MLP kernels multiplied at initialisation by a
branch scale ``kappa`` (``config.branch_init_scale``, DeepNorm's ``beta``), from 1 (plain Post-LN) down
to DeepNorm's ``kappa = (8 L)^(-1/4)`` and a little below (:func:`branch_scales`), with ``alpha = 1``
throughout (the residual sum stays ``x + F``: the κ-only variant of :mod:`lnworked.stress.deepnorm`,
so only the initial weights change and every ``kappa`` runs the same program). For each ``kappa``
and seed, at the initial weights and on the first batch, :func:`branch_scale_rows` measures the mean
branch share ``mean_i rho_i`` over the ``2 L`` sublayers
(:func:`~lnworked.stress.amplification.branch_dependence`) and the first AdamW update at each rate
(default the configuration's target rate and warmup's first rate, the control), from
:func:`~lnworked.stress.first_update.first_update_table`; Pre-LN at ``kappa = 1`` is the reference.
``lnworked stress branch-scale`` stores the rows (``branch-scale.csv``); :func:`branch_scale_summary`
gathers them per placement, rate and ``kappa``.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from lnworked.placements import deepnorm_constants
from lnworked.stress.config import StressConfig, warmup_for
from lnworked.stress.table_csv import read_rows, write_rows
from lnworked.validation import check_int

__all__ = ["BRANCH_SCALE_SEEDS", "branch_scales", "branch_scale_rates", "branch_scale_rows",
           "write_branch_scale_csv", "read_branch_scale_csv", "branch_scale_summary"]

#: The seeds measured (the article's 7 and two more, as in :mod:`lnworked.stress.first_step`).
BRANCH_SCALE_SEEDS = (7, 8, 9)


def branch_scales(layers: int | None = None, steps: int = 5, below: int = 2) -> tuple:
    """``kappa_DN^(k / steps)`` for ``k = 0 .. steps + below``, descending: 1 (plain Post-LN), ``steps``
    equal ratios down to DeepNorm's ``kappa_DN = (8 L)^(-1/4)`` for ``layers`` blocks (default the
    article's), then ``below`` more at the same ratio (evenly spaced on a log axis)."""
    layers = StressConfig().layers if layers is None else check_int(layers, "layers", minimum=1)
    steps = check_int(steps, "steps", minimum=1)
    below = check_int(below, "below", minimum=0)
    kappa = deepnorm_constants(layers)[1]
    return tuple(1.0 if k == 0 else kappa if k == steps else float(kappa ** (k / steps))
                 for k in range(steps + below + 1))


def branch_scale_rates(config: StressConfig | None = None) -> tuple:
    """``(eta, eta / warmup)``: the configuration's target rate and warmup's first rate (the control)."""
    config = StressConfig() if config is None else config
    return config.learning_rate, config.learning_rate / warmup_for(config.steps)


def _check_scales(scales) -> list[float]:
    scales = list(scales) if not isinstance(scales, (str, bytes)) and hasattr(scales, "__iter__") else None
    if not scales:
        raise ValueError("scales: must be a non-empty sequence of numbers in (0, 1]")
    out = []
    for k in scales:
        if isinstance(k, bool) or not isinstance(k, (int, float, np.floating, np.integer)) or not 0 < k <= 1:
            raise ValueError(f"scales: must be numbers in (0, 1], got {k!r}")
        out.append(float(k))
    if len(set(out)) != len(out):
        raise ValueError(f"scales: must be distinct, got {out!r}")
    return out


def branch_scale_rows(seeds: Sequence[int] = BRANCH_SCALE_SEEDS, scales: Sequence[float] | None = None,
                      config: StressConfig | None = None, rates: Sequence[float] | None = None,
                      progress=None) -> list[dict]:
    """Tidy rows ``{placement, branch_scale, seed, learning_rate, branch_share, loss, loss_after,
    linear_delta_loss, rms_logits, rms_delta_logits}``: Post-LN at every ``kappa`` of ``scales``
    (default :func:`branch_scales` for the configuration's depth) and Pre-LN at ``kappa = 1``, each
    seed and rate (default :func:`branch_scale_rates`), ``alpha = 1``. ``branch_share`` is
    ``mean_i rho_i``; the rest is :func:`~lnworked.stress.first_update.first_update_table`'s row
    (``loss`` = L(theta_0), ``loss_after`` = L(theta_0 + Delta theta), ``linear_delta_loss`` =
    ``<g, Delta theta>``). ``config``'s ``residual_scale`` and ``branch_init_scale`` must be 1."""
    from lnworked.stress.amplification import branch_dependence
    from lnworked.stress.first_update import check_rates, check_seeds, first_update_table

    config = StressConfig() if config is None else config
    if config.residual_scale != 1.0 or config.branch_init_scale != 1.0:
        raise ValueError("config: residual_scale and branch_init_scale must be 1 (this module sets kappa)")
    seeds = check_seeds(seeds)
    scales = _check_scales(branch_scales(config.layers) if scales is None else scales)
    rates = check_rates(branch_scale_rates(config) if rates is None else rates)
    rows = []
    for kappa in scales:
        own = config.replace(branch_init_scale=kappa)
        shares = branch_dependence(seeds, own)
        placements = {"Post-LN": False, **({"Pre-LN": True} if kappa == 1.0 else {})}
        table = first_update_table([own.layers], rates, seeds, own)
        for placement, pre_norm in placements.items():
            for r in table:
                if r["pre_norm"] != pre_norm:
                    continue
                rows.append({"placement": placement, "branch_scale": kappa, "seed": r["seed"],
                             "learning_rate": r["learning_rate"],
                             "branch_share": float(shares[pre_norm][seeds.index(r["seed"])].mean()),
                             **{k: float(r[k]) for k in ("loss", "loss_after", "linear_delta_loss", "rms_logits",
                                                         "rms_delta_logits")}})
        if progress is not None:
            progress(f"kappa {kappa:.4g}")
    return rows


FIELDS = ("placement", "branch_scale", "seed", "learning_rate", "branch_share", "loss", "loss_after",
          "linear_delta_loss", "rms_logits", "rms_delta_logits")
_FLOATS = FIELDS[1:2] + FIELDS[3:]


def write_branch_scale_csv(rows, path) -> None:
    """:func:`branch_scale_rows`' rows as CSV (:func:`~lnworked.stress.table_csv.write_rows`: floats to 9 significant digits)."""
    write_rows(rows, path, FIELDS, floats=_FLOATS)


def read_branch_scale_csv(path) -> list[dict]:
    """The rows :func:`write_branch_scale_csv` wrote, types restored."""
    return read_rows(path, FIELDS, ints=("seed",), floats=_FLOATS)


def branch_scale_summary(rows) -> dict:
    """``{(placement, learning_rate): {"scales": (K,) descending, "seeds": [...], "branch_share": (S, K),
    "relative": (S, K), "delivered": (S, K)}}`` from :func:`branch_scale_rows`' rows, with
    ``relative = rms_delta_logits / rms_logits`` and ``delivered = (loss_after - loss) / linear_delta_loss``;
    ValueError (naming ``rows``) if a case lacks a seed that another has."""
    cases: dict = {}
    for r in rows:
        cases.setdefault((r["placement"], r["learning_rate"]), {})[(r["seed"], r["branch_scale"])] = r
    if not cases:
        raise ValueError("rows: must hold at least one measurement")
    out = {}
    for key, cell in cases.items():
        seeds = sorted({s for s, _ in cell})
        scales = sorted({k for _, k in cell}, reverse=True)
        if len(cell) != len(seeds) * len(scales):
            raise ValueError(f"rows: case {key} is not one row per seed and branch scale")
        grid = [[cell[(s, k)] for k in scales] for s in seeds]
        out[key] = {"scales": np.array(scales), "seeds": seeds,
                    "branch_share": np.array([[c["branch_share"] for c in row] for row in grid]),
                    "relative": np.array([[c["rms_delta_logits"] / c["rms_logits"] for c in row] for row in grid]),
                    "delivered": np.array([[(c["loss_after"] - c["loss"]) / c["linear_delta_loss"] for c in row]
                                           for row in grid])}
    return out
