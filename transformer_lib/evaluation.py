"""How good is a translation model? Exact match, BLEU, and both by sentence length.

* **Exact match**: the fraction of sentences translated word for word like the
  reference. Our generated corpus has exactly one correct translation per sentence,
  so this is a fair score here (it would be far too strict for real text).
* **BLEU** (Papineni et al. 2002), the paper's measure: the geometric mean of the
  1- to 4-gram precisions of the whole test set, times a brevity penalty, from 0 to
  100. Computed by ``sacrebleu.corpus_bleu`` (its default ``13a`` tokenisation), the
  reference implementation, so the numbers compare with published ones.
* **By length**: the RNN chapter's question, whether quality falls as sentences grow.
* **Greedy exact match without decoding** (``greedy_exact_check``): greedy decoding reproduces a
  reference exactly if and only if, fed the reference's own prefix (teacher forcing), the model's
  most probable next token is the reference's at every position. One parallel forward pass tells
  which sentences greedy decoding gets exactly right; training uses it to decide cheaply when the
  target is still out of reach.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import Tensor

from .decoding import Seq2SeqModel, check_translation_model, default_max_len, generate
from .tokenization import Vocab, pad_sequences
from .validation import (
    check_edges,
    check_instance,
    check_number,
    check_pairs,
    check_positive_int,
    check_probability,
    check_token_list,
)

DEFAULT_EDGES = (3, 6, 9, 12, 16)  # the buckets of corpus.split_by_length


def _check_strings(name: str, sentences: object) -> list[str]:
    return check_token_list(name, sentences, item="sentence")


def _check_aligned(hypotheses: object, references: object) -> tuple[list[str], list[str]]:
    hypotheses = _check_strings("hypotheses", hypotheses)
    references = _check_strings("references", references)
    if len(hypotheses) != len(references):
        raise ValueError(
            f"references: expected one reference per item of hypotheses ({len(hypotheses)}), got {len(references)}"
        )
    if not hypotheses:
        raise ValueError("hypotheses: expected at least one sentence, got none")
    return hypotheses, references


def exact_match(hypotheses: Sequence[str], references: Sequence[str]) -> float:
    """Fraction (0 to 1) of hypotheses equal to their reference, word for word (spacing ignored)."""
    hypotheses, references = _check_aligned(hypotheses, references)
    same = sum(h.split() == r.split() for h, r in zip(hypotheses, references, strict=True))
    return same / len(hypotheses)


def bleu(hypotheses: Sequence[str], references: Sequence[str]) -> float:
    """Corpus BLEU (0 to 100) against one reference per sentence, by ``sacrebleu.corpus_bleu``."""
    hypotheses, references = _check_aligned(hypotheses, references)
    import sacrebleu  # here, not at the top: it takes half a second, and most importers never score BLEU

    return float(sacrebleu.corpus_bleu(hypotheses, [references]).score)


@dataclass
class LengthBucket:
    low: int  # source length (words), inclusive
    high: int  # exclusive
    count: int
    exact_match: float  # NaN for an empty bucket
    bleu: float  # NaN for an empty bucket


def accuracy_by_length(
    sources: Sequence[str],
    hypotheses: Sequence[str],
    references: Sequence[str],
    edges: Sequence[int] = DEFAULT_EDGES,
) -> list[LengthBucket]:
    """Exact match and BLEU per bucket of source length: bucket (lo, hi) holds lo <= words < hi.

    A sentence outside every bucket is an error, not silently dropped.
    """
    hypotheses, references = _check_aligned(hypotheses, references)
    sources = _check_strings("sources", sources)
    if len(sources) != len(hypotheses):
        raise ValueError(f"sources: expected one source per hypothesis ({len(hypotheses)}), got {len(sources)}")
    edges = check_edges("edges", edges)
    groups: dict[int, list[int]] = {i: [] for i in range(len(edges) - 1)}
    for n, source in enumerate(sources):
        length = len(source.split())
        bucket = next((i for i in groups if edges[i] <= length < edges[i + 1]), None)
        if bucket is None:
            raise ValueError(f"sources[{n}]: length {length} lies outside the buckets [{edges[0]}, {edges[-1]})")
        groups[bucket].append(n)
    result = []
    for i, members in groups.items():
        hyps = [hypotheses[n] for n in members]
        refs = [references[n] for n in members]
        result.append(LengthBucket(
            edges[i], edges[i + 1], len(members),
            exact_match(hyps, refs) if members else float("nan"),
            bleu(hyps, refs) if members else float("nan"),
        ))
    return result


@torch.no_grad()
def translate_batch(model: Seq2SeqModel, sentences: Sequence[str], src_vocab: Vocab, tgt_vocab: Vocab, *,
                    batch_size: int = 256, beam_size: int = 1, alpha: float = 0.6,
                    max_len: int | None = None) -> list[str]:
    """Translate many sentences, ``batch_size`` at a time (greedy, or beam search if ``beam_size`` > 1).

    Sentences of similar length are batched together (less padding); the result keeps
    the input order. Each batch is decoded by ``decoding.generate``, as ``decoding.translate``
    decodes one sentence: ``max_len`` defaults to ``decoding.default_max_len`` of the batch's
    longest source.
    """
    sentences = _check_strings("sentences", sentences)
    check_positive_int("batch_size", batch_size)
    check_positive_int("beam_size", beam_size)
    check_translation_model(model, src_vocab, tgt_vocab)
    device = next(model.parameters()).device
    encoded = [src_vocab.encode(s) for s in sentences]
    for i, ids in enumerate(encoded):
        if not ids:
            raise ValueError(f"sentences[{i}]: expected at least one word, got {sentences[i]!r}")
    order = sorted(range(len(sentences)), key=lambda i: len(encoded[i]))
    out: list[str] = [""] * len(sentences)
    for start in range(0, len(order), batch_size):
        chunk = order[start:start + batch_size]
        src = pad_sequences([encoded[i] for i in chunk], src_vocab.pad_id).to(device)  # (B, longest in chunk)
        ids = generate(model, src, tgt_vocab, beam_size=beam_size, alpha=alpha, max_len=max_len)
        for i, tokens in zip(chunk, ids, strict=True):
            out[i] = tgt_vocab.decode(tokens)
    return out


@dataclass
class EvaluationResult:
    exact_match: float  # 0 to 1
    bleu: float  # 0 to 100
    sources: list[str]
    hypotheses: list[str]
    references: list[str]

    def by_length(self, edges: Sequence[int] = DEFAULT_EDGES) -> list[LengthBucket]:
        return accuracy_by_length(self.sources, self.hypotheses, self.references, edges)

    def errors(self) -> list[tuple[str, str, str]]:
        """(source, hypothesis, reference) for every sentence not translated exactly."""
        return [(s, h, r) for s, h, r in zip(self.sources, self.hypotheses, self.references, strict=True)
                if h.split() != r.split()]


def score_translations(pairs: Sequence[tuple[str, str]], hypotheses: Sequence[str]) -> EvaluationResult:
    """Score ``hypotheses``, one translation per source of ``pairs`` in their order, against the targets:
    what ``evaluate_translation`` returns, for translations already made (some sentences of an
    evaluation, say, scored again without decoding them again)."""
    pairs = check_pairs("pairs", pairs)
    hypotheses = _check_strings("hypotheses", hypotheses)
    if len(hypotheses) != len(pairs):
        raise ValueError(f"hypotheses: expected one per pair ({len(pairs)}), got {len(hypotheses)}")
    sources = [s for s, _ in pairs]
    references = [t for _, t in pairs]
    return EvaluationResult(exact_match(hypotheses, references), bleu(hypotheses, references),
                            sources, hypotheses, references)


def evaluate_translation(model: Seq2SeqModel, pairs: Sequence[tuple[str, str]], src_vocab: Vocab, tgt_vocab: Vocab,
                         *, batch_size: int = 256, beam_size: int = 1, alpha: float = 0.6) -> EvaluationResult:
    """Translate the sources of ``pairs`` and score them against the targets (``score_translations``)."""
    check_translation_model(model, src_vocab, tgt_vocab)
    pairs = check_pairs("pairs", pairs)
    was_training = model.training
    hypotheses = translate_batch(model, [s for s, _ in pairs], src_vocab, tgt_vocab, batch_size=batch_size,
                                 beam_size=beam_size, alpha=alpha)
    model.train(was_training)
    return score_translations(pairs, hypotheses)


@dataclass
class DecodingComparison:
    """Two decodings (e.g. greedy and beam search) of the same sentences, sentence by sentence."""

    count: int  # sentences
    differ: int  # sentences whose two outputs differ
    first_exact: int  # sentences the first decoding translates exactly
    second_exact: int
    only_first_exact: int  # exact with the first decoding and not with the second
    only_second_exact: int


def compare_decodings(first: EvaluationResult, second: EvaluationResult) -> DecodingComparison:
    """Count where two evaluations of the same pairs disagree, and which one is exact more often."""
    check_instance("first", first, EvaluationResult, "an EvaluationResult")
    check_instance("second", second, EvaluationResult, "an EvaluationResult")
    if first.sources != second.sources or first.references != second.references:
        raise ValueError("second: expected an evaluation of the same pairs as first, got different ones")
    a = [h.split() == r.split() for h, r in zip(first.hypotheses, first.references, strict=True)]
    b = [h.split() == r.split() for h, r in zip(second.hypotheses, second.references, strict=True)]
    differ = sum(x.split() != y.split() for x, y in zip(first.hypotheses, second.hypotheses, strict=True))
    return DecodingComparison(len(a), differ, sum(a), sum(b), sum(x and not y for x, y in zip(a, b, strict=True)),
                              sum(y and not x for x, y in zip(a, b, strict=True)))


@dataclass
class GreedyExactCheck:
    """Which sentences greedy decoding translates exactly, read off one teacher-forced forward pass.

    ``exact[i]``: at every position of pair i's reference (and its ``<eos>``), the model's most
    probable next token, given the reference's prefix, is the reference's. ``unsure[i]``: that
    verdict rests on a near-tie (two logits closer than the tolerance), which the different order
    of the sums in a step-by-step decoding could flip, or the reference is too long for greedy
    decoding's length limit. Greedy decoding's exact match lies in [``lowest``, ``highest``]."""

    exact: list[bool]
    unsure: list[bool]
    checked: int  # sentences read (all, unless ``stop_below`` stopped the check early)

    @property
    def exact_match(self) -> float:
        return sum(self.exact) / len(self.exact)

    @property
    def lowest(self) -> float:
        """Greedy exact match if every unsure sentence came out wrong."""
        return sum(e and not u for e, u in zip(self.exact, self.unsure, strict=True)) / len(self.exact)

    @property
    def highest(self) -> float:
        """Greedy exact match if every unsure sentence came out right."""
        return sum(e or u for e, u in zip(self.exact, self.unsure, strict=True)) / len(self.exact)


def _padded(rows: list[list[int]], pad_id: int) -> Tensor:
    """(B, longest) ids, padded on the right: ``pad_sequences`` without its check of every id, for ids a
    ``Vocab`` has just encoded (a check of the split's every id would cost a third of the pass)."""
    width = max(len(row) for row in rows)
    return torch.tensor([row + [pad_id] * (width - len(row)) for row in rows], dtype=torch.long)


@torch.no_grad()
def greedy_exact_check(model: Seq2SeqModel, pairs: Sequence[tuple[str, str]], src_vocab: Vocab, tgt_vocab: Vocab,
                       *, batch_size: int = 256, tolerance: float = 1e-3,
                       stop_below: float | None = None) -> GreedyExactCheck:
    """Which of ``pairs`` greedy decoding (``translate_batch``) would translate exactly, without decoding.

    Greedy decoding writes the reference y_1 ... y_n <eos> exactly if and only if, at each position
    t, the most probable token after <sos> y_1 ... y_(t-1) (``<pad>`` and ``<sos>`` excluded, as
    decoding excludes them) is y_t: by induction, it then reads the same prefix at every step.
    ``model(src, tgt_in)`` computes every position at once, as in training. A reference with a word
    outside ``tgt_vocab`` can never be matched. A verdict is ``unsure`` where it hangs on logits
    less than ``tolerance`` apart: the deciding position's two best logits (an exact sentence: at any
    position), or the reference token's logit and the best one (a wrong sentence: at its first
    wrong position).

    ``stop_below`` (a share, for training's checks): stop as soon as the sentences surely wrong (not
    exact, not unsure) are already too many for the exact match to reach it. It reads the longest
    sentences first (the likeliest wrong), the first chunk just large enough to stop on, so that a check
    far from the target costs a few dozen sentences, not the split. The sentences left unchecked count as
    unsure: ``highest`` stays an upper bound (below ``stop_below``), ``lowest`` a lower one; ``checked``
    says how many were read."""
    check_translation_model(model, src_vocab, tgt_vocab)
    pairs = check_pairs("pairs", pairs)
    check_positive_int("batch_size", batch_size)
    tolerance = check_number("tolerance", tolerance, positive=True)
    if stop_below is not None:
        stop_below = check_probability("stop_below", stop_below)
    device = next(model.parameters()).device
    encoded = [(src_vocab.encode(s), *tgt_vocab.encode_with_unknowns(t)) for s, t in pairs]
    for i, (src_ids, _, _) in enumerate(encoded):
        if not src_ids:
            raise ValueError(f"pairs[{i}]: expected a source of at least one word, got {pairs[i][0]!r}")
    exact, unsure = [False] * len(pairs), [True] * len(pairs)  # unsure until read
    # longest first: the sentences most likely wrong, so that a check far from stop_below stops soonest
    order = sorted(range(len(pairs)), key=lambda i: len(encoded[i][0]), reverse=True)
    # more sentences surely wrong than this, and the exact match is below stop_below
    allowed_wrong = len(pairs) if stop_below is None else len(pairs) - math.ceil(stop_below * len(pairs) - 1e-9)
    # the first chunk: just enough sentences to stop on (allowed_wrong + 1), then batch_size at a time
    first = min(batch_size, allowed_wrong + 1)
    starts = [0, *range(first, len(order), batch_size)]
    wrong, checked = 0, 0
    was_training = model.training
    model.eval()
    for start, end in zip(starts, [*starts[1:], len(order)], strict=True):
        if wrong > allowed_wrong:
            break
        chunk = order[start:end]
        src = _padded([encoded[i][0] for i in chunk], src_vocab.pad_id).to(device)  # (B, S)
        tgt_in = _padded([[tgt_vocab.sos_id, *encoded[i][1]] for i in chunk], tgt_vocab.pad_id)  # (B, T)
        tgt_out = _padded([[*encoded[i][1], tgt_vocab.eos_id] for i in chunk], tgt_vocab.pad_id)  # (B, T)
        logits = model(src, tgt_in.to(device)).cpu()  # (B, T, V)
        logits[..., [tgt_vocab.pad_id, tgt_vocab.sos_id]] = float("-inf")  # never generated
        best = logits.topk(2, dim=-1)  # (B, T, 2)
        real = tgt_out != tgt_vocab.pad_id  # (B, T)
        right = (best.indices[..., 0] == tgt_out) | ~real  # (B, T)
        close = real & (best.values[..., 0] - best.values[..., 1] < tolerance)  # (B, T)
        first_wrong = (~right).int().argmax(dim=-1, keepdim=True)  # (B, 1); 0 where all are right
        wanted = logits.gather(-1, tgt_out.unsqueeze(-1)).squeeze(-1).gather(-1, first_wrong)  # (B, 1)
        behind = (best.values[..., 0].gather(-1, first_wrong) - wanted).squeeze(-1) < tolerance  # (B,)
        all_right = right.all(dim=-1)  # (B,)
        near_tie = torch.where(all_right, close.any(dim=-1), behind)  # (B,)
        for i, right_row, near_row in zip(chunk, all_right.tolist(), near_tie.tolist(), strict=True):
            src_ids, tgt_ids, unknown = encoded[i]
            too_long = len(tgt_ids) + 1 > default_max_len(model, len(src_ids))
            exact[i] = right_row and not unknown and not too_long
            unsure[i] = not unknown and (too_long or near_row)
            wrong += not (exact[i] or unsure[i])
        checked += len(chunk)
    model.train(was_training)
    return GreedyExactCheck(exact, unsure, checked)
