"""Bad Python arguments: fractional or boolean sizes, negative sizes, offsets and special ids,
sampling arguments out of range, huge corpus requests.

The rule: an int is an int (a float such as 3.0 is a TypeError, never truncated; a bool is not an
int; a NumPy integer is); a value out of range is a ValueError; each message names the argument.
"""

import math
import time

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from transformer_lib.attention import causal_mask, combine_masks, padding_mask, scaled_dot_product_attention
from transformer_lib.config import TransformerConfig
from transformer_lib.corpus import MAX_NOVEL_PER_COMBINATION, MAX_PAIRS, make_corpus
from transformer_lib.decoding import beam_search, greedy_decode, sample_decode
from transformer_lib.greedy_trace import trace_greedy
from transformer_lib.models import DecoderOnlyTransformer, Transformer
from transformer_lib.multi_head_attention import MultiHeadAttention
from transformer_lib.positional_encoding import (
    LearnedPositionalEmbedding,
    RotaryEmbedding,
    SinusoidalPositionalEncoding,
    relative_position_map,
    sinusoidal_table,
)
from transformer_lib.sampling import filter_logits, sample_continuation
from transformer_lib.tokenization import learn_bpe, make_batches, pad_sequences
from transformer_lib.training import label_smoothed_cross_entropy, train, transformer_lr
from transformer_lib.vocabulary import SpecialIds

from .bad_input import raises

CONFIG = TransformerConfig(src_vocab_size=30, tgt_vocab_size=25, d_model=16, n_heads=2, n_encoder_layers=1,
                           n_decoder_layers=1, d_ff=32, dropout=0.0, max_len=12)
torch.manual_seed(0)  # the models below are the same whichever test module was imported first
MODEL = Transformer(CONFIG).eval()
SRC = torch.randint(1, 30, (2, 6))
IDS = dict(special=SpecialIds(1, 2), max_len=4)
LM = DecoderOnlyTransformer(CONFIG).eval()
PROMPT = torch.tensor([[1, 5], [1, 6]])


# ----------------------------------------------------------------------------- integer arguments

# name -> (call with the integer argument, the argument's name, a valid value)
INT_ARGUMENTS = {
    "causal_mask n_queries": (lambda n: causal_mask(n), "n_queries", 3),
    "causal_mask n_keys": (lambda n: causal_mask(2, n), "n_keys", 3),
    "sinusoidal_table max_len": (lambda n: sinusoidal_table(n, 8), "max_len", 3),
    "sinusoidal_table d_model": (lambda n: sinusoidal_table(5, n), "d_model", 4),
    "relative_position_map offset": (lambda n: relative_position_map(n, 8), "offset", 3),
    "relative_position_map d_model": (lambda n: relative_position_map(1, n), "d_model", 4),
    "SinusoidalPositionalEncoding max_len": (lambda n: SinusoidalPositionalEncoding(8, n), "max_len", 3),
    "LearnedPositionalEmbedding max_len": (lambda n: LearnedPositionalEmbedding(8, n), "max_len", 3),
    "RotaryEmbedding d_head": (lambda n: RotaryEmbedding(n), "d_head", 4),
    "RotaryEmbedding max_len": (lambda n: RotaryEmbedding(4, n), "max_len", 3),
    "positional offset": (lambda n: SinusoidalPositionalEncoding(8, 10)(torch.randn(1, 2, 8), offset=n), "offset", 3),
    "rotary offset": (lambda n: RotaryEmbedding(4, 10)(torch.randn(1, 1, 2, 4), offset=n), "offset", 3),
    "MultiHeadAttention n_heads": (lambda n: MultiHeadAttention(16, n), "n_heads", 4),
    "greedy max_len": (lambda n: greedy_decode(MODEL, SRC, special=SpecialIds(1, 2), max_len=n), "max_len", 3),
    "greedy sos_id": (lambda n: greedy_decode(MODEL, SRC, special=SpecialIds(n, 2), max_len=3), "sos", 3),
    "greedy eos_id": (lambda n: greedy_decode(MODEL, SRC, special=SpecialIds(1, n), max_len=3), "eos", 3),
    "greedy pad_id": (lambda n: greedy_decode(MODEL, SRC, special=SpecialIds(1, 2, n), max_len=3), "pad", 3),
    "beam beam_size": (lambda n: beam_search(MODEL, SRC, **IDS, beam_size=n), "beam_size", 3),
    "sample top_k": (lambda n: sample_decode(MODEL, SRC, **IDS, top_k=n), "top_k", 3),
    "continuation top_k": (lambda n: sample_continuation(LM, PROMPT, max_new_tokens=2, top_k=n), "top_k", 3),
    "continuation max_new_tokens": (lambda n: sample_continuation(LM, PROMPT, max_new_tokens=n), "max_new_tokens", 3),
    "continuation eos_id": (lambda n: sample_continuation(LM, PROMPT, max_new_tokens=2, eos_id=n), "eos_id", 3),
    "filter top_k": (lambda n: filter_logits(torch.randn(2, 5), top_k=n), "top_k", 3),
    "trace top_k": (lambda n: trace_greedy(MODEL, SRC[:1], [str(i) for i in range(25)], **IDS, top_k=n), "top_k", 3),
    "padding_mask pad_id": (lambda n: padding_mask(SRC, n), "pad_id", 3),
    "loss pad_id": (lambda n: label_smoothed_cross_entropy(torch.randn(3, 5), torch.tensor([1, 2, 3]), pad_id=n),
                    "pad_id", 3),
    "transformer_lr step": (lambda n: transformer_lr(n, 16), "step", 3),
    "learn_bpe n_merges": (lambda n: learn_bpe("a b ab", n), "n_merges", 3),
    "pad_sequences pad_id": (lambda n: pad_sequences([[1, 2], [3]], n), "pad_id", 3),
    "make_batches seed": (lambda n: make_batches([("a", "b")], *_vocabs(), batch_size=1, seed=n), "seed", 3),
    "make_corpus n_pairs": (lambda n: make_corpus(0, n_pairs=n, novel_per_combination=1), "n_pairs", 10),
    "make_corpus novel_per_combination": (lambda n: make_corpus(0, n_pairs=10, novel_per_combination=n),
                                          "novel_per_combination", 3),
}


def _same_draws(draw):
    """``draw(top_k, generator)`` with top_k=None and with top_k = the whole vocabulary, on equal seeds."""
    return draw(None, torch.Generator().manual_seed(0)) == draw(CONFIG.tgt_vocab_size, torch.Generator().manual_seed(0))


# Where None is allowed, what it documents: no limit, never stop early, no padding. Each check
# compares with the explicit equivalent, so None read as some other value fails.
NONE_MEANS = {
    "causal_mask n_keys": lambda: torch.equal(causal_mask(3, None), causal_mask(3, 3)),  # square
    "greedy eos_id": lambda: all(len(row) == 3
                                 for row in greedy_decode(MODEL, SRC, special=SpecialIds(1, None), max_len=3)),
    "sample top_k": lambda: _same_draws(lambda k, g: sample_decode(MODEL, SRC, **IDS, top_k=k, generator=g)),
    "loss pad_id": lambda: torch.allclose(  # every position counts, the one whose target is 0 too
        label_smoothed_cross_entropy(LOGITS, torch.tensor([0, 2, 3]), pad_id=None),
        torch.nn.functional.cross_entropy(LOGITS, torch.tensor([0, 2, 3]), label_smoothing=0.1)),
    "continuation top_k": lambda: _same_draws(
        lambda k, g: sample_continuation(LM, PROMPT, max_new_tokens=3, top_k=k, generator=g)),
    "continuation eos_id": lambda: all(
        len(row) == 4 for row in sample_continuation(LM, PROMPT, max_new_tokens=4, eos_id=None, temperature=0)),
    "filter top_k": lambda: torch.equal(filter_logits(LOGITS, top_k=None), LOGITS),
}
LOGITS = torch.randn(3, 5, generator=torch.Generator().manual_seed(1))


def _vocabs():
    from transformer_lib.tokenization import Vocab

    return Vocab(["a"]), Vocab(["b"])


@pytest.mark.parametrize("bad", [3.0, 3.5, True, "3", None, torch.tensor(3.0)],
                         ids=["float 3.0", "float 3.5", "bool", "str", "None", "float tensor"])
@pytest.mark.parametrize("argument", list(INT_ARGUMENTS))
def test_a_non_integer_where_an_int_is_expected_is_a_type_error(argument, bad):
    call, name, _ = INT_ARGUMENTS[argument]
    if bad is None and argument in NONE_MEANS:
        assert NONE_MEANS[argument]()
        return
    raises(TypeError, lambda: call(bad), name)


@pytest.mark.parametrize("argument", list(INT_ARGUMENTS))
def test_a_numpy_integer_is_an_int(argument):
    call, _, good = INT_ARGUMENTS[argument]
    call(np.int64(good))  # no error


# arguments that must be >= 0 (ids, offsets) or >= 1 (sizes)
NON_NEGATIVE = {"offset", "pad_id", "eos_id", "sos", "eos", "pad", "n_merges", "novel_per_combination"}


@pytest.mark.parametrize("argument", [a for a in INT_ARGUMENTS if INT_ARGUMENTS[a][1] not in ("seed",)])
@pytest.mark.parametrize("bad", [-1, -(2**40)])
def test_a_negative_size_offset_or_id_is_a_value_error(argument, bad):
    call, name, _ = INT_ARGUMENTS[argument]
    if name == "offset" and argument.startswith("relative"):
        assert torch.isfinite(call(bad)).all()  # a relative offset may be negative: PE(pos - k) from PE(pos)
        return
    raises(ValueError, lambda: call(bad), name)


@pytest.mark.parametrize("argument", [a for a, (_, name, _) in INT_ARGUMENTS.items() if name not in NON_NEGATIVE
                                      and name not in ("seed", "n_pairs")])
def test_a_zero_size_is_a_value_error(argument):
    call, name, _ = INT_ARGUMENTS[argument]
    raises(ValueError, lambda: call(0), name)


@pytest.mark.parametrize("call, name", [
    (lambda: sinusoidal_table(4, 7), "d_model"),
    (lambda: relative_position_map(2, 9), "d_model"),
    (lambda: SinusoidalPositionalEncoding(5, 4), "d_model"),
    (lambda: RotaryEmbedding(3), "d_head"),
    (lambda: RotaryEmbedding(4, 8, base=0.0), "base"),
    (lambda: RotaryEmbedding(4, 8, base=math.inf), "base"),
], ids=["table", "relative", "sinusoidal module", "rope", "rope base 0", "rope base inf"])
def test_odd_sizes_to_positional_helpers_are_value_errors(call, name):
    raises(ValueError, call, name)


@given(offset=st.integers(-50, 50), length=st.integers(1, 12))
def test_positional_offsets_are_checked_before_reading_the_table(offset, length):
    encoding = SinusoidalPositionalEncoding(8, 12)
    x = torch.zeros(1, length, 8)
    if offset < 0:
        raises(ValueError, lambda: encoding(x, offset=offset), "offset")
    elif offset + length > 12:
        raises(ValueError, lambda: encoding(x, offset=offset), "seq_len")
    else:
        torch.testing.assert_close(encoding(x, offset=offset)[0], encoding.table[offset:offset + length])


# ----------------------------------------------------------------------------- special ids


@pytest.mark.parametrize("name", ["sos", "eos", "pad"])
@pytest.mark.parametrize("decode", [greedy_decode, beam_search, sample_decode], ids=lambda f: f.__name__)
def test_special_ids_outside_the_vocabulary_name_themselves_not_the_ids_tensor(decode, name):
    """A negative id is refused by ``SpecialIds`` itself (named ``sos``...), one beyond the model's
    vocabulary by the decoding call (named ``special.sos``...), never reported as a tensor of ids."""
    for bad in (-1, 25, 10**6):
        ids = {"sos": 1, "eos": 2, "pad": 0, name: bad}
        message = raises(ValueError, lambda ids=ids: decode(MODEL, SRC, SpecialIds(**ids), max_len=4),
                         name if bad < 0 else f"special.{name}")
        assert str(bad) in message


def test_a_negative_pad_id_never_silently_bans_a_real_token():
    raises(ValueError, lambda: greedy_decode(MODEL, SRC, special=SpecialIds(1, 2, -1), max_len=4), "pad")


@pytest.mark.parametrize("decode", [greedy_decode, beam_search, sample_decode], ids=lambda f: f.__name__)
def test_special_ids_in_another_form_are_refused_by_name(decode):
    raises(TypeError, lambda: decode(MODEL, SRC, {"sos": 1, "eos": 2, "pad": 0}, max_len=4), "special")
    raises(TypeError, lambda: decode(MODEL, SRC, (1, 2, 0), max_len=4), "special")


# ----------------------------------------------------------------------------- sampling


@pytest.mark.parametrize("temperature, error", [
    (math.inf, ValueError), (-math.inf, ValueError), (math.nan, ValueError), (0, ValueError), (0.0, ValueError),
    (-1.0, ValueError), (True, TypeError), ("1", TypeError), (None, TypeError), (torch.tensor(1.0), TypeError),
], ids=["inf", "-inf", "nan", "0", "0.0", "negative", "bool", "str", "None", "tensor"])
def test_bad_temperatures(temperature, error):
    raises(error, lambda: sample_decode(MODEL, SRC, **IDS, temperature=temperature), "temperature")


@pytest.mark.parametrize("temperature", [1e-3, 1e-30, 1e-300, 5e-324])
def test_a_vanishing_temperature_is_greedy_decoding(temperature):
    generator = torch.Generator().manual_seed(0)
    sampled = sample_decode(MODEL, SRC, **IDS, temperature=temperature, generator=generator)
    assert sampled == greedy_decode(MODEL, SRC, **IDS)


@pytest.mark.parametrize("temperature", [1e6, 1e300])
def test_a_huge_finite_temperature_still_draws_valid_tokens(temperature):
    generator = torch.Generator().manual_seed(0)
    for row in sample_decode(MODEL, SRC, **IDS, temperature=temperature, generator=generator):
        assert all(3 <= token < 25 or token == 2 for token in row)  # never <pad> (0) or <sos> (1)


@pytest.mark.parametrize("top_k", [1, 24, 25, 10**6])
def test_top_k_up_to_and_beyond_the_vocabulary(top_k):
    generator = torch.Generator().manual_seed(0)
    rows = sample_decode(MODEL, SRC, **IDS, top_k=top_k, generator=generator)
    if top_k == 1:
        assert rows == greedy_decode(MODEL, SRC, **IDS)
    assert all(len(row) <= 4 for row in rows)


TOP_P_CALLS = {
    "sample_decode": lambda p: sample_decode(MODEL, SRC, **IDS, top_p=p),
    "sample_continuation": lambda p: sample_continuation(LM, PROMPT, max_new_tokens=2, top_p=p),
    "filter_logits": lambda p: filter_logits(torch.randn(2, 5), top_p=p),
}


@pytest.mark.parametrize("top_p, error", [
    (0, ValueError), (0.0, ValueError), (-0.1, ValueError), (1.0001, ValueError), (math.nan, ValueError),
    (math.inf, ValueError), (True, TypeError), ("0.9", TypeError), (torch.tensor(0.9), TypeError),
], ids=["0", "0.0", "negative", "above 1", "nan", "inf", "bool", "str", "tensor"])
@pytest.mark.parametrize("call", list(TOP_P_CALLS))
def test_bad_top_p(call, top_p, error):
    raises(error, lambda: TOP_P_CALLS[call](top_p), "top_p")


@pytest.mark.parametrize("top_p", [1e-9, 0.5, 1, 1.0])
def test_top_p_in_its_range_is_accepted(top_p):
    for call in TOP_P_CALLS.values():
        call(top_p)  # no error
    # and it means what filter_logits documents: 1 keeps every token, a vanishing mass only the best
    logits = torch.tensor([[2.0, 1.0, 0.5, -1.0]])
    kept = torch.isfinite(filter_logits(logits, top_p=top_p))
    assert kept.tolist() == ([[True] * 4] if top_p == 1 else [[True, False, False, False]])  # p(best) = 0.61


@pytest.mark.parametrize("kwargs, error, name", [
    ({"temperature": -0.5}, ValueError, "temperature"),
    ({"temperature": math.nan}, ValueError, "temperature"),
    ({"temperature": math.inf}, ValueError, "temperature"),
    ({"temperature": "1"}, TypeError, "temperature"),
    ({"generator": 0}, TypeError, "generator"),
    ({"use_cache": 1}, TypeError, "use_cache"),
    ({"banned_ids": "1"}, TypeError, "banned_ids"),
    ({"banned_ids": (25,)}, ValueError, "banned_ids"),
    ({"banned_ids": (1.0,)}, TypeError, "banned_ids"),
    ({"max_new_tokens": 12}, ValueError, "max_new_tokens"),  # 2 + 12 - 1 positions > max_len 12
])
def test_bad_continuation_arguments(kwargs, error, name):
    raises(error, lambda: sample_continuation(LM, PROMPT, **{"max_new_tokens": 2, **kwargs}), name)


@pytest.mark.parametrize("prompt, error", [
    (torch.tensor([[1.0, 5.0]]), TypeError), (torch.tensor([1, 5]), ValueError),
    (torch.tensor([[1, 0, 5]]), ValueError), (torch.tensor([[1, 25]]), ValueError),
    (torch.zeros(1, 0, dtype=torch.long), ValueError), ([[1, 5]], TypeError),
], ids=["float", "1-D", "padding inside", "out of vocabulary", "empty", "list"])
def test_bad_prompts(prompt, error):
    raises(error, lambda: sample_continuation(LM, prompt, max_new_tokens=2), "prompt_ids")


def test_continuation_needs_a_decoder_only_model_and_the_filter_float_logits():
    raises(TypeError, lambda: sample_continuation(torch.nn.Linear(2, 2), PROMPT, max_new_tokens=2), "model")
    raises(TypeError, lambda: filter_logits(torch.tensor([1, 2, 3]), top_k=1), "logits")
    raises(TypeError, lambda: filter_logits([1.0, 2.0], top_k=1), "logits")


@pytest.mark.parametrize("alpha, error", [(math.nan, ValueError), (math.inf, ValueError), (-0.5, ValueError),
                                          ("0.6", TypeError), (False, TypeError)])
def test_bad_length_penalties(alpha, error):
    raises(error, lambda: beam_search(MODEL, SRC, **IDS, alpha=alpha), "alpha")


@pytest.mark.parametrize("kwargs, error, name", [
    ({"generator": 0}, TypeError, "generator"),
    ({"use_cache": 1}, TypeError, "use_cache"),
])
def test_other_decoding_arguments(kwargs, error, name):
    decode = sample_decode if "generator" in kwargs else greedy_decode
    raises(error, lambda: decode(MODEL, SRC, **IDS, **kwargs), name)


# ----------------------------------------------------------------------------- attention helpers


@pytest.mark.parametrize("call, error, name", [
    (lambda: combine_masks(causal_mask(3), causal_mask(3).float()), TypeError, "masks[1]"),
    (lambda: combine_masks("mask"), TypeError, "masks[0]"),
    (lambda: causal_mask(3, 2), ValueError, "n_keys"),
    (lambda: padding_mask(SRC.float(), 0), TypeError, "ids"),
    (lambda: scaled_dot_product_attention(*[torch.randn(1, 1, 2, 4)] * 3, dropout_p=1.0), ValueError, "dropout_p"),
    (lambda: scaled_dot_product_attention(*[torch.randn(1, 1, 2, 4)] * 3, dropout_p=-0.1), ValueError, "dropout_p"),
    (lambda: MultiHeadAttention(16, 2)(*[torch.randn(1, 2, 16)] * 3, need_weights=1), TypeError, "need_weights"),
], ids=["float mask", "str mask", "fewer keys", "float ids", "dropout 1", "dropout negative", "need_weights int"])
def test_attention_helper_arguments(call, error, name):
    raises(error, call, name)


@pytest.mark.parametrize("call, error, name", [
    (lambda: label_smoothed_cross_entropy(torch.randn(2, 5), torch.tensor([1, 2]), smoothing=math.nan),
     ValueError, "smoothing"),
    (lambda: label_smoothed_cross_entropy(torch.randn(2, 5), torch.tensor([1, 2]), smoothing=1.0),
     ValueError, "smoothing"),
    (lambda: label_smoothed_cross_entropy(torch.randn(2, 5), torch.tensor([1, 2]), pad_id=5), ValueError, "pad_id"),
    (lambda: label_smoothed_cross_entropy(torch.randn(2, 5), torch.tensor([1, 2]), reduction="none"),
     ValueError, "reduction"),
    (lambda: transformer_lr(1, 16, scale=math.inf), ValueError, "scale"),
    (lambda: transformer_lr(1, 16, scale=0), ValueError, "scale"),
    (lambda: train(MODEL, [], steps=1, clip_norm=math.nan), ValueError, "clip_norm"),
    (lambda: train(MODEL, [], steps=1, clip_norm="1"), TypeError, "clip_norm"),
    (lambda: train(MODEL, [], steps=1, time_budget_s=math.nan), ValueError, "time_budget_s"),
    (lambda: train(MODEL, [], steps=1, time_budget_s=-1.0), ValueError, "time_budget_s"),
    (lambda: train(MODEL, [], steps=1.0), TypeError, "steps"),
], ids=["smoothing nan", "smoothing 1", "pad_id beyond classes", "reduction", "scale inf", "scale 0",
        "clip_norm nan", "clip_norm str", "time budget nan", "time budget negative", "steps float"])
def test_training_arguments(call, error, name):
    raises(error, call, name)


# ----------------------------------------------------------------------------- bounded work


@pytest.mark.parametrize("kwargs, name", [
    ({"n_pairs": 10**12}, "n_pairs"),
    ({"n_pairs": MAX_PAIRS + 1}, "n_pairs"),
    ({"n_pairs": 10, "novel_per_combination": 10**9}, "novel_per_combination"),
    ({"n_pairs": 10, "novel_per_combination": MAX_NOVEL_PER_COMBINATION + 1}, "novel_per_combination"),
    ({"n_pairs": 10, "novel_per_combination": MAX_NOVEL_PER_COMBINATION,
      "held_out": [("white", "car")] * (MAX_PAIRS // MAX_NOVEL_PER_COMBINATION + 1)}, "novel_per_combination"),
], ids=["1e12 pairs", "MAX_PAIRS + 1", "1e9 novel", "MAX_NOVEL + 1", "too many novel in all"])
def test_huge_corpus_requests_fail_at_once(kwargs, name):
    start = time.perf_counter()
    raises(ValueError, lambda: make_corpus(0, **kwargs), name)
    assert time.perf_counter() - start < 1.0  # up front, before any sentence is drawn
