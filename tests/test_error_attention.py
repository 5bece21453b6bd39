"""Where cross-attention read at a wrong word (``error_attention``), the oracle's word positions it rests
on, and its figure (``figures.errors``): checked against ``capture_attention`` run on one sentence alone."""

from __future__ import annotations

import pytest
import torch

from transformer_lib.capture import capture_attention
from transformer_lib.error_attention import END, own_word_weights, wrong_word_rows
from transformer_lib.figures.errors import COPIED, SHOULD_READ, wrong_word_rows_figure
from transformer_lib.oracle import first_difference, source_positions
from transformer_lib.pretrained import book_model

# A copied phrase of the shipped model (chapter 7 finds it): "gris" written where "sous" belongs.
SOURCE = "a white rabbit on his grey cars eats your banana under the grey bed"
OUTPUT = "un lapin blanc sur ses voitures grises mange votre banane gris sous le lit gris"
REFERENCE = "un lapin blanc sur ses voitures grises mange votre banane sous le lit gris"
ENDLESS = ("the boys near their black table eat your pear", "les garçons près de leur table noire mangent votre "
           "poire noire", "les garçons près de leur table noire mangent votre poire")


@pytest.fixture(scope="module")
def shipped():
    ck = book_model()
    return ck.model, ck.src_vocab, ck.tgt_vocab


def test_source_positions_find_each_lexeme_in_either_number_and_whole_phrases() -> None:
    assert source_positions("grises", SOURCE) == (5, 12)  # "grey" twice: every occurrence
    assert source_positions("voitures", "the car and the cars") == (1, 4)  # the noun in either number
    assert source_positions("mange", SOURCE) == (7,)  # a verb's form, "eats"
    assert source_positions("devant", "a cat in front of the dog in a box") == (2, 3, 4)  # the phrase, not "in"
    assert source_positions("près", "the cat near a dog") == (2,)  # "près de": "près" stands for "near"
    assert source_positions("le", SOURCE) == () and source_positions("chien", SOURCE) == ()  # no content / absent
    with pytest.raises(TypeError, match="source"):
        source_positions("chat", ["the", "cat"])


def test_first_difference() -> None:
    assert first_difference(OUTPUT, REFERENCE) == 10
    assert first_difference("le chat", "le chat dort") == 2 and first_difference("le chat dort", "le chat") == 2
    with pytest.raises(TypeError, match="reference"):
        first_difference("le chat", None)


def test_the_row_is_the_cross_attention_that_wrote_the_wrong_word(shipped) -> None:
    model, src_vocab, tgt_vocab = shipped
    rows = wrong_word_rows(model, [(SOURCE, OUTPUT, REFERENCE), ENDLESS], src_vocab, tgt_vocab)  # two lengths: padded
    row = rows[0]
    assert (row.position, row.wrong, row.expected) == (10, "gris", "sous")
    assert row.expected_keys == (10,) and row.copied_keys == (5, 12) and row.distance == 2
    # the same row from the library's attention capture, on this sentence alone (no padding)
    src = torch.tensor([src_vocab.encode(SOURCE)])
    tgt = torch.tensor([[tgt_vocab.sos_id, *tgt_vocab.encode(OUTPUT)]])
    alone = torch.stack([layer[0].mean(dim=0)[10] for layer in capture_attention(model, src, tgt).cross])
    torch.testing.assert_close(row.rows, alone, rtol=1e-5, atol=1e-6)
    assert row.rows.shape == (model.config.n_decoder_layers, len(SOURCE.split()))
    torch.testing.assert_close(row.rows.sum(dim=1), torch.ones(row.rows.shape[0]))  # softmax rows, pad excluded
    assert row.copied_weight == pytest.approx(float(alone[-1, [5, 12]].sum()))
    assert row.expected_weight == pytest.approx(float(alone[-1, 10]))
    ended = rows[1]  # the output went on where the reference ended: no source word to have read
    assert (ended.wrong, ended.expected, ended.expected_keys, ended.distance) == ("noire", END, (), None)
    assert ended.expected_weight == 0.0 and ended.copied_keys == (4,)


def test_own_word_weights_read_each_content_word_that_stands_once(shipped) -> None:
    model, src_vocab, tgt_vocab = shipped
    pair = ("the cat in front of a dog eats a red apple", "le chat devant un chien mange une pomme rouge")
    weights = own_word_weights(model, [pair], src_vocab, tgt_vocab)
    assert len(weights) == 6  # chat, devant (the phrase), chien, mange, pomme, rouge; not le, un, une
    src = torch.tensor([src_vocab.encode(pair[0])])
    tgt = torch.tensor([[tgt_vocab.sos_id, *tgt_vocab.encode(pair[1])]])
    last = capture_attention(model, src, tgt).cross[-1][0].mean(dim=0)  # (T, S)
    assert weights[1] == pytest.approx(float(last[2, [2, 3, 4]].sum()))  # "devant" reads "in front of"
    assert weights[0] == pytest.approx(float(last[1, 1]))  # "chat" reads "cat"
    assert own_word_weights(model, [("the cat and the cat", "le chat et le chat")], src_vocab, tgt_vocab) == []


def test_bad_input_is_named(shipped) -> None:
    model, src_vocab, tgt_vocab = shipped
    with pytest.raises(ValueError, match=r"errors\[0\]"):
        wrong_word_rows(model, [(SOURCE, REFERENCE, REFERENCE)], src_vocab, tgt_vocab)  # not wrong
    with pytest.raises(ValueError, match="errors"):  # a list, empty: the wrong value
        wrong_word_rows(model, [], src_vocab, tgt_vocab)
    with pytest.raises(TypeError, match="model"):
        own_word_weights("model", [("a", "b")], src_vocab, tgt_vocab)
    with pytest.raises(ValueError, match="rows"):  # a list, empty: the wrong value
        wrong_word_rows_figure([])
    with pytest.raises(TypeError, match="rows"):
        wrong_word_rows_figure("rows")
    with pytest.raises(TypeError, match=r"rows\[0\]"):
        wrong_word_rows_figure(["row"])


def test_the_figure_marks_the_right_and_the_copied_word_by_label_and_line(shipped) -> None:
    model, src_vocab, tgt_vocab = shipped
    rows = wrong_word_rows(model, [(SOURCE, OUTPUT, REFERENCE), ENDLESS], src_vocab, tgt_vocab)
    fig = wrong_word_rows_figure(rows)
    assert [t.type for t in fig.data] == ["heatmap", "heatmap"]
    assert fig.data[0].y == ("layer 1", "layer 2") and fig.data[0].texttemplate  # every weight printed
    ticks = fig.layout.xaxis.ticktext
    assert SHOULD_READ in ticks[10] and all(COPIED in ticks[k] for k in (5, 12))
    assert sum(SHOULD_READ in t or COPIED in t for t in ticks) == 3
    assert not any(SHOULD_READ in t for t in fig.layout.xaxis2.ticktext)  # the one that should have ended
    dashes = sorted((s.line.dash, s.x0 + 0.5, s.xref) for s in fig.layout.shapes)
    assert dashes == [("dash", 4, "x2"), ("dash", 5, "x"), ("dash", 12, "x"), ("solid", 10, "x")]
    assert fig.layout.title.text and fig.layout.coloraxis.colorbar.title.text == "weight"
    assert fig.layout.xaxis2.title.text == "source word (key)"
    assert "“gris” written for “sous”" in fig.layout.annotations[0].text
