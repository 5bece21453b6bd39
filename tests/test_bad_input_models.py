"""The last defects the strict bad-input sweep found (issue 41), each with the message a reader gets: the
argument passed, what was expected and what came. The sweep asserts that each case is refused naming its
argument; these check what the message says, and that the valid neighbours still pass."""

import pytest
import torch

from transformer_lib.browser.model import browser_model_files
from transformer_lib.browser.page import translation_payload
from transformer_lib.capture import capture_translation
from transformer_lib.class_token import ClassTokenClassifier, accuracy
from transformer_lib.config import TransformerConfig
from transformer_lib.decoding import greedy_decode, translate
from transformer_lib.figures.ledger import ledger_effects_figure
from transformer_lib.figures.vision import patch_attention_figure
from transformer_lib.markov import skip_bigram_table, skip_vote_choice
from transformer_lib.masked_lm import fill_masked, lm_fill
from transformer_lib.models import DecoderOnlyCache, DecoderOnlyTransformer, EncoderOnlyTransformer, Transformer
from transformer_lib.positional_encoding import LearnedPositionalEmbedding
from transformer_lib.tokenization import Vocab
from transformer_lib.validation import check_items, check_names
from transformer_lib.validation_models import check_model_vocab, check_spells
from transformer_lib.validation_tensors import check_in_range, check_token_ids
from transformer_lib.vision import digit_sets
from transformer_lib.vocabularies import vocabularies_for
from transformer_lib.vocabulary import SpecialIds

from .bad_input import raises

VOCAB = Vocab([f"w{i}" for i in range(8)])  # 12 tokens with the four specials
OTHER = Vocab([f"v{i}" for i in range(8)])  # as many tokens, other words
SMALL = Vocab(["lonely"])  # 5 tokens
CONFIG = TransformerConfig(src_vocab_size=12, tgt_vocab_size=12, d_model=8, n_heads=2, n_encoder_layers=1,
                           n_decoder_layers=1, d_ff=16, dropout=0.0, max_len=16)
torch.manual_seed(0)
MODEL = Transformer(CONFIG).eval()
LM = DecoderOnlyTransformer(CONFIG).eval()
SIZE_MESSAGE = "expected 12 tokens like the model's config.{side}_vocab_size, got a vocabulary of 5"


# ----------------------------------------------------------------------------- a vocabulary against its model


@pytest.mark.parametrize("call, name, side", [
    (lambda: vocabularies_for(MODEL, SMALL, VOCAB), "src_vocab", "src"),
    (lambda: vocabularies_for(MODEL, VOCAB, SMALL), "tgt_vocab", "tgt"),
    (lambda: browser_model_files(MODEL, SMALL, VOCAB), "src_vocab", "src"),
    (lambda: browser_model_files(MODEL, VOCAB, SMALL), "tgt_vocab", "tgt"),
    (lambda: browser_model_files(LM, None, SMALL), "tgt_vocab", "tgt"),
    (lambda: lm_fill(LM, SMALL, "w1 w2 w3", 1), "vocab", "tgt"),
    (lambda: translate(MODEL, "w1 w2", SMALL, VOCAB), "src_vocab", "src"),
])
def test_a_vocabulary_of_another_size_than_the_model_is_refused(call, name, side):
    assert SIZE_MESSAGE.format(side=side) in raises(ValueError, call, name)


def test_the_model_explorer_refuses_a_vocabulary_of_another_size():
    from transformer_lib.browser.model_explorer import ModelExplorer  # ipywidgets: imported where it is used

    message = raises(ValueError, lambda: ModelExplorer(MODEL, VOCAB, SMALL), "tgt_vocab")
    assert SIZE_MESSAGE.format(side="tgt") in message


def test_the_masked_model_counts_its_mask_token_apart():
    model = EncoderOnlyTransformer(CONFIG.replace(src_vocab_size=13)).eval()  # 12 words and <mask>
    fill_masked(model, VOCAB, "w1 w2 w3", 1)
    message = raises(ValueError, lambda: fill_masked(EncoderOnlyTransformer(CONFIG).eval(), VOCAB, "w1 w2", 1), "vocab")
    assert "expected 11 tokens like the model's config.src_vocab_size less 1, got a vocabulary of 12" in message


def test_vocabularies_for_wants_an_encoder_decoder_and_keeps_the_right_vocabularies():
    found = vocabularies_for(MODEL, VOCAB, OTHER)
    assert (found.src, found.tgt) == (VOCAB, OTHER)
    assert "expected an encoder-decoder with .encode" in raises(TypeError, lambda: vocabularies_for(
        torch.nn.Linear(2, 2), VOCAB, VOCAB), "model")


def test_a_payload_refuses_a_target_vocabulary_that_spells_the_translation_otherwise():
    translation = translate(MODEL, "w1 w2", VOCAB, VOCAB, max_len=3)
    maps = capture_translation(MODEL, translation, VOCAB, VOCAB)
    assert translation_payload(translation, maps, VOCAB, VOCAB)["tokens"] == translation.tokens
    # as many tokens, other words: a size check alone would take it and show other words
    message = raises(ValueError, lambda: translation_payload(translation, maps, VOCAB, OTHER), "tgt_vocab")
    assert f"reads its ids {translation.ids}" in message and "got a vocabulary of 12 tokens" in message
    raises(ValueError, lambda: translation_payload(translation, maps, SMALL, VOCAB), "src_vocab")


def test_check_spells_and_check_model_vocab_say_what_came():
    check_spells("tgt_vocab", VOCAB, [4, 5], ["w0", "w1"], "the translation")
    check_spells("src_vocab", VOCAB, [4, 11], None, "the translation")  # no tokens: the ids fit
    message = raises(ValueError, lambda: check_spells("src_vocab", SMALL, [4, 11], None, "the translation"),
                     "src_vocab")
    assert "got a vocabulary of 5 tokens, which reads them as ['lonely', None]" in message
    raises(TypeError, lambda: check_model_vocab("vocab", VOCAB.itos, MODEL, "src"), "vocab")
    assert check_model_vocab("vocab", SMALL, torch.nn.Linear(2, 2), "src") is SMALL  # no config: no size to agree


# ----------------------------------------------------------------------------- source ids, dtypes, values


SPECIAL = SpecialIds(1, 2, 0)


@pytest.mark.parametrize("src_ids, error, says", [
    (torch.tensor([[4, 12]]), ValueError, "src_ids: token ids must lie in [0, 12) for the model's source "
                                          "vocabulary of 12, got 12 at position (0, 1)"),
    (torch.tensor([[4, -1]]), ValueError, "got -1 at position (0, 1)"),
    (torch.tensor([[4.0, 5.0]]), TypeError, "expected integer token ids (torch.long), got dtype torch.float32"),
    (torch.zeros(1, 0, dtype=torch.long), ValueError, "empty sequence"),
])
def test_decoding_checks_the_source_ids(src_ids, error, says):
    assert says in raises(error, lambda: greedy_decode(MODEL, src_ids, SPECIAL, max_len=3), "src_ids")


def test_a_float16_input_to_a_float32_class_token_model_is_refused():
    model = ClassTokenClassifier(CONFIG, n_classes=3).eval()
    x = torch.randn(2, 3, 8)
    message = raises(TypeError, lambda: model(x.half()), "x")
    assert "expected dtype torch.float32 like the module's parameters, got torch.float16" in message
    assert "expected dtype torch.float32" in raises(TypeError, lambda: accuracy(model, x.half(),
                                                                                torch.tensor([0, 1])), "inputs")
    assert model.half()(x.half()).dtype == torch.float16  # a float16 model takes float16


def test_learned_positions_refuse_another_float_dtype():
    positions = LearnedPositionalEmbedding(8, 10)
    assert "got torch.float64" in raises(TypeError, lambda: positions(torch.randn(1, 3, 8, dtype=torch.float64)), "x")
    assert positions.double()(torch.randn(1, 3, 8, dtype=torch.float64)).dtype == torch.float64


def test_digit_labels_lie_in_0_to_9():
    images = torch.rand(4, 8, 8)
    digit_sets(images, torch.tensor([0, 9, 3, 3]), n_sets=2, set_size=2)
    message = raises(ValueError, lambda: digit_sets(images, torch.tensor([0, 10, 3, 3]), n_sets=2, set_size=2),
                     "labels")
    assert message == "labels: digit labels must lie in [0, 10), got 10 at position (1,)"
    check_in_range("labels", torch.tensor([0.0, 9.0]), 10, "digit labels")  # numbers of any dtype: their values


def test_check_token_ids_of_an_unknown_size_still_refuses_a_negative_id():
    check_token_ids("ids", torch.tensor([[5, 10_000]]), None)
    assert "token ids must lie in >= 0, got -3" in raises(ValueError, lambda: check_token_ids(
        "ids", torch.tensor([[5, -3]]), None), "ids")


# ----------------------------------------------------------------------------- shapes and collections


def test_patch_weights_are_one_row_in_reading_order():
    patch_attention_figure(torch.rand(4, 4), torch.rand(4), 2, "a digit")
    assert "expected a 1-D tensor of shape (n_patches,)" in raises(ValueError, lambda: patch_attention_figure(
        torch.rand(4, 4), torch.rand(1, 4), 2, "a digit"), "weights")


def test_ledger_labels_map_row_keys_to_names():
    results = {"rows": {"book": {}, "warmup": {}},
               "runs": [{"variant": v, "seed": s, "exact_match": 0.5 + s / 10} for v in ("book", "warmup")
                        for s in (0, 1)]}
    ledger_effects_figure(results, labels={"warmup": "warm-up"})
    assert "labels[3]: expected a dict of row key -> name shown (str -> str), got int 3 -> NoneType None" == raises(
        TypeError, lambda: ledger_effects_figure(results, labels={3: None}), "labels")
    raises(TypeError, lambda: check_names("labels", ["warmup"], "row key -> name shown"), "labels")


def test_empty_collections_that_hold_nothing_to_compute_are_refused():
    assert "expected at least one KVCache, got none" in raises(ValueError, lambda: DecoderOnlyCache([]), "caches")
    raises(TypeError, lambda: check_items("caches", [3], str, "str"), "caches")
    table = skip_bigram_table(["w1 w2"])
    assert skip_vote_choice(table, ["w1"], ["w2", "w3"]) == 0
    assert "expected at least one word" in raises(ValueError, lambda: skip_vote_choice(table, [], ["w2"]), "prefix")
    assert "empty sequence" in raises(ValueError, lambda: MODEL.src_mask(torch.zeros(1, 0, dtype=torch.long)),
                                      "src_ids")
