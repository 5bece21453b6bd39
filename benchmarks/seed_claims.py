"""Every claim of the notebooks that train, checked on seeds 0 to 9: on how many seeds does each assert hold?

A notebook cell that trains or samples reads its seed from ``BOOK_SEED`` (``transformer_lib.seeding``),
and the asserts are the page's claims about what training gives. This benchmark runs each notebook of
``TRAINING_NOTEBOOKS`` top to bottom once per seed (nbclient, a fresh kernel, ``OMP_NUM_THREADS=1``, the
checkout on the path), with every ``assert`` of a code cell rewritten to record whether its condition
held and go on (``recording_source``): a false claim does not hide the claims after it. It prints, per
assert, the notebook, cell and line, the number of seeds it held on, and the seeds it failed on, and
writes them to ``book/data/seed_claims.json`` (``--no-write`` to skip). With ``--strict`` it exits 1 when
an assert failed or was not reached, or a cell raised: ``tools/test.sh --portability`` runs it so, on
``BOOK_SEED=1`` and ``2`` (the seed lane: outputs not compared, every assert required); on seeds 0 to 9 it
is the lane's wider, slower version.

    python benchmarks/seed_claims.py [--seeds 0 1 2 ...] [--no-write] [book/09_beyond_translation.ipynb ...]
    python benchmarks/seed_claims.py --seeds 1 2 --strict --no-write   # tools/test.sh's seed lane
    python benchmarks/seed_claims.py --list     # the notebooks that train, one a line
    python benchmarks/seed_claims.py --check    # is the stored file of today's asserts? (tests/test_stored.py)
"""

from __future__ import annotations

import argparse
import ast
import datetime
import json
import os
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from tools.ipc_kernels import IpcKernelManager  # noqa: E402 -- the repository's tools, from this checkout

# The notebooks with a cell that trains or samples: chapter 6 trains only in a cell a reader switches on
# (TRAIN_LIVE), and the appendices read stored results.
TRAINING_NOTEBOOKS = ("book/07_training_inference.ipynb", "book/08_language_model.ipynb",
                      "book/09_beyond_translation.ipynb")
OUT = ROOT / "book" / "data" / "seed_claims.json"
RECORDER = "__seed_claims__"


class _Record(ast.NodeTransformer):
    """``assert test, message`` -> ``__seed_claims__.append((cell, line, bool(test)))``."""

    def __init__(self, cell: int) -> None:
        self.cell = cell

    def visit_Assert(self, node: ast.Assert) -> ast.stmt:
        call = ast.parse(f"{RECORDER}.append(({self.cell}, {node.lineno}, bool(_)))").body[0]
        call.value.args[0].elts[2].args[0] = node.test
        return ast.copy_location(call, node)


def recording_source(source: str, cell: int) -> tuple[str, list[tuple[int, str]]]:
    """The cell with each assert recording instead of raising, and its asserts as (line, text). A cell
    Python cannot parse (an IPython magic) is left as it is."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return source, []
    asserts = [(n.lineno, ast.get_source_segment(source, n) or "") for n in ast.walk(tree) if isinstance(n, ast.Assert)]
    if not asserts:
        return source, []
    return ast.unparse(ast.fix_missing_locations(_Record(cell).visit(tree))), sorted(asserts)


def recording_notebook(nb: nbformat.NotebookNode) -> list[tuple[int, int, str]]:
    """Rewrite every code cell of ``nb`` with ``recording_source``; its asserts as (cell, line, text)."""
    claims = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "code":
            cell.source, found = recording_source(cell.source, i)
            claims += [(i, line, text) for line, text in found]
    return claims


def run(path: Path, seed: int) -> tuple[dict[tuple[int, int], bool], list[tuple[int, int, str]], str | None,
                                      float, float]:
    """Run ``path`` under ``BOOK_SEED=seed``: what each assert recorded, every assert (cell, line, text),
    the first error other than a claim (None if none), the seconds it took and the kernel's CPU seconds
    (which other programs on the machine disturb less than the wall clock)."""
    nb = nbformat.read(path, as_version=4)
    claims = recording_notebook(nb)
    nb.cells.insert(0, nbformat.v4.new_code_cell(f"{RECORDER} = []"))
    nb.cells.append(nbformat.v4.new_code_cell(  # what the asserts recorded, and the kernel's CPU seconds
        f"import json, resource; usage = resource.getrusage(resource.RUSAGE_SELF); "
        f"print(json.dumps([{RECORDER}, usage.ru_utime + usage.ru_stime]))"))
    env = {**os.environ, "BOOK_SEED": str(seed), "OMP_NUM_THREADS": "1",
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    started = time.perf_counter()
    old_env = dict(os.environ)
    os.environ.update(env)  # the kernel inherits this process's environment
    # The kernel talks over socket files, not TCP ports: a port picked free and released before the kernel
    # binds it can be taken meanwhile on a busy machine (it was, in this lane): tools/ipc_kernels.py
    km = IpcKernelManager(kernel_name="python3")
    client = NotebookClient(nb, km=km, timeout=1800, allow_errors=True,
                            resources={"metadata": {"path": str(path.parent)}})
    try:
        client.execute()
    finally:
        os.environ.clear()
        os.environ.update(old_env)
        if km.has_kernel:  # nbclient shuts down only the kernels it started itself
            km.shutdown_kernel(now=True)
    seconds = time.perf_counter() - started
    error = next((f"cell {i - 1}: {o.get('ename')}: {o.get('evalue', '')[:200]}" for i, c in enumerate(nb.cells)
                  if c.cell_type == "code" for o in c.get("outputs", []) if o.get("output_type") == "error"), None)
    printed = "".join(o.get("text", "") for o in nb.cells[-1].get("outputs", []) if o.get("output_type") == "stream")
    found, cpu_seconds = json.loads(printed) if printed else ([], float("nan"))
    recorded: dict[tuple[int, int], bool] = {}
    for cell, line, held in found:
        key = (cell, line)
        recorded[key] = recorded.get(key, True) and held  # an assert in a loop holds if it held every time
    return recorded, claims, error, seconds, cpu_seconds


def stale(stored: dict) -> str | None:
    """Why ``stored`` (``OUT`` as json reads it) is not of today's notebooks on seeds 0-9, or None: its asserts
    (notebook, cell, line, text) must be today's, with a run of each notebook on each seed."""
    if stored["seeds"] != list(range(10)):
        return f"seeds {stored['seeds']}, not 0-9"
    today = [[Path(name).name, cell, line, text] for name in TRAINING_NOTEBOOKS
             for cell, line, text in recording_notebook(nbformat.read(ROOT / name, as_version=4))]
    kept = [[a["notebook"], a["cell"], a["line"], a["assert"]] for a in stored["asserts"]]
    if kept != today:
        pairs = enumerate(zip(today, kept, strict=False))
        first = next((i for i, (t, k) in pairs if t != k), min(len(today), len(kept)))
        changed = (today if first < len(today) else kept)[first]
        return f"{len(kept)} asserts stored, {len(today)} today; the first that differs: {changed[:3]}"
    runs = {(run["notebook"], run["seed"]) for run in stored["runs"]}
    if runs != {(Path(name).name, seed) for name in TRAINING_NOTEBOOKS for seed in range(10)}:
        return "not every notebook ran on every seed"
    return None


def kept(notebooks: list[str], seeds: list[int], runs: list[dict], rows: list[dict]) -> tuple[list[dict], list[dict]]:
    """This run's runs and rows, with the stored ones of the notebooks it did not run (on the same seeds)
    kept beside them, in ``TRAINING_NOTEBOOKS``' order: running one notebook replaces that notebook's
    findings only."""
    ran = {Path(n).name for n in notebooks}
    old = json.loads(OUT.read_text()) if OUT.exists() else {"seeds": None}
    if old["seeds"] == seeds:
        runs = [r for r in old["runs"] if r["notebook"] not in ran] + runs
        rows = [r for r in old["asserts"] if r["notebook"] not in ran] + rows
    order = {Path(n).name: i for i, n in enumerate(TRAINING_NOTEBOOKS)}
    return (sorted(runs, key=lambda r: (order.get(r["notebook"], len(order)), r["seed"])),
            sorted(rows, key=lambda r: (order.get(r["notebook"], len(order)), r["cell"], r["line"])))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("notebooks", nargs="*", default=list(TRAINING_NOTEBOOKS))
    parser.add_argument("--seeds", type=int, nargs="+", default=list(range(10)))
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--list", action="store_true", help="print the notebooks that train and stop")
    parser.add_argument("--strict", action="store_true", help="exit 1 unless every assert held on every seed")
    parser.add_argument("--check", action="store_true",
                        help=f"run nothing: exit 1, saying why, if {OUT.relative_to(ROOT)} is not of today's asserts")
    args = parser.parse_args()
    if args.list:
        print("\n".join(TRAINING_NOTEBOOKS))
        return 0
    if args.check:
        why = stale(json.loads(OUT.read_text()))
        found = why or "today's asserts, seeds 0-9"
        print(f"{OUT.relative_to(ROOT)}: {found}", file=sys.stderr if why else sys.stdout)
        return 1 if why else 0
    rows, runs = [], []
    for name in args.notebooks:
        path = ROOT / name
        results: dict[tuple[int, int], dict[int, bool | None]] = {}
        texts: dict[tuple[int, int], str] = {}
        for seed in args.seeds:
            recorded, claims, error, seconds, cpu = run(path, seed)
            runs.append({"notebook": path.name, "seed": seed, "seconds": round(seconds, 1),
                         "kernel_cpu_seconds": round(cpu, 1), "error": error,
                         "load_average": os.getloadavg()[0]})
            print(f"{path.name} BOOK_SEED={seed}: {seconds:.0f} s, kernel CPU {cpu:.0f} s, "
                  f"load {os.getloadavg()[0]:.1f}" + (f"; {error}" if error else ""), flush=True)
            for cell, line, text in claims:
                texts[(cell, line)] = text
                results.setdefault((cell, line), {})[seed] = recorded.get((cell, line))  # None: never reached
        for (cell, line), by_seed in sorted(results.items()):
            held = [s for s, ok in by_seed.items() if ok]
            rows.append({"notebook": path.name, "cell": cell, "line": line, "assert": texts[(cell, line)],
                         "held": len(held), "seeds": len(by_seed),
                         "failed_on": [s for s, ok in by_seed.items() if ok is False],
                         "not_reached_on": [s for s, ok in by_seed.items() if ok is None]})
    print(f"\n{'notebook':30} {'cell':>4} {'line':>4} {'held':>7}  assert")
    for r in rows:
        note = (f"  FAILED on {r['failed_on']}" if r["failed_on"] else "") + (
            f"  not reached on {r['not_reached_on']}" if r["not_reached_on"] else "")
        print(f"{r['notebook']:30} {r['cell']:4} {r['line']:4} {r['held']:3}/{r['seeds']:<3}  "
              f"{' '.join(r['assert'].split())[:90]}{note}")
    if not args.no_write:
        runs, rows = kept(args.notebooks, args.seeds, runs, rows)
        OUT.write_text(json.dumps({"date": datetime.date.today().isoformat(), "seeds": args.seeds,
                                   "runs": runs, "asserts": rows}, indent=1) + "\n")
        print(f"wrote {OUT.relative_to(ROOT)}")
    broken = [r for r in runs if r["error"]] + [r for r in rows if r["held"] < r["seeds"]]
    return 1 if args.strict and broken else 0


if __name__ == "__main__":
    sys.exit(main())
