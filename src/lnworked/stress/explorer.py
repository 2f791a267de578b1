"""Training controls for a live kernel: choose depth, learning rate and steps, train the three runs.

Chapter 5 shows them below its results. Each click trains the article's three runs
(:func:`lnworked.stress.train.train`) with the chosen ``layers``, target rate ``eta`` and
``steps`` (the warmup stays two thirds of the steps) and shows the summary table and the
loss and gradient-norm curves. The callbacks need a kernel: in a static page the sliders
would do nothing, so the chapter shows a note there instead.
"""

from __future__ import annotations

from lnworked.stress.config import StressConfig

__all__ = ["training_explorer", "train_and_show"]


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
