"""`lnworked practice make` on a 30-student roster: with the PDFs and without (`--no-pdf`).

Generates a roster of ``--students`` names (default 30, two of them with a non-ASCII letter
and a comma, as in the tests), then runs ``lnworked practice make`` in a fresh subprocess for
each mode, alternating the modes ``--repeats`` times in one run so both see the same machine
state. Prints the wall time of each run, the median per mode and the ratio
with PDFs / without, and writes the numbers as JSON (``--json``, default
``practice-make.json`` in the current folder). The PDFs need headless Chromium; without it only
the ``--no-pdf`` mode runs and the ratio is left out.

Not a test (the project does not time tests): run it by hand,
``.venv/bin/python benchmarks/practice_make.py``.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SEED = 2024


def write_roster(path: Path, students: int) -> Path:
    """A CSV roster with a ``student`` column: ``student00`` ..., plus two awkward names."""
    names = [f"student{i:02d}" for i in range(max(students - 2, 0))] + ["Zoë O'Brien", "ana,lee"]
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["student"])
        writer.writerows([name] for name in names[:students])
    return path


def run_make(roster: Path, out: Path, pdf: bool) -> float:
    """Wall seconds of ``lnworked practice make`` in a fresh Python process (import included)."""
    command = [sys.executable, "-m", "lnworked.cli", "practice", "make", "--roster", str(roster),
               "--seed", str(SEED), "--out", str(out)]
    if not pdf:
        command.append("--no-pdf")
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, cwd=ROOT)
    return time.perf_counter() - start


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=30)
    parser.add_argument("--repeats", type=int, default=1, help="runs per mode, alternated")
    parser.add_argument("--json", type=Path, default=Path("practice-make.json"), help="where to write the results")
    args = parser.parse_args(argv)

    from lnworked.practice.pdf import find_chromium

    modes = {"no_pdf": False}
    if find_chromium() is not None:
        modes["with_pdf"] = True
    else:
        print("headless Chromium not found: only the --no-pdf mode runs", file=sys.stderr)
    times: dict[str, list[float]] = {mode: [] for mode in modes}
    with tempfile.TemporaryDirectory() as tmp:
        roster = write_roster(Path(tmp) / "roster.csv", args.students)
        for repeat in range(args.repeats):
            for mode, pdf in modes.items():
                seconds = run_make(roster, Path(tmp) / f"{mode}-{repeat}", pdf)
                times[mode].append(seconds)
                print(f"{mode:8s} run {repeat + 1}: {seconds:6.1f} s")

    medians = {mode: statistics.median(values) for mode, values in times.items()}
    print(f"students: {args.students}, cpus: {os.cpu_count()}")
    for mode, seconds in medians.items():
        print(f"median {mode:8s}: {seconds:6.1f} s")
    result = {"students": args.students, "repeats": args.repeats, "seconds": times, "median": medians,
              "cpus": os.cpu_count(), "machine": platform.machine(), "python": platform.python_version()}
    if "with_pdf" in medians:
        ratio = medians["with_pdf"] / medians["no_pdf"]
        result["ratio_with_pdf_over_no_pdf"] = ratio
        print(f"with PDFs / without: {ratio:.2f}")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
