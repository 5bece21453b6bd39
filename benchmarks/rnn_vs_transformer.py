"""The RNN chapter's claim, measured: without attention, accuracy falls as sentences grow.

Trains the GRU encoder-decoder (``pretrained.train_book_model(architecture="gru")``) and the book's Transformer
(``pretrained.train_book_model``) on the same corpus, batches, loss and schedule, for the
same training time, then prints exact match and BLEU on the test split by source length.

    python benchmarks/rnn_vs_transformer.py [--threads 2] [--budget 120]
"""

from __future__ import annotations

import argparse
import dataclasses
import os

import harness  # noqa: F401 -- first: it sets OpenMP's wait policy before torch starts
import torch

from transformer_lib.evaluation import evaluate_translation
from transformer_lib.models import count_parameters
from transformer_lib.pretrained import BOOK_RECIPE, book_corpus, train_book_model


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--budget", type=float, default=120.0, help="seconds of training for each model")
    parser.add_argument("--hidden", type=int, default=256, help="GRU state size")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    print(f"threads: {args.threads}; load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    corpus = book_corpus()
    recipe = dataclasses.replace(BOOK_RECIPE, rnn_hidden_size=args.hidden)
    results = {}
    for name, architecture in (("GRU", "gru"), ("Transformer", "transformer")):
        model, src_vocab, tgt_vocab, history = train_book_model(recipe, corpus=corpus, architecture=architecture,
                                                                time_budget_s=args.budget, steps=None,
                                                                progress=False)
        result = evaluate_translation(model, corpus.test, src_vocab, tgt_vocab)
        results[name] = result
        print(f"{name}: {count_parameters(model):,} parameters, {history.steps[-1]} steps in "
              f"{history.train_time_s:.0f} s; test exact match {result.exact_match:.3f}, BLEU {result.bleu:.1f}")
    print(f"{'source words':>12} {'pairs':>6} " + " ".join(f"{n + ' EM':>15} {n + ' BLEU':>17}" for n in results))
    buckets = {name: result.by_length() for name, result in results.items()}
    for i, bucket in enumerate(buckets["GRU"]):
        cells = " ".join(f"{buckets[n][i].exact_match:15.3f} {buckets[n][i].bleu:17.1f}" for n in results)
        print(f"{bucket.low:5d} - {bucket.high - 1:4d} {bucket.count:6d} {cells}")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
