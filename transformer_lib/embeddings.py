"""Token embeddings (Vaswani et al. 2017, section 3.4).

A token id selects one row of a learned (vocab_size, d_model) matrix: the same as
multiplying a one-hot vector by that matrix, without building the one-hot vector.
"In the embedding layers, we multiply those weights by sqrt(d_model)": with the
small initial weights of a matrix that is shared with the output projection, this
keeps the embeddings on the same scale as the positional encodings added to them.
"""

from __future__ import annotations

import math

from torch import Tensor, nn

from .validation import check_bool, check_positive_int
from .validation_tensors import check_token_ids


class TokenEmbedding(nn.Module):
    """(batch, seq_len) integer ids -> (batch, seq_len, d_model) vectors, scaled by sqrt(d_model).

    ``scale=False`` leaves the rows as they are: GPT-2 and BERT do not multiply by sqrt(d_model)."""

    def __init__(self, vocab_size: int, d_model: int, scale: bool = True) -> None:
        super().__init__()
        self.vocab_size, self.d_model = _check_sizes(vocab_size, d_model)
        self.scale = math.sqrt(d_model) if check_bool("scale", scale) else 1.0
        self.embedding = nn.Embedding(vocab_size, d_model)

    @property
    def weight(self) -> Tensor:
        return self.embedding.weight

    def forward(self, ids: Tensor) -> Tensor:
        check_token_ids("ids", ids, self.vocab_size)
        return self.embedding(ids) * self.scale  # (B, T, d_model)


def _check_sizes(vocab_size: int, d_model: int) -> tuple[int, int]:
    """``TokenEmbedding``'s sizes: a vocabulary of at least one token, vectors of at least one number."""
    return check_positive_int("vocab_size", vocab_size), check_positive_int("d_model", d_model)
