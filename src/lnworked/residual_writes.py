"""What each block writes into the residual stream, against the stream it writes into.

:func:`write_ratios` measures, block by block in the random toy stack
(:mod:`lnworked.random_stack`), the size of the write against the size of the stream::

    r_l = ||x_(l+1) - x_l|| / ||x_l||        (a placement with an identity path)
    r_l = ||F_l(x_l)|| / ||x_l||             (Post-LN, the branch output before its norm)

Under independent writes of fixed size the Pre-LN stream after ``l`` writes has grown like
``sqrt(l)``, so ``r_l`` falls like ``1/sqrt(l)`` (chapter 4). :func:`scaled_write_sweep`
runs the stack of scaled writes ``x + s F(N(x))`` (GPT-2's ``1/sqrt(S)`` initialisation,
LayerScale, ReZero at ``s = 0``) for several ``s`` (the wider-family chapter).
"""

from __future__ import annotations

import numpy as np

from lnworked.placements import Variant, _check_scale, scaled_pre_ln, scaled_pre_ln_jacobian, variant_spec
from lnworked.random_stack import stack_profile, stack_sublayers
from lnworked.validation import check_depth, check_positive

__all__ = ["write_ratios", "independent_write_ratio", "scaled_write_sweep"]


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
    spec = variant_spec(variant)
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


def independent_write_ratio(first_ratio: float, block: int) -> float:
    """The write/stream ratio of block ``l`` if every write is independent of the stream and
    of the other writes, with the size of the first one, ``||F|| = r_1 ||x_0||``::

        ||x_(l-1)||^2 = ||x_0||^2 + (l - 1) r_1^2 ||x_0||^2     (sizes of independent terms add)
        r_l = r_1 ||x_0|| / ||x_(l-1)|| = r_1 / sqrt(1 + (l - 1) r_1^2)  ~  1 / sqrt(l - 1)

    (block ``l`` writes into ``x_(l-1)``, the stream after ``l - 1`` writes; in expectation,
    for wide streams).
    """
    r = check_positive(first_ratio, "first_ratio")
    block = check_depth(block, "block")
    return r / (1.0 + (block - 1) * r * r) ** 0.5

