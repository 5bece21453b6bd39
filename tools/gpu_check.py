"""The library on a CUDA GPU against the CPU (tools/gpu_check.sh run, on the device tool's machine).

Prints, and asserts what must hold on any device: the shipped model decodes the test split the same
on both (greedy and beam); training to chapter 7's target reaches it on CUDA; the language model of
chapter 8 trains and samples there.
"""

import time

import torch

from transformer_lib.evaluation import evaluate_translation, greedy_exact_check
from transformer_lib.language_model import sample_sentences
from transformer_lib.pretrained import LIVE_RECIPE, book_corpus, book_model, train_book_lm, train_book_model

assert torch.cuda.is_available(), "no CUDA device here"
corpus = book_corpus()
test = corpus.test

for beam in (1, 4):
    results = {}
    for device in ("cpu", "cuda"):
        ck = book_model(device=device)
        started = time.perf_counter()
        results[device] = evaluate_translation(ck.model, test, ck.src_vocab, ck.tgt_vocab, beam_size=beam)
        print(f"shipped model, beam {beam}, {device}: exact match {results[device].exact_match:.1%}, "
              f"BLEU {results[device].bleu:.1f}, {time.perf_counter() - started:.1f} s for {len(test)} sentences")
    same = sum(a == b for a, b in zip(results["cpu"].hypotheses, results["cuda"].hypotheses, strict=True))
    print(f"  the same translation on both: {same} of {len(test)}")
    assert abs(results["cpu"].exact_match - results["cuda"].exact_match) <= 0.01

started = time.perf_counter()
model, src_vocab, tgt_vocab, history = train_book_model(LIVE_RECIPE, corpus=corpus, stop_at_target=True,
                                                        device="cuda", progress=False)
live = greedy_exact_check(model, test, src_vocab, tgt_vocab)
print(f"chapter 7's live run on {history.device}: {history.stop_message or history.stop_reason} in "
      f"{time.perf_counter() - started:.1f} s ({len(history.losses)} steps); test exact match in "
      f"[{live.lowest:.1%}, {live.highest:.1%}]")
assert history.device.startswith("cuda") and next(model.parameters()).is_cuda
assert history.stop_reason == "callback" and live.lowest >= LIVE_RECIPE.target_exact_match - 0.03

started = time.perf_counter()
lm, vocab, lm_history = train_book_lm(steps=250, device="cuda", progress=False)
drawn = sample_sentences(lm, vocab, 5, generator=torch.Generator("cuda").manual_seed(0))
print(f"chapter 8's language model on {lm_history.device}: 250 steps in {time.perf_counter() - started:.1f} s, "
      f"last loss {lm_history.losses[-1]:.2f}; samples: {[s.text for s in drawn]}")
assert lm_history.device.startswith("cuda")
