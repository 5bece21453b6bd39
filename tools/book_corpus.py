"""Store the book's corpus: ``make_corpus`` with ``BOOK_RECIPE``'s seed and size, as package data.

Writes ``transformer_lib/pretrained/book_corpus.json.gz``, which ``book_corpus()`` reads instead of
generating the corpus again in every chapter (half a second of one core each time);
``tests/test_book_corpus.py`` checks that the file is what ``make_corpus`` generates. Run it again
after the grammar, the lexicon or the recipe's corpus changes.

    python tools/book_corpus.py
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from transformer_lib.corpus import make_corpus  # noqa: E402
from transformer_lib.pretrained.recipe import BOOK_CORPUS_PATH, BOOK_RECIPE, write_corpus  # noqa: E402


def main() -> None:
    corpus = make_corpus(BOOK_RECIPE.seed, n_pairs=BOOK_RECIPE.n_pairs)
    write_corpus(corpus, BOOK_CORPUS_PATH)
    sizes = ", ".join(f"{name} {len(pairs)}" for name, pairs in corpus.splits().items())
    print(f"wrote {BOOK_CORPUS_PATH} ({BOOK_CORPUS_PATH.stat().st_size:,} bytes): {sizes}, novel {len(corpus.novel)}")


if __name__ == "__main__":
    main()
