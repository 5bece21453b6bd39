"""Before and after: the library at an earlier git revision against this checkout, in one run.

    python benchmarks/bench_versions.py --before HEAD~1 [--threads 1] [--device cpu]

The earlier ``transformer_lib`` is extracted with ``git archive`` into a temporary folder
and imported under the name ``transformer_lib_before``; both versions get the same weights
and are timed alternately, so that a change to the library is measured against the load of
the moment, not against a figure taken an hour earlier. Times a training step of the small
and of the base-sized model and a cached greedy decoding of 25 and of 200 tokens.
"""

from __future__ import annotations

import argparse
import importlib
import io
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

import harness
import torch
from bench_decoding import decode
from bench_training import configurations, make_batch, training_step_fn

import transformer_lib.config
import transformer_lib.models


def import_before(revision: str, folder: Path):
    """Import ``transformer_lib`` as it was at ``revision`` (as the package transformer_lib_before)."""
    archive = subprocess.run(["git", "archive", revision, "transformer_lib"], cwd=harness.REPO_ROOT,
                             check=True, capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(folder, filter="data")
    (folder / "transformer_lib").rename(folder / "transformer_lib_before")
    sys.path.insert(0, str(folder))
    return importlib.import_module("transformer_lib_before.models"), importlib.import_module(
        "transformer_lib_before.config")


def pair(before_models, before_config, config, device):
    """The same model twice, before and after, with the same weights."""
    torch.manual_seed(0)
    after = transformer_lib.models.Transformer(config).to(device)
    before = before_models.Transformer(before_config.TransformerConfig(**vars(config))).to(device)
    before.load_state_dict(after.state_dict())
    return before, after


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="git revision of the earlier library")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--threads", type=int, default=None, help="default: all cores")
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--min-run-time", type=float, default=0.5)
    parser.add_argument("--skip-training", action="store_true", help="time decoding only")
    parser.add_argument("--cpu-time", action="store_true", help="time with the process's CPU time")
    args = parser.parse_args()
    if args.cpu_time:
        harness.use_cpu_time()
    if args.threads:
        torch.set_num_threads(args.threads)
    else:
        harness.set_threads()
    device = torch.device(args.device)

    with tempfile.TemporaryDirectory() as folder:
        before_models, before_config = import_before(args.before, Path(folder))
        rows = []
        for name, config, batch_size, length in [] if args.skip_training else configurations(quick=False):
            before, after = pair(before_models, before_config, config, device)
            batch = make_batch(config, batch_size, length, device)
            fns = {"before": training_step_fn(before.train(), batch, device),
                   "after": training_step_fn(after.train(), batch, device)}
            for fn in fns.values():
                fn()
            rows.append((f"training step, {name}", harness.alternate(fns, args.rounds, args.min_run_time)))

        config = transformer_lib.config.TransformerConfig.preset("small", max_len=201)
        before, after = pair(before_models, before_config, config, device)
        src = torch.randint(1, config.src_vocab_size, (8, 32), generator=torch.Generator().manual_seed(1))
        src = src.to(device)
        for length in (25, 200):
            assert decode(before.eval(), src, length, True) == decode(after.eval(), src, length, True)
            fns = {"before": lambda n=length: decode(before, src, n, True),
                   "after": lambda n=length: decode(after, src, n, True)}
            rows.append((f"cached greedy decoding, {length} tokens",
                         harness.alternate(fns, args.rounds, args.min_run_time)))

    load = harness.environment(device)["loadavg_1_5_15"]
    clock = "CPU time" if args.cpu_time else "wall-clock time"
    print(f"\n{args.before} -> working tree, {torch.get_num_threads()} thread(s), {clock}, load average {load}")
    print(f"{'benchmark':<44}{'before ms':>12}{'after ms':>12}{'speed-up':>18}")
    for name, times in rows:
        b, a = harness.summary(times["before"]), harness.summary(times["after"])
        speedup = harness.summary([x / y for x, y in zip(times["before"], times["after"], strict=True)])
        print(f"{name:<44}{b['median'] * 1e3:>12.1f}{a['median'] * 1e3:>12.1f}"
              f"{speedup['median']:>10.3f} [{speedup['iqr']:.3f}]")


if __name__ == "__main__":
    main()
