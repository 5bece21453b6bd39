"""Every chapter run as a Binder reader runs it: seconds to the last cell, and the kernel's peak memory.

A reader on Binder has one CPU, the library installed from its wheel, and a fresh kernel for each
chapter. So does this benchmark: it builds the package's wheel and installs it into the reader's
environment (``tests/reader_env.py``: ``binder/requirements.txt`` in a virtual environment of its
own; ``$TRANSFORMER_BOOK_READER_VENV`` names another place), and runs each chapter top to bottom
with nbclient in a fresh kernel of that environment, with ``OMP_NUM_THREADS=1`` and without the
checkout on its path (``--dispatch avx2`` also sets ``ATEN_CPU_CAPABILITY=avx2``: the kernels an
AVX2-only processor runs, on an AVX-512 one); nothing is written back to the notebooks. For each chapter it prints the
seconds from starting the kernel to the end of the last cell (as "Restart Kernel and Run All"
does), the seconds of the first import cell, the kernel's CPU time (which other programs on the
machine disturb less than the wall clock), and its peak resident memory (``VmHWM`` in
``/proc/<kernel pid>/status``), against the budgets: 10 s a chapter, 60 s for the chapters that train
live (7, 8 and 9), 500 MB of memory. It writes them, with the host's processor, thread count and the
date, to ``book/data/chapter_times.json`` (``chapter_times_avx2.json`` under ``--dispatch avx2``;
``--no-write`` to skip), with each chapter's three slowest cells, which the performance
appendix shows (``transformer_lib.measure.chapter_times_table``). The load average is printed
beside the times: other jobs on the machine slow every cell down. A benchmark, not a test.

    python benchmarks/chapter_times.py [--dispatch native|avx2] [--no-write] [book/01_rnn_limits.ipynb ...]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.reader_env import build_wheel, clean_env, install, installed_location, python, reader_venv  # noqa: E402
from transformer_lib.measure import chapter_times_table  # noqa: E402

RESULTS = {"native": ROOT / "book" / "data" / "chapter_times.json",
           "avx2": ROOT / "book" / "data" / "chapter_times_avx2.json"}
BUDGET_S = 10.0
# chapters that train live: 7 (the book model, to its target), 8 (a language model) and 9 (small models
# beyond translation). Chapter 6 reads Table 3's stored runs (its live cell is optional): 10 s, as the others.
BUDGET_S_BY_CHAPTER = {"07_training_inference.ipynb": 60.0, "08_language_model.ipynb": 60.0,
                       "09_beyond_translation.ipynb": 60.0}
BUDGET_PEAK_RSS_MB = 500.0  # a Binder kernel shares its 1 to 2 GB with the server and the browser
KERNEL = "book-reader"


def kernel_spec(venv: Path, into: Path) -> Path:
    """A Jupyter kernel spec named KERNEL that starts the reader environment's Python; its data folder."""
    folder = into / "kernels" / KERNEL
    folder.mkdir(parents=True, exist_ok=True)
    argv = [str(python(venv)), "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    (folder / "kernel.json").write_text(json.dumps({"argv": argv, "display_name": KERNEL, "language": "python"}))
    return into


def peak_rss_mb(pid: int) -> float:
    """The process's peak resident memory, MB (``VmHWM``, which Linux reports in kB)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmHWM in /proc/{pid}/status")


def cpu_seconds(pid: int) -> float:
    """The process's CPU time so far, user and system (fields 14 and 15 of ``/proc/<pid>/stat``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()  # after "pid (name)"
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_chapter(path: Path, env: dict[str, str]) -> dict:
    """Run ``path`` top to bottom in a fresh kernel: total seconds, the first import cell's, the peak memory."""
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, kernel_name=KERNEL, timeout=600, resources={"metadata": {"path": str(path.parent)}})
    client.reset_execution_trackers()
    first_imports = next(i for i, c in enumerate(nb.cells) if c.cell_type == "code" and c.get("id") != "setup")
    started = time.perf_counter()
    with client.setup_kernel(env=env):
        client.wait_for_reply(client.kc.kernel_info())
        cell_seconds = {}
        for index, cell in enumerate(nb.cells):
            cell_started = time.perf_counter()
            client.execute_cell(cell, index, execution_count=client.code_cells_executed + 1)
            cell_seconds[index] = time.perf_counter() - cell_started
        seconds = time.perf_counter() - started
        pid = client.km.provisioner.pid
        peak, cpu = peak_rss_mb(pid), cpu_seconds(pid)
    return {"notebook": path.name, "seconds": round(seconds, 2), "cpu_seconds": round(cpu, 2),
            "first_cell_seconds": round(cell_seconds[first_imports], 2), "peak_rss_mb": round(peak, 1),
            "slowest_cells": sorted(([i, round(t, 2)] for i, t in cell_seconds.items()), key=lambda c: -c[1])[:3],
            "budget_seconds": BUDGET_S_BY_CHAPTER.get(path.name, BUDGET_S), "budget_peak_rss_mb": BUDGET_PEAK_RSS_MB}


def cpu_model() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path)
    parser.add_argument("--dispatch", choices=sorted(RESULTS), default="native",
                        help="PyTorch's CPU kernels: the best this processor has, or AVX2's (ATEN_CPU_CAPABILITY)")
    parser.add_argument("--no-write", action="store_true", help="do not write book/data/chapter_times*.json")
    args = parser.parse_args()
    paths = args.notebooks or sorted((ROOT / "book").glob("[0-9][0-9]_*.ipynb"))
    # What is measured: the commit the wheel is built from ("-dirty" with uncommitted changes).
    commit = subprocess.run(["git", "describe", "--always", "--dirty"], capture_output=True, text=True,
                            cwd=ROOT).stdout.strip()
    venv = reader_venv()
    with tempfile.TemporaryDirectory() as tmp:
        install(venv, build_wheel(Path(tmp)), "--force-reinstall", "--no-deps")
        location = installed_location(venv, cwd=ROOT / "book")
        assert location.is_relative_to(venv), f"the kernel would import {location}, not the installed wheel"
        os.environ["JUPYTER_PATH"] = str(kernel_spec(venv, Path(tmp) / "jupyter"))
        # The kernel's environment: one thread, and nothing that puts the checkout on its path.
        env = clean_env(OMP_NUM_THREADS="1")
        env.pop("ATEN_CPU_CAPABILITY", None)  # native: the best kernels this processor has
        if args.dispatch != "native":
            env["ATEN_CPU_CAPABILITY"] = args.dispatch
        torch_version = subprocess.run([python(venv), "-c", "import torch; print(torch.__version__)"],
                                       capture_output=True, text=True, check=True, env=env).stdout.strip()
        load_before = os.getloadavg()[0]
        print(f"installed: {location}; load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        print(f"{'chapter':32s} {'run s':>6s} {'CPU s':>6s} {'imports s':>9s} {'budget s':>8s} {'peak MB':>8s} "
              f"{'budget MB':>9s}")
        rows = []
        for path in paths:
            row = run_chapter(path, env)
            rows.append(row)
            ok = row["seconds"] <= row["budget_seconds"] and row["peak_rss_mb"] <= row["budget_peak_rss_mb"]
            print(f"{path.name:32s} {row['seconds']:6.1f} {row['cpu_seconds']:6.1f} {row['first_cell_seconds']:9.1f} "
                  f"{row['budget_seconds']:8.0f} {row['peak_rss_mb']:8.0f} {row['budget_peak_rss_mb']:9.0f}  "
                  f"{'ok' if ok else 'OVER'}  slowest cells {row['slowest_cells']}", flush=True)
    load_after = os.getloadavg()[0]
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    results = {
        "host": {"cpu": cpu_model(), "cores": os.cpu_count(), "threads": 1, "torch": torch_version,
                 "python": platform.python_version(), "load_average_before": load_before,
                 "load_average_after": load_after, "dispatch": args.dispatch},
        "date": datetime.date.today().isoformat(),
        "commit": commit,
        "chapters": rows,
    }
    chapter_times_table(results)  # the appendix can show what is written
    if not args.no_write and not args.notebooks:  # a partial run does not replace the book's table
        RESULTS[args.dispatch].write_text(json.dumps(results, indent=1) + "\n")
        print(f"wrote {RESULTS[args.dispatch].relative_to(ROOT)}")
    over = [r for r in rows if r["seconds"] > r["budget_seconds"] or r["peak_rss_mb"] > r["budget_peak_rss_mb"]]
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
