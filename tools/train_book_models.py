"""Train the book's models from their recipes and rewrite the files the package ships.

    python tools/train_book_models.py            # every model, about 17 minutes on 2 cores
    python tools/train_book_models.py --only transformer     # or rnn, rnn_attention, lm
    python tools/train_book_models.py --only lm  # the language model of chapter 8 (its own recipe)
    python tools/train_book_models.py --only snapshots  # the replay: the Transformer along its training

``--only snapshots`` re-runs the Transformer's recipe, keeps its weights every few steps, and writes
the replay's snapshots (``transformer_lib.pretrained.snapshots``) only if the run ends on the
shipped weights bit for bit; the shipped model's own files are never rewritten by it.

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
import platform
import time
from functools import partial

import torch

from transformer_lib.evaluation import evaluate_translation
from transformer_lib.language_model import perplexity
from transformer_lib.pretrained import (
    BOOK_LM_RECIPE,
    BOOK_RECIPE,
    book_corpus,
    french_sentences,
    train_book_lm,
    train_book_model,
    write_shipped,
)
from transformer_lib.pretrained.shipped import BOOK_LM, BOOK_RNN, BOOK_RNN_ATTENTION, BOOK_TRANSFORMER, WEIGHTS_DIR

MODELS = ("transformer", "rnn", "rnn_attention", "lm")
SNAPSHOTS = "snapshots"  # not a model of its own: written only when asked for


def cpu_model() -> str:
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def trained_with(seconds: float) -> dict:
    return {"torch": torch.__version__, "cpu": cpu_model(), "threads": torch.get_num_threads(),
            "cpu_capability": torch.backends.cpu.get_cpu_capability(), "seconds": round(seconds, 1)}


def write(name: str, model: torch.nn.Module, src_vocab: object, tgt_vocab: object, extra: dict) -> None:
    for path in write_shipped(name, model, src_vocab, tgt_vocab, extra):
        print(f"wrote {path.relative_to(WEIGHTS_DIR.parent.parent.parent)} ({path.stat().st_size / 1024:.0f} kB)")


def train_and_write_lm() -> None:
    recipe, corpus = BOOK_LM_RECIPE, book_corpus(BOOK_LM_RECIPE.seed, BOOK_LM_RECIPE.n_pairs)
    started = time.perf_counter()
    model, vocab, history = train_book_lm(steps=recipe.training.steps, progress=True)
    seconds = time.perf_counter() - started
    scores = {f"{split}_perplexity": perplexity(model, french_sentences(corpus, split), vocab)
              for split in ("valid", "test")}
    extra = {"recipe": recipe.record(), "steps": recipe.training.steps,
             "losses": [round(loss, 4) for loss in history.losses], **scores, "trained_with": trained_with(seconds)}
    write(BOOK_LM, model, None, vocab, extra)
    print(f"lm: {recipe.training.steps} steps in {seconds:.0f} s; "
          + ", ".join(f"{k} {v:.3f}" for k, v in scores.items()))


def train_and_write(kind: str) -> None:
    if kind == "lm":
        train_and_write_lm()
        return
    recipe = BOOK_RECIPE
    corpus = book_corpus()
    train, steps, name = {
        "transformer": (train_book_model, recipe.training.steps, BOOK_TRANSFORMER),
        "rnn": (partial(train_book_model, architecture="gru"), recipe.rnn_steps, BOOK_RNN),
        # the GRU baseline's recipe, hidden size and steps, with attention added
        "rnn_attention": (partial(train_book_model, architecture="gru_attention"), recipe.rnn_steps,
                          BOOK_RNN_ATTENTION),
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
        "recipe": recipe.record(),
        "steps": steps,
        "losses": [round(loss, 4) for loss in history.losses],
        **scores,
        "trained_with": trained_with(seconds),
    }
    write(name, model, src_vocab, tgt_vocab, extra)
    print(f"{kind}: {steps} steps in {seconds:.0f} s; " + ", ".join(f"{k} {v:.4f}" for k, v in scores.items()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", choices=(*MODELS, SNAPSHOTS), help="retrain just one of them")
    parser.add_argument("--states", help="snapshots: keep the recorded run in this file, or reuse it if present")
    args = parser.parse_args()
    if args.only == SNAPSHOTS:
        from replay_snapshots import record_snapshots

        record_snapshots(args.states, trained_with)
        return
    for kind in [args.only] if args.only else MODELS:
        train_and_write(kind)


if __name__ == "__main__":
    main()
