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

import math
from functools import reduce
from typing import Callable

import jax
import jax.numpy as jnp
import numpy as np
import optax

from lnworked.stress.compile import CPU_SETUP_OPTIONS, compile_program
from lnworked.stress.config import StressConfig, default_runs
from lnworked.stress.data import make_batches
from lnworked.stress.model import Block, embed_tokens
from lnworked.stress.optim import apply_rate, learning_rates, make_optimizer
from lnworked.stress.stacked import make_logits
from lnworked.stress.step import make_loss
from lnworked.stress.table_csv import read_rows, write_rows
from lnworked.stress.train import initial_state, make_chunk_fn
from lnworked.validation import check_int

__all__ = ["SNAPSHOTS", "QUANTITIES", "make_profile_fn", "trained_snapshots", "trained_profiles", "write_profiles_csv",
           "read_profiles_csv", "step_responses", "make_step_response_fn", "write_step_response_csv",
           "read_step_response_csv"]

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


def trained_snapshots(config: StressConfig, seeds, pre, rates, sources, targets, snapshots, device):
    """Train one run per seed of ``seeds`` (placement ``pre[r]``, rates ``rates[r]`` of shape
    ``(runs, steps)``) and yield ``(step, params, opt_state, alive)``, stacked over runs, at each of
    the sorted ``snapshots`` steps (0 = the initial weights).

    Training is the compiled path (:func:`lnworked.stress.train.make_chunk_fn`), in chunks of
    ``gcd`` of the snapshot steps; iterate inside ``jax.default_device(device)``."""
    rates = np.asarray(rates, np.float32)
    chunk = reduce(math.gcd, [s for s in snapshots if s > 0], 0) or 1
    (params, opt_state), _ = initial_state(config, list(seeds), device)
    alive = np.ones(len(rates), bool)
    step, compiled = 0, None
    while True:
        if step in snapshots:
            yield step, params, opt_state, alive
        if step >= snapshots[-1]:
            return
        window = slice(step, step + chunk)
        args = (params, opt_state, alive, pre, sources[window], targets[window], rates[:, window],
                np.ones(chunk, bool))
        if compiled is None:
            compiled, _ = compile_program(make_chunk_fn(config, True), args, device)
        (params, opt_state, alive), _ = compiled(*args)
        params, opt_state, alive = jax.tree.map(np.asarray, (params, opt_state, alive))
        step += chunk


def _run_rates(config: StressConfig, runs) -> np.ndarray:
    """The rates of ``runs`` (:class:`~lnworked.stress.config.RunSpec`): each full run's schedule."""
    return np.stack([learning_rates(config.learning_rate, config.steps, r.warmup_steps) for r in runs])


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
    pre = np.array([r.pre_norm for r in runs])
    rows, interrupted = [], False
    with jax.default_device(device):
        profile = None
        try:
            for step, params, _, alive in trained_snapshots(config, [config.seed] * len(runs), pre,
                                                            _run_rates(config, runs), sources, targets, snapshots,
                                                            device):
                if profile is None:
                    prof_args = (params, sources[0], targets[0], pre)
                    profile, _ = compile_program(jax.vmap(make_profile_fn(config), in_axes=(0, None, None, 0)),
                                                 prof_args, device, CPU_SETUP_OPTIONS)
                values = jax.tree.map(np.asarray, profile(params, sources[0], targets[0], pre))
                for r, run in enumerate(runs):
                    for l in range(config.layers):
                        rows.append({"run": run.name, "pre_norm": run.pre_norm, "warmup": run.warmup_steps,
                                     "step": step, "layer": l + 1, "alive": bool(alive[r]),
                                     "loss": float(values["loss"][r]),
                                     **{q: float(values[q][r, l]) for q in QUANTITIES}})
                if progress is not None:
                    progress(step)
        except KeyboardInterrupt:
            interrupted = True
    return rows, interrupted


FIELDS = ("run", "pre_norm", "warmup", "step", "layer", "alive", "loss") + QUANTITIES


def write_profiles_csv(rows, path) -> None:
    """:func:`trained_profiles`' rows as CSV (:func:`~lnworked.stress.table_csv.write_rows`: floats to 8
    significant digits, ``pre_norm`` and ``alive`` as 1/0)."""
    write_rows(rows, path, FIELDS, floats=("loss",) + QUANTITIES, bools=("pre_norm", "alive"), digits=8)


def read_profiles_csv(path) -> list[dict]:
    """The rows :func:`write_profiles_csv` wrote, types restored."""
    return read_rows(path, FIELDS, ints=("warmup", "step", "layer"), floats=("loss",) + QUANTITIES,
                     bools=("pre_norm", "alive"))


LABELS = {"stream_rms": "RMS of the stream entering the block", "attn_write_ratio": "attention write / stream",
          "mlp_write_ratio": "MLP write / stream", "w2_gradient_norm": "||dloss/dW2|| of the block",
          "block_gradient_norm": "||dloss/dtheta|| of the block"}


def profiles_figure(rows, quantity: str, log: bool = True):
    """One panel per run (stacked): ``quantity`` against the block, one line per snapshot step
    (darker = later). The panels share one y-axis (from 0 on a linear scale), so a run whose
    values barely move shows a flat line, not magnified noise; one y-label for all of them, the
    x-label under the last panel, text at the why-warmup chapter's phone sizes. Each panel has its
    run's hue; the legend keys the steps by shade in the text colour."""
    from matplotlib.lines import Line2D
    from matplotlib.ticker import MaxNLocator

    from lnworked.stress.report import display_name
    from lnworked.stress.warmup_figures import FONT_390, WIDTH
    from lnworked.style import PALETTE, new_figure

    if quantity not in QUANTITIES:
        raise ValueError(f"quantity: must be one of {QUANTITIES}, got {quantity!r}")
    runs = list(dict.fromkeys(r["run"] for r in rows))
    steps = sorted({r["step"] for r in rows})
    fig, axes = new_figure(WIDTH, 2.6 * len(runs) + 1.1, nrows=len(runs))
    axes = np.atleast_1d(axes)
    for ax, run in zip(axes, runs):
        if ax is not axes[0]:
            ax.sharey(axes[0])
        mine = [r for r in rows if r["run"] == run]
        color = PALETTE["pre"] if mine[0]["pre_norm"] else PALETTE["post"]
        for k, step in enumerate(steps):
            at = sorted((r for r in mine if r["step"] == step), key=lambda r: r["layer"])
            if at:
                ax.plot([r["layer"] for r in at], [r[quantity] for r in at], color=color,
                        alpha=0.3 + 0.7 * k / max(1, len(steps) - 1), linewidth=2, marker="o", markersize=4,
                        label=f"step {step}")
        ax.set_title(display_name(run), fontsize=FONT_390["title"])
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.tick_params(which="both", labelsize=FONT_390["tick"])
    if log:
        axes[0].set_yscale("log")
    else:
        axes[0].set_ylim(bottom=0)
    axes[-1].set_xlabel("block (1 = next to the input)", fontsize=FONT_390["label"])
    fig.supylabel(LABELS[quantity], fontsize=FONT_390["label"])
    # the legend keys the steps by shade alone, in the text colour: each panel has its run's hue
    handles = [Line2D([], [], color=PALETTE["text"], alpha=line.get_alpha(), linewidth=2, marker="o", markersize=4)
               for line in axes[0].get_lines()]
    labels = [line.get_label() for line in axes[0].get_lines()]
    fig.legend(handles, labels, fontsize=FONT_390["legend"], frameon=False, ncols=2,
               loc="outside lower center")
    return fig


# --- Step response: what one full-rate step from a run's weights does --------------------------

RESPONSE_FIELDS = ("run", "pre_norm", "warmup", "step", "alive", "learning_rate", "loss", "loss_after",
                   "delta_loss", "linear_delta_loss", "delivered", "rms_logits", "rms_delta_logits", "relative")
RESPONSE_SNAPSHOTS = (0, 10, 30, 60, 120, 180)


def make_step_response_fn(config: StressConfig):
    """``respond(params, opt_state, source, target, pre_norm, rates)`` for one run, not yet jitted.

    From the run's weights ``theta_s`` and its own optimiser state (Adam's moments and step
    count after ``s`` steps), the gradient ``g`` of the loss on ``(source, target)`` gives the
    update the optimiser would take next, ``u = make_optimizer(config).update(g, state, theta_s)``
    (at ``s = 0`` the first update, about ``-sign(g)``). For each rate ``eta`` in ``rates``:

        delta_loss        = CE(theta_s + eta u) - CE(theta_s)
        linear_delta_loss = eta <g, u>                (the first-order promise)
        rms_delta_logits  = RMS(z(theta_s + eta u) - z(theta_s))

    Returns ``(rms_logits, loss, rms_delta_logits[r], loss_after[r], linear_delta_loss[r])``.
    """
    logits = make_logits(config, unroll=1)
    loss_fn = make_loss(logits)
    optimizer = make_optimizer(config)

    def respond(params, opt_state, source, target, pre_norm, rates):
        z0 = logits(params, source, pre_norm)
        loss, grads = jax.value_and_grad(loss_fn)(params, source, target, pre_norm)
        update, _ = optimizer.update(grads, opt_state, params)

        def after(rate):
            z1 = logits(apply_rate(params, update, rate), source, pre_norm)
            return _rms(z1 - z0), jnp.mean(optax.softmax_cross_entropy_with_integer_labels(z1, target))

        moved, loss_after = jax.vmap(after)(rates)
        slope = sum(jnp.vdot(g, u) for g, u in zip(jax.tree.leaves(grads), jax.tree.leaves(update)))
        return _rms(z0), loss, moved, loss_after, slope * rates

    return respond


def step_responses(config: StressConfig | None = None, snapshots=RESPONSE_SNAPSHOTS, rates=None,
                   device=None, progress: Callable[[int], None] | None = None):
    """``(rows, interrupted)``: for the article's three runs at each snapshot step ``s``, one
    step of the run's own optimiser (its Adam moments at ``s``, see
    :func:`make_step_response_fn`) at each rate (default: the full target rate only), on the
    configuration's first batch. Rows ``{run, pre_norm, warmup, step, alive, learning_rate,
    loss, loss_after, delta_loss, linear_delta_loss, delivered, rms_logits, rms_delta_logits,
    relative}`` with ``delivered = delta_loss / linear_delta_loss`` (the fraction of the
    promised drop the step delivers) and ``relative = rms_delta_logits / rms_logits``.
    The runs are trained as in :func:`trained_profiles`. Ctrl-C keeps the snapshots done."""
    from lnworked.stress.first_update import check_rates

    config = StressConfig() if config is None else config
    snapshots = sorted({check_int(s, "snapshots", minimum=0, maximum=config.steps) for s in snapshots})
    if not snapshots:
        raise ValueError("snapshots: need at least one step")
    rates = [config.learning_rate] if rates is None else check_rates(rates)
    runs = default_runs(config)
    device = jax.devices("cpu")[0] if device is None else device
    sources, targets = make_batches(config)
    pre = np.array([r.pre_norm for r in runs])
    eta = np.asarray(rates, np.float32)
    rows, interrupted = [], False
    with jax.default_device(device):
        respond = None
        try:
            for step, params, opt_state, alive in trained_snapshots(config, [config.seed] * len(runs), pre,
                                                                    _run_rates(config, runs), sources, targets,
                                                                    snapshots, device):
                args = (params, opt_state, sources[0], targets[0], pre, eta)
                if respond is None:
                    respond, _ = compile_program(
                        jax.vmap(make_step_response_fn(config), in_axes=(0, 0, None, None, 0, None)),
                        args, device, CPU_SETUP_OPTIONS)
                rms0, loss, moved, after, linear = (np.asarray(a, np.float64) for a in respond(*args))
                for r, run in enumerate(runs):
                    for k, rate in enumerate(rates):
                        delta = after[r, k] - loss[r]
                        rows.append({"run": run.name, "pre_norm": run.pre_norm, "warmup": run.warmup_steps,
                                     "step": step, "alive": bool(alive[r]), "learning_rate": rate,
                                     "loss": loss[r], "loss_after": after[r, k], "delta_loss": delta,
                                     "linear_delta_loss": linear[r, k], "delivered": delta / linear[r, k],
                                     "rms_logits": rms0[r], "rms_delta_logits": moved[r, k],
                                     "relative": moved[r, k] / rms0[r]})
                if progress is not None:
                    progress(step)
        except KeyboardInterrupt:
            interrupted = True
    return rows, interrupted


_RESPONSE_FLOATS = RESPONSE_FIELDS[5:]


def write_step_response_csv(rows, path) -> None:
    """:func:`step_responses`' rows as CSV (:func:`~lnworked.stress.table_csv.write_rows`: floats to 8
    significant digits, ``pre_norm`` and ``alive`` as 1/0)."""
    write_rows(rows, path, RESPONSE_FIELDS, floats=_RESPONSE_FLOATS, bools=("pre_norm", "alive"), digits=8)


def read_step_response_csv(path) -> list[dict]:
    """The rows :func:`write_step_response_csv` wrote, types restored."""
    return read_rows(path, RESPONSE_FIELDS, ints=("warmup", "step"), floats=_RESPONSE_FLOATS,
                     bools=("pre_norm", "alive"))
