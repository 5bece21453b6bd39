"""Every performance benchmark, in one run: ``python benchmarks/run_all.py``.

1. training step, ours against torch.nn.Transformer, and the fraction of the machine's
   matrix-multiply peak it reaches (bench_training.py);
2. greedy decoding with and without the key/value cache (bench_decoding.py);
3. attention alone, explicit against fused, T = 64 to 4096 (bench_attention.py);
4. on the CPU, what denormal gradients cost (bench_training.denormal_slowdown).

On the CPU with all cores, timed by the wall clock; again on one CPU thread, timed by the
process's CPU time (steady when other programs share the machine; ``--no-one-thread`` skips
it); and on CUDA as well when a GPU is present (the same code; bf16 autocast there).
Prints the tables and writes every figure, with the machine and its load, to
benchmarks/results/performance.json; ``--book`` also writes the copy that the book's
performance appendix reads, book/data/performance.json.
"""

from __future__ import annotations

import argparse
import json
import os
import time

import bench_attention
import bench_decoding
import bench_training
import harness
import torch

RESULTS = harness.REPO_ROOT / "benchmarks" / "results" / "performance.json"
BOOK_COPY = harness.REPO_ROOT / "book" / "data" / "performance.json"


def run_device(device: torch.device, quick: bool, denormals: bool = True) -> dict:
    started = time.perf_counter()
    training = bench_training.run(device, quick)
    bench_training.print_table(training)
    decoding = bench_decoding.run(device, quick)
    bench_decoding.print_table(decoding)
    attention = bench_attention.run(device, quick)
    bench_attention.print_table(attention)
    result = {"training": training, "decoding": decoding, "attention": attention}
    if denormals and device.type == "cpu":  # denormal floats are slow on CPUs; GPUs handle them at full speed
        result["denormals"] = bench_training.denormal_slowdown(device, quick)
        bench_training.print_denormals(result["denormals"])
    result["wall_seconds"] = time.perf_counter() - started
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer, shorter rounds (a smoke test)")
    parser.add_argument("--threads", type=int, default=None, help="CPU threads (default: all cores)")
    parser.add_argument("--no-one-thread", action="store_true",
                        help="skip the second CPU pass (one thread, timed by CPU time)")
    parser.add_argument("--book", action="store_true", help=f"also write {BOOK_COPY.relative_to(harness.REPO_ROOT)}")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    else:
        harness.set_threads()

    report = {"environment": harness.environment(torch.device("cpu")), "quick": args.quick}
    cpu = torch.device("cpu")
    with harness.timing(threads=torch.get_num_threads(), cpu_time=False) as settings:
        print(f"=== CPU: {report['environment']['cpu']}, {settings['threads']} thread(s), {settings['clock']}; "
              f"load average {os.getloadavg()} ===")
        report["cpu"] = {"timing": settings, **run_device(cpu, args.quick)}
    if not args.no_one_thread:
        # The same again on one thread, timed by this process's CPU time: what one idle core does,
        # whatever else runs on the machine (other programs make threads wait for each other).
        with harness.timing(threads=1, cpu_time=True) as settings:
            print(f"\n=== CPU: 1 thread, {settings['clock']}; load average {os.getloadavg()} ===")
            report["cpu_one_thread"] = {"timing": settings, **run_device(cpu, args.quick, denormals=False)}
    if torch.cuda.is_available():
        print(f"\n=== CUDA: {torch.cuda.get_device_name(0)} ===")
        with harness.timing(threads=torch.get_num_threads(), cpu_time=False) as settings:
            report["cuda"] = {"timing": settings, **run_device(torch.device("cuda"), args.quick)}
    else:
        report["cuda"] = "no GPU in this run"
        print("\nCUDA: no GPU in this run")
    report["environment"]["loadavg_1_5_15_at_end"] = list(os.getloadavg())

    paths = [RESULTS] + ([BOOK_COPY] if args.book else [])
    for path in paths:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(report, indent=1) + "\n")
    print("\nwritten:", ", ".join(str(p.relative_to(harness.REPO_ROOT)) for p in paths))


if __name__ == "__main__":
    main()
