"""What each chapter's first import cell costs, on one thread, in a fresh interpreter.

For every chapter the import statements of its first code cell after the set-up cell run in a new
``python`` (``OMP_NUM_THREADS=1``), ``--runs`` times; printed are the median seconds (wall clock and
CPU time), the fastest and slowest run's wall clock, and the heavy libraries that they loaded. The
libraries a chapter uses later (ipywidgets for explorers, sacrebleu for BLEU, pandas for tables, tqdm
for progress bars) should load when first used, not here. ``--tree`` prints, from one
``python -X importtime`` run per chapter, the modules that took longest after torch (which a chapter
always needs). A benchmark, not a test: on a shared machine the wall clock moves with the load
average, which is printed beside it; the CPU time moves less.

    python benchmarks/import_times.py [--runs 5] [--tree] [book/01_rnn_limits.ipynb ...]
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
# Loaded on first use, not by a chapter's first cell (torch itself imports tqdm, through torch.hub).
HEAVY = ("plotly", "pandas", "ipywidgets", "sacrebleu", "tqdm", "matplotlib", "bertviz", "transformers")
# Runs the imports, then prints their seconds (wall clock, and the process's CPU time, which other
# programs on the machine disturb less) and which of HEAVY they loaded, as JSON.
PROBE = """\
import json, sys, time
started, cpu_started = time.perf_counter(), time.process_time()
exec(compile({source!r}, "<first cell>", "exec"))
seconds, cpu_seconds = time.perf_counter() - started, time.process_time() - cpu_started
heavy = sorted({{name.split(".")[0] for name in sys.modules}} & set({heavy!r}))
print(json.dumps({{"seconds": seconds, "cpu_seconds": cpu_seconds, "heavy": heavy}}))
"""


def first_imports(path: Path) -> str:
    """The import statements of the chapter's first code cell after the set-up cell."""
    nb = nbformat.read(path, as_version=4)
    cell = next(c for c in nb.cells if c.cell_type == "code" and c.get("id") != "setup")
    tree = ast.parse(cell.source)
    return "\n".join(ast.unparse(node) for node in tree.body if isinstance(node, ast.Import | ast.ImportFrom))


def environment() -> dict[str, str]:
    return {**os.environ, "OMP_NUM_THREADS": "1",
            "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}


def time_imports(source: str) -> dict:
    probe = PROBE.format(source=source, heavy=HEAVY)
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True,
                         env=environment(), cwd=ROOT / "book")
    return json.loads(out.stdout.strip().splitlines()[-1])


def slowest_after_torch(source: str, at_least_ms: float = 30.0) -> list[tuple[float, str]]:
    """(milliseconds, module) of the imports that took ``at_least_ms`` or more once torch was in."""
    code = f"import torch\nimport sys\nprint('after torch', file=sys.stderr)\n{source}"
    err = subprocess.run([sys.executable, "-X", "importtime", "-c", code], capture_output=True, text=True,
                         check=True, env=environment(), cwd=ROOT / "book").stderr
    rows = []
    for line in err.split("after torch\n", 1)[1].splitlines():
        if line.startswith("import time:"):
            _, cumulative, name = line.split("|")
            if int(cumulative) >= at_least_ms * 1000:
                rows.append((int(cumulative) / 1000, name.rstrip()))
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--tree", action="store_true", help="also print the slowest imports after torch")
    args = parser.parse_args()
    paths = args.notebooks or sorted((ROOT / "book").glob("[0-9][0-9]_*.ipynb"))
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"{'chapter':32s} {'wall s':>7s} {'CPU s':>6s} {'min s':>6s} {'max s':>6s}  heavy libraries loaded")
    for path in paths:
        source = first_imports(path)
        runs = [time_imports(source) for _ in range(args.runs)]
        seconds, cpu = [r["seconds"] for r in runs], [r["cpu_seconds"] for r in runs]
        print(f"{path.name:32s} {statistics.median(seconds):7.2f} {statistics.median(cpu):6.2f} "
              f"{min(seconds):6.2f} {max(seconds):6.2f}  "
              f"{', '.join(runs[-1]['heavy']) or '-'}", flush=True)
        if args.tree:
            for ms, name in slowest_after_torch(source):
                print(f"    {ms:8.0f} ms {name}")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
