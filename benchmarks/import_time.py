"""Start-up cost of the ``lnworked`` command: ``import lnworked.cli`` in fresh processes.

Measures, in fresh Python processes (median of ``--repeat``), the wall time of
``import lnworked.cli`` plus building the parser (what every subcommand pays), beside a
bare ``python -c pass`` and ``import jax, flax, optax`` (what the stress command alone
pays, on first use), and lists which of jax, flax, optax the CLI import loaded.

    .venv/bin/python benchmarks/import_time.py [--repeat N]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

CASES = {
    "python -c pass": "pass",
    "import lnworked.cli + parser": "import lnworked.cli; lnworked.cli.build_parser()",
    "import jax, flax.linen, optax": "import jax, flax.linen, optax",
}


def _seconds(code: str) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    for name, code in CASES.items():
        times = [_seconds(code) for _ in range(args.repeat)]
        print(f"{name:32} median {statistics.median(times):.3f} s (min {min(times):.3f} s, {args.repeat} runs)")
    probe = "import sys, lnworked.cli; print(sorted(m for m in ('jax', 'flax', 'optax') if m in sys.modules))"
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.strip()
    print(f"heavy modules loaded by import lnworked.cli: {loaded}")


if __name__ == "__main__":
    main()
