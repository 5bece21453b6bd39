"""Measurements that the chapters assert on, most of them showing what a trained model learned.

* ``contextual_occurrences``: one word in several sentences: its embedding (the same every time),
  its encoder output (different in each context) and where it attends (chapter 2);
* ``nearest_words``, ``analogy``, ``analogy_ranks``: word2vec-style questions asked of an
  embedding matrix, by cosine similarity (chapter 2);
* ``encoder_unit_activations`` (``_by_layer``: every layer from one pass): the feed-forward network's
  hidden units at every token of some sentences: how many are zero, which tokens in context excite a
  unit most, and which word classes it answers to (chapter 6);
* ``prefix_corruption``: teacher forcing trains on the reference prefix; free-running decoding
  reads its own, possibly wrong, words. How much does one wrong word in the prefix hurt the
  predictions after it (chapter 7, exposure bias)?
* ``head_statistics``: how focused each attention head is, from captured maps (chapter 5);
* ``norm_placement_scales``: activations and gradients layer by layer in a freshly built deep
  encoder, post-norm against pre-norm (chapter 6; ``figures.models`` draws both).

Longer than 400 lines: a shelf of small measurements, one or two functions each, that the chapters
assert on; each is short and stands alone, and one module keeps them where a reader looks for them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .attention import causal_mask
from .capture import AttentionMaps, capture_attention, capture_feed_forward
from .encoder import Encoder, EncoderLayer
from .models import Transformer
from .tokenization import Vocab, pad_sequences
from .validation import check_index, check_instance, check_int, check_pairs, check_positive_int, check_token_list
from .validation_models import check_vocab_size
from .validation_tensors import check_finite, check_ndim, check_nonempty, check_vectors

N_SPECIAL = 4  # <pad>, <unk>, <sos>, <eos>: ids 0 to 3 in every Vocab


def _check_model_vocab(model: object, vocab: object, vocab_name: str = "src_vocab") -> None:
    if not isinstance(model, Transformer):
        raise TypeError(f"model: expected a Transformer, got {type(model).__name__}")
    if not isinstance(vocab, Vocab):
        raise TypeError(f"{vocab_name}: expected a Vocab, got {type(vocab).__name__}")
    size = model.config.src_vocab_size if vocab_name == "src_vocab" else model.config.tgt_vocab_size
    check_vocab_size(vocab_name, vocab, size, f"the model's config.{vocab_name}_size")


def _word_id(vocab: Vocab, word: object, name: str) -> int:
    if not isinstance(word, str):
        raise TypeError(f"{name}: expected a str, got {type(word).__name__}")
    if word not in vocab.stoi or vocab.stoi[word] < N_SPECIAL:
        raise ValueError(f"{name}: expected a word of the vocabulary, got {word!r}")
    return vocab.stoi[word]


# --------------------------------------------------------------------------- contextual meaning


@dataclass
class Occurrence:
    """One occurrence of a word in a source sentence, as the encoder sees it."""

    tokens: list[str]  # the sentence's tokens
    position: int  # where the word is
    embedding: Tensor  # (d_model,): its token embedding (times sqrt(d_model)), no position
    encoded: Tensor  # (d_model,): the encoder's output at that position
    attention: Tensor  # (n_layers, seq_len): its encoder self-attention per layer, mean over heads


@torch.no_grad()
def contextual_occurrences(
    model: Transformer, src_vocab: Vocab, sentences: Sequence[str], word: str
) -> list[Occurrence]:
    """The first occurrence of ``word`` in each of ``sentences``, run through the encoder."""
    _check_model_vocab(model, src_vocab)
    word_id = _word_id(src_vocab, word, "word")
    sentences = check_token_list("sentences", sentences, item="sentence")
    if not sentences:
        raise ValueError("sentences: expected a non-empty list of sentences, got none")
    was_training = model.training
    model.eval()
    device = next(model.parameters()).device
    found = []
    try:
        for i, sentence in enumerate(sentences):
            ids = src_vocab.encode(sentence)
            if word_id not in ids:
                raise ValueError(f"sentences[{i}]: expected a sentence containing {word!r}, got {sentence!r}")
            position = ids.index(word_id)
            src = torch.tensor([ids], device=device)
            maps = capture_attention(model, src, torch.tensor([[Vocab.sos_id]], device=device))  # decoder input: unused
            found.append(Occurrence(
                tokens=[src_vocab.itos[t] for t in ids], position=position,
                embedding=model.src_embed.token(src)[0, position].cpu(),
                encoded=model.encode(src)[0, position].cpu(),
                attention=torch.stack([w[0, :, position].mean(dim=0) for w in maps.encoder_self]).cpu(),
            ))
    finally:
        model.train(was_training)
    return found


# --------------------------------------------------------------------------- word2vec-style questions


def _unit_rows(vectors: Tensor, vocab: Vocab) -> Tensor:
    check_ndim("vectors", vectors, 2, "(vocab_size, d_model)")
    check_vectors("vectors", vectors, vectors.shape[-1])  # floating point
    check_nonempty("vectors", vectors, dim=-1)
    check_finite("vectors", vectors)
    check_instance("vocab", vocab, Vocab, "a Vocab")
    if vectors.shape[0] != len(vocab):
        raise ValueError(f"vectors: expected one row per word of vocab ({len(vocab)}), got {vectors.shape[0]}")
    return F.normalize(vectors.detach(), dim=-1)


def _ranked(scores: Tensor, vocab: Vocab, exclude: Sequence[int], k: int) -> list[tuple[str, float]]:
    scores = scores.clone()
    scores[:N_SPECIAL] = -torch.inf
    scores[list(exclude)] = -torch.inf
    values, ids = scores.topk(k)
    return [(vocab.itos[i], v) for i, v in zip(ids.tolist(), values.tolist(), strict=True)]


def nearest_words(vectors: Tensor, vocab: Vocab, word: str, k: int = 5) -> list[tuple[str, float]]:
    """The ``k`` words whose rows of ``vectors`` have the largest cosine similarity with ``word``'s."""
    unit = _unit_rows(vectors, vocab)
    check_positive_int("k", k)
    i = _word_id(vocab, word, "word")
    return _ranked(unit @ unit[i], vocab, [i], k)


def analogy(vectors: Tensor, vocab: Vocab, a: str, b: str, c: str, k: int = 5) -> list[tuple[str, float]]:
    """"``a`` is to ``b`` as ``c`` is to ?": the ``k`` words nearest (cosine) to b - a + c, the three
    question words left out (Mikolov et al.'s vector offset, on unit-length rows)."""
    unit = _unit_rows(vectors, vocab)
    check_positive_int("k", k)
    ia, ib, ic = (_word_id(vocab, w, n) for w, n in ((a, "a"), (b, "b"), (c, "c")))
    query = F.normalize(unit[ib] - unit[ia] + unit[ic], dim=0)
    return _ranked(unit @ query, vocab, [ia, ib, ic], k)


def analogy_ranks(vectors: Tensor, vocab: Vocab, pairs: Sequence[tuple[str, str]]) -> Tensor:
    """For every two different pairs (a, b) and (c, d) of ``pairs`` (e.g. singular and plural), the
    rank of d among the answers to "a is to b as c is to ?" (1: the first answer), as ``analogy``
    ranks them. Returns a 1-D tensor of ranks, len(pairs) * (len(pairs) - 1) of them."""
    unit = _unit_rows(vectors, vocab)
    if isinstance(pairs, str) or not isinstance(pairs, Sequence) or len(pairs) < 2:
        kind = ValueError if isinstance(pairs, Sequence) and not isinstance(pairs, str) else TypeError
        raise kind(f"pairs: expected at least two (word, word) pairs, got {pairs!r:.60}")
    ids = [(_word_id(vocab, a, f"pairs[{n}][0]"), _word_id(vocab, b, f"pairs[{n}][1]"))
           for n, (a, b) in enumerate(pairs)]
    ranks = []
    for ia, ib in ids:
        for ic, id_ in ids:
            if (ia, ib) == (ic, id_):
                continue
            scores = unit @ F.normalize(unit[ib] - unit[ia] + unit[ic], dim=0)
            scores[:N_SPECIAL] = -torch.inf
            scores[[ia, ib, ic]] = -torch.inf
            ranks.append(int((scores > scores[id_]).sum()) + 1)
    return torch.tensor(ranks)


# --------------------------------------------------------------------------- exposure bias


@dataclass
class PrefixCorruption:
    """Teacher-forced predictions after a target prefix, with the reference word at ``position``
    and with a wrong word there instead."""

    position: int  # the decoder input position that was changed (1: the first word after <sos>)
    clean_accuracy: float  # next-token accuracy at the positions that read it, reference prefix
    corrupted_accuracy: float  # the same positions, one wrong word in the prefix
    next_clean_accuracy: float  # only the prediction right after the changed word
    next_corrupted_accuracy: float
    pairs: list[tuple[str, str]]  # the (source, target) pairs measured: those long enough
    wrong_words: list[str]  # the word put in, per sentence
    clean: list[list[str]]  # per sentence, the predicted words (argmax) from ``position`` on
    corrupted: list[list[str]]


@torch.no_grad()
def prefix_corruption(
    model: Transformer,
    pairs: Sequence[tuple[str, str]],
    src_vocab: Vocab,
    tgt_vocab: Vocab,
    position: int = 1,
    seed: int = 0,
) -> PrefixCorruption:
    """Replace the target word read at decoder input ``position`` by a random other word of the
    vocabulary (seeded) and compare the model's argmax predictions from there on with the
    reference's, with and without the change. Sentences shorter than ``position`` are skipped."""
    _check_model_vocab(model, src_vocab)
    _check_model_vocab(model, tgt_vocab, "tgt_vocab")
    check_positive_int("position", position)
    check_int("seed", seed)
    pairs = check_pairs("pairs", pairs)
    kept = [(s, t) for s, t in pairs if len(tgt_vocab.encode(t)) >= position]
    if not kept:
        raise ValueError(f"position: expected at most the longest target's length, got {position}")
    device = next(model.parameters()).device
    src = pad_sequences([src_vocab.encode(s) for s, _ in kept], src_vocab.pad_id).to(device)
    targets = [tgt_vocab.encode(t) for _, t in kept]
    tgt_in = pad_sequences([[tgt_vocab.sos_id, *t] for t in targets], tgt_vocab.pad_id).to(device)
    tgt_out = pad_sequences([[*t, tgt_vocab.eos_id] for t in targets], tgt_vocab.pad_id).to(device)
    generator = torch.Generator().manual_seed(seed)
    reference = tgt_in[:, position].cpu()
    wrong = torch.randint(N_SPECIAL, len(tgt_vocab) - 1, (len(kept),), generator=generator)
    wrong = wrong + (wrong >= reference).long()  # uniform over the other words: never the reference
    corrupted_in = tgt_in.clone()
    corrupted_in[:, position] = wrong.to(device)
    was_training = model.training
    model.eval()
    try:
        # 256 sentences at a time: the whole split at once holds every layer's activations together
        chunks = [slice(start, start + 256) for start in range(0, len(kept), 256)]
        clean_pred = torch.cat([model(src[c], tgt_in[c]).argmax(-1) for c in chunks])[:, position:]
        corrupted_pred = torch.cat([model(src[c], corrupted_in[c]).argmax(-1) for c in chunks])[:, position:]
    finally:
        model.train(was_training)
    gold = tgt_out[:, position:]
    real = gold != tgt_vocab.pad_id

    def accuracy(pred: Tensor, where: Tensor) -> float:
        return float(((pred == gold) & where).sum() / where.sum())

    first = torch.zeros_like(real)
    first[:, 0] = True

    def words(pred: Tensor) -> list[list[str]]:
        return [[tgt_vocab.itos[i] for i, r in zip(row, keep, strict=True) if r]
                for row, keep in zip(pred.tolist(), real.tolist(), strict=True)]

    return PrefixCorruption(
        position, accuracy(clean_pred, real), accuracy(corrupted_pred, real),
        accuracy(clean_pred, first), accuracy(corrupted_pred, first),
        list(kept), [tgt_vocab.itos[i] for i in wrong.tolist()], words(clean_pred), words(corrupted_pred),
    )


# --------------------------------------------------------------------------- what a feed-forward unit responds to


class TokenActivation(NamedTuple):
    """One token in its sentence, and a unit's activation there."""

    word: str
    sentence: str
    position: int  # of the token in the sentence
    value: float


@dataclass
class UnitActivations:
    """The hidden units of one encoder layer's feed-forward network (the ReLU's output), at every
    real token of some source sentences: one row per token, padding left out."""

    values: Tensor  # (n_tokens, d_ff)
    words: list[str]  # per row: the token
    sentences: list[str]  # per row: the sentence it is in
    positions: list[int]  # per row: its position in that sentence

    def zero_fraction(self) -> Tensor:
        """(n_tokens,): the fraction of the d_ff units that the ReLU sets to exactly 0 at each token."""
        return (self.values == 0).double().mean(dim=-1)

    def top_tokens(self, unit: int, k: int = 5) -> list[TokenActivation]:
        """The ``k`` tokens at which ``unit`` is largest, largest first."""
        check_index("unit", unit, self.values.shape[1])
        check_positive_int("k", k)
        values, rows = self.values[:, unit].topk(min(k, self.values.shape[0]))
        return [TokenActivation(self.words[r], self.sentences[r], self.positions[r], v)
                for r, v in zip(rows.tolist(), values.tolist(), strict=True)]

    def class_means(self, word_classes: dict[str, str]) -> tuple[list[str], Tensor]:
        """The classes of ``word_classes`` (word -> class, e.g. ``grammar.english_word_classes()``) that
        occur, sorted, and (n_classes, d_ff): each unit's mean activation over the tokens of each class."""
        check_instance("word_classes", word_classes, dict, "a dict of word -> class")
        missing = sorted({w for w in self.words if w not in word_classes})
        if missing:
            raise ValueError(f"word_classes: expected a class for every word, got none for {missing[:5]}")
        names = sorted({word_classes[w] for w in self.words})
        index = torch.tensor([names.index(word_classes[w]) for w in self.words])
        means = torch.stack([self.values[index == i].mean(dim=0) for i in range(len(names))])
        return names, means


def encoder_unit_activations(
    model: Transformer, src_vocab: Vocab, sentences: Sequence[str], layer: int = 0
) -> UnitActivations:
    """Run ``sentences`` through the encoder (padded to one width, 256 sentences at a time: a
    reader's kernel need not hold every layer's activations of a whole split at once) and keep the
    feed-forward hidden units of encoder layer ``layer`` at every real token
    (``capture.capture_feed_forward``)."""
    _check_model_vocab(model, src_vocab)
    check_index("layer", layer, len(model.encoder.layers))
    return encoder_unit_activations_by_layer(model, src_vocab, sentences)[layer]


@torch.no_grad()
def encoder_unit_activations_by_layer(
    model: Transformer, src_vocab: Vocab, sentences: Sequence[str]
) -> list[UnitActivations]:
    """``encoder_unit_activations`` of every encoder layer, from one pass of ``sentences`` (a pass
    computes them all: asking layer by layer would run the model once a layer)."""
    _check_model_vocab(model, src_vocab)
    sentences = check_token_list("sentences", sentences, item="sentence")
    if not sentences:
        raise ValueError("sentences: expected a non-empty list of sentences, got none")
    ids = [src_vocab.encode(s) for s in sentences]
    device = next(model.parameters()).device
    src = pad_sequences(ids, src_vocab.pad_id).to(device)
    sos = torch.full((len(ids), 1), Vocab.sos_id, device=device)  # the decoder's input: unused here
    real = (src != src_vocab.pad_id).cpu()  # (B, S); padding is on the right, so row-major order is ``rows``
    chunks = [[units.cpu()[real[i:i + 256]]  # per chunk of 256 sentences, per layer: (real tokens, d_ff)
               for units in capture_feed_forward(model, src[i:i + 256], sos[i:i + 256]).encoder]
              for i in range(0, len(ids), 256)]
    rows = [(b, t) for b, row in enumerate(ids) for t in range(len(row))]
    words = [src_vocab.itos[ids[b][t]] for b, t in rows]
    of_rows, positions = [sentences[b] for b, _ in rows], [t for _, t in rows]
    return [UnitActivations(values=torch.cat([chunk[layer] for chunk in chunks]), words=words, sentences=of_rows,
                            positions=positions) for layer in range(len(model.encoder.layers))]


def _row_statistics(weights: Tensor, visible: Tensor, self_attention: bool) -> list[list[dict[str, float]]]:
    """Per batch row and head of (B, h, T_q, T_k) weights, averages over the query rows that see more
    than one key."""
    n_visible = visible.sum(dim=-1).double()  # (T_q,)
    rows = n_visible > 1
    w = weights.double()  # (B, h, T_q, T_k): every sentence and head at once, each row reduced as alone
    entropy = -(w * w.clamp_min(1e-30).log()).sum(dim=-1)  # (B, h, T_q); 0 log 0 = 0
    result = {"entropy": (entropy[..., rows] / n_visible[rows].log()).mean(dim=-1),
              "max weight": w.max(dim=-1).values[..., rows].mean(dim=-1)}  # (B, h)
    if self_attention:
        positions = torch.arange(w.shape[-2])
        result["own"] = w[..., positions, positions][..., rows].mean(dim=-1)
        previous = torch.cat([torch.zeros(*w.shape[:2], 1, dtype=w.dtype), w[..., positions[1:], positions[1:] - 1]],
                             dim=-1)
        result["previous"] = previous[..., rows].mean(dim=-1)
    else:
        result["own"] = result["previous"] = torch.full(w.shape[:2], float("nan"))
    columns = {name: values.tolist() for name, values in result.items()}  # name -> [B][h]
    return [[{name: values[b][head] for name, values in columns.items()} for head in range(w.shape[1])]
            for b in range(w.shape[0])]


def head_statistics(maps: AttentionMaps, index: int | None = 0) -> list[dict[str, object]]:
    """How focused each head of each layer is, for batch row ``index`` of ``maps`` (``None``: every
    batch row, one after another, in one pass: what a batch of sentences of equal lengths needs).

    One dict per (attention kind, layer, head), averaged over the query rows that may see more
    than one key (with a causal mask, the first row sees only itself):

    * ``entropy``: of the row's weights, as a fraction of log(visible keys), the entropy of a
      uniform row (0 = all weight on one key, 1 = spread evenly);
    * ``max weight``: the largest weight of the row;
    * ``own`` and ``previous``: in self-attention, the weight on the query's own position and on
      the position before it (NaN in cross-attention, where queries and keys are different tokens).

    Padding is not removed: pass unpadded sentences (a batch of sentences of one length).
    """
    _check_maps_row(maps, index)
    per_row: list[list[dict[str, object]]] = []  # per batch row, its dicts in (kind, layer, head) order
    for kind in ("encoder_self", "decoder_self", "cross"):
        for layer, weights in enumerate(getattr(maps, kind)):  # (B, h, T_q, T_k)
            selected = weights if index is None else weights[index:index + 1]
            n_q, n_k = weights.shape[-2:]
            visible = causal_mask(n_q, n_k) if kind == "decoder_self" else torch.ones(n_q, n_k, dtype=torch.bool)
            for b, heads in enumerate(_row_statistics(selected, visible, kind != "cross")):
                if b == len(per_row):
                    per_row.append([])
                per_row[b] += [{"attention": kind, "layer": layer + 1, "head": head + 1, **stats}
                               for head, stats in enumerate(heads)]
    return [row for sentence in per_row for row in sentence]


def _check_maps_row(maps: AttentionMaps, index: int | None) -> None:
    """``head_statistics``' inputs: captured maps, and a batch row that each of them has (or None)."""
    check_instance("maps", maps, AttentionMaps, "transformer_lib.capture.AttentionMaps")
    every = (*maps.encoder_self, *maps.decoder_self, *maps.cross)  # (B, h, T_q, T_k) each
    if index is not None:
        check_int("index", index, minimum=0)
        for weights in every:
            if index >= weights.shape[0]:
                raise ValueError(f"index: expected a batch row in [0, {weights.shape[0]}), got {index}")
    if not any(weights.shape[0] for weights in every):
        raise ValueError("maps: no attention maps to measure")


def norm_placement_scales(
    norm_first: bool, n_layers: int = 24, d_model: int = 64, n_heads: int = 4, d_ff: int = 256,
    seq_len: int = 16, batch: int = 8, seed: int = 0, n_seeds: int = 8,
) -> dict[str, list[float]]:
    """Run a random batch through a freshly initialised ``Encoder`` of ``n_layers`` layers (dropout
    off), back-propagate a fixed random projection of its output, and return per layer the
    root-mean-square of the layer's output (``"activation"``) and the norm of the gradient of
    all the layer's weights (``"gradient"``), as Xiong et al. (2020) compare them.

    Each figure is the mean over ``n_seeds`` initialisations (seeds ``seed``, ``seed + 1``, ...):
    one random draw can hide the trend (the top-to-bottom gradient ratio of a post-norm stack
    ranges from about 1 to 3.5 over eight seeds), the mean shows it."""
    for name, value in (("n_layers", n_layers), ("d_model", d_model), ("n_heads", n_heads), ("d_ff", d_ff),
                        ("seq_len", seq_len), ("batch", batch), ("n_seeds", n_seeds)):
        check_positive_int(name, value)
    check_int("seed", seed)
    totals = {"activation": [0.0] * n_layers, "gradient": [0.0] * n_layers}
    for run in range(seed, seed + n_seeds):
        torch.manual_seed(run)
        encoder = Encoder(EncoderLayer(d_model, n_heads, d_ff, dropout=0.0, norm_first=norm_first), n_layers)
        for p in encoder.parameters():  # independent weights per layer, as in a freshly built model
            if p.dim() > 1:
                nn.init.xavier_uniform_(p)
        h = torch.randn(batch, seq_len, d_model)
        for i, layer in enumerate(encoder.layers):
            h = layer(h)
            totals["activation"][i] += float(h.detach().pow(2).mean().sqrt()) / n_seeds
        final = h if encoder.final_norm is None else encoder.final_norm(h)
        # A fixed random direction: a plain .sum() would be constant after a LayerNorm (zero gradient).
        (final * torch.randn(final.shape)).sum().backward()
        for i, layer in enumerate(encoder.layers):
            grad = torch.cat([p.grad.flatten() for p in layer.parameters() if p.dim() > 1])
            totals["gradient"][i] += float(grad.norm()) / n_seeds
    return totals
