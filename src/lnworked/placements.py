"""The wider family of norm placements: each block, its analytic Jacobian, and the registry.

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
    Reordered    x -> x + N(F(x))                       OLMo 2 (OLMo et al. 2024)
    Scaled write x -> x + s F(N(x))                     GPT-2's 1/sqrt(S) init (W2 x s, N = LayerNorm),
                                                        LayerScale, ReZero

Block Jacobians (``J_N`` evaluated at the norm's input, ``J_F`` at the sublayer's input)::

    DeepNorm     J = J_N(alpha x + F(x)) (alpha I + J_F(x))
    Sandwich     J = I + J_Nout(F(N_in x)) J_F(N_in x) J_Nin(x)
    NormFormer   J = I + W2 J_Nmid(a) diag(gelu'(z)) W1 J_N(x),  z = W1 N(x) + b1,  a = gelu(z)
    Final norm   J = J_Nfinal(x_L)
    Reordered    J = I + J_N(F(x)) J_F(x)
    Scaled write J = I + s J_F(N(x)) J_N(x)

DeepNorm constants (Wang et al. 2022, Fig. 2 / Table 1; the same numbers are in the
authors' ``torchscale`` code): for an N-layer encoder-only (or M-layer decoder-only) model,
``alpha = (2N)^(1/4)`` and the sublayer weights (FFN ``fc1``/``fc2``, attention ``v_proj`` and
``out_proj``) are initialised Xavier-normal and then multiplied by ``beta = (8N)^(-1/4)``.
The encoder-only, decoder-only and encoder-decoder *decoder* entries of the paper's table have
the form ``alpha = S^(1/4)``, ``beta = (4S)^(-1/4)`` with ``S`` the number of residual
sublayers (``2N``, or ``3M`` for that decoder); the encoder of an encoder-decoder model has
other constants (``alpha = 0.81 (N^4 M)^(1/16)``), which this module does not model.
:func:`deepnorm_constants` takes ``sublayers_per_layer`` for the ``S^(1/4)`` cases. Our toy
stack has **one** MLP sublayer per layer, so it uses ``S = L``: ``alpha = L^(1/4)``,
``beta = (4L)^(-1/4)`` (our reading of the table, not a number the paper prints for an
MLP-only stack).

NormFormer simplification: NormFormer adds to Pre-LN (i) a LayerNorm on the attention
output before the residual addition, (ii) head-wise scaling of the attention output and
(iii) a LayerNorm after the FFN's first activation. The toy stack has no attention, so the
NormFormer variant there is the FFN branch with the mid-FFN norm (iii) only; the
attention-like form ``x + N(F(N(x)))`` (i) is :func:`normformer` with ``branch="attention"``
and coincides with the sandwich block. Head scaling (ii) and NormFormer's optional
residual scaling are omitted.

:data:`VARIANTS` (the family of the wider-family chapter) and :data:`MODERN_VARIANTS` (its modern-practice
designs: those with RMSNorm, and GPT-2's scaled initialisation, with LayerNorm as in GPT-2) name each
placement as the random toy stack (:mod:`lnworked.random_stack`) uses it.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field

import numpy as np

from lnworked.blocks import MLP, _gelu, _gelu_derivative, _norm, post_ln, post_ln_jacobian, pre_ln, pre_ln_jacobian
from lnworked.norms import DEFAULT_EPS
from lnworked.validation import array_module, as_array, check_depth, check_positive

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
    "reordered",
    "reordered_jacobian",
    "scaled_pre_ln",
    "scaled_pre_ln_jacobian",
    "gpt2_residual_scale",
    "Variant",
    "VARIANTS",
    "MODERN_VARIANTS",
    "variant_spec",
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


def _check_scale(scale, name: str = "scale"):
    if isinstance(scale, bool) or not isinstance(scale, numbers.Real) or not math.isfinite(scale) or scale < 0:
        raise ValueError(f"{name}: must be a finite number >= 0, got {scale!r}")
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



# --------------------------------------------------------------------------- the registry


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
        "deepnorm", "DeepNorm", "N(α x + F_κ(x))", "Wang et al. 2022",
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
    # GPT-2 normalises with LayerNorm; its rule scales the initial weights of the layers that
    # write into the stream (here W2) by 1/sqrt(N), N residual layers (N = L in this stack)
    specs.append(Variant(
        "scaled", "Pre-LN, GPT-2's init (W2 × 1/√L)", "x + F(N(x)), W2 × 1/√L at init",
        "Radford et al. 2019", "layer", True,
        block=lambda x, f, layers: scaled_pre_ln(x, f, gpt2_residual_scale(layers), "layer"),
        jacobian=lambda x, f, layers: scaled_pre_ln_jacobian(x, f, gpt2_residual_scale(layers), "layer"),
    ))
    return {v.name: v for v in specs}


#: The modern-practice variants, by name: the RMSNorm designs (``pre_rms`` is their baseline)
#: and GPT-2's scaled initialisation, which keeps LayerNorm as GPT-2 does (``pre`` is its baseline).
MODERN_VARIANTS: dict[str, Variant] = _make_modern_variants()


def variant_spec(variant) -> Variant:
    """The :class:`Variant` named ``variant`` in :data:`VARIANTS` or :data:`MODERN_VARIANTS`
    (a :class:`Variant` is returned as it is)."""
    if isinstance(variant, Variant):
        return variant
    if variant in VARIANTS:
        return VARIANTS[variant]
    if variant in MODERN_VARIANTS:
        return MODERN_VARIANTS[variant]
    names = list(VARIANTS) + [n for n in MODERN_VARIANTS if n not in VARIANTS]
    raise ValueError(f"variant: must be one of {names}, got {variant!r}")
