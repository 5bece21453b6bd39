"""The logits filter (top-k, top-p) against Hugging Face's own warpers, and the decoder-only sampler."""

import math

import pytest
import torch

from transformer_lib.config import TransformerConfig
from transformer_lib.decoding import greedy_decode, sample_decode
from transformer_lib.models import DecoderOnlyTransformer
from transformer_lib.sampling import draw_next, filter_logits, sample_continuation
from transformer_lib.vocabulary import SpecialIds

from .seq2seq_toys import tiny_model

LM_CONFIG = TransformerConfig(src_vocab_size=20, tgt_vocab_size=20, d_model=16, n_heads=2, n_decoder_layers=2,
                              d_ff=32, dropout=0.0, max_len=16)


def language_model(seed: int = 0, pad_id: int | None = 0) -> DecoderOnlyTransformer:
    torch.manual_seed(seed)
    return DecoderOnlyTransformer(LM_CONFIG.replace(pad_id=pad_id)).double().eval()


def random_logits(seed: int, shape=(6, 40), scale: float = 3.0) -> torch.Tensor:
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64) * scale


# ----------------------------------------------------------------------------- the filter


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("top_k", [1, 2, 7, 39, 40, 100])
def test_top_k_keeps_what_hugging_face_keeps(seed, top_k):
    from transformers import TopKLogitsWarper

    logits = random_logits(seed)
    expected = TopKLogitsWarper(top_k)(None, logits.clone())
    assert torch.equal(filter_logits(logits, top_k=top_k), expected)


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("top_p", [0.01, 0.1, 0.5, 0.8, 0.9, 0.95, 0.999, 1.0])
@pytest.mark.parametrize("scale", [0.5, 3.0])
def test_top_p_keeps_what_hugging_face_keeps(seed, top_p, scale):
    from transformers import TopPLogitsWarper

    logits = random_logits(seed, scale=scale)
    expected = TopPLogitsWarper(top_p)(None, logits.clone())
    assert torch.equal(filter_logits(logits, top_p=top_p), expected)


@pytest.mark.parametrize("seed", range(3))
def test_top_k_then_top_p_is_hugging_faces_order(seed):
    from transformers import TopKLogitsWarper, TopPLogitsWarper

    logits = random_logits(seed)
    expected = TopPLogitsWarper(0.7)(None, TopKLogitsWarper(5)(None, logits.clone()))
    assert torch.equal(filter_logits(logits, top_k=5, top_p=0.7), expected)


@pytest.mark.parametrize("seed", range(10))
@pytest.mark.parametrize("top_p", [0.2, 0.5, 0.9])
def test_the_nucleus_is_the_smallest_set_reaching_top_p(seed, top_p):
    logits = random_logits(seed, shape=(1, 30))[0]
    kept = torch.isfinite(filter_logits(logits, top_p=top_p))
    probs = logits.softmax(-1)
    ranked = probs.sort(descending=True).values
    n = int(kept.sum())
    assert probs[kept].sum() >= top_p  # reaches p...
    assert ranked[: n - 1].sum() < top_p  # ...and one token fewer would not
    assert set(torch.nonzero(kept).flatten().tolist()) == set(probs.argsort(descending=True)[:n].tolist())


def test_top_p_one_keeps_everything_and_a_tiny_top_p_only_the_argmax():
    logits = random_logits(0)
    assert torch.equal(filter_logits(logits, top_p=1.0), logits)
    assert torch.equal(filter_logits(logits), logits)
    tiny = filter_logits(logits, top_p=1e-12)
    assert torch.equal(torch.isfinite(tiny).sum(-1), torch.ones(6, dtype=torch.long))
    assert torch.equal(tiny.argmax(-1), logits.argmax(-1))


def test_the_filter_does_not_change_its_input_and_keeps_dtype_and_leading_dims():
    logits = random_logits(1, shape=(2, 3, 10)).float()
    before = logits.clone()
    out = filter_logits(logits, top_k=3, top_p=0.5)
    assert torch.equal(logits, before) and out.dtype == torch.float32 and out.shape == logits.shape
    assert (torch.isfinite(out).sum(-1) <= 3).all()


# ----------------------------------------------------------------------------- drawing


def test_seeded_draws_repeat_and_follow_the_filtered_distribution():
    logits = torch.tensor([[2.0, 1.0, 0.0, -1.0]]).repeat(20000, 1)
    a = draw_next(logits, top_p=0.8, generator=torch.Generator().manual_seed(3))
    b = draw_next(logits, top_p=0.8, generator=torch.Generator().manual_seed(3))
    assert torch.equal(a, b)
    probs = logits[0].softmax(-1)  # 0.64, 0.24, 0.09, 0.03: the nucleus of 0.8 is the first two
    expected = probs[:2] / probs[:2].sum()
    counts = torch.bincount(a, minlength=4).double() / len(a)
    assert counts[2:].sum() == 0
    assert torch.allclose(counts[:2], expected.double(), atol=0.015)  # about 5 standard errors


def test_temperature_zero_is_the_argmax():
    logits = random_logits(4)
    assert torch.equal(draw_next(logits, temperature=0.0), logits.argmax(-1))


def test_sample_decode_with_top_p():
    model = tiny_model().eval()
    src = torch.randint(3, 12, (3, 5), generator=torch.Generator().manual_seed(0))
    special = dict(special=SpecialIds(1, 2), max_len=6)
    greedy = greedy_decode(model, src, **special)
    assert sample_decode(model, src, top_p=1e-9, generator=torch.Generator().manual_seed(0), **special) == greedy
    unfiltered = sample_decode(model, src, generator=torch.Generator().manual_seed(5), **special)
    assert sample_decode(model, src, top_p=1.0, generator=torch.Generator().manual_seed(5), **special) == unfiltered


# ----------------------------------------------------------------------------- the decoder-only sampler


def _without_cache_by_hand(model, prompt, steps, temperature, top_k, top_p, seed, banned):
    """The sampler written out: a full forward pass over the whole sequence at every step."""
    generator = torch.Generator().manual_seed(seed)
    tokens = prompt.clone()
    for _ in range(steps):
        logits = model(tokens)[:, -1]
        logits[:, [0, *banned]] = -math.inf
        tokens = torch.cat([tokens, draw_next(logits, temperature=temperature, top_k=top_k, top_p=top_p,
                                              generator=generator)[:, None]], dim=1)
    return tokens[:, prompt.shape[1]:].tolist()


@pytest.mark.parametrize("temperature, top_k, top_p", [(1.0, None, None), (0.7, 5, None), (1.3, None, 0.9),
                                                       (0.0, None, None), (1.0, 4, 0.6)])
def test_the_cached_sampler_draws_what_full_forward_passes_draw(temperature, top_k, top_p):
    model = language_model()
    prompt = torch.tensor([[1, 5, 6], [1, 7, 8], [1, 9, 3]])
    kwargs = dict(max_new_tokens=10, temperature=temperature, top_k=top_k, top_p=top_p, banned_ids=(1,))
    cached = sample_continuation(model, prompt, generator=torch.Generator().manual_seed(11), **kwargs)
    uncached = sample_continuation(model, prompt, generator=torch.Generator().manual_seed(11), use_cache=False,
                                   **kwargs)
    assert cached == uncached == _without_cache_by_hand(model, prompt, 10, temperature, top_k, top_p, 11, (1,))
    assert all(len(row) == 10 and 0 not in row and 1 not in row for row in cached)


@pytest.mark.parametrize("pad_id", [0, None])
def test_continuations_stop_after_eos_and_keep_it(pad_id):
    model = language_model(2, pad_id)  # None: no padding id (GPT-2's case), finished rows repeat <eos>
    prompt = torch.tensor([[1, 4]] * 8)
    full = sample_continuation(model, prompt, max_new_tokens=12, generator=torch.Generator().manual_seed(0))
    eos = full[0][3]  # pretend the fourth token drawn in row 0 ends a sentence
    rows = sample_continuation(model, prompt, max_new_tokens=12, eos_id=eos,
                               generator=torch.Generator().manual_seed(0))
    for row, unstopped in zip(rows, full, strict=True):
        cut = unstopped.index(eos) + 1 if eos in unstopped else 12
        assert row == unstopped[:cut]  # the same draws, stopped at the first <eos>, which stays
    assert rows[0][-1] == eos and len(rows[0]) <= 4


def test_without_a_padding_id_every_token_is_drawn_greedy_included():
    """GPT-2's case: no id is padding, so the sampler bans none (token 0 here, <|endoftext|> there)."""
    model = language_model(3, pad_id=None)
    prompt = torch.tensor([[0, 5], [2, 0]])
    greedy = sample_continuation(model, prompt, max_new_tokens=10, temperature=0.0)
    with torch.no_grad():
        assert greedy == [[int(t) for t in row] for row in _argmax_path(model, prompt, 10)]
    drawn = sample_continuation(model, torch.tensor([[1]] * 16), max_new_tokens=14,
                                generator=torch.Generator().manual_seed(0))
    assert any(0 in row for row in drawn)


def _argmax_path(model, prompt, steps):
    tokens = prompt
    for _ in range(steps):
        tokens = torch.cat([tokens, model(tokens)[:, -1].argmax(dim=-1, keepdim=True)], dim=1)
    return tokens[:, prompt.shape[1]:]


def test_an_eos_that_is_never_drawn_is_refused():
    """An <eos> equal to the padding id (GPT-2's <|endoftext|> when it served as padding) or banned would
    never end a row: refused, not run to max_new_tokens in silence."""
    model, prompt = language_model(), torch.tensor([[1, 4]])
    with pytest.raises(ValueError, match=r"eos_id: expected a token that can be drawn, got 0, the padding id"):
        sample_continuation(model, prompt, max_new_tokens=3, eos_id=0)
    with pytest.raises(ValueError, match=r"eos_id: expected a token that can be drawn, got 7, one of banned_ids"):
        sample_continuation(model, prompt, max_new_tokens=3, eos_id=7, banned_ids=(7,))


def test_seeded_continuations_repeat_and_seeds_differ():
    model = language_model()
    prompt = torch.tensor([[1]] * 4)
    draw = lambda seed: sample_continuation(model, prompt, max_new_tokens=8,  # noqa: E731
                                            generator=torch.Generator().manual_seed(seed))
    assert draw(1) == draw(1) and draw(1) != draw(2)


def test_greedy_continuation_is_the_argmax_path_and_temperature_near_zero_agrees():
    model = language_model()
    prompt = torch.tensor([[1, 5]])
    greedy = sample_continuation(model, prompt, max_new_tokens=6, temperature=0.0)
    assert greedy == sample_continuation(model, prompt, max_new_tokens=6, temperature=1e-9,
                                         generator=torch.Generator().manual_seed(0))
    tokens = prompt
    for token in greedy[0]:
        logits = model(tokens)[0, -1]
        logits[0] = -math.inf
        assert int(logits.argmax()) == token
        tokens = torch.cat([tokens, torch.tensor([[token]])], dim=1)


def test_prompts_up_to_the_positional_table():
    model = language_model()
    prompt = torch.ones(1, 10, dtype=torch.long)
    assert len(sample_continuation(model, prompt, max_new_tokens=7)[0]) == 7  # 10 + 7 - 1 = 16 positions
    with pytest.raises(ValueError, match="max_new_tokens: the model reads at most config.max_len=16"):
        sample_continuation(model, prompt, max_new_tokens=8)


# ----------------------------------------------------------------------------- non-finite logits and ties


@pytest.mark.parametrize("bad", [math.nan, math.inf], ids=str)
@pytest.mark.parametrize("kwargs", [dict(top_k=1), dict(top_p=0.5), {}], ids=str)
def test_nan_and_plus_inf_logits_are_refused(bad, kwargs):
    """One NaN used to make top_k=1 keep every token, one +inf to disable top-p."""
    from .bad_input import raises

    logits = random_logits(0)
    logits[2, 5] = bad
    message = raises(ValueError, lambda: filter_logits(logits, **kwargs), "logits")
    assert "(2, 5)" in message


def test_minus_inf_means_excluded_and_a_row_with_nothing_left_is_refused():
    from .bad_input import raises

    logits = torch.tensor([[0.0, -math.inf, 1.0, -math.inf]])
    assert torch.equal(torch.isfinite(filter_logits(logits, top_k=3)), torch.tensor([[True, False, True, False]]))
    assert torch.equal(torch.isfinite(filter_logits(logits, top_p=0.5)), torch.tensor([[False, False, True, False]]))
    raises(ValueError, lambda: filter_logits(torch.full((2, 3), -math.inf)), "logits")


@pytest.mark.parametrize("permutation", [[0, 1, 2, 3], [3, 2, 1, 0], [1, 3, 0, 2]], ids=str)
def test_ties_at_the_boundary_all_stay_in_top_k_and_in_top_p(permutation):
    """One rule for both filters: a token is never dropped for a tie it loses only by its id."""
    uniform = torch.zeros(1, 4)
    assert torch.isfinite(filter_logits(uniform, top_p=0.5)).all()  # used to keep ids 0 and 1 only
    assert torch.isfinite(filter_logits(uniform, top_k=2)).all()
    logits = torch.tensor([[3.0, 1.0, 1.0, -2.0]])[:, permutation]  # the two 1.0 tie at the nucleus' edge
    kept = torch.isfinite(filter_logits(logits, top_p=0.9))
    assert kept.sum() == 3 and not kept[0, permutation.index(3)]
    assert kept[0, permutation.index(1)] and kept[0, permutation.index(2)]
    kept = torch.isfinite(filter_logits(logits, top_k=2))
    assert kept.sum() == 3 and not kept[0, permutation.index(3)]
