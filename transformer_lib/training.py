"""Training (Vaswani et al. 2017, section 5): the loop, its history and its report.

The pieces it repeats are in their own modules: the label-smoothed loss (``loss``), Adam and the
warm-up schedule (``optimiser``), and one optimiser step with its options (``training_step``). They
are imported here too, so that ``from transformer_lib.training import train, TrainingOptions,
label_smoothed_cross_entropy`` reads the whole of training from one place.

``train`` runs the loop on any model with the signature ``model(src, tgt_in) -> logits``
(the ``Transformer`` and the RNN baseline ``Seq2SeqGRU`` both have it) over batches
with ``src``, ``tgt_in`` and ``tgt_out`` tensors. The book's recipe (its corpus, vocabularies,
model and hyper-parameters) lives with the trained models it made, in ``transformer_lib.pretrained``.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import torch
from torch import nn

from .loss import PAPER_LABEL_SMOOTHING, label_smoothed_cross_entropy
from .optimiser import (
    PAPER_BETAS,
    PAPER_EPS,
    PAPER_WARMUP,
    contiguous_parameters,
    paper_adam,
    transformer_lr,
    warmup_scheduler,
)
from .progress import close_bar, progress_bar
from .training_step import (
    BatchLike,
    StepResult,
    TrainingOptions,
    check_batch,
    schedule_for,
    training_step,
)
from .validation import (
    check_bool,
    check_callable,
    check_device,
    check_instance,
    check_int,
    check_iterable,
    check_number,
)

__all__ = [  # this module's own, and the pieces of training it gathers from theirs
    "PAPER_BETAS", "PAPER_EPS", "PAPER_LABEL_SMOOTHING", "PAPER_WARMUP", "BatchLike", "StepReport", "StepResult",
    "TrainingHistory", "TrainingOptions", "batch_order", "check_batch", "label_smoothed_cross_entropy",
    "paper_adam", "pick_device", "schedule_for", "train", "training_step", "transformer_lr", "warmup_scheduler",
]


def pick_device(device: torch.device | str | None = None) -> torch.device:
    """``device`` if given; otherwise CUDA if available, then Apple's MPS, then the CPU."""
    if device is not None:
        return check_device("device", device)
    if torch.cuda.is_available():
        return torch.device("cuda")
    if torch.backends.mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


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
        if not knobs:
            raise ValueError("options: None and no knobs: give a TrainingOptions, or steps, epochs or time_budget_s")
        options = TrainingOptions(**knobs)
    else:
        options = check_instance("options", options, TrainingOptions, "a training.TrainingOptions or None")
        options = options.replace(**knobs) if knobs else options
    check_callable("evaluate", evaluate, "a function model -> dict of numbers")
    check_callable("callback", callback, "a function StepReport -> bool, str or None")
    if options.eval_every is not None and evaluate is None:
        raise ValueError(f"evaluate: None, but eval_every={options.eval_every} asks for an evaluation every "
                         f"{options.eval_every} steps")
    check_instance("model", model, nn.Module, "a torch.nn.Module")
    batches = list(check_iterable("batches", batches, "a list of batches (.src, .tgt_in, .tgt_out)"))
    if not batches:
        raise ValueError("batches: expected at least one batch, got none")
    for i, batch in enumerate(batches):
        check_batch(batch, "batches", i)

    device = pick_device(options.device)
    torch.manual_seed(options.seed)
    model.to(device)
    reporter = _Reporter(model, options, len(batches), evaluate, callback, device)
    model.train()
    stop, epoch = "", 0
    with contiguous_parameters(model) as buffer:  # one Adam update, not one per tensor: the same numbers
        optimizer, scheduler = schedule_for(model, options, [buffer])
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
