"""Results computed ahead of time and shipped with the package, each with its provenance.

Some experiments take longer than a chapter should (a grid of 54 runs, eight seeds of a
180-step run). They were run with the command recorded beside them and their tables are
installed with ``lnworked`` (``lnworked/data/``), so a chapter reads them the same way in
the book's build, in a clone and in Colab. Each reader returns ``(table, provenance)``,
where ``provenance`` is the dict that :func:`lnworked.stress.cli.provenance` wrote:
command, device, date, seconds, library versions. Give ``folder`` (the ``--out`` of your
own ``lnworked stress sweep`` or ``seeds``) to read that run's files the same way.
"""

from __future__ import annotations

import json
import re
from importlib import resources
from pathlib import Path

__all__ = ["committed_sweep", "committed_sweep_steps", "committed_seed_runs", "committed_step_response",
           "committed_deepnorm", "committed_warmup_sharpness", "committed_first_step", "committed_branch_scale", "committed_family",
           "committed_warmup_schedules", "committed_warmup_holds", "committed_warmup_pre_rates", "committed_warmup_arrival", "committed_warmup_holds_arrival",
           "committed_warmup_divisor_split", "committed_warmup_swap", "committed_warmup_graft",
           "committed_warmup_workable", "committed_warmup_workable_sharpness",
           "committed_warmup_holds_more_seeds", "committed_warmup_schedules_more_seeds",
           "committed_warmup_swap_more_seeds", "committed_warmup_graft_more_seeds",
           "provenance_markdown", "provenance_table"]


def _data(name: str, folder):
    return resources.files("lnworked") / "data" / name if folder is None else Path(folder) / name


def _read(table: str, provenance: str, folder, reader):
    with resources.as_file(_data(table, folder)) as path:
        rows = reader(path)
    return rows, json.loads(_data(provenance, folder).read_text(encoding="utf-8"))


def committed_sweep(folder=None):
    """``(rows, provenance)`` of the committed ``lnworked stress sweep`` (``sweep.csv``), or of ``folder``'s."""
    from lnworked.stress.sweep import read_sweep_csv

    return _read("sweep.csv", "sweep-provenance.json", folder, read_sweep_csv)


def committed_sweep_steps(folder=None):
    """``({(variant, layers, learning_rate, seed): (loss, gradient_norm)}, provenance)``: the
    same sweep's per-step logs (``sweep-steps.csv``), or ``folder``'s."""
    from lnworked.stress.sweep import read_sweep_steps_csv

    return _read("sweep-steps.csv", "sweep-provenance.json", folder, read_sweep_steps_csv)


def committed_seed_runs(folder=None):
    """``({seed: RunResult}, provenance)`` of the committed ``lnworked stress seeds`` (``seeds.csv``), or of ``folder``'s."""
    from lnworked.stress.sweep import read_seed_runs_csv

    return _read("seeds.csv", "seeds-provenance.json", folder, read_seed_runs_csv)


def committed_xiong(folder=None):
    """``(rows, provenance)`` of the committed ``lnworked stress xiong`` (``xiong.csv``), or of ``folder``'s."""
    from lnworked.stress.xiong import read_xiong_csv

    return _read("xiong.csv", "xiong-provenance.json", folder, read_xiong_csv)


def committed_xiong_readout(folder=None):
    """``(rows, provenance)`` of the committed ``lnworked stress xiong --readout-swaps``
    (``xiong-readout.csv``), or of ``folder``'s."""
    from lnworked.stress.xiong import read_xiong_csv

    return _read("xiong-readout.csv", "xiong-readout-provenance.json", folder, read_xiong_csv)


def committed_xiong_swap(folder=None):
    """``(rows, provenance)`` of the committed ``lnworked stress xiong --swap FIELD ...``
    (``xiong-swap.csv``), or of ``folder``'s."""
    from lnworked.stress.xiong import read_xiong_csv

    return _read("xiong-swap.csv", "xiong-swap-provenance.json", folder, read_xiong_csv)


def committed_profiles(folder=None):
    """``(rows, provenance)`` of the committed ``lnworked stress profiles`` (``profiles.csv``), or of ``folder``'s."""
    from lnworked.stress.profiles import read_profiles_csv

    return _read("profiles.csv", "profiles-provenance.json", folder, read_profiles_csv)


def committed_step_response(folder=None):
    """``(rows, provenance)`` of the committed ``lnworked stress profiles --step-response``
    (``step-response.csv``), or of ``folder``'s."""
    from lnworked.stress.profiles import read_step_response_csv

    return _read("step-response.csv", "step-response-provenance.json", folder, read_step_response_csv)


def committed_warmup_schedules(folder=None):
    """``(rows, provenance)`` of the committed ``lnworked stress warmup-schedules``
    (``warmup-schedules.csv``), or of ``folder``'s."""
    from lnworked.stress.warmup_schedules import read_schedule_csv

    return _read("warmup-schedules.csv", "warmup-schedules-provenance.json", folder, read_schedule_csv)


def committed_warmup_pre_rates(folder=None):
    """``(rows, provenance)`` of the committed ``lnworked stress warmup-pre-rates`` (``warmup-pre-rates.csv``,
    :func:`~lnworked.stress.warmup_schedules.read_schedule_csv`'s rows: Pre-LN at the constant rates of
    :data:`~lnworked.stress.warmup_schedules.PRE_RATES`), or of ``folder``'s."""
    from lnworked.stress.warmup_schedules import read_schedule_csv

    return _read("warmup-pre-rates.csv", "warmup-pre-rates-provenance.json", folder, read_schedule_csv)


def committed_warmup_holds(folder=None):
    """``(rows, provenance)`` of the committed ``lnworked stress warmup-holds``
    (``warmup-holds.csv``, :func:`~lnworked.stress.warmup_schedules.read_schedule_csv`'s rows), or of
    ``folder``'s."""
    from lnworked.stress.warmup_schedules import read_schedule_csv

    return _read("warmup-holds.csv", "warmup-holds-provenance.json", folder, read_schedule_csv)


def committed_warmup_holds_more_seeds(folder=None):
    """``(rows, provenance)`` of the committed ``lnworked stress warmup-holds`` on eight more seeds,
    10 to 17 (``warmup-holds-more-seeds.csv``, the rows of :func:`committed_warmup_holds`), or of
    ``folder``'s: a check of the holds' outcome on seeds that chapter 6's other runs do not use."""
    from lnworked.stress.warmup_schedules import read_schedule_csv

    return _read("warmup-holds-more-seeds.csv", "warmup-holds-more-seeds-provenance.json", folder, read_schedule_csv)


def committed_warmup_schedules_more_seeds(folder=None):
    """``(rows, provenance)`` of the committed ``lnworked stress warmup-schedules`` on eight more seeds,
    10 to 17 (``warmup-schedules-more-seeds.csv``, the rows of :func:`committed_warmup_schedules`), or of
    ``folder``'s: every schedule of the grid on the seeds of :func:`committed_warmup_holds_more_seeds`."""
    from lnworked.stress.warmup_schedules import read_schedule_csv

    return _read("warmup-schedules-more-seeds.csv", "warmup-schedules-more-seeds-provenance.json", folder,
                 read_schedule_csv)


def committed_warmup_reread(folder=None):
    """``(rows, provenance)`` of the committed ``lnworked stress warmup-reread``
    (``warmup-reread.csv``, :func:`committed_warmup_divisor_split`'s columns at
    :data:`~lnworked.stress.arrival.REREAD_STEPS`), or of ``folder``'s."""
    from lnworked.stress.arrival import read_split_csv

    return _read("warmup-reread.csv", "warmup-reread-provenance.json", folder, read_split_csv)


def committed_warmup_sharpness(folder=None):
    """``(rows, provenance)`` of the committed ``lnworked stress warmup-sharpness``
    (``warmup-sharpness.csv``), or of ``folder``'s."""
    from lnworked.stress.sharpness import read_sharpness_csv

    return _read("warmup-sharpness.csv", "warmup-sharpness-provenance.json", folder, read_sharpness_csv)


def committed_warmup_workable_sharpness(folder=None):
    """``(rows, provenance)`` of the committed ``lnworked stress warmup-workable-sharpness``
    (``warmup-workable-sharpness.csv``: the linear warmup to the full rate at step 60), or of ``folder``'s."""
    from lnworked.stress.sharpness import read_sharpness_csv

    return _read("warmup-workable-sharpness.csv", "warmup-workable-sharpness-provenance.json", folder,
                 read_sharpness_csv)


def committed_warmup_arrival(folder=None):
    """``(rows, provenance)`` of the committed ``lnworked stress warmup-arrival``
    (``warmup-arrival.csv``), or of ``folder``'s."""
    from lnworked.stress.sharpness import read_sharpness_csv

    return _read("warmup-arrival.csv", "warmup-arrival-provenance.json", folder, read_sharpness_csv)


def committed_warmup_holds_arrival(folder=None):
    """``(rows, provenance)`` of the committed ``lnworked stress warmup-holds-arrival``
    (``warmup-holds-arrival.csv``), or of ``folder``'s."""
    from lnworked.stress.sharpness import read_sharpness_csv

    return _read("warmup-holds-arrival.csv", "warmup-holds-arrival-provenance.json", folder, read_sharpness_csv)


def committed_warmup_divisor_split(folder=None, placement: str = "post"):
    """``(rows, provenance)`` of the committed ``lnworked stress warmup-divisor-split``
    (``warmup-divisor-split.csv``), or of ``folder``'s; ``placement="pre"``: the same for Pre-LN
    (``--placement pre``, stored as ``warmup-divisor-split-pre.csv``)."""
    from lnworked.stress.arrival import read_split_csv

    if placement not in ("post", "pre"):
        raise ValueError(f"placement: must be 'post' or 'pre', got {placement!r}")
    name = "warmup-divisor-split" + ("-pre" if placement == "pre" else "")
    return _read(f"{name}.csv", f"{name}-provenance.json", folder, read_split_csv)


def committed_warmup_swap(folder=None):
    """``(rows, provenance)`` of the committed ``lnworked stress warmup-swap`` (``warmup-swap.csv``),
    or of ``folder``'s."""
    from lnworked.stress.state_swap import read_swap_csv

    return _read("warmup-swap.csv", "warmup-swap-provenance.json", folder, read_swap_csv)

def committed_warmup_graft(folder=None):
    """``(rows, provenance)`` of the committed ``lnworked stress warmup-graft`` (``warmup-graft.csv``),
    or ``folder``'s."""
    from lnworked.stress.state_swap import read_graft_csv

    return _read("warmup-graft.csv", "warmup-graft-provenance.json", folder, read_graft_csv)


def committed_warmup_swap_more_seeds(folder=None):
    """``(rows, provenance)`` of the committed ``lnworked stress warmup-swap`` on the eight more seeds 10 to 17
    of :func:`committed_warmup_holds_more_seeds` (``warmup-swap-more-seeds.csv``, the rows of
    :func:`committed_warmup_swap`), or of ``folder``'s."""
    from lnworked.stress.state_swap import read_swap_csv

    return _read("warmup-swap-more-seeds.csv", "warmup-swap-more-seeds-provenance.json", folder, read_swap_csv)


def committed_warmup_graft_more_seeds(folder=None):
    """``(rows, provenance)`` of the committed ``lnworked stress warmup-graft`` on the eight more seeds 10 to 17
    (``warmup-graft-more-seeds.csv``, the rows of :func:`committed_warmup_graft`), or of ``folder``'s."""
    from lnworked.stress.state_swap import read_graft_csv

    return _read("warmup-graft-more-seeds.csv", "warmup-graft-more-seeds-provenance.json", folder, read_graft_csv)


def committed_warmup_workable(folder=None, at=None):
    """``(rows, provenance)`` of the committed ``lnworked stress warmup-workable``
    (``warmup-workable.csv``, :func:`~lnworked.stress.workable.read_workable_csv`'s rows), or of ``folder``'s.
    With ``at`` (one of :data:`~lnworked.stress.workable.WORKABLE_CURVE_AT`), the run of ``--at`` that step
    instead, stored as ``warmup-workable-at<at>.csv``."""
    from lnworked.stress.workable import WORKABLE_AT, WORKABLE_CURVE_AT, read_workable_csv

    if at is None or at == WORKABLE_AT:
        return _read("warmup-workable.csv", "warmup-workable-provenance.json", folder, read_workable_csv)
    if at not in WORKABLE_CURVE_AT:
        raise ValueError(f"at: the committed runs stop at steps {sorted({WORKABLE_AT, *WORKABLE_CURVE_AT})}, got {at!r}")
    return _read(f"warmup-workable-at{at}.csv", f"warmup-workable-at{at}-provenance.json", folder, read_workable_csv)


def committed_deepnorm(folder=None):
    """``(rows, provenance)`` of the committed ``lnworked stress deepnorm`` (``deepnorm.csv``), or of ``folder``'s."""
    from lnworked.stress.deepnorm import read_deepnorm_csv

    return _read("deepnorm.csv", "deepnorm-provenance.json", folder, read_deepnorm_csv)


def committed_first_step(folder=None):
    """``(rows, provenance)`` of the committed ``lnworked stress first-step`` (``first-step.csv``), or of ``folder``'s."""
    from lnworked.stress.first_step import read_first_step_csv

    return _read("first-step.csv", "first-step-provenance.json", folder, read_first_step_csv)


def committed_branch_scale(folder=None):
    """``(rows, provenance)`` of the committed ``lnworked stress branch-scale`` (``branch-scale.csv``), or of ``folder``'s."""
    from lnworked.stress.branch_scale import read_branch_scale_csv

    return _read("branch-scale.csv", "branch-scale-provenance.json", folder, read_branch_scale_csv)


def committed_family(folder=None):
    """``(rows, provenance)`` of the committed ``lnworked stress family`` (``family-runs.csv``), or of ``folder``'s."""
    from lnworked.stress.family_runs import read_family_csv

    return _read("family-runs.csv", "family-runs-provenance.json", folder, read_family_csv)


PROVENANCE_KEYS = ("command", "device", "date", "seconds", "rows", "runs")


def _hide_folder(text: str) -> str:
    """``text`` with the folder a command wrote to (``--out``), the computing machine's, shown as ``<folder>``."""
    return re.sub(r"--out(=|\s+)\S+", "--out <folder>", text)


def provenance_table(runs) -> str:
    """Several provenance dicts as one Markdown table, for a page that reads many stored runs:
    ``runs`` a sequence of ``(what, about)``, one row each (what the run is; its command, with
    ``--out`` shown as ``<folder>`` and ``--device`` left out; where, when, and how long it took, in
    minutes, "< 1" under one), then one line of library versions, or one per distinct set, naming its rows.
    ValueError (naming ``runs``) if it is empty or an ``about`` lacks a ``versions`` mapping."""
    runs = list(runs)
    if not runs or any(not isinstance(about, dict) or not isinstance(about.get("versions"), dict)
                       for _, about in runs):
        raise ValueError("runs: needs (what, provenance dict with a 'versions' mapping) pairs, at least one")
    lines = ["| stored run | command | computed on | minutes |", "|---|---|---|---:|"]
    versions: dict[str, list[str]] = {}
    for what, about in runs:
        command = _hide_folder(str(about.get("command", "")))
        command = re.sub(r"\s*--device(=|\s+)\S+", "", command)
        device = str(about.get("device", "")).split(" ")[0]
        when = f"{device}, {str(about.get('date', ''))[:10]}".strip(", ")
        seconds = float(about.get("seconds", "nan"))
        minutes = "" if seconds != seconds else "< 1" if seconds < 60 else f"{seconds / 60:.0f}"
        lines.append(f"| {what} | `{command}` | {when} | {minutes} |")
        key = ", ".join(f"{k} {v}" for k, v in about["versions"].items())
        versions.setdefault(key, []).append(what)
    lines.append("")
    if len(versions) == 1:
        lines.append(f"Versions: {next(iter(versions))}.")
    else:
        lines += [f"- versions of {'; '.join(whats)}: {key}" for key, whats in versions.items()]
    return "\n".join(lines)


def provenance_markdown(about: dict) -> str:
    """A provenance dict as a Markdown list, one ``- key: `value``` line per key of
    :data:`PROVENANCE_KEYS` it has, then one line of library versions. The folder a command
    wrote to (``--out``) is the computing machine's, not the reader's: it is shown as
    ``<folder>``. ValueError (naming ``about``) if it has no ``versions`` mapping."""
    if not isinstance(about, dict) or not isinstance(about.get("versions"), dict):
        raise ValueError("about must be a provenance dict with a 'versions' mapping, "
                         f"as lnworked.stress.cli.provenance writes; got {type(about).__name__}")
    shown = {key: _hide_folder(str(about[key])) for key in PROVENANCE_KEYS if key in about}
    items = [f"- {key}: `{value}`" for key, value in shown.items()]
    items.append("- versions: " + ", ".join(f"{k} {v}" for k, v in about["versions"].items()))
    return "\n".join(items)
