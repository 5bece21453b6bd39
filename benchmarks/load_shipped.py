"""How long the shipped models take to load: ``pretrained.book_model()``, ``book_rnn()``, ``book_rnn_attention()``.

Each is timed in a fresh Python process (nothing cached in memory, no model file ever trained on
this machine), after ``import torch`` and the library, which are timed apart. Also prints the size of
the shipped files (the budget is 10 MB together).

    python benchmarks/load_shipped.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys

import harness  # first: it sets OpenMP's wait policy before torch starts

from transformer_lib.pretrained.shipped import WEIGHTS_DIR

PROBE = """
import json, time
started = time.perf_counter()
import torch
from transformer_lib.pretrained import book_model, book_rnn, book_rnn_attention
imported = time.perf_counter()
book_model()
loaded_model = time.perf_counter()
book_rnn()
loaded_rnn = time.perf_counter()
book_rnn_attention()
loaded_rnn_attention = time.perf_counter()
print(json.dumps({"import": imported - started, "book_model": loaded_model - imported,
                  "book_rnn": loaded_rnn - loaded_model, "book_rnn_attention": loaded_rnn_attention - loaded_rnn}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    runs = []
    for _ in range(args.repeats):
        probe = subprocess.run([sys.executable, "-c", PROBE], check=True, capture_output=True, text=True,
                               cwd=harness.REPO_ROOT)
        runs.append(json.loads(probe.stdout))
    for key in ("import", "book_model", "book_rnn", "book_rnn_attention"):
        values = [run[key] * 1000 for run in runs]
        print(f"{key:>18}: median {statistics.median(values):7.1f} ms  (min {min(values):.1f}, "
              f"max {max(values):.1f}, {args.repeats} fresh processes)")
    total = 0
    for path in sorted(WEIGHTS_DIR.iterdir()):
        total += path.stat().st_size
        print(f"{path.name:>32}: {path.stat().st_size / 1024:8.1f} kB")
    print(f"{'shipped files together':>32}: {total / 1024 / 1024:8.2f} MB (budget 10 MB)")


if __name__ == "__main__":
    main()
