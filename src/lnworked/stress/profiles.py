"""Per-layer profiles of the article's three runs, at initialisation and after training steps.

For block ``l`` (``l = 1..L``) of a run's weights at step ``s``, on one fixed batch (the
configuration's first):

    stream_rms_l        = RMS(x_l)                       (the residual stream entering block l)
    attn_write_ratio_l  = RMS(a_l) / RMS(x_l),   a_l = Attn(N(x_l)) (Pre-LN) or Attn(x_l) (Post-LN)
    mlp_write_ratio_l   = RMS(m_l) / RMS(h_l),   m_l = MLP(N(h_l)) or MLP(h_l), h_l the stream after attention
    w2_gradient_norm_l  = ||d loss / d W2_l||_F             (the MLP's output matrix, as Xiong et al.)
    block_gradient_norm_l = ||d loss / d theta_l||          (every parameter of block l, as the probe)

where RMS is the root mean square over batch, positions and features, and each write
ratio compares a branch's output with the stream it is added to. The runs are the
article's three (:func:`lnworked.stress.config.default_runs`), trained by the compiled
path (:func:`lnworked.stress.train.make_chunk_fn`) in chunks of ``gcd`` of the snapshot
steps; the rates follow the full run's schedule whatever the last snapshot.
"""

from __future__ import annotations

import csv
import math
from functools import reduce
from pathlib import Path
from typing import Callable

import jax
import jax.numpy as jnp
import numpy as np

from lnworked.stress.compile import CPU_SETUP_OPTIONS, compile_program
from lnworked.stress.config import StressConfig, default_runs
from lnworked.stress.data import make_batches
from lnworked.stress.model import Block, embed_tokens
from lnworked.stress.optim import learning_rates
from lnworked.stress.stacked import make_logits
from lnworked.stress.step import make_loss
from lnworked.stress.train import initial_state, make_chunk_fn
from lnworked.validation import check_int

__all__ = ["SNAPSHOTS", "QUANTITIES", "make_profile_fn", "trained_profiles", "write_profiles_csv",
           "read_profiles_csv"]

SNAPSHOTS = (0, 10, 60, 180)
QUANTITIES = ("stream_rms", "attn_write_ratio", "mlp_write_ratio", "w2_gradient_norm", "block_gradient_norm")


def _rms(x):
    return jnp.sqrt(jnp.mean(jnp.square(x)))


def make_profile_fn(config: StressConfig):
    """``profile(params, source, target, pre_norm) -> {quantity: (L,) array, "loss": scalar}``
    for stacked parameters (:func:`lnworked.stress.stacked.stack_params`); not yet jitted."""
    block = Block(config.width, config.heads, True, config.norm, config.causal, config.init)
    grad = jax.value_and_grad(make_loss(make_logits(config, unroll=1)))

    def call(layer, method, x):
        return block.apply({"params": layer}, x, method=method)

    def forward(params, source, pre_norm):
        x = embed_tokens(params["embedding"]["embedding"], params["position"], source, config)
        out = {"stream_rms": [], "attn_write_ratio": [], "mlp_write_ratio": []}
        for l in range(config.layers):
            layer = jax.tree.map(lambda leaf: leaf[l], params["blocks"])
            out["stream_rms"].append(_rms(x))
            for key, norm, sub in (("attn_write_ratio", lambda m, v: m.ln_1(v), lambda m, v: m.attn(v)),
                                   ("mlp_write_ratio", lambda m, v: m.ln_2(v), lambda m, v: m.mlp(v))):
                write = call(layer, sub, jnp.where(pre_norm, call(layer, norm, x), x))
                out[key].append(_rms(write) / _rms(x))
                y = x + write
                x = jnp.where(pre_norm, y, call(layer, norm, y))
        return {k: jnp.stack(v) for k, v in out.items()}

    def profile(params, source, target, pre_norm):
        loss, g = grad(params, source, target, pre_norm)
        blocks = g["blocks"]
        squares = [jnp.sum(jnp.square(leaf).reshape(leaf.shape[0], -1), axis=1) for leaf in jax.tree.leaves(blocks)]
        out = forward(params, source, pre_norm)
        out["w2_gradient_norm"] = jnp.sqrt(jnp.sum(jnp.square(blocks["mlp_out"]["kernel"]), axis=(1, 2)))
        out["block_gradient_norm"] = jnp.sqrt(sum(squares))
        out["loss"] = loss
        return out

    return profile


def trained_profiles(config: StressConfig | None = None, snapshots=SNAPSHOTS, device=None,
                     progress: Callable[[int], None] | None = None):
    """``(rows, interrupted)``: tidy rows ``{run, pre_norm, warmup, step, layer, loss, <QUANTITIES>}``
    of the article's three runs at each snapshot step (0 = the initial weights). Ctrl-C (or a
    ``KeyboardInterrupt`` from ``progress(step)``) keeps the snapshots done."""
    config = StressConfig() if config is None else config
    snapshots = sorted({check_int(s, "snapshots", minimum=0, maximum=config.steps) for s in snapshots})
    if not snapshots:
        raise ValueError("snapshots: need at least one step")
    runs = default_runs(config)
    device = jax.devices("cpu")[0] if device is None else device
    sources, targets = make_batches(config)
    rates = np.stack([learning_rates(config.learning_rate, config.steps, r.warmup_steps) for r in runs]).astype(np.float32)
    pre = np.array([r.pre_norm for r in runs])
    chunk = reduce(math.gcd, [s for s in snapshots if s > 0], 0) or 1
    rows, interrupted = [], False
    with jax.default_device(device):
        (params, opt_state), _ = initial_state(config, [config.seed] * len(runs), device)
        alive = np.ones(len(runs), bool)
        prof_args = (params, sources[0], targets[0], pre)
        profile, _ = compile_program(jax.vmap(make_profile_fn(config), in_axes=(0, None, None, 0)), prof_args,
                                     device, CPU_SETUP_OPTIONS)
        step, compiled = 0, None
        try:
            while True:
                if step in snapshots:
                    values = jax.tree.map(np.asarray, profile(params, sources[0], targets[0], pre))
                    for r, run in enumerate(runs):
                        for l in range(config.layers):
                            rows.append({"run": run.name, "pre_norm": run.pre_norm, "warmup": run.warmup_steps,
                                         "step": step, "layer": l + 1, "alive": bool(alive[r]),
                                         "loss": float(values["loss"][r]),
                                         **{q: float(values[q][r, l]) for q in QUANTITIES}})
                    if progress is not None:
                        progress(step)
                if step >= snapshots[-1]:
                    break
                window = slice(step, step + chunk)
                args = (params, opt_state, alive, pre, sources[window], targets[window], rates[:, window],
                        np.ones(chunk, bool))
                if compiled is None:
                    compiled, _ = compile_program(make_chunk_fn(config, True), args, device)
                (params, opt_state, alive), _ = compiled(*args)
                params, opt_state, alive = jax.tree.map(np.asarray, (params, opt_state, alive))
                step += chunk
        except KeyboardInterrupt:
            interrupted = True
    return rows, interrupted


FIELDS = ("run", "pre_norm", "warmup", "step", "layer", "alive", "loss") + QUANTITIES


def write_profiles_csv(rows, path) -> None:
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=FIELDS)
        writer.writeheader()
        for row in rows:
            writer.writerow({**row, "pre_norm": int(row["pre_norm"]), "alive": int(row["alive"]),
                             **{k: f"{row[k]:.8g}" for k in ("loss",) + QUANTITIES}})


def read_profiles_csv(path) -> list[dict]:
    with open(Path(path), newline="", encoding="utf-8") as handle:
        return [{"run": r["run"], "pre_norm": r["pre_norm"] == "1", "warmup": int(r["warmup"]),
                 "step": int(r["step"]), "layer": int(r["layer"]), "alive": r["alive"] == "1",
                 "loss": float(r["loss"]), **{q: float(r[q]) for q in QUANTITIES}}
                for r in csv.DictReader(handle)]


LABELS = {"stream_rms": "RMS of the stream entering the block", "attn_write_ratio": "attention write / stream",
          "mlp_write_ratio": "MLP write / stream", "w2_gradient_norm": "||dloss/dW2|| of the block",
          "block_gradient_norm": "||dloss/dtheta|| of the block"}


def profiles_figure(rows, quantity: str, log: bool = True):
    """One panel per run (stacked): ``quantity`` against the block, one line per snapshot step
    (darker = later)."""
    from lnworked.stress.figures import PHONE_FONT, WIDTH, _style
    from lnworked.stress.report import display_name
    from lnworked.style import PALETTE, new_figure

    if quantity not in QUANTITIES:
        raise ValueError(f"quantity: must be one of {QUANTITIES}, got {quantity!r}")
    runs = list(dict.fromkeys(r["run"] for r in rows))
    steps = sorted({r["step"] for r in rows})
    fig, axes = new_figure(WIDTH, 3.2 * len(runs), nrows=len(runs))
    axes = np.atleast_1d(axes)
    for ax, run in zip(axes, runs):
        mine = [r for r in rows if r["run"] == run]
        color = PALETTE["pre"] if mine[0]["pre_norm"] else PALETTE["post"]
        for k, step in enumerate(steps):
            at = sorted((r for r in mine if r["step"] == step), key=lambda r: r["layer"])
            if at:
                ax.plot([r["layer"] for r in at], [r[quantity] for r in at], color=color,
                        alpha=0.3 + 0.7 * k / max(1, len(steps) - 1), linewidth=2, marker="o", markersize=3,
                        label=f"step {step}")
        if log:
            ax.set_yscale("log")
        _style(ax, display_name(run), "block (1 = next to the input)", LABELS[quantity])
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, fontsize=PHONE_FONT["legend"], frameon=False, ncol=len(steps),
               loc="outside lower center")
    return fig
