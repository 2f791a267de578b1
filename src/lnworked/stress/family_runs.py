"""The wider family trained: each design on the stress test's model, at two rates, without warmup.

The wider-family chapter compares the designs at initialisation. Here each one trains on the
stress test's model and task (:mod:`lnworked.stress.model`, :mod:`lnworked.stress.data`; the
article's 12 blocks, 180 steps, batches and AdamW) at a constant rate, with no warmup:

* ``Pre-LN`` and ``Post-LN``: the article's two placements, ``x + F(N(x))`` and ``N(x + F(x))``;
* ``DeepNorm (α and κ)``: Post-LN with ``N(alpha x + F(x))`` and the branch kernels initialised
  times ``kappa`` (Wang et al. 2022; :func:`lnworked.stress.deepnorm.variant_setup`);
* ``Peri-LN``: ``x + N_out(F(N_in(x)))`` with Pre-LN's final norm (Kim et al. 2025; Ding et al.
  2021's "Sandwich-LN"; ``config.peri_norm``);
* ``Pre-LN, RMSNorm`` and ``Post-LN, RMSNorm``: the two placements with RMSNorm,
  ``N(x) = g * x / sqrt(mean(x^2) + eps)``, in place of LayerNorm (``config.norm``).

Each trains at :data:`RATES` (the article's 2e-3 and the top of the sweep's grid, 8e-3) under
each seed (the initial weights ``PRNGKey(seed)``; every run sees the configuration's batches).
The log of a run is its loss and global gradient norm ``||g||`` at steps ``1..steps``
(:func:`~lnworked.stress.train.train_runs`, one program per distinct model, its runs at both
rates together: the rate is data). A run whose loss or gradient norm turns non-finite is
frozen from then on (:mod:`lnworked.stress.train`): :func:`family_table` counts it as diverged.

:func:`family_rows` measures the logs as rows ``{variant, learning_rate, seed, step, loss,
gradient_norm}``; :func:`summarise` gathers them per ``(variant, rate)``, :func:`family_table`
reduces each to its final loss (:func:`lnworked.stress.deepnorm.final_loss`, the mean of the
last 10 steps) over the seeds, :func:`final_loss_markdown` writes those as a table and
:func:`family_figure` draws the loss curves.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from lnworked.stress.config import StressConfig
from lnworked.stress.deepnorm import final_loss
from lnworked.stress.table_csv import read_rows, write_rows
from lnworked.validation import check_int

__all__ = ["VARIANTS", "RATES", "variant_setup", "check_rates", "loss_curves", "family_rows", "write_family_csv",
           "read_family_csv", "summarise", "family_table", "format_final", "final_loss_markdown", "family_figure"]

# name: (pre_norm, the configuration's changes; DeepNorm's alpha and kappa come from its depth)
VARIANTS = {
    "Pre-LN": (True, {}),
    "Post-LN": (False, {}),
    "DeepNorm (α and κ)": (False, "deepnorm"),
    "Peri-LN": (True, {"peri_norm": True}),
    "Pre-LN, RMSNorm": (True, {"norm": "rmsnorm"}),
    "Post-LN, RMSNorm": (False, {"norm": "rmsnorm"}),
}
#: The rates, constant from step 1: the article's and the highest of the sweep's grid.
RATES = (2e-3, 8e-3)


def _check_variant(variant: str) -> str:
    if variant not in VARIANTS:
        raise ValueError(f"variant: must be one of {tuple(VARIANTS)}, got {variant!r}")
    return variant


def variant_setup(variant: str, config: StressConfig | None = None) -> tuple[StressConfig, bool]:
    """``(config, pre_norm)`` of ``variant``: ``config`` (default the article's) with the variant's
    changes; DeepNorm's from :func:`lnworked.stress.deepnorm.variant_setup` (for its depth)."""
    from lnworked.stress import deepnorm

    config = StressConfig() if config is None else config
    pre_norm, changes = VARIANTS[_check_variant(variant)]
    if changes == "deepnorm":
        own, pre_norm, _ = deepnorm.variant_setup(variant, config)
        return own, pre_norm
    return config.replace(**changes), pre_norm


def check_rates(rates) -> list[float]:
    """A non-empty sequence of distinct finite rates > 0."""
    rates = list(rates) if not isinstance(rates, (str, bytes)) and hasattr(rates, "__iter__") else None
    if not rates:
        raise ValueError("rates: must be a non-empty sequence of finite numbers > 0")
    for rate in rates:
        if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not math.isfinite(rate) or rate <= 0:
            raise ValueError(f"rates: must be finite numbers > 0, got {rate!r}")
    if len(set(rates)) != len(rates):
        raise ValueError(f"rates: must be distinct, got {rates!r}")
    return [float(r) for r in rates]


def _variants(variants) -> list[str]:
    variants = list(VARIANTS) if variants is None else [_check_variant(v) for v in variants]
    if not variants:
        raise ValueError("variants: must name at least one variant")
    return variants


def loss_curves(seeds: Sequence[int], rates: Sequence[float] = RATES, config: StressConfig | None = None,
                variants: Sequence[str] | None = None, steps: int | None = None, device=None,
                progress=None) -> dict:
    """``{(variant, rate): (losses (seeds, steps), gradient_norms (seeds, steps))}``: the first
    ``steps`` (default all) training steps of each variant at each constant rate under each seed,
    on the configuration's batches; one :func:`~lnworked.stress.train.train_runs` program per
    distinct model (the rate is data; ``config.learning_rate`` is not used). ``progress(label)``
    after each program."""
    from lnworked.stress.data import make_batches
    from lnworked.stress.first_update import check_seeds
    from lnworked.stress.optim import learning_rates
    from lnworked.stress.train import train_runs

    config = StressConfig() if config is None else config
    seeds, rates = check_seeds(seeds), check_rates(rates)
    steps = config.steps if steps is None else check_int(steps, "steps", minimum=1, maximum=config.steps)
    sources, targets = make_batches(config)
    groups: dict = {}
    for variant in _variants(variants):
        own, pre_norm = variant_setup(variant, config)
        groups.setdefault(own, []).append((variant, pre_norm))
    out = {}
    for own, members in groups.items():
        runs = [(variant, pre_norm, rate, seed) for variant, pre_norm in members for rate in rates for seed in seeds]
        schedule = np.stack([learning_rates(rate, own.steps, 0)[:steps] for _, _, rate, _ in runs])
        losses, norms, _ = train_runs(own, [r[1] for r in runs], [r[3] for r in runs], sources[:steps],
                                      targets[:steps], schedule, device=device)
        block = len(seeds)
        for first in range(0, len(runs), block):
            variant, _, rate, _ = runs[first]
            out[(variant, rate)] = (np.stack(losses[first:first + block]).astype(np.float64),
                                    np.stack(norms[first:first + block]).astype(np.float64))
        if progress is not None:
            progress(", ".join(variant for variant, _ in members))
    return {(v, r): out[(v, r)] for v in _variants(variants) for r in rates}


def family_rows(seeds: Sequence[int], rates: Sequence[float] = RATES, config: StressConfig | None = None,
                variants: Sequence[str] | None = None, device=None, progress=None) -> list[dict]:
    """Rows ``{variant, learning_rate, seed, step, loss, gradient_norm}``, one per step (1-based) of
    every run of :func:`loss_curves`."""
    from lnworked.stress.first_update import check_seeds

    seeds = check_seeds(seeds)
    rows = []
    for (variant, rate), (losses, norms) in loss_curves(seeds, rates, config, variants, device=device,
                                                        progress=progress).items():
        for s, seed in enumerate(seeds):
            for step, (loss, norm) in enumerate(zip(losses[s], norms[s]), start=1):
                rows.append({"variant": variant, "learning_rate": rate, "seed": seed, "step": step,
                             "loss": float(loss), "gradient_norm": float(norm)})
    return rows


FIELDS = ("variant", "learning_rate", "seed", "step", "loss", "gradient_norm")


def write_family_csv(rows, path) -> None:
    """:func:`family_rows`' rows as CSV (:func:`~lnworked.stress.table_csv.write_rows`): ``loss`` and
    ``gradient_norm`` to 9 significant digits, ``learning_rate`` to ``:g``'s 6 (the rates are round numbers)."""
    write_rows(({**row, "learning_rate": f"{row['learning_rate']:g}"} for row in rows), path, FIELDS,
               floats=("loss", "gradient_norm"))


def read_family_csv(path) -> list[dict]:
    """The rows :func:`write_family_csv` wrote, types restored."""
    return read_rows(path, FIELDS, ints=("seed", "step"), floats=("learning_rate", "loss", "gradient_norm"))


def summarise(rows) -> dict:
    """``{(variant, rate): {"seeds": [...], "loss": (seeds, steps), "gradient_norm": (seeds, steps)}}``
    from :func:`family_rows`' rows (seeds in increasing order, steps in order); in the rows' order
    of first appearance."""
    runs: dict = {}
    for r in rows:
        runs.setdefault((r["variant"], r["learning_rate"]), {}).setdefault(r["seed"], {})[r["step"]] = r
    summary = {}
    for key, by_seed in runs.items():
        seeds = sorted(by_seed)
        summary[key] = {"seeds": seeds}
        for quantity in ("loss", "gradient_norm"):
            summary[key][quantity] = np.array([[by_seed[s][step][quantity] for step in sorted(by_seed[s])]
                                               for s in seeds])
    return summary


def family_table(summary: dict, last: int = 10) -> list[dict]:
    """One row per ``(variant, rate)`` of :func:`summarise`'s ``summary``: ``final_loss``,
    ``final_min``, ``final_max``: the mean, least and largest over the seeds of
    :func:`~lnworked.stress.deepnorm.final_loss` (each run's mean of its last ``last`` losses) of
    the runs that stayed finite; ``diverged``: how many runs logged a non-finite loss or
    gradient norm (``final_*`` are NaN if all did); ``start_loss``: step 1's, mean over seeds;
    ``max_gradient_norm``: the largest finite ``||g||`` of any seed."""
    rows = []
    for (variant, rate), data in summary.items():
        loss, norm = data["loss"], data["gradient_norm"]
        finite = np.all(np.isfinite(loss) & np.isfinite(norm), axis=1)
        final = final_loss(loss[finite], last) if finite.any() else np.array([math.nan])
        rows.append({"variant": variant, "learning_rate": rate, "seeds": data["seeds"],
                     "final_loss": float(final.mean()), "final_min": float(final.min()),
                     "final_max": float(final.max()), "diverged": int((~finite).sum()),
                     "start_loss": float(loss[:, 0].mean()),
                     "max_gradient_norm": float(np.max(norm[np.isfinite(norm)]))})
    return rows


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def format_final(row: dict) -> str:
    """``"1.87 × 10⁻³ (1.84–1.9)"``: a :func:`family_table` row's ``final_loss`` to 3 significant
    digits and, in brackets, ``final_min``–``final_max`` in the same power of ten (written only
    when the mean is below 0.01); ``"diverged"`` when no run stayed finite."""
    mean, low, high = row["final_loss"], row["final_min"], row["final_max"]
    if not math.isfinite(mean):
        return "diverged"
    power = math.floor(math.log10(mean)) if 0 < mean < 0.01 else 0
    scale = 10.0 ** power
    shown = f"{mean / scale:.3g}" + (f" × 10{str(power).translate(_SUPERSCRIPT)}" if power else "")
    return f"{shown} ({low / scale:.3g}–{high / scale:.3g})"


def final_loss_markdown(table: Sequence[dict]) -> str:
    """A Markdown table of :func:`family_table`'s rows: one line per variant (its name without the
    bracket), one column per rate, each cell :func:`format_final` (mean over seeds, their range),
    with a ``+ n diverged`` note where runs diverged."""
    rates = list(dict.fromkeys(row["learning_rate"] for row in table))
    variants = list(dict.fromkeys(row["variant"] for row in table))
    by_run = {(row["variant"], row["learning_rate"]): row for row in table}
    lines = ["| design | " + " | ".join(f"rate {rate:g}" for rate in rates) + " |", "|---|" + "---:|" * len(rates)]
    for variant in variants:
        cells = []
        for rate in rates:
            row = by_run[(variant, rate)]
            cells.append(format_final(row) + (f", + {row['diverged']} diverged" if row["diverged"] else ""))
        lines.append(f"| {variant.split(' (')[0]} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


_LOOK = {  # colour key of lnworked.style.PALETTE (as lnworked.figures.FAMILY_STYLE), line style, short label
    "Pre-LN": ("pre", "-", "Pre-LN"),
    "Post-LN": ("post", "-", "Post-LN"),
    "DeepNorm (α and κ)": ("navy", "--", "DeepNorm"),
    "Peri-LN": ("orange", "-", "Peri-LN"),
    "Pre-LN, RMSNorm": ("pre", ":", "Pre-LN, RMS"),
    "Post-LN, RMSNorm": ("post", ":", "Post-LN, RMS"),
}


def family_figure(summary: dict, vocab_size: int = 64):
    """One panel per rate, stacked: the training loss of each variant (mean over seeds, band = the
    seeds' range) on a log axis, with ``ln vocab_size`` (uniform guessing) dashed. The curves that
    hide one another (every variant whose final loss is within a factor of 1.5 of the panel's
    lowest) are also named by one label, right of the middle of the panel. One legend with short labels
    below the panels, in two columns. Sized as the why-warmup chapter's figures
    (:data:`lnworked.stress.warmup_figures.WIDTH` inches, text at ``FONT_390``) for 350-390 px."""
    from lnworked.stress.warmup_figures import FONT_390, WIDTH, _style, loss_band, uniform_guess
    from lnworked.style import PALETTE, new_figure

    rates = list(dict.fromkeys(rate for _, rate in summary))
    fig, axes = new_figure(WIDTH, 4.6 * len(rates) + 1.6, nrows=len(rates))
    axes = np.atleast_1d(axes)
    handles = {}
    low = min(float(np.nanmin(d["loss"])) for d in summary.values())
    for ax, rate in zip(axes, rates):
        for (variant, own_rate), data in summary.items():
            if own_rate != rate:
                continue
            key, style, label = _LOOK[variant]
            handles[label] = loss_band(ax, data["loss"], style, PALETTE[key], label, linewidth=2.6,
                                       gid=f"loss-{variant}")
        finals = {_LOOK[v][2]: float(np.nanmean(d["loss"][:, -1])) for (v, r), d in summary.items() if r == rate}
        together = [name for name, final in finals.items() if final <= 1.5 * min(finals.values())]
        if len(together) > 1:
            ax.annotate("end close together:\n" + "\n".join(" · ".join(together[i:i + 2])
                                                         for i in range(0, len(together), 2)),
                        (0.97, 0.6), xycoords="axes fraction", ha="right", va="bottom",
                        fontsize=FONT_390["legend"] - 2, color=PALETTE["text"], gid="together")
        uniform_guess(ax, vocab_size)
        ax.set_yscale("log")
        ax.set_ylim(low / 2, 3 * math.log(vocab_size))
        _style(ax, f"Rate {rate:g}, no warmup", "step", "loss (nats, log scale)")
    fig.legend(list(handles.values()), list(handles), loc="outside lower center", ncols=2,
               fontsize=FONT_390["legend"], frameon=False, columnspacing=1.0, handlelength=2.0)
    return fig
