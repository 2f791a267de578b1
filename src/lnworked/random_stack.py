"""The random toy stack: one seeded deep stack per placement, run forward and backward.

:func:`stack_profile` builds one seeded random stack of a placement from
:mod:`lnworked.placements` (the *same* input ``x_0``, readout ``w`` and sublayer weights for
every placement, DeepNorm's scaled by ``beta``), runs it forward and records the stream's
RMS after each block and the norm of the gradient that the fixed linear readout ``w . y_l``
of depth ``l`` sends back to the stack input::

    stream_rms[l]          = RMS(x_l),                     l = 0 .. L
    input_grad_norm[l - 1] = || d(w . y_l) / d x_0 ||,     l = 1 .. L
                           = || (J_l ... J_1)^T J_final^T w ||

with ``J_l`` the analytic block Jacobian and ``y_l = N_final(x_l)`` for a placement with a
final norm (``y_l = x_l`` otherwise). The tests check the product against ``jax.jacfwd`` of
the whole stack. :func:`seed_spread` summarises one placement over several seeds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from lnworked.blocks import MLP
from lnworked.placements import Variant, final_norm, final_norm_jacobian, variant_spec
from lnworked.validation import check_depth, check_int, check_positive

__all__ = ["StackProfile", "stack_profile", "stack_sublayers", "seed_spread", "MAX_LAYERS", "MAX_WIDTH"]


@dataclass(frozen=True)
class StackProfile:
    """What one random stack does, forward and backward.

    ``stream_rms[l]`` is the RMS over features of the residual stream ``x_l`` for
    ``l = 0 .. layers`` (``x_0`` is the input). ``input_grad_norm[l - 1]`` is
    ``|| d(w . y_l) / d x_0 ||`` for ``l = 1 .. layers``: the gradient that a fixed linear
    readout ``w`` of the stack truncated at depth ``l`` sends to the input, with
    ``y_l = N_final(x_l)`` for a variant with a final norm and ``y_l = x_l`` otherwise.
    ``output_rms`` is the RMS of ``y_L``, what the head would see; ``readout_norm`` is
    ``||w||`` (about 1, not exactly: ``w`` is random), so ``input_grad_norm / readout_norm``
    is the gradient relative to what the readout sent in; ``final_stream`` is ``x_L`` itself.
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
    readout_norm: float
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
    spec = variant_spec(variant)
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
    spec = variant_spec(variant)
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
        readout_norm=float(np.linalg.norm(readout)),
        final_stream=np.asarray(x),
    )



def seed_spread(variant, layers: int = 48, seeds=range(8), width: int = 16, branch_scale: float = 1.0) -> dict:
    """How one variant's numbers at depth ``layers`` vary over several seeds.

    A single seed can mislead (Post-LN's input gradient is a multiplicative random walk),
    so the chapter quotes these. Keys: ``seeds`` (how many), ``median_grad``, ``min_grad``,
    ``max_grad`` (the input-gradient norm at depth ``layers`` over the seeds),
    ``log10_spread`` (standard deviation of its base-10 logarithm),
    ``min_grad_any_depth`` (smallest over seeds and depths ``1 .. layers``),
    ``min_relative_grad_any_depth`` (the same for ``input_grad_norm / ||w||``, the gradient
    relative to the readout that sent it),
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
        "min_relative_grad_any_depth": float(min(p.input_grad_norm.min() / p.readout_norm for p in profiles)),
        "median_stream_rms": float(np.median([p.final_stream_rms for p in profiles])),
        "median_output_rms": float(np.median([p.output_rms for p in profiles])),
    }
