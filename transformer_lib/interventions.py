"""Interventions on the encoder-decoder Transformer: switch heads off, patch one run's values into
another, and read a residual stream through the output layer (the logit lens).

Every intervention is a hook on the model's own modules, at the points ``capture`` reads, under the
names of ``capture.capture_model_activations`` (``decoder.1.cross_attn.heads``): the model's forward
pass runs as it is, and a hook replaces what one module returns (or, for ``...heads`` and a post-norm
``...sum``, what it reads). There is no second forward path to drift from the first; with no
intervention the hooks change nothing, bit for bit (tests/test_interventions.py).

Switching a ``Head`` off replaces its slice of the concatenated heads, W_O's input, by zeros or by its
mean over a reference set (``head_means``); a ``Patch`` puts another run's value of one block back at
some positions; ``logit_lens`` reads a decoder stream through the final norm and the generator;
``head_ablation_drops`` switches each head off in turn.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import torch
from torch import Tensor, nn

from .batching import collate, encode_pairs
from .decoding import check_translation_model
from .models import Transformer
from .multi_head_attention import MultiHeadAttention
from .tokenization import Vocab
from .validation import check_bool, check_choice, check_index, check_instance, check_int, check_iterable, check_pairs
from .validation_tensors import check_finite, check_token_ids, check_vectors

HEAD_KINDS = ("encoder_self", "decoder_self", "cross")
_ATTENTION = {"encoder_self": ("encoder", "self_attn"), "decoder_self": ("decoder", "self_attn"),
              "cross": ("decoder", "cross_attn")}


@dataclass(frozen=True)
class Head:
    """One attention head: ``kind`` one of ``HEAD_KINDS``, ``layer`` and ``head`` counted from 0."""

    kind: str
    layer: int
    head: int

    @property
    def attention(self) -> str:
        """The name of its attention module, ``encoder.0.self_attn``: the key of ``head_means``."""
        stack, name = _ATTENTION.get(self.kind, ("?", "?"))
        return f"{stack}.{self.layer}.{name}"


@dataclass(frozen=True)
class Patch:
    """Another run's value of ``block`` (a name of ``patch_points``), shaped as this run's (batch first,
    positions second): it replaces this run's at ``positions`` (None: every position)."""

    block: str
    values: Tensor
    positions: Sequence[int] | None = None


@dataclass
class InterventionRun:
    logits: Tensor  # (B, T, V)
    blocks: dict[str, Tensor]  # every patch point, when recorded (else empty)


@dataclass
class HeadAblationDrops:
    """``head_ablation_drops``'s result: ``drops[i, n]`` is how much sentence n's log-likelihood (natural
    log, summed over its target tokens and <eos>) falls with ``heads[i]`` switched off; ``baseline[n]``
    the log-likelihood with every head on. Sentences in the order of the pairs given."""

    heads: list[Head]
    drops: Tensor  # (H, N), float64
    baseline: Tensor  # (N,), float64
    ablation: str

    def mean_drops(self) -> dict[Head, float]:
        return {head: float(row.mean()) for head, row in zip(self.heads, self.drops, strict=True)}


def _check_model(model: object) -> Transformer:
    return check_instance("model", model, Transformer, "a transformer_lib.models.Transformer")  # type: ignore


def _layers(model: Transformer) -> dict[str, int]:
    return {"encoder_self": model.config.n_encoder_layers, "decoder_self": model.config.n_decoder_layers,
            "cross": model.config.n_decoder_layers}


def heads_of(model: Transformer) -> list[Head]:
    """Every head of ``model``: encoder self-attention, decoder self-attention, cross-attention, each
    layer by layer and head by head."""
    layers = _layers(_check_model(model))
    return [Head(kind, layer, head) for kind in HEAD_KINDS for layer in range(layers[kind])
            for head in range(model.config.n_heads)]


def _attention_modules(model: Transformer) -> dict[str, MultiHeadAttention]:
    """``Head.attention`` name -> the module, for every attention of ``model``."""
    return {f"{stack}.{index}.{name}": getattr(layer, name) for stack, name in _ATTENTION.values()
            for index, layer in enumerate(getattr(model, stack).layers)}


def patch_points(model: Transformer) -> dict[str, tuple[nn.Module, bool]]:
    """Every block an intervention can replace, in the order the forward pass computes them: name ->
    (module, whether the block is what the module reads rather than what it returns). The names are
    ``capture.capture_model_activations``'s, less the values computed inside attention's softmax
    (``scores``, ``masked``, ``weights``: patch ``q`` and ``k`` instead) and ``generator.probabilities``.
    A block's value is the module's own tensor, batch first: (B, T, width); ``q``, ``k``, ``v`` and
    ``heads`` keep the heads side by side (capture splits them, (T, h, d_k)), ``q`` and ``k`` before
    a rotary model rotates them."""
    _check_model(model)
    points: dict[str, tuple[nn.Module, bool]] = {}
    for side, embed in (("src", model.src_embed), ("tgt", model.tgt_embed)):
        points[f"{side}.token"] = (embed.token.embedding, False)
        points[f"{side}.input"] = (embed, False)
    for stack in ("encoder", "decoder"):
        for index, layer in enumerate(getattr(model, stack).layers):
            for name, module in layer.named_children():
                full = f"{stack}.{index}.{name}"
                if isinstance(module, MultiHeadAttention):
                    points.update({f"{full}.{w}": (getattr(module, f"w_{w}"), False) for w in "qkv"})
                    points[f"{full}.heads"] = (module.w_o, True)
                    points[f"{full}.output"] = (module.w_o, False)
                elif name == "feed_forward":
                    points[f"{full}.hidden"] = (module.activation, False)
                    points[f"{full}.output"] = (module, False)
                else:  # a residual: post-norm, the norm reads the sum; pre-norm, the residual returns it
                    points[f"{full}.sum"] = (module, False) if module.norm_first else (module.norm, True)
                    points[f"{full}.norm"] = (module.norm, False)
        final = getattr(model, stack).final_norm
        if final is not None:
            points[f"{stack}.final_norm"] = (final, False)
    points["generator.logits"] = (model.generator, False)
    return points


def residual_streams(model: Transformer) -> list[str]:
    """The decoder's residual stream, block by block: the embedded target, then after each sub-layer
    of each layer (``...norm`` post-norm, where the stream is normalised; ``...sum`` pre-norm). The last
    is what the final norm (pre-norm) and the generator read: ``logit_lens`` of it is the logits."""
    which = "sum" if _check_model(model).config.norm_first else "norm"
    return ["tgt.input"] + [f"decoder.{index}.{name}.{which}" for index in range(len(model.decoder.layers))
                            for name in ("self_residual", "cross_residual", "ff_residual")]


def _check_ids(model: Transformer, src_ids: object, tgt_ids: object) -> tuple[Tensor, Tensor]:
    src = check_token_ids("src_ids", src_ids, model.config.src_vocab_size)
    tgt = check_token_ids("tgt_ids", tgt_ids, model.config.tgt_vocab_size)
    if tgt.shape[0] != src.shape[0]:
        raise ValueError(f"tgt_ids: expected batch size {src.shape[0]} like src_ids, got shape {tuple(tgt.shape)}")
    return src, tgt


def _check_heads(model: Transformer, ablate: object) -> list[Head]:
    heads = list(check_iterable("ablate", ablate, "a list of Head"))
    layers = _layers(model)
    for i, head in enumerate(heads):
        check_instance(f"ablate[{i}]", head, Head, "a Head")
        check_choice(f"ablate[{i}].kind", head.kind, HEAD_KINDS)
        check_index(f"ablate[{i}].layer", head.layer, layers[head.kind], "a layer (int)", f" for {head.kind}")
        check_index(f"ablate[{i}].head", head.head, model.config.n_heads, "a head (int)")
        if head in heads[:i]:
            raise ValueError(f"ablate[{i}]: {head} is listed twice; expected each head once")
    return heads


def _check_means(model: Transformer, means: object, heads: list[Head]) -> dict[str, Tensor] | None:
    if means is None:
        return None
    if not isinstance(means, dict):
        raise TypeError(f"means: expected a dict from head_means (attention name -> (d_model,) tensor), "
                        f"got {type(means).__name__}")
    names, d_model = _attention_modules(model), model.config.d_model
    for key, mean in means.items():
        if key not in names:
            raise ValueError(f"means: expected keys among the model's attention modules, as head_means "
                             f"gives them (e.g. 'encoder.0.self_attn'), got {key!r:.60}")
        check_vectors(f"means[{key!r}]", mean, d_model, model.generator.weight.dtype)
        if mean.dim() != 1:
            raise ValueError(f"means[{key!r}]: expected shape ({d_model},), got {tuple(mean.shape)}")
        check_finite(f"means[{key!r}]", mean)
    for head in heads:
        if head.attention not in means:
            raise ValueError(f"means: no mean for {head.attention}, where {head} is switched off")
    return means


def _check_patches(points: dict, patches: object) -> list[Patch]:
    patches = list(check_iterable("patches", patches, "a list of Patch"))
    for i, patch in enumerate(patches):
        check_instance(f"patches[{i}]", patch, Patch, "a Patch")
        if not isinstance(patch.block, str):
            raise TypeError(f"patches[{i}].block: expected a block name (str), got {type(patch.block).__name__}")
        if patch.block not in points:
            raise ValueError(f"patches[{i}].block: expected a name of patch_points(model) "
                             f"(e.g. 'decoder.0.cross_attn.output'), got {patch.block!r:.60}")
        if any(other.block == patch.block for other in patches[:i]):
            raise ValueError(f"patches[{i}]: a second patch of {patch.block}; give all its positions in one")
        if not isinstance(patch.values, Tensor):
            raise TypeError(f"patches[{i}].values: expected a torch.Tensor, got {type(patch.values).__name__}")
        if patch.positions is not None:  # each position is checked against the block's length when patched
            check_iterable(f"patches[{i}].positions", patch.positions, "a list of positions (int) or None")
    return patches


def _patch(value: Tensor, patch: Patch, label: str) -> Tensor:
    """``value`` (B, T, ...) with ``patch.values`` at ``patch.positions`` (a copy: the model's tensor stays)."""
    if patch.values.shape != value.shape or patch.values.dtype != value.dtype:
        raise ValueError(f"{label}.values: expected shape {tuple(value.shape)} and dtype {value.dtype} like this "
                         f"run's {patch.block}, got {tuple(patch.values.shape)} and {patch.values.dtype}")
    if patch.positions is None:
        return patch.values.to(value.device).clone()
    positions = [check_index(f"{label}.positions[{i}]", p, value.shape[1], "a position (int)")
                 for i, p in enumerate(patch.positions)]
    value = value.clone()
    value[:, positions] = patch.values[:, positions].to(value.device)
    return value


def _ablate(x: Tensor, attention: MultiHeadAttention, heads: list[Head], mean: Tensor | None) -> Tensor:
    """The concatenated heads (B, T, d_model), W_O's input, with ``heads``' slices set to 0 or their mean."""
    x = x.clone()
    for head in heads:
        columns = slice(head.head * attention.d_k, (head.head + 1) * attention.d_k)
        x[..., columns] = 0.0 if mean is None else mean[columns]
    return x


@contextmanager
def interventions(model: Transformer, ablate: Sequence[Head] = (), means: dict[str, Tensor] | None = None,
                  patches: Sequence[Patch] = (), record: bool = False) -> Iterator[dict[str, Tensor]]:
    """While active, every forward pass of ``model`` runs with the heads ``ablate`` switched off (set to
    0, or to ``means[head.attention]``'s slice when ``means``, from ``head_means``, is given) and the
    ``patches`` applied; patches come first, then the ablation (a patched ``...heads`` is ablated too).
    Yields a dict that ``record=True`` fills with every block of ``patch_points`` as the run used it.
    Decoding with a cache runs under it too (for ablation; a patch is shaped for one whole run)."""
    _check_model(model)
    heads = _check_heads(model, ablate)
    means = _check_means(model, means, heads)
    points = patch_points(model)
    patches = _check_patches(points, patches)
    recorded = set(points) if check_bool("record", record) else set()
    with _hooked(model, points, heads, means, patches, recorded) as blocks:
        yield blocks


@contextmanager
def _hooked(model: Transformer, points: dict, heads: list[Head], means: dict[str, Tensor] | None,
            patches: list[Patch], recorded: set[str]) -> Iterator[dict[str, Tensor]]:
    """``interventions``, its arguments checked; ``recorded``: the names of the blocks to keep."""
    by_block = {patch.block: (patch, f"patches[{i}]") for i, patch in enumerate(patches)}
    ablated: dict[str, list[Head]] = {}
    for head in heads:
        ablated.setdefault(f"{head.attention}.heads", []).append(head)
    blocks: dict[str, Tensor] = {}
    modules = _attention_modules(model)

    def change(name: str, value: Tensor) -> Tensor | None:
        new = _patch(value, *by_block[name]) if name in by_block else None
        if name in ablated:
            attention = name.removesuffix(".heads")
            mean = None if means is None else means[attention]
            new = _ablate(value if new is None else new, modules[attention], ablated[name], mean)
        if name in recorded:
            blocks[name] = (value if new is None else new).detach()
        return new

    def output_hook(name: str) -> Callable[..., Tensor | None]:
        return lambda _module, _inputs, output: change(name, output)

    def input_hook(name: str) -> Callable[..., tuple | None]:
        def hook(_module: nn.Module, inputs: tuple) -> tuple | None:
            new = change(name, inputs[0])
            return None if new is None else (new, *inputs[1:])
        return hook

    hooks = []
    try:
        for name, (module, reads) in points.items():
            if name in recorded or name in by_block or name in ablated:
                hooks.append(module.register_forward_pre_hook(input_hook(name)) if reads
                             else module.register_forward_hook(output_hook(name)))
        yield blocks
    finally:
        for hook in hooks:
            hook.remove()


@contextmanager
def _evaluating(model: nn.Module) -> Iterator[None]:
    was_training, _ = model.training, model.eval()
    try:
        with torch.no_grad():
            yield
    finally:
        model.train(was_training)


def intervene(model: Transformer, src_ids: Tensor, tgt_ids: Tensor, ablate: Sequence[Head] = (),
              means: dict[str, Tensor] | None = None, patches: Sequence[Patch] = (),
              record: bool = False) -> InterventionRun:
    """One forward pass of ``model`` in evaluation mode on ``src_ids`` (B, S) and decoder inputs
    ``tgt_ids`` (B, T) under ``interventions`` (its arguments): the logits (B, T, V) and, with
    ``record``, every block's value."""
    src_ids, tgt_ids = _check_ids(_check_model(model), src_ids, tgt_ids)
    with _evaluating(model), interventions(model, ablate, means, patches, record) as blocks:
        logits = model(src_ids, tgt_ids)
    return InterventionRun(logits, blocks)


def head_means(model: Transformer, src_ids: Tensor, tgt_ids: Tensor) -> dict[str, Tensor]:
    """Each attention's concatenated heads (W_O's input), averaged over the real positions of a reference
    batch: name (``Head.attention``) -> (d_model,); slice ``head * d_k : (head + 1) * d_k`` is that head's."""
    sums, counts = _head_sums(_check_model(model), *_check_ids(model, src_ids, tgt_ids))
    return {name: total / counts[name.split(".")[0]] for name, total in sums.items()}


def _head_sums(model: Transformer, src_ids: Tensor, tgt_ids: Tensor) -> tuple[dict[str, Tensor], dict[str, int]]:
    """``head_means``' sums over the real query positions, and how many there are per stack."""
    wanted = {f"{name}.heads" for name in _attention_modules(model)}
    with _evaluating(model), _hooked(model, patch_points(model), [], None, [], wanted) as blocks:
        model(src_ids, tgt_ids)
    real = {"encoder": src_ids != model.config.pad_id, "decoder": tgt_ids != model.config.pad_id}  # the queries
    sums = {name.removesuffix(".heads"): x[real[name.split(".")[0]]].sum(dim=0) for name, x in blocks.items()}
    return sums, {stack: int(mask.sum()) for stack, mask in real.items()}


def logit_lens(model: Transformer, blocks: dict[str, Tensor], block: str) -> Tensor:
    """The logits (B, T, V) that ``block``, one of ``residual_streams(model)``, would give if the
    decoder stopped there: its value in ``blocks`` (a recorded ``intervene`` run) through the decoder's
    final norm (pre-norm; post-norm has none) and the generator. Of the last stream, the model's logits."""
    _check_model(model)
    if not isinstance(blocks, dict):
        raise TypeError(f"blocks: expected the dict of a recorded run (intervene(..., record=True).blocks), "
                        f"got {type(blocks).__name__}")
    check_choice("block", block, residual_streams(model))
    if block not in blocks:
        raise ValueError(f"blocks: no {block!r}; expected a recorded run (intervene(..., record=True).blocks)")
    x = check_vectors(f"blocks[{block!r}]", blocks[block], model.config.d_model, model.generator.weight.dtype)
    with _evaluating(model):
        final = model.decoder.final_norm
        return model.generator(x if final is None else final(x))


def head_ablation_drops(model: Transformer, pairs: Sequence[tuple[str, str]], src_vocab: Vocab, tgt_vocab: Vocab,
                        ablation: str = "mean", batch_size: int = 512) -> HeadAblationDrops:
    """Each head of ``model`` switched off in turn over the sentence ``pairs``: the drop in each
    sentence's teacher-forced log-likelihood (``HeadAblationDrops``), in batches of ``batch_size``
    pairs of similar lengths (little padding); the encoder runs once per batch for the decoder's heads.

    ``ablation="mean"`` (the default) puts in each head's place its mean output over ``pairs``
    (``head_means``); ``"zero"`` puts zeros. Mean ablation is the default because it removes what
    the head says about *this* sentence and nothing else: a head's output has a mean that the layers
    after it were trained on (a LayerNorm and a bias have absorbed it), so zeros also move the
    stream somewhere it never was, and the drop would mix the head's information with that shock."""
    _check_model(model)
    pairs = check_pairs("pairs", pairs)
    check_translation_model(model, src_vocab, tgt_vocab)
    check_choice("ablation", ablation, ("mean", "zero"))
    batch_size = check_int("batch_size", batch_size, minimum=1)
    encoded = encode_pairs(pairs, src_vocab, tgt_vocab)
    order = sorted(range(len(encoded)), key=lambda i: (len(encoded[i][0]), len(encoded[i][1])))
    chunks = [order[i: i + batch_size] for i in range(0, len(order), batch_size)]
    device = model.generator.weight.device
    batches = [collate([encoded[i] for i in chunk], tgt_vocab).to(device) for chunk in chunks]
    means, heads, points = None, heads_of(model), patch_points(model)
    if ablation == "mean":  # the mean over every real position of pairs
        totals: dict[str, Tensor] = {}
        counts = {"encoder": 0, "decoder": 0}
        for batch in batches:
            sums, batch_counts = _head_sums(model, batch.src, batch.tgt_in)
            totals = {name: totals.get(name, 0) + total for name, total in sums.items()}
            counts = {stack: counts[stack] + batch_counts[stack] for stack in counts}
        means = {name: total / counts[name.split(".")[0]] for name, total in totals.items()}
    baseline, drops = torch.empty(len(pairs), dtype=torch.float64), torch.empty(len(heads), len(pairs)).double()
    with _evaluating(model):
        for chunk, batch in zip(chunks, batches, strict=True):
            memory = model.encode(batch.src)
            base = _log_likelihood(model.generator(model.decode(batch.tgt_in, memory, batch.src)), batch)
            baseline[chunk] = base
            for i, head in enumerate(heads):
                with _hooked(model, points, [head], means, [], set()):
                    if head.kind == "encoder_self":
                        hidden = model.decode(batch.tgt_in, model.encode(batch.src), batch.src)
                    else:  # the encoder is not changed by a decoder head: its memory is reused
                        hidden = model.decode(batch.tgt_in, memory, batch.src)
                    drops[i, chunk] = base - _log_likelihood(model.generator(hidden), batch)
    return HeadAblationDrops(heads, drops, baseline, ablation)


def _log_likelihood(logits: Tensor, batch: object) -> Tensor:
    """(B, T, V) logits -> (B,) float64: each row's log-probability of its targets ``batch.tgt_out``,
    in the model's dtype up to the sum (a float64 copy of every logit cost a fifth of the time)."""
    targets = batch.tgt_out
    log_probs = logits.gather(-1, targets[..., None])[..., 0] - logits.logsumexp(dim=-1)  # (B, T)
    return log_probs.double().masked_fill(targets == batch.pad_id, 0.0).sum(dim=1).cpu()
