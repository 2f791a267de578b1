"""The stress test's configuration (seed 002, the article by Zhejian Peng).

The defaults are the article's: vocabulary 64, sequence length 32, width 64, 4 heads,
12 layers, batch 24, 180 steps, target learning rate 2e-3, seed 7, Adam (b1 0.9,
b2 0.95) with decoupled weight decay 0.01 and no clipping; the warmed-up Post-LN run
ramps linearly over two thirds of the steps (120 of 180).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import asdict, dataclass, replace

from lnworked.validation import check_int

__all__ = ["StressConfig", "RunSpec", "default_runs", "warmup_for", "NORM_CHOICES", "INIT_CHOICES",
           "POSITION_CHOICES", "ACTIVATION_CHOICES", "DEFAULT_CHUNK"]

NORM_CHOICES = ("layernorm", "rmsnorm")
INIT_CHOICES = ("lecun", "xavier")  # Dense kernels: Flax's default lecun_normal (the article), or xavier_uniform
POSITION_CHOICES = ("zeros", "sinusoidal")  # the position table's initial value
ACTIVATION_CHOICES = ("gelu", "relu")  # the MLP's nonlinearity
DEFAULT_CHUNK = 30  # training steps per compiled call: 6 progress updates in the default run


@dataclass(frozen=True)
class StressConfig:
    """Everything that is held fixed across the three runs (the article's ``Config``)."""

    vocab_size: int = 64
    sequence_length: int = 32
    width: int = 64
    heads: int = 4
    layers: int = 12
    batch_size: int = 24
    steps: int = 180
    learning_rate: float = 2e-3
    seed: int = 7
    norm: str = "layernorm"
    b1: float = 0.9
    b2: float = 0.95
    weight_decay: float = 0.01
    # Architecture options for comparisons with other papers' settings (Xiong et al. 2020);
    # the defaults are the article's model.
    causal: bool = True  # attention sees only the past (a decoder); False: every position (an encoder)
    init: str = "lecun"  # the blocks' Dense kernels (biases start at zero either way)
    embedding_std: float = 1.0  # token embedding ~ N(0, embedding_std^2)
    embedding_scale: bool = False  # multiply the embedding by sqrt(width) (Vaswani et al., fairseq)
    positions: str = "zeros"  # the learned position table starts at zeros or at the sinusoidal table
    readout_std: float = 0.02  # output layer ~ N(0, readout_std^2)
    post_final_norm: bool = False  # Post-LN also gets a final norm before the output layer
    activation: str = "gelu"  # the MLP's nonlinearity (Xiong et al.'s theory: relu)
    mlp_ratio: int = 4  # the MLP's hidden width over width (Xiong et al.'s theory: 1, W1 and W2 d x d)
    zero_qk: bool = False  # W^Q and W^K start at zero, so attention starts uniform (Xiong et al.'s theory)
    tied_readout: bool = False  # logits = x E^T with the token embedding E (no separate output layer)
    # DeepNorm (Wang et al. 2022): every residual sum becomes alpha x + F (``residual_scale`` = alpha) and
    # the kernels of the attention's value and output projections and of the MLP start multiplied by
    # ``branch_init_scale`` = kappa (the paper's beta); 1.0 and 1.0 are the article's model.
    residual_scale: float = 1.0
    branch_init_scale: float = 1.0
    # Peri-LN (Kim et al. 2025; Ding et al. 2021's "Sandwich-LN"): each Pre-LN sublayer's output is
    # normalised too, x + N_out(F(N_in(x))), by a norm of its own; False is the article's model.
    peri_norm: bool = False

    def __post_init__(self):
        check_int(self.vocab_size, "vocab_size", minimum=2)
        check_int(self.sequence_length, "sequence_length", minimum=1)
        check_int(self.width, "width", minimum=1)
        check_int(self.heads, "heads", minimum=1)
        check_int(self.layers, "layers", minimum=1)
        check_int(self.batch_size, "batch_size", minimum=1)
        check_int(self.steps, "steps", minimum=1)
        check_int(self.seed, "seed", minimum=0)
        check_int(self.mlp_ratio, "mlp_ratio", minimum=1)
        if self.activation not in ACTIVATION_CHOICES:
            raise ValueError(f"activation: must be one of {ACTIVATION_CHOICES}, got {self.activation!r}")
        if self.width % self.heads:
            raise ValueError(f"heads: must divide width {self.width}, got {self.heads!r}")
        lr = self.learning_rate
        if isinstance(lr, bool) or not isinstance(lr, numbers.Real) or not math.isfinite(lr) or lr <= 0:
            raise ValueError(f"learning_rate: must be a finite number > 0, got {lr!r}")
        if self.norm not in NORM_CHOICES:
            raise ValueError(f"norm: must be one of {NORM_CHOICES}, got {self.norm!r}")
        if self.init not in INIT_CHOICES:
            raise ValueError(f"init: must be one of {INIT_CHOICES}, got {self.init!r}")
        if self.positions not in POSITION_CHOICES:
            raise ValueError(f"positions: must be one of {POSITION_CHOICES}, got {self.positions!r}")
        for name in ("embedding_std", "readout_std", "residual_scale", "branch_init_scale"):
            std = getattr(self, name)
            if isinstance(std, bool) or not isinstance(std, numbers.Real) or not math.isfinite(std) or std <= 0:
                raise ValueError(f"{name}: must be a finite number > 0, got {std!r}")
        for name in ("causal", "embedding_scale", "post_final_norm", "zero_qk", "tied_readout", "peri_norm"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"{name}: must be True or False, got {getattr(self, name)!r}")

    def replace(self, **changes) -> "StressConfig":
        return replace(self, **changes)

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class RunSpec:
    """One of the runs: topology (``pre_norm``) and warmup length (0 = constant rate)."""

    name: str
    pre_norm: bool
    warmup_steps: int


def warmup_for(steps: int) -> int:
    """The article's warmup length: two thirds of the run, at least one step."""
    return max(1, 2 * steps // 3)


def check_warmup(warmup: int, steps: int) -> int:
    """A warmup must be an integer in ``[0, steps]`` (a longer one would never reach the target)."""
    warmup = check_int(warmup, "warmup", minimum=0)
    if warmup > steps:
        raise ValueError(f"warmup: {warmup} steps is longer than the run ({steps} steps)")
    return warmup


def default_runs(config: StressConfig, warmup: int | None = None) -> tuple[RunSpec, ...]:
    """The article's three runs: Pre-LN constant, Post-LN constant, Post-LN with warmup."""
    warmup = warmup_for(config.steps) if warmup is None else check_warmup(warmup, config.steps)
    return (
        RunSpec("Pre-Norm · no warmup", True, 0),
        RunSpec("Post-Norm · no warmup", False, 0),
        RunSpec(f"Post-Norm · {warmup}-step warmup", False, warmup),
    )
