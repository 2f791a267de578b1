"""Chapter 5's explorers: the committed sweep's training curves, and live training in a kernel.

:func:`sweep_explorer` (kernel-free in the book, ipywidgets in Jupyter/Colab)
    One committed run per setting of four selects: ``variant`` (Pre-LN, Post-LN,
    Post-LN + warmup), ``layers``, ``rate`` (the target learning rate) and ``seed``; the
    options are exactly the committed sweep's (:func:`~lnworked.stress.committed.committed_sweep`).
    It draws that run's loss per step in one panel (a linear axis fitted to the run and the
    loss of a uniform guess, ``ln V`` for ``V`` = the vocabulary size: :func:`loss_axis`) and
    its global gradient norm in a second panel below (a log axis shared by every run), both in
    the run's colour (:func:`run_color`), and reads out the run's
    final loss, maximum gradient norm and divergence step from the sweep's table. Built
    on :mod:`lnworked.explore`'s spec (:class:`~lnworked.explore.Explorer`), so the
    static form is the same HTML, script and DOM contract as the book's other explorers
    (``data-explorer="training"``; the grid holds every run's curves, computed ahead of
    time by ``lnworked stress sweep``, not by the browser).

:func:`training_explorer` (a live kernel only)
    Sliders for ``layers``, ``rate`` and ``steps`` and a button that trains the article's
    three runs (:func:`lnworked.stress.train.train`) with them.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from lnworked.stress.config import StressConfig

__all__ = ["sweep_explorer", "sweep_explorer_spec", "run_color", "sweep_readouts", "training_explorer", "train_and_show",
           "loss_axis", "READOUT_KEYS"]

#: The y labels of the explorer's two panels.
LOSS_LABEL, NORM_LABEL = "loss (nats)", "gradient norm (log scale)"

#: Readout keys of :func:`sweep_explorer`, in table order.
READOUT_KEYS = ("final-loss", "max-gradient-norm", "diverged-at")


def sweep_readouts(row: dict) -> dict:
    """Readout key -> text for one sweep row (:func:`lnworked.explore.format_readout` of its numbers)."""
    from lnworked.explore import format_readout

    return {"final-loss": format_readout(row["final_loss"]),
            "max-gradient-norm": format_readout(row["max_gradient_norm"]),
            "diverged-at": "no" if row["diverged_at"] is None else f"step {row['diverged_at']}"}


def loss_axis(loss, uniform: float, margin: float = 0.05) -> tuple[float, float]:
    """The loss panel's y range for one run: from ``min(loss ∪ {uniform})`` to ``max(loss ∪ {uniform})``,
    widened by ``margin`` times that span on each side but not below 0, where a cross-entropy
    ends (non-finite losses ignored).

    Fitted to the run, so a run whose loss moves little (a dip from ``ln V`` and back) fills the panel
    instead of being squashed into a line, and the uniform-guess line is always in view.
    """
    if not 0 <= margin < 0.5:
        raise ValueError(f"margin must be in [0, 0.5), got {margin}")
    values = [v for v in np.asarray(loss, dtype=float) if math.isfinite(v)] + [float(uniform)]
    lo, hi = min(values), max(values)
    pad = margin * (hi - lo) if hi > lo else 0.5
    return round(max(lo - pad, 0.0), 4), round(hi + pad, 4)


def run_color(row: dict) -> str:
    """A sweep row's colour, as in chapter 5's other figures: Pre-LN violet, Post-LN magenta,
    Post-LN with warmup orange (:data:`lnworked.style.PALETTE`)."""
    from lnworked.stress.report import _run_colors

    return _run_colors()[(bool(row["pre_norm"]), row["warmup_steps"] > 0)]


def _run_key(values: dict) -> tuple:
    return (values["variant"], int(values["layers"]), float(values["rate"]), int(values["seed"]))


def step_ticks(steps: int) -> list[int]:
    """The x ticks of a training-curve chart: 1, every multiple of 5 * round(steps / 30) (at least 5), and ``steps``."""
    every = max(5, 5 * round(steps / 30))
    return sorted({1, steps, *range(every, steps + 1, every)})


def rounded_curve(values, steps: int | None = None) -> list:
    """Four significant digits; ``None`` where not finite and, up to ``steps``, after the run's last
    step (a diverged run is cut). Every stored-run explorer's curves go through it."""
    out = [float(f"{v:.4g}") if math.isfinite(v) else None for v in np.asarray(values, dtype=float)]
    return out + [None] * ((steps or len(out)) - len(out))


@lru_cache(maxsize=4)
def sweep_explorer_spec(folder=None):
    """The :class:`~lnworked.explore.Explorer` over the committed sweep (or ``folder``'s)."""
    from lnworked.explore import Choice, Explorer, Series, _key, _rows_table
    from lnworked.stress.committed import committed_sweep, committed_sweep_steps
    from lnworked.style import PALETTE

    rows, _ = committed_sweep(folder)
    curves, _ = committed_sweep_steps(folder)
    by_key = {(r["variant"], r["layers"], r["learning_rate"], r["seed"]): r for r in rows}
    variants = list(dict.fromkeys(r["variant"] for r in rows))
    depths = sorted({r["layers"] for r in rows})
    rates = sorted({r["learning_rate"] for r in rows})
    seeds = sorted({r["seed"] for r in rows})
    steps = max(r["steps"] for r in rows)
    uniform = math.log(StressConfig().vocab_size)
    names = ("variant", "layers", "rate", "seed")

    def readouts(values):
        return sweep_readouts(by_key[_run_key(values)])

    def table(texts):
        return _rows_table((("final loss", "final-loss", texts["final-loss"]),
                            ("largest gradient norm", "max-gradient-norm", texts["max-gradient-norm"]),
                            ("diverged", "diverged-at", texts["diverged-at"])))

    def draw(ax, values, spec):
        """The loss on ``ax`` (linear, fitted to the run), the gradient norm on a log axes added below it."""
        from lnworked.style import style_axes

        loss, norm = curves[_run_key(values)]
        color = run_color(by_key[_run_key(values)])
        fig = ax.figure
        fig.set_size_inches(6.2, 5.6)
        inner = ax.get_subplotspec().subgridspec(2, 1)
        ax.set_subplotspec(inner[0])
        norm_ax = style_axes(fig.add_subplot(inner[1], sharex=ax))
        ax.axhline(uniform, color=PALETTE["text"], linestyle=":", linewidth=1.2, gid="uniform",
                   label=f"uniform guess, ln {StressConfig().vocab_size}")
        loss_series, norm_series = spec.series
        ax.plot(np.arange(1, len(loss) + 1), loss, color=color, label=loss_series.label,
                gid=loss_series.key)
        norm_ax.semilogy(np.arange(1, len(norm) + 1), norm, color=color, label=norm_series.label,
                         gid=norm_series.key)
        ax.set_xlim(1, steps)
        ax.set_ylim(*loss_axis(loss, uniform))
        norm_ax.set_ylim(*_norm_range())
        ax.set_ylabel(LOSS_LABEL)
        norm_ax.set_ylabel(NORM_LABEL)
        norm_ax.set_xlabel("training step")
        norm_ax.legend(fontsize=9, frameon=False)

    def _norm_range():
        values = [v for _, norm in curves.values() for v in norm if math.isfinite(v) and v > 0]
        return 10 ** math.floor(math.log10(min(values))), 10 ** math.ceil(math.log10(max(values)))

    def grid():
        runs = {}
        for key, row in by_key.items():
            loss, norm = curves[key]
            text = "|".join(_key(v) for v in key)
            runs[text] = {"loss": rounded_curve(loss, steps), "gradient_norm": rounded_curve(norm, steps),
                          "loss_range": list(loss_axis(loss, uniform)), "color": run_color(row),
                          "readouts": [sweep_readouts(row)[k] for k in READOUT_KEYS]}
        norm_min, norm_max = _norm_range()
        # two panels, one above the other, on a taller canvas (the script's view_box / phone_view_box)
        panels = [{"key": "loss", "series": ["loss"], "log": False, "fit": "loss_range", "ref": round(uniform, 4),
                   "height": 0.5, "x_label": "", "y_label": LOSS_LABEL},
                  {"key": "gradient_norm", "series": ["gradient_norm"], "log": True, "y_min": norm_min,
                   "y_max": norm_max, "height": 0.5, "x_label": "training step", "y_label": NORM_LABEL}]
        return {"controls": list(names), "readouts": list(READOUT_KEYS), "steps": list(range(1, steps + 1)),
                "x_ticks": step_ticks(steps), "uniform": round(uniform, 4), "panels": panels,
                "view_box": "0 0 520 460", "phone_view_box": "0 0 340 620", "runs": runs}

    default = (variants[1] if len(variants) > 1 else variants[0], depths[-1],
               rates[len(rates) // 2], seeds[0])
    return Explorer(
        kind="training",
        caption=("One training run of the stored sweep (computed ahead of time) per setting: the placement "
                 "(with or without "
                 f"warmup), the number of layers, the target learning rate and the random seed; {steps} steps "
                 "each. Top: the run's loss at every step, on an axis fitted to that run (read its ticks when you "
                 f"switch runs), with a dotted line at the loss of a uniform guess over the "
                 f"{StressConfig().vocab_size} tokens, ln {StressConfig().vocab_size} ≈ {uniform:.2f}. Bottom: its "
                 "global gradient norm, on a log scale that is the same for every run."),
        aria="Two panels over the training steps: above, the chosen run's loss on a linear axis fitted to the "
             "run, with a dotted line at the uniform-guess loss; below, its gradient norm on a log scale",
        controls=(Choice("variant", "run", tuple((v, v) for v in variants), default[0]),
                  Choice("layers", "layers", tuple((d, str(d)) for d in depths), default[1]),
                  Choice("rate", "learning rate", tuple((r, _key(r)) for r in rates), default[2]),
                  Choice("seed", "seed", tuple((s, str(s)) for s in seeds), default[3])),
        series=(Series("loss", "loss", PALETTE["post"]), Series("gradient_norm", "gradient norm", PALETTE["norm"])),
        readouts=readouts,
        grid=grid,
        table=table,
        draw=draw,
    )


def sweep_explorer(folder=None):
    """The committed sweep's curves: kernel-free HTML in the book build, ipywidgets in a kernel."""
    from lnworked.explore import show_explorer

    return show_explorer(sweep_explorer_spec(folder))


def train_and_show(config: StressConfig, device="auto"):
    """Train the three runs of ``config`` and display their table and curves; the result."""
    from IPython.display import Markdown, display

    from lnworked.stress.report import curves_figure, markdown_table
    from lnworked.stress.train import train

    result = train(config, device=device)
    display(Markdown(markdown_table(result)), curves_figure(result, with_article=False))
    return result


def training_explorer(config: StressConfig | None = None, device="auto"):
    """An ipywidgets box: ``layers``, ``rate`` and ``steps`` sliders, a train button, an output area."""
    import ipywidgets as widgets

    config = StressConfig() if config is None else config
    layers = widgets.IntSlider(value=config.layers, min=1, max=24, description="layers")
    rate = widgets.FloatLogSlider(value=config.learning_rate, base=10, min=-4, max=-1.5, description="rate")
    steps = widgets.IntSlider(value=config.steps, min=10, max=400, step=10, description="steps")
    button = widgets.Button(description="Train the three runs")
    output = widgets.Output()

    def on_click(_):
        with output:
            output.clear_output()
            train_and_show(config.replace(layers=layers.value, learning_rate=rate.value, steps=steps.value), device)

    button.on_click(on_click)
    return widgets.VBox([layers, rate, steps, button, output])
