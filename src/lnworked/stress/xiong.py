"""Xiong et al. (2020), "On Layer Normalization in the Transformer Architecture", on this model.

Their Theorem 1 is about one matrix: ``W^{2,L}``, the second (output) matrix of the last
block's feed-forward sub-layer. At initialisation (mean-field assumptions), the gradient's
Frobenius norm is ``O(d sqrt(ln d))`` for Post-LN, independent of the depth ``L``, and
``O(d sqrt(ln d / L))`` for Pre-LN; their Fig. 3 plots ``||dL/dW^2_l||_F`` for every layer
``l`` of a 6-layer model at initialisation. Here the same quantity is measured by
autodiff through the stacked model (:mod:`lnworked.stress.stacked`):

    g_l = || d loss / d W2_l ||_F,   W2_l = blocks.mlp_out.kernel[l]  (shape m d x d, m = mlp_ratio),

on the configuration's first training batch, at the initial weights of ``PRNGKey(seed)``, and,
as their Fig. 3 measures it (Sec. 3.4), the norm of the *expected* gradient, the mean of
``d loss_b / d W2_l`` over the first ``B`` mini-batches ``b`` taken before the norm
(:func:`w2_batch_table`). It is *not* the whole-block norm of :mod:`lnworked.stress.probe` (every parameter of a
block together); the two are different quantities.

Theorem 1's depth dependence is read off as the slope of ``log g_L`` against ``log L``
(:func:`loglog_slope`): Pre-LN's bound predicts ``-1/2``, Post-LN's ``0``.

:func:`xiong_theory` is their theory's setting (Sec. 3.3: one head, ``d x d`` matrices, zero
``W^Q``, ``W^K``, ReLU, Xavier, tied readout); :func:`theory_path` moves from it to the
article's configuration one difference at a time, and is what ``lnworked stress xiong`` measures.

An earlier, "Xiong-like" setting (kept for the output-layer swaps): an encoder (no causal mask),
Xavier-uniform initialisation, token embeddings ``N(0, 1/d)`` multiplied by ``sqrt(d)``,
sinusoidal positions and an output layer tied to the embedding. :func:`xiong_like`
makes the closest configuration this model has (an untied output layer drawn like their
embedding; the width stays the article's); :data:`TOWARD_ARTICLE` moves from it to the
article's configuration one difference at a time.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np

from lnworked.stress.compile import CPU_SETUP_OPTIONS, compile_program
from lnworked.stress.config import StressConfig
from lnworked.stress.data import make_batches
from lnworked.stress.stacked import make_logits, stacked_init
from lnworked.stress.step import make_loss
from lnworked.stress.table_csv import read_rows, write_rows
from lnworked.validation import check_int

__all__ = ["xiong_like", "xiong_theory", "THEORY_TO_ARTICLE", "theory_path", "theory_swaps", "w2_batch_table", "TOWARD_ARTICLE", "article_path", "readout_swaps", "w2_gradient_norms", "w2_table", "loglog_slope",
           "summarise", "sweep_path", "write_xiong_csv", "read_xiong_csv", "DEPTHS", "SEEDS"]

DEPTHS = (3, 6, 12, 24)
SEEDS = (7, 8, 9)

# One difference at a time, from Xiong et al.'s setting to the article's (cumulative): the
# fields that each step sets to the article's (the base configuration's) values.
TOWARD_ARTICLE = (
    ("causal mask (a decoder)", ("causal",)),
    ("embedding N(0, 1), not scaled", ("embedding_std", "embedding_scale")),
    ("learned positions from zeros", ("positions",)),
    ("LeCun-normal blocks (Flax default)", ("init",)),
    ("output layer N(0, 0.02²)", ("readout_std",)),
)


def xiong_like(base: StressConfig | None = None) -> StressConfig:
    """The closest configuration to Xiong et al.'s: no causal mask, Xavier-uniform blocks,
    embedding ``N(0, 1/D)`` times ``sqrt(D)``, sinusoidal positions, output layer ``N(0, 1/D)``
    (their output layer is the embedding itself); the rest (width, data) as ``base``."""
    base = StressConfig() if base is None else base
    return base.replace(causal=False, init="xavier", embedding_std=base.width ** -0.5, embedding_scale=True,
                        positions="sinusoidal", readout_std=base.width ** -0.5)


def article_path(base: StressConfig | None = None) -> list[tuple[str, StressConfig]]:
    """``[(label, config)]``: :func:`xiong_like`, then each change of :data:`TOWARD_ARTICLE` added
    in turn; the last is ``base`` itself (the article's model by default)."""
    base = StressConfig() if base is None else base
    config = xiong_like(base)
    path = [("Xiong-like", config)]
    for label, fields in TOWARD_ARTICLE:
        config = config.replace(**{k: getattr(base, k) for k in fields})
        path.append((label, config))
    return path


# Xiong et al.'s theory (Sec. 3.3) to the article's configuration, one difference at a time
# (cumulative): the fields that each step sets to the article's (the base configuration's) values.
THEORY_TO_ARTICLE = (
    ("query and key weights random (Xavier), not zero", ("zero_qk",)),
    ("GELU, not ReLU", ("activation",)),
    ("MLP 4d wide, not d", ("mlp_ratio",)),
    ("4 heads, not 1", ("heads",)),
    ("causal mask (a decoder)", ("causal",)),
    ("LeCun-normal blocks (Flax default)", ("init",)),
    ("separate output layer N(0, 1/d)", ("tied_readout", "embedding_std", "embedding_scale")),
    ("output layer N(0, 0.02²)", ("readout_std",)),
)


def xiong_theory(base: StressConfig | None = None) -> StressConfig:
    """Xiong et al.'s theory setting (Sec. 3.3) on this model: one head, ``W^Q = W^K = 0`` at
    initialisation (uniform attention), a ReLU MLP with ``W^1``, ``W^2`` of shape ``d x d``,
    Xavier blocks, zero biases, no causal mask, Gaussian inputs (embedding ``N(0, 1/d)`` times
    ``sqrt(d)``, positions zero), the output read out with the embedding itself (tied) and a
    final norm for Pre-LN only. Two differences remain: the blocks are Xavier-*uniform* (their
    Gaussian has the same variance), and ``W^V`` is a third of a fused ``d x 3d`` kernel, so its
    Xavier variance is ``1/(2d)``, not the ``1/d`` of a ``d x d`` matrix. ``readout_std`` is
    ``1/sqrt(d)``, unused while tied (the first step of :data:`THEORY_TO_ARTICLE` that unties
    draws the output layer like the tied one)."""
    base = StressConfig() if base is None else base
    return base.replace(heads=1, zero_qk=True, activation="relu", mlp_ratio=1, causal=False, init="xavier",
                        embedding_std=base.width ** -0.5, embedding_scale=True, positions="zeros",
                        tied_readout=True, readout_std=base.width ** -0.5)


def theory_path(base: StressConfig | None = None) -> list[tuple[str, StressConfig]]:
    """``[(label, config)]``: :func:`xiong_theory`, then each change of :data:`THEORY_TO_ARTICLE`
    added in turn; the last is ``base`` itself (the article's model by default)."""
    base = StressConfig() if base is None else base
    config = xiong_theory(base)
    path = [("Xiong et al.'s theory setting", config)]
    for label, fields in THEORY_TO_ARTICLE:
        config = config.replace(**{k: getattr(base, k) for k in fields})
        path.append((label, config))
    return path


def readout_swaps(base: StressConfig | None = None) -> list[tuple[str, StressConfig]]:
    """The output layer's scale varied alone, both ways: the Xiong-like configuration with the
    article's output layer, and the article's configuration with the Xiong-like one."""
    base = StressConfig() if base is None else base
    xiong = xiong_like(base)
    return [("Xiong-like, article's output layer", xiong.replace(readout_std=base.readout_std)),
            ("article's, Xiong-like output layer", base.replace(readout_std=xiong.readout_std))]


def theory_swaps(fields, base: StressConfig | None = None) -> list[tuple[str, StressConfig]]:
    """The fields ``fields`` varied alone, both ways: :func:`xiong_theory` with the article's
    (``base``'s) values of them, and ``base`` with the theory setting's."""
    base = StressConfig() if base is None else base
    theory = xiong_theory(base)
    unknown = [f for f in fields if f not in base.as_dict()]
    if not fields or unknown:
        raise ValueError(f"fields: must be non-empty names of StressConfig fields, got {list(fields)!r}")
    names = ", ".join(fields)
    return [(f"theory setting, article's {names}", theory.replace(**{f: getattr(base, f) for f in fields})),
            (f"article's, theory setting's {names}", base.replace(**{f: getattr(theory, f) for f in fields}))]


def _frobenius(kernel):
    """``||K_l||_F`` for each layer ``l`` of a stacked ``(layers, m, n)`` kernel."""
    return jnp.sqrt(jnp.sum(jnp.square(kernel), axis=(1, 2)))


def w2_batch_table(config: StressConfig, depths, placements, seeds, batches: int = 8) -> np.ndarray:
    """Per case ``k`` (the ``depths[k]``-block model, placement ``placements[k]``, initial
    weights of ``PRNGKey(seeds[k])``) and block ``l``, three norms of ``G_b = d loss_b / d W2_l``
    over the first ``batches`` batches ``b`` of the configuration's data stream:

        single    ||G_1||_F                          (the first batch alone),
        expected  || (1/B) sum_b G_b ||_F             (Xiong et al.'s Fig. 3 quantity),
        mean      (1/B) sum_b ||G_b||_F               (>= expected, by the triangle inequality).

    Xiong et al. (2020), Sec. 3.4: "We record the gradient for each parameter for different
    mini-batches. For elements in a parameter matrix, we calculate their expected gradients
    and use the Frobenius norm of those values": the mean over mini-batches comes first, the
    norm second. Shape ``(cases, 3, config.layers)``, zero past each depth. One program (mapped
    over the cases, blocks past a case's depth skipped) on the ``config.layers``-block tree,
    whose first ``d`` blocks are the ``d``-block model (parameter keys follow their paths)."""
    depths = [check_int(d, "depths", minimum=1, maximum=config.layers) for d in depths]
    seeds = [check_int(s, "seeds", minimum=0) for s in seeds]
    batches = check_int(batches, "batches", minimum=1)
    if not (len(depths) == len(placements) == len(seeds)) or not depths:
        raise ValueError("depths, placements, seeds: must be non-empty and of one length")
    sources, targets = make_batches(config.replace(steps=batches))
    grad = jax.grad(make_loss(make_logits(config, unroll=1, skip=True)))

    def norms(seed, pre_norm, depth):
        params = stacked_init(config, jax.random.PRNGKey(seed))

        def add(total, batch):
            kernel = grad(params, batch[0], batch[1], pre_norm, depth)["blocks"]["mlp_out"]["kernel"]
            norm = _frobenius(kernel)
            return (total[0] + kernel, total[1] + norm), norm

        zero = params["blocks"]["mlp_out"]["kernel"] * 0
        (total, norm_sum), per_batch = jax.lax.scan(add, (zero, zero[:, 0, 0]), (sources, targets))
        return jnp.stack([per_batch[0], _frobenius(total / batches), norm_sum / batches])

    args = (np.asarray(seeds, np.int32), np.asarray(placements, bool), np.asarray(depths, np.int32))
    # lax.map: one case at a time (a vmap over all cases holds every case's activations at once)
    program, _ = compile_program(lambda *a: jax.lax.map(lambda c: norms(*c), a), args, cpu_options=CPU_SETUP_OPTIONS)
    return np.asarray(program(*args), np.float64)


def w2_table(config: StressConfig, depths, placements, seeds) -> np.ndarray:
    """``g_l = ||d loss / d W2_l||_F`` on the first batch for each case (see :func:`w2_batch_table`):
    shape ``(cases, config.layers)``, zero past each depth."""
    return w2_batch_table(config, depths, placements, seeds, batches=1)[:, 0]


def w2_gradient_norms(config: StressConfig, pre_norm: bool, seeds=(7,)) -> np.ndarray:
    """``g_l = ||d loss / d W2_l||_F`` for ``l = 1..config.layers`` at initialisation, one row per seed."""
    seeds = list(seeds)
    return w2_table(config, [config.layers] * len(seeds), [bool(pre_norm)] * len(seeds), seeds)


def loglog_slope(depths, values) -> float:
    """Least-squares slope of ``log value`` against ``log depth`` (``value ~ depth^slope``)."""
    depths, values = np.asarray(depths, float), np.asarray(values, float)
    if depths.shape != values.shape or depths.size < 2:
        raise ValueError("depths, values: need two or more points of one shape")
    if np.any(depths <= 0) or np.any(values <= 0) or not np.all(np.isfinite(values)):
        raise ValueError("depths, values: must be finite and > 0")
    return float(np.polyfit(np.log(depths), np.log(values), 1)[0])


def sweep_path(depths=DEPTHS, seeds=SEEDS, base: StressConfig | None = None, path=None, into: list | None = None,
               progress=None, batches: int = 8) -> list[dict]:
    """Tidy rows ``{config, step, pre_norm, layers, seed, layer, w2_gradient_norm,
    expected_w2_gradient_norm}`` (the first batch's norm and the expected gradient's over
    ``batches`` batches, :func:`w2_batch_table`) for every configuration of ``path`` (default
    :func:`theory_path`; ``step`` its index), placement, depth and seed. ``into``: a list the
    rows are appended to as each configuration finishes (kept on Ctrl-C); ``progress(label)`` after each."""
    base = StressConfig() if base is None else base
    depths = [check_int(d, "depths", minimum=1) for d in depths]
    seeds = [check_int(s, "seeds", minimum=0) for s in seeds]
    path = theory_path(base) if path is None else path
    cases = [(d, p, s) for d in depths for p in (True, False) for s in seeds]
    rows = [] if into is None else into
    for index, (label, config) in enumerate(path):
        # one program per configuration: blocks past a case's depth are skipped, not computed
        table = w2_batch_table(config.replace(layers=max(depths)), *zip(*cases), batches=batches)
        rows += [{"config": label, "step": index, "pre_norm": pre_norm, "layers": depth, "seed": seed,
                  "layer": i + 1, "w2_gradient_norm": float(norms[0, i]),
                  "expected_w2_gradient_norm": float(norms[1, i])}
                 for (depth, pre_norm, seed), norms in zip(cases, table) for i in range(depth)]
        if progress is not None:
            progress(label)
    return rows


def summarise(rows, profile_depth: int = 6) -> list[dict]:
    """Per configuration and placement: Theorem 1's slope (``log`` of the seeds' geometric mean of
    ``g_L`` against ``log L``, and each seed's own slope) and Fig. 3's shape at ``profile_depth``
    blocks (``g_L / g_1``, the seeds' geometric mean), from the first batch's gradient
    (``slope``, ``seed_slopes``, ``last_over_first``) and, where the rows have it, from the
    expected gradient (the same keys with ``expected_`` in front)."""
    out = []
    keys = dict.fromkeys((r["step"], r["config"], r["pre_norm"]) for r in rows)
    for step, label, pre_norm in keys:
        mine = [r for r in rows if r["step"] == step and r["pre_norm"] == pre_norm]
        depths = sorted({r["layers"] for r in mine})
        seeds = sorted({r["seed"] for r in mine})
        entry = {"step": step, "config": label, "pre_norm": pre_norm}
        for prefix, column in (("", "w2_gradient_norm"), ("expected_", "expected_w2_gradient_norm")):
            if any(not math.isfinite(r.get(column, math.nan)) for r in mine):
                continue
            last = np.array([[next(r[column] for r in mine if r["layers"] == d and r["seed"] == s
                                   and r["layer"] == d) for d in depths] for s in seeds])
            profile = np.array([[r[column] for r in sorted(mine, key=lambda r: r["layer"])
                                 if r["layers"] == profile_depth and r["seed"] == s] for s in seeds])
            ratio = float(np.exp(np.mean(np.log(profile[:, -1] / profile[:, 0])))) if profile.size else math.nan
            entry.update({prefix + "slope": loglog_slope(depths, np.exp(np.mean(np.log(last), axis=0))),
                          prefix + "seed_slopes": [loglog_slope(depths, row) for row in last],
                          prefix + "last_over_first": ratio})
        out.append(entry)
    return out


FIELDS = ("config", "step", "pre_norm", "layers", "seed", "layer", "w2_gradient_norm", "expected_w2_gradient_norm")


_NORMS = ("w2_gradient_norm", "expected_w2_gradient_norm")


def write_xiong_csv(rows, path) -> None:
    """:func:`sweep_path`' rows as CSV (:func:`~lnworked.stress.table_csv.write_rows`: norms to 8 significant
    digits, ``pre_norm`` as 1/0); a column the first row lacks (``expected_w2_gradient_norm``) is left out."""
    fields = tuple(f for f in FIELDS if not rows or f in rows[0])
    write_rows(({k: row[k] for k in fields} for row in rows), path, fields,
               floats=[k for k in _NORMS if k in fields], bools=("pre_norm",), digits=8)


def read_xiong_csv(path) -> list[dict]:
    """The rows :func:`write_xiong_csv` wrote, types restored; files written before the expected
    gradient was measured lack ``expected_w2_gradient_norm``, which then reads as nan."""
    return read_rows(path, FIELDS, ints=("step", "layers", "seed", "layer"), floats=_NORMS, bools=("pre_norm",),
                     defaults={"expected_w2_gradient_norm": math.nan})


def _geometric_mean(values) -> float:
    return float(np.exp(np.mean(np.log(np.asarray(values, float)))))


def _figure_label(rows, step) -> str:
    """A configuration's name in a legend: the last of the path is "article's configuration"."""
    if step > 0 and step == max(r["step"] for r in rows):
        return "article's configuration"
    return next(r["config"] for r in rows if r["step"] == step)


#: Short names of the sweep's two ends in :func:`theorem1_figure`'s legend (a phone's column is narrow).
_SHORT_LABELS = {"article's configuration": "article's model"}


def _figure_steps(rows, steps):
    """``(step, line style, short label)`` for the configurations ``steps`` (default: the
    sweep's first and last), as :func:`theorem1_figure` and :func:`fig3_figure` draw them."""
    all_steps = sorted({r["step"] for r in rows})
    steps = [all_steps[0], all_steps[-1]] if steps is None else steps
    for step, style in zip(steps, ("-", "--", ":", "-.")):
        label = _figure_label(rows, step)
        yield step, style, _SHORT_LABELS.get(label, label.replace("Xiong et al.'s ", ""))


def _finish_phone_figure(fig, ax, title: str, xlabel: str, ylabel: str):
    """Titles and ticks at :data:`lnworked.stress.warmup_figures.FONT_390`, the legend below the axes."""
    from lnworked.stress.warmup_figures import FONT_390

    ax.set_title(title, fontsize=FONT_390["title"])
    ax.set_xlabel(xlabel, fontsize=FONT_390["label"])
    ax.set_ylabel(ylabel, fontsize=FONT_390["label"])
    ax.tick_params(which="both", labelsize=FONT_390["tick"])
    fig.legend(*ax.get_legend_handles_labels(), loc="outside lower center", ncols=1, fontsize=FONT_390["legend"],
               frameon=False, handlelength=1.8)
    return fig


def theorem1_figure(rows, steps=None, column: str = "w2_gradient_norm"):
    """Theorem 1 against depth: ``g_L`` (the last block's W2 gradient; the seeds' geometric mean,
    each seed a dot) against ``L`` on log-log axes, per placement, for the configurations
    ``steps`` (indices into the sweep; default the first and the last). ``column``: the first
    batch's norm or ``"expected_w2_gradient_norm"``. Drawn for a phone: 4.4 inches wide, text at
    :data:`lnworked.stress.warmup_figures.FONT_390`, the legend below the axes."""
    import matplotlib.pyplot as plt

    from lnworked.stress.warmup_figures import WIDTH
    from lnworked.style import PALETTE, new_figure

    fig, ax = new_figure(WIDTH, 6.6)
    for step, style, label in _figure_steps(rows, steps):
        for pre_norm, color in ((True, PALETTE["pre"]), (False, PALETTE["post"])):
            last = [r for r in rows if r["step"] == step and r["pre_norm"] == pre_norm and r["layer"] == r["layers"]]
            depths = sorted({r["layers"] for r in last})
            ax.scatter([r["layers"] for r in last], [r[column] for r in last], color=color, s=14, alpha=0.5)
            means = [_geometric_mean([r[column] for r in last if r["layers"] == d]) for d in depths]
            slope = loglog_slope(depths, means)
            ax.plot(depths, means, style, color=color, linewidth=2, marker="o",
                    label=f"{'Pre-LN' if pre_norm else 'Post-LN'}, {label}: slope {slope:.2f}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    depths = sorted({r["layers"] for r in rows})
    ax.set_xticks(depths, [str(d) for d in depths])
    ax.xaxis.set_minor_locator(plt.NullLocator())
    expected = column.startswith("expected")
    return _finish_phone_figure(
        fig, ax, f"Last block's W2 {'expected ' if expected else ''}gradient\nat initialisation", "blocks L",
        "‖batch mean of ∂loss/∂W2‖" if expected else "‖∂loss/∂W2 of block L‖")


def fig3_figure(rows, depth: int = 6, steps=None, column: str = "w2_gradient_norm"):
    """Xiong et al.'s Fig. 3 on this model: ``g_l`` for every block ``l`` of the ``depth``-block
    model at initialisation (the seeds' geometric mean), per placement and configuration.
    ``column``: the first batch's norm or ``"expected_w2_gradient_norm"`` (their quantity).
    Drawn for a phone as :func:`theorem1_figure` is: 4.4 inches wide, text at
    :data:`lnworked.stress.warmup_figures.FONT_390`, the legend below the axes."""
    from matplotlib.ticker import FuncFormatter, LogLocator

    from lnworked.stress.warmup_figures import WIDTH
    from lnworked.style import PALETTE, new_figure

    fig, ax = new_figure(WIDTH, 6.6)
    for step, style, label in _figure_steps(rows, steps):
        for pre_norm, color in ((True, PALETTE["pre"]), (False, PALETTE["post"])):
            mine = [r for r in rows if r["step"] == step and r["pre_norm"] == pre_norm and r["layers"] == depth]
            layers = sorted({r["layer"] for r in mine})
            means = [_geometric_mean([r[column] for r in mine if r["layer"] == l]) for l in layers]
            ax.plot(layers, means, style, color=color, linewidth=2, marker="o",
                    label=f"{'Pre-LN' if pre_norm else 'Post-LN'}, {label}")
    ax.set_yscale("log")
    plain = FuncFormatter(lambda value, _: f"{value:g}")  # 0.06, not 6 x 10^-2: short on a phone
    ax.yaxis.set_major_formatter(plain)
    ax.yaxis.set_minor_formatter(plain)
    ax.yaxis.set_minor_locator(LogLocator(base=10, subs=(2, 4, 6)))
    expected = column.startswith("expected")
    return _finish_phone_figure(
        fig, ax, f"W2 {'expected ' if expected else ''}gradient\nper block ({depth} blocks, at init.)",
        "block (1 = input side)", "‖batch mean of ∂loss/∂W2‖" if expected else "‖∂loss/∂W2 of the block‖")
