"""The article's own per-step log of its stress test (seed 002, Zhejian Peng).

Read from ``lnworked/data/article-stress-test.csv`` (the CSV published beside the
article; see ``data/README.md``). Its final figures are computed here, never typed in.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from importlib import resources

import numpy as np

__all__ = ["ArticleRun", "article_runs", "article_run_for"]


@dataclass(frozen=True)
class ArticleRun:
    name: str
    loss: np.ndarray
    gradient_norm: np.ndarray
    learning_rate: np.ndarray

    @property
    def final_loss(self) -> float:
        return float(self.loss[-1])

    @property
    def max_gradient_norm(self) -> float:
        return float(self.gradient_norm.max())


def article_runs() -> list[ArticleRun]:
    """The article's three runs, in the order of its CSV."""
    text = resources.files("lnworked").joinpath("data/article-stress-test.csv").read_text(encoding="utf-8")
    rows: dict[str, list] = {}
    for row in csv.DictReader(text.splitlines()):
        rows.setdefault(row["run"], []).append(row)
    return [
        ArticleRun(
            name,
            np.array([float(r["loss"]) for r in rs]),
            np.array([float(r["gradient_norm"]) for r in rs]),
            np.array([float(r["learning_rate"]) for r in rs]),
        )
        for name, rs in rows.items()
    ]


def article_run_for(pre_norm: bool, warmup_steps: int) -> ArticleRun | None:
    """The article's run of the same kind (topology, with or without warmup), if any."""
    for run in article_runs():
        is_pre = run.name.startswith("Pre")
        warmed = "warmup" in run.name and "no warmup" not in run.name
        if is_pre == pre_norm and warmed == (warmup_steps > 0):
            return run
    return None
