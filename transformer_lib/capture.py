"""Read every attention map out of a model in one call.

The result uses the layout bertviz takes: for each kind of attention, a list with
one tensor per layer, shaped (batch, heads, queries, keys).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

import torch
from torch import Tensor, nn

from .decoding import Translation, check_translation_model
from .models import DecoderOnlyTransformer, EncoderOnlyTransformer, Transformer
from .multi_head_attention import MultiHeadAttention
from .tokenization import Vocab
from .validation import check_index, check_instance, check_token_list, check_vocab_size


@dataclass
class AttentionMaps:
    encoder_self: list[Tensor] = field(default_factory=list)  # per layer: (B, h, S, S)
    decoder_self: list[Tensor] = field(default_factory=list)  # per layer: (B, h, T, T)
    cross: list[Tensor] = field(default_factory=list)  # per layer: (B, h, T, S)
    src_tokens: list[list[str]] | None = None  # per batch row
    tgt_tokens: list[list[str]] | None = None

    def bertviz_kwargs(self, index: int = 0) -> dict:
        """Keyword arguments for ``bertviz.model_view`` / ``head_view`` for batch row ``index``
        of an encoder-decoder model, or of an encoder-only one (BERT's layout: one attention)."""
        if not self.decoder_self and not self.cross and self.src_tokens is not None:  # encoder-only
            check_index("index", index, len(self.src_tokens), "a batch row (int)")
            return dict(attention=[a[index:index + 1] for a in self.encoder_self], tokens=self.src_tokens[index])
        if self.src_tokens is None or self.tgt_tokens is None:
            raise ValueError("tokens: capture_attention was called without vocabularies, so there are no tokens")
        check_index("index", index, len(self.src_tokens), "a batch row (int)")
        row = slice(index, index + 1)
        return dict(
            encoder_attention=[a[row] for a in self.encoder_self],
            decoder_attention=[a[row] for a in self.decoder_self],
            cross_attention=[a[row] for a in self.cross],
            encoder_tokens=self.src_tokens[index],
            decoder_tokens=self.tgt_tokens[index],
        )


@contextmanager
def keep_attention_weights(model: nn.Module) -> Iterator[None]:
    """While active, every ``MultiHeadAttention`` in ``model`` keeps its last weights."""
    check_instance("model", model, nn.Module, "a torch.nn.Module")
    modules = [m for m in model.modules() if isinstance(m, MultiHeadAttention)]
    for m in modules:
        m.keep_weights = True
    try:
        yield
    finally:
        for m in modules:
            m.keep_weights = False


def _tokens(ids: Tensor, vocab: Sequence[str] | None) -> list[list[str]] | None:
    if vocab is None:
        return None
    return [[vocab[i] for i in row] for row in ids.tolist()]


def _weights(attention: MultiHeadAttention) -> Tensor:
    assert attention.last_weights is not None  # set by the forward pass just run
    weights, attention.last_weights = attention.last_weights, None
    return weights


@torch.no_grad()
def capture_attention(
    model: Transformer | DecoderOnlyTransformer | EncoderOnlyTransformer,
    src_ids: Tensor,
    tgt_ids: Tensor | None = None,
    src_vocab: Sequence[str] | None = None,
    tgt_vocab: Sequence[str] | None = None,
) -> AttentionMaps:
    """Run ``model`` once in evaluation mode and return all its attention weights.

    For a ``Transformer``, ``src_ids`` (B, S) feed the encoder and ``tgt_ids`` (B, T) the
    decoder. A single-stack model takes its ids as ``src_ids``: a decoder-only model fills
    ``decoder_self``, an encoder-only one ``encoder_self``. ``src_vocab`` and ``tgt_vocab``
    map ids to token strings (``vocab[id]``).
    """
    check_instance("model", model, (Transformer, DecoderOnlyTransformer, EncoderOnlyTransformer),
                   "a Transformer, DecoderOnlyTransformer or EncoderOnlyTransformer")
    config = model.config
    sizes = {"src_vocab": ("config.src_vocab_size", config.src_vocab_size),
             "tgt_vocab": ("config.tgt_vocab_size", config.tgt_vocab_size)}
    if isinstance(model, DecoderOnlyTransformer):  # its ids are target ids, whichever name labels them
        sizes["src_vocab"] = sizes["tgt_vocab"]
    for name, vocab in (("src_vocab", src_vocab), ("tgt_vocab", tgt_vocab)):
        if vocab is not None:
            check_token_list(name, vocab)  # a str would label each id with one character
            check_vocab_size(name, vocab, sizes[name][1], f"the model's {sizes[name][0]}")
    was_training = model.training
    model.eval()
    maps = AttentionMaps()
    try:
        with keep_attention_weights(model):
            if isinstance(model, Transformer):
                if tgt_ids is None:
                    raise ValueError("tgt_ids: an encoder-decoder model needs decoder input ids, got None")
                model(src_ids, tgt_ids)
                maps.encoder_self = [_weights(layer.self_attn) for layer in model.encoder.layers]
                maps.decoder_self = [_weights(layer.self_attn) for layer in model.decoder.layers]
                maps.cross = [_weights(layer.cross_attn) for layer in model.decoder.layers]
                maps.src_tokens, maps.tgt_tokens = _tokens(src_ids, src_vocab), _tokens(tgt_ids, tgt_vocab)
            elif isinstance(model, DecoderOnlyTransformer):
                model(src_ids)
                maps.decoder_self = [_weights(layer.self_attn) for layer in model.blocks.layers]
                maps.tgt_tokens = _tokens(src_ids, tgt_vocab if tgt_vocab is not None else src_vocab)
            else:  # EncoderOnlyTransformer
                model(src_ids)
                maps.encoder_self = [_weights(layer.self_attn) for layer in model.encoder.layers]
                maps.src_tokens = _tokens(src_ids, src_vocab)
    finally:
        model.train(was_training)
    return maps


def capture_translation(
    model: Transformer, translation: Translation, src_vocab: Vocab, tgt_vocab: Vocab
) -> AttentionMaps:
    """The attention maps behind a ``decoding.translate`` result: one forward pass over its source
    and over the decoder inputs that produced its tokens.

    Each decoder input produces the next token: ``<sos>`` the first, the last generated token
    ``<eos>``. A translation cut off at its length limit has no ``<eos>``, so its last token was
    never read and is not a row of the maps.
    """
    if not isinstance(model, Transformer):
        raise TypeError(f"model: expected a transformer_lib.models.Transformer, got {type(model).__name__}")
    if not isinstance(translation, Translation):
        raise TypeError(f"translation: expected a decoding.Translation, got {type(translation).__name__}")
    check_translation_model(model, src_vocab, tgt_vocab)
    read = translation.ids if translation.ended else translation.ids[:-1]
    device = next(model.parameters()).device
    src = torch.tensor([translation.src_ids], device=device)  # (1, S)
    tgt = torch.tensor([[tgt_vocab.sos_id, *read]], device=device)  # (1, T)
    return capture_attention(model, src, tgt, src_vocab=src_vocab.itos, tgt_vocab=tgt_vocab.itos)


@dataclass
class FeedForwardActivations:
    """The hidden layer of every feed-forward network in one forward pass: the ReLU's output,
    max(0, x W_1 + b_1), before W_2 mixes it back to d_model."""

    encoder: list[Tensor] = field(default_factory=list)  # per layer: (B, S, d_ff)
    decoder: list[Tensor] = field(default_factory=list)  # per layer: (B, T, d_ff)


@torch.no_grad()
def capture_feed_forward(model: Transformer, src_ids: Tensor, tgt_ids: Tensor) -> FeedForwardActivations:
    """Run ``model`` once in evaluation mode on ``src_ids`` (B, S) and decoder inputs ``tgt_ids``
    (B, T), and return the output of the activation function of every feed-forward network, read by
    forward hooks on the ``PositionwiseFeedForward.activation`` modules (nothing else changes)."""
    check_instance("model", model, Transformer, "a transformer_lib.models.Transformer")
    found = FeedForwardActivations()

    def keep_in(kept: list[Tensor]) -> Callable[..., None]:
        return lambda _module, _inputs, output: kept.append(output.detach())

    hooks = [
        layer.feed_forward.activation.register_forward_hook(keep_in(kept))
        for layers, kept in ((model.encoder.layers, found.encoder), (model.decoder.layers, found.decoder))
        for layer in layers
    ]
    was_training = model.training
    model.eval()
    try:
        model(src_ids, tgt_ids)
    finally:
        model.train(was_training)
        for hook in hooks:
            hook.remove()
    return found
