"""What DDP and FSDP2 do, measured on two CPU processes (the distributed appendix runs it).

``gradient_averaging`` starts ``world_size`` Gloo processes. Each takes its share of one global
batch and computes:

* its own gradient, alone (no communication): the per-token mean of its share's loss;
* the DDP gradient: its share's summed loss divided by (global target tokens / world size),
  backward through ``DistributedDataParallel``, which averages the gradients by all-reduce;
* what FSDP2 (``fully_shard``) leaves it of each parameter: its shard's shape and placement.

One process then computes the full-batch gradient, which the DDP gradient must equal.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch import Tensor, nn

from ..config import TransformerConfig
from ..models import Transformer
from ..training import label_smoothed_cross_entropy
from . import distributed
from .data import generated_text, global_batches, local_part

SHOWN = ("src_embed.token.embedding.weight", "encoder.layers.0.self_attn.w_q.weight", "generator.weight")


@dataclass
class GradientAveraging:
    """Gradients flattened into one vector each (float64)."""

    alone: list[Tensor]  # each process's gradient of its own share, no communication
    ddp: list[Tensor]  # each process's gradient after DDP's all-reduce
    full_batch: Tensor  # one process, the whole global batch
    rows: list[int]  # sentence pairs in each process's share
    tokens: list[int]  # target tokens in each process's share
    shards: list[dict[str, tuple[tuple[int, ...], tuple[int, ...], str]]]  # name -> (full, local shape, placement)
    numel: list[tuple[int, int]]  # per process: (parameters of the model, parameters it holds)


def _setup(world_size: int) -> tuple[Transformer, object]:
    data = generated_text(seed=0, n_pairs=100)
    # The first global batch whose shares hold different numbers of target tokens: where the
    # normalisation of the loss matters.
    batch = next(b for b in global_batches(data, batch_size=8, seed=0, min_rows=world_size)
                 if len({int((local_part(b, r, world_size).tgt_out != 0).sum()) for r in range(world_size)}) > 1)
    config = TransformerConfig.preset("book", src_vocab_size=len(data.vocab), tgt_vocab_size=len(data.vocab),
                                      dropout=0.0)
    torch.manual_seed(0)
    return Transformer(config), batch


def _flat_gradient(model: nn.Module) -> Tensor:
    return torch.cat([p.grad.detach().reshape(-1) for p in model.parameters()])


def _loss_sum(model: nn.Module, batch: object) -> tuple[Tensor, Tensor]:
    logits = model(batch.src, batch.tgt_in)  # (B, T, V)
    loss = label_smoothed_cross_entropy(logits, batch.tgt_out, 0.1, 0, reduction="sum")
    return loss, (batch.tgt_out != 0).sum()


def _worker(rank: int, world_size: int, folder: str) -> None:
    os.environ.update(RANK=str(rank), WORLD_SIZE=str(world_size))
    torch.set_num_threads(1)
    torch.set_default_dtype(torch.float64)
    # The processes meet through a file in the run's own folder, not on a port: a port chosen here and
    # bound later by the processes could be taken in between by anything else on the machine.
    processes = distributed.start("cpu", timeout_s=60, meeting=(Path(folder) / "meeting").as_uri())
    try:
        model, batch = _setup(world_size)
        mine = local_part(batch, rank, world_size)
        loss, tokens = _loss_sum(model, mine)
        (loss / tokens).backward()  # alone: the mean over its own tokens
        alone = _flat_gradient(model)
        model.zero_grad()
        ddp = distributed.wrap(model, "ddp", processes)
        loss, tokens = _loss_sum(ddp, mine)
        (loss / distributed.token_divisor(processes)(tokens)).backward()  # all-reduce happens in here
        averaged = _flat_gradient(model)

        sharded, _ = _setup(world_size)
        distributed.wrap(sharded, "fsdp", processes)
        params = dict(sharded.named_parameters())
        shards = {name: (tuple(params[name].shape), tuple(params[name].to_local().shape),
                         str(params[name].placements[0])) for name in SHOWN}
        numel = (sum(p.numel() for p in params.values()), sum(p.to_local().numel() for p in params.values()))
        record = {"alone": alone, "ddp": averaged, "rows": len(mine), "tokens": int(tokens), "shards": shards,
                  "numel": numel}
        torch.save(record, Path(folder) / f"rank{rank}.pt")
        dist.barrier()
    finally:
        distributed.stop()


def gradient_averaging(world_size: int = 2) -> GradientAveraging:
    """Run the measurement on ``world_size`` processes (see the module's docstring)."""
    with tempfile.TemporaryDirectory() as folder:
        mp.start_processes(_worker, args=(world_size, folder), nprocs=world_size,
                           start_method="spawn", join=True)
        results = [torch.load(Path(folder) / f"rank{r}.pt", weights_only=True) for r in range(world_size)]
    default_dtype = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        model, batch = _setup(world_size)
        loss, tokens = _loss_sum(model, batch)
        (loss / tokens).backward()
        full = _flat_gradient(model)
    finally:
        torch.set_default_dtype(default_dtype)
    return GradientAveraging([r["alone"] for r in results], [r["ddp"] for r in results], full,
                             [r["rows"] for r in results], [r["tokens"] for r in results],
                             [r["shards"] for r in results],
                             [tuple(r["numel"]) for r in results])
