"""Results computed ahead of time and shipped with the package, each with its provenance.

Some experiments take longer than a chapter should (a grid of 54 runs, eight seeds of a
180-step run). They were run with the command recorded beside them and their tables are
installed with ``lnworked`` (``lnworked/data/``), so a chapter reads them the same way in
the book's build, in a clone and in Colab. Each reader returns ``(table, provenance)``,
where ``provenance`` is the dict that :func:`lnworked.stress.cli.provenance` wrote:
command, device, date, seconds, library versions.
"""

from __future__ import annotations

import json
from importlib import resources

__all__ = ["committed_sweep", "committed_seed_runs"]


def _data(name: str):
    return resources.files("lnworked") / "data" / name


def _provenance(name: str) -> dict:
    return json.loads(_data(name).read_text(encoding="utf-8"))


def committed_sweep():
    """``(rows, provenance)`` of the committed ``lnworked stress sweep`` (``sweep.csv``)."""
    from lnworked.stress.sweep import read_sweep_csv

    with resources.as_file(_data("sweep.csv")) as path:
        return read_sweep_csv(path), _provenance("sweep-provenance.json")


def committed_seed_runs():
    """``({seed: RunResult}, provenance)`` of the committed ``lnworked stress seeds`` (``seeds.csv``)."""
    from lnworked.stress.sweep import read_seed_runs_csv

    with resources.as_file(_data("seeds.csv")) as path:
        return read_seed_runs_csv(path), _provenance("seeds-provenance.json")
