"""Layer normalisation and the residual connection around every sub-layer.

Layer normalisation (Ba et al. 2016) rescales each position's vector to zero mean
and unit variance over its d_model features, then applies a learned gain and bias:

    LayerNorm(x) = (x - mean(x)) / sqrt(var(x) + eps) * gamma + beta

where var is the biased variance (divide by d_model, not d_model - 1) and eps sits
inside the square root, exactly as ``torch.nn.LayerNorm``.

The paper wraps each sub-layer as LayerNorm(x + Sublayer(x)) ("post-norm"). Most
models since put the norm first, x + Sublayer(LayerNorm(x)) ("pre-norm"), which
trains more stably in deep stacks; ``Residual`` does either.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .validation import check_bool, check_instance, check_number, check_positive_int, check_probability
from .validation_tensors import check_tensor, check_vectors, module_dtype


def layer_norm(x: Tensor, gamma: Tensor, beta: Tensor, eps: float = 1e-5) -> Tensor:
    """The formula, written out: normalise over the last dimension, then scale and shift.
    ``gamma`` and ``beta`` are vectors of the last dimension's size, of ``x``'s dtype."""
    eps = _check_layer_norm(x, gamma, beta, eps)
    mean = x.mean(dim=-1, keepdim=True)
    var = x.var(dim=-1, keepdim=True, unbiased=False)
    return (x - mean) / torch.sqrt(var + eps) * gamma + beta


def _check_layer_norm(x: Tensor, gamma: Tensor, beta: Tensor, eps: float) -> float:
    """The inputs of ``layer_norm``; ``eps`` as a float."""
    check_tensor("x", x)
    if not x.is_floating_point() or x.dim() == 0:
        raise TypeError(f"x: expected a floating-point tensor (..., d), got dtype {x.dtype} and shape {tuple(x.shape)}")
    if x.shape[-1] == 0:
        raise ValueError(f"x: expected at least one feature in the last dimension, got shape {tuple(x.shape)}")
    for name, vector in (("gamma", gamma), ("beta", beta)):
        check_vectors(name, vector, x.shape[-1], dtype=x.dtype)
        if vector.dim() != 1:
            raise ValueError(f"{name}: expected shape ({x.shape[-1]},), got {tuple(vector.shape)}")
    return check_number("eps", eps, positive=True)


class LayerNorm(nn.Module):
    """Layer normalisation with a learned gain (``weight``) and bias, as ``nn.LayerNorm``.

    ``forward`` calls the fused ``F.layer_norm``; :func:`layer_norm` is the same
    computation written out, and the tests hold the two (and ``nn.LayerNorm``) equal.
    """

    def __init__(self, d_model: int, eps: float = 1e-5) -> None:
        super().__init__()
        check_positive_int("d_model", d_model)
        self.eps = check_number("eps", eps, positive=True)
        self.weight = nn.Parameter(torch.ones(d_model))  # gamma
        self.bias = nn.Parameter(torch.zeros(d_model))  # beta

    def forward(self, x: Tensor) -> Tensor:
        check_vectors("x", x, self.weight.shape[0], module_dtype(self.weight))
        return F.layer_norm(x, self.weight.shape, self.weight, self.bias, self.eps)


class Residual(nn.Module):
    """A residual connection with dropout and layer normalisation around one sub-layer."""

    def __init__(self, d_model: int, dropout: float = 0.1, norm_first: bool = False, eps: float = 1e-5) -> None:
        super().__init__()
        self.norm = LayerNorm(d_model, eps)
        self.dropout = nn.Dropout(check_probability("dropout", dropout))
        self.norm_first = check_bool("norm_first", norm_first)

    def forward(self, x: Tensor, sublayer: Callable[[Tensor], Tensor]) -> Tensor:
        _check_sublayer_call(x, sublayer, self.norm.weight.shape[0])
        if self.norm_first:  # pre-norm: x + Sublayer(LayerNorm(x))
            return x + self.dropout(sublayer(self.norm(x)))
        return self.norm(x + self.dropout(sublayer(x)))  # post-norm, the paper: LayerNorm(x + Sublayer(x))


def _check_sublayer_call(x: object, sublayer: object, d_model: int) -> None:
    check_vectors("x", x, d_model)
    if not callable(sublayer):
        raise TypeError(f"sublayer: expected a function of x (a module), got {type(sublayer).__name__}")


class NoResidual(Residual):
    """An ablation: the same norm and dropout around the sub-layer, without the skip that adds its
    input back: LayerNorm(Sublayer(x)) (post-norm) or Sublayer(LayerNorm(x)) (pre-norm). Each layer
    must then carry all the information forward itself; chapter 6 trains a model built of these."""

    def forward(self, x: Tensor, sublayer: Callable[[Tensor], Tensor]) -> Tensor:
        _check_sublayer_call(x, sublayer, self.norm.weight.shape[0])
        if self.norm_first:
            return self.dropout(sublayer(self.norm(x)))
        return self.norm(self.dropout(sublayer(x)))


def without_residuals(model: nn.Module) -> nn.Module:
    """Replace every ``Residual`` in ``model`` by a ``NoResidual`` with the same norm weights,
    dropout and placement, in place; returns ``model``. Nothing else changes: the same
    parameters, under the same names, so a state dict loads into either."""
    check_instance("model", model, nn.Module, "a torch.nn.Module")
    for parent in list(model.modules()):
        for name, child in list(parent.named_children()):
            if type(child) is Residual:
                plain = NoResidual(child.norm.weight.shape[0], child.dropout.p, child.norm_first, child.norm.eps)
                plain.to(device=child.norm.weight.device, dtype=child.norm.weight.dtype)
                plain.load_state_dict(child.state_dict())
                plain.train(child.training)
                setattr(parent, name, plain)
    return model
