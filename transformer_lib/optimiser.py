"""The paper's optimiser and its schedule (Vaswani et al. 2017, section 5.3).

* Adam with beta_1 = 0.9, beta_2 = 0.98 and epsilon = 1e-9.
* The learning rate (equation 3):

      lrate = d_model^-0.5 * min(step_num^-0.5, step_num * warmup_steps^-1.5)

  "increasing the learning rate linearly for the first warmup_steps training steps,
  and decreasing it thereafter proportionally to the inverse square root of the
  step number. We used warmup_steps = 4000."
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager

import torch
from torch import Tensor, nn
from torch.optim import Optimizer
from torch.optim.lr_scheduler import LambdaLR

from .validation import check_instance, check_iterable, check_number, check_positive_int, check_probability

PAPER_BETAS = (0.9, 0.98)
PAPER_EPS = 1e-9
PAPER_WARMUP = 4000


def transformer_lr(step: int, d_model: int, warmup: int = PAPER_WARMUP, scale: float = 1.0) -> float:
    """Equation 3 of the paper, times ``scale``: the learning rate of optimiser step ``step`` (from 1)."""
    _check_schedule(step, d_model, warmup, scale)
    return scale * d_model**-0.5 * min(step**-0.5, step * warmup**-1.5)


def _check_schedule(step: int, d_model: int, warmup: int, scale: float) -> None:
    """The inputs of ``transformer_lr``: positive integers, and a positive scale."""
    check_positive_int("step", step)
    check_positive_int("d_model", d_model)
    check_positive_int("warmup", warmup)
    check_number("scale", scale, positive=True)


class PaperAdam(Optimizer):
    """Adam (Kingma and Ba 2015) with the paper's beta_1 = 0.9, beta_2 = 0.98 and epsilon = 1e-9 (section 5.3).

    The same numbers as ``torch.optim.Adam(..., foreach=True)``, bit for bit (``tests/test_optimiser.py``),
    and the same state (``step``, ``exp_avg``, ``exp_avg_sq``), so that torch's learning-rate schedulers
    and distributed checkpoints read it as theirs. Written out here for two reasons: ``step`` is the
    update the book explains, in its own lines; and torch's optimisers import torch's compiler the
    first time one is built (about a second on one core, paid by every reader's kernel that trains),
    though nothing here is compiled.
    """

    def __init__(self, params: Iterable[Tensor] | Iterable[dict], lr: float = 1.0,
                 betas: tuple[float, float] = PAPER_BETAS, eps: float = PAPER_EPS) -> None:
        lr = check_number("lr", lr, positive=True)
        if not isinstance(betas, tuple):
            raise TypeError(f"betas: expected a pair (beta_1, beta_2), got {type(betas).__name__}")
        if len(betas) != 2:
            raise ValueError(f"betas: expected a pair (beta_1, beta_2), got {len(betas)} values")
        betas = (check_probability("betas[0]", betas[0]), check_probability("betas[1]", betas[1]))
        eps = check_number("eps", eps, positive=True)
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
        super().__init__(params, {"lr": lr, "betas": betas, "eps": eps})

    # torch wraps these two in a guard against its compiler, whose first call imports the compiler;
    # __wrapped__ is the method itself.
    def add_param_group(self, param_group: dict) -> None:
        Optimizer.add_param_group.__wrapped__(self, param_group)
        for param in self.param_groups[-1]["params"]:
            # torch.optim.Adam steps a complex parameter as a pair of reals; the update written out in
            # step() would square it as a complex number, and silently differ: refused instead.
            if param.is_complex():
                raise ValueError(f"params: expected real parameters, got a complex one of shape "
                                 f"{tuple(param.shape)} (torch.optim.Adam steps it as its real and imaginary parts)")

    def zero_grad(self, set_to_none: bool = True) -> None:
        Optimizer.zero_grad.__wrapped__(self, set_to_none)

    @torch.no_grad()
    def step(self, closure: Callable[[], float] | None = None) -> float | None:
        loss = None
        if closure is not None:  # as torch's: re-evaluate the loss first (L-BFGS style callers)
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            for param in (p for p in group["params"] if p.grad is not None):
                if param.grad.is_sparse:  # as torch.optim.Adam refuses them, in the same words
                    raise RuntimeError("PaperAdam does not support sparse gradients, please consider "
                                       "SparseAdam instead")
                state = self.state[param]
                if not state:
                    state.update(step=torch.tensor(0.0), exp_avg=torch.zeros_like(param),
                                 exp_avg_sq=torch.zeros_like(param))
                grad, m, v = param.grad, state["exp_avg"], state["exp_avg_sq"]
                t = state["step"].add_(1.0).item()
                m.lerp_(grad, 1 - beta1)  # m_t = beta1 m_(t-1) + (1 - beta1) g_t
                v.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)  # v_t = beta2 v_(t-1) + (1 - beta2) g_t^2
                # theta_t = theta_(t-1) - lr * m_t / (1 - beta1^t) / (sqrt(v_t / (1 - beta2^t)) + eps)
                denominator = v.sqrt().div_((1 - beta2**t) ** 0.5).add_(group["eps"])
                param.addcdiv_(m, denominator, value=-(group["lr"] / (1 - beta1**t)))
        return loss


def paper_adam(params: Iterable[Tensor] | Iterable[dict], lr: float = 1.0) -> PaperAdam:
    """``PaperAdam`` on ``params``: Adam with the paper's beta_1 = 0.9, beta_2 = 0.98, epsilon = 1e-9.

    With ``warmup_scheduler`` the learning rate given here is a factor on the schedule,
    so it is left at 1."""
    return PaperAdam(params, lr=lr)


def warmup_scheduler(
    optimizer: Optimizer, d_model: int, warmup: int = PAPER_WARMUP, scale: float = 1.0
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
