"""Whole models, assembled from the same layers.

* ``Transformer``: the encoder-decoder of the paper, for translation.
* ``DecoderOnlyTransformer``: a GPT-style language model. Its block is the
  ``EncoderLayer`` (self-attention + feed-forward) run under a causal mask.
* ``EncoderOnlyTransformer``: a BERT-style model, the encoder stack alone, with a
  head that predicts a token at every position (masked-language modelling).
* ``count_parameters`` and ``parameter_count``: the size of a model, or of the
  ``Transformer`` a config describes; ``parameter_breakdown`` splits that count by component
  (chapter 6; ``figures.models.parameter_breakdown_figure`` draws it).

Longer than 400 lines: the three models share one embedding, one way of finding padding (an id, an
attention mask, or both) and the parameter counts that chapter 6 reads from their layout; split, each
part would import the others.
"""

from __future__ import annotations

from collections.abc import Iterable

import torch
from torch import Tensor, nn

from .attention import causal_mask, combine_masks, padding_mask
from .config import TransformerConfig
from .decoder import Decoder, DecoderLayer, DecoderLayerCache
from .embeddings import TokenEmbedding
from .encoder import Encoder, EncoderLayer
from .multi_head_attention import KVCache, LayerCaches
from .positional_encoding import LearnedPositionalEmbedding, RotaryEmbedding, SinusoidalPositionalEncoding
from .residual import LayerNorm
from .validation import check_bool, check_instance, check_int, check_items, check_positive_int, empty_or_wrong_type
from .validation_tensors import (
    check_attention_mask,
    check_features,
    check_finite,
    check_id_dtype,
    check_ndim,
    check_nonempty,
    check_token_ids,
    module_dtype,
)


def _check_config(config: object, padded: bool = False) -> TransformerConfig:
    """A ``TransformerConfig``; ``padded``: one with a padding id (the encoder-decoder needs one)."""
    check_instance("config", config, TransformerConfig, "a TransformerConfig")
    if padded and config.pad_id is None:
        raise ValueError("config: the encoder-decoder Transformer needs a padding id; expected pad_id an int, "
                         "got None")
    return config  # type: ignore[return-value]


def _real_tokens(ids: Tensor, pad_id: int | None, attention_mask: object = None) -> Tensor:
    """(B, T) True at the real tokens of ``ids``: not ``pad_id`` (None: no id is padding) and, where an
    ``attention_mask`` (B, T) is given, not 0 there."""
    real = torch.ones_like(ids, dtype=torch.bool) if pad_id is None else ids != pad_id
    mask = check_attention_mask("attention_mask", attention_mask, ids)
    return real if mask is None else real & mask


class InputEmbedding(nn.Module):
    """Token embedding (times sqrt(d_model)) plus position, then dropout (section 5.4:
    "we apply dropout to the sums of the embeddings and the positional encodings").

    BERT's embedding differs in three optional pieces: no sqrt(d_model) (``scale=False``, GPT-2's too),
    a learned vector per segment added as well (``token_types``: how many segments, 0 for none), and a
    LayerNorm over the sum (``norm=True``)."""

    def __init__(self, vocab_size: int, config: TransformerConfig, *, scale: bool = True, token_types: int = 0,
                 norm: bool = False) -> None:
        super().__init__()
        _check_config(config)
        self.token = TokenEmbedding(vocab_size, config.d_model, scale)
        check_int("token_types", token_types, minimum=0)
        self.token_type = nn.Embedding(token_types, config.d_model) if token_types else None  # BERT's segments
        self.norm = LayerNorm(config.d_model, config.layer_norm_eps) if check_bool("norm", norm) else None
        if config.positional == "sinusoidal":
            self.position: nn.Module | None = SinusoidalPositionalEncoding(config.d_model, config.max_len)
        elif config.positional == "learned":
            self.position = LearnedPositionalEmbedding(config.d_model, config.max_len)
        else:  # "rope": positions enter inside attention, by rotating queries and keys
            self.position = None
        self.dropout = nn.Dropout(config.dropout)

    @property
    def is_papers(self) -> bool:
        """True for the paper's embedding (scaled, no segments, no norm): what a config alone rebuilds."""
        return self.token.scale != 1.0 and self.token_type is None and self.norm is None

    def forward(self, ids: Tensor, offset: int = 0, token_type_ids: Tensor | None = None) -> Tensor:
        x = self.token(ids)  # (B, T, d_model)
        if self.position is not None:
            x = self.position(x, offset)
        if self.token_type is not None:  # segment 0 for every token unless told otherwise
            if token_type_ids is None:
                token_type_ids = torch.zeros_like(ids)
            check_token_ids("token_type_ids", token_type_ids, self.token_type.num_embeddings)
            if token_type_ids.shape != ids.shape:
                raise ValueError(f"token_type_ids: expected shape {tuple(ids.shape)} like ids, "
                                 f"got {tuple(token_type_ids.shape)}")
            x = x + self.token_type(token_type_ids)
        elif token_type_ids is not None:
            raise ValueError("token_type_ids: this embedding has no token types (token_types=0); expected None")
        if self.norm is not None:
            x = self.norm(x)
        return self.dropout(x)


class FirstTokenPooler(nn.Module):
    """BERT's pooler: the first token's ([CLS]) final vector through a linear layer and tanh, one
    vector that summarises the sequence for a classifier."""

    def __init__(self, d_model: int) -> None:
        super().__init__()
        self.dense = nn.Linear(check_positive_int("d_model", d_model), d_model)

    def forward(self, hidden: Tensor) -> Tensor:
        """(B, T, d_model) -> (B, d_model)"""
        check_features("hidden", hidden, self.dense.in_features, dtype=module_dtype(self.dense.weight))
        return torch.tanh(self.dense(hidden[:, 0]))


def _layer_kwargs(config: TransformerConfig) -> dict:
    rotary = RotaryEmbedding(config.d_k, config.max_len) if config.positional == "rope" else None
    return dict(
        d_model=config.d_model, n_heads=config.n_heads, d_ff=config.d_ff, dropout=config.dropout,
        activation=config.activation, norm_first=config.norm_first,
        attention_dropout=config.attention_dropout, eps=config.layer_norm_eps, rotary=rotary,
    )


def _embedding(embed: object, vocab_size: int, config: TransformerConfig) -> InputEmbedding:
    """The paper's ``InputEmbedding``, or the one given, checked against the config."""
    if embed is None:
        return InputEmbedding(vocab_size, config)
    check_instance("embed", embed, InputEmbedding, "an InputEmbedding or None")
    if embed.token.embedding.weight.shape != (vocab_size, config.d_model):
        raise ValueError(f"embed: expected a ({vocab_size}, {config.d_model}) token embedding like the config, "
                         f"got {tuple(embed.token.embedding.weight.shape)}")
    return embed


def _init_weights(model: nn.Module) -> None:
    """Xavier-uniform for every matrix, as nn.Transformer and the reference implementations do."""
    for p in model.parameters():
        if p.dim() > 1:
            nn.init.xavier_uniform_(p)


class Transformer(nn.Module):
    """The encoder-decoder Transformer: source ids and target ids in, next-token logits out."""

    def __init__(self, config: TransformerConfig) -> None:
        super().__init__()
        self.config = _check_config(config, padded=True)  # its masks, loss and decoders find padding by its id
        self.src_embed = InputEmbedding(config.src_vocab_size, config)
        self.tgt_embed = InputEmbedding(config.tgt_vocab_size, config)
        self.encoder = Encoder(EncoderLayer(**_layer_kwargs(config)), config.n_encoder_layers)
        self.decoder = Decoder(DecoderLayer(**_layer_kwargs(config)), config.n_decoder_layers)
        self.generator = nn.Linear(config.d_model, config.tgt_vocab_size)  # the pre-softmax projection
        _init_weights(self)
        if config.share_source_target_embedding:
            self.src_embed.token.embedding.weight = self.tgt_embed.token.embedding.weight
        if config.tie_output_embedding:  # section 3.4: one matrix, used three (or two) times
            self.generator.weight = self.tgt_embed.token.embedding.weight

    def src_mask(self, src_ids: Tensor) -> Tensor:
        check_ndim("src_ids", src_ids, 2, "(batch, src_len)")
        check_id_dtype("src_ids", src_ids)
        check_nonempty("src_ids", src_ids)
        return padding_mask(src_ids, self.config.pad_id)  # (B, 1, 1, S)

    def tgt_mask(self, tgt_ids: Tensor) -> Tensor:
        check_ndim("tgt_ids", tgt_ids, 2, "(batch, tgt_len)")
        check_id_dtype("tgt_ids", tgt_ids)
        check_nonempty("tgt_ids", tgt_ids)
        length = tgt_ids.shape[1]
        causal = causal_mask(length, device=tgt_ids.device)  # (T, T)
        return combine_masks(padding_mask(tgt_ids, self.config.pad_id), causal)  # (B, 1, T, T)

    def encode(self, src_ids: Tensor) -> Tensor:
        """(B, S) source ids -> (B, S, d_model) memory."""
        check_token_ids("src_ids", src_ids, self.config.src_vocab_size)
        return self.encoder(self.src_embed(src_ids), self.src_mask(src_ids))

    def decode(
        self,
        tgt_ids: Tensor,
        memory: Tensor,
        src_ids: Tensor,
        cache: list[DecoderLayerCache] | None = None,
    ) -> Tensor:
        """(B, T) target ids -> (B, T, d_model) decoder output.

        With a ``cache`` (from ``new_cache()``), ``tgt_ids`` holds only the tokens not yet
        seen, and the earlier ones are read from the cache.
        """
        check_token_ids("tgt_ids", tgt_ids, self.config.tgt_vocab_size)
        check_ndim("src_ids", src_ids, 2, "(batch, src_len)")
        check_id_dtype("src_ids", src_ids)
        check_ndim("memory", memory, 3, "(batch, src_len, d_model)")
        if src_ids.shape != memory.shape[:2]:
            raise ValueError(f"src_ids: expected shape (batch, src_len) = {tuple(memory.shape[:2])} like memory, "
                             f"got {tuple(src_ids.shape)}")
        check_finite("memory", memory)
        if cache is not None and (not isinstance(cache, list) or len(cache) != len(self.decoder.layers)
                                  or not all(isinstance(layer_cache, DecoderLayerCache) for layer_cache in cache)):
            raise empty_or_wrong_type(cache)(f"cache: expected model.new_cache() (a list of {len(self.decoder.layers)} "
                            f"DecoderLayerCache) or None, got {type(cache).__name__}")
        past = 0 if cache is None else len(cache[0].self_attn)
        if cache is None:
            tgt_mask = self.tgt_mask(tgt_ids)
        elif tgt_ids.shape[1] == 1:  # the newest token may see every cached one: no mask needed
            tgt_mask = None
        else:  # the prefix holds no padding while it is being generated
            tgt_mask = causal_mask(tgt_ids.shape[1], past + tgt_ids.shape[1], device=tgt_ids.device)
        x = self.tgt_embed(tgt_ids, offset=past)
        return self.decoder(x, memory, tgt_mask, self.src_mask(src_ids), cache)

    def new_cache(self) -> LayerCaches:
        return self.decoder.new_cache()

    def forward(self, src_ids: Tensor, tgt_ids: Tensor) -> Tensor:
        """(B, S) source ids and (B, T) decoder input ids -> (B, T, tgt_vocab_size) logits."""
        memory = self.encode(src_ids)  # encode and decode check the ids (each once: a check reads them all)
        _check_same_batch(src_ids, tgt_ids)
        return self.generator(self.decode(tgt_ids, memory, src_ids))


def _check_same_batch(src_ids: Tensor, tgt_ids: Tensor) -> None:
    """``Transformer.forward``'s target ids: (batch, seq_len), as many sentences as the source."""
    check_ndim("tgt_ids", tgt_ids, 2, "(batch, seq_len)")
    if tgt_ids.shape[0] != src_ids.shape[0]:
        raise ValueError(f"tgt_ids: expected batch size {src_ids.shape[0]} like src_ids, "
                         f"got shape {tuple(tgt_ids.shape)}")


class DecoderOnlyCache(LayerCaches):
    """A ``DecoderOnlyTransformer``'s cache: one ``KVCache`` per block, and ``real`` (B, T_cached), True
    at the cached positions that are real tokens, so that padding read earlier stays masked later."""

    def __init__(self, caches: Iterable[KVCache]) -> None:
        super().__init__(check_items("caches", caches, KVCache, "KVCache"))
        self.real: Tensor | None = None

    def index_select(self, index: Tensor) -> None:
        """Keep rows ``index`` of every cached tensor and of the padding record (beam search's reordering)."""
        super().index_select(index)
        if self.real is not None:
            self.real = self.real.index_select(0, index)


class DecoderOnlyTransformer(nn.Module):
    """A GPT-style language model: ``config.n_decoder_layers`` causal self-attention blocks
    over a vocabulary of ``config.tgt_vocab_size``. ``embed``: another ``InputEmbedding`` than the
    paper's (GPT-2's has no sqrt(d_model) scale: ``convert.from_gpt2`` builds it)."""

    def __init__(self, config: TransformerConfig, *, embed: InputEmbedding | None = None) -> None:
        super().__init__()
        self.config = _check_config(config)
        self.embed = _embedding(embed, config.tgt_vocab_size, config)
        # A decoder without cross-attention is an encoder layer under a causal mask.
        self.blocks = Encoder(EncoderLayer(**_layer_kwargs(config)), config.n_decoder_layers)
        self.lm_head = nn.Linear(config.d_model, config.tgt_vocab_size)
        _init_weights(self)
        if config.tie_output_embedding:
            self.lm_head.weight = self.embed.token.embedding.weight

    def new_cache(self) -> DecoderOnlyCache:
        return DecoderOnlyCache(KVCache(grows=True) for _ in self.blocks.layers)

    def forward(self, ids: Tensor, cache: list[KVCache] | None = None, attention_mask: Tensor | None = None) -> Tensor:
        """(B, T) ids -> (B, T, vocab) logits for the next token at every position.

        Padding is masked as keys: ``config.pad_id`` (unless None, as for GPT-2, which has no padding
        token) and where ``attention_mask`` (B, T), as Hugging Face's, holds 0. With a ``cache`` (from
        ``new_cache()``), ``ids`` holds only the tokens not yet seen, and padding stays masked later."""
        check_token_ids("ids", ids, self.config.tgt_vocab_size)
        real, past = _real_tokens(ids, self.config.pad_id, attention_mask), 0  # (B, T)
        if cache is not None:  # it holds `past` tokens, and remembers which were real
            past, real = _remember_padding(cache, real, len(self.blocks.layers))  # real: (B, past + T)
        mask = causal_mask(ids.shape[1], past + ids.shape[1], device=ids.device)
        mask = combine_masks(real[:, None, None, :], mask)  # (B, 1, T, past + T)
        return self.lm_head(self.blocks(self.embed(ids, offset=past), mask, cache))


def _remember_padding(cache: list[KVCache], real: Tensor, n_layers: int) -> tuple[int, Tensor]:
    """``DecoderOnlyTransformer.forward``'s cache (one ``KVCache`` per each of ``n_layers``): how many
    tokens it holds, and which of those and of the new ones (``real``) are real tokens. A
    ``DecoderOnlyCache`` remembers the padding it has read; a plain list of ``KVCache`` cannot, so it
    takes only new tokens without padding."""
    if (not isinstance(cache, list) or len(cache) != n_layers
            or not all(isinstance(layer_cache, KVCache) for layer_cache in cache)):
        raise empty_or_wrong_type(cache)(
            f"cache: expected model.new_cache() (a list of {n_layers} KVCache), "
            f"got {type(cache).__name__}")
    if not isinstance(cache, DecoderOnlyCache):
        if not bool(real.all()):  # it would attend to the padding later
            raise ValueError("cache: a plain list of KVCache cannot mask the padding in ids; "
                             "pass model.new_cache()")
        return len(cache[0]), real
    if cache.real is not None and cache.real.shape[0] != real.shape[0]:
        raise ValueError(f"ids: expected batch size {cache.real.shape[0]} like the cache, "
                         f"got shape {tuple(real.shape)}")
    cache.real = real if cache.real is None else torch.cat([cache.real, real], dim=1)  # (B, past + T)
    return len(cache[0]), cache.real


class EncoderOnlyTransformer(nn.Module):
    """A BERT-style model: ``config.n_encoder_layers`` bidirectional self-attention layers over a
    vocabulary of ``config.src_vocab_size``, predicting a token at every position.

    Optional, for BERT's own weights (``convert.from_bert``): ``embed``, another ``InputEmbedding``
    (with token types and a norm), ``pooler=True``, a ``FirstTokenPooler`` read by ``pool``, and
    ``mlm_transform``, a module applied to the vectors before ``mlm_head`` (BERT's dense, GELU, LayerNorm)."""

    def __init__(self, config: TransformerConfig, *, embed: InputEmbedding | None = None,
                 pooler: bool = False, mlm_transform: nn.Module | None = None) -> None:
        super().__init__()
        self.config = _check_config(config)
        self.embed = _embedding(embed, config.src_vocab_size, config)
        self.encoder = Encoder(EncoderLayer(**_layer_kwargs(config)), config.n_encoder_layers)
        self.mlm_head = nn.Linear(config.d_model, config.src_vocab_size)
        self.pooler = FirstTokenPooler(config.d_model) if check_bool("pooler", pooler) else None
        if mlm_transform is not None:  # registered only when given: the paper's model keeps its parameters
            self.mlm_transform = check_instance("mlm_transform", mlm_transform, nn.Module, "a torch.nn.Module or None")
        _init_weights(self)
        if config.tie_output_embedding:
            self.mlm_head.weight = self.embed.token.embedding.weight

    def encode(self, ids: Tensor, token_type_ids: Tensor | None = None, attention_mask: Tensor | None = None) -> Tensor:
        """(B, T) ids -> (B, T, d_model), the last layer's vectors; every position sees every
        non-padding position (not ``config.pad_id``, not 0 in ``attention_mask`` (B, T) where given).
        ``token_type_ids`` (B, T): segments, for an embedding that has them."""
        check_token_ids("ids", ids, self.config.src_vocab_size)
        real = _real_tokens(ids, self.config.pad_id, attention_mask)[:, None, None, :]  # (B, 1, 1, T)
        return self.encoder(self.embed(ids, token_type_ids=token_type_ids), real)

    def pool(self, hidden: Tensor) -> Tensor:
        """(B, T, d_model) vectors from ``encode`` -> (B, d_model), through the pooler."""
        if self.pooler is None:
            raise ValueError("pooler: this model was built without one (pooler=False); expected pooler=True")
        return self.pooler(hidden)

    def forward(self, ids: Tensor, token_type_ids: Tensor | None = None,
                attention_mask: Tensor | None = None) -> Tensor:
        """(B, T) ids -> (B, T, vocab) logits (through ``mlm_transform`` first, if the model has one)."""
        hidden = self.encode(ids, token_type_ids, attention_mask)
        transform = getattr(self, "mlm_transform", None)
        return self.mlm_head(hidden if transform is None else transform(hidden))


def count_parameters(model: nn.Module) -> int:
    """Trainable parameters; a matrix shared by several layers counts once."""
    check_instance("model", model, nn.Module, "a torch.nn.Module")
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def parameter_count(config: TransformerConfig) -> int:
    """Parameters of the encoder-decoder ``Transformer`` for ``config``, counted without
    allocating them: ``parameter_breakdown``'s parts (a closed form), added up."""
    return sum(parameter_breakdown(config).values())  # parameter_breakdown checks config


COMPONENTS = (
    "embeddings",
    "encoder self-attention",
    "encoder feed-forward",
    "encoder layer norms",
    "decoder self-attention",
    "decoder cross-attention",
    "decoder feed-forward",
    "decoder layer norms",
    "output projection",
)


def _component(name: str) -> str:
    """The part of the model a parameter name (from ``named_parameters``) belongs to."""
    if name.startswith(("src_embed.", "tgt_embed.")):
        return "embeddings"
    if name.startswith("generator."):
        return "output projection"
    side = "encoder" if name.startswith("encoder.") else "decoder"
    if ".self_attn." in name:
        return f"{side} self-attention"
    if ".cross_attn." in name:
        return f"{side} cross-attention"
    if ".feed_forward." in name:
        return f"{side} feed-forward"
    return f"{side} layer norms"  # the residuals' norms and a pre-norm stack's final norm


def parameter_breakdown(config: TransformerConfig) -> dict[str, int]:
    """Parameters of each component of ``Transformer(config)``, in the order of ``COMPONENTS``, in
    closed form (no model built: on the meta device the first build imports PyTorch's compiler, a
    second of a chapter's budget; ``breakdown_on_meta`` builds it, and the tests compare the two).

    A matrix shared by several parts (section 3.4's tied embeddings) is counted once, under
    the first part that holds it (``named_parameters`` yields a shared tensor once), so the
    values add up to ``models.parameter_count``'s total."""
    _check_config(config)
    d, d_ff = config.d_model, config.d_ff
    attention = 4 * (d * d + d)  # W_Q, W_K, W_V, W_O with their biases
    feed_forward = d * d_ff + d_ff + d_ff * d + d  # W_1, b_1, W_2, b_2
    norm = 2 * d  # gain and bias
    final = norm if config.norm_first else 0  # a pre-norm stack ends with its own LayerNorm
    tokens = config.tgt_vocab_size * d + (0 if config.share_source_target_embedding else config.src_vocab_size * d)
    positions = 2 * config.max_len * d if config.positional == "learned" else 0  # one table per side
    n_enc, n_dec = config.n_encoder_layers, config.n_decoder_layers
    return {
        "embeddings": tokens + positions,
        "encoder self-attention": n_enc * attention,
        "encoder feed-forward": n_enc * feed_forward,
        "encoder layer norms": n_enc * 2 * norm + final,
        "decoder self-attention": n_dec * attention,
        "decoder cross-attention": n_dec * attention,
        "decoder feed-forward": n_dec * feed_forward,
        "decoder layer norms": n_dec * 3 * norm + final,
        # the bias always; the matrix unless it is the target embedding's (tied)
        "output projection": config.tgt_vocab_size + (0 if config.tie_output_embedding else d * config.tgt_vocab_size),
    }


def breakdown_on_meta(config: TransformerConfig) -> dict[str, int]:
    """``parameter_breakdown`` computed: the model built on PyTorch's "meta" device (shapes without
    storage), its parameters added up by component."""
    _check_config(config)
    with torch.device("meta"):
        model = Transformer(config)
    counts = dict.fromkeys(COMPONENTS, 0)
    for name, parameter in model.named_parameters():
        counts[_component(name)] += parameter.numel()
    return counts
