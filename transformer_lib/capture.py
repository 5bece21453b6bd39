"""Read every attention map out of a model in one call.

The result uses the layout bertviz takes: for each kind of attention, a list with
one tensor per layer, shaped (batch, heads, queries, keys).
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

import torch
from torch import Tensor, nn

from .decoding import Translation, check_translation_model
from .models import DecoderOnlyTransformer, EncoderOnlyTransformer, Transformer
from .multi_head_attention import MultiHeadAttention
from .tokenization import Vocab
from .validation import check_index, check_instance, check_token_list
from .validation_models import check_vocab_size


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
    attention_mask: Tensor | None = None,
) -> AttentionMaps:
    """Run ``model`` once in evaluation mode and return all its attention weights.

    For a ``Transformer``, ``src_ids`` (B, S) feed the encoder and ``tgt_ids`` (B, T) the
    decoder. A single-stack model takes its ids as ``src_ids``: a decoder-only model fills
    ``decoder_self``, an encoder-only one ``encoder_self``; ``attention_mask`` (B, S), 0 at padding,
    is passed on to it (a converted GPT-2 or BERT finds its padding there). ``src_vocab`` and
    ``tgt_vocab`` map ids to token strings (``vocab[id]``).
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
                if attention_mask is not None:
                    raise ValueError("attention_mask: the encoder-decoder Transformer finds padding by its id; "
                                     "expected None")
                model(src_ids, tgt_ids)
                maps.encoder_self = [_weights(layer.self_attn) for layer in model.encoder.layers]
                maps.decoder_self = [_weights(layer.self_attn) for layer in model.decoder.layers]
                maps.cross = [_weights(layer.cross_attn) for layer in model.decoder.layers]
                maps.src_tokens, maps.tgt_tokens = _tokens(src_ids, src_vocab), _tokens(tgt_ids, tgt_vocab)
            elif isinstance(model, DecoderOnlyTransformer):
                model(src_ids, attention_mask=attention_mask)
                maps.decoder_self = [_weights(layer.self_attn) for layer in model.blocks.layers]
                maps.tgt_tokens = _tokens(src_ids, tgt_vocab if tgt_vocab is not None else src_vocab)
            else:  # EncoderOnlyTransformer
                model(src_ids, attention_mask=attention_mask)
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


@dataclass
class Activations:
    """Every tensor a reader can follow through one translation, per position, in the order the
    forward pass computed them (``blocks``, a dict that keeps its order). Names are the modules'
    (``encoder.0.self_attn.q``); each tensor is that block's value for the sentence, positions first:

    ``{src,tgt}.token`` E[id] (T, d_model); ``{src,tgt}.input`` E[id] sqrt(d_model) + PE (T, d_model);
    for each attention ``...q``, ``...k``, ``...v`` (T, h, d_k) (cross-attention: k and v of the S
    memory rows), ``...scores`` Q K^T / sqrt(d_k), ``...masked`` the same with masked keys at -inf and
    ``...weights`` their softmax (T_q, h, T_k), ``...heads`` each head's output (T, h, d_k) and
    ``...output`` the heads concatenated, after W_O (T, d_model); for each residual ``...sum``
    x + Sublayer (the input of the norm, post-norm; its output, pre-norm) and ``...norm`` its
    LayerNorm's output (T, d_model); for each feed-forward ``...hidden`` (T, d_ff) and ``...output``;
    ``generator.logits`` (T, V), the last tensor the model computed, and ``generator.probabilities``.
    """

    blocks: dict[str, Tensor] = field(default_factory=dict)
    src_tokens: list[str] = field(default_factory=list)
    tgt_tokens: list[str] = field(default_factory=list)  # the decoder inputs: <sos> and the tokens read


def _attention_hooks(name: str, attention: MultiHeadAttention, blocks: dict[str, Tensor]) -> list:
    """Hooks that keep one attention's Q, K, V, mask, heads and output as the forward pass makes them."""
    seen: dict[str, Tensor | None] = {}

    def split(x: Tensor) -> Tensor:  # (1, T, d_model) -> (T, h, d_k): the library's split, positions first
        return attention.rotate(attention.split_heads(x), 0)[0].transpose(0, 1)

    def keep_mask(_module, args, kwargs) -> None:
        bound = inspect.signature(attention.forward).bind(*args, **kwargs)
        seen["mask"] = bound.arguments.get("mask")

    def keep(which: str) -> Callable[..., None]:
        return lambda _module, _inputs, output: blocks.__setitem__(f"{name}.{which}", split(output.detach()))

    def keep_scores(_module, inputs, output) -> None:  # W_O runs after the softmax: the weights are kept
        q, k = blocks[f"{name}.q"].transpose(0, 1), blocks[f"{name}.k"].transpose(0, 1)  # (h, T, d_k)
        scores = q @ k.transpose(-2, -1) / math.sqrt(attention.d_k)  # (h, T_q, T_k), as attention_weights
        mask = seen.pop("mask")
        if mask is not None and mask.dim() == 3:  # (B, T_q, T_k): shared by every head, as masked_softmax reads it
            mask = mask[:, None]
        masked = scores if mask is None else scores.masked_fill(~mask.expand(1, *scores.shape)[0], float("-inf"))
        blocks[f"{name}.scores"] = scores.transpose(0, 1)  # (T_q, h, T_k)
        blocks[f"{name}.masked"] = masked.transpose(0, 1)
        blocks[f"{name}.weights"] = _weights(attention)[0].transpose(0, 1)
        blocks[f"{name}.heads"] = split(inputs[0].detach())
        blocks[f"{name}.output"] = output.detach()[0]

    return [attention.register_forward_pre_hook(keep_mask, with_kwargs=True),
            *(getattr(attention, f"w_{w}").register_forward_hook(keep(w)) for w in "qkv"),
            attention.w_o.register_forward_hook(keep_scores)]


def _residual_hooks(name: str, residual: nn.Module, blocks: dict[str, Tensor]) -> list:
    def keep_norm(_module, inputs, output) -> None:
        if not residual.norm_first:  # post-norm: the norm reads x + Sublayer(x)
            blocks[f"{name}.sum"] = inputs[0].detach()[0]
        blocks[f"{name}.norm"] = output.detach()[0]

    def keep_sum(_module, _inputs, output) -> None:
        if residual.norm_first:  # pre-norm: the residual returns x + Sublayer(LayerNorm(x))
            blocks[f"{name}.sum"] = output.detach()[0]

    return [residual.norm.register_forward_hook(keep_norm), residual.register_forward_hook(keep_sum)]


def _keep(name: str, blocks: dict[str, Tensor]) -> Callable[..., None]:
    return lambda _module, _inputs, output: blocks.__setitem__(name, output.detach()[0])


@torch.no_grad()
def capture_model_activations(model: Transformer, src_ids: Tensor, tgt_ids: Tensor) -> dict[str, Tensor]:
    """Run ``model`` once in evaluation mode on one sentence, ``src_ids`` (1, S) and decoder inputs
    ``tgt_ids`` (1, T), and return every block's tensor (see :class:`Activations`), read by forward
    hooks on the model's own modules: nothing is computed twice but the scores, Q K^T / sqrt(d_k)
    of the kept Q and K, which the model's attention folds into its softmax."""
    check_instance("model", model, Transformer, "a transformer_lib.models.Transformer")
    for name, ids in (("src_ids", src_ids), ("tgt_ids", tgt_ids)):
        check_instance(name, ids, Tensor, "a torch.Tensor")
        if ids.dim() != 2 or ids.shape[0] != 1 or ids.shape[1] == 0:
            raise ValueError(f"{name}: expected shape (1, seq_len >= 1): one sentence, got {tuple(ids.shape)}")
    blocks: dict[str, Tensor] = {}
    hooks = []
    for side, embed in (("src", model.src_embed), ("tgt", model.tgt_embed)):
        hooks += [embed.token.embedding.register_forward_hook(_keep(f"{side}.token", blocks)),
                  embed.register_forward_hook(_keep(f"{side}.input", blocks))]
    for stack in ("encoder", "decoder"):
        for index, layer in enumerate(getattr(model, stack).layers):
            for name, module in layer.named_children():
                full = f"{stack}.{index}.{name}"
                if isinstance(module, MultiHeadAttention):
                    hooks += _attention_hooks(full, module, blocks)
                elif name == "feed_forward":
                    hooks += [module.activation.register_forward_hook(_keep(f"{full}.hidden", blocks)),
                              module.register_forward_hook(_keep(f"{full}.output", blocks))]
                else:  # a residual
                    hooks += _residual_hooks(full, module, blocks)
        final = getattr(model, stack).final_norm
        if final is not None:
            hooks.append(final.register_forward_hook(_keep(f"{stack}.final_norm", blocks)))
    hooks.append(model.generator.register_forward_hook(_keep("generator.logits", blocks)))
    was_training = model.training
    model.eval()
    try:
        with keep_attention_weights(model):
            model(src_ids, tgt_ids)
    finally:
        model.train(was_training)
        for hook in hooks:
            hook.remove()
    blocks["generator.probabilities"] = blocks["generator.logits"].softmax(dim=-1)
    return blocks


def capture_activations(
    model: Transformer, translation: Translation, src_vocab: Vocab, tgt_vocab: Vocab
) -> Activations:
    """Every block's tensor behind a ``decoding.translate`` result, from one forward pass over its
    source and the decoder inputs that produced its tokens (those of :func:`capture_translation`)."""
    if not isinstance(model, Transformer):
        raise TypeError(f"model: expected a transformer_lib.models.Transformer, got {type(model).__name__}")
    if not isinstance(translation, Translation):
        raise TypeError(f"translation: expected a decoding.Translation, got {type(translation).__name__}")
    check_translation_model(model, src_vocab, tgt_vocab)
    read = [tgt_vocab.sos_id, *(translation.ids if translation.ended else translation.ids[:-1])]
    device = next(model.parameters()).device
    blocks = capture_model_activations(model, torch.tensor([translation.src_ids], device=device),
                                       torch.tensor([read], device=device))
    return Activations(blocks, [src_vocab.itos[i] for i in translation.src_ids], [tgt_vocab.itos[i] for i in read])
