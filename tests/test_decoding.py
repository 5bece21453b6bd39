import itertools
import math

import pytest
import torch

from transformer_lib.decoding import (
    beam_search,
    greedy_decode,
    length_penalty,
    max_decode_length,
    sample_decode,
    translate,
)
from transformer_lib.greedy_trace import DecodingTrace, trace_greedy
from transformer_lib.tokenization import Vocab
from transformer_lib.vocabulary import SpecialIds

from .seq2seq_toys import EOS, PAD, SOS, VOCAB, tiny_model

pytestmark = pytest.mark.usefixtures("one_torch_thread")  # declared in conftest.py


class Counter:
    """The scripted model's cache: how many positions it has seen (the same for every row)."""

    def __init__(self) -> None:
        self.length = 0

    def index_select(self, index):
        pass  # nothing per row to reorder


class ScriptedModel(torch.nn.Module):
    """A stand-in decoder whose next-token distribution is scripted: at position t, row b
    strongly prefers ``scripts[src[b, 0]][t]`` (logit 5 against 0 elsewhere). It counts the
    positions it is fed, so a test can see what the cache saved."""

    def __init__(self, scripts: dict[int, list[int]], vocab: int = 8) -> None:
        super().__init__()
        self.scripts, self.vocab = scripts, vocab
        self.generator = torch.nn.Identity()  # decode() already returns logits
        self.positions_fed = 0

    def encode(self, src_ids):
        return src_ids[:, :1].float()[:, :, None]  # (B, 1, 1): which script each row follows

    def new_cache(self):
        return Counter()

    def decode(self, tgt_ids, memory, src_ids, cache=None):
        batch, new = tgt_ids.shape
        past = 0 if cache is None else cache.length
        if cache is not None:
            cache.length += new
        self.positions_fed += batch * new
        logits = torch.zeros(batch, new, self.vocab)
        for b in range(batch):
            script = self.scripts[int(memory[b, 0, 0])]
            for t in range(new):
                position = past + t
                if position < len(script):
                    logits[b, t, script[position]] = 5.0
        return logits


def test_beam_search_rejects_a_cache_that_cannot_reorder_itself():
    class NoReorder(ScriptedModel):
        def new_cache(self):
            return {"length": 0}

    src = torch.tensor([[0]])
    with pytest.raises(TypeError, match=r"model: expected new_cache\(\) to give a cache with an index_select"):
        beam_search(NoReorder({0: [3, EOS]}), src, special=SpecialIds(SOS, EOS), max_len=4)


def test_a_transformer_cache_reorders_every_layer_self_and_cross():
    model = tiny_model()
    cache = model.new_cache()
    src = torch.tensor([[4, 5, 6], [5, 6, 7]])
    model.decode(torch.tensor([[SOS], [SOS]]), model.encode(src), src, cache)
    before = [(c.self_attn.key.clone(), c.cross_attn.value.clone()) for c in cache]
    cache.index_select(torch.tensor([1, 1, 0]))
    for layer, (self_key, cross_value) in zip(cache, before, strict=True):
        assert torch.equal(layer.self_attn.key, self_key[[1, 1, 0]])
        assert torch.equal(layer.cross_attn.value, cross_value[[1, 1, 0]])


def run_all_modes(model, src, max_len, eos_id=EOS):
    special = dict(special=SpecialIds(SOS, eos_id, PAD), max_len=max_len)
    return {
        "greedy": greedy_decode(model, src, **special),
        "greedy_uncached": greedy_decode(model, src, use_cache=False, **special),
        "sample_top1": sample_decode(model, src, top_k=1, **special),
        "sample_cold": sample_decode(model, src, temperature=0.01, generator=torch.Generator().manual_seed(0),
                                     **special),
    }


def test_every_mode_stops_at_eos_and_at_max_len():
    # row 0 ends after 3 tokens, row 1 never says <eos> (within 6 steps)
    scripts = {3: [4, 5, 6, EOS, 7, 7, 7], 4: [7, 6, 5, 4, 7, 6, 5]}
    src = torch.tensor([[3, 5], [4, 5]])
    for name, out in run_all_modes(ScriptedModel(scripts), src, max_len=6).items():
        assert out == [[4, 5, 6], [7, 6, 5, 4, 7, 6]], name
    # the cached decoder was fed one position per row and step; the run stops as soon as every row is done
    model = ScriptedModel({3: [4, EOS], 4: [5, 5, EOS]})
    assert greedy_decode(model, src, special=SpecialIds(SOS, EOS), max_len=10) == [[4], [5, 5]]
    assert model.positions_fed == 2 * 3


def test_beam_search_stops_at_eos_and_at_max_len():
    scripts = {3: [4, 5, 6, EOS, 7, 7, 7], 4: [7, 6, 5, 4, 7, 6, 5]}
    src = torch.tensor([[3, 5], [4, 5]])
    for beam_size in (1, 2, 3):
        hypotheses = beam_search(ScriptedModel(scripts), src, SpecialIds(SOS, EOS), max_len=6, beam_size=beam_size)
        assert [h.tokens for h in hypotheses] == [[4, 5, 6], [7, 6, 5, 4, 7, 6]]


def test_eos_none_gives_exactly_max_len_tokens():
    model = tiny_model(0)
    src = torch.tensor([[3, 4, 5, 6], [7, 8, 0, 0]])
    for name, out in run_all_modes(model, src, max_len=25, eos_id=None).items():
        assert [len(row) for row in out] == [25, 25], name
        assert all(PAD not in row and SOS not in row for row in out), name  # never generated
    beams = beam_search(model, src, special=SpecialIds(SOS, None), max_len=25, beam_size=3)
    assert [len(h.tokens) for h in beams] == [25, 25]


def test_cached_greedy_equals_uncached_greedy_on_a_transformer():
    for seed in range(4):
        model = tiny_model(seed, n_decoder_layers=2)
        src = torch.randint(3, VOCAB, (5, 6), generator=torch.Generator().manual_seed(seed))
        src[1, 3:] = PAD  # padded sources too
        src[4, 1:] = PAD
        for eos_id in (EOS, None):
            cached = greedy_decode(model, src, special=SpecialIds(SOS, eos_id), max_len=30)
            uncached = greedy_decode(model, src, special=SpecialIds(SOS, eos_id), max_len=30, use_cache=False)
            assert cached == uncached


def test_greedy_batched_equals_one_sentence_at_a_time():
    model = tiny_model(1)
    src = torch.tensor([[3, 4, 5, 6], [7, 8, 0, 0], [9, 0, 0, 0]])
    together = greedy_decode(model, src, special=SpecialIds(SOS, EOS), max_len=12)
    alone = [greedy_decode(model, row[row != PAD][None], special=SpecialIds(SOS, EOS), max_len=12)[0] for row in src]
    assert together == alone


def test_beam_size_one_equals_greedy():
    for seed in range(6):
        model = tiny_model(seed)
        src = torch.randint(3, VOCAB, (4, 5), generator=torch.Generator().manual_seed(seed))
        src[2, 2:] = PAD
        greedy = greedy_decode(model, src, special=SpecialIds(SOS, EOS), max_len=15)
        beam = beam_search(model, src, special=SpecialIds(SOS, EOS), max_len=15, beam_size=1)
        assert [h.tokens for h in beam] == greedy
    # at least one of these random models stops early, so <eos> handling is compared too
    lengths = [len(t) for seed in range(6) for t in greedy_decode(
        tiny_model(seed), torch.randint(3, VOCAB, (4, 5), generator=torch.Generator().manual_seed(seed)),
        special=SpecialIds(SOS, EOS), max_len=15)]
    assert min(lengths) < 15


@torch.no_grad()
def _sequence_log_prob(model, src, tokens, ended):
    """log P(tokens [+ <eos>]) by teacher forcing, with <pad> and <sos> excluded like the decoders."""
    target = tokens + ([EOS] if ended else [])
    tgt_in = torch.tensor([[SOS, *target[:-1]]])
    logits = model(src, tgt_in)[0]
    logits[:, [PAD, SOS]] = float("-inf")
    log_probs = logits.log_softmax(-1)
    return sum(float(log_probs[t, token]) for t, token in enumerate(target))


@pytest.mark.parametrize("alpha", [0.0, 0.6, 1.0])
def test_wide_beam_finds_the_exhaustive_best(alpha):
    # target vocabulary: <pad> <sos> <eos> a b -> 3 choices per step; max_len 3 -> 15 possible outputs,
    # fewer than the beam: beam search must find the best length-normalised score by brute force
    torch.manual_seed(3)
    model = tiny_model(3, tgt_vocab_size=5)
    src = torch.tensor([[3, 4, 5]])
    candidates = []  # every possible output: 0-2 tokens then <eos>, or 3 tokens cut by max_len
    for length in range(4):
        ended = length < 3
        for tokens in itertools.product([3, 4], repeat=length):
            log_p = _sequence_log_prob(model, src, list(tokens), ended)
            n = length + (1 if ended else 0)
            candidates.append((log_p / length_penalty(n, alpha), list(tokens), log_p))
    assert len(candidates) == 15
    best = max(candidates, key=lambda c: c[0])
    found = beam_search(model, src, special=SpecialIds(SOS, EOS), max_len=3, beam_size=16, alpha=alpha)[0]
    assert found.tokens == best[1]
    assert found.log_prob == pytest.approx(best[2], abs=1e-5)
    assert found.score == pytest.approx(best[0], abs=1e-5)


def test_length_penalty_values():
    assert length_penalty(1, 0.6) == 1.0
    assert length_penalty(7, 0.6) == pytest.approx(2.0**0.6)
    assert length_penalty(10, 0.0) == 1.0


def test_sampling_is_repeatable_with_a_generator_and_varies_without_one():
    model = tiny_model(2)
    src = torch.tensor([[3, 4, 5, 6]] * 8)
    special = dict(special=SpecialIds(SOS, EOS), max_len=10)
    a = sample_decode(model, src, generator=torch.Generator().manual_seed(1), **special)
    b = sample_decode(model, src, generator=torch.Generator().manual_seed(1), **special)
    c = sample_decode(model, src, generator=torch.Generator().manual_seed(2), **special)
    assert a == b and a != c
    assert len({tuple(row) for row in a}) > 1  # the 8 identical sources get different samples
    # top_k=1 and a near-zero temperature are greedy
    greedy = greedy_decode(model, src, **special)
    assert sample_decode(model, src, top_k=1, **special) == greedy
    assert sample_decode(model, src, temperature=1e-4, **special) == greedy


def test_top_k_sampling_only_draws_among_the_k_most_probable():
    model = tiny_model(4)
    src = torch.tensor([[3, 4, 5]] * 200)
    first = sample_decode(model, src, special=SpecialIds(SOS, None), max_len=1, top_k=2,
                          generator=torch.Generator().manual_seed(0))
    logits = model.generator(model.decode(torch.tensor([[SOS]]), model.encode(src[:1]), src[:1]))[0, -1]
    logits[[PAD, SOS]] = float("-inf")
    top2 = set(logits.topk(2).indices.tolist())
    assert {row[0] for row in first} == top2


def test_trace_matches_greedy_and_prints_each_step():
    model = tiny_model(5)
    itos = ["<pad>", "<sos>", "<eos>"] + [f"w{i}" for i in range(3, VOCAB)]
    src = torch.tensor([[3, 4, 5, 6]])
    trace = trace_greedy(model, src, itos, special=SpecialIds(SOS, EOS), max_len=8, top_k=3)
    greedy = greedy_decode(model, src, special=SpecialIds(SOS, EOS), max_len=8)[0]
    chosen = [step.chosen for step in trace]
    assert chosen[:len(greedy)] == [itos[i] for i in greedy]
    assert len(trace) == len(greedy) + (1 if len(greedy) < 8 else 0)  # the <eos> step is shown
    assert isinstance(trace, DecodingTrace)
    assert trace[0].prefix == ["<sos>"] and trace[1].prefix == ["<sos>", chosen[0]]
    for step in trace:
        probs = [p for _, p in step.candidates]
        assert len(probs) == 3 and probs == sorted(probs, reverse=True) and 0 < sum(probs) <= 1 + 1e-6
        assert step.candidates[0][0] == step.chosen
    assert str(trace).splitlines()[0].startswith(f"<sos> -> {chosen[0]}")
    rows = trace.rows()
    assert rows[0]["step"] == 1 and rows[0]["chosen"] == chosen[0] and "p 3" in rows[0]


def test_translate_returns_text_tokens_and_unknown_words():
    src_vocab = Vocab(["a", "b", "c", "d", "e", "f", "g", "h"])  # 12 ids like the tiny model: the sizes must agree
    tgt_vocab = Vocab(["x", "y", "z", "w", "v", "u", "t", "s"])  # 12 ids like the tiny model
    model = tiny_model(6)
    result = translate(model, "a b zebra c", src_vocab, tgt_vocab, max_len=6)
    ids = greedy_decode(model, torch.tensor([[4, 5, 3, 6]]), special=SpecialIds(SOS, EOS), max_len=6)[0]
    assert result.tokens == [tgt_vocab.itos[i] for i in ids]
    assert result.text == " ".join(result.tokens)
    assert result.unknown_words == ["zebra"]  # and printing says so, under the text
    assert str(result) == f"{result.text}\n(warning: not in the model's vocabulary, read as <unk>: 'zebra')"
    # beam_size > 1 is beam search with translate's alpha: seed 5 gives three different outputs for
    # greedy, beam with alpha 0.6 and beam with alpha 2 (checked here, so the test keeps its teeth)
    model, src = tiny_model(5), torch.tensor([[4, 5, 6]])
    best = beam_search(model, src, special=SpecialIds(SOS, EOS), max_len=6, beam_size=3, alpha=2.0)[0].tokens
    others = [greedy_decode(model, src, special=SpecialIds(SOS, EOS), max_len=6)[0],
              beam_search(model, src, special=SpecialIds(SOS, EOS), max_len=6, beam_size=3, alpha=0.6)[0].tokens]
    assert best not in others and others[0] != others[1]
    beam = translate(model, "a b c", src_vocab, tgt_vocab, beam_size=3, alpha=2.0, max_len=6)
    assert beam.ids == best and beam.tokens == [tgt_vocab.itos[i] for i in best]
    with pytest.raises(ValueError, match="sentence: expected at least one token"):
        translate(model, "   ", src_vocab, tgt_vocab)
    with pytest.raises(TypeError, match="sentence: expected a str"):
        translate(model, ["a"], src_vocab, tgt_vocab)


def test_decoding_rejects_bad_arguments():
    model = tiny_model(0)  # config.max_len = 32
    src = torch.tensor([[3, 4]])
    special = dict(special=SpecialIds(SOS, EOS))
    assert max_decode_length(model) == 32
    with pytest.raises(ValueError, match="max_len: the model reads at most config.max_len=32"):
        greedy_decode(model, src, max_len=33, **special)
    with pytest.raises(ValueError, match="max_len: expected a positive int"):
        greedy_decode(model, src, max_len=0, **special)
    with pytest.raises(ValueError, match="src_ids: expected a 2-D tensor"):
        greedy_decode(model, src[0], max_len=5, **special)
    with pytest.raises(TypeError, match="eos: expected an int or None"):
        greedy_decode(model, src, max_len=5, special=SpecialIds(SOS, "2"))
    with pytest.raises(TypeError, match="special: expected a vocabulary.SpecialIds"):
        greedy_decode(model, src, max_len=5, special=dict(sos=SOS, eos=EOS, pad=PAD))
    with pytest.raises(ValueError, match="beam_size"):
        beam_search(model, src, max_len=5, beam_size=0, **special)
    with pytest.raises(ValueError, match="alpha"):
        beam_search(model, src, max_len=5, alpha=-1.0, **special)
    with pytest.raises(ValueError, match="temperature: expected a positive number"):
        sample_decode(model, src, max_len=5, temperature=0.0, **special)
    with pytest.raises(ValueError, match="top_k"):
        sample_decode(model, src, max_len=5, top_k=0, **special)
    with pytest.raises(TypeError, match="model: expected an encoder-decoder with .encode"):
        greedy_decode(torch.nn.Linear(2, 2), src, max_len=5, **special)
    with pytest.raises(ValueError, match="src_ids: expected one sentence"):
        trace_greedy(model, torch.tensor([[3], [4]]), ["x"] * VOCAB, max_len=5, **special)
    assert not math.isnan(length_penalty(0, 0.6))


def _near_tie_model():
    """A float64 model whose logits ignore the input: ids 3 and 4 lead, 4 by 1e-12, which float32 rounds away."""
    model = tiny_model(0).double()
    with torch.no_grad():
        model.generator.weight.zero_()
        model.generator.bias.fill_(-5.0)
        model.generator.bias[3] = 1.0
        model.generator.bias[4] = 1.0 + 1e-12
    return model


def test_a_float64_model_is_decoded_in_float64():
    """One rule for greedy, beam and sampling: the next-token distribution is computed in float64."""
    model, src = _near_tie_model(), torch.tensor([[4, 5, 6]])
    assert torch.tensor([1.0, 1.0 + 1e-12]).float().unique().numel() == 1  # the tie float32 would see
    ids = dict(special=SpecialIds(SOS, EOS), max_len=3)
    assert greedy_decode(model, src, **ids) == [[4, 4, 4]]
    best = beam_search(model, src, beam_size=2, alpha=0.0, **ids)[0]
    assert best.tokens == [4, 4, 4]
    step = model.generator.bias.masked_fill(torch.arange(VOCAB) < 2, -math.inf).log_softmax(-1)[4].item()
    assert abs(best.log_prob - 3 * step) < 1e-13  # float32 would be off by ~1e-7
    for seed in range(5):
        drawn = sample_decode(model, src, temperature=1e-300, generator=torch.Generator().manual_seed(seed), **ids)
        assert drawn == [[4, 4, 4]]
