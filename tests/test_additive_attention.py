"""Additive (Bahdanau) attention against an explicit loop over every (query, key) pair in float64,
its gradients by finite differences, its masks, and its bad inputs."""

import math

import pytest
import torch

from transformer_lib.attention import (
    AdditiveAttention,
    attention_weights,
    causal_mask,
    masked_softmax,
    padding_mask,
    scaled_dot_product_attention,
)

from .bad_input import raises


def additive(d_query=5, d_key=3, d_attention=4, seed=0) -> AdditiveAttention:
    torch.manual_seed(seed)
    return AdditiveAttention(d_query, d_key, d_attention).double()


def reference(query, key, value, w_q, w_k, v, mask=None):
    """The paper's formula, one (query, key) pair at a time: e = v . tanh(W_q q + W_k k), then a
    softmax over the keys a query may see; a query that may see none gets zeros."""
    batch, heads, n_queries, _ = query.shape
    n_keys = key.shape[2]
    weights = torch.zeros(batch, heads, n_queries, n_keys, dtype=torch.float64)
    for b in range(batch):
        for h in range(heads):
            for i in range(n_queries):
                allowed = [j for j in range(n_keys) if mask is None or bool(mask[b, h, i, j])]
                if not allowed:
                    continue
                scores = {j: float(v @ torch.tanh(w_q @ query[b, h, i] + w_k @ key[b, h, j])) for j in allowed}
                top = max(scores.values())
                total = sum(math.exp(s - top) for s in scores.values())
                for j, s in scores.items():
                    weights[b, h, i, j] = math.exp(s - top) / total
    return weights @ value, weights


def copied_weights(module):
    return module.w_query.weight.detach(), module.w_key.weight.detach(), module.v.weight.detach()[0]


def test_matches_the_explicit_loop_without_and_with_masks():
    module = additive()
    torch.manual_seed(1)
    query, key, value = (torch.randn(2, 3, 4, 5, dtype=torch.float64), torch.randn(2, 3, 6, 3, dtype=torch.float64),
                         torch.randn(2, 3, 6, 2, dtype=torch.float64))
    ids = torch.tensor([[5, 6, 7, 8, 9, 4], [5, 6, 7, 0, 0, 0]])
    masks = [None, padding_mask(ids, 0), causal_mask(4, 6), padding_mask(ids, 0) & causal_mask(4, 6)]
    for mask in masks:
        output, weights = module(query, key, value, mask=mask)
        full_mask = None if mask is None else mask.expand(2, 3, 4, 6)
        expected_output, expected_weights = reference(query, key, value, *copied_weights(module), full_mask)
        assert output.shape == (2, 3, 4, 2) and weights.shape == (2, 3, 4, 6)
        torch.testing.assert_close(weights, expected_weights, rtol=1e-12, atol=1e-14)
        torch.testing.assert_close(output, expected_output, rtol=1e-12, atol=1e-14)
    assert (weights[1, :, :, 3:] == 0).all()  # padding keys get exactly zero


def test_a_query_with_no_key_gets_zero_weights_and_output_as_in_dot_product_attention():
    module = additive(d_query=4, d_key=4)
    torch.manual_seed(2)
    query, key, value = (torch.randn(1, 1, 3, 4, dtype=torch.float64) for _ in range(3))
    mask = torch.tensor([[True, True, False], [False, False, False], [True, False, False]])
    output, weights = module(query, key, value, mask=mask)
    dot_output, dot_weights = scaled_dot_product_attention(query, key, value, mask=mask)
    for out, w in ((output, weights), (dot_output, dot_weights)):
        assert torch.equal(w[0, 0, 1], torch.zeros(3)) and torch.equal(out[0, 0, 1], torch.zeros(4))
        assert not torch.isnan(out).any()
        torch.testing.assert_close(w.sum(-1)[0, 0, [0, 2]], torch.ones(2, dtype=torch.float64))


def test_masked_softmax_is_what_dot_product_attention_uses():
    torch.manual_seed(3)
    query, key = torch.randn(2, 2, 3, 4, dtype=torch.float64), torch.randn(2, 2, 5, 4, dtype=torch.float64)
    mask = torch.rand(2, 3, 5) > 0.3  # (B, T_q, T_k): shared by the heads
    scores = query @ key.transpose(-2, -1) / 2.0
    expected = torch.softmax(scores.masked_fill(~mask[:, None], float("-inf")), dim=-1).nan_to_num(0.0)
    torch.testing.assert_close(masked_softmax(scores, mask), expected, rtol=0, atol=0)
    torch.testing.assert_close(attention_weights(query, key, mask), expected, rtol=0, atol=0)


def test_gradients_match_finite_differences():
    module = additive(d_query=3, d_key=2, d_attention=3)
    torch.manual_seed(4)
    inputs = (torch.randn(1, 2, 3, 3, dtype=torch.float64, requires_grad=True),
              torch.randn(1, 2, 4, 2, dtype=torch.float64, requires_grad=True),
              torch.randn(1, 2, 4, 2, dtype=torch.float64, requires_grad=True))
    mask = causal_mask(3, 4)
    assert torch.autograd.gradcheck(lambda q, k, v: module(q, k, v, mask=mask)[0], inputs)

    def of_parameters(w_q, w_k, v):
        query, key, value = (x.detach() for x in inputs)
        return reference_differentiable(query, key, value, w_q, w_k, v, mask)

    parameters = tuple(p.detach().clone().requires_grad_(True) for p in copied_weights(module))
    assert torch.autograd.gradcheck(of_parameters, parameters)
    # and the module's own parameter gradients equal those of the formula
    output, _ = module(*(x.detach() for x in inputs), mask=mask)
    output.sum().backward()
    reference_differentiable(*(x.detach() for x in inputs), *parameters, mask).sum().backward()
    torch.testing.assert_close(module.w_query.weight.grad, parameters[0].grad)
    torch.testing.assert_close(module.w_key.weight.grad, parameters[1].grad)
    torch.testing.assert_close(module.v.weight.grad[0], parameters[2].grad)


def reference_differentiable(query, key, value, w_q, w_k, v, mask):
    """The formula written with explicit sums over the attention units, for autograd."""
    hidden = torch.tanh(torch.einsum("ad,bhqd->bhqa", w_q, query)[..., :, None, :]
                        + torch.einsum("ad,bhkd->bhka", w_k, key)[..., None, :, :])  # (B, h, T_q, T_k, d_a)
    scores = torch.einsum("bhqka,a->bhqk", hidden, v)
    weights = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)
    return weights @ value


def test_float32_module_and_parameter_count():
    torch.manual_seed(5)
    module = AdditiveAttention(6, 4, 8)
    assert sum(p.numel() for p in module.parameters()) == 6 * 8 + 4 * 8 + 8  # W_q, W_k, v: no biases
    output, weights = module(torch.randn(2, 1, 3, 6), torch.randn(2, 1, 5, 4), torch.randn(2, 1, 5, 7))
    assert output.dtype == torch.float32 and output.shape == (2, 1, 3, 7) and weights.shape == (2, 1, 3, 5)


Q, K, V = torch.randn(1, 1, 2, 5), torch.randn(1, 1, 3, 3), torch.randn(1, 1, 3, 2)
MODULE = AdditiveAttention(5, 3, 4)


@pytest.mark.parametrize(("call", "exc", "name", "words"), [
    (lambda: AdditiveAttention(0, 3, 4), ValueError, "d_query", "positive int"),
    (lambda: AdditiveAttention(5, 3.0, 4), TypeError, "d_key", "int"),
    (lambda: AdditiveAttention(5, 3, True), TypeError, "d_attention", "int"),
    (lambda: MODULE(Q[0], K, V), ValueError, "query", "(batch, heads, seq_len, d_k)"),
    (lambda: MODULE(Q, K.double(), V), TypeError, "key", "float64"),
    (lambda: MODULE(Q, K, V.long()), TypeError, "value", "floating-point"),
    (lambda: MODULE(torch.randn(1, 1, 2, 4), K, V), ValueError, "query", "d_query=5"),
    (lambda: MODULE(Q, torch.randn(1, 1, 3, 5), V), ValueError, "key", "d_key=3"),
    (lambda: MODULE(Q, K, torch.randn(1, 1, 4, 2)), ValueError, "value", "(batch, heads, keys)"),
    (lambda: MODULE(Q, torch.randn(2, 1, 3, 3), V), ValueError, "key", "(batch, heads)"),
    (lambda: MODULE(Q.index_fill(3, torch.tensor([0]), float("nan")), K, V), ValueError, "query", "finite"),
    (lambda: MODULE(Q[:, :, :0], K, V), ValueError, "query", "empty"),
    (lambda: MODULE(Q, K, V, mask=torch.ones(2, 3)), TypeError, "mask", "boolean"),
    (lambda: MODULE(Q, K, V, mask=torch.ones(2, 4, dtype=torch.bool)), ValueError, "mask", "broadcast"),
])
def test_bad_input_names_the_argument(call, exc, name, words):
    assert words in raises(exc, call, name)
