"""The GRU encoder-decoders, without and with attention: shapes, padding, the cache, the one decoding
path, a toy task learned with the same training loop, and bad input."""

import pytest
import torch

from transformer_lib.attention import AdditiveAttention
from transformer_lib.decoding import beam_search, greedy_decode
from transformer_lib.rnn import GRUDecoderState, Seq2SeqGRU, Seq2SeqGRUAttention, Seq2SeqGRUConfig
from transformer_lib.training import train
from transformer_lib.vocabulary import SpecialIds

from .bad_input import raises
from .seq2seq_toys import EOS, PAD, SOS, VOCAB, reverse_pairs, to_batches

pytestmark = pytest.mark.usefixtures("one_torch_thread")  # declared in conftest.py


def gru(seed: int = 0, model_class: type[Seq2SeqGRU] = Seq2SeqGRU, **changes) -> Seq2SeqGRU:
    torch.manual_seed(seed)
    settings = dict(d_model=16, hidden_size=32, n_layers=1, dropout=0.0)
    settings.update(changes)
    return model_class(Seq2SeqGRUConfig(VOCAB, VOCAB, **settings)).eval()


BOTH = pytest.mark.parametrize("model_class", [Seq2SeqGRU, Seq2SeqGRUAttention])


def test_forward_shape_and_padding_never_enters_the_state():
    model = gru(0, n_layers=2)
    src = torch.tensor([[3, 4, 5, 0, 0], [6, 7, 8, 9, 10]])
    tgt = torch.tensor([[SOS, 4, 5], [SOS, 6, 0]])
    assert model(src, tgt).shape == (2, 3, VOCAB)
    memory = model.encode(src)
    assert memory.shape == (2, 2, 32)  # (B, n_layers, hidden)
    torch.testing.assert_close(memory[:1], model.encode(src[:1, :3]))  # same as without the padding
    assert not torch.allclose(memory[:1], model.encode(torch.tensor([[3, 4, 5, 6, 6]])))  # real tokens count


@BOTH
def test_incremental_decoding_equals_the_full_pass(model_class):
    model = gru(1, model_class, n_layers=2)
    src = torch.tensor([[3, 4, 5], [6, 7, 8]])
    tgt = torch.tensor([[SOS, 4, 5, 6], [SOS, 7, 8, 9]])
    memory = model.encode(src)
    full = model.decode(tgt, memory, src)
    cache = model.new_cache()
    steps = [model.decode(tgt[:, t:t + 1], memory, src, cache) for t in range(4)]
    torch.testing.assert_close(torch.cat(steps, dim=1), full)
    assert isinstance(cache, GRUDecoderState) and cache.hidden.shape == (2, 2, 32)


@BOTH
def test_decoding_functions_work_on_the_rnn(model_class):
    model = gru(2, model_class)
    src = torch.tensor([[3, 4, 5, 6], [7, 8, 0, 0]])
    special = dict(special=SpecialIds(SOS, EOS), max_len=12)
    greedy = greedy_decode(model, src, **special)
    assert greedy == greedy_decode(model, src, use_cache=False, **special)
    assert [h.tokens for h in beam_search(model, src, beam_size=1, **special)] == greedy
    assert [len(t) for t in greedy_decode(model, src, special=SpecialIds(SOS, None), max_len=40)] == [40, 40]
    assert len(beam_search(model, src, beam_size=3, **special)) == 2


@pytest.mark.parametrize(("model_class", "max_len"), [(Seq2SeqGRU, 3), (Seq2SeqGRUAttention, 3),
                                                      (Seq2SeqGRUAttention, 6)])
def test_the_rnn_trains_with_the_same_loop(model_class, max_len):
    pairs = reverse_pairs(16, seed=2, max_len=max_len)
    batches = to_batches(pairs, 8)
    model = gru(3, model_class, d_model=32, hidden_size=64)
    history = train(model, batches, steps=120, warmup=10, lr_scale=1.0, label_smoothing=0.0, progress=False)
    assert history.losses[0] > 2.0 and max(history.losses[-5:]) < 0.1
    predictions = []
    for batch in batches:
        predictions += greedy_decode(model, batch.src, special=SpecialIds(SOS, EOS), max_len=max_len + 3)
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


# --------------------------------------------------------------------------- with attention


def test_the_attention_model_is_the_gru_baseline_plus_attention():
    model, baseline = gru(0, Seq2SeqGRUAttention), gru(0)
    extra = {name for name, _ in model.named_parameters()} - {name for name, _ in baseline.named_parameters()}
    assert extra == {"attention.w_query.weight", "attention.w_key.weight", "attention.v.weight", "combine.weight"}
    assert isinstance(model.attention, AdditiveAttention)


def test_attention_reads_every_encoder_state_and_never_padding():
    model = gru(1, Seq2SeqGRUAttention)
    src = torch.tensor([[3, 4, 5, 0, 0], [6, 7, 8, 9, 10]])
    tgt = torch.tensor([[SOS, 4, 5], [SOS, 6, 0]])
    assert model(src, tgt).shape == (2, 3, VOCAB)
    memory = model.encode(src)
    assert memory.shape == (2, 5, 32) and (memory[0, 3:] == 0).all()  # (B, S, hidden): every encoder state
    baseline = Seq2SeqGRU(model.config).eval()  # the same encoder: its last real state is the baseline's memory
    baseline.load_state_dict({k: v for k, v in model.state_dict().items() if k in baseline.state_dict()})
    torch.testing.assert_close(memory[[0, 1], [2, 4]], baseline.encode(src)[:, 0])
    torch.testing.assert_close(model(src, tgt)[:1], model(src[:1, :3], tgt[:1]))  # padding changes nothing
    weights = model.attention_map(src, tgt)  # (B, T, S)
    assert weights.shape == (2, 3, 5) and (weights[0, :, 3:] == 0).all()
    torch.testing.assert_close(weights.sum(-1), torch.ones(2, 3))
    with torch.no_grad():  # and a changed real source word changes the output
        assert not torch.allclose(model(src, tgt)[:1], model(torch.tensor([[3, 4, 6]]), tgt[:1]))


def test_attention_model_rejects_bad_inputs():
    model = gru(0, Seq2SeqGRUAttention)
    src = torch.tensor([[3, 4, 5]])
    memory = model.encode(src)
    assert "a row holds only padding" in raises(ValueError, lambda: model.encode(torch.tensor([[PAD, PAD]])),
                                                "src_ids")
    assert "[0, 12)" in raises(ValueError, lambda: model.decode(torch.tensor([[SOS, 12]]), memory, src), "tgt_ids")
    assert "like src_ids" in raises(ValueError, lambda: model.decode(torch.tensor([[SOS]]), memory[:, :2], src),
                                    "memory")
    assert ".long()" in raises(TypeError, lambda: model.decode(torch.tensor([[SOS]]), memory, src.float()), "src_ids")
    assert "batch size 1" in raises(ValueError, lambda: model(src, torch.tensor([[SOS], [SOS]])), "tgt_ids")
