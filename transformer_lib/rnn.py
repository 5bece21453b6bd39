"""Recurrent networks, the models the Transformer replaced, and why.

A recurrent network reads a sequence one step at a time:

    h_t = tanh(W_xh x_t + W_hh h_{t-1} + b)

The gradient that reaches x_t from the last state h_T passes through T - t
multiplications by W_hh (and by tanh'), so it shrinks or grows geometrically with
the distance: vanishing and exploding gradients (Hochreiter & Schmidhuber 1997).
The LSTM's additive cell state c_t = f_t * c_{t-1} + i_t * g_t gives the gradient
a path that its gates can keep open.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor, nn

from .validation import check_ndim, check_nonempty, check_positive_int


def _check_inputs(x: Tensor, input_size: int) -> None:
    check_ndim("x", x, 3, "(batch, seq_len, input_size)")
    check_nonempty("x", x)
    if x.shape[-1] != input_size:
        raise ValueError(f"x: expected last dimension input_size={input_size}, got shape {tuple(x.shape)}")


class VanillaRNN(nn.Module):
    """The Elman RNN, step by step. ``recurrent_scale`` sets W_hh to that multiple of a random
    orthogonal matrix, so that every singular value of W_hh equals the scale."""

    def __init__(self, input_size: int, hidden_size: int, recurrent_scale: float | None = None) -> None:
        super().__init__()
        self.input_size = check_positive_int("input_size", input_size)
        self.hidden_size = check_positive_int("hidden_size", hidden_size)
        self.input_to_hidden = nn.Linear(input_size, hidden_size)  # W_xh, b_xh
        self.hidden_to_hidden = nn.Linear(hidden_size, hidden_size)  # W_hh, b_hh
        if recurrent_scale is not None:
            with torch.no_grad():
                nn.init.orthogonal_(self.hidden_to_hidden.weight)
                self.hidden_to_hidden.weight.mul_(recurrent_scale)

    def forward(self, x: Tensor, h: Tensor | None = None) -> tuple[Tensor, Tensor]:
        """(B, T, input_size) -> outputs (B, T, hidden), last state (B, hidden)."""
        _check_inputs(x, self.input_size)
        if h is None:
            h = x.new_zeros(x.shape[0], self.hidden_size)
        outputs = []
        for t in range(x.shape[1]):  # one step after the other: nothing here runs in parallel
            h = torch.tanh(self.input_to_hidden(x[:, t]) + self.hidden_to_hidden(h))
            outputs.append(h)
        return torch.stack(outputs, dim=1), h


class LSTM(nn.Module):
    """The long short-term memory cell (Hochreiter & Schmidhuber 1997), step by step,
    with the gate order of ``torch.nn.LSTM``: input, forget, cell candidate, output."""

    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.input_size = check_positive_int("input_size", input_size)
        self.hidden_size = check_positive_int("hidden_size", hidden_size)
        self.input_gates = nn.Linear(input_size, 4 * hidden_size)
        self.hidden_gates = nn.Linear(hidden_size, 4 * hidden_size)

    def forward(
        self, x: Tensor, state: tuple[Tensor, Tensor] | None = None
    ) -> tuple[Tensor, tuple[Tensor, Tensor]]:
        """(B, T, input_size) -> outputs (B, T, hidden), last (h, c)."""
        _check_inputs(x, self.input_size)
        if state is None:
            zeros = x.new_zeros(x.shape[0], self.hidden_size)
            state = (zeros, zeros)
        h, c = state
        outputs = []
        for t in range(x.shape[1]):
            gates = self.input_gates(x[:, t]) + self.hidden_gates(h)  # (B, 4 * hidden)
            i, f, g, o = gates.chunk(4, dim=-1)
            c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)  # additive memory
            h = torch.sigmoid(o) * torch.tanh(c)
            outputs.append(h)
        return torch.stack(outputs, dim=1), (h, c)


def gradient_norms_through_time(model: Callable[[Tensor], object], x: Tensor) -> Tensor:
    """|| d h_T / d x_t || for every step t: how much the last output still feels input t.

    ``model`` maps (B, T, input_size) to outputs (B, T, hidden) or a tuple whose first
    element is that (as this module's RNNs and ``torch.nn.RNN/LSTM/GRU`` with
    ``batch_first=True`` do). Returns a (T,) tensor: the Frobenius norm of the Jacobian
    d h_T / d x_t, averaged over the batch.
    """
    check_ndim("x", x, 3, "(batch, seq_len, input_size)")
    check_nonempty("x", x)
    x = x.detach().clone().requires_grad_(True)
    result = model(x)
    outputs = result[0] if isinstance(result, tuple) else result
    if not isinstance(outputs, Tensor) or outputs.dim() != 3:
        raise TypeError("model: expected outputs of shape (batch, seq_len, hidden)")
    last = outputs[:, -1]  # (B, hidden)
    squared = torch.zeros(x.shape[0], x.shape[1], dtype=x.dtype)
    for j in range(last.shape[1]):  # one row of the Jacobian per hidden unit
        (grad,) = torch.autograd.grad(last[:, j].sum(), x, retain_graph=True)  # (B, T, input_size)
        squared += grad.pow(2).sum(dim=-1).cpu()
    return squared.sqrt().mean(dim=0)  # (T,)
