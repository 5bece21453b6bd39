"""Decoding one sentence step by step, greedy or beam search, as data for the decoding stepper.

``trace_decoding`` runs ``decoding.beam_search`` itself with an observer (its ``observe`` hook):
the trace is what the search read and chose, not a second copy of the search. With
``beam_size=1`` beam search is greedy decoding (``greedy_trace.trace_greedy`` is this trace's
greedy view). At every step it records, for each live beam, the prefix it had read, its
log-probability, its ``top_k`` next tokens with their probabilities and the cross-attention row of
the query that reads its last token (the row behind the choice); then the best extension of all
(the token being chosen), the beams kept and the hypotheses that ended. The page computes the same
(``window.bookModel.trace`` in ``browser/static/book-trace.js``; tests/test_live_stepper.py compares).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field

import torch
from torch import Tensor

from .capture import keep_attention_weights
from .decoding import (
    BeamStep,
    Seq2SeqModel,
    beam_search,
    check_decoding_args,
    check_translation_model,
    default_max_len,
    length_penalty,
    max_decode_length,
)
from .tokenization import Vocab
from .validation import check_number, check_positive_int, check_sentence, check_token_list
from .validation_models import check_vocab_size
from .vocabulary import SpecialIds

TOP_K = 5  # the next tokens a step records, best first (the page's trace too)


@dataclass
class SearchTrace:
    """The steps of one search. Each step is a dict (JSON-ready, as the page's ``trace`` returns it):

    * ``step``: 1, 2, ... (step n chooses the n-th generated token);
    * ``beams``: the live beams the decoder read, best first, each ``{"prefix": tokens from <sos>,
      "log_prob": float, "candidates": [[token, probability], ...] (top_k, best first),
      "cross": [layer][head][source position] weights of the query reading the prefix's last token}``;
    * ``chosen``: ``{"beam": index into beams, "token": str, "probability": float}``, the best extension;
    * ``kept``: the beams of the next step, ``{"beam": the beam it continues, "tokens": generated
      tokens, "log_prob": float}``;
    * ``finished``: the hypotheses that ended with ``<eos>`` here (or, at the last step of a search cut
      at ``max_len``, the beams finished as they stand), ``{"tokens", "log_prob", "score"}``.
    """

    beam_size: int
    max_len: int
    src_tokens: list[str]
    steps: list[dict] = field(default_factory=list)
    tokens: list[str] = field(default_factory=list)  # the best hypothesis, without <eos>
    ended: bool = False  # the best hypothesis ended with <eos> (False: cut at max_len)
    alpha: float = 0.6  # the length penalty's exponent the finished hypotheses were scored with

    def __len__(self) -> int:
        return len(self.steps)

    def payload(self) -> dict:
        """As a JSON-ready dict (``window.bookModel.trace`` returns the same keys)."""
        return asdict(self)


def _candidates(log_probs: Tensor, itos: Sequence[str], top_k: int) -> list[list]:
    probs = log_probs.exp()  # (V,)
    top = probs.topk(min(top_k, probs.shape[0]))
    return [[itos[i], float(p)] for p, i in zip(top.values.tolist(), top.indices.tolist(), strict=True)]


@torch.inference_mode()
def trace_decoding(
    model: Seq2SeqModel,
    src_ids: Tensor,
    itos: Sequence[str],
    special: SpecialIds,
    *,
    max_len: int,
    beam_size: int = 1,
    alpha: float = 0.6,
    top_k: int = TOP_K,
    src_itos: Sequence[str] | None = None,
) -> SearchTrace:
    """``beam_search`` of one source (``src_ids`` of shape (1, S)), recorded step by step.

    ``itos`` maps target ids to tokens (``src_itos`` source ids, for ``src_tokens``). The model
    needs decoder layers with a ``cross_attn`` (a ``models.Transformer``) for the attention rows.
    """
    check_decoding_args(model, src_ids, special, max_len)
    if src_ids.shape[0] != 1:
        raise ValueError(f"src_ids: expected one sentence, shape (1, src_len), got shape {tuple(src_ids.shape)}")
    beam_size = check_positive_int("beam_size", beam_size)
    check_number("alpha", alpha, minimum=0.0)
    top_k = check_positive_int("top_k", top_k)
    check_token_list("itos", itos)
    check_vocab_size("itos", itos, model.generator.out_features, "the model's output layer (generator)")
    layers = getattr(getattr(model, "decoder", None), "layers", None)
    if layers is None or not all(hasattr(layer, "cross_attn") for layer in layers):
        raise TypeError(f"model: expected a Transformer (decoder layers with cross_attn), got {type(model).__name__}")
    if src_itos is not None:
        check_token_list("src_itos", src_itos)
    trace = SearchTrace(beam_size, max_len, [], alpha=float(alpha))
    ended_with_eos = []  # beam_search's own hypotheses: the best is one of them, or was cut at max_len

    def record(seen: BeamStep) -> None:
        cross = [layer.cross_attn.last_weights[:, :, -1].tolist() for layer in layers]  # per layer: (k, h, S)
        scores = seen.beam_scores[0]  # (k,)
        live = [row for row in range(beam_size) if scores[row] > float("-inf")]
        beams = [{"prefix": [itos[i] for i in seen.prefixes[row].tolist()], "log_prob": float(scores[row]),
                  "candidates": _candidates(seen.log_probs[0, row], itos, top_k),
                  "cross": [layer[row] for layer in cross]} for row in live]
        extended = (scores[:, None] + seen.log_probs[0]).view(-1)  # (k*V,) as beam_search ranks them
        row, token = divmod(int(extended.argmax()), seen.log_probs.shape[-1])
        kept = [{"beam": live.index(beam), "tokens": [*beams[live.index(beam)]["prefix"][1:], itos[t]],
                 "log_prob": s} for beam, t, s in seen.kept[0]]
        ended_with_eos.extend(seen.finished[0])
        finished = [{"tokens": [itos[i] for i in h.tokens], "log_prob": h.log_prob, "score": h.score}
                    for h in seen.finished[0]]
        trace.steps.append({"step": seen.step + 1, "beams": beams, "kept": kept, "finished": finished,
                            "chosen": {"beam": live.index(row), "token": itos[token],
                                       "probability": float(seen.log_probs[0, row, token].exp())}})

    with keep_attention_weights(model):
        (best,) = beam_search(model, src_ids, special, max_len=max_len, beam_size=beam_size, alpha=alpha,
                              observe=record)
    last = trace.steps[-1]
    if last["kept"] and last["step"] == max_len:  # cut at max_len: its live beams finish as they stand
        last["finished"] += [{"tokens": beam["tokens"], "log_prob": beam["log_prob"],
                              "score": beam["log_prob"] / length_penalty(len(beam["tokens"]), alpha)}
                             for beam in last["kept"]]
        last["kept"] = []
    # the source's tokens once the search has read src_ids (the encoder checks they are token ids)
    if src_itos is not None and int(src_ids.max()) >= len(src_itos):
        raise ValueError(f"src_itos: holds {len(src_itos)} tokens, but src_ids has id {int(src_ids.max())}")
    trace.src_tokens = [src_itos[i] if src_itos is not None else str(i) for i in src_ids[0].tolist()]
    trace.tokens = [itos[i] for i in best.tokens]
    trace.ended = any(h is best for h in ended_with_eos)
    return trace


def trace_translation(model: Seq2SeqModel, sentence: str, src_vocab: Vocab, tgt_vocab: Vocab, *, beam_size: int = 1,
                      alpha: float = 0.6, top_k: int = 5) -> SearchTrace:
    """``trace_decoding`` of a sentence, as ``decoding.translate`` reads and decodes it (its length
    rule ``default_max_len``; a sentence longer than the model reads is refused)."""
    check_sentence("sentence", sentence)
    check_translation_model(model, src_vocab, tgt_vocab)
    ids, _ = src_vocab.encode_with_unknowns(sentence)
    if not ids:
        raise ValueError(f"sentence: expected at least one token, got {sentence!r}")
    limit = max_decode_length(model)
    if limit is not None and len(ids) > limit:
        raise ValueError(f"sentence: {len(ids)} tokens, but the model reads at most config.max_len={limit}")
    device = next(model.parameters()).device
    return trace_decoding(model, torch.tensor([ids], device=device), tgt_vocab.itos, tgt_vocab.special_ids,
                          max_len=default_max_len(model, len(ids)), beam_size=beam_size, alpha=alpha, top_k=top_k,
                          src_itos=src_vocab.itos)
