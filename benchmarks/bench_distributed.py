"""Distributed training on this machine: steps a second and tokens a second of
``python -m transformer_lib.train`` on 1 and 2 processes (Gloo, one CPU thread each), for the
``book`` and ``base`` presets, and the scaling efficiency.

The global batch is the same for 1 and 2 processes (strong scaling): 2 processes each compute
half of it, then average their gradients by all-reduce. The scaling efficiency is
(steps/s on 2 processes) / (2 x steps/s on 1). The rates are measured between the first and the
last progress line, so that start-up and the first (warm-up) steps are left out.

Run alone: ``python benchmarks/bench_distributed.py [--quick] [--strategy ddp|fsdp] [--json FILE]``;
``--json book/data/bench_distributed.json`` writes what the performance appendix shows.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import harness

LINE = re.compile(r"step (\d+)/\d+ \| loss \S+ \| ([\d,]+) tokens/s \| \S+ steps/s \| ([\d.]+) s")
# preset -> (global batch in sentence pairs, steps, progress line every so many steps)
SETTINGS = {"book": (64, 40, 10), "base": (16, 6, 2)}
QUICK = {"book": (64, 12, 4), "base": (8, 3, 1)}


def command(processes: int, preset: str, batch: int, steps: int, every: int, strategy: str, out: str) -> list[str]:
    launcher = [sys.executable, "-m", "transformer_lib.train"] if processes == 1 else [
        sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", str(processes),
        "-m", "transformer_lib.train"]
    return [*launcher, "--preset", preset, "--batch-size", str(batch), "--steps", str(steps), "--log-every",
            str(every), "--save-every", str(steps), "--pairs", "2000", "--strategy", strategy, "--out", out]


def rates(output: str) -> tuple[float, float]:
    """(steps/s, tokens/s) between the first and the last progress line."""
    points = [(int(step), float(rate.replace(",", "")) * float(seconds), float(seconds))
              for step, rate, seconds in LINE.findall(output)]
    if len(points) < 2:
        raise RuntimeError(f"expected at least two progress lines, got:\n{output}")
    (step_a, tokens_a, time_a), (step_b, tokens_b, time_b) = points[0], points[-1]
    return (step_b - step_a) / (time_b - time_a), (tokens_b - tokens_a) / (time_b - time_a)


def measure(processes: int, preset: str, quick: bool, strategy: str) -> tuple[float, float]:
    batch, steps, every = (QUICK if quick else SETTINGS)[preset]
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(harness.REPO_ROOT)}
    with tempfile.TemporaryDirectory() as out:
        result = subprocess.run(command(processes, preset, batch, steps, every, strategy, out), env=env,
                                capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise RuntimeError(f"{processes} process(es), {preset}: exit {result.returncode}\n{result.stderr[-2000:]}")
    return rates(result.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer steps (a smoke run, noisier figures)")
    parser.add_argument("--strategy", choices=("ddp", "fsdp"), default="ddp")
    parser.add_argument("--json", type=Path, help="also write the results here (the appendix reads them)")
    args = parser.parse_args()
    load_before = [round(x, 2) for x in os.getloadavg()]
    print(f"host: {harness.cpu_model()}, {os.cpu_count()} cores; load average before: "
          f"{' '.join(f'{x:.2f}' for x in load_before)}; {args.strategy}, Gloo, one thread a process")
    print(f"{'preset':>6} {'batch':>5} {'processes':>9} {'steps/s':>9} {'tokens/s':>10} {'efficiency':>10}")
    rows = []
    for preset in ("book", "base"):
        one = measure(1, preset, args.quick, args.strategy)
        two = measure(2, preset, args.quick, args.strategy)
        batch = (QUICK if args.quick else SETTINGS)[preset][0]
        for processes, (steps_s, tokens_s) in ((1, one), (2, two)):
            efficiency = two[0] / (2 * one[0]) if processes == 2 else None
            shown = f"{efficiency:10.0%}" if efficiency is not None else f"{'':>10}"
            print(f"{preset:>6} {batch:>5} {processes:>9} {steps_s:9.3f} {tokens_s:10,.0f} {shown}")
            rows.append({"preset": preset, "batch": batch, "processes": processes, "steps_per_second": steps_s,
                         "tokens_per_second": tokens_s, "efficiency": efficiency})
    load_after = [round(x, 2) for x in os.getloadavg()]
    print(f"load average after: {' '.join(f'{x:.2f}' for x in load_after)}")
    if args.json is not None:
        result = {"host": harness.cpu_model(), "cores": os.cpu_count(), "strategy": args.strategy,
                  "quick": args.quick, "load_average_before": load_before, "load_average_after": load_after,
                  "rows": rows}
        args.json.write_text(json.dumps(result, indent=1) + "\n")
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
