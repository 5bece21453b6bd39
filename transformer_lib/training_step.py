"""One training step, the unit every training path of the book shares: forward, loss, backward, clip, Adam.

``train`` (``transformer_lib.training``) repeats it over the batches; the distributed command
(``transformer_lib.train``) runs it in every process. ``TrainingOptions`` holds the knobs of both:
when to stop, the schedule, the loss, the seed, the device.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Protocol

import torch
from torch import Tensor, nn
from torch.optim.lr_scheduler import LambdaLR, LRScheduler

from .loss import PAPER_LABEL_SMOOTHING, label_smoothed_cross_entropy
from .optimiser import PAPER_WARMUP, PaperAdam, paper_adam, warmup_scheduler
from .validation import (
    check_bool,
    check_callable,
    check_device,
    check_instance,
    check_int,
    check_number,
    check_positive_int,
    check_probability,
    check_special_id,
)
from .validation_models import check_module_call
from .validation_tensors import check_ndim


class BatchLike(Protocol):
    """What ``train`` needs from a batch (``tokenization.Batch`` has it)."""

    src: Tensor  # (B, S) source ids
    tgt_in: Tensor  # (B, T) <sos> + target: what the decoder reads
    tgt_out: Tensor  # (B, T) target + <eos>: what it must predict


@dataclass(frozen=True)
class TrainingOptions:
    """The knobs of ``train``: when to stop, the schedule, the loss, the seed, the device.

    Stop at the first of ``steps`` optimiser steps, ``epochs`` passes over the batches, or
    ``time_budget_s`` seconds of training (evaluation not counted); at least one is needed.
    ``clip_norm`` clips the gradient norm (not in the paper: a guard for the first steps of a
    small model; None: no clipping). ``warmup`` and ``lr_scale`` shape the paper's schedule,
    ``transformer_lr``. ``seed`` fixes dropout and the batch order (``shuffle=False`` keeps the
    given order). ``eval_every``: steps between two calls of ``train``'s ``evaluate``."""

    steps: int | None = None
    epochs: int | None = None
    time_budget_s: float | None = None
    warmup: int = PAPER_WARMUP
    lr_scale: float = 1.0
    label_smoothing: float = PAPER_LABEL_SMOOTHING
    clip_norm: float | None = 1.0
    pad_id: int = 0
    seed: int = 0
    shuffle: bool = True
    device: torch.device | str | None = None
    eval_every: int | None = None
    progress: bool = True

    def __post_init__(self) -> None:
        if self.steps is None and self.epochs is None and self.time_budget_s is None:
            raise ValueError("steps, epochs, time_budget_s: give at least one, or training would never stop")
        if self.steps is not None:
            check_positive_int("steps", self.steps)
        if self.epochs is not None:
            check_positive_int("epochs", self.epochs)
        if self.time_budget_s is not None:
            check_number("time_budget_s", self.time_budget_s, positive=True, allow_inf=True)
        if self.eval_every is not None:
            check_positive_int("eval_every", self.eval_every)
        if self.clip_norm is not None:
            check_number("clip_norm", self.clip_norm, positive=True, allow_inf=True)
        check_positive_int("warmup", self.warmup)
        check_number("lr_scale", self.lr_scale, positive=True)
        check_probability("label_smoothing", self.label_smoothing)
        check_special_id("pad_id", self.pad_id)
        check_int("seed", self.seed)
        check_bool("shuffle", self.shuffle)
        check_bool("progress", self.progress)
        if self.device is not None:  # a well-formed name; whether this machine has it, train's pick_device says
            check_device("device", self.device, here=False)

    def replace(self, **changes: object) -> TrainingOptions:
        return dataclasses.replace(self, **changes)


@dataclass
class StepResult:
    """What one call of ``training_step`` measured."""

    loss: float  # label-smoothed loss per target token (of the whole batch across processes, if normalised so)
    grad_norm: float  # before clipping
    lr: float  # learning rate used for this step
    tokens: int  # target tokens of this process's batch (padding excluded)


def training_step(
    model: nn.Module,
    batch: BatchLike,
    optimizer: torch.optim.Optimizer,
    scheduler: LambdaLR,
    options: TrainingOptions,
    token_total: Callable[[Tensor], Tensor] | None = None,
) -> StepResult:
    """One optimiser step on ``batch``: forward, label-smoothed loss, backward, clip, Adam, schedule.

    The loss is the sum over the batch's target tokens divided by their count. ``token_total``
    (if given) maps the local count to another divisor: the distributed command
    (``transformer_lib.train``) passes the global count divided by the number of processes, so that
    after DDP's averaging of gradients every process holds the gradient of the per-token mean over
    the global batch, the gradient one process would get on the whole batch.
    """
    _check_step_arguments(model, batch, optimizer, scheduler, options, token_total)
    device = next(model.parameters()).device
    src, tgt_in, tgt_out = (t.to(device) for t in (batch.src, batch.tgt_in, batch.tgt_out))
    logits = model(src, tgt_in)  # (B, T, V)
    loss_sum = label_smoothed_cross_entropy(logits, tgt_out, options.label_smoothing, options.pad_id, "sum")
    tokens = (tgt_out != options.pad_id).sum()
    loss = loss_sum / (tokens.clamp(min=1) if token_total is None else token_total(tokens))
    optimizer.zero_grad(set_to_none=False)  # in place: the gradients may be views into one buffer (train)
    loss.backward()
    max_norm = options.clip_norm if options.clip_norm is not None else math.inf
    grad_norm = nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    grad_norm = getattr(grad_norm, "full_tensor", lambda: grad_norm)()  # FSDP2: a DTensor over the shards
    lr = optimizer.param_groups[0]["lr"]
    optimizer.step()
    scheduler.step()
    # .item() waits for the device: the caller's timing is honest
    return StepResult(float(loss.detach()), float(grad_norm), lr, int(tokens))


def _check_step_arguments(model: object, batch: object, optimizer: object, scheduler: object, options: object,
                          token_total: object) -> None:
    """``training_step``'s arguments, checked before the model sees the batch."""
    check_batch(batch, "batch")
    check_module_call("model", model, (batch.src, batch.tgt_in), "a model called as model(src, tgt_in) -> logits")
    check_instance("optimizer", optimizer, torch.optim.Optimizer, "a torch.optim.Optimizer (schedule_for)")
    check_instance("scheduler", scheduler, LRScheduler, "a torch learning-rate scheduler (schedule_for)")
    check_instance("options", options, TrainingOptions, "a training.TrainingOptions")
    check_callable("token_total", token_total, "a function of the token count")


def check_batch(batch: object, name: str, index: int | None = None) -> None:
    """One batch, named ``name`` ("batch"; "batches" with ``index``: the index-th of them)."""
    check_instance("name", name, str, "the argument's name (str)")
    where = "" if index is None else f" at index {check_int('index', index, minimum=0)}"
    for part in ("src", "tgt_in", "tgt_out"):
        if not isinstance(getattr(batch, part, None), Tensor):
            raise TypeError(
                f"{name}: expected {'an object' if index is None else 'objects'} with tensors .src, .tgt_in and "
                f".tgt_out, "
                f"got {type(batch).__name__}{where} without a tensor .{part}"
            )
    check_ndim("batch.src", batch.src, 2, "(batch, src_len)")
    check_ndim("batch.tgt_in", batch.tgt_in, 2, "(batch, tgt_len)")
    if batch.tgt_in.shape != batch.tgt_out.shape or batch.src.shape[0] != batch.tgt_in.shape[0]:
        raise ValueError(
            f"{name}: batch{where} has src {tuple(batch.src.shape)}, tgt_in {tuple(batch.tgt_in.shape)} and "
            f"tgt_out {tuple(batch.tgt_out.shape)}; expected tgt_in and tgt_out of one shape, one batch size"
        )


def schedule_for(model: nn.Module, options: TrainingOptions, params: Iterable[Tensor] | None = None
                 ) -> tuple[PaperAdam, LambdaLR]:
    """The paper's Adam on ``params`` (``model.parameters()`` unless given: ``train`` gives the one buffer
    of ``optimiser.contiguous_parameters``) and its warm-up schedule (``d_model`` from ``model.config``)."""
    check_instance("model", model, nn.Module, "a torch.nn.Module")
    check_instance("options", options, TrainingOptions, "a training.TrainingOptions")
    d_model = getattr(getattr(model, "config", None), "d_model", None)
    if not isinstance(d_model, int):
        raise ValueError("model: expected a model with a .config.d_model (the schedule depends on it)")
    optimizer = paper_adam(model.parameters() if params is None else params)
    return optimizer, warmup_scheduler(optimizer, d_model, options.warmup, options.lr_scale)
