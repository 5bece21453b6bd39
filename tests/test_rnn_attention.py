"""The GRU encoder-decoder with additive attention: shapes, padding, the cache, the one decoding
path, a toy task learned with the same training loop, and bad input."""

import pytest
import torch

from transformer_lib.attention import AdditiveAttention
from transformer_lib.decoding import beam_search, greedy_decode
from transformer_lib.rnn import GRUDecoderState, Seq2SeqGRU, Seq2SeqGRUAttention, Seq2SeqGRUConfig
from transformer_lib.training import train

from .bad_input import raises
from .seq2seq_toys import EOS, PAD, SOS, VOCAB, one_thread, reverse_pairs, to_batches


@pytest.fixture(autouse=True, scope="module")
def _one_thread():
    with one_thread():
        yield


def gru_attention(seed: int = 0, **changes) -> Seq2SeqGRUAttention:
    torch.manual_seed(seed)
    settings = dict(d_model=16, hidden_size=32, n_layers=1, dropout=0.0)
    settings.update(changes)
    return Seq2SeqGRUAttention(Seq2SeqGRUConfig(VOCAB, VOCAB, **settings)).eval()


def test_it_is_the_gru_baseline_plus_attention():
    model, baseline = gru_attention(0), Seq2SeqGRU(Seq2SeqGRUConfig(VOCAB, VOCAB, d_model=16, hidden_size=32))
    extra = {name for name, _ in model.named_parameters()} - {name for name, _ in baseline.named_parameters()}
    assert extra == {"attention.w_query.weight", "attention.w_key.weight", "attention.v.weight", "combine.weight"}
    assert isinstance(model.attention, AdditiveAttention)


def test_shapes_and_padding_is_never_read():
    model = gru_attention(1)
    src = torch.tensor([[3, 4, 5, 0, 0], [6, 7, 8, 9, 10]])
    tgt = torch.tensor([[SOS, 4, 5], [SOS, 6, 0]])
    assert model(src, tgt).shape == (2, 3, VOCAB)
    memory = model.encode(src)
    assert memory.shape == (2, 5, 32)  # (B, S, hidden): every encoder state
    assert (memory[0, 3:] == 0).all()
    # the last real state is Seq2SeqGRU's memory: the same encoder
    baseline = Seq2SeqGRU(model.config).eval()
    baseline.load_state_dict({k: v for k, v in model.state_dict().items() if k in baseline.state_dict()})
    torch.testing.assert_close(memory[:, [2, 4]].diagonal(dim1=0, dim2=1).T, baseline.encode(src)[:, 0])
    # padding changes neither what the first sentence reads nor where it looks
    torch.testing.assert_close(model(src, tgt)[:1], model(src[:1, :3], tgt[:1]))
    weights = model.attention_map(src, tgt)  # (B, T, S)
    assert weights.shape == (2, 3, 5) and (weights[0, :, 3:] == 0).all()
    torch.testing.assert_close(weights.sum(-1), torch.ones(2, 3))
    with torch.no_grad():  # and changing a real source word changes the output
        assert not torch.allclose(model(src, tgt)[:1], model(torch.tensor([[3, 4, 6]]), tgt[:1]))


@pytest.mark.parametrize("n_layers", [1, 2])
def test_step_by_step_decoding_with_the_cache_equals_the_teacher_forced_pass(n_layers):
    model = gru_attention(2, n_layers=n_layers)
    src = torch.tensor([[3, 4, 5, 0], [6, 7, 8, 9]])
    tgt = torch.tensor([[SOS, 4, 5, 6], [SOS, 7, 8, 9]])
    memory = model.encode(src)
    full = model.decode(tgt, memory, src)
    cache = model.new_cache()
    steps = [model.decode(tgt[:, t:t + 1], memory, src, cache) for t in range(4)]
    torch.testing.assert_close(torch.cat(steps, dim=1), full)
    assert isinstance(cache, GRUDecoderState) and cache.hidden.shape == (2, n_layers, 32)


def test_the_decoding_functions_serve_it_unchanged():
    model = gru_attention(3)
    src = torch.tensor([[3, 4, 5, 6], [7, 8, 0, 0]])
    special = dict(sos_id=SOS, eos_id=EOS, max_len=12)
    greedy = greedy_decode(model, src, **special)
    assert greedy == greedy_decode(model, src, use_cache=False, **special)
    assert [h.tokens for h in beam_search(model, src, beam_size=1, **special)] == greedy
    assert len(beam_search(model, src, beam_size=3, **special)) == 2


def test_it_learns_to_reverse_longer_sequences_with_the_same_loop():
    pairs = reverse_pairs(16, seed=2, min_len=4, max_len=7)
    batches = to_batches(pairs, 8)
    model = gru_attention(4, d_model=32, hidden_size=64)
    history = train(model, batches, steps=150, warmup=10, lr_scale=1.0, label_smoothing=0.0, progress=False)
    assert history.losses[0] > 2.0 and max(history.losses[-5:]) < 0.1
    predictions = []
    for batch in batches:
        predictions += greedy_decode(model, batch.src, sos_id=SOS, eos_id=EOS, max_len=10)
    assert predictions == [target for _, target in pairs]


def test_bad_input_names_the_argument():
    model = gru_attention(0)
    src = torch.tensor([[3, 4, 5]])
    memory = model.encode(src)
    assert "src_ids: a row holds only padding" in raises(ValueError, lambda: model.encode(torch.tensor([[PAD, PAD]])),
                                                         "src_ids")
    assert "[0, 12)" in raises(ValueError, lambda: model.decode(torch.tensor([[SOS, 12]]), memory, src), "tgt_ids")
    assert "like src_ids" in raises(ValueError, lambda: model.decode(torch.tensor([[SOS]]), memory[:, :2], src),
                                    "memory")
    assert ".long()" in raises(TypeError, lambda: model.decode(torch.tensor([[SOS]]), memory, src.float()), "src_ids")
    assert "batch size 1" in raises(ValueError, lambda: model(src, torch.tensor([[SOS], [SOS]])), "tgt_ids")
