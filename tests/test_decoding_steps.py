"""Decoding step by step (``decoding_steps``), its figures, the kernel's stepper, and the length rule.

The trace is beam_search's own record (its ``observe`` hook): its result is beam_search's, with one
beam greedy_decode's, and each step's kept beams are extensions of the beams it read. The page's
manifest carries ``default_max_len``'s rule; a translation cut at its limit has as many decoder rows
in the kernel's payload as ``capture_translation``; a one-word sentence gets its note.
"""

from __future__ import annotations

import html
import json
import re

import numpy as np
import pytest
import torch

from transformer_lib.browser.explorers import AttentionExplorer, reading_notes
from transformer_lib.browser.model import MANIFEST_FILE, browser_model_files
from transformer_lib.browser.page import translation_payload
from transformer_lib.browser.stepper import DecodingStepper
from transformer_lib.browser.theme import MESSAGES
from transformer_lib.capture import capture_translation, keep_attention_weights
from transformer_lib.decoding import BeamStep, beam_search, default_max_len, greedy_decode, length_penalty, translate
from transformer_lib.decoding_steps import trace_decoding, trace_translation
from transformer_lib.figures.decoding_steps import (
    CHOSEN,
    ENDS,
    KEPT,
    beam_rule_html,
    candidate_marks,
    step_figures,
    step_summary_html,
    total_log_prob,
)
from transformer_lib.pretrained import book_corpus, book_model
from transformer_lib.vocabulary import SpecialIds

from .seq2seq_toys import EOS, SOS, VOCAB, tiny_model

ITOS = ["<pad>", "<sos>", "<eos>"] + [f"w{i}" for i in range(3, VOCAB)]


@pytest.fixture(scope="module")
def checkpoint():
    return book_model()


@pytest.mark.parametrize("beam_size", [1, 2, 3, 4])
@pytest.mark.parametrize("seed", [0, 1, 2, 5])
def test_the_trace_is_beam_searchs_own_record(seed: int, beam_size: int) -> None:
    model = tiny_model(seed)
    src = torch.tensor([[3, 4, 5, 6]])
    special = dict(special=SpecialIds(SOS, EOS), max_len=7)
    trace = trace_decoding(model, src, ITOS, **special, beam_size=beam_size, top_k=4)
    (best,) = beam_search(model, src, **special, beam_size=beam_size)
    assert trace.tokens == [ITOS[i] for i in best.tokens]
    if beam_size == 1:
        assert trace.tokens == [ITOS[i] for i in greedy_decode(model, src, **special)[0]]
    assert trace.ended == (len(best.tokens) < 7)  # a search cut at max_len has max_len tokens, no <eos>
    assert 1 <= len(trace.steps) <= 7 and [s["step"] for s in trace.steps] == list(range(1, len(trace.steps) + 1))
    for step in trace.steps:
        assert 1 <= len(step["beams"]) <= beam_size and len(step["kept"]) <= beam_size
        for beam in step["beams"]:
            assert len(beam["prefix"]) == step["step"] and beam["prefix"][0] == "<sos>"
            probs = [p for _, p in beam["candidates"]]
            assert len(probs) == 4 and probs == sorted(probs, reverse=True) and sum(probs) <= 1 + 1e-9
            cross = np.array(beam["cross"])  # (layers, heads, source positions)
            assert cross.shape == (model.config.n_decoder_layers, model.config.n_heads, 4)
            assert np.allclose(cross.sum(-1), 1.0, atol=1e-5)  # a softmax row over the source
        for kept in step["kept"]:  # each kept beam extends the beam it names by one token
            read = step["beams"][kept["beam"]]
            assert kept["tokens"][:-1] == read["prefix"][1:]
            p = dict(read["candidates"]).get(kept["tokens"][-1])
            if p is not None:
                assert kept["log_prob"] == pytest.approx(read["log_prob"] + np.log(p), abs=1e-9)
        for f in step["finished"]:  # at step n a hypothesis is n tokens long: n - 1 and <eos>, or n when cut
            assert f["score"] == pytest.approx(f["log_prob"] / length_penalty(step["step"], 0.6), rel=1e-12)
        chosen = step["chosen"]  # the best extension of all: the top candidate of its beam
        assert step["beams"][chosen["beam"]]["candidates"][0][0] == chosen["token"]
    assert json.loads(json.dumps(trace.payload())) == trace.payload()  # JSON-ready, as the page's


def test_the_observer_sees_every_step_and_a_bad_one_is_refused() -> None:
    model = tiny_model(0)
    src = torch.tensor([[3, 4, 5], [6, 7, 8]])
    seen: list[BeamStep] = []
    hyps = beam_search(model, src, special=SpecialIds(SOS, None), max_len=5, beam_size=2, observe=seen.append)
    assert [s.step for s in seen] == [0, 1, 2, 3, 4] and len(hyps) == 2
    assert seen[0].prefixes.shape == (4, 1) and seen[-1].prefixes.shape == (4, 5)
    assert all(len(s.kept[b]) == 2 for s in seen for b in range(2))
    with pytest.raises(TypeError, match="observe"):
        beam_search(model, src, special=SpecialIds(SOS, EOS), max_len=5, observe="print")


def test_the_figures_name_the_choice_in_words(checkpoint) -> None:
    trace = trace_translation(checkpoint.model, "the old chairs are not green", checkpoint.src_vocab,
                              checkpoint.tgt_vocab, beam_size=3)
    for n in range(1, len(trace) + 1):
        marks = candidate_marks(trace, n)
        assert sum(row.count(CHOSEN) for row in marks) == 1
        record = trace.steps[n - 1]
        assert sum(row.count(KEPT) for row in marks) <= len(record["kept"]) + len(record["finished"])
        bars, cross = step_figures(trace, n)
        texts = [t for bar in bars.data for t in bar.text]
        assert sum(t.endswith("\u25c0 chosen") for t in texts) == 1  # said in words, not by colour
        assert bars.layout.title.text and bars.layout.xaxis.title.text == "probability"
        assert cross.layout.coloraxis.colorbar.title.text == "weight" and list(cross.layout.xaxis.ticktext) == (
            "the old chairs are not green".split())
        assert f"Step {n} of {len(trace)}" in step_summary_html(trace, n)
    assert "Result</b> (ended with &lt;eos&gt;)" in step_summary_html(trace, len(trace))
    assert any(ENDS in row for n in range(1, len(trace) + 1) for row in candidate_marks(trace, n))
    with pytest.raises(ValueError, match="step"):
        step_figures(trace, len(trace) + 1)


def test_the_manifest_carries_the_length_rule(checkpoint) -> None:
    manifest = json.loads(browser_model_files(checkpoint.model, checkpoint.src_vocab, checkpoint.tgt_vocab)
                          [MANIFEST_FILE])
    rule = manifest["decoding"]
    for n in range(1, 80):  # the page's rule (book-model.js maxNewTokens) is default_max_len
        page_rule = min(rule["per_source_token"] * n + rule["extra"], rule["max_len"])
        assert page_rule == default_max_len(checkpoint.model, n)
    assert default_max_len(checkpoint.model, 27) == rule["max_len"] == 64  # 27+ words: the 64-token cap
    assert rule["alpha"] == 0.6


@pytest.mark.parametrize("sentence", ["we", "green", " ".join(["we"] * 30), " ".join(["they"] * 27)])
def test_a_cut_translation_has_capture_translations_rows(checkpoint, sentence: str) -> None:
    model, src_vocab, tgt_vocab = checkpoint.model, checkpoint.src_vocab, checkpoint.tgt_vocab
    result = translate(model, sentence, src_vocab, tgt_vocab)
    assert not result.ended and len(result.ids) == default_max_len(model, len(sentence.split()))  # cut
    maps = capture_translation(model, result, src_vocab, tgt_vocab)
    payload = translation_payload(result, maps, src_vocab, tgt_vocab)
    rows = maps.cross[0].shape[2]
    assert rows == len(result.ids) and len(payload["decoder_tokens"]) == rows
    assert np.array(payload["attention"]["cross"]).shape[2] == rows


def test_the_corpus_has_no_one_word_sentence_and_the_explorers_say_so(checkpoint) -> None:
    corpus = book_corpus()
    assert min(len(src.split()) for split in corpus.splits().values() for src, _ in split) > 1
    model, src_vocab, tgt_vocab = checkpoint.model, checkpoint.src_vocab, checkpoint.tgt_vocab
    assert MESSAGES["one_word"] in reading_notes(translate(model, "we", src_vocab, tgt_vocab), src_vocab)
    assert MESSAGES["one_word"] not in reading_notes(translate(model, "we swim", src_vocab, tgt_vocab), src_vocab)
    explorer = AttentionExplorer(model, src_vocab, tgt_vocab, sentence="We!")
    assert MESSAGES["one_word"] in explorer.messages.value
    stepper = DecodingStepper(model, src_vocab, tgt_vocab, sentence="we", beam_size=2)
    assert MESSAGES["one_word"] in stepper.messages.value


def _text(widget_html: str) -> str:
    return re.sub("<[^>]+>", "", widget_html)


def test_the_kernels_stepper_steps_and_never_raises(checkpoint) -> None:
    model, src_vocab, tgt_vocab = checkpoint.model, checkpoint.src_vocab, checkpoint.tgt_vocab
    stepper = DecodingStepper(model, src_vocab, tgt_vocab, sentence="the small dog sleeps", beam_size=1)
    n = len(stepper.trace)
    assert stepper.trace.tokens == translate(model, "the small dog sleeps", src_vocab, tgt_vocab).tokens
    assert stepper.previous.disabled and not stepper.next.disabled and "Step 1 of" in stepper.summary.value
    for _ in range(n + 2):
        stepper.next.click()
    assert stepper.step == n and stepper.next.disabled and "Result" in stepper.summary.value
    stepper.previous.click()
    assert stepper.step == n - 1
    stepper.beam.value = 4
    assert len(stepper.trace.steps[1]["beams"]) == 4 and stepper.step == 1
    assert stepper.trace.tokens == translate(model, "the small dog sleeps", src_vocab, tgt_vocab, beam_size=4).tokens
    state = re.search(r'class="tc-live-state">(.*?)</script>', stepper._repr_mimebundle_()["text/html"], re.S)
    shown = json.loads(state.group(1))
    assert shown["beam"] == 4 and shown["result"]["tokens"] == stepper.trace.tokens
    for typed, expected in (("", MESSAGES["empty"]), ("?!", MESSAGES["no_words"] + ".")):
        stepper.sentence.value = typed
        assert _text(stepper.messages.value) == expected and stepper.trace is None
    with pytest.raises(ValueError, match="beam_size"):
        DecodingStepper(model, src_vocab, tgt_vocab, beam_size=5)


def test_the_stepper_shows_the_totals_and_scores_beam_search_ranks_by(checkpoint) -> None:
    """Beside each bar, the candidate's total log p: for every extension kept, the number beam_search
    itself ranked it by; the ended hypotheses' scores are beam_search's; the rule is said in the summary.
    And the reason it is needed: somewhere a lower bar is kept while a higher one is dropped."""
    model, src_vocab, tgt_vocab = checkpoint.model, checkpoint.src_vocab, checkpoint.tgt_vocab
    sentences = [src for src, _ in book_corpus().test[:6]]
    lower_kept_over_higher = False
    for sentence in sentences:
        trace = trace_translation(model, sentence, src_vocab, tgt_vocab, beam_size=3)
        for n, record in enumerate(trace.steps, start=1):
            bars = step_figures(trace, n)[0]
            assert beam_rule_html(trace) in step_summary_html(trace, n) and "3 highest totals" in beam_rule_html(trace)
            kept_probs, dropped_probs = [], []
            for kept in record["kept"]:
                beam = record["beams"][kept["beam"]]
                [p] = [p for token, p in beam["candidates"] if token == kept["tokens"][-1]]
                assert total_log_prob(beam, p) == pytest.approx(kept["log_prob"], abs=1e-9)
                i = [token for token, _ in beam["candidates"]].index(kept["tokens"][-1])
                assert f"(log p {kept['log_prob']:.2f})" in bars.data[kept["beam"]].text[i]
                kept_probs.append(p)
            # one numbering: the kept table names each kept beam by its bar's own label in this step's chart
            table = step_summary_html(trace, n).split("Beams kept for the next step")[-1].split("</table>")[0]
            named = re.findall(r"<tr><td>(\d+)</td><td>([^<]*)</td>", table)
            labels = {y for trace_ in bars.data for y in trace_.y}
            assert [int(i) for i, _ in named] == list(range(1, len(record["kept"]) + 1))
            assert all(html.unescape(label) in labels for _, label in named), (named, labels)
            kept_pairs = {(k["beam"], k["tokens"][-1]) for k in record["kept"]}
            for j, beam in enumerate(record["beams"]):
                dropped_probs += [p for token, p in beam["candidates"] if (j, token) not in kept_pairs
                                  and token != "<eos>"]
            if kept_probs and dropped_probs and min(kept_probs) < max(dropped_probs):
                lower_kept_over_higher = True
        with keep_attention_weights(model):  # the trace's attention path (weights kept), so its float32 sums
            hypotheses = beam_search(model, torch.tensor([src_vocab.encode(sentence)]), tgt_vocab.special_ids,
                                     max_len=trace.max_len, beam_size=3, alpha=trace.alpha)
        ended = [f for record in trace.steps for f in record["finished"]]
        best = max(ended, key=lambda f: f["score"])
        assert best["score"] == pytest.approx(hypotheses[0].score, abs=1e-9)
        assert best["tokens"] == trace.tokens == [tgt_vocab.itos[i] for i in hypotheses[0].tokens]
    assert lower_kept_over_higher
    greedy = trace_translation(model, sentences[0], src_vocab, tgt_vocab, beam_size=1)
    assert beam_rule_html(greedy) == "" and "log p" not in "".join(step_figures(greedy, 1)[0].data[0].text)
