"""``train_book_models.py --only snapshots``: the book's Transformer along its training run.

1. Train again with the shipped recipe (``BOOK_RECIPE``, same seed, same steps), keeping a copy of
   the weights at step 0 and every ``EVERY_EARLY`` steps up to ``EARLY``, then every ``EVERY`` steps.
   Keeping them reads the weights only: the run is the same run.
2. Refuse to go on unless the last weights are the shipped ones, bit for bit (training is
   deterministic on one CPU and thread count, not across them: ``pretrained/shipped.py``).
3. Measure the held-out attention maps at every kept checkpoint (``N_PROBE`` validation pairs, the
   decoder fed the reference: the same queries at every step) and how far they move from one
   checkpoint to the next (``snapshots.attention_change``). Once trained, the maps still jitter from
   batch to batch; over the last third of the run that jitter is the floor, and only the change above
   it counts (``snapshots.excess_change``). Choose ``COUNT`` steps at equal shares of the accumulated
   excess (``snapshots.choose_steps``): dense where the maps change fast.
4. Write those snapshots (int8 rows) and the curves (training loss per step, validation loss at
   every kept checkpoint) with ``snapshots.write_snapshots``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import torch
from safetensors.torch import load_file

from transformer_lib.capture import capture_attention
from transformer_lib.evaluation import evaluate_translation
from transformer_lib.pretrained import BOOK_RECIPE, book_corpus, book_vocabularies, train_book_model
from transformer_lib.pretrained.shipped import BOOK_TRANSFORMER, WEIGHTS_DIR
from transformer_lib.pretrained.snapshots import (
    attention_change,
    choose_steps,
    dequantize,
    excess_change,
    quantize,
    write_snapshots,
)
from transformer_lib.tokenization import make_batches
from transformer_lib.training import label_smoothed_cross_entropy

EARLY, EVERY_EARLY, EVERY = 300, 5, 10  # the warm-up (300 steps) is where things move most
N_PROBE = 64  # validation pairs whose attention maps are measured
COUNT = 8  # snapshots, step 0 and the shipped model included


def recorded_steps(total: int) -> list[int]:
    return sorted({0, *range(EVERY_EARLY, EARLY + 1, EVERY_EARLY), *range(EVERY, total + 1, EVERY), total})


def train_and_keep(steps: list[int]) -> tuple[dict[int, dict[str, torch.Tensor]], list[float], float]:
    """The recipe's run, with a copy of the weights at each of ``steps``."""
    kept: dict[int, dict[str, torch.Tensor]] = {}
    model_of_run: list[torch.nn.Module] = []
    wanted = set(steps)

    def copy(model: torch.nn.Module) -> dict[str, torch.Tensor]:
        return {k: v.detach().clone() for k, v in model.state_dict().items()}

    def keep_initial(model: torch.nn.Module) -> torch.nn.Module:  # adapt: sees the fresh model, changes nothing
        model_of_run.append(model)
        kept[0] = copy(model)
        return model

    def keep(report: object) -> bool:
        if report.step in wanted:
            kept[report.step] = copy(model_of_run[0])
        return False

    started = time.perf_counter()
    model, _, _, history = train_book_model(adapt=keep_initial, callback=keep, progress=True)
    return kept, [round(loss, 4) for loss in history.losses], time.perf_counter() - started


def check_ends_on_shipped(final: dict[str, torch.Tensor]) -> None:
    shipped = load_file(WEIGHTS_DIR / f"{BOOK_TRANSFORMER}.safetensors")
    differing = [name for name, value in final.items() if not torch.equal(value.float(), shipped[name])]
    if differing or set(final) != set(shipped):
        raise SystemExit(f"refusing to write snapshots: this run ends {len(differing)} tensors away from the shipped "
                         f"weights (e.g. {differing[:3]}); train on the CPU and thread count the shipped model's JSON "
                         f"names (trained_with), with the same torch")


def record_snapshots(states_path: str | None, trained_with: Callable[[float], dict]) -> None:
    steps = recorded_steps(BOOK_RECIPE.training.steps)
    path = Path(states_path) if states_path else None
    if path is not None and path.is_file():
        saved = torch.load(path, weights_only=True)
        kept, losses, seconds = saved["kept"], saved["losses"], saved["seconds"]
        print(f"reusing the run kept in {path}")
    else:
        kept, losses, seconds = train_and_keep(steps)
        if path is not None:
            torch.save({"kept": kept, "losses": losses, "seconds": seconds}, path)
    check_ends_on_shipped(kept[steps[-1]])
    print(f"the run ends on the shipped weights bit for bit ({len(kept)} checkpoints kept)")

    corpus = book_corpus()
    src_vocab, tgt_vocab = book_vocabularies(corpus)
    model, _, _, _ = train_book_model(steps=1, progress=False)  # only its shape: every weight is replaced below
    probe = make_batches(corpus.valid[:N_PROBE], src_vocab, tgt_vocab, N_PROBE, shuffle=False)[0]
    src_lengths = (probe.src != src_vocab.pad_id).sum(dim=1).tolist()
    tgt_lengths = (probe.tgt_in != tgt_vocab.pad_id).sum(dim=1).tolist()
    valid_batches = make_batches(corpus.valid, src_vocab, tgt_vocab, 500, shuffle=False)
    maps, valid_losses = {}, {}
    for step in steps:
        model.load_state_dict(kept[step])
        model.eval()
        maps[step] = capture_attention(model, probe.src, probe.tgt_in)
        with torch.no_grad():
            total, tokens = 0.0, 0
            for batch in valid_batches:
                logits = model(batch.src, batch.tgt_in)
                total += float(label_smoothed_cross_entropy(logits, batch.tgt_out, BOOK_RECIPE.training.label_smoothing,
                                                            tgt_vocab.pad_id, "sum"))
                tokens += int((batch.tgt_out != tgt_vocab.pad_id).sum())
        valid_losses[step] = round(total / tokens, 4)
    # rounded as the record keeps them: the steps can be chosen again from the record (tests/test_snapshots.py)
    changes = [round(attention_change(maps[a], maps[b], src_lengths, tgt_lengths), 6)
               for a, b in zip(steps[:-1], steps[1:], strict=True)]
    settled_from = 2 * steps[-1] // 3
    excess, floor = excess_change(steps, changes, settled_from)
    chosen = choose_steps(steps, excess, COUNT)
    print("chosen steps:", chosen)

    scores = {}
    for step in chosen:
        model.load_state_dict(dequantize(quantize(kept[step])) if step != steps[-1] else kept[step])
        result = evaluate_translation(model.eval(), corpus.valid, src_vocab, tgt_vocab)
        scores[step] = {"valid_exact_match": round(result.exact_match, 4), "valid_bleu": round(result.bleu, 2)}
        print(f"step {step}: valid loss {valid_losses[step]}, exact match {result.exact_match:.3f}")
    record = {
        "steps": chosen,
        "shipped_step": steps[-1],
        "recipe": BOOK_RECIPE.record(),
        "curve": {"train_loss": losses, "valid_steps": steps, "valid_loss": [valid_losses[s] for s in steps]},
        "change": {
            "measure": f"mean total-variation distance between the attention rows of consecutive checkpoints, "
                       f"{N_PROBE} validation pairs, decoder fed the reference, every map, layer and head",
            "steps": steps[1:],
            "values": changes,
            "settled_from": settled_from,
            "floor_per_step": round(floor, 8),
            "rule": f"{COUNT} steps at equal shares of the accumulated change above the floor: the median change "
                    f"per step after step {settled_from} (snapshots.excess_change, snapshots.choose_steps)",
        },
        "scores": {str(step): value for step, value in scores.items()},
        "storage": "int8 rows, a float32 scale per row; vectors float32 (snapshots.quantize)",
        "trained_with": trained_with(seconds),
    }
    for written in write_snapshots({s: kept[s] for s in chosen[:-1]}, record):
        print(f"wrote {written.name} ({written.stat().st_size / 1024:.0f} kB)")
