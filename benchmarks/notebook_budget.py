"""Budgets of the book's notebooks: execution time of each chapter (at most 3 minutes on this
2-core CPU) and the size of each committed .ipynb (at most 2 MB).

Each notebook runs top to bottom in a fresh kernel (nbclient), in memory: nothing is written
back. The book's trained models ship with the package (``transformer_lib.pretrained``): only
chapter 7 trains, live. The load average is printed beside the times, because other jobs on the
machine slow every cell down.

    python benchmarks/notebook_budget.py [book/01_rnn_limits.ipynb ...]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
TIME_BUDGET_S = 180.0
SIZE_BUDGET = 2 * 1024 * 1024


def run(path: Path) -> float:
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, kernel_name="python3", timeout=600, resources={"metadata": {"path": str(path.parent)}})
    started = time.perf_counter()
    client.execute()
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path)
    args = parser.parse_args()
    paths = args.notebooks or sorted((ROOT / "book").glob("[0-9][0-9]_*.ipynb"))
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"{'notebook':36s} {'run s':>7s} {'size kB':>8s} {'ignored cells':>14s}  budget")
    failed = False
    for path in paths:
        nb = nbformat.read(path, as_version=4)
        ignored = sum(1 for c in nb.cells if c.cell_type == "code" and "NBVAL_IGNORE_OUTPUT" in c.source)
        seconds = run(path)
        size = path.stat().st_size
        ok = seconds <= TIME_BUDGET_S and size <= SIZE_BUDGET
        failed |= not ok
        print(f"{path.name:36s} {seconds:7.1f} {size / 1024:8.0f} {ignored:14d}  {'ok' if ok else 'OVER'}")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
