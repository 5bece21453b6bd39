"""Train the book's models from the recipe and rewrite the files the package ships.

    python tools/train_book_models.py            # all three, about 10 minutes on 2 cores
    python tools/train_book_models.py --only transformer     # or rnn, or rnn_attention

Run it after changing anything that determines the trained weights: the recipe
(``transformer_lib/pretrained/recipe.py``), the corpus, the tokenisation, or the model or training
code. ``tests/test_pretrained.py`` fails until you do, because the recipe stored beside the weights
no longer matches. Commit the rewritten ``transformer_lib/pretrained/weights/`` and re-execute the
notebooks (``python tools/execute_notebooks.py``): their numbers come from these files.

Training is deterministic on one machine and thread count, not across machines; that is why the
weights ship. The JSON records where they were trained.
"""

from __future__ import annotations

import argparse
import dataclasses
import platform
import time
from functools import partial

import torch

from transformer_lib.evaluation import evaluate_translation
from transformer_lib.pretrained import BOOK_RECIPE, book_corpus, train_book_model, train_book_rnn, write_shipped
from transformer_lib.pretrained.shipped import BOOK_RNN, BOOK_RNN_ATTENTION, BOOK_TRANSFORMER, WEIGHTS_DIR


def cpu_model() -> str:
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def train_and_write(kind: str) -> None:
    recipe = BOOK_RECIPE
    corpus = book_corpus()
    train, steps, name = {
        "transformer": (train_book_model, recipe.steps, BOOK_TRANSFORMER),
        "rnn": (train_book_rnn, recipe.rnn_steps, BOOK_RNN),
        # the GRU baseline's recipe, hidden size and steps, with attention added
        "rnn_attention": (partial(train_book_rnn, attention=True), recipe.rnn_steps, BOOK_RNN_ATTENTION),
    }[kind]
    started = time.perf_counter()
    model, src_vocab, tgt_vocab, history = train(steps=steps, progress=True)
    seconds = time.perf_counter() - started
    scores = {}
    for split, pairs in (("test", corpus.test), ("novel", corpus.novel)):
        result = evaluate_translation(model, pairs, src_vocab, tgt_vocab)
        scores[f"{split}_exact_match"] = result.exact_match
        scores[f"{split}_bleu"] = result.bleu
    extra = {
        "recipe": dataclasses.asdict(recipe),
        "steps": steps,
        "losses": [round(loss, 4) for loss in history.losses],
        **scores,
        "trained_with": {"torch": torch.__version__, "cpu": cpu_model(), "threads": torch.get_num_threads(),
                         "cpu_capability": torch.backends.cpu.get_cpu_capability(), "seconds": round(seconds, 1)},
    }
    for path in write_shipped(name, model, src_vocab, tgt_vocab, extra):
        print(f"wrote {path.relative_to(WEIGHTS_DIR.parent.parent.parent)} ({path.stat().st_size / 1024:.0f} kB)")
    print(f"{kind}: {steps} steps in {seconds:.0f} s; " + ", ".join(f"{k} {v:.4f}" for k, v in scores.items()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    kinds = ["transformer", "rnn", "rnn_attention"]
    parser.add_argument("--only", choices=kinds, help="retrain just one of them")
    args = parser.parse_args()
    for kind in [args.only] if args.only else kinds:
        train_and_write(kind)


if __name__ == "__main__":
    main()
