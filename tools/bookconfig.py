"""The instructor switch: a copy of the book's ``_config.yml`` that hides every solution.

sphinx-exercise drops all ``solution`` blocks when the Sphinx option ``hide_solutions`` is
true. Jupyter Book 1.x reads one config file (``--config`` replaces ``_config.yml``, it
does not merge), so rather than keep a second, drifting copy by hand this writes one::

    python tools/bookconfig.py book/_config.yml book/_build/_config_no_solutions.yml
    jupyter-book build book --config book/_build/_config_no_solutions.yml \\
        --path-output book/_build/no_solutions

Jupyter Book resolves ``sphinx.local_extensions`` paths relative to the config file, so
the copy gets them as absolute paths; the other paths (bibliography) are relative to the
book folder and stay as they are. The copy may therefore live anywhere.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

__all__ = ["without_solutions", "main"]


def without_solutions(config: dict, config_dir=".") -> dict:
    """``config`` with ``sphinx.config.hide_solutions = True`` and absolute local-extension paths.

    ``config_dir`` is the folder of the original config file. The input is not changed.
    """
    out = dict(config)
    sphinx = dict(out.get("sphinx") or {})
    if sphinx.get("local_extensions"):
        sphinx["local_extensions"] = {
            name: str((Path(config_dir) / path).resolve()) for name, path in sphinx["local_extensions"].items()
        }
    sphinx_config = dict(sphinx.get("config") or {})
    sphinx_config["hide_solutions"] = True
    sphinx["config"] = sphinx_config
    out["sphinx"] = sphinx
    return out


def main(argv=None) -> int:
    import yaml

    parser = argparse.ArgumentParser(prog="python tools/bookconfig.py", description=__doc__.split("\n")[0])
    parser.add_argument("source", help="the book's _config.yml")
    parser.add_argument("target", help="where to write the copy without solutions")
    args = parser.parse_args(argv)
    try:
        config = yaml.safe_load(Path(args.source).read_text(encoding="utf-8")) or {}
        Path(args.target).parent.mkdir(parents=True, exist_ok=True)
        Path(args.target).write_text(yaml.safe_dump(without_solutions(config, Path(args.source).parent), sort_keys=False, allow_unicode=True),
                                     encoding="utf-8")
    except (OSError, yaml.YAMLError) as err:
        print(f"bookconfig: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
