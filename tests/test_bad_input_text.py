"""Bad text and bad stored data: vocabularies, special tokens typed as text, plain strings where a
list of tokens is expected, checkpoints whose extra data could not be loaded again, and the
attention explorer's sentence box (a message in the widget, never a traceback, nothing cut silently).
"""

import enum
from collections import OrderedDict
from fractions import Fraction

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from transformer_lib.browser import explorers as viz
from transformer_lib.capture import capture_attention
from transformer_lib.checkpoint import load_checkpoint, save_checkpoint
from transformer_lib.config import TransformerConfig
from transformer_lib.decoding import translate
from transformer_lib.models import Transformer
from transformer_lib.tokenization import SPECIALS, BPETokenizer, Vocab, normalize_sentence, pad_sequences

from .bad_input import raises

SRC = Vocab("the cat sat on a mat dog ran".split())
TGT = Vocab("le chat assis sur un tapis chien couru".split())
MAX_LEN = 10
CONFIG = TransformerConfig(src_vocab_size=len(SRC), tgt_vocab_size=len(TGT), d_model=16, n_heads=2,
                           n_encoder_layers=1, n_decoder_layers=1, d_ff=32, dropout=0.0, max_len=MAX_LEN)
MODEL = Transformer(CONFIG).eval()


# ----------------------------------------------------------------------------- vocabularies

WHITESPACE = [" ", "\t", "\n", "\r", "\x0b", "\x0c", "\u00a0", "\u2003", "\u3000", "\u2028", "\x1c"]


@pytest.mark.parametrize("space", WHITESPACE, ids=[repr(c) for c in WHITESPACE])
@pytest.mark.parametrize("where", ["inside", "before", "after", "alone"])
def test_a_vocabulary_refuses_a_token_it_could_never_encode(space, where):
    token = {"inside": f"a{space}b", "before": f"{space}a", "after": f"a{space}", "alone": space}[where]
    assert len(token.split()) != 1 or token.split()[0] != token  # str.split would never give it back
    message = raises(ValueError, lambda: Vocab(["cat", token]), "tokens[1]")
    assert repr(token) in message


@given(st.lists(st.text(min_size=1, max_size=6), min_size=1, max_size=6))
def test_a_vocabulary_holds_exactly_the_tokens_it_can_encode(tokens):
    encodable = all(token.split() == [token] for token in tokens)
    distinct = len(set(tokens)) == len(tokens) and not set(tokens) & set(SPECIALS)
    if encodable and distinct:
        vocab = Vocab(tokens)
        assert vocab.encode(" ".join(tokens)) == list(range(4, 4 + len(tokens)))  # each comes back as itself
    else:
        with pytest.raises(ValueError, match=r"^tokens(\[\d+\])?: "):
            Vocab(tokens)


@pytest.mark.parametrize("tokens, error, name", [
    ("cat", TypeError, "tokens"),
    (["cat", ""], ValueError, "tokens[1]"),
    (["cat", 3], TypeError, "tokens[1]"),
    (["cat", None], TypeError, "tokens[1]"),
    (["cat", b"dog"], TypeError, "tokens[1]"),
    (["cat", "cat"], ValueError, "tokens"),
    (["cat", "<pad>"], ValueError, "tokens[1]"),
    (["<unk>"], ValueError, "tokens[0]"),
], ids=["plain str", "empty", "int", "None", "bytes", "duplicate", "special <pad>", "special <unk>"])
def test_bad_vocabulary_tokens(tokens, error, name):
    raises(error, lambda: Vocab(tokens), name)


@pytest.mark.parametrize("special", SPECIALS)
@pytest.mark.parametrize("position", ["alone", "first", "middle", "last"])
def test_a_special_typed_as_text_is_encoded_as_unknown(special, position):
    words = {"alone": [special], "first": [special, "cat"], "middle": ["the", special, "cat"],
             "last": ["the", special]}[position]
    ids, unknown = SRC.encode_with_unknowns(" ".join(words))
    assert ids == [SRC.unk_id if w == special else SRC.stoi[w] for w in words]
    assert unknown == [special]
    assert SRC.pad_id not in ids and SRC.sos_id not in ids and SRC.eos_id not in ids


def test_translate_reads_typed_specials_as_unknown_words():
    result = translate(MODEL, "the <eos> cat <pad>", SRC, TGT)
    assert result.unknown_words == ["<eos>", "<pad>"]


@pytest.mark.parametrize("call, name", [
    (lambda: capture_attention(MODEL, torch.tensor([[4, 5]]), torch.tensor([[1, 4]]), src_vocab="abcdefghijkl"),
     "src_vocab"),
    (lambda: capture_attention(MODEL, torch.tensor([[4, 5]]), torch.tensor([[1, 4]]), tgt_vocab="abcdefghijkl"),
     "tgt_vocab"),
    (lambda: BPETokenizer([]).detokenize("ab</w>"), "symbols"),
    (lambda: Vocab.build("the cat sat"), "sentences"),
    (lambda: pad_sequences("abc"), "sequences"),
    (lambda: SRC.decode("4 5"), "ids"),
], ids=["capture src_vocab", "capture tgt_vocab", "detokenize", "Vocab.build", "pad_sequences", "decode"])
def test_a_plain_string_where_tokens_are_expected_is_a_type_error(call, name):
    raises(TypeError, call, name)


@pytest.mark.parametrize("ids, error, name", [
    (torch.tensor([4.0, 5.0]), TypeError, "ids"),
    (torch.tensor([[4, 5]]), ValueError, "ids"),
    ([4, 5.0], TypeError, "ids[1]"),
    ([4, True], TypeError, "ids[1]"),
    ([4, -1], ValueError, "ids[1]"),
    ([4, 99], ValueError, "ids[1]"),
], ids=["float tensor", "2-D tensor", "float id", "bool id", "negative id", "id beyond"])
def test_vocab_decode_bad_ids(ids, error, name):
    raises(error, lambda: SRC.decode(ids), name)


# ----------------------------------------------------------------------------- sentences to translate


@pytest.mark.parametrize("sentence, error", [
    ("", ValueError), ("   \t\n", ValueError), ("\u3000\u00a0", ValueError), (None, TypeError),
    (["the", "cat"], TypeError), (b"the cat", TypeError), (" ".join(["cat"] * (MAX_LEN + 1)), ValueError),
], ids=["empty", "whitespace", "unicode spaces", "None", "list", "bytes", "too long"])
def test_translate_refuses_bad_sentences_by_name(sentence, error):
    message = raises(error, lambda: translate(MODEL, sentence, SRC, TGT), "sentence")
    if sentence and isinstance(sentence, str) and sentence.split():
        assert f"{MAX_LEN + 1} tokens" in message  # refused, not cut to max_len


# ----------------------------------------------------------------------------- checkpoints


class Color(enum.Enum):
    RED = 1


class Level(enum.IntEnum):
    HIGH = 2


@pytest.mark.parametrize("extra, path", [
    ({"loss": np.float32(1.5)}, "extra['loss']"),
    ({"loss": np.float64(1.5)}, "extra['loss']"),  # a subclass of float, refused by weights_only loading
    ({"steps": np.int64(3)}, "extra['steps']"),
    ({"history": [1.0, 2.0, np.float32(3.0)]}, "extra['history'][2]"),
    ({"run": {"scores": (0.5, np.array([1.0]))}}, "extra['run']['scores'][1]"),
    ({"tags": {"a", "b"}}, "extra['tags']"),
    ({"color": Color.RED}, "extra['color']"),
    ({"level": Level.HIGH}, "extra['level']"),
    ({"ratio": Fraction(1, 3)}, "extra['ratio']"),
    ({"model": Transformer}, "extra['model']"),
    ({"ordered": OrderedDict(a=1)}, "extra['ordered']"),
    ({(1, 2): "tuple key"}, "extra"),
], ids=["np.float32", "np.float64", "np.int64", "in a list", "nested array", "set", "enum", "IntEnum",
        "Fraction", "class", "OrderedDict", "tuple key"])
def test_a_checkpoint_refuses_on_save_what_it_could_not_load(tmp_path, extra, path):
    file = tmp_path / "model.pt"
    message = raises(TypeError, lambda: save_checkpoint(file, MODEL, SRC, TGT, extra=extra), path)
    assert "a checkpoint can load again" in message or "keys" in message
    assert not file.exists()  # nothing written


def test_a_checkpoint_keeps_every_plain_value(tmp_path):
    extra = {"loss": 1.5, "steps": 3, "done": True, "note": "é 日本 🙂", "none": None, "curve": [1.0, 2.5],
             "pair": (1, "a"), "nested": {"a": {"b": [1, {"c": 2}]}, 7: "int key"},
             "weights": torch.arange(3.0), "inf": float("inf")}
    file = save_checkpoint(tmp_path / "model.pt", MODEL, SRC, TGT, extra=extra)
    loaded = load_checkpoint(file).extra
    assert loaded.keys() == extra.keys()
    torch.testing.assert_close(loaded.pop("weights"), extra.pop("weights"))
    assert loaded == extra


# ----------------------------------------------------------------------------- the attention explorer

SENTENCES = {
    "empty": ("", "Type a sentence"),
    "spaces": ("   ", "Type a sentence"),
    "tabs and newlines": ("\t\n\r ", "Type a sentence"),
    "unicode spaces": ("\u3000\u00a0\u2003", "Type a sentence"),
    "over-long": (" ".join(["cat"] * (3 * MAX_LEN)), f"{3 * MAX_LEN} tokens long"),
    "over-long word": ("c" * 10_000, "Not in the vocabulary"),
    "unknown words": ("the zebra sat", "“zebra”"),
    "special <pad>": ("the <pad> cat", "“pad”"),  # written as training text is: < and > removed
    "special <sos> <eos>": ("<sos> the cat <eos>", "“sos”, “eos”"),
    "special <unk>": ("<unk>", "“unk”"),
    "accents": ("le café été", "“café”"),
    "CJK": ("猫が座った", "“猫が座った”"),
    "right to left": ("القط جلس", "“القط”"),
    "emoji": ("the 🐈 sat 👍🏽", "removed: 🏽 🐈 👍"),
    "combining marks": ("ca\u0301t", "“c\u00e1t”"),  # composed (NFC), as the corpus writes it
    "control characters": ("the \x00cat\x1b[31m sat", "Not in the vocabulary"),
    "zero-width space": ("\u200b", "No words left"),
    "html": ("<script>alert(1)</script>", "“script”"),
    "upper case": ("THE CAT", "capitals written in lower case"),
}


@pytest.mark.parametrize("case", list(SENTENCES))
def test_the_explorer_answers_any_typed_sentence_with_a_message(case):
    sentence, expected = SENTENCES[case]
    explorer = viz.AttentionExplorer(MODEL, SRC, TGT, sentence="the cat")
    assert explorer.messages.value == "" and explorer.result is not None
    explorer.sentence.value = sentence  # must not raise
    message = explorer.messages.value
    assert expected in message, message
    assert "Something went wrong" not in message and "Traceback" not in message
    assert "<script>" not in message  # what the reader typed is escaped, never run
    written, changes = normalize_sentence(sentence)  # as the training sentences are written
    if changes and written:
        assert "Read as" in message  # never changed without a note
    if written.split():  # translated: every source token the model read is accounted for
        result = explorer.result
        read = len(result.src_ids)
        assert read == min(len(written.split()), MAX_LEN)
        if read < len(written.split()):  # cut only with a note that says so
            assert f"only the first {MAX_LEN} were used" in message
        assert [SRC.itos[i] for i in result.src_ids] == [
            w if w in SRC.stoi and w not in SPECIALS else "<unk>" for w in written.split()[:MAX_LEN]
        ]
