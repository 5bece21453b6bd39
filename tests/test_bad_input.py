"""Every public entry point answers bad input with a ValueError or TypeError that names the argument,
what was expected and what came, rather than an error from deep inside torch."""

import re

import pytest
import torch
from torch import nn

from transformer_lib.attention import causal_mask, scaled_dot_product_attention
from transformer_lib.capture import capture_attention
from transformer_lib.config import TransformerConfig
from transformer_lib.embeddings import TokenEmbedding
from transformer_lib.models import Transformer
from transformer_lib.multi_head_attention import MultiHeadAttention
from transformer_lib.positional_encoding import RotaryEmbedding, sinusoidal_table

CONFIG = TransformerConfig(src_vocab_size=30, tgt_vocab_size=25, d_model=16, n_heads=2, n_encoder_layers=1,
                           n_decoder_layers=1, d_ff=32, dropout=0.0, max_len=12)
MODEL = Transformer(CONFIG)
MHA = MultiHeadAttention(16, 2)
X = torch.randn(2, 5, 16)
SRC = torch.randint(1, 30, (2, 6))
TGT = torch.randint(1, 25, (2, 4))

CASES = {
    "d_model not divisible by heads": (lambda: MultiHeadAttention(10, 3), ValueError,
                                       r"d_model \(10\) must be divisible by n_heads \(3\)"),
    "config not divisible": (lambda: CONFIG.replace(n_heads=3), ValueError, r"d_model \(16\) .* n_heads \(3\)"),
    "query of wrong rank": (lambda: MHA(X[0], X[0], X[0]), ValueError,
                            r"query: expected a 3-D tensor .* got a 2-D tensor of shape \(5, 16\)"),
    "query of wrong width": (lambda: MHA(torch.randn(2, 5, 8), X, X), ValueError,
                             r"query: expected last dimension d_model=16, got shape \(2, 5, 8\)"),
    "key and value disagree": (lambda: MHA(X, X, X[:, :3]), ValueError, r"value: expected \(batch, seq_len\)"),
    "integer features": (lambda: MHA(X.long(), X, X), TypeError, r"query: expected a floating-point tensor"),
    "not a tensor": (lambda: MHA([[1.0]], X, X), TypeError, r"query: expected a torch.Tensor, got list"),
    "empty query": (lambda: MHA(torch.randn(2, 0, 16), X, X), ValueError, r"query: empty sequence"),
    "float mask": (lambda: MHA(X, X, X, causal_mask(5).float()), TypeError,
                   r"mask: expected a boolean mask .* got dtype torch.float32"),
    "mask of wrong shape": (lambda: MHA(X, X, X, causal_mask(4)), ValueError,
                            r"mask: shape \(4, 4\) does not broadcast to .* \(2, 2, 5, 5\)"),
    "mask of wrong rank": (lambda: MHA(X, X, X, torch.ones(5, dtype=torch.bool)), ValueError,
                           r"mask: expected a 2-D to 4-D mask"),
    "attention on 3-D tensors": (lambda: scaled_dot_product_attention(X, X, X), ValueError,
                                 r"query: expected a 4-D tensor of shape \(batch, heads, seq_len, d_k\)"),
    "float token ids": (lambda: MODEL(SRC.float(), TGT), TypeError,
                        r"src_ids: expected integer token ids \(torch.long\), got dtype torch.float32"),
    "boolean token ids": (lambda: TokenEmbedding(5, 4)(torch.ones(1, 2, dtype=torch.bool)), TypeError,
                          r"ids: expected integer token ids"),
    "id above the vocabulary": (lambda: MODEL(SRC, torch.tensor([[1, 2, 25]] * 2)), ValueError,
                                r"tgt_ids: token ids must lie in \[0, 25\) .* got 25 at position \(0, 2\)"),
    "negative id": (lambda: MODEL(torch.tensor([[3, -1]] * 2), TGT), ValueError,
                    r"src_ids: token ids must lie in \[0, 30\) .* got -1"),
    "ids of wrong rank": (lambda: MODEL(SRC[0], TGT), ValueError, r"src_ids: expected a 2-D tensor"),
    "empty source": (lambda: MODEL(SRC[:, :0], TGT), ValueError, r"src_ids: empty sequence"),
    "empty target": (lambda: MODEL(SRC, TGT[:, :0]), ValueError, r"tgt_ids: empty sequence"),
    "batch sizes differ": (lambda: MODEL(SRC, TGT[:1]), ValueError, r"tgt_ids: expected batch size 2"),
    "longer than max_len": (lambda: MODEL(torch.randint(1, 30, (1, 13)), TGT[:1]), ValueError,
                            r"seq_len: positions 0 to 12 exceed max_len=12"),
    "zero heads": (lambda: CONFIG.replace(n_heads=0), ValueError, r"n_heads: expected a positive int, got 0"),
    "float layer count": (lambda: CONFIG.replace(n_encoder_layers=2.0), TypeError,
                          r"n_encoder_layers: expected an int, got float"),
    "dropout above one": (lambda: CONFIG.replace(dropout=1.5), ValueError, r"dropout: expected a probability"),
    "unknown activation": (lambda: CONFIG.replace(activation="tanh"), ValueError,
                           r"activation: expected one of \['relu', 'gelu', 'gelu_tanh'\], got 'tanh'"),
    "unknown positional": (lambda: CONFIG.replace(positional="absolute"), ValueError, r"positional: expected one of"),
    "odd d_model for sinusoids": (lambda: sinusoidal_table(10, 7), ValueError, r"d_model: expected an even number"),
    "odd head size for RoPE": (lambda: RotaryEmbedding(5), ValueError, r"d_head: expected an even head size"),
    "capture without target": (lambda: capture_attention(MODEL, SRC), ValueError, r"tgt_ids: .* got None"),
    "capture of another model": (lambda: capture_attention(nn.Linear(2, 2), SRC), TypeError,
                                 r"model: expected a Transformer"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_bad_input_gets_a_clear_error(case):
    call, exc, message = CASES[case]
    with pytest.raises(exc) as info:
        call()
    assert type(info.value) is exc  # not a subclass thrown from inside torch
    assert re.search(message, str(info.value)), str(info.value)
