"""One dataclass describes a model; named presets give the paper's and the book's.

``base`` and ``big`` are Table 3 of Vaswani et al. 2017 (English-German, a shared
byte-pair vocabulary of about 37000 tokens, one weight matrix for both embeddings
and the pre-softmax projection). ``book`` is the shape of the model this book trains on a
CPU (``pretrained.book_model()``; its vocabulary sizes come from the corpus's vocabularies).
``small`` is a small model of the same depth, twice as wide, for experiments.

Counting a model's parameters lives with the models (``models.count_parameters``,
``models.parameter_count``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import partial

from torch import nn

from .validation import check_choice, check_positive_int, check_probability, check_special_id
from .validation_models import check_divisible

POSITIONAL_KINDS = ("sinusoidal", "learned", "rope")
# The feed-forward network's non-linearity: the paper's ReLU, or GELU (BERT); GPT-2 uses GELU's tanh approximation.
ACTIVATIONS = {"relu": nn.ReLU, "gelu": nn.GELU, "gelu_tanh": partial(nn.GELU, approximate="tanh")}


@dataclass(frozen=True)
class TransformerConfig:
    src_vocab_size: int = 1000
    tgt_vocab_size: int = 1000
    d_model: int = 512
    n_heads: int = 8
    n_encoder_layers: int = 6
    n_decoder_layers: int = 6
    d_ff: int = 2048
    dropout: float = 0.1  # residual and embedding dropout, where the paper puts it (section 5.4)
    attention_dropout: float = 0.0  # on the attention weights; not in the paper
    activation: str = "relu"
    norm_first: bool = False  # False: post-norm, as the paper; True: pre-norm
    positional: str = "sinusoidal"  # or "learned", or "rope"
    max_len: int = 512
    tie_output_embedding: bool = False  # decoder embedding = pre-softmax projection (section 3.4)
    share_source_target_embedding: bool = False  # one embedding for both languages (needs one vocabulary)
    pad_id: int | None = 0  # None: no padding token (GPT-2); padding is then an explicit attention mask
    layer_norm_eps: float = 1e-5

    def __post_init__(self) -> None:
        for name in ("src_vocab_size", "tgt_vocab_size", "d_model", "n_heads", "n_encoder_layers",
                     "n_decoder_layers", "d_ff", "max_len"):
            check_positive_int(name, getattr(self, name))
        check_divisible(self.d_model, self.n_heads)
        check_probability("dropout", self.dropout)
        check_probability("attention_dropout", self.attention_dropout)
        check_choice("activation", self.activation, list(ACTIVATIONS))
        check_choice("positional", self.positional, POSITIONAL_KINDS)
        if self.d_model % 2:
            raise ValueError(f"d_model: expected an even number for sine/cosine pairs, got {self.d_model}")
        if self.positional == "rope" and (self.d_model // self.n_heads) % 2:
            raise ValueError(
                f"n_heads: RoPE needs an even head size, got d_model/n_heads = {self.d_model // self.n_heads}"
            )
        if self.share_source_target_embedding and self.src_vocab_size != self.tgt_vocab_size:
            raise ValueError(
                "share_source_target_embedding: needs src_vocab_size == tgt_vocab_size, "
                f"got {self.src_vocab_size} and {self.tgt_vocab_size}"
            )
        if self.pad_id is not None:
            check_special_id("pad_id", self.pad_id)
            if self.pad_id >= min(self.src_vocab_size, self.tgt_vocab_size):
                raise ValueError(f"pad_id: expected an id inside both vocabularies, got {self.pad_id}")

    @property
    def d_k(self) -> int:
        return self.d_model // self.n_heads

    def replace(self, **changes: object) -> TransformerConfig:
        return dataclasses.replace(self, **changes)

    @classmethod
    def preset(cls, name: str, **overrides: object) -> TransformerConfig:
        """``TransformerConfig.preset("base")``, or with changes: ``preset("small", dropout=0.0)``."""
        check_choice("name", name, list(PRESETS))
        return dataclasses.replace(PRESETS[name], **overrides)


PRESETS: dict[str, TransformerConfig] = {
    "base": TransformerConfig(
        src_vocab_size=37000, tgt_vocab_size=37000, d_model=512, n_heads=8,
        n_encoder_layers=6, n_decoder_layers=6, d_ff=2048, dropout=0.1,
        tie_output_embedding=True, share_source_target_embedding=True,
    ),
    "big": TransformerConfig(
        src_vocab_size=37000, tgt_vocab_size=37000, d_model=1024, n_heads=16,
        n_encoder_layers=6, n_decoder_layers=6, d_ff=4096, dropout=0.3,
        tie_output_embedding=True, share_source_target_embedding=True,
    ),
    "book": TransformerConfig(
        d_model=64, n_heads=4, n_encoder_layers=2, n_decoder_layers=2, d_ff=256, dropout=0.1, max_len=64,
    ),
    "small": TransformerConfig(
        src_vocab_size=1000, tgt_vocab_size=1000, d_model=128, n_heads=4,
        n_encoder_layers=2, n_decoder_layers=2, d_ff=256, dropout=0.1, max_len=64,
    ),
}

