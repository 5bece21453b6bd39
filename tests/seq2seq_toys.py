"""A tiny synthetic translation task (reverse a sequence of symbols) for the training and decoding tests."""

from __future__ import annotations

from types import SimpleNamespace

import torch

from transformer_lib.config import TransformerConfig
from transformer_lib.models import Transformer

PAD, SOS, EOS = 0, 1, 2
VOCAB = 12  # ids 3..11 are the symbols


def reverse_pairs(n: int, seed: int = 0, min_len: int = 2, max_len: int = 5) -> list[tuple[list[int], list[int]]]:
    g = torch.Generator().manual_seed(seed)
    pairs = []
    for _ in range(n):
        length = int(torch.randint(min_len, max_len + 1, (1,), generator=g))
        src = torch.randint(3, VOCAB, (length,), generator=g).tolist()
        pairs.append((src, src[::-1]))
    return pairs


def to_batches(pairs, batch_size: int) -> list[SimpleNamespace]:
    """Right-padded (src, tgt_in = <sos> + target, tgt_out = target + <eos>) batches, in order."""
    batches = []
    for start in range(0, len(pairs), batch_size):
        chunk = pairs[start:start + batch_size]
        s_len = max(len(s) for s, _ in chunk)
        t_len = max(len(t) for _, t in chunk) + 1
        src = torch.full((len(chunk), s_len), PAD)
        tgt_in = torch.full((len(chunk), t_len), PAD)
        tgt_out = torch.full((len(chunk), t_len), PAD)
        for i, (s, t) in enumerate(chunk):
            src[i, :len(s)] = torch.tensor(s)
            tgt_in[i, :len(t) + 1] = torch.tensor([SOS, *t])
            tgt_out[i, :len(t) + 1] = torch.tensor([*t, EOS])
        batches.append(SimpleNamespace(src=src, tgt_in=tgt_in, tgt_out=tgt_out))
    return batches


def tiny_config(**changes) -> TransformerConfig:
    base = dict(src_vocab_size=VOCAB, tgt_vocab_size=VOCAB, d_model=32, n_heads=4, n_encoder_layers=1,
                n_decoder_layers=1, d_ff=64, dropout=0.0, max_len=32)
    base.update(changes)
    return TransformerConfig(**base)


def tiny_model(seed: int = 0, **changes) -> Transformer:
    torch.manual_seed(seed)
    return Transformer(tiny_config(**changes)).eval()


def tiny_book_model(d_model: int) -> TransformerConfig:
    """The book's preset, shrunk to one layer of two heads for recipe tests that must run in seconds."""
    return TransformerConfig.preset("book", d_model=d_model, n_heads=2, n_encoder_layers=1, n_decoder_layers=1,
                                    d_ff=d_model)
