"""capture.capture_activations: every block of one translation, against the model's own output,
capture_attention, PyTorch's modules and the identities that link one block to the next."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from transformer_lib.attention import masked_softmax
from transformer_lib.capture import (
    capture_activations,
    capture_model_activations,
    capture_translation,
    keep_attention_weights,
)
from transformer_lib.decoding import translate
from transformer_lib.positional_encoding import sinusoidal_table
from transformer_lib.pretrained import book_model

from .test_live_js import _small_model


@pytest.fixture(scope="module")
def checkpoint():
    return book_model()


def _captured(model, src, tgt, sentence: str):
    model.eval()
    translation = translate(model, sentence, src, tgt)
    return translation, capture_activations(model, translation, src, tgt)


@pytest.mark.parametrize("sentence", ["the small dog sleeps", "we", " ".join(["they"] * 27)],
                         ids=["ended", "one-word", "cut-at-64"])
def test_the_last_block_is_the_models_output_and_the_maps_are_capture_attentions(checkpoint, sentence) -> None:
    model, src, tgt = checkpoint.model.eval(), checkpoint.src_vocab, checkpoint.tgt_vocab
    translation, found = _captured(model, src, tgt, sentence)
    blocks = found.blocks
    src_ids = torch.tensor([translation.src_ids])
    tgt_ids = torch.tensor([[tgt.stoi[t] for t in found.tgt_tokens]])
    assert list(blocks)[-2:] == ["generator.logits", "generator.probabilities"]  # the logits: last computed
    with torch.no_grad():  # the capture reads the weights (their path), a plain forward runs the fused kernel
        with keep_attention_weights(model):
            assert torch.equal(blocks["generator.logits"], model(src_ids, tgt_ids)[0])
        assert torch.allclose(blocks["generator.logits"], model(src_ids, tgt_ids)[0], atol=1e-5)
    assert torch.allclose(blocks["generator.probabilities"].sum(-1), torch.ones(len(found.tgt_tokens)))
    maps = capture_translation(model, translation, src, tgt)
    for stack, kinds in (("encoder", {"self_attn": "encoder_self"}),
                         ("decoder", {"self_attn": "decoder_self", "cross_attn": "cross"})):
        for layer in range(len(getattr(model, stack).layers)):
            for attention, kind in kinds.items():
                weights = blocks[f"{stack}.{layer}.{attention}.weights"]  # (T_q, h, T_k)
                assert torch.equal(weights, getattr(maps, kind)[layer][0].transpose(0, 1)), (stack, layer, kind)
    assert found.src_tokens == [src.itos[i] for i in translation.src_ids]
    assert found.tgt_tokens[0] == "<sos>" and len(found.tgt_tokens) == maps.decoder_self[0].shape[-1]
    assert translation.ended == (sentence == "the small dog sleeps")  # the cut ones are cut


@pytest.mark.parametrize("norm_first", [False, True], ids=["post-norm", "pre-norm"])
def test_each_block_is_what_the_next_one_reads(norm_first: bool) -> None:
    model, src, tgt = _small_model(norm_first)
    _, found = _captured(model, src, tgt, "sa sb sc sd")
    b = found.blocks
    d = model.config.d_model
    assert torch.equal(b["src.token"], model.src_embed.token.embedding.weight[torch.tensor(found_ids(found, src))])
    table = sinusoidal_table(len(b["src.token"]), d)
    assert torch.allclose(b["src.input"], b["src.token"] * d ** 0.5 + table)

    def norm(x: torch.Tensor, module) -> torch.Tensor:  # PyTorch's layer norm with the module's weights
        return F.layer_norm(x, (d,), module.weight, module.bias, module.eps)

    def close(a: torch.Tensor, b: torch.Tensor) -> bool:
        return torch.allclose(a, b, atol=1e-5)

    layer = model.encoder.layers[0]
    attention = layer.self_attn
    first_in = norm(b["src.input"], layer.attn_residual.norm) if norm_first else b["src.input"]
    for which in "qkv":  # (T, h, d_k): W x, split into heads
        w = getattr(attention, f"w_{which}")
        assert close(b[f"encoder.0.self_attn.{which}"].reshape(-1, d), F.linear(first_in, w.weight, w.bias))
    q, k = b["encoder.0.self_attn.q"].transpose(0, 1), b["encoder.0.self_attn.k"].transpose(0, 1)
    scores = (q @ k.transpose(1, 2) / attention.d_k ** 0.5).transpose(0, 1)
    assert close(b["encoder.0.self_attn.scores"], scores)
    for stack, attn in (("encoder", "self_attn"), ("decoder", "self_attn"), ("decoder", "cross_attn")):
        name = f"{stack}.1.{attn}"
        masked = b[f"{name}.masked"].transpose(0, 1)
        assert close(masked_softmax(masked), b[f"{name}.weights"].transpose(0, 1)), name
        heads = torch.einsum("qhk,khd->qhd", b[f"{name}.weights"], b[f"{name}.v"]).reshape(-1, d)
        assert close(heads, b[f"{name}.heads"].reshape(-1, d)), name
        w_o = getattr(getattr(model, stack).layers[1], attn).w_o
        assert close(F.linear(heads, w_o.weight, w_o.bias), b[f"{name}.output"]), name
    future = torch.triu(torch.ones(len(found.tgt_tokens), len(found.tgt_tokens), dtype=torch.bool), 1)
    assert torch.isinf(b["decoder.0.self_attn.masked"].transpose(0, 1)[:, future]).all()
    assert torch.isfinite(b["decoder.0.self_attn.scores"]).all()
    last = model.encoder.layers[1]
    ff_sum = b["encoder.1.ff_residual.sum"]
    if norm_first:  # x + FFN(LayerNorm(x)); the final norm reads the last sum
        assert close(ff_sum, b["encoder.1.attn_residual.sum"] + b["encoder.1.feed_forward.output"])
        assert close(b["encoder.final_norm"], norm(ff_sum, model.encoder.final_norm))
        ff_in = b["encoder.1.ff_residual.norm"]
    else:  # LayerNorm(x + FFN(x))
        assert close(ff_sum, b["encoder.1.attn_residual.norm"] + b["encoder.1.feed_forward.output"])
        assert close(b["encoder.1.ff_residual.norm"], norm(ff_sum, last.ff_residual.norm))
        ff_in = b["encoder.1.attn_residual.norm"]
    assert torch.equal(b["encoder.1.feed_forward.hidden"], torch.relu(last.feed_forward.linear1(ff_in)))
    assert ("encoder.final_norm" in b) == norm_first


def found_ids(found, vocab) -> list[int]:
    return [vocab.stoi[t] for t in found.src_tokens]


def test_bad_arguments_are_named(checkpoint) -> None:
    model, src, tgt = checkpoint.model, checkpoint.src_vocab, checkpoint.tgt_vocab
    translation = translate(model.eval(), "the dog", src, tgt)
    with pytest.raises(TypeError, match="model"):
        capture_activations("model", translation, src, tgt)
    with pytest.raises(TypeError, match="translation"):
        capture_activations(model, "the dog", src, tgt)
    with pytest.raises(ValueError, match="src_ids"):
        capture_model_activations(model, torch.tensor([[4, 5], [4, 5]]), torch.tensor([[1]]))
    with pytest.raises(ValueError, match="tgt_ids"):
        capture_model_activations(model, torch.tensor([[4, 5]]), torch.zeros(1, 0, dtype=torch.long))
    assert model.training is False and all(not m._forward_hooks for m in model.modules())  # hooks removed
