"""Real models in the book's classes: GPT-2 and BERT weights, read from Hugging Face's layout.

GPT-2 (Radford et al. 2019) is the decoder-only model of chapter 8 with pre-norm, learned
positions, GELU (its tanh approximation) and the output layer tied to the token embedding. BERT
(Devlin et al. 2019) is the encoder-only model: post-norm, learned positions, GELU, plus a vector
per segment (token type) and a LayerNorm over the embeddings. Neither scales its embeddings by
sqrt(d_model). Their weights fit ``DecoderOnlyTransformer`` and ``EncoderOnlyTransformer`` once
renamed, and, for GPT-2, transposed: its ``Conv1D`` layers store W as (in, out) where
``nn.Linear`` stores (out, in), and one ``c_attn`` matrix holds W_Q, W_K and W_V side by side.

``from_gpt2`` and ``from_bert`` take a state dict (``GPT2LMHeadModel``/``GPT2Model``,
``BertForMaskedLM``/``BertForPreTraining``/``BertModel``, or a checkpoint file's tensors as the hub
ships them) and its config (a dict, as in ``config.json``, or a ``transformers`` config). They check
every name, shape and dtype before building anything, and name what is missing, extra or wrong: a
model comes back whole or not at all. ``to_gpt2`` goes back, so that Hugging Face tools open a model
trained with this library. Nothing here imports ``transformers``.

Neither GPT-2 nor BERT finds padding by a token id (GPT-2 has none: ``<|endoftext|>`` is a token it
reads and writes; BERT attends to ``[PAD]`` unless its ``attention_mask`` says otherwise): the converted
models have ``config.pad_id = None`` and take padding from an ``attention_mask`` (B, T) of 1s and 0s,
as Hugging Face's do. Their special ids are bookkeeping, accepted even outside the vocabulary.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

import torch
from torch import Tensor, nn

from .config import ACTIVATIONS, TransformerConfig
from .models import DecoderOnlyTransformer, EncoderOnlyTransformer, InputEmbedding
from .residual import LayerNorm
from .validation import check_instance

# Config keys that do not change what the model computes (bookkeeping, training, tokenizer ids).
BOOKKEEPING_KEYS = frozenset({
    "_name_or_path", "architectures", "bos_token_id", "pad_token_id", "eos_token_id", "chunk_size_feed_forward",
    "classifier_dropout", "dtype",
    "id2label", "initializer_range", "is_encoder_decoder", "label2id", "model_type", "output_attentions",
    "output_hidden_states", "problem_type", "return_dict", "sep_token_id", "summary_activation",
    "summary_first_dropout", "summary_proj_to_labels", "summary_type", "summary_use_proj", "task_specific_params",
    "tokenizer_class", "torch_dtype", "transformers_version", "use_cache", "gradient_checkpointing",
})
# Hugging Face's activation names -> the library's (config.ACTIVATIONS).
ACTIVATION_NAMES = {"gelu_new": "gelu_tanh", "gelu_pytorch_tanh": "gelu_tanh", "gelu": "gelu", "relu": "relu"}
GPT2_DEFAULTS = {"n_inner": None, "activation_function": "gelu_new", "resid_pdrop": 0.1, "embd_pdrop": 0.1,
                 "attn_pdrop": 0.1, "layer_norm_epsilon": 1e-5, "scale_attn_weights": True,
                 "scale_attn_by_inverse_layer_idx": False, "reorder_and_upcast_attn": False,
                 "add_cross_attention": False, "tie_word_embeddings": True, "n_ctx": None}
BERT_DEFAULTS = {"hidden_act": "gelu", "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1,
                 "type_vocab_size": 2, "layer_norm_eps": 1e-12, "pad_token_id": 0,
                 "position_embedding_type": "absolute", "is_decoder": False, "add_cross_attention": False,
                 "tie_word_embeddings": True}
GPT2_REQUIRED = ("vocab_size", "n_positions", "n_embd", "n_layer", "n_head")
BERT_REQUIRED = ("vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
                 "max_position_embeddings")
# Buffers some checkpoints carry that hold no weights (old GPT-2's causal masks, BERT's position ids).
NOT_WEIGHTS = (".attn.bias", ".attn.masked_bias", "embeddings.position_ids")
BERT_HEAD = "cls.predictions."  # BertForMaskedLM's (and BertForPreTraining's) masked-LM head
# Tensors of a BERT checkpoint that from_bert reads past, and why.
BERT_SKIPPED = {"cls.seq_relationship.": "BERT's next-sentence head (pre-training's second task): the library's "
                                         "models have no sentence-pair classifier; pool() gives its input"}


def _read_config(config: object, model_type: str, required: tuple[str, ...], defaults: dict) -> dict:
    """The config as a dict with every key this module reads; unknown keys and the wrong model refused."""
    if hasattr(config, "to_dict") and not isinstance(config, Mapping):
        config = config.to_dict()  # a transformers config
    check_instance("config", config, Mapping, f"a {model_type} config (a dict or a transformers config)")
    found = config.get("model_type", model_type)
    if found != model_type:
        raise ValueError(f"config: expected a {model_type} config, got model_type {found!r}")
    unknown = sorted(str(key) for key in config if key not in {*required, *defaults, *BOOKKEEPING_KEYS})
    if unknown:
        raise ValueError(f"config: unknown key {unknown[0]!r} (all unknown: {unknown}); a {model_type} config has "
                         f"{sorted({*required, *defaults})} and bookkeeping keys")
    missing = [key for key in required if key not in config]
    if missing:
        raise ValueError(f"config: missing key {missing[0]!r}; a {model_type} config needs {list(required)}")
    return {**defaults, **config}


def _require(config: dict, key: str, allowed: object, why: str) -> None:
    if config[key] != allowed and not (isinstance(allowed, tuple) and config[key] in allowed):
        raise ValueError(f"config: {key}={config[key]!r} is not supported ({why}); expected {allowed!r}")


def _activation(config: dict, key: str) -> str:
    _require(config, key, tuple(ACTIVATION_NAMES), "an activation the library has")
    return ACTIVATION_NAMES[config[key]]


def _check_state_dict(state_dict: object, expected: dict[str, tuple[int, ...]], optional: set[str],
                      prefix: str, model: str) -> dict[str, Tensor]:
    """Every expected tensor, by its name without ``prefix``, after checking names and shapes."""
    check_instance("state_dict", state_dict, Mapping, f"a {model} state dict (a dict of tensors)")
    tensors: dict[str, Tensor] = {}
    for key, value in state_dict.items():
        if not isinstance(key, str) or not isinstance(value, Tensor):
            raise TypeError(f"state_dict[{key!r}]: expected a tensor under a str key, got {type(value).__name__}")
        name = key.removeprefix(prefix)
        if not key.startswith(prefix) and prefix:
            raise ValueError(f"state_dict[{key!r}]: expected every key to begin with {prefix!r} like the others")
        if not name.endswith(NOT_WEIGHTS):
            tensors[name] = value
    missing = [prefix + name for name in expected if name not in tensors and name not in optional]
    extra = [prefix + name for name in tensors if name not in expected]
    if missing or extra:
        problems = []
        if missing:
            problems.append(f"missing {len(missing)} tensor(s): {', '.join(missing[:6])}"
                            + (" ..." if len(missing) > 6 else ""))
        if extra:
            problems.append(f"unexpected {len(extra)} tensor(s): {', '.join(extra[:6])}"
                            + (" ..." if len(extra) > 6 else ""))
        raise ValueError(f"state_dict: does not match the {model} config ({'; '.join(problems)}); "
                         "a truncated file, another model, or a config of another size?")
    for name, value in tensors.items():
        if tuple(value.shape) != expected[name]:
            raise ValueError(f"state_dict[{prefix + name!r}]: expected shape {expected[name]} for this config, "
                             f"got {tuple(value.shape)}")
    return tensors


def _common_dtype(tensors: Mapping[str, Tensor]) -> torch.dtype:
    """The floating-point dtype most of ``tensors`` share; the first tensor that is not of it named."""
    counts = Counter(value.dtype for value in tensors.values() if value.is_floating_point())
    if not counts:
        raise TypeError("state_dict: expected floating-point tensors, got none")
    dtype, count = counts.most_common(1)[0]
    for name, value in tensors.items():
        if value.dtype != dtype:
            kind = "a floating-point tensor of " if not value.is_floating_point() else ""
            raise TypeError(f"state_dict[{name!r}]: expected {kind}dtype {dtype}, as {count} of the "
                            f"{len(tensors)} tensors are, got {value.dtype}")
    return dtype


def _prefix(state_dict: object, head: str, own: str, model: str) -> str:
    """``head`` (e.g. "transformer.") if the keys carry it, "" if they do not; the wrong model refused."""
    check_instance("state_dict", state_dict, Mapping, f"a {model} state dict (a dict of tensors)")
    if head + own in state_dict:
        return head
    if own in state_dict:
        return ""
    keys = [str(key) for key in list(state_dict)[:3]]
    raise ValueError(f"state_dict: not a {model} state dict: no {own!r} or {head + own!r}; its keys begin {keys}")


def gpt2_config(config: object) -> TransformerConfig:
    """The library's ``TransformerConfig`` for a GPT-2 config (a dict or a ``transformers.GPT2Config``)."""
    c = _read_config(config, "gpt2", GPT2_REQUIRED, GPT2_DEFAULTS)
    _require(c, "scale_attn_weights", True, "the library divides every score by sqrt(d_k)")
    _require(c, "scale_attn_by_inverse_layer_idx", False, "the library scales every layer alike")
    _require(c, "add_cross_attention", False, "a decoder-only model has no cross-attention")
    _require(c, "embd_pdrop", c["resid_pdrop"], "the library has one dropout for embeddings and residuals")
    _require(c, "n_ctx", (None, c["n_positions"]), "n_ctx is the old name of n_positions")
    vocab_size = c["vocab_size"]
    # GPT-2 has no padding token and masks no id: <|endoftext|> is a token it reads; padding is an attention mask.
    return TransformerConfig(
        src_vocab_size=vocab_size, tgt_vocab_size=vocab_size, d_model=c["n_embd"], n_heads=c["n_head"],
        n_encoder_layers=1, n_decoder_layers=c["n_layer"], d_ff=c["n_inner"] or 4 * c["n_embd"],
        dropout=c["resid_pdrop"], attention_dropout=c["attn_pdrop"], activation=_activation(c, "activation_function"),
        norm_first=True, positional="learned", max_len=c["n_positions"],
        tie_output_embedding=c["tie_word_embeddings"], pad_id=None, layer_norm_eps=c["layer_norm_epsilon"],
    )


def _gpt2_shapes(config: TransformerConfig) -> dict[str, tuple[int, ...]]:
    d, ff = config.d_model, config.d_ff
    shapes = {"wte.weight": (config.tgt_vocab_size, d), "wpe.weight": (config.max_len, d)}
    for i in range(config.n_decoder_layers):  # Conv1D weights are (in, out)
        shapes |= {f"h.{i}.ln_1.weight": (d,), f"h.{i}.ln_1.bias": (d,),
                   f"h.{i}.attn.c_attn.weight": (d, 3 * d), f"h.{i}.attn.c_attn.bias": (3 * d,),
                   f"h.{i}.attn.c_proj.weight": (d, d), f"h.{i}.attn.c_proj.bias": (d,),
                   f"h.{i}.ln_2.weight": (d,), f"h.{i}.ln_2.bias": (d,),
                   f"h.{i}.mlp.c_fc.weight": (d, ff), f"h.{i}.mlp.c_fc.bias": (ff,),
                   f"h.{i}.mlp.c_proj.weight": (ff, d), f"h.{i}.mlp.c_proj.bias": (d,)}
    return shapes | {"ln_f.weight": (d,), "ln_f.bias": (d,)}


def _gpt2_to_library(gpt: dict[str, Tensor], config: TransformerConfig) -> dict[str, Tensor]:
    """GPT-2's tensors under the library's names; Conv1D's (in, out) matrices transposed to nn.Linear's."""
    ours = {"embed.token.embedding.weight": gpt["wte.weight"], "embed.position.embedding.weight": gpt["wpe.weight"],
            "blocks.final_norm.weight": gpt["ln_f.weight"], "blocks.final_norm.bias": gpt["ln_f.bias"],
            "lm_head.weight": gpt.get("lm_head.weight", gpt["wte.weight"]),
            "lm_head.bias": gpt["wte.weight"].new_zeros(config.tgt_vocab_size)}  # GPT-2's head has no bias
    for i in range(config.n_decoder_layers):
        h, block = f"h.{i}.", f"blocks.layers.{i}."
        # c_attn holds [W_Q | W_K | W_V] as (d, 3d): split the columns, then transpose each
        for name, w, b in zip(("w_q", "w_k", "w_v"), gpt[h + "attn.c_attn.weight"].chunk(3, dim=1),
                              gpt[h + "attn.c_attn.bias"].chunk(3), strict=True):
            ours[block + f"self_attn.{name}.weight"], ours[block + f"self_attn.{name}.bias"] = w.T, b
        pairs = {"self_attn.w_o": "attn.c_proj", "feed_forward.linear1": "mlp.c_fc",
                 "feed_forward.linear2": "mlp.c_proj"}
        for mine, theirs in pairs.items():
            ours[block + mine + ".weight"] = gpt[h + theirs + ".weight"].T
            ours[block + mine + ".bias"] = gpt[h + theirs + ".bias"]
        for mine, theirs in (("attn_residual.norm", "ln_1"), ("ff_residual.norm", "ln_2")):
            for part in ("weight", "bias"):
                ours[block + f"{mine}.{part}"] = gpt[h + f"{theirs}.{part}"]
    return ours


def from_gpt2(state_dict: Mapping[str, Tensor], config: object) -> DecoderOnlyTransformer:
    """A ``DecoderOnlyTransformer`` computing what GPT-2 computes, from a ``GPT2LMHeadModel`` (or
    ``GPT2Model``) state dict and its config; in eval mode, in the state dict's dtype.

    Its ``config.pad_id`` is None: like GPT-2, it reads every id, ``<|endoftext|>`` included, as a token,
    and takes padding from ``model(ids, attention_mask=...)``. To stop sampling where GPT-2 stops, pass
    its ``eos_token_id`` to ``sampling.sample_continuation`` as ``eos_id``."""
    ours = gpt2_config(config)
    prefix = _prefix(state_dict, "transformer.", "wte.weight", "GPT-2")
    shapes = _gpt2_shapes(ours)
    if prefix:  # a GPT2LMHeadModel: its head is the tied embedding, or its own matrix
        shapes["lm_head.weight"] = (ours.tgt_vocab_size, ours.d_model)
        head = state_dict.get("lm_head.weight")
        state_dict = {**{k: v for k, v in state_dict.items() if k != "lm_head.weight"},
                      **({} if head is None else {prefix + "lm_head.weight": head})}
    optional = {"lm_head.weight"} if ours.tie_output_embedding else set()
    gpt = _check_state_dict(state_dict, shapes, optional, prefix, "GPT-2")
    dtype = _common_dtype({("" if name == "lm_head.weight" else prefix) + name: value for name, value in gpt.items()})
    if ours.tie_output_embedding and not torch.equal(gpt.get("lm_head.weight", gpt["wte.weight"]), gpt["wte.weight"]):
        raise ValueError("state_dict['lm_head.weight']: expected the token embedding wte (tie_word_embeddings is "
                         "true), got another matrix; set tie_word_embeddings=False in the config")
    if not ours.tie_output_embedding and "lm_head.weight" not in gpt:
        raise ValueError("state_dict: missing 'lm_head.weight' (tie_word_embeddings is false, so the head is its own)")
    with torch.device("meta"):  # shapes only: every value comes from the state dict, in one strict load
        model = DecoderOnlyTransformer(ours, embed=InputEmbedding(ours.tgt_vocab_size, ours, scale=False))
    model = model.to(dtype=dtype).to_empty(device=gpt["wte.weight"].device)
    if ours.tie_output_embedding:
        model.lm_head.weight = model.embed.token.embedding.weight  # to_empty unties what meta tied
    model.load_state_dict(_gpt2_to_library(gpt, ours), strict=True)
    return model.eval()


def to_gpt2(model: DecoderOnlyTransformer) -> tuple[dict[str, Tensor], dict[str, object]]:
    """``model``'s weights in ``GPT2LMHeadModel``'s layout and the ``GPT2Config`` arguments that fit
    them: ``GPT2LMHeadModel(GPT2Config(**config)).load_state_dict(state_dict)`` opens it.

    Only a model that GPT-2's code can compute converts: pre-norm, learned positions, embeddings not
    scaled by sqrt(d_model), a GELU or ReLU, and no bias in the output layer (all zeros)."""
    check_instance("model", model, DecoderOnlyTransformer, "a DecoderOnlyTransformer")
    c = model.config
    problems = [why for wrong, why in (
        (not c.norm_first, "post-norm (GPT-2 is pre-norm: norm_first=True)"),
        (c.positional != "learned", f"{c.positional} positions (GPT-2 learns them: positional='learned')"),
        (model.embed.token.scale != 1.0, "embeddings scaled by sqrt(d_model) (GPT-2 does not: scale=False)"),
        (model.embed.token_type is not None or model.embed.norm is not None, "a token-type embedding or norm"),
        (bool(model.lm_head.bias.detach().any()), "a non-zero output bias (GPT-2's lm_head has none)"),
    ) if wrong]
    if problems:
        raise ValueError(f"model: GPT-2 cannot compute this model: {'; '.join(problems)}")
    ours = {name: tensor.detach() for name, tensor in model.state_dict().items()}
    gpt = {"wte.weight": ours["embed.token.embedding.weight"], "wpe.weight": ours["embed.position.embedding.weight"],
           "ln_f.weight": ours["blocks.final_norm.weight"], "ln_f.bias": ours["blocks.final_norm.bias"]}
    for i in range(c.n_decoder_layers):
        h, block = f"h.{i}.", f"blocks.layers.{i}."
        attn = [ours[block + f"self_attn.{n}.weight"].T for n in ("w_q", "w_k", "w_v")]
        gpt[h + "attn.c_attn.weight"] = torch.cat(attn, dim=1)  # (d, 3d), Conv1D's (in, out)
        gpt[h + "attn.c_attn.bias"] = torch.cat([ours[block + f"self_attn.{n}.bias"] for n in ("w_q", "w_k", "w_v")])
        for theirs, mine in (("attn.c_proj", "self_attn.w_o"), ("mlp.c_fc", "feed_forward.linear1"),
                             ("mlp.c_proj", "feed_forward.linear2")):
            gpt[h + theirs + ".weight"] = ours[block + mine + ".weight"].T
            gpt[h + theirs + ".bias"] = ours[block + mine + ".bias"]
        for theirs, mine in (("ln_1", "attn_residual.norm"), ("ln_2", "ff_residual.norm")):
            for part in ("weight", "bias"):
                gpt[h + f"{theirs}.{part}"] = ours[block + f"{mine}.{part}"]
    state_dict = {"transformer." + name: tensor.contiguous().clone() for name, tensor in gpt.items()}
    state_dict["lm_head.weight"] = ours["lm_head.weight"].clone()
    activation = {"gelu_tanh": "gelu_new", "gelu": "gelu", "relu": "relu"}[c.activation]
    config = {"vocab_size": c.tgt_vocab_size, "n_positions": c.max_len, "n_embd": c.d_model,
              "n_layer": c.n_decoder_layers, "n_head": c.n_heads, "n_inner": c.d_ff,
              "activation_function": activation, "resid_pdrop": c.dropout, "embd_pdrop": c.dropout,
              "attn_pdrop": c.attention_dropout, "layer_norm_epsilon": c.layer_norm_eps,
              "tie_word_embeddings": c.tie_output_embedding}
    if c.pad_id is not None:  # the library's padding id: GPT-2's usual stand-in, its <|endoftext|>
        config |= {"eos_token_id": c.pad_id, "bos_token_id": c.pad_id}
    return state_dict, config


def bert_config(config: object) -> tuple[TransformerConfig, int]:
    """The library's ``TransformerConfig`` for a BERT config, and its number of token types."""
    c = _read_config(config, "bert", BERT_REQUIRED, BERT_DEFAULTS)
    _require(c, "position_embedding_type", "absolute", "the library's learned positions are absolute")
    _require(c, "is_decoder", False, "BERT as an encoder")
    _require(c, "add_cross_attention", False, "an encoder-only model has no cross-attention")
    vocab_size = c["vocab_size"]
    return TransformerConfig(
        src_vocab_size=vocab_size, tgt_vocab_size=vocab_size, d_model=c["hidden_size"],
        n_heads=c["num_attention_heads"], n_encoder_layers=c["num_hidden_layers"], n_decoder_layers=1,
        d_ff=c["intermediate_size"], dropout=c["hidden_dropout_prob"],
        attention_dropout=c["attention_probs_dropout_prob"], activation=_activation(c, "hidden_act"),
        norm_first=False, positional="learned", max_len=c["max_position_embeddings"],
        tie_output_embedding=c["tie_word_embeddings"], pad_id=None, layer_norm_eps=c["layer_norm_eps"],
    ), c["type_vocab_size"]


def _bert_names(config: TransformerConfig, token_types: int) -> dict[str, tuple[str, tuple[int, ...]]]:
    """BERT's tensor name -> (the library's name, the shape); nn.Linear on both sides, nothing transposed."""
    d, ff = config.d_model, config.d_ff
    names = {"embeddings.word_embeddings.weight": ("embed.token.embedding.weight", (config.src_vocab_size, d)),
             "embeddings.position_embeddings.weight": ("embed.position.embedding.weight", (config.max_len, d)),
             "embeddings.token_type_embeddings.weight": ("embed.token_type.weight", (token_types, d)),
             "embeddings.LayerNorm.weight": ("embed.norm.weight", (d,)),
             "embeddings.LayerNorm.bias": ("embed.norm.bias", (d,))}
    for i in range(config.n_encoder_layers):
        bert, ours = f"encoder.layer.{i}.", f"encoder.layers.{i}."
        for theirs, mine, shape in (
            ("attention.self.query", "self_attn.w_q", (d, d)), ("attention.self.key", "self_attn.w_k", (d, d)),
            ("attention.self.value", "self_attn.w_v", (d, d)), ("attention.output.dense", "self_attn.w_o", (d, d)),
            ("attention.output.LayerNorm", "attn_residual.norm", (d,)),
            ("intermediate.dense", "feed_forward.linear1", (ff, d)), ("output.dense", "feed_forward.linear2", (d, ff)),
            ("output.LayerNorm", "ff_residual.norm", (d,)),
        ):
            names[bert + theirs + ".weight"] = (ours + mine + ".weight", shape)
            names[bert + theirs + ".bias"] = (ours + mine + ".bias", shape[:1])
    names["pooler.dense.weight"] = ("pooler.dense.weight", (d, d))
    names["pooler.dense.bias"] = ("pooler.dense.bias", (d,))
    return names


def _bert_head_shapes(config: TransformerConfig) -> dict[str, tuple[int, ...]]:
    """The masked-LM head's tensors (BertOnlyMLMHead's ``predictions``): transform, then the decoder."""
    d, vocab = config.d_model, config.src_vocab_size
    return {"transform.dense.weight": (d, d), "transform.dense.bias": (d,), "transform.LayerNorm.weight": (d,),
            "transform.LayerNorm.bias": (d,), "bias": (vocab,), "decoder.weight": (vocab, d), "decoder.bias": (vocab,)}


def _split_bert(state_dict: object) -> tuple[dict[str, Tensor], dict[str, Tensor]]:
    """(the encoder's tensors, the masked-LM head's): BERT_SKIPPED left out, and old checkpoints' LayerNorm
    ``gamma``/``beta`` (as the hub still ships bert-base-uncased) under today's ``weight``/``bias``."""
    check_instance("state_dict", state_dict, Mapping, "a BERT state dict (a dict of tensors)")
    body, head = {}, {}
    for key, value in state_dict.items():
        if isinstance(key, str):
            key = key.replace("LayerNorm.gamma", "LayerNorm.weight").replace("LayerNorm.beta", "LayerNorm.bias")
            if key.startswith(tuple(BERT_SKIPPED)):
                continue
        (head if isinstance(key, str) and key.startswith(BERT_HEAD) else body)[key] = value
    return body, head


def from_bert(state_dict: Mapping[str, Tensor], config: object) -> EncoderOnlyTransformer:
    """An ``EncoderOnlyTransformer`` computing what BERT computes, from a ``BertForMaskedLM``,
    ``BertForPreTraining`` or ``BertModel`` state dict (or a hub checkpoint's tensors) and its config; in
    eval mode, in the state dict's dtype. ``encode(ids, token_type_ids, attention_mask)`` gives BERT's
    last hidden state, ``pool`` its pooler output (when the state dict has a pooler), and the model's
    logits ``BertForMaskedLM``'s, when the state dict has its head (``cls.predictions.``: a dense layer,
    GELU and LayerNorm, then the decoder tied to the token embedding, with a bias). ``BERT_SKIPPED``
    says what is read past (the next-sentence head).

    Without that head (a ``BertModel``), ``mlm_head`` is the token embedding with a zero bias, without
    BERT's transform, so its logits are not BERT's."""
    ours, token_types = bert_config(config)
    body, head = _split_bert(state_dict)
    prefix = _prefix(body, "bert.", "embeddings.word_embeddings.weight", "BERT")
    names = _bert_names(ours, token_types)
    has_pooler = prefix + "pooler.dense.weight" in body or prefix + "pooler.dense.bias" in body
    if not has_pooler:
        del names["pooler.dense.weight"], names["pooler.dense.bias"]
    bert = _check_state_dict(body, {k: shape for k, (_, shape) in names.items()}, set(), prefix, "BERT")
    # the decoder's weight is the token embedding unless untied; its bias is "bias" (tied: one tensor, two names)
    optional = {"decoder.bias"} | ({"decoder.weight"} if ours.tie_output_embedding else set())
    mlm = _check_state_dict(head, _bert_head_shapes(ours), optional, BERT_HEAD, "BERT masked-LM head") if head else {}
    dtype = _common_dtype({prefix + k: v for k, v in bert.items()} | {BERT_HEAD + k: v for k, v in mlm.items()})
    if mlm:
        _check_bert_head(mlm, bert["embeddings.word_embeddings.weight"], ours.tie_output_embedding)
    d = ours.d_model
    with torch.device("meta"):
        embed = InputEmbedding(ours.src_vocab_size, ours, scale=False, token_types=token_types, norm=True)
        transform = nn.Sequential(nn.Linear(d, d), ACTIVATIONS[ours.activation](),
                                  LayerNorm(d, ours.layer_norm_eps)) if mlm else None
        model = EncoderOnlyTransformer(ours, embed=embed, pooler=has_pooler, mlm_transform=transform)
    model = model.to(dtype=dtype).to_empty(device=bert["embeddings.word_embeddings.weight"].device)
    if ours.tie_output_embedding:
        model.mlm_head.weight = model.embed.token.embedding.weight  # to_empty unties what meta tied
    weights = {mine: bert[theirs] for theirs, (mine, _) in names.items()}
    weights["mlm_head.weight"] = mlm.get("decoder.weight", weights["embed.token.embedding.weight"])
    zero = weights["embed.norm.bias"].new_zeros(ours.src_vocab_size)
    weights["mlm_head.bias"] = mlm.get("decoder.bias", mlm.get("bias", zero))  # the one the decoder adds
    for mine, theirs in (("0", "dense"), ("2", "LayerNorm")) if mlm else ():
        for part in ("weight", "bias"):
            weights[f"mlm_transform.{mine}.{part}"] = mlm[f"transform.{theirs}.{part}"]
    model.load_state_dict(weights, strict=True)
    return model.eval()


def _check_bert_head(mlm: dict[str, Tensor], embedding: Tensor, tied: bool) -> None:
    """If tied, the head's bias the same under its two names, and its decoder the token embedding."""
    if tied and "decoder.bias" in mlm and not torch.equal(mlm["bias"], mlm["decoder.bias"]):
        raise ValueError(f"state_dict[{BERT_HEAD + 'decoder.bias'!r}]: expected {BERT_HEAD}bias (BERT ties the "
                         "two), got another vector")
    if tied and "decoder.weight" in mlm and not torch.equal(mlm["decoder.weight"], embedding):
        raise ValueError(f"state_dict[{BERT_HEAD + 'decoder.weight'!r}]: expected the token embedding "
                         "(tie_word_embeddings is true), got another matrix; set tie_word_embeddings=False")
