"""Valid calls for the bad-input sweep (tests/test_bad_input_sweep.py), for where the decoder read at a wrong
word (``error_attention``, ``figures.errors``) and the oracle's word positions: "module.name" -> a function
returning (the callable, a dict of valid keyword arguments); EXEMPT: "module.name" -> why it is not swept."""

from __future__ import annotations

import torch

from transformer_lib import error_attention, models, oracle
from transformer_lib.config import TransformerConfig
from transformer_lib.figures.errors import wrong_word_rows_figure
from transformer_lib.tokenization import Vocab

VOCAB = Vocab(["the", "cat", "sat", "on", "a", "mat", "dog", "ran"])  # 12 tokens with the four specials
CONFIG = TransformerConfig(src_vocab_size=12, tgt_vocab_size=12, d_model=8, n_heads=2, n_encoder_layers=1,
                           n_decoder_layers=1, d_ff=16, dropout=0.0, max_len=16)
torch.manual_seed(0)
MODEL = models.Transformer(CONFIG).eval()
ERRORS = [("the cat sat on a mat", "the dog sat", "the cat sat")]


def _rows() -> list[error_attention.WrongWordRow]:
    return error_attention.wrong_word_rows(MODEL, ERRORS, VOCAB, VOCAB)


CALLS = {
    "oracle.source_positions": lambda: (oracle.source_positions, dict(
        french_word="devant", source="the cat in front of a dog")),
    "oracle.first_difference": lambda: (oracle.first_difference, dict(hypothesis="le chat", reference="le chien")),
    "error_attention.wrong_word_rows": lambda: (error_attention.wrong_word_rows, dict(
        model=MODEL, errors=ERRORS, src_vocab=VOCAB, tgt_vocab=VOCAB)),
    "error_attention.own_word_weights": lambda: (error_attention.own_word_weights, dict(
        model=MODEL, pairs=[("the cat sat", "the cat sat")], src_vocab=VOCAB, tgt_vocab=VOCAB)),
    "figures.errors.wrong_word_rows_figure": lambda: (wrong_word_rows_figure, dict(rows=_rows())),
}
EXEMPT: dict[str, str] = {}
