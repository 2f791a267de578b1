"""Input checks shared by the library: every bad input raises ``ValueError`` naming the argument.

Arrays may be NumPy or JAX. Values inside a JAX trace (``jit``, ``grad``, ``jacfwd``) are
abstract and cannot be inspected, so checks on *values* (finiteness, degeneracy) are
skipped there; checks on *shapes* always run.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

__all__ = [
    "array_module",
    "is_traced",
    "as_array",
    "check_vector_args",
    "check_eps",
    "check_int",
    "check_depth",
    "check_positive",
    "check_fraction",
]


def _is_jax_array(x) -> bool:
    try:
        import jax
    except ImportError:  # pragma: no cover - jax is a dependency
        return False
    return isinstance(x, jax.Array)


def is_traced(x) -> bool:
    """True for an abstract JAX value inside a transformation (its values are unknown)."""
    try:
        import jax
    except ImportError:  # pragma: no cover
        return False
    return isinstance(x, jax.core.Tracer)


def array_module(x):
    """``jax.numpy`` for a JAX array, else ``numpy``."""
    if _is_jax_array(x):
        import jax.numpy as jnp

        return jnp
    return np


def as_array(x, name: str):
    """``x`` as a float array (JAX arrays stay JAX), checked to be finite and non-empty."""
    if _is_jax_array(x):
        import jax.numpy as jnp

        if not jnp.issubdtype(x.dtype, jnp.inexact):  # integers: gamma = 2.5 must not become 2
            x = x.astype(jnp.result_type(float))
    else:
        try:
            x = np.asarray(x, dtype=float)
        except (TypeError, ValueError) as err:
            raise ValueError(f"{name}: expected numbers, got {x!r} ({err})") from None
    if x.ndim == 0:
        raise ValueError(f"{name}: expected a vector (at least one axis), got a scalar")
    if x.shape[-1] == 0 or x.size == 0:
        raise ValueError(f"{name}: the vector is empty; a norm needs at least one feature")
    if not is_traced(x) and not bool(np.all(np.isfinite(np.asarray(x)))):
        raise ValueError(f"{name}: contains NaN or infinity; all values must be finite")
    return x


def _as_scalar(value, name: str):
    """A scalar ``gamma`` or ``beta``: a finite number (an abstract JAX scalar passes as is)."""
    if is_traced(value):
        return value
    try:
        scalar = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name}: expected a number or a vector of numbers, got {value!r}") from None
    if not math.isfinite(scalar):
        raise ValueError(f"{name}: must be finite, got {value!r}")
    return scalar


def check_vector_args(x, gamma, beta):
    """Validate ``x`` and the affine parameters; fill defaults gamma = 1, beta = 0.

    ``gamma`` and ``beta`` must have the shape of the last axis of ``x`` (or of ``x``).
    """
    x = as_array(x, "x")
    xp = array_module(x)
    d = x.shape[-1]
    out = []
    for name, value, default in (("gamma", gamma, 1.0), ("beta", beta, 0.0)):
        if value is None:
            out.append(xp.full((d,), default, dtype=x.dtype))
            continue
        value = as_array(value, name) if np.ndim(value) > 0 else _as_scalar(value, name)
        if np.ndim(value) == 0:
            value = xp.full((d,), value, dtype=x.dtype)
        elif tuple(value.shape) not in ((d,), tuple(x.shape)):
            raise ValueError(
                f"{name}: shape {tuple(value.shape)} does not match x's last axis ({d},) "
                f"or x's shape {tuple(x.shape)}"
            )
        out.append(value)
    return x, out[0], out[1]


def check_eps(eps) -> None:
    """``eps`` must be a finite number >= 0."""
    if not isinstance(eps, numbers.Real) or not math.isfinite(eps) or eps < 0:
        raise ValueError(f"eps: must be a finite number >= 0, got {eps!r}")


def check_int(value, name: str, minimum: int | None = None, maximum: int | None = None) -> int:
    """An integer (not a bool) with ``minimum <= value <= maximum`` where those bounds are given."""
    if minimum is not None and maximum is not None:
        bounds = f" from {minimum} to {maximum}"
    elif minimum is not None or maximum is not None:
        bounds = f" >= {minimum}" if minimum is not None else f" <= {maximum}"
    else:
        bounds = ""
    if (isinstance(value, bool) or not isinstance(value, numbers.Integral)
            or (minimum is not None and value < minimum) or (maximum is not None and value > maximum)):
        raise ValueError(f"{name}: must be an integer{bounds}, got {value!r}")
    return int(value)


def check_depth(value, name: str = "layers") -> int:
    """A depth (number of layers or additions) must be an integer >= 1."""
    return check_int(value, name, minimum=1)


def check_positive(value, name: str) -> float:
    """A finite number > 0 (e.g. a factor whose logarithm is needed)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value) or value <= 0:
        raise ValueError(f"{name}: must be a finite number > 0, got {value!r}")
    return float(value)


def check_fraction(value, name: str) -> float:
    """A number strictly between 0 and 1."""
    value = check_positive(value, name)
    if value >= 1:
        raise ValueError(f"{name}: must be < 1, got {value!r}")
    return value
