"""The position-wise feed-forward network (Vaswani et al. 2017, section 3.3).

    FFN(x) = max(0, x W_1 + b_1) W_2 + b_2

The same two linear layers are applied to every position separately: d_model ->
d_ff -> d_model (512 -> 2048 -> 512 in the paper). GELU, used by BERT and GPT, is
an option in place of the ReLU.
"""

from __future__ import annotations

from torch import Tensor, nn

from .config import ACTIVATIONS
from .validation import check_choice, check_positive_int
from .validation_tensors import check_vectors, module_dtype


class PositionwiseFeedForward(nn.Module):
    def __init__(self, d_model: int, d_ff: int, activation: str = "relu") -> None:
        super().__init__()
        self.d_model = _check_sizes(d_model, d_ff, activation)
        self.linear1 = nn.Linear(d_model, d_ff)  # W_1, b_1
        self.activation = ACTIVATIONS[activation]()
        self.linear2 = nn.Linear(d_ff, d_model)  # W_2, b_2

    def forward(self, x: Tensor) -> Tensor:
        check_vectors("x", x, self.d_model, module_dtype(self.linear1.weight))
        return self.linear2(self.activation(self.linear1(x)))  # (B, T, d_model)


def _check_sizes(d_model: int, d_ff: int, activation: str) -> int:
    """``PositionwiseFeedForward``'s settings: two positive widths and a known activation; ``d_model``."""
    check_positive_int("d_model", d_model)
    check_positive_int("d_ff", d_ff)
    check_choice("activation", activation, list(ACTIVATIONS))
    return d_model
