"""One translation path: ``decoding.translate`` reads a sentence as training did, and
``capture.capture_translation`` gives the attention maps behind what it produced."""

from __future__ import annotations

import pytest
import torch

from transformer_lib.browser.explorers import AttentionExplorer, reading_notes
from transformer_lib.browser.theme import MESSAGES
from transformer_lib.capture import capture_translation
from transformer_lib.decoding import Translation, translate
from transformer_lib.models import Transformer
from transformer_lib.tokenization import make_batches

from .toy_translation import MAX_LEN, SRC, TGT, toy_model


@pytest.fixture(scope="module")
def model() -> Transformer:
    return toy_model()


@pytest.fixture(scope="module")
def translation(model: Transformer) -> Translation:
    return translate(model, "the cat sat on the mat", SRC, TGT)


def test_translation_encodes_source_as_in_training_and_captures_matching_maps(
    model: Transformer, translation: Translation
) -> None:
    (batch,) = make_batches([("the cat sat on the mat", "le chat")], SRC, TGT, batch_size=1, shuffle=False)
    assert translation.src_ids == batch.src[0].tolist()  # no <sos>/<eos> framing: the batches have none
    maps = capture_translation(model, translation, SRC, TGT)
    s = len(translation.src_ids)
    t = len(maps.tgt_tokens[0])
    assert maps.src_tokens[0] == [SRC.itos[i] for i in translation.src_ids]
    assert [a.shape for a in maps.encoder_self] == [(1, 2, s, s)] * 2
    assert [a.shape for a in maps.cross] == [(1, 2, t, s)]
    assert maps.tgt_tokens[0] == ["<sos>", *translation.tokens][:t]
    assert reading_notes(translation, SRC) == []


def test_greedy_translation_matches_step_by_step_argmax(model: Transformer, translation: Translation) -> None:
    src = torch.tensor([translation.src_ids])
    ys = [TGT.sos_id, *translation.ids, *([TGT.eos_id] if translation.ended else [])]
    logits = model(src, torch.tensor([ys[:-1]]))  # (1, T, V): teacher forcing on the model's own output
    logits[..., [TGT.pad_id, TGT.sos_id]] = float("-inf")  # greedy decoding never emits these two
    assert logits.argmax(-1)[0].tolist() == ys[1:]


def test_the_encoded_sentence_is_fed_as_it_is(model: Transformer) -> None:
    result = translate(model, "the cat sat on the mat", SRC, TGT)
    maps = capture_translation(model, result, SRC, TGT)
    assert result.src_ids == SRC.encode("the cat sat on the mat")
    assert maps.src_tokens[0] == "the cat sat on the mat".split()
    assert [a.shape[-1] for a in maps.cross] == [6]
    with pytest.raises(ValueError, match=f"sentence: {MAX_LEN + 2} tokens, but the model reads at most"):
        translate(model, " ".join(["cat"] * (MAX_LEN + 2)), SRC, TGT)  # refused: nothing is cut silently


@pytest.mark.parametrize("sentence", ["", "   \n"])
def test_empty_sentence_is_a_value_error(model: Transformer, sentence: str) -> None:
    with pytest.raises(ValueError, match="sentence: expected at least one token"):
        translate(model, sentence, SRC, TGT)


def test_unknown_words_become_unk_with_a_note(model: Transformer) -> None:
    result = translate(model, "the zebra sat on the zebra quux", SRC, TGT)
    assert capture_translation(model, result, SRC, TGT).src_tokens[0][1] == "<unk>"
    assert result.unknown_words == ["zebra", "zebra", "quux"]
    notes = reading_notes(result, SRC)
    assert len(notes) == 2  # the words read as <unk>, then that what stands for them is a guess
    assert "“zebra”, “quux”" in notes[0] and "<unk>" in notes[0]
    assert notes[1] == MESSAGES["unknown_guess"].format(words="“zebra”, “quux”")


def test_the_explorer_reads_a_long_sentence_up_to_max_len_and_says_so(model: Transformer) -> None:
    words = "the cat sat on a mat the dog ran on a mat".split()  # 12 words
    explorer = AttentionExplorer(model, SRC, TGT, sentence=" ".join(words))
    assert explorer.result.src_ids == SRC.encode(" ".join(words[:MAX_LEN]))
    assert any("12 tokens" in n and f"at most {MAX_LEN}" in n and "only the first" in n for n in explorer.notes)
    assert "12 tokens long" in explorer.messages.value


def _made_up(ids: list[int], ended: bool) -> Translation:
    return Translation(text=TGT.decode(ids), tokens=[TGT.itos[i] for i in ids], unknown_words=[],
                       src_ids=SRC.encode("the cat"), ids=ids, ended=ended)


def test_the_maps_rows_are_the_decoder_inputs_that_produced_each_token(model: Transformer) -> None:
    ids = [TGT.stoi["chat"], TGT.stoi["assis"]]
    ended = capture_translation(model, _made_up(ids, ended=True), SRC, TGT)
    assert ended.tgt_tokens[0] == ["<sos>", "chat", "assis"]  # "assis" produced <eos>; <eos> is never read
    cut = capture_translation(model, _made_up(ids, ended=False), SRC, TGT)
    assert cut.tgt_tokens[0] == ["<sos>", "chat"]  # cut off at the limit: "assis" was produced, never read
    assert [a.shape for a in cut.cross] == [(1, 2, 2, 2)]


def test_translate_stops_at_eos_or_at_max_len_and_says_which(model: Transformer) -> None:
    short = translate(model, "the cat", SRC, TGT, max_len=3)
    assert len(short.ids) <= 3 and short.ended == (len(short.ids) < 3)
    assert short.tokens == [TGT.itos[i] for i in short.ids] and str(short) == short.text == TGT.decode(short.ids)


def test_translation_checks_its_arguments(model: Transformer, translation: Translation) -> None:
    with pytest.raises(TypeError, match="model: expected a transformer_lib.models.Transformer, got str"):
        capture_translation("model", translation, SRC, TGT)
    with pytest.raises(TypeError, match="translation: expected a decoding.Translation, got str"):
        capture_translation(model, "le chat", SRC, TGT)
    with pytest.raises(TypeError, match=r"sentence: expected a str \(a sentence\), got int 3"):
        translate(model, 3, SRC, TGT)
