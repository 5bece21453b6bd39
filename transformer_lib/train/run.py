"""One training run of the command, on one process or many: data, model, the library's
``training_step`` over the global batches, progress on rank 0, checkpoints, resume."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch
from torch.distributed.checkpoint.state_dict import (
    StateDictOptions,
    get_model_state_dict,
    get_optimizer_state_dict,
    set_model_state_dict,
    set_optimizer_state_dict,
)

from ..checkpoint import (
    RUN_CHECKPOINT,
    RUN_VOCABULARIES,
    load_checkpoint,
    remove_temporary_files,
    save_checkpoint,
    write_atomically,
)
from ..config import TransformerConfig
from ..decoding import translate
from ..models import Transformer
from ..training import TrainingOptions, batch_order, schedule_for, training_step
from . import distributed
from .data import TextData, generated_text, global_batches, load_text, local_part

CHECKPOINT, VOCAB = RUN_CHECKPOINT, RUN_VOCABULARIES
# The flags of this launch only, not of the run: not stored in its checkpoint.
NOT_STORED = ("resume", "overwrite", "moved_data")
FULL = StateDictOptions(full_state_dict=True, cpu_offload=True)  # the whole tensors, on rank 0's CPU


class UsageError(ValueError):
    """An argument the run cannot use (exit status 2, as argparse's own errors)."""


def load_data(args: argparse.Namespace, max_len: int) -> TextData:
    if args.data_src is None:
        return generated_text(args.seed, args.pairs)
    return load_text(Path(args.data_src), Path(args.data_tgt), args.bpe_merges,
                     None if args.vocab is None else Path(args.vocab), max_len)


def build_model(args: argparse.Namespace, vocab_size: int) -> Transformer:
    overrides = {} if args.dropout is None else {"dropout": args.dropout}
    config = TransformerConfig.preset(args.preset, src_vocab_size=vocab_size, tgt_vocab_size=vocab_size, **overrides)
    torch.manual_seed(args.seed)  # every process builds the same initial weights
    return Transformer(config)


def save(path: Path, model: torch.nn.Module, optimizer: torch.optim.Optimizer, scheduler: object, step: int,
         data: TextData, n_batches: int, args: argparse.Namespace, processes: distributed.Processes) -> None:
    """Rank 0 writes, atomically, everything a resume needs. Every process must call it (FSDP2's
    shards are gathered)."""
    weights = get_model_state_dict(model, options=FULL)
    optimizer_state = get_optimizer_state_dict(model, optimizer, options=FULL)
    rng = distributed.gather_objects(
        {"cpu": torch.get_rng_state(), "cuda": torch.cuda.get_rng_state() if processes.device.type == "cuda" else None},
        processes)
    if processes.rank != 0:
        return
    # Building a model draws random numbers: draw them aside, or a resumed run's dropout would differ.
    with torch.random.fork_rng(devices=[]):
        plain = Transformer(model.config if hasattr(model, "config") else model.module.config)
    plain.load_state_dict(weights)
    epoch, position = divmod(step, n_batches)
    training = {"step": step, "epoch": epoch, "batch_in_epoch": position, "world_size": processes.world_size,
                "optimizer": optimizer_state, "scheduler": scheduler.state_dict(), "rng": rng,
                "args": {key: value for key, value in vars(args).items() if key not in NOT_STORED}}
    save_checkpoint(path, plain, data.vocab, data.vocab,
                    extra={"training": training, "tokenizer": data.vocabularies.record(), "data_sha256": data.sha256()})


def stored_training(path: Path) -> dict:
    """The training state of a checkpoint written by the command (its options and step), read without
    building the model: ``cli`` completes a resume's flags from it before any work."""
    training = _stored_extra(path).get("training")
    if not isinstance(training, dict) or "args" not in training or "step" not in training:
        raise UsageError(f"--resume: {path} is not a checkpoint of transformer_lib.train (no training state)")
    return training


def _stored_extra(path: Path) -> dict:
    try:
        return torch.load(path, map_location="cpu", weights_only=True, mmap=True)["extra"]
    except Exception as error:  # unreadable, or not the command's checkpoint
        raise UsageError(f"--resume: {path} is not a checkpoint of transformer_lib.train "
                         f"({type(error).__name__}: {error})") from error


def check_same_data(path: Path, data: TextData, moved: dict[str, str] | None = None) -> str | None:
    """The data of a resumed run must be those the checkpoint was trained on (its recorded SHA-256).
    ``moved``: the files given at another path than the stored one (flag: stored path); accepted when
    the data are the same, with the note to print (None when nothing moved)."""
    recorded = _stored_extra(path).get("data_sha256")
    if recorded is not None and recorded != data.sha256():
        raise UsageError(f"--resume: the data differ from those {path} was trained on (SHA-256 {data.sha256()}, "
                         f"the checkpoint records {recorded}): a data file was changed")
    if not moved:
        return None
    if recorded is None:  # a checkpoint without the SHA-256 cannot vouch for data found elsewhere
        raise UsageError(f"--resume: {path} records no SHA-256 of its data, so only the stored paths can be used: "
                         + ", ".join(f"--{key.replace('_', '-')} {stored}" for key, stored in moved.items()))
    return ("note: the data moved (" + ", ".join(f"--{key.replace('_', '-')} was {stored}" for key, stored
                                                 in moved.items())
            + f"); the files given hold the same data (SHA-256 {recorded[:12]}...), so the run goes on")


def resume(path: Path, model: torch.nn.Module, optimizer: torch.optim.Optimizer, scheduler: object,
           processes: distributed.Processes) -> int:
    """Load a checkpoint's weights, optimizer, schedule and random states; the step to go on from."""
    checkpoint = load_checkpoint(path)
    training = checkpoint.extra["training"]  # cli and run have checked the options and data against it
    set_model_state_dict(model, checkpoint.model.state_dict(), options=StateDictOptions(full_state_dict=True))
    set_optimizer_state_dict(model, optimizer, training["optimizer"], options=StateDictOptions(full_state_dict=True))
    scheduler.load_state_dict(training["scheduler"])
    if training["world_size"] == processes.world_size:  # dropout continues exactly where it stopped
        states = training["rng"][processes.rank]
        torch.set_rng_state(states["cpu"])
        if states["cuda"] is not None and processes.device.type == "cuda":
            torch.cuda.set_rng_state(states["cuda"])
    elif processes.rank == 0:
        print(f"note: the checkpoint ran on {training['world_size']} processes, this run on "
              f"{processes.world_size}: dropout's random masks start afresh", flush=True)
    return int(training["step"])


def run(args: argparse.Namespace) -> None:
    """Train as ``args`` say (see ``cli``); every process of a ``torchrun`` launch runs this."""
    # The data, and every check, before the processes meet: a process that stops on an error while
    # another waits for it in init_process_group would make that one fail too, with a traceback.
    world_size = distributed.launched_world_size()
    if args.batch_size < world_size:
        raise UsageError(f"--batch-size: the global batch of {args.batch_size} pairs cannot be split across "
                         f"{world_size} processes")
    data = load_data(args, TransformerConfig.preset(args.preset).max_len)
    moved_note = None
    if args.resume is not None:
        moved_note = check_same_data(Path(args.resume) / CHECKPOINT, data, getattr(args, "moved_data", None))
    processes = distributed.start(args.device, args.timeout)
    for note in (moved_note, processes.note):
        if note is not None and processes.rank == 0:
            print(note, flush=True)
    default_dtype = torch.get_default_dtype()
    torch.set_default_dtype(getattr(torch, args.dtype))  # the weights, and every float tensor made in training
    try:
        _run(args, processes, data)
    finally:
        # the process group stays up: cli.main closes it, after recording a failure (stops.record_failure)
        torch.set_default_dtype(default_dtype)


def _run(args: argparse.Namespace, processes: distributed.Processes, data: TextData) -> None:
    out = Path(args.out)
    batches = global_batches(data, args.batch_size, args.seed, min_rows=processes.world_size)
    model = build_model(args, len(data.vocab)).to(processes.device)
    wrapped = distributed.wrap(model, args.strategy, processes)
    options = TrainingOptions(steps=args.steps, warmup=args.warmup, lr_scale=args.lr_scale,
                              label_smoothing=args.label_smoothing, pad_id=data.vocab.pad_id, seed=args.seed,
                              progress=False)
    optimizer, scheduler = schedule_for(model, options)  # after sharding: Adam holds the shards
    torch.manual_seed(args.seed)  # dropout's masks, as training.train draws them (a resume restores its own)
    start = 0
    if args.resume is not None:
        start = resume(Path(args.resume) / CHECKPOINT, wrapped, optimizer, scheduler, processes)
    if processes.rank == 0:
        out.mkdir(parents=True, exist_ok=True)
        if getattr(args, "overwrite", False) and (args.resume is None or Path(args.resume).resolve() != out.resolve()):
            (out / CHECKPOINT).unlink(missing_ok=True)  # asked for: a stop before the first save leaves no old run
        for leftover in remove_temporary_files(out):  # of a save killed outright (SIGKILL), which cannot clean up
            print(f"note: removed {leftover}, left by a save that was killed", flush=True)
        record = json.dumps(data.vocabularies.record(), ensure_ascii=False).encode("utf-8")
        write_atomically(out / VOCAB, lambda file: file.write(record))
        print(f"{processes.world_size} process(es), {args.strategy if processes.distributed else 'one process'} "
              f"on {processes.device.type}; preset {args.preset}, {sum(p.numel() for p in model.parameters()):,} "
              f"parameters; "
              f"{len(data.pairs)} pairs, vocabulary {len(data.vocab)}; steps {start + 1}-{args.steps}", flush=True)
        print(what_processes_change(args, processes), flush=True)

    divisor = distributed.token_divisor(processes)
    wrapped.train()
    started, tokens = time.perf_counter(), 0
    for step in range(start, args.steps):
        epoch, position = divmod(step, len(batches))
        batch = batches[batch_order(len(batches), epoch, args.seed)[position]]
        result = training_step(wrapped, local_part(batch, processes.rank, processes.world_size), optimizer,
                               scheduler, options, divisor)
        tokens += int((batch.tgt_out != data.vocab.pad_id).sum())
        done = step + 1
        if done % args.log_every == 0 or done == args.steps:
            loss = distributed.mean_over_processes(result.loss, processes)
            elapsed = time.perf_counter() - started
            if processes.rank == 0:
                print(f"step {done}/{args.steps} | loss {loss:.4f} | {tokens / elapsed:,.0f} tokens/s | "
                      f"{(done - start) / elapsed:.2f} steps/s | {elapsed:.2f} s", flush=True)
        if done % args.save_every == 0 or done == args.steps:
            save(out / CHECKPOINT, wrapped, optimizer, scheduler, done, data, len(batches), args, processes)
    if processes.rank == 0:
        print(f"checkpoint: {out / CHECKPOINT}", flush=True)
        if args.translate is not None:
            print_translation(out, args.translate)


def what_processes_change(args: argparse.Namespace, processes: distributed.Processes) -> str:
    """What a run on one process and one on several share and what they do not, said once: the same
    global batches, so the same losses without dropout; with dropout, each process draws its own masks."""
    low, extra = divmod(args.batch_size, processes.world_size)
    share = "" if not processes.distributed else f" ({low}{f' or {low + 1}' if extra else ''} per process)"
    dropout = ("no dropout: any number of processes gives these losses (to rounding)" if args.dropout == 0 else
               "dropout draws its masks in each process, so the losses of 1 and of several processes differ "
               "a little (--dropout 0 makes them agree to rounding)")
    return f"note: each step takes a global batch of {args.batch_size} pairs{share}, the same on any number of " \
           f"processes; {dropout}"


def print_translation(out: Path, sentence: str) -> None:
    """Greedy translation of ``sentence`` by the run's model, with its own vocabularies."""
    result = translate(load_checkpoint(out).model, sentence)
    print(f"translate: {sentence}\n        -> {result.text}", flush=True)
