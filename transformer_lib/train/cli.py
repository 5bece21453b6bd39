"""The command line: ``python -m transformer_lib.train`` or ``torchrun ... -m transformer_lib.train``.

Every flag is checked before any work. Bad arguments exit with status 2 and one line; a bad data
file with status 2 and one line naming the file and the line; a failure in any process with status
1, its rank named. Under ``torchrun`` every process checks the same flags and data: rank 0 prints
the line and exits with status 2, the others wait quietly (``usage_error``) and ``torchrun`` stops
them. ``torchrun`` does not pass the status on: it exits with status 1 whenever a process fails,
after a summary whose "Root Cause" names the rank and its ``exitcode`` (2: a usage or data error).
``python -m transformer_lib.train.launch`` (``launch``) starts the same processes and does: status
2 and the one line; for a crash, status 1 and one line naming the failed ranks.

``--resume DIR`` alone goes on with the options stored in ``DIR/checkpoint.pt``. A flag that
decides what is trained (``RUN_OPTIONS``), given again, must agree with the checkpoint; ``--steps``
may only be raised. Paths are stored resolved, so that a run resumes from any working directory; a
data file given at another path than the stored one is accepted when its data are the same (the
checkpoint's SHA-256, checked in ``run``). A folder holding a checkpoint is never started afresh
without ``--overwrite``. A stop (SIGTERM, Ctrl-C) or a lost peer ends in one line (``stops``).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from ..config import PRESETS
from ..grammar import MAX_PAIRS
from ..pretrained.recipe import BOOK_RECIPE
from ..validation import check_device
from . import distributed, stops
from .data import DataError
from .distributed import STRATEGIES, launched_world_size
from .run import CHECKPOINT, UsageError, run, stored_training
from .stops import PROG

MIN_PAIRS = 10  # the generated corpus splits its pairs 80/10/10
# What decides the trained weights: given again with --resume, each must agree with the checkpoint.
RUN_OPTIONS = ("preset", "batch_size", "seed", "dropout", "dtype", "data_src", "data_tgt", "vocab", "bpe_merges",
               "pairs", "warmup", "lr_scale", "label_smoothing")
# How the run goes: taken from the checkpoint unless given again, and free to change.
KEPT_OPTIONS = ("strategy", "log_every", "save_every", "timeout")
DATA_OPTIONS = ("data_src", "data_tgt", "vocab")  # files: stored resolved, found again by their data


# How long a rank other than 0 leaves rank 0 to report the same error. The processes start together
# but may reach their checks far apart (importing torch on a busy CPU: 10 s was seen to be too short);
# waiting costs only a rank that meets an error alone, which is rare.
QUIET_RANK_WAIT_S = 60.0


def usage_error(message: str) -> int:
    """Print a usage or data error in one line, once across processes; the exit status, 2.

    Every process of a launch checks the same flags and data and meets the same error: rank 0 prints
    it; the others wait, and ``torchrun`` stops them when rank 0 exits. A rank that still runs after
    ``QUIET_RANK_WAIT_S`` met an error of its own (a GPU that only it lacks): it prints it, named."""
    rank = os.environ.get("RANK", "0")
    if rank != "0":
        time.sleep(QUIET_RANK_WAIT_S)
    print(f"{PROG}: {'' if rank == '0' else f'rank {rank}: '}error: {message}", file=sys.stderr, flush=True)
    return 2


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, not argparse's usage block
        self.exit(usage_error(f"{message} (see --help)"))


def positive(kind: type) -> object:
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
    p.add_argument("--steps", type=positive(int), default=200, help="optimiser steps in all (default 200)")
    p.add_argument("--batch-size", type=positive(int), default=64,
                   help="sentence pairs per step, all processes together (default 64)")
    p.add_argument("--seed", type=int, default=BOOK_RECIPE.seed,
                   help="initial weights, batch order, dropout (default %(default)s)")
    p.add_argument("--out", metavar="DIR",
                   help="folder for checkpoint.pt and vocab.json (default: the --resume folder)")
    p.add_argument("--resume", metavar="DIR", help="go on from DIR/checkpoint.pt, to --steps in all")
    p.add_argument("--overwrite", action="store_true",
                   help="start afresh in an --out folder that holds a checkpoint (its run is lost)")
    p.add_argument("--strategy", choices=STRATEGIES, default="ddp", help="with several processes (default ddp)")
    p.add_argument("--device", help="cpu, cuda, cuda:1... (default: each process's own GPU if there is one "
                                    "for every process, else cpu)")
    p.add_argument("--dropout", type=_fraction, help="replaces the preset's dropout")
    p.add_argument("--dtype", choices=("float32", "float64"), default="float32",
                   help="of the weights and the arithmetic (float64: for exact comparisons; default float32)")
    p.add_argument("--data-src", metavar="FILE", help="source sentences, one a line (default: the generated corpus)")
    p.add_argument("--data-tgt", metavar="FILE", help="their translations, line for line")
    p.add_argument("--vocab", metavar="FILE", help="the tokenizer of an earlier run (DIR/vocab.json) instead "
                                                   "of BPE learned on --data-src and --data-tgt")
    p.add_argument("--bpe-merges", type=positive(int), default=4000, help="BPE merges to learn (default 4000)")
    p.add_argument("--pairs", type=positive(int), default=BOOK_RECIPE.n_pairs,
                   help="generated corpus: sentence pairs, 80%% used for training (default %(default)s, the book's)")
    # The schedule and the loss: the book's recipe unless given (its batch size and steps are the shipped
    # model's; the command's smaller defaults above make a first run short).
    book = BOOK_RECIPE.training
    p.add_argument("--warmup", type=positive(int), default=book.warmup,
                   help="warm-up steps of the schedule (default %(default)s, the book's)")
    p.add_argument("--lr-scale", type=positive(float), default=book.lr_scale,
                   help="factor on the paper's rate (default %(default)s, the book's)")
    p.add_argument("--label-smoothing", type=_fraction, default=book.label_smoothing,
                   help="(default %(default)s, the book's and the paper's)")
    p.add_argument("--log-every", type=positive(int), default=10, help="steps between progress lines (default 10)")
    p.add_argument("--save-every", type=positive(int), default=100, help="steps between checkpoints (default 100)")
    p.add_argument("--timeout", type=positive(float), default=300.0,
                   help="seconds a process waits for the others in a collective before failing (default 300)")
    p.add_argument("--translate", metavar="SENTENCE", help="at the end, translate SENTENCE with the trained model")
    return p


def _flag(key: str) -> str:
    return "--" + key.replace("_", "-")


def _given(argv: Sequence[str] | None) -> set[str]:
    """The options ``argv`` names (those a resume must check against its checkpoint)."""
    p = parser()
    for action in p._actions:  # parsed again without defaults, what remains was typed
        action.default = argparse.SUPPRESS
    return set(vars(p.parse_args(argv)))


def _same(key: str, a: object, b: object) -> bool:
    if key in DATA_OPTIONS and a is not None and b is not None:
        return Path(a).resolve() == Path(b).resolve()
    return a == b


def _merge_resumed(p: argparse.ArgumentParser, args: argparse.Namespace, given: set[str]) -> None:
    """Fill ``args`` from ``--resume``'s checkpoint; a re-given option must agree; ``--steps`` may be raised."""
    path = Path(args.resume) / CHECKPOINT
    try:
        training = stored_training(path)
    except UsageError as error:
        p.error(str(error))
    stored, done = training["args"], int(training["step"])
    args.moved_data = {}
    for key in RUN_OPTIONS:
        if key not in given:
            setattr(args, key, stored[key])
            if key in DATA_OPTIONS and stored[key] is not None and not Path(stored[key]).is_file():
                p.error(f"{_flag(key)}: {stored[key]}, named by the checkpoint {path}, is gone; give its new place "
                        f"with {_flag(key)} (the data are checked against the checkpoint's SHA-256)")
        elif key in DATA_OPTIONS and None not in (getattr(args, key), stored[key]):
            if not _same(key, getattr(args, key), stored[key]):  # moved: run checks that its data are the same
                args.moved_data[key] = stored[key]
        elif not _same(key, getattr(args, key), stored[key]):
            p.error(f"{_flag(key)} {getattr(args, key)}: the checkpoint {path} was made with {_flag(key)} "
                    f"{stored[key]} (give the same, or leave {_flag(key)} out)")
    for key in KEPT_OPTIONS:
        if key not in given:
            setattr(args, key, stored[key])
    if "steps" not in given:
        args.steps = stored["steps"]
        if args.steps <= done:
            p.error(f"--resume: the run in {args.resume} is complete ({done} of {args.steps} steps); "
                    f"give --steps above {done} to go on")
    elif args.steps <= done:
        p.error(f"--steps {args.steps}: the checkpoint {path} has done {done} steps already; "
                f"give more to go on")


def parse(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The flags of ``argv``, every one checked (and with ``--resume``, completed from the checkpoint)."""
    p = parser()
    args = p.parse_args(argv)
    if args.resume is not None:
        if not (Path(args.resume) / CHECKPOINT).is_file():
            p.error(f"--resume: no {CHECKPOINT} in {args.resume}")
        _merge_resumed(p, args, _given(argv))
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
    problem = _out_problem(Path(args.out))
    if problem is not None:
        p.error(f"--out: {problem}")
    _refuse_overwrite(p, args)
    if not MIN_PAIRS <= args.pairs <= MAX_PAIRS:
        p.error(f"--pairs: expected {MIN_PAIRS} to {MAX_PAIRS:,} pairs of the generated corpus, got {args.pairs}")
    if args.device is not None:
        try:
            # "cuda" is each process's own GPU (distributed.start): check that one, not cuda:0 from every process
            check_device("--device", f"cuda:{os.environ.get('LOCAL_RANK', '0')}" if args.device == "cuda"
                         else args.device)
        except ValueError as error:
            p.error(str(error))
    for key in DATA_OPTIONS:  # stored resolved: a resume finds them from any working directory
        if getattr(args, key) is not None:
            setattr(args, key, str(Path(getattr(args, key)).resolve()))
    args.out = str(Path(args.out).resolve())
    return args


def _out_problem(out: Path) -> str | None:
    """Why the run could not write its checkpoints in ``out`` (None: it can), found before any work:
    the folder, or the nearest one above that exists, is probed with a temporary folder."""
    existing = out
    while not os.path.lexists(existing) and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        where = "is a file" if existing == out else f"is under a file, {existing}"
        return f"{out} {where}; expected a folder (new, or of an earlier run)"
    try:
        os.rmdir(tempfile.mkdtemp(prefix=".probe.", dir=existing))
    except OSError as error:
        return f"{out}: cannot write in {existing} ({error.strerror}); expected a folder you can write"
    return None


def _refuse_overwrite(p: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """A fresh run into a folder that holds a checkpoint would lose that run: refused unless ``--overwrite``."""
    out, checkpoint = Path(args.out), Path(args.out) / CHECKPOINT
    resuming_here = args.resume is not None and Path(args.resume).resolve() == out.resolve()
    if args.overwrite or resuming_here or not checkpoint.is_file():
        return
    try:
        held = f"a run's checkpoint at step {int(stored_training(checkpoint)['step'])}"
    except UsageError:
        held = f"a {CHECKPOINT}"
    p.error(f"--out: {out} holds {held}; give --resume {out} to go on with it, or --overwrite (or another --out) "
            f"to start over")


def main(argv: Sequence[str] | None = None) -> int:
    parsed: list[argparse.Namespace] = []
    with stops.stop_signals_raise():
        try:
            return _main(argv, parsed)
        except BaseException as error:
            signum = stops.signal_of(error)
            if signum is None or isinstance(error, SystemExit):
                raise
            return stops.report_stop(signum, parsed[0] if parsed else None, CHECKPOINT)


def _main(argv: Sequence[str] | None, parsed: list[argparse.Namespace]) -> int:
    args = parse(argv)
    parsed.append(args)
    rank, world_size = int(os.environ.get("RANK", "0")), launched_world_size()
    try:
        run(args)
    except (UsageError, DataError) as error:
        return usage_error(str(error))
    except Exception as error:
        if stops.stop_received():  # a collective broken by the stop of another process: a stop
            raise
        if stops.lost_a_peer(error, world_size):
            return stops.report_lost_peer(error, rank, world_size)
        print(f"{PROG}: rank {rank} failed: {type(error).__name__}: {error}", file=sys.stderr, flush=True)
        stops.record_failure(error)
        raise
    finally:  # only now may the others see this process's connections close and fail in turn
        distributed.stop()
    return 0
