"""The paper's optimiser and its schedule (Vaswani et al. 2017, section 5.3).

* Adam with beta_1 = 0.9, beta_2 = 0.98 and epsilon = 1e-9.
* The learning rate (equation 3):

      lrate = d_model^-0.5 * min(step_num^-0.5, step_num * warmup_steps^-1.5)

  "increasing the learning rate linearly for the first warmup_steps training steps,
  and decreasing it thereafter proportionally to the inverse square root of the
  step number. We used warmup_steps = 4000."
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager

import torch
from torch import Tensor, nn
from torch.optim.lr_scheduler import LambdaLR

from .validation import check_instance, check_iterable, check_number, check_positive_int

PAPER_BETAS = (0.9, 0.98)
PAPER_EPS = 1e-9
PAPER_WARMUP = 4000


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


def contiguous_parameters(model: nn.Module) -> AbstractContextManager[nn.Parameter]:
    """Every trainable parameter of ``model``, and its gradient, as a view into one buffer each, while
    the ``with`` block lasts; yields the buffer as one parameter, for ``paper_adam([buffer])``.

    Adam's update is elementwise, so one update of the whole buffer gives the same numbers as one per
    tensor (``tests/test_optimiser.py`` checks it bit for bit); what it saves is the per-tensor calls, a
    tenth of a small model's training step on a CPU. Clear the gradients in place
    (``zero_grad(set_to_none=False)``): the model's gradients are views into the buffer's. Don't move
    the model inside the block (``.to`` would give each parameter new storage, out of the buffer's
    reach). On leaving, every parameter and gradient gets its own storage back."""
    check_instance("model", model, nn.Module, "a torch.nn.Module")
    params = [p for p in model.parameters() if p.requires_grad]
    if not params:
        raise ValueError("model: expected at least one trainable parameter, got none")
    kinds = {(p.device, p.dtype) for p in params}
    if len(kinds) > 1:
        raise ValueError(f"model: expected parameters of one device and dtype, got {sorted(map(str, kinds))}")
    return _contiguous(params)  # checked now, not when the block is entered


@contextmanager
def _contiguous(params: list[nn.Parameter]) -> Iterator[nn.Parameter]:
    values = params[0].new_empty(sum(p.numel() for p in params))
    grads = torch.zeros_like(values)
    offset = 0
    for p in params:
        size = p.numel()
        values[offset: offset + size].copy_(p.detach().reshape(-1))
        p.data = values[offset: offset + size].view_as(p)
        p.grad = grads[offset: offset + size].view_as(p)
        offset += size
    buffer = nn.Parameter(values)
    buffer.grad = grads
    try:
        yield buffer
    finally:
        for p in params:
            p.data = p.data.clone()
            p.grad = p.grad.clone()
