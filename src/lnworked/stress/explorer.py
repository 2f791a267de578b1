"""Chapter 5's explorers: the committed sweep's training curves, and live training in a kernel.

:func:`sweep_explorer` (kernel-free in the book, ipywidgets in Jupyter/Colab)
    One committed run per setting of four selects: ``variant`` (Pre-LN, Post-LN,
    Post-LN + warmup), ``layers``, ``rate`` (the target learning rate) and ``seed``; the
    options are exactly the committed sweep's (:func:`~lnworked.stress.committed.committed_sweep`).
    It draws that run's loss and global gradient norm per step (log scale) with the loss
    of a uniform guess, ``ln V`` for ``V`` = the vocabulary size, and reads out the run's
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

__all__ = ["sweep_explorer", "sweep_explorer_spec", "sweep_readouts", "training_explorer", "train_and_show",
           "READOUT_KEYS"]

#: Readout keys of :func:`sweep_explorer`, in table order.
READOUT_KEYS = ("final-loss", "max-gradient-norm", "diverged-at")


def sweep_readouts(row: dict) -> dict:
    """Readout key -> text for one sweep row (:func:`lnworked.explore.format_readout` of its numbers)."""
    from lnworked.explore import format_readout

    return {"final-loss": format_readout(row["final_loss"]),
            "max-gradient-norm": format_readout(row["max_gradient_norm"]),
            "diverged-at": "no" if row["diverged_at"] is None else f"step {row['diverged_at']}"}


def _run_key(values: dict) -> tuple:
    return (values["variant"], int(values["layers"]), float(values["rate"]), int(values["seed"]))


def step_ticks(steps: int) -> list[int]:
    """The x ticks of a training-curve chart: 1, every multiple of 5 * round(steps / 30) (at least 5), and ``steps``."""
    every = max(5, 5 * round(steps / 30))
    return sorted({1, steps, *range(every, steps + 1, every)})


def _curve(values, steps: int) -> list:
    """Four significant digits, ``None`` after the run's last step (a diverged run is cut)."""
    out = [float(f"{v:.4g}") if math.isfinite(v) else None for v in np.asarray(values, dtype=float)]
    return out + [None] * (steps - len(out))


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
        loss, norm = curves[_run_key(values)]
        xs = np.arange(1, steps + 1)
        ax.axhline(uniform, color=PALETTE["text"], linestyle=":", linewidth=1.2, gid="uniform",
                   label=f"uniform guess, ln {StressConfig().vocab_size}")
        for series, ys in zip(spec.series, (loss, norm)):
            ax.semilogy(np.arange(1, len(ys) + 1), ys, color=series.color, label=series.label, gid=series.key)
        ax.set_xlim(xs[0], xs[-1])
        ax.set_ylim(*_y_range())
        ax.set_xlabel("training step")
        ax.set_ylabel("loss, gradient norm (log scale)")

    def _y_range():
        values = [v for loss, norm in curves.values() for v in np.concatenate([loss, norm])
                  if math.isfinite(v) and v > 0]
        return 10 ** math.floor(math.log10(min(values))), 10 ** math.ceil(math.log10(max(values)))

    def grid():
        runs = {}
        for key, row in by_key.items():
            loss, norm = curves[key]
            text = "|".join(_key(v) for v in key)
            runs[text] = {"loss": _curve(loss, steps), "gradient_norm": _curve(norm, steps),
                          "readouts": [sweep_readouts(row)[k] for k in READOUT_KEYS]}
        y_min, y_max = _y_range()
        return {"controls": list(names), "readouts": list(READOUT_KEYS), "order": ["loss", "gradient_norm"],
                "steps": list(range(1, steps + 1)), "x_ticks": step_ticks(steps), "y_min": y_min, "y_max": y_max,
                "uniform": round(uniform, 4), "y_label": "loss, gradient norm (log scale)", "runs": runs}

    default = (variants[1] if len(variants) > 1 else variants[0], depths[-1],
               rates[len(rates) // 2], seeds[0])
    return Explorer(
        kind="training",
        caption=("One training run of the stored sweep (computed ahead of time) per setting: the placement "
                 "(with or without "
                 f"warmup), the number of layers, the target learning rate and the random seed; {steps} steps "
                 "each. The lines are the run's loss and its global gradient norm at every step; the dotted "
                 f"horizontal line is the loss of a uniform guess over the {StressConfig().vocab_size} tokens, "
                 f"ln {StressConfig().vocab_size} ≈ {uniform:.2f}. Log scale."),
        aria="Log-scale lines over the training steps: the chosen run's loss and gradient norm, and a dotted "
             "line at the uniform-guess loss",
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
