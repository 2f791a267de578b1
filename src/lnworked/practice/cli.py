"""``lnworked practice``: list the families, make an assignment, check answers.

    lnworked practice list
    lnworked practice make --roster ROSTER.csv --seed N --out DIR [--families a,b] [--count K]
    lnworked practice check --key DIR/key.json --answers ANSWERS.csv [--out DIR]

Bad arguments raise ValueError, which :func:`lnworked.cli.main` prints as one line (exit 2).
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["register"]

# The subcommands import what they use when they run, so that registering the parser (every
# start of `lnworked`) stays cheap: benchmarks/import_time.py.


def _list(args) -> int:
    from tabulate import tabulate

    from lnworked.practice.export import family_table

    rows = [(name, kind, concept, f"[{exports}]") for name, concept, kind, exports in family_table()]
    print(tabulate(rows, tablefmt="plain"))
    return 0


def _make(args) -> int:
    from lnworked.practice.export import write_all
    from lnworked.practice.roster import read_roster
    from lnworked.practice.variants import assignment_slots, make_assignment

    families = [f.strip() for f in args.families.split(",") if f.strip()] if args.families else None
    slots = assignment_slots(families, args.count)
    students = read_roster(args.roster)
    assignment = make_assignment(args.seed, students, families, args.count)
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out: {out} exists and is not a directory")
    written = write_all(out, args.seed, slots, assignment, html=not args.no_html, pdf=not args.no_pdf)
    print(f"{len(students)} students x {len(slots)} problems; wrote {len(written.paths)} files to {out}")
    for line in written.lines:
        print(f"  {line}")
    return 0


def _check(args) -> int:
    from lnworked.practice.check import grade, load_key, read_answers, summary_text, write_reports

    key = load_key(args.key)
    answers, warnings = read_answers(args.answers)
    rows, more = grade(key, answers)
    out = Path(args.out) if args.out else Path(args.key).parent / "grades"
    paths = write_reports(out, key, rows)
    print(summary_text(key, rows, warnings + more))
    print(f"wrote {', '.join(str(p) for p in paths)}")
    return 0


def register(subparsers) -> None:
    """Add ``practice`` with its subcommands ``list``, ``make`` and ``check``."""
    parser = subparsers.add_parser("practice", help="practice problems: per-student variants, keys, LMS exports")
    sub = parser.add_subparsers(dest="practice_command", required=True)

    p_list = sub.add_parser("list", help="list the problem families")
    p_list.set_defaults(func=_list)

    p_make = sub.add_parser("make", help="write handouts (Markdown, HTML, PDF), answer key, key.json, "
                                         "moodle.xml, gift.txt, canvas-qti.zip")
    p_make.add_argument("--roster", required=True, help="CSV file with a 'student' column")
    p_make.add_argument("--seed", required=True, type=int, help="assignment seed (an integer)")
    p_make.add_argument("--out", required=True, help="output directory")
    p_make.add_argument("--families", help="comma-separated family names (default: all; see 'list')")
    p_make.add_argument("--count", type=int, default=1, help="problems per family (default 1)")
    p_make.add_argument("--no-html", action="store_true", help="no HTML handouts or HTML answer key")
    p_make.add_argument("--no-pdf", action="store_true",
                        help="no PDF handouts or PDF answer key (PDFs need headless Chromium)")
    p_make.set_defaults(func=_make)

    p_check = sub.add_parser("check", help="grade a CSV of answers (columns student, problem, answer)")
    p_check.add_argument("--key", required=True, help="key.json written by 'make'")
    p_check.add_argument("--answers", required=True, help="CSV with columns student, problem, answer")
    p_check.add_argument("--out", help="directory for the reports (default: grades/ next to the key)")
    p_check.set_defaults(func=_check)
