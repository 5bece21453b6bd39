"""Figures for the demo corpus: split sizes, vocabularies, lengths, one example per grammar rule.

    PYTHONPATH=. python benchmarks/corpus_stats.py [--seed 0] [--n-pairs 15000]

Everything printed is measured in this run (generation time included).
"""

from __future__ import annotations

import argparse
import time
from collections import Counter

from transformer_lib.corpus import iter_rule_examples, join_elisions, make_corpus, render, split_by_length
from transformer_lib.tokenization import BPETokenizer, Vocab


def histogram(lengths: list[int], width: int = 50) -> None:
    counts = Counter(lengths)
    top = max(counts.values())
    for length in range(min(counts), max(counts) + 1):
        n = counts.get(length, 0)
        print(f"  {length:3d} words {n:6d} {'#' * round(width * n / top)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--n-pairs", type=int, default=15_000)
    args = parser.parse_args()

    start = time.perf_counter()
    corpus = make_corpus(seed=args.seed, n_pairs=args.n_pairs)
    seconds = time.perf_counter() - start
    print(f"make_corpus(seed={args.seed}, n_pairs={args.n_pairs}): {seconds:.2f} s")
    for name, pairs in corpus.splits().items():
        print(f"  {name:5s} {len(pairs):6d} pairs")
    print(f"  novel {len(corpus.novel):6d} pairs (in test), held-out combinations: {corpus.held_out}")

    src_vocab = Vocab.build(e for e, _ in corpus.train)
    tgt_vocab = Vocab.build(f for _, f in corpus.train)
    print(f"\nvocabulary (train, with 4 specials): English {len(src_vocab)}, French {len(tgt_vocab)}")
    for side, vocab in ((0, src_vocab), (1, tgt_vocab)):
        counts = Counter(w for pair in corpus.train for w in pair[side].split())
        rarest = ", ".join(f"{w} {n}" for w, n in counts.most_common()[-5:])
        print(f"  {'English' if side == 0 else 'French '} most frequent: {counts.most_common(5)}; rarest: {rarest}")
        unknown = sum(len(vocab.encode_with_unknowns(pair[side])[1]) for pair in corpus.valid + corpus.test)
        print(f"    words of valid+test missing from the train vocabulary: {unknown}")

    for side, language in ((0, "English"), (1, "French")):
        lengths = [len(pair[side].split()) for pair in corpus.train]
        print(f"\n{language} sentence length (train), mean {sum(lengths) / len(lengths):.2f}:")
        histogram(lengths)

    print("\ntest pairs by source length (split_by_length):")
    for (lo, hi), pairs in split_by_length(corpus.test).items():
        print(f"  [{lo:2d}, {hi:2d}) words: {len(pairs):5d}")

    print("\none example per rule:")
    for rule, sentence in iter_rule_examples():
        english, french = render(sentence)
        print(f"  {rule:32s} {english:38s} -> {join_elisions(french)}")

    print("\nrandom training pairs:")
    for english, french in corpus.train[:8]:
        print(f"  {english:60s} -> {french}")

    start = time.perf_counter()
    bpe = BPETokenizer.learn([f for _, f in corpus.train], n_merges=300)
    seconds = time.perf_counter() - start
    print(f"\nBPE, 300 merges learned on the French train side in {seconds:.2f} s; first ten:")
    print("  " + ", ".join(f"{a}+{b} ({m.count})" for m in bpe.merges[:10] for a, b in [m.pair]))
    for word in ("chanteront", "trouvons", "chevaux", "vieilles"):
        print(f"  {word:12s} -> {' '.join(bpe.tokenize_word(word))}")


if __name__ == "__main__":
    main()
