"""The book's model on a CPU: how long until 95% of the held-out test sentences come out exactly right?

Trains ``training.train_book_model`` (the recipe in ``training.BOOK_RECIPE``) for a fixed
time budget of training time. Every ``--eval-every`` steps the model translates the whole
test split (greedy decoding), which never influences training: the time it takes is
not counted in the training time, and training runs its full budget whatever the scores.
Prints the first training time at which exact match on test reached the target, and the
final exact match and BLEU (sacrebleu) on test, on its novel adjective-noun combinations,
and by sentence length.

    python benchmarks/train_book_model.py [--threads 2] [--budget 120] [--eval-every 100]

Other jobs on the machine slow each step down, so the load average is printed too.
"""

from __future__ import annotations

import argparse
import os
import time

import harness  # noqa: F401 -- first: it sets OpenMP's wait policy before torch starts
import torch

from transformer_lib.evaluation import evaluate_translation
from transformer_lib.pretrained import BOOK_RECIPE, book_corpus, book_vocabularies, exact_match_on, train_book_model


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--budget", type=float, default=120.0, help="seconds of training")
    parser.add_argument("--eval-every", type=int, default=100, help="steps between evaluations on test")
    parser.add_argument("--target", type=float, default=0.95, help="exact match on test")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    print(f"recipe: {BOOK_RECIPE}")
    print(f"threads: {args.threads}; load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    corpus = book_corpus()
    src_vocab, tgt_vocab = book_vocabularies(corpus)
    print(f"corpus: {len(corpus.train)} train, {len(corpus.test)} test pairs ({len(corpus.novel)} with novel "
          f"adjective-noun combinations); vocabularies {len(src_vocab)} / {len(tgt_vocab)} words")

    evaluate = exact_match_on("test", corpus, src_vocab, tgt_vocab)  # {"test_exact_match", "test_bleu"}

    started = time.perf_counter()
    model, _, _, history = train_book_model(
        time_budget_s=args.budget, steps=None, corpus=corpus, progress=False, evaluate=evaluate,
        eval_every=args.eval_every,
    )
    wall = time.perf_counter() - started
    print(f"trained {history.steps[-1]} steps in {history.train_time_s:.1f} s of training "
          f"({1000 * history.train_time_s / history.steps[-1]:.0f} ms a step; evaluation took a further "
          f"{history.eval_time_s:.1f} s; {wall:.0f} s wall clock)")
    print(f"{'step':>6} {'train s':>8} {'loss':>6} {'test EM':>8} {'BLEU':>6}")
    for e in history.evaluations:
        loss = history.losses[int(e["step"]) - 1]
        print(f"{int(e['step']):6d} {e['elapsed_s']:8.1f} {loss:6.3f} {e['test_exact_match']:8.3f} "
              f"{e['test_bleu']:6.1f}")

    reached = history.first_reaching("test_exact_match", args.target)
    if reached is None:
        print(f"target {args.target:.0%} exact match on test: NOT reached within {args.budget:.0f} s")
    else:
        print(f"target {args.target:.0%} exact match on test: reached after {reached['elapsed_s']:.1f} s "
              f"of training (step {int(reached['step'])})")

    final = evaluate_translation(model, corpus.test, src_vocab, tgt_vocab)
    novel = evaluate_translation(model, corpus.novel, src_vocab, tgt_vocab)
    print(f"final, test ({len(corpus.test)} pairs): exact match {final.exact_match:.3f}, BLEU {final.bleu:.1f}")
    print(f"final, novel combinations only ({len(corpus.novel)} pairs): exact match {novel.exact_match:.3f}, "
          f"BLEU {novel.bleu:.1f}")
    for bucket in final.by_length():
        print(f"  source {bucket.low:2d}-{bucket.high - 1:2d} words: {bucket.count:4d} pairs, "
              f"exact match {bucket.exact_match:.3f}, BLEU {bucket.bleu:.1f}")
    for source, hypothesis, reference in final.errors()[:5]:
        print(f"  error: {source!r} -> {hypothesis!r} (expected {reference!r})")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
