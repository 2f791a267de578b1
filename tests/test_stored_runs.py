"""The appendix's catalogue of stored runs (:mod:`lnworked.stress.stored`): every reader of
:mod:`lnworked.stress.committed` is in it, each row carries the command that reproduces it, and the
chapters that read stored runs point to it instead of printing command lines."""

import inspect
import json
import re
from pathlib import Path

from lnworked.stress import committed
from lnworked.stress.stored import STORED_RUNS, stored_runs, stored_runs_markdown

BOOK = Path(__file__).resolve().parents[1] / "book" / "chapters"


def test_every_committed_reader_is_in_the_catalogue():
    readers = {name for name, f in inspect.getmembers(committed, inspect.isfunction) if name.startswith("committed_")}
    named = set()
    for _, runs in STORED_RUNS:
        for _, reader in runs:
            code = reader.__code__
            named |= {n for n in code.co_names + code.co_freevars if n.startswith("committed_")}
            named.add(getattr(reader, "__name__", ""))
    assert readers <= named, sorted(readers - named)


def test_the_markdown_has_one_row_per_stored_run_with_its_command():
    text = stored_runs_markdown()
    read = stored_runs()
    rows = [line for line in text.splitlines() if line.startswith("| ") and not line.startswith("| stored run")]
    assert len(rows) == sum(len(runs) for _, runs in read)
    whats = [what for _, runs in read for what, _ in runs]
    assert len(set(whats)) == len(whats)  # each row names one stored run
    for (section, runs) in read:
        assert f"**{section}**" in text
        for what, about in runs:
            row = next(r for r in rows if r.startswith(f"| {what} |"))
            command = re.sub(r"\s*--device(=|\s+)\S+", "", about["command"])
            assert command.split(" --out")[0] in row and "lnworked stress" in row


def test_chapters_six_to_eight_point_to_the_appendix_instead_of_printing_commands():
    for name in ("05_why_warmup", "05_warmup_over_training", "05_warmup_leaves", "05_threshold_runs", "05_warmup_answer",
                 "05_why_sensitive",
                 "06_wider_family"):
        cells = json.loads((BOOK / f"{name}.ipynb").read_text(encoding="utf-8"))["cells"]
        markdown = "".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
        assert "How this page was computed" not in markdown and "provenance" not in markdown, name
        assert "12_appendix_runs" in markdown, name
