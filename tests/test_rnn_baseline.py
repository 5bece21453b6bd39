import pytest
import torch

from transformer_lib.decoding import beam_search, greedy_decode
from transformer_lib.rnn import GRUDecoderState, Seq2SeqGRU, Seq2SeqGRUConfig
from transformer_lib.training import train

from .seq2seq_toys import EOS, PAD, SOS, VOCAB, one_thread, reverse_pairs, to_batches


@pytest.fixture(autouse=True, scope="module")
def _one_thread():
    with one_thread():
        yield


def gru(seed: int = 0, **changes) -> Seq2SeqGRU:
    torch.manual_seed(seed)
    settings = dict(d_model=16, hidden_size=32, n_layers=1, dropout=0.0)
    settings.update(changes)
    return Seq2SeqGRU(Seq2SeqGRUConfig(VOCAB, VOCAB, **settings)).eval()


def test_forward_shape_and_padding_never_enters_the_state():
    model = gru(0, n_layers=2)
    src = torch.tensor([[3, 4, 5, 0, 0], [6, 7, 8, 9, 10]])
    tgt = torch.tensor([[SOS, 4, 5], [SOS, 6, 0]])
    assert model(src, tgt).shape == (2, 3, VOCAB)
    memory = model.encode(src)
    assert memory.shape == (2, 2, 32)  # (B, n_layers, hidden)
    torch.testing.assert_close(memory[:1], model.encode(src[:1, :3]))  # same as without the padding
    assert not torch.allclose(memory[:1], model.encode(torch.tensor([[3, 4, 5, 6, 6]])))  # real tokens count


def test_incremental_decoding_equals_the_full_pass():
    model = gru(1, n_layers=2)
    src = torch.tensor([[3, 4, 5], [6, 7, 8]])
    tgt = torch.tensor([[SOS, 4, 5, 6], [SOS, 7, 8, 9]])
    memory = model.encode(src)
    full = model.decode(tgt, memory, src)
    cache = model.new_cache()
    steps = [model.decode(tgt[:, t:t + 1], memory, src, cache) for t in range(4)]
    torch.testing.assert_close(torch.cat(steps, dim=1), full)
    assert isinstance(cache, GRUDecoderState) and cache.hidden.shape == (2, 2, 32)


def test_decoding_functions_work_on_the_rnn():
    model = gru(2)
    src = torch.tensor([[3, 4, 5, 6], [7, 8, 0, 0]])
    special = dict(sos_id=SOS, eos_id=EOS, max_len=12)
    greedy = greedy_decode(model, src, **special)
    assert greedy == greedy_decode(model, src, use_cache=False, **special)
    assert [h.tokens for h in beam_search(model, src, beam_size=1, **special)] == greedy
    assert [len(t) for t in greedy_decode(model, src, sos_id=SOS, eos_id=None, max_len=40)] == [40, 40]
    assert len(beam_search(model, src, beam_size=3, **special)) == 2


def test_the_rnn_trains_with_the_same_loop():
    pairs = reverse_pairs(16, seed=2, max_len=3)
    batches = to_batches(pairs, 8)
    model = gru(3, d_model=32, hidden_size=64)
    history = train(model, batches, steps=120, warmup=10, lr_scale=1.0, label_smoothing=0.0, progress=False)
    assert history.losses[0] > 2.0 and max(history.losses[-5:]) < 0.1
    predictions = []
    for batch in batches:
        predictions += greedy_decode(model, batch.src, sos_id=SOS, eos_id=EOS, max_len=8)
    assert predictions == [target for _, target in pairs]


def test_rnn_rejects_bad_inputs():
    with pytest.raises(ValueError, match="hidden_size: expected a positive int"):
        Seq2SeqGRUConfig(VOCAB, VOCAB, hidden_size=0)
    with pytest.raises(ValueError, match="dropout"):
        Seq2SeqGRUConfig(VOCAB, VOCAB, dropout=1.0)
    with pytest.raises(ValueError, match="pad_id"):
        Seq2SeqGRUConfig(VOCAB, VOCAB, pad_id=VOCAB)
    model = gru(0)
    with pytest.raises(ValueError, match=r"src_ids: token ids must lie in \[0, 12\)"):
        model.encode(torch.tensor([[3, 12]]))
    with pytest.raises(ValueError, match="src_ids: a row holds only padding"):
        model.encode(torch.tensor([[3, 4], [PAD, PAD]]))
    with pytest.raises(ValueError, match="tgt_ids: expected batch size 1"):
        model(torch.tensor([[3, 4]]), torch.tensor([[SOS], [SOS]]))
