"""Training (Vaswani et al. 2017, section 5): the loss, the optimiser, the schedule, the loop.

* Label smoothing (section 5.4): "During training, we employed label smoothing of
  value eps_ls = 0.1. This hurts perplexity, as the model learns to be more unsure,
  but improves accuracy and BLEU score."
* Adam with beta_1 = 0.9, beta_2 = 0.98 and epsilon = 1e-9 (section 5.3).
* The learning rate (section 5.3, equation 3):

      lrate = d_model^-0.5 * min(step_num^-0.5, step_num * warmup_steps^-1.5)

  "increasing the learning rate linearly for the first warmup_steps training steps,
  and decreasing it thereafter proportionally to the inverse square root of the
  step number. We used warmup_steps = 4000."

``train`` runs the loop on any model with the signature ``model(src, tgt_in) -> logits``
(the ``Transformer`` and the RNN baseline ``Seq2SeqGRU`` both have it) over batches
with ``src``, ``tgt_in`` and ``tgt_out`` tensors. The book's recipe (its corpus, vocabularies,
model and hyper-parameters) lives with the trained models it made, in ``transformer_lib.pretrained``.
"""

from __future__ import annotations

import dataclasses
import math
import random
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import torch
from torch import Tensor, nn
from torch.optim.lr_scheduler import LambdaLR, LRScheduler

from .progress import close_bar, progress_bar
from .validation import (
    check_bool,
    check_choice,
    check_device,
    check_id_dtype,
    check_instance,
    check_int,
    check_iterable,
    check_module_call,
    check_ndim,
    check_number,
    check_positive_int,
    check_probability,
    check_special_id,
    check_tensor,
)

PAPER_BETAS = (0.9, 0.98)
PAPER_EPS = 1e-9
PAPER_WARMUP = 4000
PAPER_LABEL_SMOOTHING = 0.1


# --------------------------------------------------------------------------- the loss


def label_smoothed_cross_entropy(
    logits: Tensor,
    target: Tensor,
    smoothing: float = PAPER_LABEL_SMOOTHING,
    pad_id: int | None = 0,
    reduction: str = "mean",
) -> Tensor:
    """Cross-entropy against a smoothed target distribution, skipping padding.

    For a vocabulary of V classes, the target distribution at a position whose
    correct token is y puts

        q(k) = (1 - smoothing) * [k == y] + smoothing / V

    on every class k: the smoothing mass is spread uniformly over **all** V classes,
    the correct one included (so q(y) = 1 - smoothing + smoothing / V). This is the
    convention of ``torch.nn.functional.cross_entropy(label_smoothing=...)``, and the
    loss equals it. (The Annotated Transformer instead spreads it as smoothing / (V - 2)
    over the classes other than the target and the padding.) Written out, per position:

        loss = -sum_k q(k) log p(k) = (1 - smoothing) * (-log p(y)) + smoothing * mean_k(-log p(k))

    ``logits``: (..., V); ``target``: (...) integer ids (torch.long or torch.int32). Positions
    whose target is ``pad_id`` (an id in [0, V), or None for no padding) contribute exactly
    nothing, even if their logits hold -inf or NaN. ``reduction="mean"`` averages over the other
    positions (0 if there are none), ``"sum"`` adds them up.
    """
    check_tensor("logits", logits)
    check_tensor("target", target)
    if not logits.is_floating_point():
        raise TypeError(f"logits: expected a floating-point tensor, got dtype {logits.dtype}")
    check_id_dtype("target", target)
    if logits.shape[:-1] != target.shape:
        raise ValueError(
            f"target: expected shape {tuple(logits.shape[:-1])} (logits without the class dimension), "
            f"got {tuple(target.shape)}"
        )
    smoothing = check_probability("smoothing", smoothing)
    check_choice("reduction", reduction, ("mean", "sum"))
    n_classes = logits.shape[-1]
    if pad_id is not None:
        check_special_id("pad_id", pad_id, n_classes)
    if target.numel() and (int(target.min()) < 0 or int(target.max()) >= n_classes):
        raise ValueError(f"target: class ids must lie in [0, {n_classes}), got values in "
                         f"[{int(target.min())}, {int(target.max())}]")

    # Half-precision logits are read in float32; float64 stays float64 (the distributed tests compare in it).
    logits = logits if logits.dtype == torch.float64 else logits.float()
    log_probs = logits.log_softmax(dim=-1)  # (..., V)
    nll = -log_probs.gather(-1, target.unsqueeze(-1)).squeeze(-1)  # (...): -log p(y)
    uniform = -log_probs.mean(dim=-1)  # (...): mean over the V classes of -log p(k)
    # Without smoothing, the uniform term is left out rather than multiplied by 0: a -inf logit
    # elsewhere in the row makes it inf, and 0 * inf is NaN.
    loss = nll if smoothing == 0 else (1.0 - smoothing) * nll + smoothing * uniform
    keep = torch.ones_like(target, dtype=torch.bool) if pad_id is None else target != pad_id
    total = loss.masked_fill(~keep, 0.0).sum()  # not loss * keep: inf * 0 at a padding position is NaN
    if reduction == "sum":
        return total
    return total / keep.sum().clamp(min=1)


# --------------------------------------------------------------------------- optimiser and schedule


def transformer_lr(step: int, d_model: int, warmup: int = PAPER_WARMUP, scale: float = 1.0) -> float:
    """Equation 3 of the paper, times ``scale``: the learning rate of optimiser step ``step`` (from 1)."""
    check_positive_int("step", step)
    check_positive_int("d_model", d_model)
    check_positive_int("warmup", warmup)
    check_number("scale", scale, positive=True)
    return scale * d_model**-0.5 * min(step**-0.5, step * warmup**-1.5)


def paper_adam(params: Iterable[Tensor] | Iterable[dict], lr: float = 1.0) -> torch.optim.Adam:
    """Adam with the paper's beta_1 = 0.9, beta_2 = 0.98, epsilon = 1e-9 (section 5.3).

    With ``warmup_scheduler`` the learning rate given here is a factor on the schedule,
    so it is left at 1."""
    lr = check_number("lr", lr, positive=True)
    params = list(check_iterable("params", params, "the model's parameters (model.parameters())"))
    for i, param in enumerate(params):
        if not isinstance(param, Tensor | dict):
            raise TypeError(f"params[{i}]: expected a parameter (tensor) or a parameter group (dict), "
                            f"got {type(param).__name__}")
    if not params:
        raise ValueError("params: expected at least one parameter, got none")
    tensors = [p for p in params if isinstance(p, Tensor)]
    if len({id(p) for p in tensors}) != len(tensors):  # torch only warns (a tied matrix passed twice, say)
        raise ValueError("params: expected each parameter once, got one of them twice")
    return torch.optim.Adam(params, lr=lr, betas=PAPER_BETAS, eps=PAPER_EPS, foreach=True)  # same numbers, fewer calls


def warmup_scheduler(
    optimizer: torch.optim.Optimizer, d_model: int, warmup: int = PAPER_WARMUP, scale: float = 1.0
) -> LambdaLR:
    """A ``LambdaLR`` that sets the learning rate of the k-th ``optimizer.step()`` (k = 1, 2, ...)
    to ``transformer_lr(k, d_model, warmup, scale)`` times the optimiser's own lr (leave it at 1).

    ``LambdaLR`` counts from 0, the paper from 1: step k of the paper is index k - 1 here.
    """
    transformer_lr(1, d_model, warmup, scale)  # checks the arguments now, not at the first step
    return LambdaLR(optimizer, lambda index: transformer_lr(index + 1, d_model, warmup, scale))


def pick_device(device: torch.device | str | None = None) -> torch.device:
    """``device`` if given; otherwise CUDA if available, then Apple's MPS, then the CPU."""
    if device is not None:
        return check_device("device", device)
    if torch.cuda.is_available():
        return torch.device("cuda")
    if torch.backends.mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


# --------------------------------------------------------------------------- the loop


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
    _check_batch(batch, "batch")
    check_module_call("model", model, (batch.src, batch.tgt_in), "a model called as model(src, tgt_in) -> logits")
    check_instance("optimizer", optimizer, torch.optim.Optimizer, "a torch.optim.Optimizer (schedule_for)")
    check_instance("scheduler", scheduler, LRScheduler, "a torch learning-rate scheduler (schedule_for)")
    check_instance("options", options, TrainingOptions, "a training.TrainingOptions")
    if token_total is not None and not callable(token_total):
        raise TypeError(f"token_total: expected a function of the token count or None, "
                        f"got {type(token_total).__name__}")
    device = next(model.parameters()).device
    src, tgt_in, tgt_out = (t.to(device) for t in (batch.src, batch.tgt_in, batch.tgt_out))
    logits = model(src, tgt_in)  # (B, T, V)
    loss_sum = label_smoothed_cross_entropy(logits, tgt_out, options.label_smoothing, options.pad_id, "sum")
    tokens = (tgt_out != options.pad_id).sum()
    loss = loss_sum / (tokens.clamp(min=1) if token_total is None else token_total(tokens))
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    max_norm = options.clip_norm if options.clip_norm is not None else math.inf
    grad_norm = nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    grad_norm = getattr(grad_norm, "full_tensor", lambda: grad_norm)()  # FSDP2: a DTensor over the shards
    lr = optimizer.param_groups[0]["lr"]
    optimizer.step()
    scheduler.step()
    # .item() waits for the device: the caller's timing is honest
    return StepResult(float(loss.detach()), float(grad_norm), lr, int(tokens))


def batch_order(n_batches: int, epoch: int, seed: int, shuffle: bool = True) -> list[int]:
    """The order in which ``train`` serves ``n_batches`` batches in ``epoch``: a shuffle seeded by
    (seed, epoch), or the given order."""
    check_int("n_batches", n_batches, minimum=0)
    check_int("epoch", epoch, minimum=0)
    check_int("seed", seed)
    check_bool("shuffle", shuffle)
    order = list(range(n_batches))
    if shuffle:
        random.Random(seed * 1_000_003 + epoch).shuffle(order)
    return order


@dataclass
class StepReport:
    """What the callback of ``train`` receives after every optimiser step."""

    step: int  # optimiser steps so far, from 1
    epoch: int  # from 0
    loss: float  # label-smoothed loss of this batch, per target token
    lr: float  # learning rate used for this step
    elapsed_s: float  # training time so far, evaluation excluded
    tokens: int  # target tokens seen so far
    evaluation: dict[str, float] | None = None  # set on the steps where ``evaluate`` ran



@dataclass
class TrainingHistory:
    """Everything ``train`` measured, one entry per optimiser step (and per evaluation)."""

    steps: list[int] = field(default_factory=list)
    losses: list[float] = field(default_factory=list)
    lrs: list[float] = field(default_factory=list)
    grad_norms: list[float] = field(default_factory=list)  # before clipping
    elapsed_s: list[float] = field(default_factory=list)  # training time at the end of each step
    tokens: list[int] = field(default_factory=list)  # cumulative target tokens
    evaluations: list[dict[str, float]] = field(default_factory=list)  # each has "step" and "elapsed_s"
    stop_reason: str = ""
    stop_message: str = ""  # why training stopped early (the callback's words, if it said): the bar shows it
    device: str = ""
    eval_time_s: float = 0.0  # time spent in ``evaluate``, not counted in ``elapsed_s``

    @property
    def train_time_s(self) -> float:
        return self.elapsed_s[-1] if self.elapsed_s else 0.0

    def first_reaching(self, metric: str, value: float) -> dict[str, float] | None:
        """The first evaluation where ``metric`` >= ``value`` (None if none did)."""
        check_instance("metric", metric, str, "a metric name (str)")
        value = check_number("value", value, allow_inf=True)
        for evaluation in self.evaluations:
            if evaluation.get(metric, -math.inf) >= value:
                return evaluation
        return None

    def record(self, result: StepResult, elapsed_s: float) -> None:
        check_instance("result", result, StepResult, "a StepResult (training_step)")
        check_number("elapsed_s", elapsed_s, minimum=0.0)
        self.steps.append(len(self.steps) + 1)
        self.losses.append(result.loss)
        self.lrs.append(result.lr)
        self.grad_norms.append(result.grad_norm)
        self.elapsed_s.append(elapsed_s)
        self.tokens.append((self.tokens[-1] if self.tokens else 0) + result.tokens)


def _check_batch(batch: object, name: str, index: int | None = None) -> None:
    """One batch, named ``name`` ("batch"; "batches" with ``index``: the index-th of them)."""
    where = "" if index is None else f" at index {index}"
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


def schedule_for(model: nn.Module, options: TrainingOptions) -> tuple[torch.optim.Adam, LambdaLR]:
    """The paper's Adam on ``model``'s parameters and its warm-up schedule (``d_model`` from ``model.config``)."""
    check_instance("model", model, nn.Module, "a torch.nn.Module")
    check_instance("options", options, TrainingOptions, "a training.TrainingOptions")
    d_model = getattr(getattr(model, "config", None), "d_model", None)
    if not isinstance(d_model, int):
        raise ValueError("model: expected a model with a .config.d_model (the schedule depends on it)")
    optimizer = paper_adam(model.parameters())
    return optimizer, warmup_scheduler(optimizer, d_model, options.warmup, options.lr_scale)


class _Reporter:
    """The reporting side of ``train``: history, progress bar, evaluation, callback, stopping."""

    def __init__(self, model: nn.Module, options: TrainingOptions, n_batches: int,
                 evaluate: Callable[[nn.Module], dict[str, float]] | None,
                 callback: Callable[[StepReport], bool | str | None] | None, device: torch.device) -> None:
        self.model, self.options, self.evaluate, self.callback = model, options, evaluate, callback
        self.history = TrainingHistory(device=str(device))
        epochs_total = options.epochs * n_batches if options.epochs is not None else None
        total = options.steps if options.steps is not None else epochs_total
        self.bar = progress_bar(total, options.progress, desc="training", unit="step", mininterval=0.5)
        self.elapsed = 0.0

    def run_evaluation(self) -> dict[str, float]:
        started = time.perf_counter()
        self.model.eval()
        with torch.no_grad():
            result = dict(self.evaluate(self.model))
        self.model.train()
        self.history.eval_time_s += time.perf_counter() - started
        result.update(step=len(self.history.steps), elapsed_s=self.elapsed)
        self.history.evaluations.append(result)
        return result

    def after_step(self, result: StepResult, seconds: float, epoch: int) -> str:
        """Record a step; the reason to stop now, or ""."""
        self.elapsed += seconds
        history, options = self.history, self.options
        history.record(result, self.elapsed)
        step = history.steps[-1]
        self.bar.update(1)
        self.bar.set_postfix(loss=f"{result.loss:.3f}", lr=f"{result.lr:.2e}", refresh=False)
        report = StepReport(step, epoch, result.loss, result.lr, self.elapsed, history.tokens[-1])
        if self.evaluate is not None and options.eval_every is not None and step % options.eval_every == 0:
            report.evaluation = self.run_evaluation()
        asked = self.callback(report) if self.callback is not None else None
        if asked:
            self.history.stop_message = asked if isinstance(asked, str) else ""
            return "callback"
        if options.steps is not None and step >= options.steps:
            return "steps"
        if options.time_budget_s is not None and self.elapsed >= options.time_budget_s:
            return "time_budget"
        return ""

    def finish(self, stop: str) -> TrainingHistory:
        history, bar, step = self.history, self.bar, len(self.history.steps)
        if stop in ("callback", "time_budget"):  # early: the bar ends full, saying why (not frozen, red in a notebook)
            history.stop_message = history.stop_message or (f"stopped by the callback at step {step}"
                                                            if stop == "callback" else f"time spent at step {step}")
            if not bar.disable and bar.total is not None and bar.n < bar.total:
                started = bar.start_t
                bar.reset(total=step)  # reset(): a notebook's widget bar takes the new length too
                bar.start_t, bar.n = started, step
                bar.set_description(history.stop_message)
        close_bar(bar)
        if self.evaluate is not None and (not history.evaluations or history.evaluations[-1]["step"] != step):
            self.run_evaluation()
        history.stop_reason = stop
        return history


def train(
    model: nn.Module,
    batches: Sequence[BatchLike],
    options: TrainingOptions | None = None,
    *,
    evaluate: Callable[[nn.Module], dict[str, float]] | None = None,
    callback: Callable[[StepReport], bool | str | None] | None = None,
    **knobs: object,
) -> TrainingHistory:
    """Train ``model`` (``model(src, tgt_in) -> logits``) on ``batches`` and return its history.

    ``options`` (a ``TrainingOptions``) says when to stop and how; ``knobs`` are its fields given
    one by one, ``train(model, batches, steps=100, warmup=10)``, and change those of ``options``.
    Each step is ``training_step``: the paper's Adam, schedule and label-smoothed loss.

    ``evaluate(model)`` (if given) runs every ``options.eval_every`` steps and at the end, with the
    model in eval mode; its dict goes into ``history.evaluations`` with ``step`` and
    ``elapsed_s`` added. ``callback(report)`` runs after every step (for live plots); returning
    True stops training, and so does a non-empty string, which says why (``history.stop_message``).
    A bar stopped early ends full and says why, not frozen at a fraction of the steps.

    Deterministic: ``torch.manual_seed(seed)`` fixes dropout, and the batch order of epoch e is
    ``batch_order(len(batches), e, seed, shuffle)``. The device is ``pick_device(options.device)``;
    the model is moved there, trained in place, and left in eval mode.
    """
    if options is None:
        options = TrainingOptions(**knobs)
    else:
        options = check_instance("options", options, TrainingOptions, "a training.TrainingOptions or None")
        options = options.replace(**knobs) if knobs else options
    if options.eval_every is not None and evaluate is None:
        raise ValueError("eval_every: given without an evaluate function")
    check_instance("model", model, nn.Module, "a torch.nn.Module")
    batches = list(batches)
    if not batches:
        raise ValueError("batches: expected at least one batch, got none")
    for i, batch in enumerate(batches):
        _check_batch(batch, "batches", i)

    device = pick_device(options.device)
    torch.manual_seed(options.seed)
    model.to(device)
    optimizer, scheduler = schedule_for(model, options)
    reporter = _Reporter(model, options, len(batches), evaluate, callback, device)
    model.train()
    stop, epoch = "", 0
    while not stop:
        for index in batch_order(len(batches), epoch, options.seed, options.shuffle):
            started = time.perf_counter()
            result = training_step(model, batches[index], optimizer, scheduler, options)
            stop = reporter.after_step(result, time.perf_counter() - started, epoch)
            if stop:
                break
        epoch += 1
        if not stop and options.epochs is not None and epoch >= options.epochs:
            stop = "epochs"
    history = reporter.finish(stop)
    model.eval()
    return history
