"""The paper's optimiser and its schedule (Vaswani et al. 2017, section 5.3).

* Adam with beta_1 = 0.9, beta_2 = 0.98 and epsilon = 1e-9.
* The learning rate (equation 3):

      lrate = d_model^-0.5 * min(step_num^-0.5, step_num * warmup_steps^-1.5)

  "increasing the learning rate linearly for the first warmup_steps training steps,
  and decreasing it thereafter proportionally to the inverse square root of the
  step number. We used warmup_steps = 4000."
"""

from __future__ import annotations

from collections.abc import Iterable

import torch
from torch import Tensor
from torch.optim.lr_scheduler import LambdaLR

from .validation import check_iterable, check_number, check_positive_int

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
