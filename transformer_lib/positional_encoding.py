"""Where a token is: sinusoidal, learned and rotary position information.

Self-attention alone cannot tell positions apart (it is permutation-equivariant),
so the Transformer adds position information to the embeddings (Vaswani et al.
2017, section 3.5):

    PE(pos, 2i)   = sin(pos / 10000^(2i / d_model))
    PE(pos, 2i+1) = cos(pos / 10000^(2i / d_model))

Rotary embeddings (Su et al. 2021) instead rotate queries and keys, so that their
dot product depends on the offset between two positions only.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor, nn

from .validation import check_even, check_int, check_number, check_positive_int
from .validation_tensors import check_ndim, check_vectors, module_dtype


def _frequencies(d_model: int, base: float = 10000.0) -> Tensor:
    """omega_i = 1 / base^(2i / d_model) for i = 0 .. d_model/2 - 1, in float64."""
    return 1.0 / base ** (torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)


def sinusoidal_table(max_len: int, d_model: int, dtype: torch.dtype = torch.float32) -> Tensor:
    """The (max_len, d_model) table of section 3.5: even columns sine, odd columns cosine.

    Computed in float64 and rounded once to ``dtype``.
    """
    _check_table(max_len, d_model)
    position = torch.arange(max_len, dtype=torch.float64)[:, None]  # (max_len, 1)
    angles = position * _frequencies(d_model)  # (max_len, d_model/2)
    table = torch.zeros(max_len, d_model, dtype=torch.float64)
    table[:, 0::2] = torch.sin(angles)
    table[:, 1::2] = torch.cos(angles)
    return table.to(dtype)


def relative_position_map(offset: int, d_model: int) -> Tensor:
    """The (d_model, d_model) matrix M with PE(pos + offset) = M @ PE(pos) for every pos.

    It is block-diagonal: each (sin, cos) pair is rotated by the angle offset * omega_i,
    which does not depend on pos. This is why the paper hoped the model could
    "easily learn to attend by relative positions".
    """
    _check_offset(offset, d_model)  # a negative offset is meaningful here: PE(pos - k) from PE(pos)
    angles = offset * _frequencies(d_model)
    cos, sin = torch.cos(angles), torch.sin(angles)
    m = torch.zeros(d_model, d_model, dtype=torch.float64)
    # [sin(a+b)]   [ cos b  sin b] [sin a]
    # [cos(a+b)] = [-sin b  cos b] [cos a]
    m[0::2, 0::2] = torch.diag(cos)
    m[0::2, 1::2] = torch.diag(sin)
    m[1::2, 0::2] = torch.diag(-sin)
    m[1::2, 1::2] = torch.diag(cos)
    return m


class SinusoidalPositionalEncoding(nn.Module):
    """Adds the fixed sinusoidal table to (batch, seq_len, d_model) embeddings.

    The table has the module's dtype (``torch.get_default_dtype()``, then whatever
    ``.double()`` or ``.to(dtype)`` sets), and each conversion recomputes it from float64,
    so a float64 model holds the exact float64 table, not a float32 one widened.
    """

    def __init__(self, d_model: int, max_len: int = 512) -> None:
        super().__init__()
        self.d_model = check_even("d_model", d_model, "an even number (sine and cosine pairs)")
        self.max_len = check_positive_int("max_len", max_len)
        # A buffer, not a parameter: it moves with .to(device) but is never trained.
        table = sinusoidal_table(max_len, d_model, torch.get_default_dtype())
        self.register_buffer("table", table, persistent=False)

    def _apply(self, fn: Callable[[Tensor], Tensor], recurse: bool = True) -> SinusoidalPositionalEncoding:
        # nn.Module's hook under .to(), .double(), .cuda(): the buffer would be cast from its rounded values
        super()._apply(fn, recurse)
        exact = sinusoidal_table(self.max_len, self.d_model, torch.float64)  # round once, from the exact values
        self.table = exact.to(self.table.dtype).to(self.table.device)
        return self

    def forward(self, x: Tensor, offset: int = 0) -> Tensor:
        check_ndim("x", x, 3, "(batch, seq_len, d_model)")
        check_vectors("x", x, self.d_model)  # floating point: an integer x would get sin and cos truncated
        _check_length(x.shape[1], offset, self.max_len)
        return x + self.table[offset : offset + x.shape[1]].to(x.dtype)


class LearnedPositionalEmbedding(nn.Module):
    """A trained vector per position (as in BERT and GPT), added to the embeddings."""

    def __init__(self, d_model: int, max_len: int = 512) -> None:
        super().__init__()
        self.max_len = check_positive_int("max_len", max_len)
        self.embedding = nn.Embedding(max_len, check_positive_int("d_model", d_model))

    def forward(self, x: Tensor, offset: int = 0) -> Tensor:
        weight = self.embedding.weight  # (max_len, d_model)
        _check_positioned(x, "(batch, seq_len, d_model)", weight.shape[1], offset, self.max_len, module_dtype(weight))
        positions = torch.arange(offset, offset + x.shape[1], device=x.device)
        return x + self.embedding(positions)


class RotaryEmbedding(nn.Module):
    """Rotary position embedding (RoPE, Su et al. 2021) for queries and keys.

    Each pair of dimensions (x_2i, x_2i+1) of a head is rotated by the angle
    pos * omega_i. A query at position m and a key at position n then meet in the
    dot product through the angle (m - n) * omega_i alone.
    """

    def __init__(self, d_head: int, max_len: int = 512, base: float = 10000.0) -> None:
        super().__init__()
        self.d_head = check_even("d_head", d_head, "an even head size for RoPE (dimensions rotate in pairs)")
        self.max_len = check_positive_int("max_len", max_len)
        self.base = check_number("base", base, positive=True)
        # Computed in float64, stored in the default dtype (Apple's MPS backend has no float64);
        # _apply recomputes them from float64 when the module changes dtype.
        cos, sin = self._angles_cos_sin(torch.get_default_dtype())
        self.register_buffer("cos", cos, persistent=False)  # (max_len, d_head/2)
        self.register_buffer("sin", sin, persistent=False)

    def _angles_cos_sin(self, dtype: torch.dtype) -> tuple[Tensor, Tensor]:
        angles = torch.arange(self.max_len, dtype=torch.float64)[:, None] * _frequencies(self.d_head, self.base)
        return torch.cos(angles).to(dtype), torch.sin(angles).to(dtype)

    def _apply(self, fn: Callable[[Tensor], Tensor], recurse: bool = True) -> RotaryEmbedding:
        super()._apply(fn, recurse)
        cos, sin = self._angles_cos_sin(self.cos.dtype)
        self.cos, self.sin = cos.to(self.cos.device), sin.to(self.sin.device)
        return self

    def forward(self, x: Tensor, offset: int = 0) -> Tensor:
        """Rotate x of shape (batch, heads, seq_len, d_head) at positions offset, offset+1, ..."""
        _check_positioned(x, "(batch, heads, seq_len, d_head)", self.d_head, offset, self.max_len)
        cos = self.cos[offset : offset + x.shape[2]].to(x.dtype)  # (T, d_head/2)
        sin = self.sin[offset : offset + x.shape[2]].to(x.dtype)
        even, odd = x[..., 0::2], x[..., 1::2]
        rotated = torch.stack((even * cos - odd * sin, even * sin + odd * cos), dim=-1)
        return rotated.flatten(-2)  # interleave the pairs back: (B, h, T, d_head)


def _check_table(max_len: int, d_model: int) -> None:
    """``sinusoidal_table``'s sizes: positive, and ``d_model`` even (sine and cosine pairs)."""
    check_positive_int("max_len", max_len)
    check_even("d_model", d_model, "an even number (sine and cosine pairs)")


def _check_offset(offset: int, d_model: int) -> None:
    """``relative_position_map``'s inputs: any integer offset, and an even ``d_model``."""
    check_int("offset", offset)
    check_even("d_model", d_model, "an even number (sine and cosine pairs)")


def _check_positioned(x: Tensor, layout: str, width: int, offset: int, max_len: int,
                      dtype: torch.dtype | None = None) -> None:
    """Vectors ``x`` of ``layout`` (positions in the dimension before the last, ``width`` features
    in the last) at positions ``offset``, ``offset`` + 1, ... that the table or the rotation holds."""
    check_ndim("x", x, layout.count(",") + 1, layout)
    check_vectors("x", x, width, dtype=dtype)
    _check_length(x.shape[-2], offset, max_len)


def _check_length(seq_len: int, offset: int, max_len: int) -> None:
    check_int("offset", offset, minimum=0)  # a negative offset would read the table from its end
    if offset + seq_len > max_len:
        raise ValueError(
            f"seq_len: positions {offset} to {offset + seq_len - 1} exceed max_len={max_len}; "
            "build the model with a larger max_len or pass a shorter sequence"
        )
