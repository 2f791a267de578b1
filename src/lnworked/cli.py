"""The ``lnworked`` command.

Subcommands: ``examples`` (the worked-example registry), ``stress`` (the JAX stress test),
``practice`` (problems for instructors). Each subcommand module provides
``register(subparsers)``, which adds its parser and sets ``func(args) -> int``.
Bad arguments print one line on stderr and exit with code 2, never a traceback.
Registering parsers imports no JAX, Flax or Optax (``benchmarks/import_time.py``).
"""

from __future__ import annotations

import argparse
import sys

from lnworked import examples_cli
from lnworked.stress import cli as stress_cli
from lnworked.practice import cli as practice_cli


class UsageError(Exception):
    """A bad argument found after parsing; the CLI prints it and exits with code 2."""


class OneLineParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose errors are one line (no usage block), exit code 2.

    Subparsers inherit the class, so every subcommand behaves the same.
    """

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="lnworked", description="Worked examples of LayerNorm placement (Post-LN vs Pre-LN)."
    )
    subparsers = parser.add_subparsers(dest="command", required=True)
    examples_cli.register(subparsers)
    stress_cli.register(subparsers)
    practice_cli.register(subparsers)
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except (UsageError, ValueError) as err:
        print(f"lnworked {args.command}: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
