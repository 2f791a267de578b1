"""Outputs of the stress test: the per-step CSV, the figure, ``summary.json`` and a table.

The CSV has the article's columns (run, step, loss, gradient_norm, learning_rate). The
summary table puts each run's final loss and maximum gradient norm beside the article's
own figures, which :mod:`lnworked.stress.article` computes from the article's CSV.
"""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import numpy as np
from tabulate import tabulate

from lnworked.stress.article import article_run_for
from lnworked.stress.results import StressResult

__all__ = [
    "display_name",
    "check_writable",
    "write_csv",
    "write_summary",
    "curves_figure",
    "save_figure",
    "table_rows",
    "summary_table",
    "markdown_table",
    "write_outputs",
    "CSV_COLUMNS",
]

CSV_COLUMNS = ("run", "step", "loss", "gradient_norm", "learning_rate")


def display_name(name: str) -> str:
    """A run's name in the book's terms: the article's "Pre-Norm"/"Post-Norm" become
    "Pre-LN"/"Post-LN" and its " · " separator a comma ("Post-Norm · 120-step warmup" ->
    "Post-LN, 120-step warmup"). The data files keep the article's names."""
    return name.replace("Pre-Norm", "Pre-LN").replace("Post-Norm", "Post-LN").replace(" · ", ", ")


def check_writable(out_dir) -> Path:
    """Create ``out_dir`` if needed and check a file can be written there (``ValueError`` if not)."""
    path = Path(out_dir)
    try:
        path.mkdir(parents=True, exist_ok=True)
        probe = path / ".lnworked-write-test"
        probe.write_text("")
        probe.unlink()
    except OSError as err:
        raise ValueError(f"out: cannot write to {str(path)!r} ({err.strerror or err})") from None
    return path


def write_csv(result: StressResult, path) -> Path:
    """One row per run and step, like the article's CSV."""
    path = Path(path)
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(CSV_COLUMNS)
        for run in result.runs:
            for step, loss, norm, rate in zip(run.steps, run.loss, run.gradient_norm, run.learning_rate):
                writer.writerow([run.spec.name, int(step), repr(float(loss)), repr(float(norm)), repr(float(rate))])
    return path


def _json_number(value):
    return value if value is None or math.isfinite(value) else None


def write_summary(result: StressResult, path) -> Path:
    """``summary.json``: device, config, seconds, runs (non-finite numbers become null)."""
    summary = result.summary()
    for run in summary["runs"]:
        for key in ("final_loss", "max_gradient_norm"):
            run[key] = _json_number(run[key])
    Path(path).write_text(json.dumps(summary, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return Path(path)


def _run_colors():
    from lnworked.style import PALETTE

    return {(True, False): PALETTE["pre"], (False, False): PALETTE["post"], (False, True): PALETTE["highway"]}


def curves_figure(result: StressResult, with_article: bool = True):
    """Loss and global gradient norm per step (log scales), one line per run, the two panels
    stacked and drawn narrow (``PHONE_NARROW`` inches, so that a 390 px phone shrinks its
    text to about 13 px, not 6-7), runs named by :func:`display_name` in one legend below
    the lower panel (none over the curves).

    With ``with_article`` the article's own curves of the same kind are drawn thin and
    dashed behind them (only when the configuration has the article's step count), and the
    legend has a fourth entry for them.
    """
    from lnworked.stress.figures import PHONE_FONT, PHONE_NARROW
    from lnworked.style import new_figure

    fig, (ax_loss, ax_norm) = new_figure(PHONE_NARROW, 8.6, nrows=2)
    colors = _run_colors()
    for run in result.runs:
        color = colors[(run.spec.pre_norm, run.spec.warmup_steps > 0)]
        ax_loss.plot(run.steps, run.loss, color=color, linewidth=2, label=display_name(run.spec.name))
        ax_norm.plot(run.steps, run.gradient_norm, color=color, linewidth=2, label=display_name(run.spec.name))
        theirs = article_run_for(run.spec.pre_norm, run.spec.warmup_steps)
        if with_article and theirs is not None and len(theirs.loss) == result.config.steps:
            steps = np.arange(1, len(theirs.loss) + 1)
            for ax, values in ((ax_loss, theirs.loss), (ax_norm, theirs.gradient_norm)):
                ax.plot(steps, values, color=color, linewidth=1.4, linestyle="--", alpha=0.85)
    for ax, title, ylabel in (
        (ax_loss, "Training loss", "cross-entropy loss"),
        (ax_norm, "Global gradient norm", "gradient norm"),
    ):
        ax.set_yscale("log")
        ax.set_title(title, fontsize=PHONE_FONT["title"])
        ax.set_xlabel("training step", fontsize=PHONE_FONT["label"])
        ax.set_ylabel(ylabel, fontsize=PHONE_FONT["label"])
        ax.tick_params(which="both", labelsize=PHONE_FONT["tick"])
    handles, names = ax_norm.get_legend_handles_labels()
    if with_article:
        (dashed,) = ax_norm.plot([], [], color="grey", linestyle="--", linewidth=1.4)
        handles, names = [*handles, dashed], [*names, "the article's runs (dashed)"]
    ax_norm.legend(handles, names, fontsize=PHONE_FONT["legend"] + 1, frameon=False, ncol=1,
                   loc="upper center", bbox_to_anchor=(0.5, -0.22), handlelength=1.6)
    return fig


def save_figure(fig, stem) -> list[Path]:
    """Save ``stem.png`` and ``stem.svg`` with an opaque white background."""
    paths = []
    for suffix in (".png", ".svg"):
        path = Path(stem).with_suffix(suffix)
        fig.savefig(path, dpi=130, facecolor="white", bbox_inches="tight")
        paths.append(path)
    return paths


def table_rows(result: StressResult) -> list[dict]:
    """Per run: our final loss / max gradient norm / divergence, and the article's figures."""
    rows = []
    for run in result.runs:
        theirs = article_run_for(run.spec.pre_norm, run.spec.warmup_steps)
        rows.append({
            "run": display_name(run.spec.name),
            "final_loss": run.final_loss,
            "max_gradient_norm": run.max_gradient_norm,
            "diverged_at": run.diverged_at,
            "article_final_loss": theirs.final_loss if theirs else None,
            "article_max_gradient_norm": theirs.max_gradient_norm if theirs else None,
        })
    return rows


def _fmt(value, spec):
    return "-" if value is None else format(value, spec)


#: (column title, key of :func:`table_rows`, number format)
_COLUMNS = (
    ("run", "run", ""), ("final loss", "final_loss", ".5f"), ("max gradient norm", "max_gradient_norm", ".3f"),
    ("diverged at", "diverged_at", ""), ("article's final loss", "article_final_loss", ".5f"),
    ("article's max gradient norm", "article_max_gradient_norm", ".3f"),
)


def _table(result: StressResult, fmt: str) -> str:
    table = table_rows(result)
    # a column of "-" says nothing: "diverged at" is shown only when some run diverged
    columns = [c for c in _COLUMNS if c[1] != "diverged_at" or any(r["diverged_at"] is not None for r in table)]
    rows = [[_fmt(r[key], spec) for _, key, spec in columns] for r in table]
    return tabulate(rows, headers=[title for title, _, _ in columns], tablefmt=fmt,
                    colalign=("left",) + ("right",) * (len(columns) - 1), disable_numparse=True)


def summary_table(result: StressResult) -> str:
    """A plain-text table of :func:`table_rows` for the terminal; the "diverged at" column
    appears only when some run diverged."""
    return _table(result, "simple")


def markdown_table(result: StressResult) -> str:
    """The same table as Markdown, for a notebook (the same rule for "diverged at")."""
    return _table(result, "github")


def write_outputs(result: StressResult, out_dir) -> dict[str, Path]:
    """Write ``stress.csv``, ``stress.png``, ``stress.svg`` and ``summary.json`` into ``out_dir``."""
    out = check_writable(out_dir)
    paths = {"csv": write_csv(result, out / "stress.csv"), "summary": write_summary(result, out / "summary.json")}
    png, svg = save_figure(curves_figure(result), out / "stress")
    paths.update(png=png, svg=svg)
    return paths
