"""Decoding: turning a trained model's next-token distributions into a translation.

The decoder is auto-regressive (section 3): it "consumes the previously generated
symbols as additional input when generating the next". Every function here starts
from ``<sos>``, adds one token per step, and stops at ``<eos>`` or at ``max_len``
generated tokens, whichever comes first.

* ``greedy_decode``: the most probable token at every step.
* ``beam_search``: keeps the ``beam_size`` most probable prefixes (section 6.1 of the
  paper: "beam search with a beam size of 4 and length penalty alpha = 0.6").
* ``sample_decode``: draws each token at random, with a temperature, top-k and top-p
  (``sampling``: the filter shared with the decoder-only sampler).
* ``translate``: a sentence in, a sentence out (``generate`` is its batched core, which
  ``evaluation.translate_batch`` shares).

All of them run on a key/value cache: the model encodes the source once, and each step
feeds only the newest token (``model.decode(new_tokens, memory, src_ids, cache)``), the
keys and values of earlier tokens being read from ``cache``. ``greedy_decode`` also has
``use_cache=False``, which feeds the whole prefix at every step, to show what the cache
saves.

Any model with this interface can be decoded (``Transformer`` and ``rnn.Seq2SeqGRU`` do):
``encode(src_ids) -> memory`` (batch first), ``new_cache()`` (a cache whose
``index_select(index)`` keeps the batch rows ``index``), ``decode(tgt_ids, memory, src_ids,
cache) -> (B, T, d)`` and ``generator`` (hidden -> logits).

Generated tokens never include ``<pad>`` or ``<sos>``: their logits are set to -inf
(a model can put some probability on them, but they are never a valid next token).

Longer than 400 lines: greedy, beam and sampled decoding share one cached step loop, its checks
and ``translate``; apart, each would restate them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

import torch
from torch import Tensor, nn

from .checkpoint import Checkpoint
from .sampling import check_sampling_args, draw_next
from .tokenization import Vocab
from .validation import (
    check_bool,
    check_instance,
    check_int,
    check_iterable,
    check_number,
    check_positive_int,
    check_sentence,
    check_special_id,
)
from .validation_models import check_model_vocab, check_seq2seq_model, model_vocab_size
from .validation_tensors import check_ndim, check_tensor, check_token_ids, check_vectors, module_dtype
from .vocabularies import vocabularies_for
from .vocabulary import SpecialIds


class DecodingCache(Protocol):
    """What decoding needs from a model's cache: beam search reorders it after each step."""

    def index_select(self, index: Tensor) -> None: ...


class Seq2SeqModel(Protocol):
    """What decoding needs from a model."""

    generator: nn.Module

    def encode(self, src_ids: Tensor) -> Tensor: ...

    def new_cache(self) -> DecodingCache: ...

    def decode(
        self, tgt_ids: Tensor, memory: Tensor, src_ids: Tensor, cache: DecodingCache | None = None
    ) -> Tensor: ...


# --------------------------------------------------------------------------- shared pieces


def max_decode_length(model: nn.Module | None) -> int | None:
    """The most tokens the model can generate: the positions its decoder can read (``config.max_len``
    for a ``Transformer``), or None if it has no such limit (the RNN)."""
    if model is not None:  # None: no model, no limit
        check_instance("model", model, nn.Module, "a model (a torch module) or None")
    config = getattr(model, "config", None)
    if getattr(config, "positional", None) in ("sinusoidal", "learned", "rope"):
        return config.max_len
    return None


def check_decoding_args(model: object, src_ids: Tensor, special: SpecialIds, max_len: int) -> None:
    check_seq2seq_model("model", model)
    check_token_ids("src_ids", src_ids, model_vocab_size(model, "src"), "the model's source vocabulary")
    check_positive_int("max_len", max_len)
    check_instance("special", special, SpecialIds, "a vocabulary.SpecialIds (tgt_vocab.special_ids)")
    # Checked here, under their own names: as decoder input an out-of-range <sos> would be
    # reported as tgt_ids. (SpecialIds itself refused negative ids, which would silently ban the last
    # real token.)
    vocab_size = getattr(model.generator, "out_features", None)
    for name in ("sos", "eos", "pad"):
        check_special_id(f"special.{name}", getattr(special, name), vocab_size, optional=name == "eos")
    limit = max_decode_length(model)
    # The decoder reads <sos> plus all generated tokens but the last: max_len positions.
    if limit is not None and max_len > limit:
        raise ValueError(
            f"max_len: the model reads at most config.max_len={limit} target positions, "
            f"so it can generate at most {limit} tokens; got max_len={max_len}"
        )


def check_translation_model(model: object, src_vocab: object, tgt_vocab: object, need_source: bool = True) -> None:
    """An encoder-decoder (``Seq2SeqModel``, a torch module) and the vocabularies of its two sides, each
    of the size the model's config says (``need_source=False``: the source vocabulary is not needed)."""
    check_instance("model", model, nn.Module, "an encoder-decoder model (a Transformer or Seq2SeqGRU)")
    check_seq2seq_model("model", model)
    if check_bool("need_source", need_source):
        check_model_vocab("src_vocab", src_vocab, model, "src")
    check_model_vocab("tgt_vocab", tgt_vocab, model, "tgt")


def next_token_logits(model: Seq2SeqModel, hidden: Tensor, banned: Sequence[int]) -> Tensor:
    """(B, T, d) decoder output -> (B, V) float64 logits for the next token, banned ids at -inf.

    Float64 whatever the model's dtype: greedy, beam search and sampling (``sampling.draw_next``)
    follow one rule, so a float64 model's near-ties are decided on its own digits, and a float32
    model's logits are converted exactly."""
    if not hasattr(model, "generator"):
        raise TypeError(f"model: expected an encoder-decoder with .generator, got {type(model).__name__}")
    check_ndim("hidden", hidden, 3, "(batch, seq_len, d_model)")
    banned = check_iterable("banned", banned, "a list of token ids")
    vocab_size = getattr(model.generator, "out_features", None)
    banned = [check_special_id(f"banned[{i}]", token, vocab_size) for i, token in enumerate(banned)]
    weight = getattr(model.generator, "weight", None)
    if isinstance(weight, Tensor) and module_dtype(weight) is not None:
        check_vectors("hidden", hidden, weight.shape[1], dtype=weight.dtype)
    logits = model.generator(hidden[:, -1]).double()  # (B, V)
    logits[:, list(banned)] = float("-inf")
    return logits


def _strip(row: Sequence[int], eos_id: int | None) -> list[int]:
    """Generated ids up to (not including) the first <eos>."""
    out = []
    for token in row:
        if token == eos_id:
            break
        out.append(token)
    return out


# --------------------------------------------------------------------------- greedy


@torch.inference_mode()
def greedy_decode(
    model: Seq2SeqModel,
    src_ids: Tensor,
    special: SpecialIds,
    *,
    max_len: int,
    use_cache: bool = True,
) -> list[list[int]]:
    """The most probable next token, step after step, for a batch of sources.

    Returns one list of generated ids per source row, without ``<sos>`` and without
    ``<eos>`` (``special``: the target vocabulary's ``<sos>``, ``<eos>`` and ``<pad>``,
    ``tgt_vocab.special_ids``). A row stops at its first ``<eos>`` or after ``max_len`` tokens.
    ``special.eos=None`` never stops early: every row gets exactly ``max_len`` tokens
    (the decoding-speed benchmark uses it to time fixed-length outputs).

    ``use_cache=False`` re-runs the decoder over the whole prefix at every step (step
    t costs t positions instead of 1); the tokens are the same.
    """
    check_decoding_args(model, src_ids, special, max_len)
    check_bool("use_cache", use_cache)
    return _decode_one_token_at_a_time(model, src_ids, lambda logits: logits.argmax(dim=-1), special, max_len,
                                       use_cache)


def _decode_one_token_at_a_time(
    model: Seq2SeqModel,
    src_ids: Tensor,
    choose: Callable[[Tensor], Tensor],
    special: SpecialIds,
    max_len: int,
    use_cache: bool = True,
) -> list[list[int]]:
    """The loop shared by greedy decoding and sampling: ``choose`` turns (B, V) logits into the
    (B,) next tokens."""
    model.eval()
    batch = src_ids.shape[0]
    memory = model.encode(src_ids)  # (B, S, d)
    cache = model.new_cache() if use_cache else None
    tokens = torch.full((batch, 1), special.sos, dtype=torch.long, device=src_ids.device)  # (B, 1)
    finished = torch.zeros(batch, dtype=torch.bool, device=src_ids.device)
    for _ in range(max_len):
        fed = tokens[:, -1:] if use_cache else tokens  # only the new token, or the whole prefix
        hidden = model.decode(fed, memory, src_ids, cache)
        next_token = choose(next_token_logits(model, hidden, (special.pad, special.sos)))
        next_token = next_token.masked_fill(finished, special.pad)  # (B,); finished rows only mark time
        tokens = torch.cat([tokens, next_token[:, None]], dim=1)
        if special.eos is not None:
            finished |= next_token == special.eos
            if bool(finished.all()):
                break
    return [_strip(row[1:], special.eos) for row in tokens.tolist()]


# --------------------------------------------------------------------------- beam search


def length_penalty(length: int, alpha: float) -> float:
    """GNMT's length penalty (Wu et al. 2016): lp(Y) = ((5 + |Y|) / 6) ** alpha.

    A hypothesis scores log P(Y) / lp(Y). alpha = 0 ranks by the plain log-probability,
    which favours short outputs (every token multiplies in a probability below 1);
    alpha = 1 is close to the average log-probability per token. The paper uses 0.6.
    """
    length = check_int("length", length, minimum=0)
    alpha = check_number("alpha", alpha, minimum=0.0)
    return ((5.0 + length) / 6.0) ** alpha


@dataclass
class Hypothesis:
    tokens: list[int]  # generated ids, without <sos> and <eos>
    log_prob: float  # sum of the log-probabilities of the tokens (and of <eos> if it ended)
    score: float  # log_prob / length_penalty(len, alpha)


@dataclass
class BeamStep:
    """What one step of ``beam_search`` read and kept, passed to its ``observe`` callback
    (``decoding_steps`` builds the step-by-step trace from it: the trace is the search itself)."""

    step: int  # 0-based: this step chooses generated token step + 1
    prefixes: Tensor  # (B*k, step + 1) what each row had read, from <sos>
    log_probs: Tensor  # (B, k, V) float64 next-token log-probabilities of each row
    beam_scores: Tensor  # (B, k) summed log-probabilities of the rows' prefixes (-inf: no live beam)
    kept: list[list[tuple[int, int, float]]]  # per sentence, best first: (beam continued, token added, score)
    finished: list[list[Hypothesis]]  # per sentence: the hypotheses that ended at this step


@torch.inference_mode()
def beam_search(
    model: Seq2SeqModel,
    src_ids: Tensor,
    special: SpecialIds,
    *,
    max_len: int,
    beam_size: int = 4,
    alpha: float = 0.6,
    observe: Callable[[BeamStep], None] | None = None,
) -> list[Hypothesis]:
    """Beam search for a batch of sources; returns the best hypothesis of each.

    Each step extends the ``beam_size`` live prefixes of a sentence by every token; the ``2 * beam_size``
    best (by summed log-probability) fill its finished hypotheses and next beams (``_extend``). A sentence
    is done with ``beam_size`` finished; at ``max_len`` its live beams finish as they are. The best score
    ``log P / length_penalty(len, alpha)`` wins (the length counts ``<eos>``); ``beam_size=1`` is greedy
    decoding. All beams run as one batch of B * beam_size rows, each row's cached keys and values moved
    to the beam that continues it (``cache.index_select``). ``observe``, if given, gets a ``BeamStep``
    each step, after its choice, while the attention modules hold that step's weights.
    """
    cache = _check_beam_args(model, src_ids, special, max_len, beam_size, alpha, observe)
    batch, k, device = src_ids.shape[0], beam_size, src_ids.device
    src = src_ids.repeat_interleave(k, dim=0)  # (B*k, S): rows b*k .. b*k+k-1 are sentence b
    memory = model.encode(src)  # (B*k, S, d)
    tokens = torch.full((batch * k, 1), special.sos, dtype=torch.long, device=device)
    # Only the first beam of each sentence is live at the start: the others would be copies.
    beam_scores = torch.full((batch, k), float("-inf"), dtype=torch.float64, device=device)
    beam_scores[:, 0] = 0.0
    finished: list[list[Hypothesis]] = [[] for _ in range(batch)]  # per sentence
    done = [False] * batch
    for step in range(max_len):
        logits = next_token_logits(model, model.decode(tokens[:, -1:], memory, src, cache), (special.pad, special.sos))
        log_probs = logits.log_softmax(dim=-1).view(batch, k, -1)  # (B, k, V)
        candidates = (beam_scores[:, :, None] + log_probs).view(batch, -1)  # (B, k*V)
        top_scores, top_index = candidates.topk(min(2 * k, candidates.shape[1]), dim=1)  # (B, 2k), best first
        before = [len(hyps) for hyps in finished]
        kept = []  # per sentence, its k beams for the next step: (row continued, token added, score)
        for b in range(batch):
            beams = [] if done[b] else _extend(b, top_scores[b].tolist(), top_index[b].tolist(), log_probs.shape[-1],
                                               tokens, special, alpha, finished[b], k)
            done[b] = done[b] or len(finished[b]) >= k
            # a done sentence (or one short of candidates) keeps dead placeholder beams
            kept.append(beams + [(b * k, special.pad, float("-inf"))] * (k - len(beams)))
        if observe is not None:  # a sentence done at this step keeps no beam
            observe(BeamStep(step, tokens, log_probs, beam_scores, [[] if done[b] else [
                (row - b * k, token, score) for row, token, score in beams if score > float("-inf")]
                for b, beams in enumerate(kept)], [finished[b][before[b]:] for b in range(batch)]))
        rows, next_tokens, next_scores = zip(*(beam for beams in kept for beam in beams), strict=True)
        index = torch.tensor(rows, device=device)
        tokens = torch.cat([tokens.index_select(0, index), torch.tensor(next_tokens, device=device)[:, None]], dim=1)
        beam_scores = torch.tensor(next_scores, dtype=torch.float64, device=device).view(batch, k)
        if step == max_len - 1 or all(done):
            break
        cache.index_select(index)  # beam i of the next step continues beam index[i] of this one
    for b in range(batch):  # at max_len, the live beams are finished as they stand
        if not done[b]:
            finished[b] += [_hypothesis(tokens[b * k + beam], float(beam_scores[b, beam]), special, alpha)
                            for beam in range(k) if float(beam_scores[b, beam]) > float("-inf")]
    return [max(hyps, key=lambda h: h.score) for hyps in finished]


def _check_beam_args(model: Seq2SeqModel, src_ids: Tensor, special: SpecialIds, max_len: int, beam_size: int,
                     alpha: float, observe: object) -> object:
    """``beam_search``'s arguments; the model (put in eval mode)'s new cache, which beam search reorders."""
    check_decoding_args(model, src_ids, special, max_len)
    if observe is not None and not callable(observe):
        raise TypeError(f"observe: expected a callable taking a BeamStep, or None, got {type(observe).__name__}")
    check_positive_int("beam_size", beam_size)
    check_number("alpha", alpha, minimum=0.0)  # a length-penalty exponent; inf would make every score 0
    model.eval()
    cache = model.new_cache()
    if not callable(getattr(cache, "index_select", None)):
        raise TypeError(f"model: expected new_cache() to give a cache with an index_select(index) method "
                        f"(beam search reorders it), got a {type(cache).__name__}")
    return cache


def _hypothesis(row: Tensor, log_prob: float, special: SpecialIds, alpha: float) -> Hypothesis:
    """A finished hypothesis from a row of tokens (<sos> first, <eos> last if it ended with it)."""
    ids = row[1:].tolist()
    return Hypothesis(_strip(ids, special.eos), log_prob, log_prob / length_penalty(len(ids), alpha))


def _extend(b: int, top_scores: list[float], top_index: list[int], vocab: int, tokens: Tensor,
            special: SpecialIds, alpha: float, finished: list[Hypothesis], k: int) -> list[tuple[int, int, float]]:
    """Sentence ``b``'s best extensions, best first, read in order: one ending in ``<eos>`` joins
    ``finished`` if it ranks among the first ``k``; the others, up to ``k``, are the next beams
    (row continued, token added, summed log-probability)."""
    beams = []
    for rank, (score, flat) in enumerate(zip(top_scores, top_index, strict=True)):
        if score == float("-inf"):
            break
        beam, token = divmod(flat, vocab)
        row = b * k + beam
        if token == special.eos:
            if rank < k:  # an <eos> ranked below the live beams would never have been kept
                finished.append(_hypothesis(torch.cat([tokens[row], tokens.new_tensor([token])]), score, special,
                                            alpha))
            continue
        beams.append((row, token, score))
        if len(beams) == k:
            break
    return beams


# --------------------------------------------------------------------------- sampling


@torch.inference_mode()
def sample_decode(model: Seq2SeqModel, src_ids: Tensor, special: SpecialIds, *, max_len: int, temperature: float = 1.0,
                  top_k: int | None = None, top_p: float | None = None,
                  generator: torch.Generator | None = None) -> list[list[int]]:
    """Draw each next token from softmax(logits / temperature), restricted to the ``top_k``
    most probable tokens if ``top_k`` is given, and to the nucleus of ``top_p`` (the smallest
    set of most probable tokens whose probability reaches it) if ``top_p`` is given
    (``sampling.filter_logits``).

    A temperature below 1 sharpens the distribution (towards greedy), above 1 flattens
    it. Pass a seeded ``torch.Generator`` (on the model's device) for repeatable draws.
    Returns ids like ``greedy_decode``.
    """
    check_decoding_args(model, src_ids, special, max_len)
    temperature = check_sampling_args(temperature, top_k, top_p, generator)

    def draw(logits: Tensor) -> Tensor:  # (B, V) -> (B,)
        return draw_next(logits, temperature=temperature, top_k=top_k, top_p=top_p, generator=generator)

    return _decode_one_token_at_a_time(model, src_ids, draw, special, max_len)


# --------------------------------------------------------------------------- sentences


# The length rule, in one place: a translation may take MAX_LEN_PER_SOURCE_TOKEN * S + MAX_LEN_EXTRA
# tokens, capped by the model's positional table. browser.model writes it into the page's manifest.
MAX_LEN_PER_SOURCE_TOKEN = 2
MAX_LEN_EXTRA = 10


def default_max_len(model: nn.Module | None, src_len: int) -> int:
    """How many tokens a translation may take: twice the source length plus 10, capped by the
    model's positional table (``max_decode_length``)."""
    check_int("src_len", src_len, minimum=1)
    limit = max_decode_length(model)
    wanted = MAX_LEN_PER_SOURCE_TOKEN * src_len + MAX_LEN_EXTRA
    return wanted if limit is None else min(wanted, limit)


def generate(model: Seq2SeqModel, src_ids: Tensor, tgt_vocab: Vocab, *, beam_size: int = 1, alpha: float = 0.6,
             max_len: int | None = None) -> list[list[int]]:
    """Generated ids for each row of ``src_ids`` (B, S): greedy with ``beam_size=1``, beam search
    otherwise. ``max_len`` defaults to ``default_max_len(model, S)``."""
    check_translation_model(model, None, tgt_vocab, need_source=False)
    check_tensor("src_ids", src_ids)
    check_positive_int("beam_size", beam_size)
    check_number("alpha", alpha, minimum=0.0)  # checked with greedy too: a bad alpha is a bad call either way
    if max_len is None:
        max_len = default_max_len(model, src_ids.shape[-1])
    if beam_size == 1:
        return greedy_decode(model, src_ids, tgt_vocab.special_ids, max_len=max_len)
    return [h.tokens for h in beam_search(model, src_ids, tgt_vocab.special_ids, max_len=max_len, beam_size=beam_size,
                                          alpha=alpha)]


@dataclass
class Translation:
    text: str  # the translation, detokenised by the target vocabulary
    tokens: list[str]  # the generated target tokens
    unknown_words: list[str]  # source words, as typed, missing from the source vocabulary (read as <unk>)
    src_ids: list[int]  # what the encoder read
    ids: list[int]  # the generated target ids, without <sos> and <eos>
    ended: bool  # the model produced <eos> (False: it stopped at the length limit)

    def __str__(self) -> str:
        """The text; and, when words were unknown, a second line saying which (``print`` shows it:
        a model reading ``<unk>`` still writes fluent words)."""
        if not self.unknown_words:
            return self.text
        words = ", ".join(repr(word) for word in dict.fromkeys(self.unknown_words))
        return f"{self.text}\n(warning: not in the model's vocabulary, read as <unk>: {words})"


def translate(model: Seq2SeqModel | Checkpoint, sentence: str, src_vocab: Vocab | None = None,
              tgt_vocab: Vocab | None = None, *, beam_size: int = 1, alpha: float = 0.6,
              max_len: int | None = None) -> Translation:
    """Translate one sentence: greedy with ``beam_size=1``, beam search otherwise.

    ``model`` may be a ``checkpoint.Checkpoint`` (``load_checkpoint``'s, ``pretrained.book_model()``):
    its model is used. The vocabularies default to the model's own (a model from
    ``checkpoint.load_checkpoint`` carries them, with the tokenizer of its text); one that is not the
    model's own is refused (``vocabularies.vocabularies_for``). ``max_len`` defaults to ``default_max_len``. A sentence
    longer than the model's positional table is refused (``ValueError``: nothing is cut silently);
    unknown words are read as ``<unk>`` and listed in ``unknown_words`` as typed (a word of which
    BPE finds an unknown piece, whole), and printing the result shows them.
    """
    if isinstance(model, Checkpoint):
        model = model.model
    check_sentence("sentence", sentence)
    vocabularies = vocabularies_for(model, src_vocab, tgt_vocab)
    src_vocab, tgt_vocab = vocabularies.src, vocabularies.tgt
    check_translation_model(model, src_vocab, tgt_vocab)
    check_positive_int("beam_size", beam_size)
    ids, unknown = vocabularies.encode_with_unknowns(sentence)
    if not ids:
        raise ValueError(f"sentence: expected at least one token, got {sentence!r}")
    limit = max_decode_length(model)
    if limit is not None and len(ids) > limit:  # refused, never cut: the rest would be silently dropped
        raise ValueError(f"sentence: {len(ids)} tokens, but the model reads at most config.max_len={limit}")
    device = next(model.parameters()).device
    src_ids = torch.tensor([ids], dtype=torch.long, device=device)
    if max_len is None:
        max_len = default_max_len(model, len(ids))
    (out,) = generate(model, src_ids, tgt_vocab, beam_size=beam_size, alpha=alpha, max_len=max_len)
    tokens = [tgt_vocab.itos[i] for i in out]
    text = tgt_vocab.decode(out) if vocabularies.tokenizer is None else vocabularies.to_text(tokens)
    return Translation(text, tokens, unknown, ids, out, ended=len(out) < max_len)
