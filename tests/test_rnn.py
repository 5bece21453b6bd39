import pytest
import torch
from torch import nn

from transformer_lib.rnn import LSTM, VanillaRNN, gradient_norms_through_time


@torch.no_grad()
def test_vanilla_rnn_equals_torch_rnn():
    ours = VanillaRNN(5, 8).double()
    theirs = nn.RNN(5, 8, batch_first=True, nonlinearity="tanh").double()
    theirs.weight_ih_l0.copy_(ours.input_to_hidden.weight)
    theirs.bias_ih_l0.copy_(ours.input_to_hidden.bias)
    theirs.weight_hh_l0.copy_(ours.hidden_to_hidden.weight)
    theirs.bias_hh_l0.copy_(ours.hidden_to_hidden.bias)
    x = torch.randn(3, 11, 5, dtype=torch.float64)
    out, h = ours(x)
    ref_out, ref_h = theirs(x)
    torch.testing.assert_close(out, ref_out, rtol=0, atol=1e-12)
    torch.testing.assert_close(h, ref_h[0], rtol=0, atol=1e-12)


@torch.no_grad()
def test_lstm_equals_torch_lstm():
    ours = LSTM(5, 8).double()
    theirs = nn.LSTM(5, 8, batch_first=True).double()
    theirs.weight_ih_l0.copy_(ours.input_gates.weight)
    theirs.bias_ih_l0.copy_(ours.input_gates.bias)
    theirs.weight_hh_l0.copy_(ours.hidden_gates.weight)
    theirs.bias_hh_l0.copy_(ours.hidden_gates.bias)
    x = torch.randn(3, 11, 5, dtype=torch.float64)
    out, (h, c) = ours(x)
    ref_out, (ref_h, ref_c) = theirs(x)
    torch.testing.assert_close(out, ref_out, rtol=0, atol=1e-12)
    torch.testing.assert_close(c, ref_c[0], rtol=0, atol=1e-12)


def test_recurrent_scale_sets_every_singular_value():
    rnn = VanillaRNN(4, 16, recurrent_scale=0.5)
    singular = torch.linalg.svdvals(rnn.hidden_to_hidden.weight.detach())
    torch.testing.assert_close(singular, torch.full((16,), 0.5), rtol=0, atol=1e-5)


def test_gradient_norms_match_autograd_jacobian():
    rnn = VanillaRNN(3, 4).double()
    x = torch.randn(1, 6, 3, dtype=torch.float64)
    norms = gradient_norms_through_time(rnn, x)
    jac = torch.autograd.functional.jacobian(lambda inp: rnn(inp)[0][0, -1], x)  # (hidden, 1, T, input)
    expected = jac[:, 0].permute(1, 0, 2).reshape(6, -1).norm(dim=-1)
    torch.testing.assert_close(norms, expected)


def test_gradients_vanish_with_a_small_recurrent_weight_and_explode_with_a_large_one():
    x = torch.randn(4, 40, 8, dtype=torch.float64) * 0.1
    torch.manual_seed(1)
    small = gradient_norms_through_time(VanillaRNN(8, 32, recurrent_scale=0.5).double(), x)
    large = gradient_norms_through_time(VanillaRNN(8, 32, recurrent_scale=3.0).double(), x)
    assert small[0] < 1e-8 * small[-1]  # 39 steps back the gradient has all but vanished
    assert large[0] > 10 * large[-1]  # small inputs keep tanh linear: the gradient grows going back


def test_lstm_keeps_more_gradient_over_long_distances_than_a_vanilla_rnn():
    torch.manual_seed(2)
    x = torch.randn(4, 60, 8)
    lstm = LSTM(8, 32)
    with torch.no_grad():  # a forget-gate bias of 1 is the usual initialisation (Gers et al.)
        lstm.input_gates.bias[32:64].fill_(1.0)
    rnn = VanillaRNN(8, 32, recurrent_scale=0.9)
    ratio_lstm = gradient_norms_through_time(lstm, x)
    ratio_rnn = gradient_norms_through_time(rnn, x)
    assert ratio_lstm[0] / ratio_lstm[-1] > 100 * ratio_rnn[0] / ratio_rnn[-1]


def test_torch_recurrent_modules_work_with_the_gradient_helper():
    gru = nn.GRU(3, 5, batch_first=True)
    assert gradient_norms_through_time(gru, torch.randn(2, 7, 3)).shape == (7,)


@pytest.mark.parametrize("bad,exc,match", [
    (torch.randn(7, 3), ValueError, "3-D tensor"),
    (torch.randn(2, 0, 3), ValueError, "empty sequence"),
    (torch.randn(2, 5, 4), ValueError, "input_size=3"),
])
def test_bad_inputs(bad, exc, match):
    with pytest.raises(exc, match=match):
        VanillaRNN(3, 4)(bad)


def test_forget_bias_opens_the_forget_gate_and_keeps_gradient():
    torch.manual_seed(0)
    plain = LSTM(4, 8)
    torch.manual_seed(0)
    biased = LSTM(4, 8, forget_bias=3.0)
    difference = (biased.input_gates.bias - plain.input_gates.bias).detach()
    torch.testing.assert_close(difference[8:16], torch.full((8,), 3.0))
    assert difference[:8].abs().max() == 0 and difference[16:].abs().max() == 0
    x = torch.randn(2, 30, 4, dtype=torch.float64)
    far_plain = gradient_norms_through_time(plain.double(), x)[0]
    far_biased = gradient_norms_through_time(biased.double(), x)[0]
    assert far_biased > 100 * far_plain


def test_forget_bias_must_be_a_number():
    with pytest.raises(TypeError, match="forget_bias"):
        LSTM(4, 8, forget_bias="1")
