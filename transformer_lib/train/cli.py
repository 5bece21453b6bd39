"""The command line: ``python -m transformer_lib.train`` or ``torchrun ... -m transformer_lib.train``.

Bad arguments exit with status 2 and one line; a bad data file with status 2 and one line naming
the file and the line; a failure in any process with status 1, its rank named (``torchrun``
then stops the other processes, and reports the rank too).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from ..config import PRESETS
from .data import DataError
from .distributed import STRATEGIES
from .run import CHECKPOINT, UsageError, run

PROG = "python -m transformer_lib.train"


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, not argparse's usage block
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def _positive(kind: type) -> object:
    def parse(text: str) -> object:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a positive {kind.__name__}, got {text!r}") from None
        if not value > 0:
            raise argparse.ArgumentTypeError(f"expected a positive {kind.__name__}, got {text!r}")
        return value

    parse.__name__ = f"positive {kind.__name__}"
    return parse


def _fraction(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number in [0, 1), got {text!r}") from None
    if not 0.0 <= value < 1.0:
        raise argparse.ArgumentTypeError(f"expected a number in [0, 1), got {text!r}")
    return value


def parser() -> argparse.ArgumentParser:
    p = _Parser(prog=PROG, description="Train a Transformer on one process, or on many under torchrun "
                                       "(DDP or FSDP2), with checkpoints a run can resume from.")
    p.add_argument("--preset", choices=sorted(PRESETS), default="book", help="the model's shape (default book)")
    p.add_argument("--steps", type=_positive(int), default=200, help="optimiser steps in all (default 200)")
    p.add_argument("--batch-size", type=_positive(int), default=64,
                   help="sentence pairs per step, all processes together (default 64)")
    p.add_argument("--seed", type=int, default=0, help="initial weights, batch order, dropout (default 0)")
    p.add_argument("--out", metavar="DIR",
                   help="folder for checkpoint.pt and vocab.json (default: the --resume folder)")
    p.add_argument("--resume", metavar="DIR", help="go on from DIR/checkpoint.pt, to --steps in all")
    p.add_argument("--strategy", choices=STRATEGIES, default="ddp", help="with several processes (default ddp)")
    p.add_argument("--device", help="cpu, cuda, cuda:1... (default: this process's GPU if any, else cpu)")
    p.add_argument("--dropout", type=_fraction, help="replaces the preset's dropout")
    p.add_argument("--dtype", choices=("float32", "float64"), default="float32",
                   help="of the weights and the arithmetic (float64: for exact comparisons; default float32)")
    p.add_argument("--data-src", metavar="FILE", help="source sentences, one a line (default: the generated corpus)")
    p.add_argument("--data-tgt", metavar="FILE", help="their translations, line for line")
    p.add_argument("--vocab", metavar="FILE", help="the tokenizer of an earlier run (DIR/vocab.json) instead "
                                                   "of BPE learned on --data-src and --data-tgt")
    p.add_argument("--bpe-merges", type=_positive(int), default=4000, help="BPE merges to learn (default 4000)")
    p.add_argument("--pairs", type=_positive(int), default=15_000,
                   help="generated corpus: sentence pairs, 80%% used for training (default 15000)")
    p.add_argument("--warmup", type=_positive(int), default=300, help="warm-up steps of the schedule (default 300)")
    p.add_argument("--lr-scale", type=_positive(float), default=0.5, help="factor on the paper's rate (default 0.5)")
    p.add_argument("--label-smoothing", type=_fraction, default=0.1, help="(default 0.1, the paper's)")
    p.add_argument("--log-every", type=_positive(int), default=10, help="steps between progress lines (default 10)")
    p.add_argument("--save-every", type=_positive(int), default=100, help="steps between checkpoints (default 100)")
    p.add_argument("--timeout", type=_positive(float), default=300.0,
                   help="seconds a process waits for the others in a collective before failing (default 300)")
    p.add_argument("--translate", metavar="SENTENCE", help="at the end, translate SENTENCE with the trained model")
    return p


def parse(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = parser()
    args = p.parse_args(argv)
    if (args.data_src is None) != (args.data_tgt is None):
        p.error("--data-src and --data-tgt: give both files, or neither for the generated corpus")
    if args.vocab is not None and args.data_src is None:
        p.error("--vocab: a tokenizer for --data-src and --data-tgt, given without them")
    for flag, path in (("--data-src", args.data_src), ("--data-tgt", args.data_tgt), ("--vocab", args.vocab)):
        if path is not None and not Path(path).is_file():
            p.error(f"{flag}: no file {path}")
    if args.out is None:
        if args.resume is None:
            p.error("--out: needed (a folder for the checkpoints), unless --resume gives one")
        args.out = args.resume
    if args.resume is not None and not (Path(args.resume) / CHECKPOINT).is_file():
        p.error(f"--resume: no {CHECKPOINT} in {args.resume}")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse(argv)
    rank = os.environ.get("RANK", "0")
    try:
        run(args)
    except (UsageError, DataError) as error:
        print(f"{PROG}: error: {error}", file=sys.stderr, flush=True)
        return 2
    except BaseException as error:
        if isinstance(error, SystemExit | KeyboardInterrupt):
            raise
        print(f"{PROG}: rank {rank} failed: {type(error).__name__}: {error}", file=sys.stderr, flush=True)
        raise
    return 0
