"""Book build times: a full clean build, and the rebuild after touching one chapter.

Builds a copy of ``book/`` in a temporary folder (the real ``book/_build`` is left alone)
with the same flags as ``make book`` and prints both wall times and their ratio. Every
chapter executes in the clean build; after touching one chapter only that page is re-read
and re-executed. Not a test: run it by hand, ``.venv/bin/python benchmarks/book_build.py``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def build(book: Path) -> float:
    """Seconds for ``jupyter-book build BOOK -n -W --keep-going``; raises if the build fails."""
    bin_dir = Path(sys.executable).parent
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    start = time.perf_counter()
    subprocess.run(
        [str(bin_dir / "jupyter-book"), "build", str(book), "-n", "-W", "--keep-going"],
        check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
    )
    seconds = time.perf_counter() - start
    if not (book / "_build" / "html" / "index.html").exists():
        raise RuntimeError(f"the build of {book} wrote no HTML")
    return seconds


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--touch", default="chapters/01_layernorm.ipynb", help="chapter to touch, relative to book/")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        book = Path(tmp) / "book"
        shutil.copytree(ROOT / "book", book, ignore=shutil.ignore_patterns("_build"))
        clean = build(book)
        (book / args.touch).touch()
        rebuild = build(book)
    print(f"clean build (every chapter executed): {clean:7.1f} s")
    print(f"rebuild after touching {args.touch}: {rebuild:7.1f} s")
    print(f"rebuild / clean: {rebuild / clean:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
