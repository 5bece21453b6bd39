"""A class token: one encoder-only Transformer, read at one extra position, classifies a whole sequence.

BERT prepends ``[CLS]`` to the sentence and the Vision Transformer a learned "class token" to its image
patches ([Dosovitskiy et al., 2021]); after the last layer that position has attended to every input, and
a linear head turns it into class logits. The stack is the library's own: ``EncoderOnlyTransformer``'s
``encoder``, built from the same ``TransformerConfig``; what comes in is a sequence of vectors (word
embeddings, image patches, set elements), so the caller embeds its inputs.

* ``ClassTokenClassifier``: class token, optional learned positions, the encoder, the head.
  With ``positions=False`` nothing tells the positions apart: the encoder is permutation-equivariant
  (chapter 3) and the class token's output is permutation-invariant, the right model for a set.
* ``fit_classifier``: a few hundred seeded Adam steps with cross-entropy, small enough for a chapter.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor, nn

from .attention import padding_mask
from .config import TransformerConfig
from .models import EncoderOnlyTransformer
from .validation import check_bool, check_instance, check_int, check_number, check_positive_int
from .validation_models import check_module_call
from .validation_tensors import (
    check_features,
    check_id_dtype,
    check_ndim,
    check_tensor,
    check_token_ids,
    module_dtype,
)


class ClassTokenClassifier(nn.Module):
    """(B, T, d_model) vectors -> (B, n_classes) logits, read at a class token put before position 0."""

    def __init__(self, config: TransformerConfig, n_classes: int, positions: bool = True) -> None:
        super().__init__()
        _check_classifier(config, n_classes)
        self.config = config
        self.encoder = EncoderOnlyTransformer(config.replace(positional="learned")).encoder  # the library's stack
        self.cls = nn.Parameter(torch.randn(1, 1, config.d_model) * 0.02)
        # learned positions for the class token and up to max_len inputs; None: a set, not a sequence
        self.position = nn.Parameter(torch.randn(1, config.max_len + 1, config.d_model) * 0.02) \
            if check_bool("positions", positions) else None
        self.head = nn.Linear(config.d_model, n_classes)

    def encode(self, x: Tensor, real: Tensor | None = None) -> Tensor:
        """(B, T, d_model) -> (B, 1 + T, d_model): the class token's output first, then each input's.
        ``real`` (B, T) bool marks the inputs that are not padding (None: all are)."""
        _check_class_token_inputs(self, x, real)
        x = torch.cat([self.cls.expand(x.shape[0], -1, -1), x], dim=1)  # (B, 1 + T, d_model)
        if self.position is not None:
            x = x + self.position[:, : x.shape[1]]
        mask = None
        if real is not None:
            keep = torch.cat([torch.ones_like(real[:, :1]), real], dim=1).long()  # the class token is real
            mask = padding_mask(keep, 0)  # (B, 1, 1, 1 + T)
        return self.encoder(x, mask)

    def forward(self, x: Tensor, real: Tensor | None = None) -> Tensor:
        return self.head(self.encode(x, real)[:, 0])  # (B, n_classes)


def _check_classifier(config: TransformerConfig, n_classes: int) -> None:
    """``ClassTokenClassifier``'s settings: a config, and a positive number of classes."""
    check_instance("config", config, TransformerConfig, "a TransformerConfig")
    check_positive_int("n_classes", n_classes)


def _check_class_token_inputs(model: ClassTokenClassifier, x: Tensor, real: Tensor | None) -> None:
    """``ClassTokenClassifier.encode``'s inputs: at most ``config.max_len`` vectors, and which of them are real."""
    check_features("x", check_tensor("x", x), model.config.d_model, dtype=module_dtype(model.cls))
    if x.shape[1] > model.config.max_len:
        raise ValueError(f"x: expected at most config.max_len = {model.config.max_len} inputs, got {x.shape[1]}")
    if real is not None:
        check_tensor("real", real)
        if real.dtype != torch.bool or tuple(real.shape) != tuple(x.shape[:2]):
            raise ValueError(f"real: expected a bool tensor of shape {tuple(x.shape[:2])}, "
                             f"got {real.dtype} {tuple(real.shape)}")


def fit_classifier(model: nn.Module, inputs: Tensor, labels: Tensor, *, steps: int, batch_size: int = 64,
                   lr: float = 3e-3, seed: int = 0) -> list[float]:
    """Train ``model`` (inputs -> logits) with Adam and cross-entropy on seeded random batches; returns the
    losses. ``inputs`` may be a tensor or a tuple of tensors, each with the examples on dimension 0."""
    parts = _check_examples(model, inputs, labels)
    check_positive_int("batch_size", batch_size)
    generator = torch.Generator().manual_seed(check_int("seed", seed))

    def batch_loss() -> Tensor:
        pick = torch.randint(len(labels), (batch_size,), generator=generator)
        return nn.functional.cross_entropy(_logits(model, parts, labels[pick], pick),
                                           labels[pick].long())

    return adam_steps(model, batch_loss, steps=steps, lr=lr)


def adam_steps(model: nn.Module, batch_loss: Callable[[], Tensor], *, steps: int, lr: float) -> list[float]:
    """``steps`` Adam steps on the loss ``batch_loss()`` computes (it draws its own batch); the model is left
    in evaluation mode. Returns the losses."""
    check_instance("model", model, nn.Module, "a torch.nn.Module")
    if not callable(batch_loss):
        raise TypeError(f"batch_loss: expected a function that returns the loss, got {type(batch_loss).__name__}")
    check_positive_int("steps", steps)
    optimiser = torch.optim.Adam(model.parameters(), lr=check_number("lr", lr, positive=True))
    model.train()
    losses = []
    for _ in range(steps):
        loss = batch_loss()
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        losses.append(loss.item())
    model.eval()
    return losses


@torch.no_grad()
def accuracy(model: nn.Module, inputs: Tensor | tuple[Tensor, ...], labels: Tensor) -> float:
    """Share of ``labels`` the model's largest logit names."""
    parts = _check_examples(model, inputs, labels)
    model.eval()
    with torch.no_grad():  # every example at once: no graph to keep for a backward that never comes
        return (_logits(model, parts, labels).argmax(-1) == labels).float().mean().item()


def _check_examples(model: nn.Module, inputs: Tensor | tuple[Tensor, ...], labels: Tensor) -> tuple[Tensor, ...]:
    """The model, its inputs (a tensor or a tuple of tensors) and one class label per example."""
    parts = inputs if isinstance(inputs, tuple) else (inputs,)
    check_module_call("model", model, parts, "a classifier (inputs -> logits)")
    for part in parts:
        check_tensor("inputs", part)
        if part.dim() == 0:
            raise ValueError("inputs: expected the examples on dimension 0, got a 0-D tensor")
    check_ndim("labels", labels, 1, "(n_examples,)")
    check_id_dtype("labels", labels)
    if len(labels) == 0 or any(len(part) != len(labels) for part in parts):
        raise ValueError(f"labels: expected one per input, got {len(labels)} labels for "
                         f"{[len(p) for p in parts]} inputs")
    return parts


def _logits(model: nn.Module, parts: tuple[Tensor, ...], labels: Tensor, pick: Tensor | None = None) -> Tensor:
    """``model``'s logits for the examples ``pick`` (None: all); an input the model refuses is named ``inputs``,
    a label that is not one of its classes ``labels``."""
    try:
        logits = model(*(part if pick is None else part[pick] for part in parts))
    except (TypeError, ValueError) as error:
        raise type(error)(f"inputs: the model refused them: {error}") from error
    except RuntimeError as error:  # torch's own, from deep inside: a model of another width than the inputs
        raise ValueError(f"inputs: the model could not read them (is it the model for these inputs?): "
                         f"{str(error).splitlines()[0]:.200}") from error
    check_token_ids("labels", labels.long()[None], logits.shape[-1])
    return logits
