"""The loss of the paper's training (Vaswani et al. 2017, section 5.4): cross-entropy against label-smoothed targets.

* Label smoothing (section 5.4): "During training, we employed label smoothing of
  value eps_ls = 0.1. This hurts perplexity, as the model learns to be more unsure,
  but improves accuracy and BLEU score."

``training_step`` (``transformer_lib.training_step``) takes one optimiser step on it.
"""

from __future__ import annotations

import torch
from torch import Tensor

from .validation import check_choice, check_probability, check_special_id
from .validation_tensors import check_id_dtype, check_tensor

PAPER_LABEL_SMOOTHING = 0.1


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
    nothing, even if their logits hold -inf or NaN; at any other position a NaN (or +inf) logit is a
    ``ValueError``, not a NaN loss. ``reduction="mean"`` averages over the other
    positions (0 if there are none), ``"sum"`` adds them up.
    """
    check_tensor("logits", logits)
    check_tensor("target", target)
    if not logits.is_floating_point():
        raise TypeError(f"logits: expected a floating-point tensor, got dtype {logits.dtype}")
    check_id_dtype("target", target)
    if logits.dim() == 0:
        raise ValueError("logits: expected a class dimension, shape (..., V), got a 0-d tensor")
    if logits.shape[-1] == 0:
        raise ValueError(f"logits: expected at least one class, got shape {tuple(logits.shape)}")
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
    _check_not_nan(total)  # one number to test: NaN anywhere that counts makes the total NaN
    if reduction == "sum":
        return total
    return total / keep.sum().clamp(min=1)


def _check_not_nan(total: Tensor) -> None:
    """The loss's sum over the positions that count: NaN only if ``logits`` held NaN or +inf there."""
    if torch.isnan(total):
        raise ValueError("logits: expected finite values or -inf (never a whole row of -inf) at the positions "
                         "that count, got NaN or +inf there: the loss would be NaN")
