"""The library's edges found by testing from outside (issue 26): arguments that were not named or named
wrongly, and inputs that gave a silently wrong result. Each case failed before its fix."""

import math

import pytest
import torch

from transformer_lib.attention import scaled_dot_product_attention
from transformer_lib.capture import capture_attention
from transformer_lib.checkpoint import load_checkpoint, save_checkpoint
from transformer_lib.config import TransformerConfig
from transformer_lib.corpus import make_corpus
from transformer_lib.figures.architecture import text_alternative
from transformer_lib.figures.attention import attention_figure
from transformer_lib.greedy_trace import trace_greedy
from transformer_lib.language_model import next_token_entropy, perplexity, sample_sentences
from transformer_lib.models import DecoderOnlyTransformer, Transformer
from transformer_lib.multi_head_attention import KVCache, MultiHeadAttention
from transformer_lib.oracle import classify_sentence, makes_sense
from transformer_lib.paper import ledger
from transformer_lib.positional_encoding import (
    LearnedPositionalEmbedding,
    RotaryEmbedding,
    SinusoidalPositionalEncoding,
)
from transformer_lib.prose import shown
from transformer_lib.residual import layer_norm
from transformer_lib.rnn import Seq2SeqGRUAttention, Seq2SeqGRUConfig
from transformer_lib.sampling import sample_continuation
from transformer_lib.tokenization import BPETokenizer, Vocab, collate, learn_bpe, pad_sequences
from transformer_lib.train.data import TextData, global_batches, local_part
from transformer_lib.training import TrainingHistory, batch_order, training_step
from transformer_lib.vocabulary import SpecialIds

from .bad_input import raises

CONFIG = TransformerConfig(src_vocab_size=12, tgt_vocab_size=12, d_model=16, n_heads=2, n_encoder_layers=1,
                           n_decoder_layers=1, d_ff=32, dropout=0.0, max_len=16)
torch.manual_seed(0)
MODEL = Transformer(CONFIG).eval()
LM = DecoderOnlyTransformer(CONFIG).eval()
SRC = torch.tensor([[4, 5, 6]])
VOCAB = Vocab([f"w{i}" for i in range(8)])  # 12 tokens with the specials
ITOS = VOCAB.itos


# ----------------------------------------------------------------------------- arguments named


def test_sample_continuation_of_an_encoder_decoder_names_the_model():
    raises(TypeError, lambda: sample_continuation(MODEL, SRC, max_new_tokens=2), "model")


def test_banning_every_token_names_banned_ids():
    raises(ValueError, lambda: sample_continuation(LM, SRC, max_new_tokens=2, banned_ids=tuple(range(1, 12))),
           "banned_ids")


def test_a_device_that_does_not_exist_is_named_by_load_checkpoint(tmp_path):
    path = save_checkpoint(tmp_path / "m.pt", MODEL)
    raises(ValueError, lambda: load_checkpoint(path, device="nonsense"), "device")
    raises(TypeError, lambda: load_checkpoint(path, device=0.5), "device")
    raises(TypeError, lambda: load_checkpoint(None), "path")


def test_attention_map_with_mismatched_batches_names_tgt_ids():
    torch.manual_seed(0)
    model = Seq2SeqGRUAttention(Seq2SeqGRUConfig(12, 12, d_model=8, hidden_size=8, n_layers=1)).eval()
    raises(ValueError, lambda: model.attention_map(torch.tensor([[4, 5], [6, 7]]), torch.tensor([[1, 4, 5]])),
           "tgt_ids")


@pytest.mark.parametrize("call", [
    lambda: sample_sentences(LM, Vocab(["a", "b"]), 2),
    lambda: perplexity(LM, ["a b"], Vocab(["a", "b"])),
    lambda: next_token_entropy(LM, ["a b"], Vocab(["a", "b"])),
], ids=["sample_sentences", "perplexity", "next_token_entropy"])
def test_a_vocabulary_of_the_wrong_length_is_refused(call):
    message = raises(ValueError, call, "vocab")
    assert "6" in message and "12" in message


@pytest.mark.parametrize("call, name", [
    (lambda: Vocab(None), "tokens"),
    (lambda: Vocab.build(None), "sentences"),
    (lambda: learn_bpe(None, 3), "text"),
    (lambda: BPETokenizer.learn(None, 3), "text"),
    (lambda: make_corpus(n_pairs=20, held_out=None), "held_out"),
    (lambda: Vocab(5), "tokens"),
    (lambda: learn_bpe(5, 3), "text"),
], ids=["Vocab", "Vocab.build", "learn_bpe", "BPETokenizer.learn", "make_corpus", "Vocab int", "learn_bpe int"])
def test_none_where_a_sequence_is_expected_is_a_named_type_error(call, name):
    raises(TypeError, call, name)


@pytest.mark.parametrize("call, error, name", [
    (lambda: layer_norm(torch.randn(2, 3, 8), torch.ones(5), torch.zeros(8)), ValueError, "gamma"),
    (lambda: layer_norm(torch.randn(2, 3, 8), torch.ones(8), torch.zeros(3)), ValueError, "beta"),
    (lambda: layer_norm([1.0], torch.ones(1), torch.zeros(1)), TypeError, "x"),
    (lambda: SinusoidalPositionalEncoding(8, 10)(torch.randn(1, 3, 6)), ValueError, "x"),
    (lambda: LearnedPositionalEmbedding(8, 10)(torch.randn(1, 3, 6)), ValueError, "x"),
    (lambda: RotaryEmbedding(4, 10)(torch.randn(1, 2, 3, 6)), ValueError, "x"),
    (lambda: capture_attention(MODEL, SRC, torch.tensor([[1, 4]]), src_vocab=["a", "b"]), ValueError, "src_vocab"),
    (lambda: capture_attention(MODEL, SRC, torch.tensor([[1, 4]]), tgt_vocab=["a"]), ValueError, "tgt_vocab"),
    (lambda: trace_greedy(MODEL, SRC, ["a", "b"], special=SpecialIds(1, 2), max_len=3), ValueError, "itos"),
], ids=["gamma", "beta", "x list", "sinusoidal", "learned", "rotary", "capture src_vocab", "capture tgt_vocab",
        "trace itos"])
def test_size_mismatches_are_named(call, error, name):
    raises(error, call, name)


def test_attention_figure_index_must_be_an_int():
    maps = capture_attention(MODEL, SRC, torch.tensor([[1, 4]]))
    raises(TypeError, lambda: attention_figure(maps, index=0.5), "index")
    raises(ValueError, lambda: attention_figure(maps, index=1), "index")


def test_the_explorer_never_quotes_a_huge_word_whole():
    from transformer_lib.browser.explorers import AttentionExplorer

    from .toy_translation import SRC as TOY_SRC
    from .toy_translation import TGT as TOY_TGT
    from .toy_translation import toy_model

    word = "x" * 10_000
    explorer = AttentionExplorer(toy_model(), TOY_SRC, TOY_TGT, sentence=f"the {word} cat")
    assert explorer.result is not None
    assert word not in explorer.messages.value and len(explorer.messages.value) < 1000, len(explorer.messages.value)
    assert "xxx…" in explorer.messages.value  # still shown, cut


# ----------------------------------------------------------------------------- silent wrong results


def test_sinusoidal_encoding_of_integer_tensors_is_refused_not_truncated():
    raises(TypeError, lambda: SinusoidalPositionalEncoding(8, 10)(torch.zeros(1, 3, 8, dtype=torch.long)), "x")
    raises(TypeError, lambda: LearnedPositionalEmbedding(8, 10)(torch.zeros(1, 3, 8, dtype=torch.long)), "x")
    raises(TypeError, lambda: RotaryEmbedding(4, 10)(torch.zeros(1, 1, 3, 4, dtype=torch.long)), "x")


@pytest.mark.parametrize("bad, error", [([[1, 2.7]], TypeError), ([[1, True]], TypeError), ([[1, -3]], ValueError),
                                        ([[1, "2"]], TypeError), ([None], TypeError), ([[1], 2], TypeError)], ids=str)
def test_pad_sequences_refuses_what_it_would_truncate(bad, error):
    raises(error, lambda: pad_sequences(bad), "sequences")


def test_attention_with_zero_width_heads_is_refused_not_nan():
    empty = torch.randn(1, 2, 3, 0)
    raises(ValueError, lambda: scaled_dot_product_attention(empty, empty, empty), "query")
    assert not math.isnan(float(scaled_dot_product_attention(*[torch.randn(1, 2, 3, 1)] * 3)[0].sum()))


# ----------------------------------------------------------------------------- found by the sweep after the merge
@pytest.mark.parametrize("call, error, name", [
    (lambda: KVCache(key=torch.zeros(1, 2, 3, 4), value=torch.zeros(1, 2, 3, 4)).update(
        torch.zeros(1, 2, 1, 8), torch.zeros(1, 2, 1, 8)), ValueError, "k"),
    (lambda: KVCache().update(torch.zeros(1, 2, 1, 4), None), TypeError, "v"),
    (lambda: MultiHeadAttention(8, 2)(torch.randn(1, 3, 8), torch.randn(1, 3, 8), torch.randn(1, 3, 8), cache=3),
     TypeError, "cache"),
    (lambda: training_step(torch.nn.Linear(2, 2), _batch(), None, None, None), TypeError, "model"),
    (lambda: batch_order(2.0, 0, 0), TypeError, "n_batches"),
    (lambda: TrainingHistory().record(None, 1.0), TypeError, "result"),
    (lambda: ledger(["data", "no such row"]), ValueError, "keys[1]"),
    (lambda: ledger("data"), TypeError, "keys"),
    (lambda: shown(None, ".2f"), TypeError, "value"),
    (lambda: makes_sense(None), TypeError, "sentence"),
    (lambda: text_alternative(None), TypeError, "blocks"),
    (lambda: TextData([("a", "b")], VOCAB).from_tokens(None), TypeError, "tokens"),
    (lambda: local_part(_batch(), 2, 2), ValueError, "rank"),
    (lambda: global_batches(TextData([("w1", "w2")], VOCAB), None, 0, 1), TypeError, "batch_size"),
], ids=["KVCache k", "KVCache v", "attention cache", "training_step model", "batch_order", "record", "ledger key",
        "ledger str", "shown", "makes_sense", "text_alternative", "from_tokens", "local_part", "global_batches"])
def test_arguments_of_the_merged_modules_are_named(call, error, name):
    raises(error, call, name)


def test_a_str_of_training_sentences_is_refused_not_searched_for_substrings():
    # "la table" is inside the str: ``in`` would have called the sentence memorised
    raises(TypeError, lambda: classify_sentence("la table", "la table est rouge"), "training")
    assert classify_sentence("la table", {"la table est rouge"}) != "memorised"


def _batch():
    return collate([([4, 5], [6])], VOCAB)
