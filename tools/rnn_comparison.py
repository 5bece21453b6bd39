"""Store chapter 1's comparison of the three shipped translators (GRU, GRU with attention, Transformer).

Runs ``transformer_lib.pretrained.comparison.compare_book_models`` (every second test sentence,
greedy decoding, float64, one thread) and writes ``transformer_lib/pretrained/rnn_comparison.json``,
which chapter 1 shows; ``tests/test_rnn_comparison.py`` checks that the file is what the code computes.
Run it again after the shipped weights or the corpus change.

    python tools/rnn_comparison.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from transformer_lib.pretrained.comparison import (  # noqa: E402
    COMPARISON_PATH,
    compare_book_models,
    comparison_sample,
    scores_to_json,
)


def main() -> None:
    torch.set_num_threads(1)
    scores = compare_book_models()
    COMPARISON_PATH.write_text(scores_to_json(scores, len(comparison_sample())))
    for name, s in scores.items():
        print(f"{name:36s} exact match {100 * s.exact_match:5.1f}%, BLEU {s.bleu:5.1f}")
    print(f"wrote {COMPARISON_PATH}")


if __name__ == "__main__":
    main()
