import math

import pytest
import torch

from transformer_lib.decoding import translate
from transformer_lib.evaluation import (
    accuracy_by_length,
    bleu,
    evaluate_translation,
    exact_match,
    greedy_exact_check,
    score_translations,
    translate_batch,
)
from transformer_lib.tokenization import Vocab

from .seq2seq_toys import VOCAB, tiny_model

pytestmark = pytest.mark.usefixtures("one_torch_thread")  # declared in conftest.py


def test_exact_match_counts_identical_sentences():
    hyps = ["le chat dort", "le chien  mange", "une pomme"]
    refs = ["le chat dort", "le chien mange", "la pomme"]
    assert exact_match(hyps, refs) == pytest.approx(2 / 3)  # extra spacing does not matter
    assert exact_match(["a"], ["a"]) == 1.0 and exact_match(["a"], ["b"]) == 0.0


def test_bleu_extremes_and_a_value_worked_by_hand():
    refs = ["le chat noir dort sur la table", "les enfants mangent des pommes"]
    assert bleu(refs, refs) == pytest.approx(100.0)
    assert bleu(["x y z w", "q r s t"], refs) == pytest.approx(0.0)
    # one sentence, the last of 7 words wrong: n-gram precisions 6/7, 5/6, 4/5, 3/4, same length
    # (brevity penalty 1) -> BLEU = 100 * (6/7 * 5/6 * 4/5 * 3/4) ** (1/4) = 100 * (3/7) ** (1/4)
    hand = 100 * (6 / 7 * 5 / 6 * 4 / 5 * 3 / 4) ** 0.25
    assert bleu(["le chat noir dort sur la chaise"], ["le chat noir dort sur la table"]) == pytest.approx(hand)
    # too short: the brevity penalty exp(1 - r/c) with r = 7 reference words, c = 6
    short = 100 * math.exp(1 - 7 / 6)
    assert bleu(["le chat noir dort sur la"], ["le chat noir dort sur la table"]) == pytest.approx(short)


def test_accuracy_by_length_buckets_by_source_words():
    sources = ["a b c", "a b c d e f g", "a b c d", "a b c d e f g h i j"]
    refs = ["x", "y", "z", "w"]
    hyps = ["x", "n", "z", "w"]
    buckets = accuracy_by_length(sources, hyps, refs, edges=(3, 5, 8, 12))
    assert [(b.low, b.high, b.count) for b in buckets] == [(3, 5, 2), (5, 8, 1), (8, 12, 1)]
    assert [b.exact_match for b in buckets] == [1.0, 0.0, 1.0]
    empty = accuracy_by_length(sources, hyps, refs, edges=(3, 5, 8, 12, 20))[-1]
    assert empty.count == 0 and math.isnan(empty.exact_match) and math.isnan(empty.bleu)
    with pytest.raises(ValueError, match=r"sources\[3\]: length 10 lies outside the buckets \[3, 8\)"):
        accuracy_by_length(sources, hyps, refs, edges=(3, 8))


SRC_VOCAB = Vocab([f"s{i}" for i in range(VOCAB - 4)])
TGT_VOCAB = Vocab([f"t{i}" for i in range(VOCAB - 4)])


def test_translate_batch_equals_one_sentence_at_a_time_in_input_order():
    model = tiny_model(7)
    sentences = ["s0 s1 s2 s3 s4", "s5", "s6 s7", "s1 s1 s1"]
    batched = translate_batch(model, sentences, SRC_VOCAB, TGT_VOCAB, batch_size=3, max_len=10)
    alone = [translate(model, s, SRC_VOCAB, TGT_VOCAB, max_len=10).text for s in sentences]
    assert batched == alone
    beams = translate_batch(model, sentences, SRC_VOCAB, TGT_VOCAB, beam_size=3, max_len=10)
    assert beams == [translate(model, s, SRC_VOCAB, TGT_VOCAB, beam_size=3, max_len=10).text for s in sentences]


def test_evaluate_translation_scores_what_the_model_says():
    model = tiny_model(5)  # a seed whose outputs all have words: an empty reference is refused
    sources = ["s0 s1 s2", "s3 s4 s5 s6", "s7"]
    outputs = translate_batch(model, sources, SRC_VOCAB, TGT_VOCAB)
    pairs = [(sources[0], outputs[0]), (sources[1], outputs[1]), (sources[2], outputs[2] + " t0 t1 t2")]
    model.train()
    result = evaluate_translation(model, pairs, SRC_VOCAB, TGT_VOCAB)
    assert model.training  # its mode is restored
    assert result.hypotheses == outputs
    assert result.exact_match == pytest.approx(2 / 3)
    assert result.bleu == pytest.approx(bleu(outputs, [t for _, t in pairs]))
    assert result.errors() == [(sources[2], outputs[2], pairs[2][1])]
    assert [b.count for b in result.by_length(edges=(1, 3, 5))] == [1, 2]


def test_score_translations_scores_some_sentences_of_an_evaluation_as_evaluating_them_again_would():
    model = tiny_model(5)
    sources = ["s0 s1 s2", "s3 s4 s5 s6", "s7", "s2 s1"]
    outputs = translate_batch(model, sources, SRC_VOCAB, TGT_VOCAB)
    pairs = [(sources[0], outputs[0]), (sources[1], "t0 t1"), (sources[2], outputs[2]), (sources[3], "t2")]
    whole = evaluate_translation(model, pairs, SRC_VOCAB, TGT_VOCAB)
    assert whole == score_translations(pairs, whole.hypotheses)
    some = [1, 2]  # one sentence it gets wrong, one it gets right
    again = evaluate_translation(model, [pairs[i] for i in some], SRC_VOCAB, TGT_VOCAB)
    rescored = score_translations([pairs[i] for i in some], [whole.hypotheses[i] for i in some])
    assert rescored == again and rescored.exact_match == 0.5
    with pytest.raises(ValueError, match=r"hypotheses: expected one per pair \(4\), got 3"):
        score_translations(pairs, whole.hypotheses[:3])
    with pytest.raises(TypeError, match=r"hypotheses\[0\]: expected a str"):
        score_translations(pairs[:1], [3])


def test_evaluation_rejects_bad_inputs():
    with pytest.raises(ValueError, match=r"references: expected one reference per item of hypotheses \(2\), got 1"):
        exact_match(["a", "b"], ["a"])
    with pytest.raises(TypeError, match=r"hypotheses\[1\]: expected a str"):
        bleu(["a", 3], ["a", "b"])
    with pytest.raises(TypeError, match="hypotheses: expected a list of sentences"):
        bleu("a b", "a b")
    with pytest.raises(ValueError, match="hypotheses: expected at least one sentence"):
        exact_match([], [])
    with pytest.raises(ValueError, match="pairs: expected a non-empty list"):
        evaluate_translation(tiny_model(0), [], SRC_VOCAB, TGT_VOCAB)
    with pytest.raises(ValueError, match=r"sentences\[1\]: expected at least one word"):
        translate_batch(tiny_model(0), ["s1", " "], SRC_VOCAB, TGT_VOCAB)
    with pytest.raises(TypeError, match="src_vocab: expected a tokenization.Vocab, got dict"):
        translate_batch(tiny_model(0), ["s1"], {"s1": 4}, TGT_VOCAB)
    assert torch.get_num_threads() == 1


def test_compare_decodings_counts_disagreements_and_exact_matches():
    from transformer_lib.evaluation import EvaluationResult, compare_decodings

    sources = ["a", "b", "c", "d"]
    refs = ["x y", "z", "w", "v"]
    first = EvaluationResult(0.5, 0.0, sources, ["x y", "z", "q", "q"], refs)
    second = EvaluationResult(0.5, 0.0, sources, ["x  y", "q", "w", "q"], refs)
    c = compare_decodings(first, second)
    # sentence 0 agrees (spacing aside), 1 and 2 differ, 3 agrees on the same wrong output
    assert (c.count, c.differ, c.first_exact, c.second_exact) == (4, 2, 2, 2)
    assert (c.only_first_exact, c.only_second_exact) == (1, 1)
    with pytest.raises(ValueError, match="same"):
        compare_decodings(first, EvaluationResult(0.0, 0.0, ["a", "b", "c", "e"], first.hypotheses, refs))
    with pytest.raises(TypeError, match="EvaluationResult"):
        compare_decodings(first, None)


@pytest.mark.parametrize(
    ("pairs", "error", "message"),
    [
        (5, TypeError, "pairs: expected a list of (source, target) pairs of strings, got int 5"),
        ("s1 s2", TypeError, "pairs: expected a list of (source, target) pairs of strings, got"),
        ([], ValueError, "pairs: expected a non-empty list of (source, target) pairs, got an empty one"),
        ([("s1", "t1"), ("s1",)], TypeError, "pairs[1]: expected a (source, target) pair of strings"),
        ([("s1", 3)], TypeError, "pairs[0]: expected a (source, target) pair of strings"),
        ([("s1", "t1"), ("s1", " ")], ValueError, "pairs[1]: expected a non-empty source and target"),
        ([("", "t1")], ValueError, "pairs[0]: expected a non-empty source and target"),
    ],
)
def test_every_reader_of_pairs_gives_the_same_error(pairs, error, message):
    from transformer_lib.corpus import split_by_length
    from transformer_lib.tokenization import make_batches

    callers = {
        "evaluate_translation": lambda: evaluate_translation(tiny_model(0), pairs, SRC_VOCAB, TGT_VOCAB),
        "make_batches": lambda: make_batches(pairs, SRC_VOCAB, TGT_VOCAB, 2),
        "split_by_length": lambda: split_by_length(pairs, (1, 16)),
    }
    for name, call in callers.items():
        with pytest.raises(error) as raised:
            call()
        assert str(raised.value).startswith(message), (name, str(raised.value))


def test_greedy_exact_check_tells_which_sentences_greedy_decoding_gets_exactly_right():
    """One teacher-forced pass against greedy decoding, sentence by sentence, on the shipped model's
    test split (where it makes a few dozen errors), plus a reference with a word the model cannot write."""
    from transformer_lib.pretrained import book_corpus, book_model

    shipped, corpus = book_model(), book_corpus()
    pairs = [*corpus.test, ("the cat sleeps", "le chat zzzz")]  # "zzzz": outside the French vocabulary
    decoded = evaluate_translation(shipped.model, pairs, shipped.src_vocab, shipped.tgt_vocab)
    greedy = [h.split() == r.split() for h, r in zip(decoded.hypotheses, decoded.references, strict=True)]
    check = greedy_exact_check(shipped.model, pairs, shipped.src_vocab, shipped.tgt_vocab, batch_size=100)
    assert 10 <= greedy.count(False) and 1000 <= greedy.count(True)  # both kinds are tested
    sure = [i for i, unsure in enumerate(check.unsure) if not unsure]
    assert len(sure) >= len(pairs) - 5
    assert [check.exact[i] for i in sure] == [greedy[i] for i in sure]
    assert check.lowest <= decoded.exact_match <= check.highest
    assert check.exact[-1] is False and check.unsure[-1] is False  # never matched, and certainly so
    # a tolerance wider than any gap leaves every verdict unsure, except the impossible one
    loose = greedy_exact_check(shipped.model, pairs, shipped.src_vocab, shipped.tgt_vocab, tolerance=1e9)
    assert loose.exact == check.exact and loose.lowest == 0 and loose.highest == 1 - 1 / len(pairs)


def test_greedy_exact_check_stops_once_the_target_is_out_of_reach():
    """``stop_below``: a model far from the target is judged after its first chunk, and its bounds still hold
    the whole split's score; a model within reach is read to the end, with the same verdicts."""
    from transformer_lib.pretrained import book_corpus, book_model, snapshot_steps

    shipped, corpus = book_model(), book_corpus()
    pairs = corpus.valid
    full = greedy_exact_check(shipped.model, pairs, shipped.src_vocab, shipped.tgt_vocab, batch_size=100)
    kept = greedy_exact_check(shipped.model, pairs, shipped.src_vocab, shipped.tgt_vocab, batch_size=100,
                              stop_below=0.95)
    assert full.checked == kept.checked == len(pairs) and kept == full and full.lowest >= 0.95
    early = book_model(step=snapshot_steps()[1]).model  # an early snapshot: most sentences wrong
    whole = greedy_exact_check(early, pairs, shipped.src_vocab, shipped.tgt_vocab, batch_size=100)
    stopped = greedy_exact_check(early, pairs, shipped.src_vocab, shipped.tgt_vocab, batch_size=100,
                                 stop_below=0.95)
    allowed_wrong = len(pairs) - math.ceil(0.95 * len(pairs))  # more wrong than this: below 95 %
    # one chunk, just enough sentences to stop on (all wrong), not a whole batch
    assert whole.highest < 0.95 and stopped.checked == allowed_wrong + 1 < 100
    assert stopped.lowest <= whole.lowest and whole.highest <= stopped.highest < 0.95
    # the verdicts it read are the full check's; the rest are unsure, not wrong
    read = [i for i, unsure in enumerate(stopped.unsure) if not unsure]
    assert read and all(stopped.exact[i] == whole.exact[i] for i in read)
    with pytest.raises(ValueError, match="^stop_below: expected"):
        greedy_exact_check(early, pairs, shipped.src_vocab, shipped.tgt_vocab, stop_below=1.5)
