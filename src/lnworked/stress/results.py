"""Result records of the stress test: one per run, and one for the whole experiment."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from lnworked.stress.config import RunSpec, StressConfig

__all__ = ["RunResult", "StressResult"]


@dataclass
class RunResult:
    """One run's per-step log (steps 1..n), truncated at its first non-finite value."""

    spec: RunSpec
    loss: np.ndarray
    gradient_norm: np.ndarray
    learning_rate: np.ndarray
    diverged_at: int | None = None

    @property
    def steps(self) -> np.ndarray:
        return np.arange(1, len(self.loss) + 1)

    @property
    def final_loss(self) -> float:
        return float(self.loss[-1]) if len(self.loss) else float("nan")

    @property
    def max_gradient_norm(self) -> float:
        return float(np.max(self.gradient_norm)) if len(self.gradient_norm) else float("nan")

    def summary(self) -> dict:
        return {
            "name": self.spec.name,
            "pre_norm": self.spec.pre_norm,
            "warmup_steps": self.spec.warmup_steps,
            "steps_done": int(len(self.loss)),
            "final_loss": self.final_loss,
            "max_gradient_norm": self.max_gradient_norm,
            "diverged_at": self.diverged_at,
        }


@dataclass
class StressResult:
    """The whole experiment: configuration, device, wall time (of which compiling) and the runs."""

    config: StressConfig
    device: str
    seconds: float
    runs: list[RunResult] = field(default_factory=list)
    interrupted: bool = False
    compile_seconds: float = 0.0

    def summary(self) -> dict:
        return {
            "device": self.device,
            "config": self.config.as_dict(),
            "seconds": float(self.seconds),
            "compile_seconds": float(self.compile_seconds),
            "interrupted": self.interrupted,
            "runs": [r.summary() for r in self.runs],
        }
