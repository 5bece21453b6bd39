"""Where cross-attention read when the decoder wrote a wrong word (chapter 7's copied phrases).

A *copied phrase* (``oracle.classify_error``) is a word the sentence has in another of its phrases,
written in this one. ``wrong_word_rows`` replays each such output teacher-forced on the model's own words
and keeps the cross-attention row of the decoder position that wrote the first wrong word: where the
decoder read when it went wrong. Each row comes with the source positions it *should* have read (those of
the reference's word there, ``oracle.source_positions``) and those of the word it wrote instead (the
copied one). ``own_word_weights`` is the same measurement on outputs that are right: the weight each
content word's row puts on its own source word, the baseline the errors are compared with.

The rows are the mean over the heads of each layer; the measurements read the last layer, the one whose
output the generator reads.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import Tensor

from .capture import capture_attention
from .decoding import check_translation_model
from .models import Transformer
from .oracle import first_difference, source_positions
from .tokenization import Vocab, pad_sequences
from .validation import check_instance, check_pairs, check_token_list, empty_or_wrong_type

END = "(end)"  # the reference ended where the output went on


@dataclass(frozen=True)
class WrongWordRow:
    """One wrong output's first wrong word and the cross-attention row that wrote it."""

    source: str
    output: str
    reference: str
    position: int  # the wrong word's index in the output: the decoder row that wrote it
    wrong: str  # the word written
    expected: str  # the reference's word there, or END
    rows: Tensor  # (layers, S): the row of each layer, mean over its heads
    expected_keys: tuple[int, ...]  # source positions of the expected word (none for END)
    copied_keys: tuple[int, ...]  # source positions of the written word's lexeme

    @property
    def expected_weight(self) -> float:
        """The last layer's weight on the source word it should have read (0 when there is none)."""
        return float(self.rows[-1, list(self.expected_keys)].sum()) if self.expected_keys else 0.0

    @property
    def copied_weight(self) -> float:
        """The last layer's weight on the source word(s) of the word it wrote."""
        return float(self.rows[-1, list(self.copied_keys)].sum())

    @property
    def distance(self) -> int | None:
        """How many source places the copied word stands from the expected one (None without one)."""
        if not self.expected_keys:
            return None
        return min(abs(c - e) for c in self.copied_keys for e in self.expected_keys)


def _cross_rows(model: Transformer, sources: list[str], outputs: list[list[str]], src_vocab: Vocab,
                tgt_vocab: Vocab) -> Tensor:
    """(B, layers, T, S) cross-attention, mean over heads, teacher-forced on ``outputs``, in one pass."""
    src = pad_sequences([src_vocab.encode(s) for s in sources], pad_id=src_vocab.pad_id)  # (B, S)
    tgt = pad_sequences([[tgt_vocab.sos_id, *tgt_vocab.encode(" ".join(o))] for o in outputs],
                        pad_id=tgt_vocab.pad_id)  # (B, T): <sos> and the words, each row writing the next
    device = next(model.parameters()).device
    maps = capture_attention(model, src.to(device), tgt.to(device))
    return torch.stack([layer.mean(dim=1) for layer in maps.cross], dim=1).cpu()  # (B, layers, T, S)


def wrong_word_rows(model: Transformer, errors: Sequence[tuple[str, str, str]], src_vocab: Vocab,
                    tgt_vocab: Vocab) -> list[WrongWordRow]:
    """For each (source, output, reference) of ``errors`` (``EvaluationResult.errors()``), the
    cross-attention row that wrote the output's first wrong word (``oracle.first_difference``)."""
    check_instance("model", model, Transformer, "a transformer_lib.models.Transformer")
    check_translation_model(model, src_vocab, tgt_vocab)
    if isinstance(errors, str) or not isinstance(errors, Sequence) or not errors:
        raise empty_or_wrong_type(errors)(
            f"errors: expected a non-empty sequence of (source, output, reference), got {errors!r:.60}")
    triples = [tuple(check_token_list(f"errors[{i}]", e, item="sentence")) for i, e in enumerate(errors)]
    for i, triple in enumerate(triples):
        if len(triple) != 3 or triple[1].split() == triple[2].split():
            raise ValueError(f"errors[{i}]: expected (source, output, reference) with a wrong output, "
                             f"got {triple!r:.80}")
    rows = _cross_rows(model, [s for s, _, _ in triples], [o.split() for _, o, _ in triples], src_vocab, tgt_vocab)
    found = []
    for (source, output, reference), row in zip(triples, rows, strict=True):
        at = first_difference(output, reference)
        words, ref = output.split(), reference.split()
        wrong = words[at] if at < len(words) else END
        expected = ref[at] if at < len(ref) else END
        s = len(source.split())
        expected_keys = () if expected == END else source_positions(expected, source)
        copied = () if wrong == END else source_positions(wrong, source)
        found.append(WrongWordRow(source, output, reference, at, wrong, expected, row[:, at, :s].clone(),
                                  tuple(k for k in expected_keys if k not in copied), copied))
    return found


def own_word_weights(model: Transformer, pairs: Sequence[tuple[str, str]], src_vocab: Vocab,
                     tgt_vocab: Vocab) -> list[float]:
    """For (source, translation) pairs that the model translates right: for each word of the translation
    whose lexeme stands once in the source (a noun, adjective, verb or preposition), the last layer's
    cross-attention weight on that source word at the row that wrote it."""
    check_instance("model", model, Transformer, "a transformer_lib.models.Transformer")
    check_translation_model(model, src_vocab, tgt_vocab)
    pairs = check_pairs("pairs", pairs)
    rows = _cross_rows(model, [s for s, _ in pairs], [t.split() for _, t in pairs], src_vocab, tgt_vocab)
    weights = []
    for (source, translation), row in zip(pairs, rows, strict=True):
        for at, word in enumerate(translation.split()):
            keys = source_positions(word, source)
            if keys and list(keys) == list(range(keys[0], keys[0] + len(keys))):  # once: a word or a phrase
                weights.append(float(row[-1, at, list(keys)].sum()))
    return weights

