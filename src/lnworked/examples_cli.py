"""``lnworked examples``: the worked-example registry as a table or as JSON."""

from __future__ import annotations

import json

# numpy, tabulate and the registry load when the subcommand runs, not when `lnworked` starts.

_AGREES = {True: "yes", False: "NO (erratum)", None: "-"}


def register(subparsers) -> None:
    parser = subparsers.add_parser("examples", help="list every worked example of the seed texts")
    parser.add_argument("--json", action="store_true",
                        help="print the records as a JSON list (with every named quantity)")
    parser.set_defaults(func=run)


def all_examples():
    """The registry's records (:func:`lnworked.examples.all_examples`), imported on first use."""
    from lnworked.examples import all_examples as records

    return records()


def _short(value, width: int = 44) -> str:
    import numpy as np

    if hasattr(value, "items"):
        text = ", ".join(f"{k}: {_short(v, 20)}" for k, v in value.items())
    elif isinstance(value, (list, tuple, np.ndarray)) and not isinstance(value, str):
        text = "(" + ", ".join(_short(v, 12) for v in np.ravel(np.asarray(value, dtype=object))) + ")"
    elif isinstance(value, float):
        text = f"{value:.6g}"
    else:
        text = str(value)
    return text if len(text) <= width else text[: width - 1] + "…"


def run(args) -> int:
    from tabulate import tabulate

    records = all_examples()
    if args.json:
        print(json.dumps([r.to_dict() for r in records], indent=2, ensure_ascii=False))
        return 0
    rows = [(r.id, _short("; ".join(q.label for q in r.results.values()), 40), _short(r.computed),
             _short(r.stated), _AGREES[r.agrees]) for r in records]
    print(tabulate(rows, headers=("id", "result", "computed", "stated", "agrees"), tablefmt="plain",
                   disable_numparse=True))
    return 0
