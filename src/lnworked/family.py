"""The wider family of norm placements, and a random deep stack that shows what each does.

Every block maps the residual stream ``x`` (last axis = features) to the next one; ``N`` is
a norm from :data:`lnworked.norms.NORMS` (``"layer"`` or ``"rms"``) and ``F`` a sublayer
with ``__call__`` and ``jacobian`` (:class:`lnworked.blocks.MLP`)::

    Post-LN      x -> N(x + F(x))                       Vaswani et al. 2017   (blocks.post_ln)
    Pre-LN       x -> x + F(N(x))                       Xiong et al. 2020     (blocks.pre_ln)
    DeepNorm     x -> N(alpha x + F_beta(x))            Wang et al. 2022
    Sandwich     x -> x + N_out(F(N_in(x)))             Ding et al. 2021 (CogView "Sandwich-LN");
                                                        Kim et al. 2025 ("Peri-LN")
    NormFormer   x -> x + W2 N_mid(gelu(W1 N(x) + b1)) + b2   (FFN branch)
                 x -> x + N_out(F(N(x)))                      (attention-like branch)
                                                        Shleifer, Weston and Ott 2021
    RMSNorm      Pre-LN with N = RMSNorm                Zhang and Sennrich 2019
    Final norm   y = N_final(x_L) after a Pre-LN stack  (GPT-2, Radford et al. 2019, and most
                                                        Pre-LN language models)

Block Jacobians (``J_N`` evaluated at the norm's input, ``J_F`` at the sublayer's input)::

    DeepNorm     J = J_N(alpha x + F(x)) (alpha I + J_F(x))
    Sandwich     J = I + J_Nout(F(N_in x)) J_F(N_in x) J_Nin(x)
    NormFormer   J = I + W2 J_Nmid(a) diag(gelu'(z)) W1 J_N(x),  z = W1 N(x) + b1,  a = gelu(z)
    Final norm   J = J_Nfinal(x_L)

DeepNorm constants (Wang et al. 2022, Fig. 2 / Table 1; the same numbers are in the
authors' ``torchscale`` code): for an N-layer encoder-only (or M-layer decoder-only) model,
``alpha = (2N)^(1/4)`` and the sublayer weights (FFN ``fc1``/``fc2``, attention ``v_proj`` and
``out_proj``) are initialised Xavier-normal and then multiplied by ``beta = (8N)^(-1/4)``.
The encoder-only, decoder-only and encoder-decoder *decoder* entries of the paper's table have
the form ``alpha = S^(1/4)``, ``beta = (4S)^(-1/4)`` with ``S`` the number of residual
sublayers (``2N``, or ``3M`` for that decoder); the encoder of an encoder-decoder model has
other constants (``alpha = 0.81 (N^4 M)^(1/16)``), which this module does not model.
:func:`deepnorm_constants` takes ``sublayers_per_layer`` for the ``S^(1/4)`` cases. Our toy stack has **one** MLP sublayer per layer, so
it uses ``S = L``: ``alpha = L^(1/4)``, ``beta = (4L)^(-1/4)`` (our reading of the table, not a
number the paper prints for an MLP-only stack).

NormFormer simplification: NormFormer adds to Pre-LN (i) a LayerNorm on the attention
output before the residual addition, (ii) head-wise scaling of the attention output and
(iii) a LayerNorm after the FFN's first activation. The toy stack has no attention, so the
NormFormer variant there is the FFN branch with the mid-FFN norm (iii) only; the
attention-like form ``x + N(F(N(x)))`` (i) is :func:`normformer` with ``branch="attention"``
and coincides with the sandwich block. Head scaling (ii) and NormFormer's optional
residual scaling are omitted.

:func:`stack_profile` builds one seeded random stack per variant (the *same* sublayer
weights for every variant, DeepNorm's scaled by ``beta``), runs it forward and records the
stream's RMS after each layer and the norm of the gradient that a fixed random linear
readout ``w . y_l`` of depth ``l`` sends back to the stack input ``x_0``. The gradient is the
product of the analytic block Jacobians; the tests check it against ``jax.jacfwd`` of the
whole stack. :func:`family_table` summarises the variants at one depth.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field

import numpy as np
from tabulate import tabulate

from lnworked.blocks import MLP, _gelu, _gelu_derivative, _norm, post_ln, post_ln_jacobian, pre_ln, pre_ln_jacobian
from lnworked.norms import DEFAULT_EPS
from lnworked.validation import array_module, as_array, check_depth, check_int, check_positive

__all__ = [
    "deepnorm_constants",
    "deepnorm",
    "deepnorm_jacobian",
    "sandwich",
    "sandwich_jacobian",
    "normformer",
    "normformer_jacobian",
    "final_norm",
    "final_norm_jacobian",
    "Variant",
    "VARIANTS",
    "StackProfile",
    "stack_profile",
    "stack_sublayers",
    "family_table",
    "seed_spread",
    "format_family_table",
    "gradient_depth_table",
    "backward_gains",
    "post_ln_gain_split",
    "write_ratios",
]


# --------------------------------------------------------------------------- blocks


def deepnorm_constants(layers: int, sublayers_per_layer: int = 2) -> tuple[float, float]:
    """DeepNorm's ``(alpha, beta)`` (Wang et al. 2022) for ``layers`` layers.

    With ``S = layers * sublayers_per_layer`` residual sublayers, ``alpha = S^(1/4)`` and
    ``beta = (4 S)^(-1/4)``. The default ``sublayers_per_layer=2`` (attention + FFN) gives the
    paper's encoder-only / decoder-only constants ``alpha = (2N)^(1/4)``, ``beta = (8N)^(-1/4)``;
    ``3`` gives those of the decoder in an encoder-decoder model, ``(3M)^(1/4)`` and
    ``(12M)^(-1/4)``. The toy stack (one MLP per layer) uses ``1``.
    """
    layers = check_depth(layers, "layers")
    sublayers_per_layer = check_depth(sublayers_per_layer, "sublayers_per_layer")
    total = layers * sublayers_per_layer
    return total**0.25, (4 * total) ** -0.25


def deepnorm(x, sublayer, alpha: float, norm: str = "layer", eps: float = DEFAULT_EPS):
    """DeepNorm block ``N(alpha x + F(x))`` (Wang et al. 2022); ``alpha = 1`` is Post-LN.

    The sublayer is expected to carry DeepNorm's down-scaled initialisation (weights
    multiplied by ``beta``, see :func:`deepnorm_constants`); this function only applies
    the up-weighted residual.
    """
    x = as_array(x, "x")
    alpha = check_positive(alpha, "alpha")
    return _norm(norm)[0](alpha * x + sublayer(x), eps=eps)


def deepnorm_jacobian(x, sublayer, alpha: float, norm: str = "layer", eps: float = DEFAULT_EPS):
    """Analytic ``J_N(alpha x + F(x)) (alpha I + J_F(x))``, shape ``(..., d, d)``."""
    x = as_array(x, "x")
    alpha = check_positive(alpha, "alpha")
    jacobian_n = _norm(norm)[1](alpha * x + sublayer(x), eps=eps)
    return jacobian_n @ (alpha * np.eye(x.shape[-1]) + sublayer.jacobian(x))


def sandwich(x, sublayer, norm: str = "layer", eps: float = DEFAULT_EPS):
    """Sandwich / Peri-LN block ``x + N_out(F(N_in(x)))``.

    A norm on both sides of the branch (Ding et al. 2021, CogView's "Sandwich-LN";
    Kim et al. 2025, "Peri-LN"): the identity path is kept and every write into the
    stream has the norm's scale (RMS about 1 with unit gain), whatever the sublayer's
    weights. ``N_in`` and ``N_out`` are separate norms; with the default unit gain and
    zero shift they compute the same function.
    """
    x = as_array(x, "x")
    normalize = _norm(norm)[0]
    return x + normalize(sublayer(normalize(x, eps=eps)), eps=eps)


def sandwich_jacobian(x, sublayer, norm: str = "layer", eps: float = DEFAULT_EPS):
    """Analytic ``I + J_Nout(F(N_in x)) J_F(N_in x) J_Nin(x)``."""
    x = as_array(x, "x")
    normalize, jacobian = _norm(norm)
    u = normalize(x, eps=eps)
    branch = jacobian(sublayer(u), eps=eps) @ sublayer.jacobian(u) @ jacobian(x, eps=eps)
    return np.eye(x.shape[-1]) + branch


_BRANCHES = ("ffn", "attention")


def _check_branch(branch, sublayer):
    if branch not in _BRANCHES:
        raise ValueError(f"branch: must be one of {list(_BRANCHES)}, got {branch!r}")
    if branch == "ffn" and not isinstance(sublayer, MLP):
        raise ValueError(
            f"sublayer: the NormFormer FFN branch needs an MLP (it normalises the hidden "
            f"activation), got {type(sublayer).__name__}; use branch='attention' for x + N(F(N(x)))"
        )


def normformer(x, sublayer, norm: str = "layer", eps: float = DEFAULT_EPS, branch: str = "ffn"):
    """NormFormer block (Shleifer, Weston and Ott 2021): Pre-LN plus an extra norm in the branch.

    ``branch="ffn"`` (the default, for an :class:`~lnworked.blocks.MLP` sublayer)::

        x + W2 N_mid(gelu(W1 N(x) + b1)) + b2        (N_mid over the hidden units)

    ``branch="attention"`` (the post-attention norm, any sublayer)::

        x + N_out(F(N(x)))                           (the same function as :func:`sandwich`)

    Head-wise scaling and residual scaling from the paper are omitted.
    """
    x = as_array(x, "x")
    _check_branch(branch, sublayer)
    normalize = _norm(norm)[0]
    u = normalize(x, eps=eps)
    if branch == "attention":
        return x + normalize(sublayer(u), eps=eps)
    xp = array_module(u)
    hidden = _gelu(u @ np.asarray(sublayer.W1).T + sublayer.b1, xp)
    return x + normalize(hidden, eps=eps) @ np.asarray(sublayer.W2).T + sublayer.b2


def normformer_jacobian(x, sublayer, norm: str = "layer", eps: float = DEFAULT_EPS, branch: str = "ffn"):
    """Analytic Jacobian of :func:`normformer`.

    FFN branch: ``I + W2 J_Nmid(a) diag(gelu'(z)) W1 J_N(x)`` with ``z = W1 N(x) + b1``,
    ``a = gelu(z)``; attention branch: that of :func:`sandwich_jacobian`.
    """
    x = as_array(x, "x")
    _check_branch(branch, sublayer)
    if branch == "attention":
        return sandwich_jacobian(x, sublayer, norm, eps)
    normalize, jacobian = _norm(norm)
    u = normalize(x, eps=eps)
    W1, W2 = np.asarray(sublayer.W1), np.asarray(sublayer.W2)
    z = u @ W1.T + sublayer.b1
    slope = _gelu_derivative(z, np)
    mid = jacobian(_gelu(z, np), eps=eps)
    branch_jac = W2 @ mid @ (slope[..., :, None] * W1) @ jacobian(x, eps=eps)
    return np.eye(x.shape[-1]) + branch_jac


def final_norm(x, norm: str = "layer", eps: float = DEFAULT_EPS):
    """The final norm ``N_final(x_L)`` applied once after a Pre-LN stack, before the head.

    Zero-homogeneous up to ``eps``: ``N(c x) = N(x)`` for ``c > 0`` (exactly when ``eps = 0``),
    so inflating the last stream cannot inflate the logits.
    """
    x = as_array(x, "x")
    return _norm(norm)[0](x, eps=eps)


def final_norm_jacobian(x, norm: str = "layer", eps: float = DEFAULT_EPS):
    """``J_Nfinal(x_L)``, the norm's own Jacobian."""
    x = as_array(x, "x")
    return _norm(norm)[1](x, eps=eps)


# --------------------------------------------------------------------------- variants


@dataclass(frozen=True)
class Variant:
    """One placement in the family, as the toy stack uses it.

    ``block(x, sublayer, layers)`` and ``jacobian(x, sublayer, layers)`` take the total depth
    because DeepNorm's constant depends on it; ``final`` names the norm applied once at the
    end (or ``None``); ``identity_path`` says whether the stream reaches the next layer
    untransformed (a term ``I`` in the block Jacobian).
    """

    name: str
    label: str
    formula: str
    source: str
    norm: str
    identity_path: bool
    final: str | None = None
    branch_scale_factor: object = None  # callable layers -> factor on the sublayer init, or None
    block: object = field(default=None, repr=False)
    jacobian: object = field(default=None, repr=False)


def _deepnorm_alpha(layers):
    return deepnorm_constants(layers, sublayers_per_layer=1)[0]


def _deepnorm_beta(layers):
    return deepnorm_constants(layers, sublayers_per_layer=1)[1]


def _make_variants():
    def fixed(block_fn, jac_fn, norm):
        return (lambda x, f, layers: block_fn(x, f, norm)), (lambda x, f, layers: jac_fn(x, f, norm))

    specs = []
    block, jac = fixed(post_ln, post_ln_jacobian, "layer")
    specs.append(Variant("post", "Post-LN", "N(x + F(x))", "Vaswani et al. 2017",
                         "layer", False, block=block, jacobian=jac))
    block, jac = fixed(pre_ln, pre_ln_jacobian, "layer")
    specs.append(Variant("pre", "Pre-LN", "x + F(N(x))", "Xiong et al. 2020",
                         "layer", True, block=block, jacobian=jac))
    specs.append(Variant(
        "deepnorm", "DeepNorm", "N(α x + F_β(x))", "Wang et al. 2022",
        "layer", False, branch_scale_factor=_deepnorm_beta,
        block=lambda x, f, layers: deepnorm(x, f, _deepnorm_alpha(layers), "layer"),
        jacobian=lambda x, f, layers: deepnorm_jacobian(x, f, _deepnorm_alpha(layers), "layer"),
    ))
    block, jac = fixed(sandwich, sandwich_jacobian, "layer")
    specs.append(Variant("sandwich", "Sandwich / Peri-LN", "x + N_out(F(N_in(x)))",
                         "Ding et al. 2021; Kim et al. 2025", "layer", True, block=block, jacobian=jac))
    block, jac = fixed(normformer, normformer_jacobian, "layer")
    specs.append(Variant("normformer", "NormFormer (FFN)", "x + W2 N_mid(gelu(W1 N(x)))",
                         "Shleifer et al. 2021", "layer", True, block=block, jacobian=jac))
    block, jac = fixed(pre_ln, pre_ln_jacobian, "rms")
    specs.append(Variant("pre_rms", "Pre-RMSNorm", "x + F(RMS(x))", "Zhang and Sennrich 2019",
                         "rms", True, block=block, jacobian=jac))
    block, jac = fixed(pre_ln, pre_ln_jacobian, "layer")
    specs.append(Variant("pre_final", "Pre-LN + final norm", "x + F(N(x)); y = N_final(x_L)",
                         "Radford et al. 2019 (GPT-2)", "layer", True, final="layer",
                         block=block, jacobian=jac))
    return {v.name: v for v in specs}


#: Every variant by name, in display order.
VARIANTS: dict[str, Variant] = _make_variants()


def _variant(variant) -> Variant:
    if isinstance(variant, Variant):
        return variant
    if variant not in VARIANTS:
        raise ValueError(f"variant: must be one of {list(VARIANTS)}, got {variant!r}")
    return VARIANTS[variant]


# --------------------------------------------------------------------------- the stack


@dataclass(frozen=True)
class StackProfile:
    """What one random stack does, forward and backward.

    ``stream_rms[l]`` is the RMS over features of the residual stream ``x_l`` for
    ``l = 0 .. layers`` (``x_0`` is the input). ``input_grad_norm[l - 1]`` is
    ``|| d(w . y_l) / d x_0 ||`` for ``l = 1 .. layers``: the gradient that a fixed linear
    readout ``w`` of the stack truncated at depth ``l`` sends to the input, with
    ``y_l = N_final(x_l)`` for a variant with a final norm and ``y_l = x_l`` otherwise.
    ``output_rms`` is the RMS of ``y_L``, what the head would see; ``final_stream`` is
    ``x_L`` itself.
    """

    variant: str
    layers: int
    width: int
    seed: int
    branch_scale: float
    stream_rms: np.ndarray
    input_grad_norm: np.ndarray
    output_rms: float
    identity_path: bool
    final_stream: np.ndarray = field(default=None, repr=False)

    @property
    def final_stream_rms(self) -> float:
        return float(self.stream_rms[-1])

    @property
    def final_input_grad_norm(self) -> float:
        return float(self.input_grad_norm[-1])


MAX_LAYERS = 256
MAX_WIDTH = 256


def _check_stack_args(layers, width, seed, branch_scale):
    layers = check_depth(layers, "layers")
    if layers > MAX_LAYERS:
        raise ValueError(f"layers: at most {MAX_LAYERS} (a toy stack), got {layers}")
    width = check_int(width, "width", minimum=2)
    if width > MAX_WIDTH:
        raise ValueError(f"width: at most {MAX_WIDTH} (a toy stack), got {width}")
    seed = check_int(seed, "seed", minimum=0)
    branch_scale = check_positive(branch_scale, "branch_scale")
    return layers, width, seed, branch_scale


def _stack_inputs(layers, width, seed, branch_scale, variant: Variant):
    """The seeded input ``x_0``, readout ``w`` and sublayers shared by all variants."""
    rng = np.random.default_rng(seed)
    x0 = rng.normal(size=width)
    readout = rng.normal(size=width) / math.sqrt(width)
    sublayer_seeds = rng.integers(0, 2**31 - 1, size=layers)
    factor = variant.branch_scale_factor(layers) if variant.branch_scale_factor else 1.0
    sublayers = [MLP.random(width, 4 * width, seed=int(s), scale=branch_scale * factor) for s in sublayer_seeds]
    return x0, readout, sublayers


def stack_sublayers(variant, layers: int, width: int = 16, seed: int = 0, branch_scale: float = 1.0):
    """``(x_0, w, sublayers)`` of the stack :func:`stack_profile` builds (for a second route)."""
    spec = _variant(variant)
    layers, width, seed, branch_scale = _check_stack_args(layers, width, seed, branch_scale)
    return _stack_inputs(layers, width, seed, branch_scale, spec)


def _rms(v) -> float:
    return float(np.sqrt(np.mean(np.square(v))))


def stack_profile(variant, layers: int, width: int = 16, seed: int = 0, branch_scale: float = 1.0) -> StackProfile:
    """Run a seeded random ``layers``-deep stack of ``variant`` blocks forward and backward.

    One :meth:`MLP.random` sublayer (hidden width ``4 * width``, init scale ``branch_scale``,
    times DeepNorm's ``beta`` for DeepNorm) per layer; the input ``x_0`` and the readout
    ``w`` (entries ``Normal(0, 1/width)``) come from ``numpy.random.default_rng(seed)``, so
    every variant with the same arguments sees the same input, readout and weights.
    The gradients are products of the analytic block Jacobians,
    ``d x_l / d x_0 = J_l ... J_1``. See :class:`StackProfile` for what is returned.
    """
    spec = _variant(variant)
    layers, width, seed, branch_scale = _check_stack_args(layers, width, seed, branch_scale)
    x, readout, sublayers = _stack_inputs(layers, width, seed, branch_scale, spec)
    stream_rms = [_rms(x)]
    grads = []
    transport = np.eye(width)  # d x_l / d x_0
    for sublayer in sublayers:
        transport = spec.jacobian(x, sublayer, layers) @ transport
        x = spec.block(x, sublayer, layers)
        stream_rms.append(_rms(x))
        upstream = final_norm_jacobian(x, spec.final).T @ readout if spec.final else readout
        grads.append(float(np.linalg.norm(transport.T @ upstream)))
    output = final_norm(x, spec.final) if spec.final else x
    return StackProfile(
        variant=spec.name,
        layers=layers,
        width=width,
        seed=seed,
        branch_scale=branch_scale,
        stream_rms=np.asarray(stream_rms),
        input_grad_norm=np.asarray(grads),
        output_rms=_rms(output),
        identity_path=spec.identity_path,
        final_stream=np.asarray(x),
    )


def family_table(layers: int = 48, width: int = 16, seed: int = 0, branch_scale: float = 1.0, variants=None) -> list[dict]:
    """One row per variant at depth ``layers``: its formula, source and measured numbers.

    Keys: ``variant``, ``label``, ``formula``, ``source``, ``identity_path``,
    ``final_stream_rms`` (RMS of ``x_L``), ``output_rms`` (RMS of what the head sees),
    ``input_grad_norm`` (``|| d(w . y_L) / d x_0 ||``), ``peak_stream_rms`` and
    ``min_input_grad_norm`` (over depths ``1 .. layers``).
    """
    names = list(VARIANTS) if variants is None else [_variant(v).name for v in variants]
    rows = []
    for name in names:
        spec = VARIANTS[name]
        profile = stack_profile(name, layers, width, seed, branch_scale)
        rows.append(
            {
                "variant": name,
                "label": spec.label,
                "formula": spec.formula,
                "source": spec.source,
                "identity_path": spec.identity_path,
                "final_stream_rms": profile.final_stream_rms,
                "output_rms": profile.output_rms,
                "input_grad_norm": profile.final_input_grad_norm,
                "peak_stream_rms": float(profile.stream_rms.max()),
                "min_input_grad_norm": float(profile.input_grad_norm.min()),
            }
        )
    return rows


def seed_spread(variant, layers: int = 48, seeds=range(8), width: int = 16, branch_scale: float = 1.0) -> dict:
    """How one variant's numbers at depth ``layers`` vary over several seeds.

    A single seed can mislead (Post-LN's input gradient is a multiplicative random walk),
    so the chapter quotes these. Keys: ``seeds`` (how many), ``median_grad``, ``min_grad``,
    ``max_grad`` (the input-gradient norm at depth ``layers`` over the seeds),
    ``log10_spread`` (standard deviation of its base-10 logarithm),
    ``min_grad_any_depth`` (smallest over seeds and depths ``1 .. layers``),
    ``median_stream_rms`` (of ``x_L``) and ``median_output_rms`` (of ``y_L``).
    """
    seeds = list(seeds)
    if not seeds:
        raise ValueError("seeds: need at least one seed")
    profiles = [stack_profile(variant, layers, width, seed, branch_scale) for seed in seeds]
    final = np.array([p.final_input_grad_norm for p in profiles])
    return {
        "seeds": len(seeds),
        "median_grad": float(np.median(final)),
        "min_grad": float(final.min()),
        "max_grad": float(final.max()),
        "log10_spread": float(np.log10(final).std()),
        "min_grad_any_depth": float(min(p.input_grad_norm.min() for p in profiles)),
        "median_stream_rms": float(np.median([p.final_stream_rms for p in profiles])),
        "median_output_rms": float(np.median([p.output_rms for p in profiles])),
    }


_COLUMNS = (
    ("label", "variant"),
    ("formula", "block"),
    ("identity_path", "identity path"),
    ("final_stream_rms", "RMS of x_L"),
    ("output_rms", "RMS seen by head"),
    ("input_grad_norm", "‖∂(w·y_L)/∂x_0‖"),
)


def _cell(value, digits: int) -> str:
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, numbers.Real):
        return f"{float(value):.{digits}g}"
    return str(value)


def format_family_table(rows, fmt: str = "html", digits: int = 3) -> str:
    """Rows of :func:`family_table` as an HTML (``fmt="html"``) or Markdown table."""
    if fmt not in ("html", "markdown"):
        raise ValueError(f"fmt: must be 'html' or 'markdown', got {fmt!r}")
    digits = check_int(digits, "digits", minimum=1)
    if fmt == "markdown":
        cells = [[_cell(row[key], digits).replace("|", "\\|") for key, _ in _COLUMNS] for row in rows]
        for row in cells:
            row[1] = f"`{row[1]}`"  # the formula, as code: its underscores are not emphasis
        return tabulate(cells, headers=[title for _, title in _COLUMNS], tablefmt="github",
                        disable_numparse=True) + "\n"
    import html

    head = "".join(f"<th>{html.escape(title)}</th>" for _, title in _COLUMNS)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(_cell(row[key], digits))}</td>" for key, _ in _COLUMNS) + "</tr>"
        for row in rows
    )
    return f'<table class="lnworked-family-table"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


# --------------------------------------------------------------------------- modern practice
# Appended for the chapter's "modern practice" section: the reordered norm (OLMo 2), the
# Pre-RMSNorm stack with a final norm (LLaMA), sandwich norms with RMSNorm (Gemma 2), a
# scaled residual write (GPT-2's 1/sqrt(N) initialisation, LayerScale, ReZero), Post-LN's
# backward factor split into its two matrices, and attention logits with and without
# QK-norm.


def reordered(x, sublayer, norm: str = "rms", eps: float = DEFAULT_EPS):
    """Reordered-norm block ``x + N(F(x))`` (OLMo 2: the norm moves from the branch's input
    to its output, ``h = x + RMSNorm(Attention(x))``, ``h_out = h + RMSNorm(MLP(h))``).

    The identity path of Pre-LN is kept and every write has the norm's scale, but the
    sublayer sees the raw stream ``x``, not a normalised copy.
    """
    x = as_array(x, "x")
    return x + _norm(norm)[0](sublayer(x), eps=eps)


def reordered_jacobian(x, sublayer, norm: str = "rms", eps: float = DEFAULT_EPS):
    """Analytic ``I + J_N(F(x)) J_F(x)``."""
    x = as_array(x, "x")
    return np.eye(x.shape[-1]) + _norm(norm)[1](sublayer(x), eps=eps) @ sublayer.jacobian(x)


def scaled_pre_ln(x, sublayer, scale: float, norm: str = "rms", eps: float = DEFAULT_EPS):
    """Pre-norm block with a scaled write ``x + s F(N(x))``, ``s >= 0``.

    At initialisation this is what residual scaling does: GPT-2 multiplies the weights of
    the layers that write into the stream by ``1/sqrt(N)``, ``N`` the number of residual
    layers (:func:`gpt2_residual_scale`); LayerScale multiplies each write by a diagonal
    initialised to a small constant; ReZero's gate starts at ``s = 0`` (ReZero also drops
    the norm, which at ``s = 0`` changes nothing). For the toy's bias-free MLP, scaling
    ``W2`` by ``s`` is exactly ``s F``.
    """
    x = as_array(x, "x")
    scale = _check_scale(scale)
    return x + scale * sublayer(_norm(norm)[0](x, eps=eps))


def scaled_pre_ln_jacobian(x, sublayer, scale: float, norm: str = "rms", eps: float = DEFAULT_EPS):
    """Analytic ``I + s J_F(N(x)) J_N(x)``."""
    x = as_array(x, "x")
    scale = _check_scale(scale)
    normalize, jacobian = _norm(norm)
    return np.eye(x.shape[-1]) + scale * sublayer.jacobian(normalize(x, eps=eps)) @ jacobian(x, eps=eps)


def _check_scale(scale):
    if isinstance(scale, bool) or not isinstance(scale, numbers.Real) or not math.isfinite(scale) or scale < 0:
        raise ValueError(f"scale: must be a finite number >= 0, got {scale!r}")
    return float(scale)


def gpt2_residual_scale(layers: int, sublayers_per_layer: int = 1) -> float:
    """GPT-2's initial factor on the residual layers' weights, ``1 / sqrt(N)``.

    Radford et al. (2019): "We scale the weights of residual layers at initialization by a
    factor of 1/sqrt(N) where N is the number of residual layers." A GPT-2 block has two
    residual layers (attention and MLP), so ``N = 2L`` there (``sublayers_per_layer=2``,
    the ``1/sqrt(2 n_layer)`` of common GPT-2 code); the toy stack has one per block.
    """
    layers = check_depth(layers, "layers")
    sublayers_per_layer = check_depth(sublayers_per_layer, "sublayers_per_layer")
    return 1.0 / math.sqrt(layers * sublayers_per_layer)


def _make_modern_variants():
    def rms(block_fn, jac_fn):
        return (lambda x, f, layers: block_fn(x, f, "rms")), (lambda x, f, layers: jac_fn(x, f, "rms"))

    specs = [VARIANTS["pre_rms"]]
    block, jac = rms(pre_ln, pre_ln_jacobian)
    specs.append(Variant("llama", "Pre-RMSNorm + final norm (LLaMA)", "x + F(RMS(x)); y = RMS_final(x_L)",
                         "Touvron et al. 2023", "rms", True, final="rms", block=block, jacobian=jac))
    block, jac = rms(reordered, reordered_jacobian)
    specs.append(Variant("reordered", "Reordered norm (OLMo 2)", "x + RMS(F(x))",
                         "OLMo et al. 2024", "rms", True, block=block, jacobian=jac))
    block, jac = rms(sandwich, sandwich_jacobian)
    specs.append(Variant("sandwich_rms", "Sandwich RMSNorm (Gemma 2)", "x + RMS(F(RMS(x)))",
                         "Gemma Team 2024; Ding et al. 2021", "rms", True, block=block, jacobian=jac))
    specs.append(Variant(
        "scaled", "Pre-RMSNorm, write × 1/√L (GPT-2 init)", "x + F(RMS(x))/√L",
        "Radford et al. 2019", "rms", True,
        block=lambda x, f, layers: scaled_pre_ln(x, f, gpt2_residual_scale(layers), "rms"),
        jacobian=lambda x, f, layers: scaled_pre_ln_jacobian(x, f, gpt2_residual_scale(layers), "rms"),
    ))
    return {v.name: v for v in specs}


#: The modern-practice variants (all with RMSNorm), by name; ``pre_rms`` is the baseline.
MODERN_VARIANTS: dict[str, Variant] = _make_modern_variants()


def modern_profile(variant, layers: int, width: int = 16, seed: int = 0, branch_scale: float = 1.0) -> StackProfile:
    """:func:`stack_profile` of a :data:`MODERN_VARIANTS` entry (by name) or of any :class:`Variant`.

    Same seeded input, readout and sublayer weights as every other variant.
    """
    if isinstance(variant, str):
        if variant not in MODERN_VARIANTS:
            raise ValueError(f"variant: must be one of {list(MODERN_VARIANTS)}, got {variant!r}")
        variant = MODERN_VARIANTS[variant]
    return stack_profile(variant, layers, width, seed, branch_scale)


def scaled_write_sweep(scales, layers: int = 48, width: int = 16, seed: int = 0, norm: str = "rms") -> list[dict]:
    """The toy stack of ``x + s F(N(x))`` blocks for each write scale ``s`` in ``scales``.

    One row per scale: ``scale``, ``final_stream_rms`` (RMS of ``x_L``),
    ``input_grad_norm`` (``|| d(w . x_L) / d x_0 ||``) and ``grad_spread`` (largest over
    smallest input-gradient norm over readout depths ``1 .. layers``). ``s = 0`` is the
    identity stack: ``x_L = x_0`` and the gradient is ``w`` itself.
    """
    rows = []
    for scale in scales:
        scale = _check_scale(scale)
        spec = Variant(
            f"scaled_{scale:g}", f"write × {scale:g}", "x + s F(N(x))", "", norm, True,
            block=lambda x, f, layers, s=scale: scaled_pre_ln(x, f, s, norm),
            jacobian=lambda x, f, layers, s=scale: scaled_pre_ln_jacobian(x, f, s, norm),
        )
        profile = stack_profile(spec, layers, width, seed)
        grads = profile.input_grad_norm
        rows.append({
            "scale": scale,
            "final_stream_rms": profile.final_stream_rms,
            "input_grad_norm": profile.final_input_grad_norm,
            "grad_spread": float(grads.max() / grads.min()),
        })
    return rows


def post_ln_backward_split(layers: int = 48, width: int = 16, seed: int = 0, branch_scale: float = 1.0) -> dict:
    """Post-LN's backward step ``g_l = (I + J_F)^T J_N^T g_{l+1}`` split into its two factors.

    Runs the seeded Post-LN toy stack of :func:`stack_profile` and, walking the readout's
    gradient ``g_L = w`` back to the input, records per block

    * ``norm_gain[l]``   = ``||J_N^T g|| / ||g||``            (the norm's factor; J_N at x + F(x))
    * ``branch_gain[l]`` = ``||(I + J_F)^T h|| / ||h||``, ``h = J_N^T g``  (the residual add's factor)
    * ``step_gain[l]``   = their product, ``||g_l|| / ||g_{l+1}||``

    and ``sigma[l]``, the standard deviation over features of ``x + F(x)`` (``J_N``'s ``1/sigma``).
    The product of ``step_gain`` is ``||d(w . x_L)/d x_0|| / ||w||``. Arrays are in block order.
    """
    layers, width, seed, branch_scale = _check_stack_args(layers, width, seed, branch_scale)
    spec = VARIANTS["post"]
    x, readout, sublayers = _stack_inputs(layers, width, seed, branch_scale, spec)
    normalize, jacobian = _norm("layer")
    saved = []
    for sublayer in sublayers:
        pre = x + sublayer(x)
        saved.append((jacobian(pre), np.eye(width) + sublayer.jacobian(x), float(np.std(pre))))
        x = normalize(pre)
    g = np.asarray(readout, float)
    norm_gain, branch_gain, sigma = [], [], []
    for j_n, j_res, s in reversed(saved):
        h = j_n.T @ g
        g_next = j_res.T @ h
        norm_gain.append(float(np.linalg.norm(h) / np.linalg.norm(g)))
        branch_gain.append(float(np.linalg.norm(g_next) / np.linalg.norm(h)))
        sigma.append(s)
        g = g_next
    norm_gain, branch_gain = np.asarray(norm_gain[::-1]), np.asarray(branch_gain[::-1])
    return {
        "norm_gain": norm_gain,
        "branch_gain": branch_gain,
        "step_gain": norm_gain * branch_gain,
        "sigma": np.asarray(sigma[::-1]),
    }


def attention_logit_growth(weight_scales, tokens: int = 16, width: int = 16, seed: int = 0,
                           qk_norm: bool = False, norm: str = "layer", eps: float = DEFAULT_EPS) -> list[dict]:
    """Self-attention logits of one random head as its query/key weights grow by ``c``.

    ``tokens`` normalised inputs ``u_t = N(x_t)`` (as a Pre-LN block feeds attention),
    ``q_t = c W_q u_t``, ``k_t = c W_k u_t`` with ``W`` entries ``Normal(0, 1/width)``, head
    width ``width``. Logits ``z_ts = q_t . k_s / sqrt(width)``; with ``qk_norm`` they are
    ``N(q_t) . N(k_s) / sqrt(width)`` (QK-norm: Henry et al. 2020 L2-normalise q and k and
    learn the scale; Dehghani et al. 2023 apply LayerNorm to q and k). One row per ``c``:
    ``scale``, ``max_abs_logit`` and ``mean_entropy`` (nats, of the softmax over ``s``,
    averaged over ``t``; ``log(tokens)`` is uniform attention, 0 is one-hot).

    Without QK-norm the logits grow like ``c^2``; with it they do not depend on ``c``
    (exactly when ``eps = 0``). A picture of the mechanism at fixed random weights, not of
    training.
    """
    tokens = check_int(tokens, "tokens", minimum=2)
    width = check_int(width, "width", minimum=2)
    seed = check_int(seed, "seed", minimum=0)
    normalize = _norm(norm)[0]
    rng = np.random.default_rng(seed)
    u = normalize(rng.normal(size=(tokens, width)), eps=eps)
    w_q = rng.normal(0, 1 / math.sqrt(width), (width, width))
    w_k = rng.normal(0, 1 / math.sqrt(width), (width, width))
    rows = []
    for c in weight_scales:
        c = check_positive(c, "weight scale")
        q, k = c * u @ w_q.T, c * u @ w_k.T
        if qk_norm:
            q, k = normalize(q, eps=eps), normalize(k, eps=eps)
        logits = q @ k.T / math.sqrt(width)
        shifted = logits - logits.max(axis=1, keepdims=True)
        p = np.exp(shifted)
        p /= p.sum(axis=1, keepdims=True)
        entropy = -np.sum(np.where(p > 0, p * np.log(np.where(p > 0, p, 1.0)), 0.0), axis=1)
        rows.append({"scale": c, "max_abs_logit": float(np.abs(logits).max()),
                     "mean_entropy": float(entropy.mean())})
    return rows


__all__ += [
    "reordered",
    "reordered_jacobian",
    "scaled_pre_ln",
    "scaled_pre_ln_jacobian",
    "gpt2_residual_scale",
    "MODERN_VARIANTS",
    "modern_profile",
    "scaled_write_sweep",
    "post_ln_backward_split",
    "attention_logit_growth",
]


# --------------------------------------------------------------------------- toy vs measurement
#
# Chapter 3 reconciles source text 004's scalar toy (a Post-LN factor of 0.65 per layer, a
# Pre-LN factor of 1.3) with the random matrix stack above; chapter 4 measures the case
# against Pre-LN (late writes small against a grown stream). Everything below is measured on
# :func:`stack_profile`'s stacks, at initialisation.


def gradient_depth_table(variants=("post", "pre"), depths=(6, 12, 24, 48, 96), seeds=range(8),
                         width: int = 16, branch_scale: float = 1.0) -> list[dict]:
    """The input gradient of :func:`stack_profile` against depth, summarised over seeds.

    One row per ``(variant, L)`` with the keys of :func:`seed_spread` plus ``variant``,
    ``layers`` and ``per_layer``, the per-layer factor that the median implies::

        per_layer = median_grad ** (1 / L)

    (the ``f`` of the scalar toy ``f^L``; the readout ``w`` has norm about 1, so the
    median itself plays the role of ``f^L``).
    """
    rows = []
    for variant in variants:
        for layers in depths:
            summary = seed_spread(variant, layers, seeds=seeds, width=width, branch_scale=branch_scale)
            rows.append({"variant": _variant(variant).name, "layers": int(layers),
                         "per_layer": summary["median_grad"] ** (1.0 / layers), **summary})
    return rows


def backward_gains(variant, layers: int = 48, seeds=range(8), width: int = 16, branch_scale: float = 1.0) -> dict:
    """How much each block of :func:`stack_profile`'s stack scales the backward gradient.

    The gradient of the readout ``w . y_L`` is carried from the top of the stack to its input,
    ``g_L = w`` (through ``J_Nfinal`` for a variant with a final norm) and
    ``g_(l-1) = J_l^T g_l`` with ``J_l`` the analytic block Jacobian. The gain of block ``l`` is::

        gain_l = ||J_l^T g_l|| / ||g_l||

    the matrix counterpart of the scalar toy's per-layer factor; the product of the gains
    times ``||g_L||`` is the input-gradient norm of the stack. Returns ``gain`` (shape
    ``(seeds, layers)``, block 1 first), ``geometric_mean`` (``exp`` of the mean log gain),
    ``fraction_below_one``, ``min`` and ``max`` over all blocks and seeds.
    """
    spec = _variant(variant)
    gains = []
    for seed in seeds:
        x, readout, sublayers = stack_sublayers(spec, layers, width, seed, branch_scale)
        layers_ = len(sublayers)
        jacobians = []
        for sublayer in sublayers:
            jacobians.append(spec.jacobian(x, sublayer, layers_))
            x = spec.block(x, sublayer, layers_)
        g = final_norm_jacobian(x, spec.final).T @ readout if spec.final else readout
        row = []
        for jacobian in reversed(jacobians):
            new = jacobian.T @ g
            row.append(float(np.linalg.norm(new) / np.linalg.norm(g)))
            g = new
        gains.append(row[::-1])
    if not gains:
        raise ValueError("seeds: need at least one seed")
    gains = np.asarray(gains)
    return {
        "gain": gains,
        "geometric_mean": float(np.exp(np.log(gains).mean())),
        "fraction_below_one": float((gains < 1.0).mean()),
        "min": float(gains.min()),
        "max": float(gains.max()),
    }


def post_ln_gain_split(layers: int = 48, seeds=range(8), width: int = 16, branch_scale: float = 1.0,
                       eps: float = DEFAULT_EPS) -> dict:
    """Split each Post-LN block's backward gain into the norm's part and the residual add's.

    Block ``l`` computes ``z_l = x_l + F_l(x_l)`` and ``x_(l+1) = LN(z_l)``; its Jacobian
    ``J_N(z_l) (I + J_F(x_l))`` is applied to the gradient ``g`` from above in two steps::

        h = J_N(z_l)^T g               norm_gain   = ||h|| / ||g||   (<= 1/sigma_l: J_N is
                                                                      (1/sigma) times a projection)
        g' = (I + J_F(x_l))^T h        branch_gain = ||g'|| / ||h||
                                       gain        = ||g'|| / ||g||  = norm_gain * branch_gain

    with ``sigma_l = sqrt(Var(z_l) + eps)`` the spread of the norm's input. Since ``x_l`` has
    unit spread and the write ``F_l(x_l)`` has variance ``v`` relative to it,
    ``sigma_l ~ sqrt(1 + v)`` when the two are uncorrelated. The scalar toy of source text 004
    fixes ``1/sigma = 0.5`` and ``1 + F' = 1.3``. Returns arrays ``sigma``, ``norm_gain``,
    ``branch_gain``, ``gain``, ``write_ratio`` (``||F_l(x_l)|| / ||x_l||``), each of shape
    ``(seeds, layers)``, and the geometric mean of each under ``mean_<name>``.
    """
    spec = _variant("post")
    normalize, jacobian = _norm("layer")
    out = {key: [] for key in ("sigma", "norm_gain", "branch_gain", "gain", "write_ratio")}
    for seed in seeds:
        layers_, width_, seed_, scale_ = _check_stack_args(layers, width, seed, branch_scale)
        x, readout, sublayers = _stack_inputs(layers_, width_, seed_, scale_, spec)
        cache = []
        for sublayer in sublayers:
            write = sublayer(x)
            z = x + write
            cache.append((x, z, sublayer, float(np.linalg.norm(write) / np.linalg.norm(x))))
            x = normalize(z, eps=eps)
        rows = []
        g = readout
        for x_l, z, sublayer, ratio in reversed(cache):
            h = jacobian(z, eps=eps).T @ g
            new = (np.eye(width_) + sublayer.jacobian(x_l)).T @ h
            norm_g, norm_h, norm_new = (float(np.linalg.norm(v)) for v in (g, h, new))
            rows.append((math.sqrt(float(np.var(z)) + eps), norm_h / norm_g, norm_new / norm_h,
                         norm_new / norm_g, ratio))
            g = new
        for key, column in zip(out, zip(*rows[::-1])):
            out[key].append(column)
    if not out["gain"]:
        raise ValueError("seeds: need at least one seed")
    result = {key: np.asarray(value) for key, value in out.items()}
    for key in list(result):
        result[f"mean_{key}"] = float(np.exp(np.log(result[key]).mean()))
    return result


def write_ratios(variant, layers: int = 48, seeds=range(8), width: int = 16, branch_scale: float = 1.0) -> dict:
    """Size of each block's write against the size of the stream it writes into.

    For a variant with an identity path (Pre-LN, Pre-RMSNorm, sandwich, NormFormer) the write
    of block ``l`` is ``x_(l+1) - x_l``, i.e. ``F_l(N(x_l))`` for Pre-LN, and::

        ratio_l = ||x_(l+1) - x_l|| / ||x_l||

    For Post-LN the write is the branch output before the norm, ``||F_l(x_l)|| / ||x_l||``.
    Under independent writes of fixed size ``r ||x_0||`` the Pre-LN stream after ``l`` writes
    has norm about ``||x_0|| sqrt(1 + l r^2)``, so the ratio falls like ``1 / sqrt(l)``: each
    late block changes the stream less and less (the "curse of depth" / representation
    collapse argument against Pre-LN). Returns ``ratios`` (shape ``(seeds, layers)``, block 1
    first) and ``median`` (over seeds, per block). DeepNorm is not supported (its write is
    ``alpha``-weighted inside the norm).
    """
    spec = _variant(variant)
    if not spec.identity_path and spec.name != "post":
        raise ValueError(f"variant: write ratios need an identity path or Post-LN, got {spec.name!r}")
    ratios = []
    for seed in seeds:
        x, _, sublayers = stack_sublayers(spec, layers, width, seed, branch_scale)
        layers_ = len(sublayers)
        row = []
        for sublayer in sublayers:
            following = spec.block(x, sublayer, layers_)
            write = following - x if spec.identity_path else sublayer(x)
            row.append(float(np.linalg.norm(write) / np.linalg.norm(x)))
            x = following
        ratios.append(row)
    if not ratios:
        raise ValueError("seeds: need at least one seed")
    ratios = np.asarray(ratios)
    return {"ratios": ratios, "median": np.median(ratios, axis=0)}
