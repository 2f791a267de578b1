"""The stress test's model: a small causal transformer with one Pre-LN / Post-LN switch.

Written to read top to bottom like nanoGPT's ``model.py``. One block is

    Pre-LN   (Xiong et al. 2020):  x = x + attn(ln_1(x));   x = x + mlp(ln_2(x))
    Post-LN  (Vaswani et al. 2017): x = ln_1(x + attn(x));   x = ln_2(x + mlp(x))

The placement is either a Python bool (fixed when the program is traced) or data, a
boolean array ``p`` given at call time; then each sublayer ``F`` with norm ``N`` is

    y = x + F(p ? N(x) : x);   x = p ? y : N(y)

which is the same arithmetic, so one compiled program can train both placements.

DeepNorm (Wang et al. 2022, "DeepNet: Scaling Transformers to 1,000 Layers") is Post-LN with
each residual sum weighted, ``x = N(alpha x + F(x))``, and the kernels of the attention's value
and output projections and of the MLP's two layers initialised times ``kappa`` (the paper's
``beta``; ``config.residual_scale`` = alpha, ``config.branch_init_scale`` = kappa; the paper's
pseudo-code and the authors' ``torchscale`` scale ``v_proj``, ``out_proj``, ``fc1``, ``fc2``
and leave ``q_proj``, ``k_proj`` alone). Here ``alpha`` weights the stream in every sum,
``y = alpha x + F(...)``, whichever the placement, and ``kappa`` multiplies the ``V`` third of
the fused ``[W^Q | W^K | W^V]`` kernel, ``attention_output``, ``mlp_in`` and ``mlp_out``.
With both 1 (the defaults) the arithmetic is the article's, operation for operation.

Peri-LN (Kim et al. 2025, "Peri-LN: Revisiting Layer Normalization in the Transformer
Architecture"; Ding et al. 2021's CogView "Sandwich-LN") is Pre-LN with each sublayer's output
normalised as well, by a norm of its own (``ln_1_out``, ``ln_2_out``; ``config.peri_norm``):

    x = x + ln_1_out(attn(ln_1(x)));   x = x + ln_2_out(mlp(ln_2(x)))

It keeps Pre-LN's final norm. The two extra norms exist only when the switch is on, so with it
off the parameter tree, and every initial weight, is the article's. It needs the Pre-LN
placement: with Post-LN it raises ``ValueError`` where the placement is a Python bool (with a
placement given as data, ``p ? ...``, the output norm acts in both, so pass ``p`` True only).

The sizes, initialisers and parameter names follow the article's script (seed 002,
Zhejian Peng): token embedding ~ N(0, 1), a learned position table initialised to
zeros, fused QKV then an output projection, a GELU MLP of width 4 x width, Flax norm
defaults, and for Pre-LN a final norm before the bias-free output layer (N(0, 0.02^2)).
Flax derives each parameter's random key from its module path, so keeping the
article's names (``embedding``, ``block_i/qkv``, ...) gives the article's initial weights.
"""

from __future__ import annotations

import math

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np

from lnworked.stress.config import StressConfig

__all__ = ["causal_self_attention", "sinusoidal_positions", "embed_tokens", "Block", "make_block", "TinyLM",
           "make_model", "init_params", "check_placement", "NORM_LAYERS", "BRANCH_SCALED_KERNELS"]

# The kernels DeepNorm's kappa (its paper's beta) multiplies (of ``qkv`` only the value third):
# Wang et al. 2022's v_proj, out_proj and the FFN's fc1, fc2.
BRANCH_SCALED_KERNELS = ("qkv", "attention_output", "mlp_in", "mlp_out")

NORM_LAYERS = {"layernorm": nn.LayerNorm, "rmsnorm": nn.RMSNorm}


def causal_self_attention(qkv: jax.Array, heads: int, causal: bool = True) -> jax.Array:
    """Multi-head softmax attention of fused ``qkv`` (batch, T, 3D), each position seeing only the past
    (``causal=False``: every position sees every position, as in an encoder)."""
    batch, length, three_width = qkv.shape
    head_dim = three_width // (3 * heads)
    q, k, v = (t.reshape(batch, length, heads, head_dim) for t in jnp.split(qkv, 3, axis=-1))
    scores = jnp.einsum("bthd,bshd->bhts", q, k) / math.sqrt(head_dim)
    if causal:
        scores = jnp.where(jnp.tril(jnp.ones((length, length), dtype=jnp.bool_))[None, None], scores, -1e30)
    mixed = jnp.einsum("bhts,bshd->bthd", jax.nn.softmax(scores, axis=-1), v)
    return mixed.reshape(batch, length, heads * head_dim)


def sinusoidal_positions(length: int, width: int) -> jax.Array:
    """Vaswani et al.'s table, shape ``(1, length, width)``: ``P[t, 2i] = sin(t / 10000^(2i/D))``,
    ``P[t, 2i+1] = cos(t / 10000^(2i/D))``."""
    t = jnp.arange(length, dtype=jnp.float32)[:, None]
    i = jnp.arange(0, width, 2, dtype=jnp.float32)[None, :]
    angle = t / jnp.power(10000.0, i / width)
    table = jnp.zeros((length, width), jnp.float32).at[:, 0::2].set(jnp.sin(angle))
    table = table.at[:, 1::2].set(jnp.cos(angle[:, : width // 2]))
    return table[None]


def embed_tokens(embedding: jax.Array, position: jax.Array, tokens: jax.Array, config: StressConfig) -> jax.Array:
    """``x_0 = s E[tokens] + P[:T]`` with ``s = sqrt(width)`` when ``config.embedding_scale``, else 1."""
    x = jnp.take(embedding, tokens, axis=0)
    if config.embedding_scale:
        x = x * math.sqrt(config.width)
    return x + position[:, : tokens.shape[1]]


ACTIVATIONS = {"gelu": nn.gelu, "relu": nn.relu}


def _zero_qk(kernel_init, width: int):
    """``kernel_init`` for the fused ``[W^Q | W^K | W^V]`` kernel with its first two thirds
    (``W^Q``, ``W^K``) set to zero: every attention score is 0, so attention starts uniform."""

    def init(key, shape, dtype=jnp.float32):
        return kernel_init(key, shape, dtype).at[:, : 2 * width].set(0)

    return init


def _times(kernel_init, scale: float, first_column: int = 0):
    """``kernel_init`` with columns ``first_column ..`` multiplied by ``scale`` (the init itself if ``scale == 1``)."""
    if scale == 1.0:
        return kernel_init

    def init(key, shape, dtype=jnp.float32):
        kernel = kernel_init(key, shape, dtype)
        return kernel.at[:, first_column:].multiply(jnp.asarray(scale, dtype))

    return init


def check_placement(peri_norm: bool, pre_norm) -> None:
    """Peri-LN normalises around a Pre-LN branch: ``ValueError`` for ``peri_norm`` with a Post-LN
    placement that is a Python bool (or a concrete array), as the combination has no meaning here."""
    if peri_norm and not isinstance(pre_norm, jax.core.Tracer) and not np.all(np.asarray(pre_norm)):
        raise ValueError("peri_norm: Peri-LN normalises a Pre-LN sublayer's input and output; "
                         "it needs pre_norm=True, got Post-LN")


class Block(nn.Module):
    """One transformer block; ``pre_norm`` is the topology switch (``peri_norm``: Peri-LN, on Pre-LN)."""

    width: int
    heads: int
    pre_norm: bool
    norm: str = "layernorm"
    causal: bool = True
    init: str = "lecun"
    activation: str = "gelu"
    mlp_ratio: int = 4
    zero_qk: bool = False
    residual_scale: float = 1.0  # alpha: each residual sum is alpha x + F
    branch_init_scale: float = 1.0  # kappa (DeepNorm's beta): times the initial BRANCH_SCALED_KERNELS (qkv: V only)
    peri_norm: bool = False  # Peri-LN: each branch output normalised by its own norm (new modules, only when on)

    def setup(self):
        kernel_init = nn.initializers.lecun_normal() if self.init == "lecun" else nn.initializers.xavier_uniform()
        qkv_init = _zero_qk(kernel_init, self.width) if self.zero_qk else kernel_init
        branch_init = _times(kernel_init, self.branch_init_scale)
        self.ln_1 = NORM_LAYERS[self.norm]()
        self.ln_2 = NORM_LAYERS[self.norm]()
        self.qkv = nn.Dense(3 * self.width, kernel_init=_times(qkv_init, self.branch_init_scale, 2 * self.width))
        self.attention_output = nn.Dense(self.width, kernel_init=branch_init)
        self.mlp_in = nn.Dense(self.mlp_ratio * self.width, kernel_init=branch_init)
        self.mlp_out = nn.Dense(self.width, kernel_init=branch_init)
        if self.peri_norm:
            self.ln_1_out = NORM_LAYERS[self.norm]()
            self.ln_2_out = NORM_LAYERS[self.norm]()

    def residual(self, x, branch):
        """The residual sum ``alpha x + branch`` (``x + branch`` when ``alpha == 1``)."""
        if self.residual_scale == 1.0:
            return x + branch
        return self.residual_scale * x + branch

    def attn(self, x):
        mixed = causal_self_attention(self.qkv(x), self.heads, self.causal)
        return self.attention_output(mixed)

    def mlp(self, x):
        return self.mlp_out(ACTIVATIONS[self.activation](self.mlp_in(x)))

    def attn_branch(self, x):
        """The attention branch as it enters the sum: ``attn(x)``, or ``ln_1_out(attn(x))`` (Peri-LN)."""
        return self.ln_1_out(self.attn(x)) if self.peri_norm else self.attn(x)

    def mlp_branch(self, x):
        """The MLP branch as it enters the sum: ``mlp(x)``, or ``ln_2_out(mlp(x))`` (Peri-LN)."""
        return self.ln_2_out(self.mlp(x)) if self.peri_norm else self.mlp(x)

    def __call__(self, x, pre_norm=None):
        """``pre_norm``: ``None`` uses the field; a (traced) boolean array selects per call."""
        check_placement(self.peri_norm, self.pre_norm if pre_norm is None else pre_norm)
        if pre_norm is not None:
            for norm, sublayer in ((self.ln_1, self.attn_branch), (self.ln_2, self.mlp_branch)):
                y = self.residual(x, sublayer(jnp.where(pre_norm, norm(x), x)))
                x = jnp.where(pre_norm, y, norm(y))
            return x
        if self.pre_norm:
            x = self.residual(x, self.attn_branch(self.ln_1(x)))
            x = self.residual(x, self.mlp_branch(self.ln_2(x)))
        else:
            x = self.ln_1(self.residual(x, self.attn(x)))
            x = self.ln_2(self.residual(x, self.mlp(x)))
        return x


def make_block(config: StressConfig, pre_norm: bool = True, **kwargs) -> Block:
    """The :class:`Block` that ``config`` describes (``kwargs``, e.g. ``name``, go to the module)."""
    c = config
    return Block(c.width, c.heads, pre_norm, c.norm, c.causal, c.init, c.activation, c.mlp_ratio, c.zero_qk,
                 c.residual_scale, c.branch_init_scale, c.peri_norm, **kwargs)


class TinyLM(nn.Module):
    """Embedding + positions, ``layers`` blocks, (Pre-LN only) a final norm, output logits."""

    config: StressConfig
    pre_norm: bool

    @nn.compact
    def __call__(self, tokens):
        c = self.config
        embed = nn.Embed(c.vocab_size, c.width, embedding_init=nn.initializers.normal(c.embedding_std),
                         name="embedding")
        start = nn.initializers.zeros_init() if c.positions == "zeros" else (
            lambda key, shape: sinusoidal_positions(shape[1], shape[2]))
        position = self.param("position", start, (1, c.sequence_length, c.width))
        x = embed_tokens(embed.embedding, position, tokens, c)
        for i in range(c.layers):
            x = make_block(c, self.pre_norm, name=f"block_{i}")(x)
        if self.pre_norm or c.post_final_norm:
            x = NORM_LAYERS[c.norm](name="final_norm")(x)
        if c.tied_readout:  # the output layer is the embedding itself
            return embed.attend(x)
        head = nn.Dense(c.vocab_size, use_bias=False, kernel_init=nn.initializers.normal(c.readout_std),
                        name="output")
        return head(x)


def make_model(config: StressConfig, pre_norm: bool) -> TinyLM:
    check_placement(config.peri_norm, pre_norm)
    return TinyLM(config, pre_norm)


def init_params(config: StressConfig, pre_norm: bool, key=None):
    """The initial parameters, from ``key`` (default ``PRNGKey(config.seed)``, as in the article)."""
    key = jax.random.PRNGKey(config.seed) if key is None else key
    tokens = jnp.zeros((config.batch_size, config.sequence_length), dtype=jnp.int32)
    return make_model(config, pre_norm).init(key, tokens)["params"]
