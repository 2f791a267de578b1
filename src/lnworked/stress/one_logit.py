"""One step on one logit: the smallest model of a step that leaves its tangent.

One example with two classes, whose loss depends on the parameters only through the logit
margin ``o`` (the right class's logit minus the other's), is the logistic loss

    phi(o) = ln(1 + e^(-o)),        phi'(o) = -1 / (1 + e^o),        phi''(o) = e^o / (1 + e^o)^2.

It starts at ``o_0 = 0``, a uniform guess (``phi(0) = ln 2``, ``phi'(0) = -1/2``,
``phi''(0) = 1/4``), and a step whose full length moves the logit by ``a`` (the logit's move)
is walked to the fraction ``t`` of its length, so that ``o = a t``. Along it

    loss change     Delta(t) = phi(a t) - phi(0) = ln(1 + e^(-a t)) - ln 2,
    tangent         T(t)     = phi'(0) a t       = -a t / 2        (the promise at t = 1: a / 2),
    delivered share          = Delta(t) / T(t)   = (2 / u) (ln 2 - ln(1 + e^(-u))),   u = a t.

The share depends on ``a`` and ``t`` only through the logit's move ``u = a t``. It falls from 1
at ``u = 0`` (second order: ``1 - u / 4``) towards 0, and reaches one half at one move
:data:`HALF_SHARE_MOVE` ``= u_half``; so the step of move ``a`` keeps half its promise at
``t_half = u_half / a``: a logit that moves ``k`` times as far per unit of step has a safe point
``k`` times nearer.
"""

from __future__ import annotations

import math

import numpy as np

from lnworked.validation import check_positive

__all__ = ["logistic_loss", "one_logit_walk", "one_logit_share", "HALF_SHARE_MOVE", "one_logit_half_point"]


def logistic_loss(o):
    """``phi(o) = ln(1 + e^(-o))``, the two-class cross-entropy of the logit margin ``o`` (nats)."""
    return np.logaddexp(0.0, -np.asarray(o, dtype=float))


def one_logit_walk(move: float, t):
    """The loss change ``ln(1 + e^(-move t)) - ln 2`` and its tangent ``-move t / 2`` at the positions
    ``t`` along a step that moves the logit by ``move`` at ``t = 1``, from ``o_0 = 0``."""
    move = check_positive(move, "move")
    t = np.asarray(t, dtype=float)
    return logistic_loss(move * t) - math.log(2), -move * t / 2


def one_logit_share(move: float, t=1.0):
    """The delivered share ``(2 / u) (ln 2 - ln(1 + e^(-u)))`` of the step at ``t``, ``u = move t``;
    1 at ``t = 0``, where the loss lies on its tangent."""
    move = check_positive(move, "move")
    u = move * np.asarray(t, dtype=float)
    safe_u = np.where(u > 0, u, 1.0)
    share = 2 * (math.log(2) - logistic_loss(safe_u)) / safe_u
    return np.where(u > 0, share, 1.0)


def one_logit_share_taylor(move: float, t=1.0):
    """The delivered share to second order in ``u = move t``: ``1 - u / 4`` (Taylor's theorem on
    :func:`one_logit_share`, whose loss has ``phi''(0) / 2 = 1 / 8``); close to it for small ``u``
    only (at ``u = 4`` it gives 0, the exact share 0.34)."""
    move = check_positive(move, "move")
    return 1 - move * np.asarray(t, dtype=float) / 4


def _half_share_move() -> float:
    """The move ``u`` at which the share falls to one half, by bisection on ``[1, 4]`` (the share
    decreases in ``u``: 0.76 at ``u = 1``, 0.34 at ``u = 4``)."""
    low, high = 1.0, 4.0
    for _ in range(60):
        mid = (low + high) / 2
        low, high = (mid, high) if one_logit_share(mid) > 0.5 else (low, mid)
    return (low + high) / 2


#: The logit's move ``u = a t`` at which a step keeps half its promise.
HALF_SHARE_MOVE = _half_share_move()


def one_logit_half_point(move: float) -> float:
    """The position ``t_half = HALF_SHARE_MOVE / move`` at which the step that moves the logit by
    ``move`` keeps half its promise (beyond the full step, ``t_half > 1``, when ``move`` is small)."""
    move = check_positive(move, "move")
    return HALF_SHARE_MOVE / move
