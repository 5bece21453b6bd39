import math

import pytest
import torch
import torch.nn.functional as F

from transformer_lib.decoding import greedy_decode
from transformer_lib.training import (
    StepReport,
    TrainingOptions,
    label_smoothed_cross_entropy,
    paper_adam,
    pick_device,
    schedule_for,
    train,
    training_step,
    transformer_lr,
    warmup_scheduler,
)
from transformer_lib.vocabulary import SpecialIds

from .seq2seq_toys import EOS, SOS, reverse_pairs, tiny_book_model, tiny_model, to_batches

pytestmark = pytest.mark.usefixtures("one_torch_thread")  # declared in conftest.py


# ---------------------------------------------------------------- label smoothing


def test_label_smoothing_matches_a_hand_computation():
    logits = torch.tensor([[2.0, 0.5, -1.0, 0.0], [0.1, 0.2, 0.3, 0.4], [1.0, 1.0, 1.0, 1.0]])
    target = torch.tensor([0, 3, 0])  # the last row is padding (pad_id=0) and must not count
    eps, n_classes = 0.1, 4
    losses = []
    for row, y in zip(logits.tolist()[:2], target.tolist()[:2], strict=True):
        log_z = math.log(sum(math.exp(v) for v in row))
        log_p = [v - log_z for v in row]
        q = [eps / n_classes + (1 - eps if k == y else 0.0) for k in range(n_classes)]
        losses.append(-sum(qk * lp for qk, lp in zip(q, log_p, strict=True)))
    # row 0 has target 0 = pad_id as well, so with pad_id=0 only row 1 counts
    got = label_smoothed_cross_entropy(logits, target, smoothing=eps, pad_id=0)
    assert got.item() == pytest.approx(losses[1], rel=1e-6)
    got_all = label_smoothed_cross_entropy(logits[:2], target[:2], smoothing=eps, pad_id=None)
    assert got_all.item() == pytest.approx(sum(losses) / 2, rel=1e-6)
    got_sum = label_smoothed_cross_entropy(logits[:2], target[:2], smoothing=eps, pad_id=None, reduction="sum")
    assert got_sum.item() == pytest.approx(sum(losses), rel=1e-6)


def test_label_smoothing_equals_torch_convention_and_ignores_padding():
    torch.manual_seed(0)
    logits = torch.randn(3, 7, 11)
    target = torch.randint(1, 11, (3, 7))
    target[0, 5:] = 0
    target[2, 2:] = 0
    for eps in (0.0, 0.1, 0.3):
        ours = label_smoothed_cross_entropy(logits, target, smoothing=eps, pad_id=0)
        theirs = F.cross_entropy(logits.view(-1, 11), target.view(-1), ignore_index=0, label_smoothing=eps)
        torch.testing.assert_close(ours, theirs)
    # changing the logits at padded positions changes nothing
    other = logits.clone()
    other[target == 0] = 100.0
    torch.testing.assert_close(
        label_smoothed_cross_entropy(other, target), label_smoothed_cross_entropy(logits, target)
    )


def test_label_smoothing_zero_is_plain_cross_entropy_and_smoothing_sets_a_floor():
    target = torch.tensor([2, 1])
    confident = torch.full((2, 5), -30.0)
    confident[0, 2] = confident[1, 1] = 30.0
    assert label_smoothed_cross_entropy(confident, target, smoothing=0.0, pad_id=None).item() < 1e-6
    # with smoothing, a one-hot prediction is punished: the model "learns to be more unsure"
    assert label_smoothed_cross_entropy(confident, target, smoothing=0.1, pad_id=None).item() > 1.0


def test_label_smoothing_rejects_bad_inputs():
    logits = torch.randn(2, 3, 5)
    with pytest.raises(ValueError, match="target: expected shape"):
        label_smoothed_cross_entropy(logits, torch.zeros(2, 4, dtype=torch.long))
    with pytest.raises(TypeError, match="target: expected integer"):
        label_smoothed_cross_entropy(logits, torch.zeros(2, 3))
    with pytest.raises(ValueError, match="smoothing"):
        label_smoothed_cross_entropy(logits, torch.zeros(2, 3, dtype=torch.long), smoothing=1.5)
    with pytest.raises(ValueError, match=r"target: class ids must lie in \[0, 5\)"):
        label_smoothed_cross_entropy(logits, torch.full((2, 3), 5))
    with pytest.raises(ValueError, match="reduction"):
        label_smoothed_cross_entropy(logits, torch.zeros(2, 3, dtype=torch.long), reduction="max")


# ---------------------------------------------------------------- schedule and optimiser


def test_schedule_values_follow_equation_3():
    # d_model = 512, warmup = 4000, worked out by hand
    assert transformer_lr(1, 512, 4000) == pytest.approx(512**-0.5 * 4000**-1.5)
    assert transformer_lr(4000, 512, 4000) == pytest.approx(1 / math.sqrt(512 * 4000))  # the peak, 6.99e-4
    assert transformer_lr(4000, 512, 4000) == pytest.approx(6.98771e-4, rel=1e-5)
    assert transformer_lr(16000, 512, 4000) == pytest.approx(transformer_lr(4000, 512, 4000) / 2)  # 1/sqrt(step)
    assert transformer_lr(2000, 512, 4000) == pytest.approx(transformer_lr(4000, 512, 4000) / 2)  # linear warm-up
    assert transformer_lr(100, 128, 10, scale=3.0) == pytest.approx(3.0 * 128**-0.5 * 100**-0.5)


def test_scheduler_sets_the_optimizer_lr_of_each_step():
    weight = torch.nn.Parameter(torch.zeros(3))
    optimizer = paper_adam([weight])
    scheduler = warmup_scheduler(optimizer, d_model=64, warmup=5, scale=2.0)
    seen = []
    for _ in range(10):
        seen.append(optimizer.param_groups[0]["lr"])
        weight.grad = torch.ones(3)
        optimizer.step()
        scheduler.step()
    assert seen == pytest.approx([transformer_lr(k, 64, 5, 2.0) for k in range(1, 11)])
    assert max(range(10), key=lambda i: seen[i]) == 4  # the peak is at step = warmup


def test_paper_adam_hyper_parameters():
    group = paper_adam([torch.nn.Parameter(torch.zeros(1))]).param_groups[0]
    assert group["betas"] == (0.9, 0.98) and group["eps"] == 1e-9


def test_schedule_rejects_bad_arguments():
    with pytest.raises(ValueError, match="step"):
        transformer_lr(0, 512)
    with pytest.raises(ValueError, match="scale"):
        transformer_lr(1, 512, scale=0.0)
    with pytest.raises(TypeError, match="warmup"):
        warmup_scheduler(paper_adam([torch.nn.Parameter(torch.zeros(1))]), 64, warmup=2.5)


def test_pick_device_prefers_what_is_given():
    assert pick_device("cpu") == torch.device("cpu")
    expected = "cuda" if torch.cuda.is_available() else "mps" if torch.backends.mps.is_available() else "cpu"
    assert pick_device().type == expected


# ---------------------------------------------------------------- the loop


def test_tiny_model_overfits_a_few_batches():
    """A tiny model memorises 32 sequences: every one decoded exactly. How many steps that takes depends
    on the machine (training is not bit-reproducible across CPUs and thread counts), so it trains until
    it gets there, checking every 50 steps, and the claim is that it does within 1000 (about 150 here)."""
    pairs = reverse_pairs(32, seed=1)
    batches = to_batches(pairs, 16)
    model = tiny_model(0)

    def exact_match(trained: torch.nn.Module) -> dict[str, float]:
        predictions = [p for batch in batches
                       for p in greedy_decode(trained, batch.src, special=SpecialIds(SOS, EOS), max_len=10)]
        return {"exact": sum(p == t for p, (_, t) in zip(predictions, pairs, strict=True)) / len(pairs)}

    losses = []

    def memorised(report: StepReport) -> bool:
        losses.append(report.loss)
        return report.evaluation is not None and report.evaluation["exact"] == 1.0 and max(losses[-5:]) < 0.05

    history = train(model, batches, steps=1000, warmup=20, lr_scale=0.25, label_smoothing=0.0, progress=False,
                    device="cpu", evaluate=exact_match, eval_every=50, callback=memorised)
    assert history.losses[0] > 2.0
    assert history.stop_reason == "callback"  # every sequence exact, and the loss near 0, before the step limit
    assert max(history.losses[-5:]) < 0.05
    assert exact_match(model)["exact"] == 1.0


def _short_run(seed: int, model_seed: int = 0) -> torch.nn.Module:
    model = tiny_model(model_seed, dropout=0.2)
    train(model, to_batches(reverse_pairs(24, seed=3), 8), steps=6, warmup=4, seed=seed, progress=False,
          device="cpu")
    return model


def test_same_seed_gives_identical_weights_and_another_seed_does_not():
    first, again, other = _short_run(seed=0), _short_run(seed=0), _short_run(seed=1)
    start = tiny_model(0, dropout=0.2).state_dict()
    a, b, c = first.state_dict(), again.state_dict(), other.state_dict()
    assert all(torch.equal(a[key], b[key]) for key in a)
    assert not all(torch.equal(a[key], c[key]) for key in a)
    assert not all(torch.equal(a[key], start[key]) for key in a)  # it did train


def test_history_callback_evaluation_and_stopping():
    batches = to_batches(reverse_pairs(20, seed=4), 5)  # 4 batches an epoch
    reports: list[StepReport] = []
    calls = []

    def evaluate(model):
        calls.append(model.training)
        return {"score": float(len(calls))}

    history = train(tiny_model(0), batches, epochs=2, warmup=3, evaluate=evaluate, eval_every=3,
                    callback=reports.append, progress=False, device="cpu")
    assert history.stop_reason == "epochs"
    assert history.steps == list(range(1, 9)) and len(history.losses) == len(history.lrs) == 8
    assert history.lrs == pytest.approx([transformer_lr(k, 32, 3) for k in range(1, 9)])
    assert history.elapsed_s == sorted(history.elapsed_s) and history.train_time_s > 0
    assert history.tokens[-1] == 2 * sum(int((b.tgt_out != 0).sum()) for b in batches)
    assert [e["step"] for e in history.evaluations] == [3, 6, 8]  # every 3 steps, and at the end
    assert calls == [False, False, False]  # evaluation runs in eval mode
    assert [r.step for r in reports] == list(range(1, 9))
    assert [r.epoch for r in reports] == [0] * 4 + [1] * 4
    assert reports[2].evaluation == history.evaluations[0] and reports[0].evaluation is None
    assert history.first_reaching("score", 2.0)["step"] == 6
    assert history.first_reaching("score", 9.0) is None

    stopped = train(tiny_model(0), batches, steps=50, callback=lambda r: r.step == 3, progress=False)
    assert stopped.stop_reason == "callback" and stopped.steps[-1] == 3
    by_steps = train(tiny_model(0), batches, steps=5, progress=True)  # with a tqdm bar
    assert by_steps.stop_reason == "steps" and len(by_steps.losses) == 5
    by_time = train(tiny_model(0), batches, time_budget_s=1e-9, progress=False)
    assert by_time.stop_reason == "time_budget" and len(by_time.losses) == 1


def test_an_early_stop_fills_the_progress_bar_and_says_why(capsys):
    """A stop before the bar's total: the bar ends full and says why ("reached 96% at step 600"),
    rather than freezing at 3 of 50 steps; a plain True stops as well, and the bar says that."""
    batches = to_batches(reverse_pairs(20, seed=1), 5)
    said = train(tiny_model(0), batches, steps=50, callback=lambda r: r.step == 3 and f"enough at step {r.step}")
    assert said.stop_reason == "callback" and said.steps[-1] == 3 and said.stop_message == "enough at step 3"
    bar = capsys.readouterr().err.replace("\r", "\n").strip().splitlines()[-1]
    assert bar.startswith("enough at step 3: 100%") and "| 3/3 [" in bar, bar
    plain = train(tiny_model(0), batches, steps=50, callback=lambda r: r.step == 3)
    assert plain.stop_reason == "callback" and plain.stop_message == "stopped by the callback at step 3"
    bar = capsys.readouterr().err.replace("\r", "\n").strip().splitlines()[-1]
    assert bar.startswith("stopped by the callback at step 3: 100%") and "| 3/3 [" in bar, bar
    full = train(tiny_model(0), batches, steps=4)  # no early stop: the bar as it counted
    assert full.stop_message == "" and capsys.readouterr().err.replace("\r", "\n").strip().splitlines()[-1].startswith(
        "training: 100%")


def test_shuffle_changes_batch_order_per_epoch_deterministically():
    batches = to_batches(reverse_pairs(40, seed=5), 5)
    seen = []
    model = tiny_model(0)
    original_forward = model.forward

    def spy(src, tgt_in):
        seen.append(next(i for i, b in enumerate(batches) if torch.equal(b.src, src)))
        return original_forward(src, tgt_in)

    model.forward = spy
    train(model, batches, epochs=2, progress=False, seed=7)
    first_epoch, second_epoch = seen[:8], seen[8:]
    assert sorted(first_epoch) == sorted(second_epoch) == list(range(8))
    assert first_epoch != second_epoch
    seen.clear()
    train(model, batches, epochs=1, progress=False, shuffle=False)
    assert seen == list(range(8))


def test_train_rejects_bad_arguments():
    model, batches = tiny_model(0), to_batches(reverse_pairs(4), 2)
    with pytest.raises(ValueError, match="options: None and no knobs: give a TrainingOptions, or steps"):
        train(model, batches)
    with pytest.raises(ValueError, match="batches: expected at least one batch"):
        train(model, [], steps=1)
    with pytest.raises(TypeError, match="batches: expected objects with tensors"):
        train(model, [(1, 2, 3)], steps=1)
    with pytest.raises(ValueError, match="evaluate: None, but eval_every=2 asks for an evaluation every 2 steps"):
        train(model, batches, steps=1, eval_every=2)
    with pytest.raises(TypeError, match="callback: expected a function StepReport"):
        train(model, batches, steps=1, callback=3)
    with pytest.raises(ValueError, match="time_budget_s"):
        train(model, batches, time_budget_s=-1)
    with pytest.raises(TypeError, match="steps"):
        train(model, batches, steps=1.5)
    with pytest.raises(ValueError, match="model: expected a model with a .config.d_model"):
        train(torch.nn.Linear(2, 2), batches, steps=1)


def test_book_recipe_builds_vocabularies_model_and_trains_deterministically():
    from transformer_lib.corpus import make_corpus
    from transformer_lib.models import Transformer
    from transformer_lib.pretrained import BookRecipe, train_book_model

    corpus = make_corpus(0, n_pairs=100, novel_per_combination=1)
    runs = [train_book_model(steps=3, corpus=corpus, progress=False,
                             recipe=BookRecipe(seed=seed, model=tiny_book_model(32), batch_size=16))
            for seed in (0, 0, 1)]
    model, src_vocab, tgt_vocab, history = runs[0]
    assert isinstance(model, Transformer) and not model.training
    assert model.config.src_vocab_size == len(src_vocab) and model.config.tgt_vocab_size == len(tgt_vocab)
    assert model.config.d_model == 32 and model.config.n_encoder_layers == 1
    assert all(w in src_vocab for s, _ in corpus.train for w in s.split())
    assert history.stop_reason == "steps" and len(history.losses) == 3
    same, other = runs[1][0].state_dict(), runs[2][0].state_dict()
    assert all(torch.equal(value, same[key]) for key, value in model.state_dict().items())
    assert not all(torch.equal(value, other[key]) for key, value in model.state_dict().items())
    with pytest.raises(TypeError, match="corpus: expected a corpus.Corpus"):
        train_book_model(steps=1, corpus=[("a", "b")], progress=False)


def test_book_rnn_trains_under_the_same_conditions():
    from transformer_lib.corpus import make_corpus
    from transformer_lib.pretrained import BookRecipe, train_book_model, train_book_rnn
    from transformer_lib.rnn import Seq2SeqGRU

    corpus = make_corpus(0, n_pairs=60, novel_per_combination=1)
    small = BookRecipe(model=tiny_book_model(16), batch_size=16, rnn_hidden_size=24)
    rnn, src_vocab, tgt_vocab, history = train_book_rnn(steps=2, recipe=small, corpus=corpus, progress=False)
    _, src_t, tgt_t, history_t = train_book_model(steps=2, recipe=small, corpus=corpus, progress=False)
    assert isinstance(rnn, Seq2SeqGRU) and rnn.config.hidden_size == 24 and rnn.config.d_model == 16
    assert (src_vocab, tgt_vocab) == (src_t, tgt_t)
    assert history.lrs == history_t.lrs and history.tokens == history_t.tokens  # same schedule, same batches


def test_options_object_and_keywords_train_the_same_weights():
    batches = to_batches(reverse_pairs(24, seed=3), 8)
    by_options, by_keywords = tiny_model(0, dropout=0.2), tiny_model(0, dropout=0.2)
    options = TrainingOptions(steps=4, warmup=2, seed=5, progress=False, device="cpu")
    first = train(by_options, batches, options)
    second = train(by_keywords, batches, steps=4, warmup=2, seed=5, progress=False, device="cpu")
    assert first.losses == second.losses
    assert all(torch.equal(v, by_keywords.state_dict()[k]) for k, v in by_options.state_dict().items())
    assert train(tiny_model(0), batches, options, steps=2).steps == [1, 2]  # keywords change the options
    with pytest.raises(TypeError, match="options: expected a training.TrainingOptions"):
        train(tiny_model(0), batches, {"steps": 2})
    with pytest.raises(ValueError, match="give at least one"):
        TrainingOptions()


def test_training_step_with_a_token_total_scales_the_loss_it_divides():
    """The distributed command divides each process's summed loss by (global tokens / processes):
    the per-token mean over the global batch after DDP averages the gradients."""
    batch = to_batches(reverse_pairs(8, seed=2), 8)[0]
    options = TrainingOptions(steps=1, label_smoothing=0.0, clip_norm=None)
    grads = []
    for token_total in (None, lambda tokens: tokens * 2.0):
        model = tiny_model(0, dropout=0.0)
        optimizer, scheduler = schedule_for(model, options)
        result = training_step(model.train(), batch, optimizer, scheduler, options, token_total)
        grads.append([p.grad.clone() for p in model.parameters() if p.grad is not None])
        assert result.tokens == int((batch.tgt_out != 0).sum())
    assert all(torch.allclose(half * 2, full, atol=1e-7) for half, full in zip(grads[1], grads[0], strict=True))


def test_in_the_books_build_the_bar_is_one_line_of_text_on_stdout(capsys, monkeypatch):
    """tools/execute_notebooks.py sets TRANSFORMER_BOOK_BUILD=1: the stored output is the bar's final
    state as one line of text (no widget for the static page to load, nothing on stderr)."""
    from transformer_lib.progress import BOOK_BUILD_ENV

    monkeypatch.setenv(BOOK_BUILD_ENV, "1")
    batches = to_batches(reverse_pairs(20, seed=1), 5)
    train(tiny_model(0), batches, steps=50, callback=lambda r: r.step == 3 and f"reached 96% at step {r.step}")
    out, err = capsys.readouterr()
    assert err == "" and "\r" not in out, (out, err)
    assert out.strip().startswith("reached 96% at step 3: 100%") and "| 3/3 [" in out and out.count("\n") == 1, out
    train(tiny_model(0), batches, steps=4, progress=False)  # no bar asked for: nothing printed
    assert capsys.readouterr() == ("", "")


def test_the_loss_refuses_logits_without_a_class_dimension() -> None:
    with pytest.raises(ValueError, match=r"logits: expected a class dimension, shape \(\.\.\., V\), got a 0-d"):
        label_smoothed_cross_entropy(torch.tensor(1.0), torch.tensor(0))


def test_the_loss_refuses_nan_logits_where_they_count_and_ignores_them_at_padding() -> None:
    logits, target = torch.randn(2, 3, 5), torch.tensor([[1, 2, 0], [3, 0, 0]])  # 0 is padding
    logits[0, 2] = math.nan  # a padding position: contributes nothing, as documented
    assert torch.isfinite(label_smoothed_cross_entropy(logits, target, pad_id=0))
    for bad in (math.nan, math.inf):
        changed = logits.clone()
        changed[1, 0, 4] = bad  # a position that counts
        with pytest.raises(ValueError, match="logits: expected finite values or -inf .* got NaN or \\+inf there"):
            label_smoothed_cross_entropy(changed, target, pad_id=0)
    changed = logits.clone()
    changed[1, 0, 4] = -math.inf  # an excluded class: allowed, no error
    assert torch.isfinite(label_smoothed_cross_entropy(changed, target, smoothing=0.0, pad_id=0))
    # with smoothing, the target gives the excluded class a share, whose log-probability is -inf: +inf, not NaN
    assert label_smoothed_cross_entropy(changed, target, pad_id=0) == math.inf
