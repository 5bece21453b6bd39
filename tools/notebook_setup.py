"""Write each chapter's opening: the note to run the notebook first, and the set-up cell.

    python tools/notebook_setup.py          # writes them into book/0*.ipynb (sources only)
    python tools/notebook_setup.py --check  # exit 1 if a chapter's opening differs

The set-up cell is the first code cell of every chapter, before anything imports torch. It sets
OpenMP's wait policy for a shared CPU, and, where ``transformer_lib`` cannot be imported (a single
downloaded notebook, in Colab say), installs it from the repository named in ``_config.yml``
(``repository.url`` and ``repository.branch``): the one place that names the repository.
Only cell sources change; every output stays (tests/test_notebook_setup.py checks the result).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import nbformat
import yaml

ROOT = Path(__file__).resolve().parent.parent
SETUP_ID = "setup"
RUN_ALL_NOTE = (
    "*Running this chapter as a notebook (JupyterLab on Binder from the rocket button, or a download): "
    "run all cells first (Run ▸ Run All Cells), then read from the top; the figures and explorers "
    "appear once their cells have run.*"
)
SETUP_TEMPLATE = '''\
# Set-up, before torch is imported. Run the whole notebook first: Run > Run All Cells.
import importlib.util
import os

# On a shared CPU (Binder's, Colab's), idle PyTorch threads sleep instead of spinning:
# training stays fast when other programs compete for the cores.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

if importlib.util.find_spec("transformer_lib") is None:
    # A single downloaded notebook (in Colab, say): install the book's library from its repository.
    import subprocess
    import sys

    repository = "{requirement}"
    subprocess.check_call([sys.executable, "-m", "pip", "install", "--quiet", repository])
    importlib.invalidate_caches()'''


def chapters() -> list[Path]:
    return sorted((ROOT / "book").glob("[0-9][0-9]_*.ipynb"))


def repository() -> tuple[str, str]:
    """(url, branch) of the book's repository, from _config.yml."""
    config = yaml.safe_load((ROOT / "_config.yml").read_text())["repository"]
    return config["url"], config["branch"]


def setup_source() -> str:
    url, branch = repository()
    return SETUP_TEMPLATE.format(requirement=f"git+{url}@{branch}")


def title_cell_source(source: str) -> str:
    """The first markdown cell with the run-all note right under its title (added once)."""
    if RUN_ALL_NOTE in source:
        return source
    lines = source.split("\n")
    title = next(i for i, line in enumerate(lines) if line.startswith("# "))
    return "\n".join([*lines[: title + 1], "", RUN_ALL_NOTE, *lines[title + 1:]])


def updated(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """``nb`` with its opening written: the note in the title cell, the set-up cell after it."""
    first = nb.cells[0]
    assert first.cell_type == "markdown", "a chapter starts with its title cell"
    first.source = title_cell_source(first.source)
    setup = next((c for c in nb.cells if c.get("id") == SETUP_ID), None)
    if setup is None:
        setup = nbformat.v4.new_code_cell(id=SETUP_ID)
        nb.cells.insert(1, setup)
    setup.source = setup_source()
    return nb


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only check; exit 1 if a chapter would change")
    args = parser.parse_args()
    stale = []
    for path in chapters():
        before = path.read_text()
        nb = updated(nbformat.reads(before, as_version=4))
        after = nbformat.writes(nb) + "\n"
        if after != before:
            stale.append(path.name)
            if not args.check:
                path.write_text(after)
    print(("stale: " if args.check else "written: ") + (", ".join(stale) or "none"))
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
