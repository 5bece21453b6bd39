"""Chapter 1's comparison of the three shipped translators, computed once and stored.

``compare_book_models`` asks the GRU without attention, the GRU with attention and the Transformer
(``book_rnn``, ``book_rnn_attention``, ``book_model``) to translate every second sentence of the
held-out test split (greedy decoding, in float64 as chapter 1 computes) and scores exact match and
BLEU, overall and by source length. That takes about 4 s of one core, most of a chapter's budget,
for numbers that are the same on every machine: ``tools/rnn_comparison.py`` stores them in
``rnn_comparison.json`` (package data: chapter 1 downloaded alone finds it), chapter 1 shows and
asserts on the stored numbers and keeps the live computation as an optional cell, and
``tests/test_rnn_comparison.py`` checks that the stored numbers are what this function computes.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import torch

from ..checkpoint import Checkpoint
from ..evaluation import LengthBucket, accuracy_by_length, evaluate_translation
from .recipe import book_corpus
from .shipped import book_rnn, book_rnn_attention
from .snapshots import book_model

# The chapter's names for the three models, in the order it shows them.
BOOK_TRANSLATORS: dict[str, Callable[..., Checkpoint]] = {
    "GRU encoder-decoder (no attention)": book_rnn,
    "GRU with attention": book_rnn_attention,
    "Transformer": book_model,
}
COMPARISON_PATH = Path(__file__).with_name("rnn_comparison.json")


@dataclass(frozen=True)
class TranslatorScores:
    """One model's scores on the sample: exact match (0 to 1) and BLEU (0 to 100), overall and by source length."""

    exact_match: float
    bleu: float
    by_length: list[LengthBucket]


def comparison_sample() -> list[tuple[str, str]]:
    """Every second pair of the book corpus's test split: sentences of every length, half the work."""
    return book_corpus().test[::2]


def compare_book_models(pairs: Sequence[tuple[str, str]] | None = None) -> dict[str, TranslatorScores]:
    """Each of ``BOOK_TRANSLATORS`` translating ``pairs`` (default ``comparison_sample()``), scored."""
    pairs = comparison_sample() if pairs is None else pairs
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)  # as chapter 1 computes: the models and every tensor they make
    try:
        scores = {}
        for name, load in BOOK_TRANSLATORS.items():
            checkpoint = load()
            result = evaluate_translation(checkpoint.model, pairs, checkpoint.src_vocab, checkpoint.tgt_vocab)
            scores[name] = TranslatorScores(result.exact_match, result.bleu,
                                            accuracy_by_length(result.sources, result.hypotheses, result.references))
    finally:
        torch.set_default_dtype(previous)
    return scores


def scores_to_json(scores: dict[str, TranslatorScores], sentences: int) -> str:
    """The JSON that ``load_comparison`` reads back: every model's scores, and the sample's size."""
    return json.dumps({"sample": "every second pair of book_corpus().test", "sentences": sentences,
                       "models": {name: asdict(s) for name, s in scores.items()}}, indent=1) + "\n"


def load_comparison(path: Path | str = COMPARISON_PATH) -> tuple[int, dict[str, TranslatorScores]]:
    """What ``tools/rnn_comparison.py`` stored: the number of sentences, and each model's scores."""
    data = json.loads(Path(path).read_text())
    scores = {name: TranslatorScores(s["exact_match"], s["bleu"], [LengthBucket(**b) for b in s["by_length"]])
              for name, s in data["models"].items()}
    return data["sentences"], scores


def same_scores(a: dict[str, TranslatorScores], b: dict[str, TranslatorScores], tolerance: float = 1e-9) -> bool:
    """Whether two comparisons agree: the same models, bucket edges and counts, every score within ``tolerance``."""
    def numbers(s: TranslatorScores) -> list[float]:
        buckets = (x for b in s.by_length for x in (b.low, b.high, b.count, b.exact_match, b.bleu))
        return [len(s.by_length), s.exact_match, s.bleu, *buckets]

    def close(x: list[float], y: list[float]) -> bool:
        return len(x) == len(y) and all(
            math.isclose(p, q, rel_tol=0, abs_tol=tolerance) for p, q in zip(x, y, strict=True))

    return a.keys() == b.keys() and all(close(numbers(a[k]), numbers(b[k])) for k in a)
