"""Every result the book reads that was computed ahead of time, in one catalogue: by the chapter that
reads it, what it is, and the reader of :mod:`lnworked.stress.committed` that loads it with its
provenance (the command that reproduces it, where and when it ran, how long it took, the versions).

The appendix "The stored runs" prints the catalogue, so that a chapter can say where its stored runs
come from in one sentence instead of showing command lines, dates and versions on its page.
"""

from __future__ import annotations

from lnworked.stress import committed as c
from lnworked.stress.committed import provenance_table

__all__ = ["STORED_RUNS", "stored_runs", "stored_runs_markdown"]


def _workable_at(at):
    return lambda: c.committed_warmup_workable(at=at)


def _catalogue():
    from lnworked.stress.workable import WORKABLE_AT, WORKABLE_CURVE_AT

    at_steps = sorted({WORKABLE_AT, *WORKABLE_CURVE_AT})
    return (
        ("Chapter 5, the stress test", (
            ("eight random seeds of each run", c.committed_seed_runs),
            ("the sweep of rates and depths", c.committed_sweep),
            ("the sweep's losses, step by step", c.committed_sweep_steps),
            ("the trained runs' profiles (read in chapter 7)", c.committed_profiles))),
        ("Chapter 6, 6.1 to 6.4: the first step", (
            ("the first step along its line", c.committed_first_step),
            ("one full-rate step from a run's weights (read in 6.8 too)", c.committed_step_response))),
        ("Chapter 6, 6.5: warmup over training", (
            ("every schedule, random seeds 7-9", c.committed_warmup_schedules),
            ("every schedule, random seeds 10-17", c.committed_warmup_schedules_more_seeds),
            ("the flat holds, random seeds 7-9", c.committed_warmup_holds),
            ("the flat holds, random seeds 10-17", c.committed_warmup_holds_more_seeds),
            ("Pre-LN at constant rates", c.committed_warmup_pre_rates))),
        ("Chapter 6, 6.6: what the warmup's steps leave behind", (
            *((f"the warmup continued at four rates from step {at}", _workable_at(at)) for at in at_steps),
            ("the holds with weights and Adam's state exchanged, random seeds 7-9", c.committed_warmup_swap),
            ("the holds with weights and Adam's state exchanged, random seeds 10-17", c.committed_warmup_swap_more_seeds),
            ("the holds with one group of weights exchanged, random seeds 7-9", c.committed_warmup_graft),
            ("the holds with one group of weights exchanged, random seeds 10-17", c.committed_warmup_graft_more_seeds))),
        ("Chapter 6, 6.8: the threshold on the runs", (
            ("the sharpness along the five schedules", c.committed_warmup_sharpness),
            ("the sharpness after the full rate arrives", c.committed_warmup_arrival),
            ("the sharpness where the holds' full rate arrives", c.committed_warmup_holds_arrival),
            ("the held run's divisors and weights exchanged", c.committed_warmup_divisor_split),
            ("the same for Pre-LN, held small", lambda: c.committed_warmup_divisor_split(placement="pre")),
            ("the largest reading, trained again", c.committed_warmup_reread),
            ("the sharpness along the warmup reaching η at step 60", c.committed_warmup_workable_sharpness))),
        ("Chapter 7, branch shares", (
            ("DeepNorm and five other variants, trained", c.committed_deepnorm),
            ("the branch scale, varied", c.committed_branch_scale))),
        ("Chapter 8, the wider family", (
            ("the six trained designs", c.committed_family),)),
        ("Appendix: Xiong et al.'s gradient argument", (
            ("the gradients of the last layers over training", c.committed_xiong),
            ("the readout's gradient", c.committed_xiong_readout),
            ("the gradients with one part exchanged", c.committed_xiong_swap))),
    )


#: ``(section, ((what, reader), ...))`` for every stored result, ``reader()`` returning ``(rows, provenance)``.
STORED_RUNS = _catalogue()


def stored_runs():
    """``[(section, [(what, provenance), ...]), ...]``: the catalogue with each result's provenance read."""
    return [(section, [(what, reader()[1]) for what, reader in runs]) for section, runs in STORED_RUNS]


def stored_runs_markdown() -> str:
    """The catalogue as Markdown: per section a bold line and a table of
    :func:`~lnworked.stress.committed.provenance_table` (what, command, computed on, minutes; versions)."""
    return "\n\n".join(f"**{section}**\n\n{provenance_table(runs)}" for section, runs in stored_runs())
