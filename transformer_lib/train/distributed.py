"""Processes and devices: the process group ``torchrun`` describes, and the model wrapped for it.

``torchrun`` starts one process per device and tells each its ``RANK``, ``LOCAL_RANK`` and
``WORLD_SIZE`` (and where to meet: ``MASTER_ADDR``, ``MASTER_PORT``) in the environment. Without
them this is a one-process run and nothing is wrapped. The backend follows the device: NCCL
between CUDA devices, Gloo between CPU processes.

* DDP (``DistributedDataParallel``): every process holds the whole model; after ``backward``
  the gradients are averaged across processes by all-reduce, so every copy takes the same step.
* FSDP2 (``torch.distributed.fsdp.fully_shard``): each process holds one slice (a shard) of every
  parameter, gradient and Adam moment. Before a layer runs, its parameters are all-gathered; after
  ``backward``, its gradients are reduce-scattered (averaged, then each process keeps its slice).
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass
from datetime import timedelta

import torch
import torch.distributed as dist
from torch import Tensor, nn

STRATEGIES = ("ddp", "fsdp")


@dataclass(frozen=True)
class Processes:
    """Where this process stands: its rank among ``world_size`` processes, and its device."""

    rank: int
    world_size: int
    device: torch.device
    note: str | None = None  # why the device is not the one a reader might expect (default_device)

    @property
    def distributed(self) -> bool:
        return self.world_size > 1


def start(device: str | None, timeout_s: float, meeting: str = "env://") -> Processes:
    """Join the process group ``torchrun`` describes (if any), on ``device`` (default: this
    process's GPU if every process here has one, else the CPU: ``default_device``). A collective that waits longer than
    ``timeout_s`` seconds raises, so that a lost process cannot hang the others forever.

    ``meeting`` is where the processes find each other: ``env://`` reads torchrun's store from
    ``MASTER_ADDR`` and ``MASTER_PORT`` (torchrun's launcher holds it open, on a port the system
    gave it); ``file://PATH`` meets through a file that does not exist yet, for processes started
    without torchrun (the appendix's demo): no port is chosen at all, so none can be taken by
    another program between its choice and its use."""
    rank, world_size = int(os.environ.get("RANK", 0)), launched_world_size()
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    note = None
    if device is None:
        local_processes = int(os.environ.get("LOCAL_WORLD_SIZE", 1))
        gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
        device = default_device(local_rank, local_processes, gpus)
        if device == "cpu" and gpus:
            note = (f"note: {local_processes} processes on this machine and {gpus} GPU{'s' * (gpus > 1)}: all train "
                    f"on the CPU (one process a GPU: --nproc-per-node {gpus})")
    chosen = torch.device(device)
    if chosen.type == "cuda" and chosen.index is None:
        chosen = torch.device("cuda", local_rank)  # --device cuda: one GPU per process
    if chosen.type == "cuda":
        torch.cuda.set_device(chosen)
    if world_size > 1 and not dist.is_initialized():
        backend = "nccl" if chosen.type == "cuda" else "gloo"
        dist.init_process_group(backend, init_method=meeting, rank=rank, world_size=world_size,
                                timeout=timedelta(seconds=timeout_s),
                                device_id=chosen if chosen.type == "cuda" else None)
    return Processes(rank, world_size, chosen, note)


def default_device(local_rank: int, local_processes: int, gpus: int) -> str:
    """This process's device when none is given: its own GPU if every process on this machine has
    one, else the CPU for all of them (two processes cannot share one GPU under NCCL, and all must
    agree on the backend). A one-GPU machine (Colab's) running the appendix's two processes trains
    on the CPU, as a machine with no GPU would."""
    return f"cuda:{local_rank}" if gpus >= local_processes else "cpu"


def launched_world_size() -> int:
    """How many processes ``torchrun`` started (1 without it)."""
    return int(os.environ.get("WORLD_SIZE", 1))


def stop() -> None:
    if dist.is_initialized():
        dist.destroy_process_group()


def wrap(model: nn.Module, strategy: str, processes: Processes) -> nn.Module:
    """``model`` (on its device) ready for ``strategy`` across the processes (unchanged for one)."""
    if not processes.distributed:
        return model
    if strategy == "ddp":
        from torch.nn.parallel import DistributedDataParallel

        on_gpu = processes.device.type == "cuda"
        return DistributedDataParallel(model, device_ids=[processes.device] if on_gpu else None)
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import fully_shard

    # The model's output is a view (of the pre-softmax projection); FSDP2 warns that an in-place op
    # on it would skip a hook. Nothing here changes it in place: the loss reads it.
    warnings.filterwarnings("ignore", message="FSDP2-wrapped module .* returned a view tensor")
    mesh = init_device_mesh(processes.device.type, (processes.world_size,))
    # One unit per layer: only one layer's full parameters exist at a time. The embeddings and the
    # output projection stay in the root unit, so that tied weights stay in one unit.
    for stack in (getattr(model, "encoder", None), getattr(model, "decoder", None)):
        for layer in getattr(stack, "layers", []):
            fully_shard(layer, mesh=mesh)
    fully_shard(model, mesh=mesh)
    return model


def token_divisor(processes: Processes) -> object:
    """The ``token_total`` of ``training.training_step`` for these processes (None for one): each
    process divides its summed loss by (target tokens in the global batch / world size), so that
    the average of the processes' gradients, which DDP and FSDP take, is the gradient of the
    per-token mean over the whole global batch."""
    if not processes.distributed:
        return None

    def divisor(tokens: Tensor) -> Tensor:
        total = tokens.detach().clone()
        dist.all_reduce(total)  # (sum over processes)
        return total.clamp(min=1).to(torch.get_default_dtype()) / processes.world_size

    return divisor


def mean_over_processes(value: float, processes: Processes) -> float:
    """The average of a number over the processes (itself for one)."""
    if not processes.distributed:
        return value
    tensor = torch.tensor([value], dtype=torch.float64, device=processes.device)
    dist.all_reduce(tensor)
    return float(tensor) / processes.world_size


def gather_objects(value: object, processes: Processes) -> list:
    """``value`` from every process, in rank order."""
    if not processes.distributed:
        return [value]
    out: list = [None] * processes.world_size
    dist.all_gather_object(out, value)
    return out
