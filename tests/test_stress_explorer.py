"""Chapter 5's display layer: the sweep explorer over committed runs, the run names shown
(Pre-LN / Post-LN), the figures' labels and reference line, and the chapter's visible text
(no device, cache, version or timing lines outside its folded "How this page was computed")."""

from __future__ import annotations

import math
import re
from pathlib import Path

import matplotlib
import nbformat
import numpy as np
import pytest

matplotlib.use("Agg")

from lnworked.explore import format_readout  # noqa: E402
from lnworked.stress.committed import committed_sweep, committed_sweep_steps  # noqa: E402
from lnworked.stress.config import RunSpec, StressConfig  # noqa: E402
from lnworked.stress.results import RunResult, StressResult  # noqa: E402
from lnworked.style import PALETTE  # noqa: E402

CHAPTER = Path(__file__).resolve().parents[1] / "book" / "chapters" / "05_stress_test.ipynb"


@pytest.fixture
def static(monkeypatch):
    monkeypatch.setenv("LNWORKED_STATIC_BUILD", "1")


@pytest.fixture
def live(monkeypatch):
    monkeypatch.delenv("LNWORKED_STATIC_BUILD", raising=False)


def _expected_readouts(row) -> dict:
    """The documented readout texts of one sweep row, written out here."""
    return {"final-loss": format_readout(row["final_loss"]),
            "max-gradient-norm": format_readout(row["max_gradient_norm"]),
            "diverged-at": "no" if row["diverged_at"] is None else f"step {row['diverged_at']}"}


# --- the committed per-step logs agree with the committed table -----------------------------


def test_committed_step_logs_are_the_sweeps_runs():
    """sweep-steps.csv holds one log per row of sweep.csv, and each log ends where the row says."""
    rows, _ = committed_sweep()
    logs, about = committed_sweep_steps()
    assert about["command"].startswith("lnworked stress sweep")
    keys = {(r["variant"], r["layers"], r["learning_rate"], r["seed"]) for r in rows}
    assert set(logs) == keys and len(keys) == len(rows)
    for row in rows:
        loss, norm = logs[(row["variant"], row["layers"], row["learning_rate"], row["seed"])]
        assert len(loss) == len(norm) == row["steps_done"]
        assert loss[-1] == pytest.approx(row["final_loss"], rel=1e-6)
        assert np.nanmax(norm) == pytest.approx(row["max_gradient_norm"], rel=1e-6)


def test_sweep_cli_writes_step_logs_that_read_back(tmp_path):
    from lnworked.cli import main

    assert main(["stress", "sweep", "--device", "cpu", "--depths", "1", "--lrs", "0.001", "--seeds", "5",
                 "--steps", "3", "--out", str(tmp_path)]) == 0
    rows, _ = committed_sweep(tmp_path)
    logs, _ = committed_sweep_steps(tmp_path)
    assert len(logs) == len(rows) == 3
    for row in rows:
        loss, _ = logs[(row["variant"], 1, 0.001, 5)]
        assert len(loss) == 3 and loss[-1] == pytest.approx(row["final_loss"], rel=1e-6)


# --- the explorer --------------------------------------------------------------------------


def test_explorer_offers_exactly_the_committed_grid():
    from lnworked.stress.explorer import sweep_explorer_spec

    rows, _ = committed_sweep()
    spec = sweep_explorer_spec()
    options = {c.name: list(c.values) for c in spec.controls}
    assert options == {"variant": list(dict.fromkeys(r["variant"] for r in rows)),
                       "layers": sorted({r["layers"] for r in rows}),
                       "rate": sorted({r["learning_rate"] for r in rows}),
                       "seed": sorted({r["seed"] for r in rows})}


def test_explorer_grid_holds_every_committed_run():
    from lnworked.explore import spec_grid
    from lnworked.stress.explorer import sweep_explorer_spec

    rows, _ = committed_sweep()
    logs, _ = committed_sweep_steps()
    grid = spec_grid(sweep_explorer_spec())
    assert len(grid["runs"]) == len(rows)
    assert grid["uniform"] == pytest.approx(math.log(StressConfig().vocab_size), abs=1e-4)
    for row in rows:
        key = f"{row['variant']}|{row['layers']}|{row['learning_rate']:g}|{row['seed']}"
        run = grid["runs"][key]
        assert run["readouts"] == [_expected_readouts(row)[k] for k in ("final-loss", "max-gradient-norm",
                                                                         "diverged-at")]
        loss, norm = logs[(row["variant"], row["layers"], row["learning_rate"], row["seed"])]
        assert len(run["loss"]) == len(grid["steps"]) == row["steps"]
        np.testing.assert_allclose([v for v in run["loss"] if v is not None], loss, rtol=1e-3)
        np.testing.assert_allclose([v for v in run["gradient_norm"] if v is not None], norm, rtol=1e-3)
        lo, hi = run["loss_range"]                       # the loss panel: fitted to this run and ln V
        assert 0 <= lo < min(loss.min(), grid["uniform"]) and max(loss.max(), grid["uniform"]) < hi
        assert hi - lo < 1.2 * (max(loss.max(), grid["uniform"]) - min(loss.min(), grid["uniform"]))
        (norm_panel,) = [p for p in grid["panels"] if p["key"] == "gradient_norm"]
        assert norm_panel["log"] and norm_panel["y_min"] <= norm.min() and norm.max() <= norm_panel["y_max"]


def test_loss_axis_fits_the_run_and_the_uniform_line():
    from lnworked.stress.explorer import loss_axis

    assert loss_axis([2.0, 3.0], 4.0) == pytest.approx((1.9, 4.1))          # span 2, 5 % of it each side
    assert loss_axis([4.0, 3.5, float("nan")], 4.0, margin=0.1) == pytest.approx((3.45, 4.05))
    assert loss_axis([4.0], 4.0) == pytest.approx((3.5, 4.5))               # a flat run still gets an axis
    assert loss_axis([0.01, 4.0], 4.0) == pytest.approx((0.0, 4.1995))     # a cross-entropy is never below 0
    with pytest.raises(ValueError, match="margin"):
        loss_axis([1.0], 4.0, margin=0.5)


# The explorer's plot after the script ran: each panel's loss/norm path and frame (Node.js, minimal DOM).
_PANELS_JS = r"""
const plot = roots[0].querySelector('svg.lnw-plot');
const panels = plot.querySelectorAll('svg.lnw-panel').map(p => {
  const axes = p.querySelector('g.lnw-axes'), frame = axes.querySelectorAll('line')[1].attrs;
  return { key: p.attrs['data-panel'], top: +frame.y1, bottom: +frame.y2, left: +frame.x1,
           paths: p.querySelectorAll('path.lnw-line').map(e => [e.attrs['data-series'], e.attrs.d]),
           strokes: p.querySelectorAll('path.lnw-line').map(e => e.attrs.stroke),
           refs: p.querySelectorAll('line.lnw-ref').length,
           ticks: axes.querySelectorAll('text').map(t => t.textContent) };
});
console.log(JSON.stringify({ results: results, viewBox: plot.attrs.viewBox, panels: panels }));
"""


def _panels_in_node(html: str, settings: dict) -> dict:
    import json
    import shutil
    import subprocess

    from test_explore import _NODE_DOM, _Tree

    if shutil.which("node") is None:
        pytest.skip("Node.js is not installed")
    tree = _Tree()
    tree.feed(html)
    actions = [{"root": 0, "name": k, "value": v, "event": "change"} for k, v in settings.items()]
    script = _NODE_DOM.replace("console.log(JSON.stringify(results));", _PANELS_JS)
    done = subprocess.run([shutil.which("node"), "-e", script], capture_output=True, text=True, timeout=60,
                          input=json.dumps({"body": tree.body, "scripts": tree.scripts, "actions": actions}))
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def path_heights(d: str, top: float, bottom: float) -> list[float]:
    """The heights of a drawn path's points as fractions of its panel's plot area (0 = bottom, 1 = top)."""
    ys = [float(y) for y in re.findall(r"[ML]-?[\d.]+,(-?[\d.]+)", d)]
    return [(bottom - y) / (bottom - top) for y in ys]


def test_static_loss_panel_follows_the_chosen_run(static):
    """The loss has its own linear panel fitted to the chosen run, so the failing Post-LN run's dip
    from ln V and climb back (exercise 5.4) fill a visible part of it; the gradient norm keeps a log
    panel below with the same axis for every run."""
    from lnworked.explore import spec_grid
    from lnworked.stress.explorer import sweep_explorer, sweep_explorer_spec

    logs, _ = committed_sweep_steps()
    x_ticks = spec_grid(sweep_explorer_spec())["x_ticks"]
    html = sweep_explorer().data
    norm_ticks = set()
    # the book's colours (lnworked.style): Pre-LN violet, Post-LN magenta, as in the chapter's Fig. 5.1
    colours = {"Pre-LN": PALETTE["violet"], "Post-LN": PALETTE["magenta"], "Post-LN + warmup": PALETTE["orange"]}
    for variant, layers, rate, seed in (("Post-LN", 6, 0.008, 7), ("Post-LN", 6, 0.008, 8), ("Pre-LN", 12, 0.002, 7),
                                        ("Post-LN + warmup", 6, 0.008, 7)):
        out = _panels_in_node(html, {"variant": variant, "layers": str(layers), "rate": f"{rate:g}",
                                     "seed": str(seed)})
        panels = {p["key"]: p for p in out["panels"]}
        assert list(panels) == ["loss", "gradient_norm"] and out["viewBox"] == "0 0 520 460"
        loss_panel, norm_panel = panels["loss"], panels["gradient_norm"]
        assert loss_panel["strokes"] == norm_panel["strokes"] == [colours[variant]], (variant, out["panels"])
        assert [k for k, _ in loss_panel["paths"]] == ["loss"] and [k for k, _ in norm_panel["paths"]] == [
            "gradient_norm"]
        assert loss_panel["refs"] == 1 and norm_panel["refs"] == 0         # ln V is drawn with the loss
        assert loss_panel["left"] == norm_panel["left"]                   # the panels' step axes line up
        loss = logs[(variant, layers, rate, seed)][0]
        heights = path_heights(loss_panel["paths"][0][1], loss_panel["top"], loss_panel["bottom"])
        assert len(heights) == len(loss) and all(-1e-6 <= h <= 1 + 1e-6 for h in heights)
        assert max(heights) - min(heights) > 0.5, "the run's loss is squashed into a small part of its panel"
        lowest = int(np.argmin(loss))
        assert heights[lowest] == min(heights)
        if variant == "Post-LN":     # exercise 5.4's failing run: a dip from ln V and a climb back, both visible
            assert heights[0] - heights[lowest] > 0.25 and heights[-1] - heights[lowest] > 0.25, heights
        y_ticks = [float(t) for t in loss_panel["ticks"][:-len(x_ticks) - 2]]   # then x ticks, x and y labels
        assert y_ticks[0] <= loss.min() and max(loss.max(), math.log(StressConfig().vocab_size)) <= y_ticks[-1]
        norm_ticks.add(tuple(norm_panel["ticks"][:-len(x_ticks) - 2]))
    assert len(norm_ticks) == 1, "the gradient norm's axis changes with the run"


def test_static_explorer_responds_to_its_controls(static):
    """The static HTML run by the book's explorer script (Node.js with a minimal DOM)."""
    from test_explore import _run_in_node

    from lnworked.stress.explorer import sweep_explorer

    rows, _ = committed_sweep()
    find = {(r["variant"], r["layers"], r["learning_rate"], r["seed"]): r for r in rows}
    html = sweep_explorer().data
    assert 'data-explorer="training"' in html and "http" not in html.split("<script")[0]
    actions = [{"root": 0, "name": "variant", "value": "Pre-LN", "event": "change"},
               {"root": 0, "name": "layers", "value": "6", "event": "change"},
               {"root": 0, "name": "rate", "value": "0.008", "event": "change"},
               {"root": 0, "name": "seed", "value": "8", "event": "change"}]
    results = _run_in_node(html, actions)
    first = results[0]["initial"]
    assert first["ready"] == "1" and first["lines"] == 2
    states = [r["state"] for r in results[1:]]
    settings = [("Pre-LN", 12, 0.002, 7), ("Pre-LN", 6, 0.002, 7), ("Pre-LN", 6, 0.008, 7), ("Pre-LN", 6, 0.008, 8)]
    for state, key in zip(states, settings):
        assert state["readouts"] == _expected_readouts(find[key]), key
        assert state["lines"] == 2


def test_live_explorer_responds_to_its_controls(live):
    from lnworked.stress.explorer import sweep_explorer

    rows, _ = committed_sweep()
    find = {(r["variant"], r["layers"], r["learning_rate"], r["seed"]): r for r in rows}
    box = sweep_explorer()
    controls = box.lnw_controls
    assert set(controls) == {"variant", "layers", "rate", "seed"}
    controls["variant"].value = "Post-LN + warmup"
    controls["layers"].value = 6
    assert box.lnw_values == _expected_readouts(find[("Post-LN + warmup", 6, controls["rate"].value,
                                                      controls["seed"].value)])
    loss_ax, norm_ax = box.lnw_figure.axes
    lines = {line.get_gid(): line for line in loss_ax.get_lines()}
    assert set(lines) == {"loss", "uniform"} and {line.get_gid() for line in norm_ax.get_lines()} == {"gradient_norm"}
    np.testing.assert_allclose(lines["uniform"].get_ydata(), math.log(StressConfig().vocab_size))
    assert loss_ax.get_yscale() == "linear" and norm_ax.get_yscale() == "log"
    loss = lines["loss"].get_ydata()
    lo, hi = loss_ax.get_ylim()
    assert lo < loss.min() and loss.max() < hi and (loss.max() - loss.min()) / (hi - lo) > 0.5


# --- names shown, figures ------------------------------------------------------------------


def test_display_names_are_the_books():
    from lnworked.stress.report import display_name

    assert display_name("Pre-Norm · no warmup") == "Pre-LN, no warmup"
    assert display_name("Post-Norm · 120-step warmup") == "Post-LN, 120-step warmup"
    assert display_name("Post-LN + warmup") == "Post-LN + warmup"


def _fake_result() -> StressResult:
    config = StressConfig(steps=4)
    runs = []
    for spec in (RunSpec("Pre-Norm · no warmup", True, 0), RunSpec("Post-Norm · no warmup", False, 0),
                 RunSpec("Post-Norm · 2-step warmup", False, 2)):
        runs.append(RunResult(spec, np.array([4.0, 3.0, 2.0, 1.0]), np.array([1.0, 2.0, 1.5, 1.2]),
                              np.full(4, 2e-3)))
    return StressResult(config, "cpu:0 (cpu)", 1.0, runs)


def test_table_and_curves_say_pre_ln_and_post_ln():
    from lnworked.stress.report import curves_figure, markdown_table

    result = _fake_result()
    table = markdown_table(result)
    assert "Norm" not in table and "Pre-LN, no warmup" in table and "Post-LN, 2-step warmup" in table
    fig = curves_figure(result, with_article=False)
    labels = [t.get_text() for ax in fig.axes for legend in [ax.get_legend()] if legend for t in legend.get_texts()]
    assert labels == ["Pre-LN, no warmup", "Post-LN, no warmup", "Post-LN, 2-step warmup"]
    assert all(ax.get_subplotspec().colspan.start == 0 for ax in fig.axes)   # stacked, one column


def _markdown_cells(table: str) -> list[dict]:
    """The rows of a Markdown table as {column title: cell text}."""
    header, _, *body = table.splitlines()
    titles = [c.strip() for c in header.strip("|").split("|")]
    return [dict(zip(titles, (c.strip() for c in line.strip("|").split("|")))) for line in body]


def test_table_shows_diverged_at_only_when_a_run_diverged():
    from lnworked.stress.report import markdown_table, summary_table

    result = _fake_result()
    assert "diverged" not in markdown_table(result) and "diverged" not in summary_table(result)
    assert [row["final loss"] for row in _markdown_cells(markdown_table(result))] == ["1.00000"] * 3
    # a run whose log stops before its first non-finite step, as train records it
    spec = result.runs[1].spec
    result.runs[1] = RunResult(spec, np.array([4.0, 9.0]), np.array([1.0, 50.0]), np.full(2, 2e-3), diverged_at=3)
    rows = _markdown_cells(markdown_table(result))
    assert [row["diverged at"] for row in rows] == ["-", "3", "-"]
    assert rows[1]["final loss"] == "9.00000" and rows[1]["max gradient norm"] == "50.000"
    assert "diverged at" in summary_table(result).splitlines()[0]


def test_seed_figure_has_the_uniform_guess_line():
    from lnworked.stress.committed import committed_seed_runs
    from lnworked.stress.figures import seed_figure

    runs, _ = committed_seed_runs()
    ax = seed_figure(runs, 64).axes[0]
    (line,) = [line for line in ax.get_lines() if line.get_gid() == "uniform"]
    np.testing.assert_allclose(line.get_ydata(), np.log(64))
    assert "ln 64" in line.get_label()
    assert "Norm" not in ax.get_title() and "Post-LN" in ax.get_title()


def _contrast(a, b) -> float:
    """WCAG 2 contrast ratio, computed here from the definition."""
    def lum(color):
        r, g, b_ = (c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in matplotlib.colors.to_rgb(color))
        return 0.2126 * r + 0.7152 * g + 0.0722 * b_

    hi, lo = sorted((lum(a), lum(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def test_stability_map_labels_contrast_with_their_cells():
    from lnworked.stress.figures import DIVERGED_COLOR, stability_map

    rows, _ = committed_sweep()
    fig = stability_map(rows)
    checked = 0
    for ax in fig.axes[:-1]:                      # the last axes is the colour bar
        image = ax.get_images()[0]
        data = image.get_array()
        for text in ax.texts:
            j, i = (round(v) for v in text.get_position())
            value = data[i, j]
            cell = DIVERGED_COLOR if np.ma.is_masked(value) or not np.isfinite(value) else image.to_rgba(value)
            other = "white" if text.get_color() == "black" else "black"
            assert _contrast(text.get_color(), cell) >= _contrast(other, cell), (ax.get_title(), text.get_text())
            assert _contrast(text.get_color(), cell) >= 4.5, (ax.get_title(), text.get_text())
            checked += 1
        assert "Norm" not in ax.get_title()
    assert checked == len(rows) // len({r["seed"] for r in rows})


# --- the chapter's visible text -------------------------------------------------------------

PLUMBING = re.compile(r"\bdevice\b|\bcache\b|compil|\bversions?\b|\bseconds\b|\bjax\b|\bjaxlib\b|"
                      r"lnworked stress|provenance|vmap|lax\.scan|display\(|Markdown\(|--out|\bcpu\b|\bgpu\b",
                      re.IGNORECASE)
DROPDOWN = re.compile(r":::\{admonition\} How this page was computed\n:class: dropdown\n.*?\n:::", re.DOTALL)


def _visible_text() -> tuple[str, str]:
    """(visible Markdown outside the dropdown, visible code) of chapter 5's notebook."""
    nb = nbformat.read(CHAPTER, as_version=4)
    prose, code, dropdowns = [], [], 0
    for cell in nb.cells:
        tags = set(cell.metadata.get("tags", []))
        if cell.cell_type == "markdown":
            dropdowns += len(DROPDOWN.findall(cell.source))
            prose.append(DROPDOWN.sub("", cell.source))
        elif not tags & {"remove-cell", "remove-input"}:
            code.append(cell.source)
    assert dropdowns == 1, "chapter 5 should have exactly one 'How this page was computed' dropdown"
    return "\n".join(prose), "\n".join(code)


def test_chapter_5_visible_text_has_no_plumbing():
    prose, code = _visible_text()
    for where, text in (("prose", prose), ("visible code", code)):
        found = sorted({m.group(0) for m in PLUMBING.finditer(text)})
        assert not found, f"chapter 5's {where} shows mechanics outside the dropdown: {found}"
    glued = set(re.findall(r"\{glue:(?:text|md)\}`([\w-]+)", prose)) | set(re.findall(r"\{glue:md\} ([\w-]+)", prose))
    mechanics = {key for key in glued if re.search(r"device|seconds|provenance|version|cache", key)}
    assert not mechanics, f"glued mechanics shown outside the dropdown: {mechanics}"


def test_chapter_5_says_pre_ln_and_post_ln():
    prose, code = _visible_text()
    assert not re.search(r"(Pre|Post)-Norm", prose + code)


def test_chapter_5_forecasts_fold_their_answers():
    nb = nbformat.read(CHAPTER, as_version=4)
    text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    forecasts = re.findall(r"::::\{admonition\} Forecast\n:class: forecast\n(.*?)\n::::", text, re.DOTALL)
    assert len(forecasts) >= 2
    for body in forecasts:
        prompt, _, rest = body.partition(":::{admonition} Answer\n:class: dropdown\n")
        assert rest, "a forecast without a folded answer"
        assert not re.search(r"ch5-(pre|post|warm|stable|map|seed)-", prompt), "a result in the prompt"
