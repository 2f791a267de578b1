"""Choosing the JAX device for the stress test: ``auto``, ``cpu`` or ``gpu``.

``auto`` takes a GPU when JAX has one, else the CPU. Asking for ``gpu`` where JAX has no
GPU backend raises ``ValueError`` with a one-line hint on installing a GPU build. JAX is
imported on first use, so the choices can be read (by the CLI's parser) without it.
"""

from __future__ import annotations

__all__ = ["DEVICE_CHOICES", "GPU_INSTALL_HINT", "select_device", "describe_device"]

DEVICE_CHOICES = ("auto", "cpu", "gpu")
GPU_INSTALL_HINT = (
    'install a GPU build of JAX, e.g. pip install -U "jax[cuda12]" (or "jax[cuda13]"), '
    "or use --device cpu"
)


def _gpus():
    import jax

    try:
        return jax.devices("gpu")
    except RuntimeError:
        return []


def select_device(requested: str = "auto"):
    """The ``jax.Device`` named by ``requested`` (one of :data:`DEVICE_CHOICES`)."""
    import jax

    if requested not in DEVICE_CHOICES:
        raise ValueError(f"device: must be one of {DEVICE_CHOICES}, got {requested!r}")
    if requested == "cpu":
        return jax.devices("cpu")[0]
    gpus = _gpus()
    if gpus:
        return gpus[0]
    if requested == "gpu":
        raise ValueError(f"device: a GPU was requested but JAX has none; {GPU_INSTALL_HINT}")
    return jax.devices("cpu")[0]


def describe_device(device) -> str:
    """E.g. ``"cpu:0 (cpu)"`` or ``"gpu:0 (NVIDIA H100 80GB HBM3)"``."""
    return f"{device.platform}:{device.id} ({device.device_kind})"
