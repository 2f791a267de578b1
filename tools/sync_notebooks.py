"""Keep the chapter notebooks ready for Colab and for the repository.

For every ``book/chapters/*.ipynb``:

* the first cell is the install cell: it installs ``lnworked`` from the repository URL
  and branch named once in ``book/_config.yml`` when the package is missing (Colab), does
  nothing where it is installed, pins nothing (Colab's JAX stays), and carries the tag
  ``remove-cell`` so the HTML hides it;
* outputs and execution counts are cleared (notebooks are committed without outputs).

Usage: ``python tools/sync_notebooks.py`` rewrites the notebooks;
``python tools/sync_notebooks.py --check`` changes nothing and exits 1 if one is out of sync.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import nbformat
import yaml

BOOK = Path(__file__).resolve().parent.parent / "book"
INSTALL_TAG = "remove-cell"


def install_source(config_path: Path = BOOK / "_config.yml") -> str:
    """The install cell's source, built from ``repository.url`` and ``repository.branch``."""
    repository = yaml.safe_load(config_path.read_text())["repository"]
    url = f"git+{repository['url']}@{repository.get('branch', 'main')}"
    return (
        "# Installs lnworked where it is missing (e.g. Google Colab); does nothing elsewhere.\n"
        "import importlib.util, subprocess, sys\n"
        'if importlib.util.find_spec("lnworked") is None:\n'
        f'    subprocess.check_call([sys.executable, "-m", "pip", "install", "-q", "{url}"])'
    )


def synced(notebook, source: str):
    """A copy of ``notebook`` with the install cell first and no outputs."""
    notebook = nbformat.from_dict(notebook)
    cells = notebook.cells
    first = cells[0] if cells else None
    is_install = first is not None and first.cell_type == "code" and INSTALL_TAG in first.metadata.get("tags", [])
    install = nbformat.v4.new_code_cell(source, metadata={"tags": [INSTALL_TAG]})
    if is_install:
        install["id"] = first.get("id", install["id"])
        cells[0] = install
    else:
        cells.insert(0, install)
    for cell in cells:
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
    return notebook


def notebooks() -> list[Path]:
    return sorted((BOOK / "chapters").glob("*.ipynb"))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="report notebooks out of sync; change nothing")
    args = parser.parse_args(argv)
    source = install_source()
    stale = []
    for path in notebooks():
        notebook = nbformat.read(path, as_version=4)
        fixed = synced(notebook, source)
        if fixed != notebook:
            stale.append(path)
            if not args.check:
                nbformat.write(fixed, path)
    for path in stale:
        print(f"{'out of sync' if args.check else 'synced'}: {path.relative_to(BOOK.parent)}")
    return 1 if (args.check and stale) else 0


if __name__ == "__main__":
    sys.exit(main())
