"""A GPT-style language model on the book's corpus: its batches, its training, and how good it is.

A decoder-only Transformer (``models.DecoderOnlyTransformer``) reads ``<sos> w1 ... wn`` and predicts,
at every position, the next token: ``w1 ... wn <eos>``. It is the translation decoder's target side
alone: no source, no encoder, no cross-attention, the causal mask unchanged.

* ``lm_batches``: sentences in padded batches whose ``tgt_in`` / ``tgt_out`` are the model's input
  and its targets (the ``tokenization.Batch`` of teacher forcing; ``src`` is unused).
* ``train_language_model``: ``training.train`` (the paper's loss, Adam and schedule) on such a model,
  behind ``ReadsTargetOnly``.
* ``perplexity``: exp of the mean negative log-likelihood per predicted token, ``<eos>`` included;
  ``bigram_perplexity``: the same for a model that counts which word follows which (a baseline);
  ``next_token_entropy``: how spread the next-token distribution is, at a temperature.
* ``next_word_probs``: the distribution ``sample_sentences`` draws the next word from after ``<sos>`` and a
  prompt (``sampling.next_token_probs``), the one the page's explorer shows;
* ``sample_sentences``: sentences drawn from the model (``sampling.sample_continuation`` after ``<sos>``);
  ``sample_shares``: what they are, by the grammar's own judgement (``oracle.classify_sentence``).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import Tensor, nn

from .models import DecoderOnlyTransformer
from .oracle import SENTENCE_KINDS, classify_sentence
from .sampling import next_token_probs, sample_continuation, tempered_logits
from .tokenization import Batch, Vocab, make_batches
from .training import TrainingHistory, TrainingOptions, train
from .validation import (
    check_instance,
    check_number,
    check_positive_int,
    check_sentence,
    check_token_list,
    empty_or_wrong_type,
)
from .validation_models import check_vocab_size
from .validation_tensors import check_token_ids

MAX_NEW_TOKENS = 20  # a sampled sentence's longest continuation, unless told (the page's explorer too)


def _check_sentences(name: str, sentences: object) -> list[str]:
    sentences = check_token_list(name, sentences, item="sentence")
    if not sentences:
        raise ValueError(f"{name}: expected at least one sentence, got none")
    for i, sentence in enumerate(sentences):
        if not sentence.split():
            raise ValueError(f"{name}[{i}]: expected a non-empty sentence, got {sentence!r}")
    return sentences


def lm_batches(sentences: Sequence[str], vocab: Vocab, batch_size: int, *, shuffle: bool = True,
               seed: int = 0) -> list[Batch]:
    """Every sentence, as ``tgt_in`` = ``<sos> w1 ... wn`` and ``tgt_out`` = ``w1 ... wn <eos>``, padded,
    in batches of similar length (served in random order with ``shuffle``)."""
    sentences = _check_sentences("sentences", sentences)
    check_instance("vocab", vocab, Vocab, "a Vocab")
    # The translation batches with the sentence on both sides; the language model reads only the target.
    return make_batches([(s, s) for s in sentences], vocab, vocab, batch_size, shuffle=shuffle, seed=seed,
                        by_length=True)


class ReadsTargetOnly(nn.Module):
    """A language model behind ``training.train``'s interface: ``train`` calls ``model(src, tgt_in)``,
    and a language model reads ``tgt_in`` alone."""

    def __init__(self, model: DecoderOnlyTransformer) -> None:
        super().__init__()
        check_instance("model", model, DecoderOnlyTransformer, "a DecoderOnlyTransformer")
        self.model = model
        self.config = model.config

    def forward(self, src: Tensor, tgt_in: Tensor) -> Tensor:
        check_token_ids("tgt_in", tgt_in, self.config.tgt_vocab_size)  # the model would call it ids
        return self.model(tgt_in)


def train_language_model(model: DecoderOnlyTransformer, batches: Sequence[Batch],
                         options: TrainingOptions | None = None, **knobs: object) -> TrainingHistory:
    """Train ``model`` in place with ``training.train`` on ``lm_batches``; ``options`` and the keyword
    arguments (``steps``, ``warmup``, ``lr_scale``, ``label_smoothing``, ``seed``...) go to ``train``, as
    ``train`` takes them. Returns its history."""
    check_instance("model", model, DecoderOnlyTransformer, "a DecoderOnlyTransformer")
    return train(ReadsTargetOnly(model), batches, options, **knobs)


def _token_log_probs(model: DecoderOnlyTransformer, sentences: list[str], vocab: Vocab, batch_size: int,
                     temperature: float = 1.0) -> tuple[Tensor, Tensor]:
    """At every predicted position of every sentence, softmax(logits / ``temperature``)'s log-probability
    of the target (N,) and its entropy (N,). Reduced batch by batch: the (N, V) log-probabilities of a
    whole split at once would hold a hundred megabytes in double precision."""
    model.eval()
    device = next(model.parameters()).device
    target_rows, entropy_rows = [], []
    with torch.no_grad():
        for batch in lm_batches(sentences, vocab, batch_size, shuffle=False):
            logits = model(batch.tgt_in.to(device))  # (B, T, V)
            keep = batch.tgt_out != vocab.pad_id
            log_probs = tempered_logits(logits[keep.to(device)], temperature).log_softmax(dim=-1).cpu()  # (n, V)
            target_rows.append(log_probs.gather(1, batch.tgt_out[keep][:, None]).squeeze(1))
            entropy_rows.append(-(log_probs.exp() * log_probs.nan_to_num(neginf=0.0)).sum(dim=-1))
    return torch.cat(target_rows), torch.cat(entropy_rows)


def perplexity(model: DecoderOnlyTransformer, sentences: Sequence[str], vocab: Vocab, batch_size: int = 256
               ) -> float:
    """exp(mean of -log p(next token)) over every predicted token of ``sentences``, ``<eos>`` included.

    A model that guessed uniformly among V tokens would score V; a perfect one 1."""
    check_instance("model", model, DecoderOnlyTransformer, "a DecoderOnlyTransformer")
    sentences = _check_sentences("sentences", sentences)
    check_instance("vocab", vocab, Vocab, "a Vocab")
    check_vocab_size("vocab", vocab, model.config.tgt_vocab_size, "the model's config.tgt_vocab_size")
    check_positive_int("batch_size", batch_size)
    target_log_probs, _ = _token_log_probs(model, sentences, vocab, batch_size)
    return math.exp(-float(target_log_probs.double().mean()))


def next_token_entropy(model: DecoderOnlyTransformer, sentences: Sequence[str], vocab: Vocab,
                       temperature: float = 1.0, batch_size: int = 256) -> float:
    """Mean entropy, in nats, of softmax(logits / temperature) over every predicted position of ``sentences``."""
    check_instance("model", model, DecoderOnlyTransformer, "a DecoderOnlyTransformer")
    sentences = _check_sentences("sentences", sentences)
    check_instance("vocab", vocab, Vocab, "a Vocab")
    check_vocab_size("vocab", vocab, model.config.tgt_vocab_size, "the model's config.tgt_vocab_size")
    temperature = check_number("temperature", temperature, positive=True)
    check_positive_int("batch_size", batch_size)
    _, entropies = _token_log_probs(model, sentences, vocab, batch_size, temperature)
    return float(entropies.double().mean())


def bigram_perplexity(train_sentences: Sequence[str], test_sentences: Sequence[str], vocab: Vocab,
                      alpha: float = 0.1) -> float:
    """Perplexity on ``test_sentences`` of the bigram model counted on ``train_sentences``:

        p(w | previous) = (count(previous, w) + alpha) / (count(previous) + alpha * V')

    over the V' tokens that can follow (every token but ``<pad>`` and ``<sos>``), with ``<sos>`` before
    the first word and ``<eos>`` after the last, as the language model reads them. ``alpha`` > 0 (add-alpha
    smoothing) gives a pair never counted a small probability instead of zero."""
    train_sentences = _check_sentences("train_sentences", train_sentences)
    test_sentences = _check_sentences("test_sentences", test_sentences)
    check_instance("vocab", vocab, Vocab, "a Vocab")
    alpha = check_number("alpha", alpha, positive=True)

    def pairs(sentence: str) -> list[tuple[int, int]]:
        ids = [vocab.sos_id, *vocab.encode(sentence), vocab.eos_id]
        return list(zip(ids, ids[1:], strict=False))

    pair_counts: Counter[tuple[int, int]] = Counter(p for s in train_sentences for p in pairs(s))
    previous_counts: Counter[int] = Counter()
    for (previous, _), count in pair_counts.items():
        previous_counts[previous] += count
    can_follow = len(vocab) - 2
    total, n = 0.0, 0
    for sentence in test_sentences:
        for previous, word in pairs(sentence):
            total -= math.log((pair_counts[previous, word] + alpha) / (previous_counts[previous] + alpha * can_follow))
            n += 1
    return math.exp(total / n)


@dataclass(frozen=True)
class SampledSentence:
    text: str  # the words drawn, without <sos> and <eos>
    ended: bool  # the model drew <eos> (False: it was cut at max_new_tokens)


def never_drawn(vocab: Vocab) -> tuple[int, ...]:
    """The tokens the language model never draws: ``<pad>``, ``<sos>`` and ``<unk>``."""
    check_instance("vocab", vocab, Vocab, "a Vocab")
    return (vocab.pad_id, vocab.sos_id, vocab.unk_id)


def _prompt_ids(model: DecoderOnlyTransformer, vocab: Vocab, prompt: object) -> list[int]:
    """``<sos>`` and the prompt's word ids (an unknown word reads as ``<unk>``), checked to fit the positions."""
    check_instance("model", model, DecoderOnlyTransformer, "a DecoderOnlyTransformer")
    check_instance("vocab", vocab, Vocab, "a Vocab")
    check_vocab_size("vocab", vocab, model.config.tgt_vocab_size, "the model's config.tgt_vocab_size")
    ids = [vocab.sos_id, *vocab.encode(check_sentence("prompt", prompt))]
    if len(ids) > model.config.max_len:
        raise ValueError(f"prompt: the model reads at most config.max_len={model.config.max_len} positions, "
                         f"<sos> included; expected at most {model.config.max_len - 1} words, got {len(ids) - 1}")
    return ids


@torch.inference_mode()
def next_word_probs(model: DecoderOnlyTransformer, vocab: Vocab, prompt: str = "", *, temperature: float = 1.0,
                    top_k: int | None = None, top_p: float | None = None) -> Tensor:
    """(V,) float64: the distribution ``sample_sentences(prompt=prompt)`` draws its first word from, over the
    whole vocabulary in id order. ``<sos>`` and the prompt's words go in; ``never_drawn`` tokens are out, the
    temperature comes first, then the filter (``sampling.next_token_probs``); ``temperature=0``: greedy."""
    ids = _prompt_ids(model, vocab, prompt)
    model.eval()
    device = next(model.parameters()).device
    logits = model(torch.tensor([ids], device=device))[0, -1]  # (V,)
    return next_token_probs(logits, temperature=temperature, top_k=top_k, top_p=top_p,
                            banned_ids=never_drawn(vocab)).cpu()


def sample_sentences(model: DecoderOnlyTransformer, vocab: Vocab, n: int, *, max_new_tokens: int = MAX_NEW_TOKENS,
                     temperature: float = 1.0, top_k: int | None = None, top_p: float | None = None,
                     generator: torch.Generator | None = None, prompt: str = "") -> list[SampledSentence]:
    """``n`` sentences drawn from ``model`` after ``<sos>`` and the ``prompt``'s words (one batch), each until
    ``<eos>`` or ``max_new_tokens``; ``never_drawn`` tokens (``<pad>``, ``<sos>``, ``<unk>``) never are.
    Each text holds the words drawn (not the prompt). Sampling arguments as ``sampling.sample_continuation``
    (``temperature=0``: greedy); each draw is from the distribution ``next_word_probs`` gives."""
    ids = _prompt_ids(model, vocab, prompt)
    check_positive_int("n", n)
    device = next(model.parameters()).device
    prompt_ids = torch.tensor([ids] * n, dtype=torch.long, device=device)  # (n, 1 + words)
    rows = sample_continuation(model, prompt_ids, max_new_tokens=max_new_tokens, temperature=temperature,
                               top_k=top_k, top_p=top_p, generator=generator, eos_id=vocab.eos_id,
                               banned_ids=never_drawn(vocab)[1:])  # sample_continuation bans <pad> itself
    ended = [bool(row) and row[-1] == vocab.eos_id for row in rows]
    return [SampledSentence(vocab.decode(row[:-1] if end else row), end) for row, end in zip(rows, ended, strict=True)]


def sample_shares(drawn: Sequence[SampledSentence], training: Sequence[str]) -> dict[str, float]:
    """Fractions (0 to 1) of the ``drawn`` sentences: "ended" (drew ``<eos>``), "distinct", and each kind of
    ``oracle.SENTENCE_KINDS``: "memorised" (a ``training`` sentence), "new" (not one, but a sentence the
    grammar makes and its sampler could draw), "nonsense" (grammatical, with a pairing the sampler never
    draws), "ungrammatical". The four kinds add up to 1: every sentence is decided, none is left unverified."""
    if not isinstance(drawn, Sequence) or not drawn or not all(isinstance(s, SampledSentence) for s in drawn):
        raise empty_or_wrong_type(drawn)(
            f"drawn: expected a non-empty list of SampledSentence (sample_sentences), got {drawn!r:.80}")
    trained = set(check_token_list("training", training, item="sentence"))
    n = len(drawn)
    kinds = Counter(classify_sentence(s.text, trained) for s in drawn)
    return {"ended": sum(s.ended for s in drawn) / n, "distinct": len({s.text for s in drawn}) / n,
            **{kind: kinds[kind] / n for kind in SENTENCE_KINDS}}
