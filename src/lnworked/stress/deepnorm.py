"""DeepNorm on the stress test's model: vary the branch share and watch the first update and the run.

The why-warmup chapter explains Post-LN's need for warmup by each sublayer's branch share at
initialisation (:func:`~lnworked.stress.amplification.branch_dependence`),

    rho_i = ||a_i||^2 / ||alpha s_i + a_i||^2,

the part of the residual sum's mean square that the branch ``a_i`` brings. DeepNorm (Wang et
al. 2022, "DeepNet: Scaling Transformers to 1,000 Layers") changes that share on purpose: each
Post-LN sum becomes ``N(alpha x + G(x))`` and the value/output projections and the MLP start
multiplied by ``kappa`` (the paper's ``beta``; the book writes a branch scale ``kappa``), with,
for a decoder-only model of ``L`` layers (two sublayers each; the paper's ``N``),

    alpha = (2L)^(1/4),   kappa = (8L)^(-1/4)           (:func:`lnworked.placements.deepnorm_constants`).

``alpha`` (``config.residual_scale``) weights the stream, ``kappa`` (``config.branch_init_scale``)
shrinks the branch; :data:`VARIANTS` applies them alone and together, all without warmup, next
to Pre-LN and to Post-LN with the article's warmup. For each variant and seed, at the
configuration's depth, rate and batches (default the article's):

* ``branch_share[i]``: ``rho_i`` of sublayer ``i`` (attention, then MLP, block by block) at the
  initial weights, on the first batch (:func:`~lnworked.stress.amplification.branch_dependence`);
* ``delta_loss`` and ``linear_delta_loss``: the first AdamW update at the full rate, its loss
  change and the first-order prediction ``<g, Delta theta>``
  (:func:`~lnworked.stress.first_update.first_update_table`); their ratio is the fraction of the
  predicted decrease that the step delivers (not for the warmup run, whose first rate is smaller);
* ``loss[s]``, ``gradient_norm[s]``: the training log, steps ``s = 1..steps``
  (:func:`~lnworked.stress.train.train_runs`, one program per distinct ``(alpha, kappa)``).

:func:`deepnorm_rows` measures them as tidy rows ``{variant, seed, quantity, index, value}``;
:func:`summarise` gathers them per variant, :func:`variant_table` reduces them to a few numbers
per variant, and :func:`deepnorm_figure` draws the loss curves and the branch shares.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from lnworked.placements import deepnorm_constants
from lnworked.stress.config import StressConfig, warmup_for
from lnworked.stress.table_csv import read_rows, write_rows
from lnworked.validation import check_int

__all__ = ["VARIANTS", "variant_setup", "branch_shares", "first_update_fractions", "loss_curves", "deepnorm_rows",
           "write_deepnorm_csv", "read_deepnorm_csv", "summarise", "variant_table", "final_loss", "deepnorm_figure"]

# name: (pre_norm, uses alpha, uses kappa, uses the article's warmup)
VARIANTS = {
    "Pre-LN": (True, False, False, False),
    "Post-LN": (False, False, False, False),
    "Post-LN, α only": (False, True, False, False),
    "Post-LN, κ only": (False, False, True, False),
    "DeepNorm (α and κ)": (False, True, True, False),
    "Post-LN + warmup": (False, False, False, True),
}
NO_WARMUP = tuple(name for name, (_, _, _, warm) in VARIANTS.items() if not warm)


def _check_variant(variant: str) -> str:
    if variant not in VARIANTS:
        raise ValueError(f"variant: must be one of {tuple(VARIANTS)}, got {variant!r}")
    return variant


def variant_setup(variant: str, config: StressConfig | None = None) -> tuple[StressConfig, bool, int]:
    """``(config, pre_norm, warmup)`` of ``variant``: ``config`` (default the article's) with DeepNorm's
    ``alpha`` and/or ``kappa`` for its depth (:func:`~lnworked.placements.deepnorm_constants`, two
    sublayers per layer) where the variant uses them, else 1; ``warmup`` 0 or two thirds of the run."""
    config = StressConfig() if config is None else config
    pre_norm, use_alpha, use_kappa, warm = VARIANTS[_check_variant(variant)]
    alpha, kappa = deepnorm_constants(config.layers)
    config = config.replace(residual_scale=alpha if use_alpha else 1.0, branch_init_scale=kappa if use_kappa else 1.0)
    return config, pre_norm, warmup_for(config.steps) if warm else 0


def _by_config(variants, config):
    """``{config: [(variant, pre_norm, warmup), ...]}``: variants that share one compiled program."""
    groups: dict = {}
    for variant in variants:
        own, pre_norm, warmup = variant_setup(variant, config)
        groups.setdefault(own, []).append((variant, pre_norm, warmup))
    return groups


def _variants(variants, default):
    variants = default if variants is None else [_check_variant(v) for v in variants]
    if not variants:
        raise ValueError("variants: must name at least one variant")
    return list(variants)


def branch_shares(seeds: Sequence[int], config: StressConfig | None = None,
                  variants: Sequence[str] | None = None) -> dict:
    """``{variant: array (seeds, 2 L)}``: each sublayer's ``rho_i`` at initialisation (no-warmup
    variants by default; the warmup run starts as Post-LN does)."""
    from lnworked.stress.amplification import branch_dependence

    out = {}
    for own, members in _by_config(_variants(variants, NO_WARMUP), config).items():
        shares = branch_dependence(seeds, own)
        for variant, pre_norm, _ in members:
            out[variant] = shares[pre_norm]
    return out


def first_update_fractions(seeds: Sequence[int], config: StressConfig | None = None,
                           variants: Sequence[str] | None = None) -> dict:
    """``{variant: {"delta_loss": (seeds,), "linear_delta_loss": (seeds,)}}`` of AdamW's first update at
    the full rate (``config.learning_rate``), from :func:`~lnworked.stress.first_update.first_update_table`."""
    from lnworked.stress.first_update import check_seeds, first_update_table

    seeds = check_seeds(seeds)
    out = {}
    for own, members in _by_config(_variants(variants, NO_WARMUP), config).items():
        rows = first_update_table([own.layers], [own.learning_rate], seeds, own)
        for variant, pre_norm, _ in members:
            mine = {r["seed"]: r for r in rows if r["pre_norm"] == pre_norm}
            out[variant] = {key: np.array([mine[s][key] for s in seeds])
                            for key in ("delta_loss", "linear_delta_loss")}
    return out


def loss_curves(seeds: Sequence[int], config: StressConfig | None = None, variants: Sequence[str] | None = None,
                steps: int | None = None, device=None) -> dict:
    """``{variant: (losses (seeds, steps), gradient_norms (seeds, steps))}``: the first ``steps``
    (default all) training steps of each variant under each seed, on the configuration's batches,
    with the full run's rate schedule; one :func:`~lnworked.stress.train.train_runs` program per
    distinct ``(alpha, kappa)``. A run whose loss turns non-finite is frozen from then on (its log
    keeps the frozen model's values; see :mod:`lnworked.stress.train`)."""
    from lnworked.stress.data import make_batches
    from lnworked.stress.first_update import check_seeds
    from lnworked.stress.optim import learning_rates
    from lnworked.stress.train import train_runs

    config = StressConfig() if config is None else config
    seeds = check_seeds(seeds)
    steps = config.steps if steps is None else check_int(steps, "steps", minimum=1, maximum=config.steps)
    sources, targets = make_batches(config)
    out = {}
    for own, members in _by_config(_variants(variants, list(VARIANTS)), config).items():
        runs = [(variant, pre_norm, warmup, seed) for variant, pre_norm, warmup in members for seed in seeds]
        rates = np.stack([learning_rates(own.learning_rate, own.steps, warmup)[:steps] for _, _, warmup, _ in runs])
        losses, norms, _ = train_runs(own, [r[1] for r in runs], [r[3] for r in runs], sources[:steps],
                                      targets[:steps], rates, device=device)
        for i, (variant, *_rest) in enumerate(members):
            block = slice(i * len(seeds), (i + 1) * len(seeds))
            out[variant] = (np.stack(losses[block]).astype(np.float64), np.stack(norms[block]).astype(np.float64))
    return out


def deepnorm_rows(seeds: Sequence[int], config: StressConfig | None = None, progress=None) -> list[dict]:
    """Tidy rows ``{variant, seed, quantity, index, value}`` of every measurement in the module's
    docstring, for :data:`VARIANTS` (quantity ``branch_share``: index the sublayer, 0-based;
    ``delta_loss``/``linear_delta_loss``: index 0; ``loss``/``gradient_norm``: index the step, 1-based)."""
    from lnworked.stress.first_update import check_seeds

    seeds = check_seeds(seeds)
    rows = []

    def add(variant, quantity, values, first_index):
        for s, seed in enumerate(seeds):
            for i, value in enumerate(np.atleast_1d(values[s])):
                rows.append({"variant": variant, "seed": seed, "quantity": quantity, "index": first_index + i,
                             "value": float(value)})

    for variant, shares in branch_shares(seeds, config).items():
        add(variant, "branch_share", shares, 0)
    if progress is not None:
        progress("branch shares")
    for variant, parts in first_update_fractions(seeds, config).items():
        for quantity, values in parts.items():
            add(variant, quantity, values, 0)
    if progress is not None:
        progress("first update")
    for variant, (losses, norms) in loss_curves(seeds, config).items():
        add(variant, "loss", losses, 1)
        add(variant, "gradient_norm", norms, 1)
    if progress is not None:
        progress("training")
    return rows


FIELDS = ("variant", "seed", "quantity", "index", "value")


def write_deepnorm_csv(rows, path) -> None:
    """:func:`deepnorm_rows`' rows as CSV (:func:`~lnworked.stress.table_csv.write_rows`: ``value`` to 9 significant digits)."""
    write_rows(rows, path, FIELDS, floats=("value",))


def read_deepnorm_csv(path) -> list[dict]:
    """The rows :func:`write_deepnorm_csv` wrote, types restored."""
    return read_rows(path, FIELDS, ints=("seed", "index"), floats=("value",))


def summarise(rows) -> dict:
    """``{variant: {"seeds": [...], quantity: array (seeds, n)}}`` from :func:`deepnorm_rows`' rows
    (entries ordered by seed, then index)."""
    out: dict = {}
    for r in rows:
        by_seed = out.setdefault(r["variant"], {}).setdefault(r["quantity"], {})
        by_seed.setdefault(r["seed"], {})[r["index"]] = r["value"]
    summary = {}
    for variant, quantities in out.items():
        seeds = sorted(next(iter(quantities.values())))
        summary[variant] = {"seeds": seeds}
        for quantity, by_seed in quantities.items():
            summary[variant][quantity] = np.array([[by_seed[s][i] for i in sorted(by_seed[s])] for s in seeds])
    return summary


def final_loss(losses, last: int = 10) -> np.ndarray:
    """The mean of each run's last ``last`` logged losses, ``losses`` shaped ``(runs, steps)``."""
    losses = np.atleast_2d(np.asarray(losses, float))
    last = check_int(last, "last", minimum=1, maximum=losses.shape[1])
    return losses[:, -last:].mean(axis=1)


def variant_table(summary: dict, last: int = 10) -> list[dict]:
    """One row per variant of :func:`summarise`'s ``summary``, means over seeds where not said:
    ``rho_first``/``rho_last``: the first/last block's mean branch share, ``rho_mean``: over all
    sublayers; ``delivered``: ``delta_loss / linear_delta_loss`` (per seed, then averaged; ``None``
    for the warmup run); ``final_loss``, ``final_min``, ``final_max``: :func:`final_loss` over the
    seeds; ``start_loss``: step 1's."""
    rows = []
    for variant, data in summary.items():
        row = {"variant": variant, "seeds": data["seeds"]}
        if "branch_share" in data:
            share = data["branch_share"].mean(axis=0)
            row.update(rho_first=float(share[:2].mean()), rho_last=float(share[-2:].mean()),
                       rho_mean=float(share.mean()))
        if "delta_loss" in data:
            row["delivered"] = float(np.mean(data["delta_loss"][:, 0] / data["linear_delta_loss"][:, 0]))
        else:
            row["delivered"] = None
        final = final_loss(data["loss"], last)
        row.update(final_loss=float(final.mean()), final_min=float(final.min()), final_max=float(final.max()),
                   start_loss=float(data["loss"][:, 0].mean()))
        rows.append(row)
    return rows


_LOOK = {  # colour key of lnworked.style.PALETTE, line style, short label for a phone-sized legend
    "Pre-LN": ("pre", "-", "Pre-LN"),
    "Post-LN": ("post", "--", "Post-LN"),
    "Post-LN, α only": ("orange", "-.", "Post-LN, α"),
    "Post-LN, κ only": ("blue", ":", "Post-LN, κ"),
    "DeepNorm (α and κ)": ("navy", "-", "DeepNorm"),
    "Post-LN + warmup": ("post", "-", "Post-LN + warmup"),
}


def deepnorm_figure(summary: dict, vocab_size: int = 64):
    """Two stacked panels from :func:`summarise`: the training loss of each variant (mean over seeds,
    band = the seeds' range) on a log axis, with ``ln vocab_size`` (uniform guessing) dashed; below,
    each sublayer's branch share ``rho_i`` at initialisation (mean over seeds) for the variants
    without warmup. One legend with short labels below both panels, in two columns; the four
    loss curves that lie on top of one another (every variant whose final loss is within a factor
    of 1.5 of the lowest) are also named by one label beside them. Sized (:data:`WIDTH` inches
    wide, text at :data:`lnworked.stress.warmup_figures.FONT_390`) to stay legible at 350-390 px."""
    from lnworked.stress.warmup_figures import FONT_390, WIDTH, _style, loss_band, uniform_guess

    from lnworked.style import PALETTE, new_figure

    fig, (top, bottom) = new_figure(WIDTH, 10.5, nrows=2)
    handles = {}
    for variant, data in summary.items():
        key, style, label = _LOOK[variant]
        color = PALETTE[key]
        faded = 0.55 if variant == "Post-LN + warmup" else 1.0
        if "loss" in data:
            handles[label] = loss_band(top, data["loss"], style, color, label, linewidth=2.8, alpha=faded)
        if "branch_share" in data:
            share = data["branch_share"].mean(axis=0)
            bottom.plot(np.arange(1, share.size + 1), share, style, color=color, linewidth=2.5, marker="o",
                        markersize=4.5, label=label)
    uniform_guess(top, vocab_size)
    top.set_yscale("log")  # the converged curves near 1e-3 apart from the ones near ln 64
    bottom.set_yscale("log")
    _style(top, "Training loss", "step", "loss (nats, log scale)")
    _style(bottom, "Branch share at initialisation", "sublayer (attention, MLP, ...)", "ρ (log scale)")
    low = min(float(d["loss"].min()) for d in summary.values() if "loss" in d)
    finals = {_LOOK[v][2]: float(d["loss"][:, -1].mean()) for v, d in summary.items() if "loss" in d}
    together = [name for name, final in finals.items() if final <= 1.5 * min(finals.values())]
    if len(together) > 1:  # name the curves that hide one another, below them
        top.annotate(", ".join(n.replace("Post-LN, ", "") for n in together) + ":\non top of one another",
                     (0.03, 0.04), xycoords="axes fraction", ha="left", va="bottom",
                     fontsize=FONT_390["legend"], color=PALETTE["text"])
    top.set_ylim(low / 2, 3 * math.log(vocab_size))  # room above ln 64 for its label
    fig.legend(list(handles.values()), list(handles), loc="outside lower center", ncols=2,
               fontsize=FONT_390["legend"], frameon=False, columnspacing=1.0, handlelength=2.0)
    return fig
