"""Attention logits of one random head as its query and key weights grow, with and without QK-norm.

``z_ts = q_t . k_s / sqrt(d)`` is bilinear in ``W_q`` and ``W_k``: multiplying both by ``c``
multiplies every logit by ``c^2``, although the head's input ``u = N(x)`` is normalised.
QK-norm normalises ``q`` and ``k`` before the product, which removes ``c`` (Henry et al.
2020; Dehghani et al. 2023). Used by the wider-family chapter's modern-practice section.
"""

from __future__ import annotations

import math

import numpy as np

from lnworked.blocks import _norm
from lnworked.norms import DEFAULT_EPS
from lnworked.validation import check_int, check_positive

__all__ = ["attention_logit_growth"]


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
