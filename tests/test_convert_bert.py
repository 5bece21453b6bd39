"""BERT's masked-language-model head in the library's ``EncoderOnlyTransformer`` (``convert.from_bert``),
proved equal to Hugging Face's own ``BertForMaskedLM``: random weights from ``transformers``' configs,
no download. The logits agree within 1e-5 in float32 and 1e-10 in float64 for ten random configurations,
with segments and an attention mask, from a ``BertForMaskedLM`` state dict and from a checkpoint as the
hub ships one (``bert.`` and ``cls.``, the next-sentence head, position-id buffers, old LayerNorm names,
with or without the pooler).
"""

from __future__ import annotations

import pytest
import torch

from transformer_lib.convert import BERT_SKIPPED, from_bert

from .test_convert import assert_close, hf_model, hugging_face, random_bert_config

TIED = ("cls.predictions.decoder.weight", "cls.predictions.decoder.bias")  # the hub's files leave them out


def bert_inputs(config, seed):
    """Two rows of any ids ([PAD] = 0 inside the first, which BERT reads), random segments, the second
    row ending in padding (attention mask 0)."""
    generator = torch.Generator().manual_seed(seed)
    ids = torch.randint(0, config.vocab_size, (2, min(9, config.max_position_embeddings)), generator=generator)
    ids[0, 3] = 0
    types = torch.randint(0, config.type_vocab_size, ids.shape, generator=generator)
    mask = torch.ones_like(ids)
    mask[1, -3:] = 0
    return ids, types, mask


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("seed", range(10))
def test_masked_lm_logits_are_bert_for_masked_lms(seed, dtype):
    config = random_bert_config(seed)
    theirs = hf_model(hugging_face.BertForMaskedLM, config, dtype, seed)
    ours = from_bert(theirs.state_dict(), config)
    assert next(ours.parameters()).dtype == dtype
    ids, types, mask = bert_inputs(config, seed)
    with torch.no_grad():
        for rows, label in ((slice(0, 1), "no padding"), (slice(0, 2), "padding")):
            expected = theirs(ids[rows], attention_mask=mask[rows], token_type_ids=types[rows]).logits
            assert_close(ours(ids[rows], types[rows], mask[rows]), expected, dtype, f"masked-LM logits, {label}")


def hub_checkpoint(model, pooler=True):
    """``model``'s tensors as a hub checkpoint file holds them: the tied decoder left out, the position ids
    buffer in, LayerNorm's gain and bias under their old names (gamma, beta), the pooler optional."""
    renamed = {}
    for key, value in model.state_dict().items():
        if key in TIED or (not pooler and ".pooler." in key):
            continue
        renamed[key.replace("LayerNorm.weight", "LayerNorm.gamma").replace("LayerNorm.bias", "LayerNorm.beta")] = value
    renamed["bert.embeddings.position_ids"] = torch.arange(model.config.max_position_embeddings)[None]
    return renamed


@pytest.mark.parametrize("pooler", [True, False])
@pytest.mark.parametrize("seed", range(3))
def test_a_hub_checkpoint_loads_whole(seed, pooler):
    """A BertForPreTraining checkpoint, as bert-base-uncased ships: the masked-LM logits are its, the pooler
    is its when there, and the next-sentence head is read past (BERT_SKIPPED says why)."""
    config = random_bert_config(seed)
    theirs = hf_model(hugging_face.BertForPreTraining, config, torch.float64, seed)
    checkpoint = hub_checkpoint(theirs, pooler)
    assert any(key.startswith(tuple(BERT_SKIPPED)) for key in checkpoint)
    assert any("gamma" in key for key in checkpoint) and "cls.predictions.bias" in checkpoint
    ours = from_bert(checkpoint, config.to_dict())
    ids, types, mask = bert_inputs(config, seed)
    with torch.no_grad():
        out = theirs(ids, attention_mask=mask, token_type_ids=types)
        assert_close(ours(ids, types, mask), out.prediction_logits, torch.float64, "masked-LM logits")
        if pooler:
            pooled = theirs.bert(ids, attention_mask=mask, token_type_ids=types).pooler_output
            assert_close(ours.pool(ours.encode(ids, types, mask)), pooled, torch.float64, "pooler")
    assert (ours.pooler is not None) == pooler
    assert all(isinstance(reason, str) and len(reason) > 20 for reason in BERT_SKIPPED.values())


def test_an_untied_decoder_is_read_as_its_own():
    config = random_bert_config(0)
    config.tie_word_embeddings = False
    theirs = hf_model(hugging_face.BertForMaskedLM, config, torch.float64, 0)
    state_dict = theirs.state_dict()
    embedding = state_dict["bert.embeddings.word_embeddings.weight"]
    assert not torch.equal(state_dict["cls.predictions.decoder.weight"], embedding)
    ours = from_bert(state_dict, config)
    ids, types, mask = bert_inputs(config, 0)
    with torch.no_grad():
        assert_close(ours(ids, types, mask), theirs(ids, attention_mask=mask, token_type_ids=types).logits,
                     torch.float64, "masked-LM logits, untied decoder")


def _masked_lm():
    config = random_bert_config(0)
    return hf_model(hugging_face.BertForMaskedLM, config, torch.float32, 0).state_dict(), config


BAD_HEAD = {
    "a decoder that is not the tied embedding": (
        lambda sd: {**sd, "cls.predictions.decoder.weight": sd["cls.predictions.decoder.weight"] + 1}, ValueError,
        r"state_dict\['cls\.predictions\.decoder\.weight'\]: expected the token embedding"),
    "two biases that differ": (
        lambda sd: {**sd, "cls.predictions.decoder.bias": sd["cls.predictions.bias"] + 1}, ValueError,
        r"state_dict\['cls\.predictions\.decoder\.bias'\]: expected cls\.predictions\.bias"),
    "the transform missing": (
        lambda sd: {k: v for k, v in sd.items() if ".transform.dense." not in k}, ValueError,
        r"missing 2 tensor\(s\): cls\.predictions\.transform\.dense\.weight"),
    "the transform's matrix in float64": (
        lambda sd: {**sd, "cls.predictions.transform.dense.weight":
                    sd["cls.predictions.transform.dense.weight"].double()}, TypeError,
        r"state_dict\['cls\.predictions\.transform\.dense\.weight'\]: expected dtype torch\.float32"),
    "an unknown head tensor": (
        lambda sd: {**sd, "cls.predictions.extra": sd["cls.predictions.bias"]}, ValueError,
        r"unexpected 1 tensor\(s\): cls\.predictions\.extra"),
}


@pytest.mark.parametrize("case", BAD_HEAD)
def test_a_bad_head_is_named(case):
    make, error, message = BAD_HEAD[case]
    state_dict, config = _masked_lm()
    with pytest.raises(error, match=message):
        from_bert(make(state_dict), config)

