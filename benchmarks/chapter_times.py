"""Each chapter's run time on one thread, in a fresh kernel: the fast-start budget of Binder.

Budgets: at most 10 s a chapter, except chapters 7 and 8 (they train their models live) at most 60 s. Every
chapter runs top to bottom with nbclient in a fresh ``python3`` kernel with ``OMP_NUM_THREADS=1``
(Binder gives one CPU) and OpenMP's passive wait policy; nothing is written back. The trained
models come from the package (or ``TRANSFORMER_BOOK_CACHE``); a chapter that has to train them
first is over budget, and says so. The load average is printed beside the times: other jobs on the
machine slow every cell down. A benchmark, not a test.

    python benchmarks/chapter_times.py [book/01_rnn_limits.ipynb ...]
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from notebook_budget import run  # a chapter top to bottom in a fresh kernel, timed

ROOT = Path(__file__).resolve().parent.parent
BUDGET_S = 10.0
# chapters that train live: 6 (four short ablations), 7 (the book model, to its target) and 8 (a language model)
BUDGET_S_BY_CHAPTER = {"06_encoder_decoder.ipynb": 60.0, "07_training_inference.ipynb": 60.0,
                       "08_language_model.ipynb": 60.0}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path)
    args = parser.parse_args()
    paths = args.notebooks or sorted((ROOT / "book").glob("[0-9][0-9]_*.ipynb"))
    # Read by the kernels this script starts (they inherit its environment).
    os.environ["OMP_NUM_THREADS"] = "1"
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"{'chapter':36s} {'run s':>7s} {'budget s':>9s}")
    over = False
    for path in paths:
        seconds = run(path)
        budget = BUDGET_S_BY_CHAPTER.get(path.name, BUDGET_S)
        over |= seconds > budget
        print(f"{path.name:36s} {seconds:7.1f} {budget:9.0f}  {'ok' if seconds <= budget else 'OVER'}", flush=True)
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
