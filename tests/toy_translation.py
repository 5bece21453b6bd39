"""A tiny untrained translation model and two vocabularies, shared by the figure and explorer tests."""

from __future__ import annotations

import torch

from transformer_lib.capture import AttentionMaps, capture_translation
from transformer_lib.config import TransformerConfig
from transformer_lib.decoding import translate
from transformer_lib.models import Transformer
from transformer_lib.tokenization import Vocab

SRC = Vocab("the cat sat on a mat dog ran".split())
TGT = Vocab("le chat assis sur un tapis chien couru".split())
MAX_LEN = 10


def toy_model(n_decoder_layers: int = 1, seed: int = 0) -> Transformer:
    """Two encoder layers, ``n_decoder_layers`` decoder layers, two heads, at most MAX_LEN positions."""
    torch.manual_seed(seed)
    config = TransformerConfig(src_vocab_size=len(SRC), tgt_vocab_size=len(TGT), d_model=16, n_heads=2,
                               n_encoder_layers=2, n_decoder_layers=n_decoder_layers, d_ff=32, dropout=0.0,
                               max_len=MAX_LEN)
    return Transformer(config).eval()


def toy_maps(model: Transformer, sentence: str = "the cat sat on the mat") -> AttentionMaps:
    """The attention maps behind ``model``'s translation of ``sentence``."""
    return capture_translation(model, translate(model, sentence, SRC, TGT), SRC, TGT)
