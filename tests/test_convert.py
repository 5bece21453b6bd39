"""GPT-2 and BERT in the library's classes (``transformer_lib.convert``), proved equal to Hugging Face's
own ``GPT2LMHeadModel`` and ``BertModel``: random weights from ``transformers``' configs, no download.

Logits, every hidden state, every attention map and BERT's pooler agree within 1e-5 in float32 and
1e-10 in float64, with and without padding (an attention mask, as Hugging Face's), for ten random
configurations of each; GPT-2 also step by step through the key/value cache, with ``<|endoftext|>``
at the start, in the middle and at the end of a row, and a padded batch equals its rows run alone.
BERT's masked-LM head: tests/test_convert_bert.py. ``transformers`` is a test dependency
(requirements.txt), not the package's.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import torch

from transformer_lib.capture import capture_attention, keep_attention_weights
from transformer_lib.checkpoint import save_checkpoint
from transformer_lib.config import TransformerConfig
from transformer_lib.convert import from_bert, from_gpt2, to_gpt2
from transformer_lib.models import DecoderOnlyTransformer, InputEmbedding
from transformer_lib.pretrained.hub_references import load_reference
from transformer_lib.sampling import sample_continuation

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
import hub_references  # noqa: E402  (tools/hub_references.py: the stored models' maker)
from hub_references import random_weights

if TYPE_CHECKING:
    from transformers import BertConfig, GPT2Config

TOLERANCE = {torch.float32: 1e-5, torch.float64: 1e-10}
N_CONFIGS = 10


class _Transformers:
    """``transformers``' classes (``hugging_face.GPT2Config``), imported when a test first asks for one: importing the
    library costs about 4 s of CPU, which every pytest-xdist worker would otherwise pay when it collects."""

    def __getattr__(self, name: str) -> object:
        import transformers

        transformers.logging.set_verbosity_error()  # tiny vocabularies make it warn about GPT-2's token ids
        return getattr(transformers, name)


hugging_face = _Transformers()


def random_gpt2_config(seed: int) -> GPT2Config:
    rng = random.Random(seed)
    heads, d_k = rng.choice([1, 2, 4]), rng.choice([2, 4, 8])
    vocab = rng.randint(20, 80)
    return hugging_face.GPT2Config(
        vocab_size=vocab, n_positions=rng.randint(16, 40), n_embd=heads * d_k, n_layer=rng.randint(1, 3),
        n_head=heads, n_inner=rng.choice([None, rng.randint(8, 40)]),
        activation_function=rng.choice(["gelu_new", "gelu", "relu"]),
        layer_norm_epsilon=rng.choice([1e-5, 1e-6]), tie_word_embeddings=rng.random() < 0.7,
        attn_implementation="eager",
        # <|endoftext|> inside the vocabulary, or GPT2Config's default 50256 outside it (transformers runs both)
        **rng.choice([dict(eos_token_id=vocab - 1, bos_token_id=vocab - 1), {}]),
    )


def random_bert_config(seed: int) -> BertConfig:
    rng = random.Random(1000 + seed)
    heads, d_k = rng.choice([1, 2, 4]), rng.choice([2, 4, 8])
    return hugging_face.BertConfig(
        vocab_size=rng.randint(20, 80), hidden_size=heads * d_k, num_hidden_layers=rng.randint(1, 3),
        num_attention_heads=heads, intermediate_size=rng.randint(8, 40), max_position_embeddings=rng.randint(16, 40),
        type_vocab_size=rng.randint(1, 3), hidden_act=rng.choice(["gelu", "gelu_new", "relu"]),
        layer_norm_eps=rng.choice([1e-12, 1e-5]), attn_implementation="eager",
    )


def hf_model(model_class, config, dtype, seed):
    return random_weights(model_class(config).to(dtype), seed)


def hidden_states(model, stack, ids, **kwargs):
    """``model``'s output, and the input of every layer of ``stack`` followed by the stack's output
    (after its final norm, if any): the layout of Hugging Face's ``hidden_states``."""
    seen = []
    hooks = [layer.register_forward_pre_hook(lambda _m, args: seen.append(args[0])) for layer in stack.layers]
    hooks.append(stack.register_forward_hook(lambda _m, _args, out: seen.append(out)))
    try:
        with torch.no_grad():
            out = model(ids, **kwargs)
    finally:
        for hook in hooks:
            hook.remove()
    return out, seen


def assert_close(ours, theirs, dtype, what):
    assert ours.shape == theirs.shape, what
    deviation = (ours - theirs).abs().max().item()
    assert deviation <= TOLERANCE[dtype], f"{what}: deviation {deviation:.2e} > {TOLERANCE[dtype]:.0e}"


def gpt2_batch(vocab_size, eos, length, generator):
    """Three rows of any ids, <|endoftext|> (``eos``, when inside the vocabulary) at the start of the first,
    in the middle of the second and at the end of the third; the last two end in padding (attention mask
    0) of any id, <|endoftext|> included. Returns (ids, attention_mask)."""
    ids = torch.randint(0, vocab_size, (3, length), generator=generator)
    mask = torch.ones_like(ids)
    if eos < vocab_size:
        ids[0, 0], ids[1, length // 2], ids[2, length - 4] = eos, eos, eos
        ids[2, length - 1] = eos  # padding that happens to be <|endoftext|>: the mask says it is padding
    mask[1, length - 2:], mask[2, length - 3:] = 0, 0
    return ids, mask


def gpt2_pair(seed, dtype):
    """Random configuration ``seed``: its config, transformers' GPT-2 and the library's copy of it."""
    config = random_gpt2_config(seed)
    theirs = hf_model(hugging_face.GPT2LMHeadModel, config, dtype, seed)
    return config, theirs, from_gpt2(theirs.state_dict(), config)


def gpt2_case(seed, dtype, length):
    """``gpt2_pair``, and its ``gpt2_batch`` of ``length`` (at most the positions the config has)."""
    config, theirs, ours = gpt2_pair(seed, dtype)
    ids, mask = gpt2_batch(config.vocab_size, config.eos_token_id, min(length, config.n_positions),
                           torch.Generator().manual_seed(seed))
    return config, theirs, ours, ids, mask


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("seed", range(N_CONFIGS))
def test_gpt2_is_the_decoder_only_transformer(seed, dtype):
    _, theirs, ours, batch, batch_mask = gpt2_case(seed, dtype, 9)
    assert isinstance(ours, DecoderOnlyTransformer) and next(ours.parameters()).dtype == dtype
    assert ours.config.pad_id is None  # GPT-2 masks no id: <|endoftext|> is a token like any other
    for ids, mask, label in ((batch[:1], None, "<|endoftext|> first, no mask"),
                             (batch[1:2], None, "<|endoftext|> inside and in the padding, no mask"),
                             (batch, batch_mask, "padded batch")):
        with torch.no_grad():
            out = theirs(ids, attention_mask=mask, output_hidden_states=True, output_attentions=True)
        logits, states = hidden_states(ours, ours.blocks, ids, attention_mask=mask)
        assert_close(logits, out.logits, dtype, f"logits, {label}")
        for i, (mine, hf) in enumerate(zip(states, out.hidden_states, strict=True)):
            assert_close(mine, hf, dtype, f"hidden state {i}, {label}")
        maps = capture_attention(ours, ids, attention_mask=mask).decoder_self
        for i, (mine, hf) in enumerate(zip(maps, out.attentions, strict=True)):
            assert_close(mine, hf, dtype, f"attention of layer {i}, {label}")


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("seed", range(N_CONFIGS))
def test_a_padded_gpt2_batch_is_its_rows_alone(seed, dtype):
    """Right-padding, marked by the attention mask, changes nothing at a row's real tokens."""
    _, _, ours, ids, mask = gpt2_case(seed, dtype, 9)
    with torch.no_grad():
        batched = ours(ids, attention_mask=mask)
        for row in range(ids.shape[0]):
            length = int(mask[row].sum())
            alone = ours(ids[row:row + 1, :length])
            assert_close(batched[row:row + 1, :length], alone, dtype, f"row {row} in the batch and alone")


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("seed", range(N_CONFIGS))
def test_gpt2_through_the_cache_is_gpt2_without_it(seed, dtype):
    _, theirs, ours, ids, mask = gpt2_case(seed, dtype, 8)
    with torch.no_grad():
        full = theirs(ids, attention_mask=mask).logits  # (3, T, V), no cache
        cache = ours.new_cache()
        steps = [ours(ids[:, :3], cache, attention_mask=mask[:, :3])]
        steps += [ours(ids[:, t:t + 1], cache, attention_mask=mask[:, t:t + 1]) for t in range(3, ids.shape[1])]
    assert_close(torch.cat(steps, dim=1), full, dtype, "logits through the cache")


@pytest.mark.parametrize("seed", range(3))
def test_sampling_stops_on_endoftext_as_transformers_generate_does(seed):
    """Greedy continuation: the library's tokens are GPT-2's ``generate``'s, up to and with the first
    <|endoftext|>, which the library can draw (it is no padding) and stops on."""
    config, theirs, ours = gpt2_pair(seed, torch.float64)
    prompt = torch.randint(0, config.vocab_size, (1, 3), generator=torch.Generator().manual_seed(seed))
    steps = config.n_positions - 3
    (free,) = sample_continuation(ours, prompt, max_new_tokens=steps, temperature=0)
    eos = free[steps // 2]  # a token greedy decoding writes: made <|endoftext|>, it must end the row there
    (ended,) = sample_continuation(ours, prompt, max_new_tokens=steps, temperature=0, eos_id=eos)
    with torch.no_grad():
        generated = theirs.generate(prompt, attention_mask=torch.ones_like(prompt), do_sample=False,
                                    max_new_tokens=steps, eos_token_id=eos, pad_token_id=eos)
    theirs_new = generated[0, 3:].tolist()
    assert ended == theirs_new[:theirs_new.index(eos) + 1] == free[:free.index(eos) + 1]
    assert ended[-1] == eos and len(ended) <= steps // 2 + 1


def test_gpt2_config_ids_outside_the_vocabulary_are_bookkeeping():
    """GPT2Config(vocab_size=50) keeps <|endoftext|> = 50256, as transformers runs it: the library needs
    no special id of GPT-2's, so it reads none (the one it used to mask came from there)."""
    config = hugging_face.GPT2Config(vocab_size=50, n_layer=1, n_head=2, n_embd=16, n_positions=16, pad_token_id=60000,
                        attn_implementation="eager")
    theirs = hf_model(hugging_face.GPT2LMHeadModel, config, torch.float64, 0)
    ours = from_gpt2(theirs.state_dict(), config)
    ids = torch.tensor([[49, 3, 4, 5, 6, 0]])
    with torch.no_grad():
        assert_close(ours(ids), theirs(ids).logits, torch.float64, "logits")


def test_the_issues_gpt2_with_endoftext_first():
    """The report: GPT2Config(n_layer=2, n_head=4, n_embd=32, vocab_size=50, n_positions=16, bos=eos=49),
    ids [[49, 3, 4, 5, 6]] (0.092 apart when <|endoftext|> was masked as padding)."""
    config = hugging_face.GPT2Config(n_layer=2, n_head=4, n_embd=32, vocab_size=50, n_positions=16, bos_token_id=49,
                        eos_token_id=49, attn_implementation="eager")
    theirs = hf_model(hugging_face.GPT2LMHeadModel, config, torch.float64, 0)
    ids = torch.tensor([[49, 3, 4, 5, 6]])
    with torch.no_grad():
        assert_close(from_gpt2(theirs.state_dict(), config)(ids), theirs(ids).logits, torch.float64, "logits")


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("seed", range(N_CONFIGS))
def test_bert_is_the_encoder_only_transformer(seed, dtype):
    config = random_bert_config(seed)
    theirs = hf_model(hugging_face.BertModel, config, dtype, seed)
    ours = from_bert(theirs.state_dict(), config)
    generator = torch.Generator().manual_seed(seed)
    # any ids, [PAD] (0) included, which BERT attends to unless the attention mask says it is padding
    padded = torch.randint(0, config.vocab_size, (2, min(9, config.max_position_embeddings)), generator=generator)
    padded[0, 2], padded[1, -3:] = 0, 0
    padding = torch.ones_like(padded)
    padding[1, -3:] = 0
    types = torch.randint(0, config.type_vocab_size, padded.shape, generator=generator)
    for ids, segments, mask, label in ((padded[:1], types[:1], None, "no padding, [PAD] inside"),
                                       (padded, types, padding, "padding")):
        with torch.no_grad():
            out = theirs(ids, attention_mask=mask, token_type_ids=segments,
                         output_hidden_states=True, output_attentions=True)
        with keep_attention_weights(ours):  # the book's capture, here with the segments too
            encoded, states = hidden_states(ours, ours.encoder, ids, token_type_ids=segments, attention_mask=mask)
            maps = [layer.self_attn.last_weights for layer in ours.encoder.layers]
        assert_close(ours.encode(ids, segments, mask), out.last_hidden_state, dtype, f"last hidden state, {label}")
        for i, (mine, hf) in enumerate(zip(states, out.hidden_states, strict=True)):
            assert_close(mine, hf, dtype, f"hidden state {i}, {label}")
        assert_close(ours.pool(states[-1]), out.pooler_output, dtype, f"pooler, {label}")
        for i, (mine, hf) in enumerate(zip(maps, out.attentions, strict=True)):
            assert_close(mine, hf, dtype, f"attention of layer {i}, {label}")


@pytest.mark.parametrize("seed", range(3))
def test_to_gpt2_gives_back_the_same_tensors(seed):
    config = random_gpt2_config(seed)
    state_dict = hf_model(hugging_face.GPT2LMHeadModel, config, torch.float32, seed).state_dict()
    back, gpt2_kwargs = to_gpt2(from_gpt2(state_dict, config))
    assert back.keys() == state_dict.keys()
    for name, tensor in state_dict.items():
        assert torch.equal(back[name], tensor), name
    assert from_gpt2(back, gpt2_kwargs).config == from_gpt2(state_dict, config).config
    theirs = hugging_face.GPT2LMHeadModel(hugging_face.GPT2Config(**gpt2_kwargs, attn_implementation="eager")).eval()
    theirs.load_state_dict(back, strict=True)  # what to_gpt2 wrote opens in transformers, and computes the same
    ids = torch.randint(0, config.vocab_size, (2, 7), generator=torch.Generator().manual_seed(seed))
    with torch.no_grad():
        assert_close(theirs(ids).logits, from_gpt2(state_dict, config)(ids), torch.float32, "logits after the trip")


def test_a_library_model_opens_in_transformers():
    """A model built (and, in practice, trained) by the library: GPT2LMHeadModel computes the same logits."""
    config = TransformerConfig(src_vocab_size=30, tgt_vocab_size=30, d_model=16, n_heads=2, n_decoder_layers=2,
                               d_ff=24, activation="gelu_tanh", norm_first=True, positional="learned", max_len=20,
                               tie_output_embedding=True, pad_id=29, dropout=0.0)
    torch.manual_seed(0)
    ours = DecoderOnlyTransformer(config, embed=InputEmbedding(30, config, scale=False)).double().eval()
    with torch.no_grad():
        ours.lm_head.bias.zero_()
    state_dict, kwargs = to_gpt2(ours)
    theirs = hugging_face.GPT2LMHeadModel(hugging_face.GPT2Config(**kwargs)).double().eval()
    theirs.load_state_dict(state_dict, strict=True)
    ids = torch.randint(0, 29, (2, 11))
    with torch.no_grad():
        assert_close(ours(ids), theirs(ids).logits, torch.float64, "logits")


def _gpt2():
    config = random_gpt2_config(0).to_dict()
    model = hf_model(hugging_face.GPT2LMHeadModel, hugging_face.GPT2Config(**config), torch.float32, 0)
    return model.state_dict(), config


def _bert():
    config = random_bert_config(0)
    return hf_model(hugging_face.BertModel, config, torch.float32, 0).state_dict(), config.to_dict()


def _without(state_dict, *names):
    return {k: v for k, v in state_dict.items() if not k.startswith(names)}


BAD_GPT2 = {
    "a BERT state dict": (lambda sd, c, b: (b[0], c), ValueError, r"not a GPT-2 state dict: no 'wte.weight'"),
    "a BERT config": (lambda sd, c, b: (sd, b[1]), ValueError,
                      r"config: expected a gpt2 config, got model_type 'bert'"),
    "truncated: the last layer gone": (
        lambda sd, c, b: (_without(sd, f"transformer.h.{c['n_layer'] - 1}."), c), ValueError,
        r"missing 12 tensor\(s\): transformer\.h\.\d\.ln_1\.weight"),
    "one tensor missing": (lambda sd, c, b: (_without(sd, "transformer.ln_f.bias"), c), ValueError,
                           r"missing 1 tensor\(s\): transformer\.ln_f\.bias"),
    "an extra tensor": (lambda sd, c, b: ({**sd, "transformer.h.9.ln_1.weight": sd["transformer.ln_f.weight"]}, c),
                        ValueError, r"unexpected 1 tensor\(s\): transformer\.h\.9\.ln_1\.weight"),
    "c_attn not in Conv1D's (in, out)": (
        lambda sd, c, b: ({**sd, "transformer.h.0.attn.c_attn.weight": sd["transformer.h.0.attn.c_attn.weight"].T}, c),
        ValueError, r"state_dict\['transformer\.h\.0\.attn\.c_attn\.weight'\]: expected shape \(\d+, \d+\)"),
    "one tensor in float64": (
        lambda sd, c, b: ({**sd, "transformer.wpe.weight": sd["transformer.wpe.weight"].double()}, c),
        TypeError, r"state_dict\['transformer\.wpe\.weight'\]: expected dtype torch\.float32"),
    # the first tensor read is the odd one: named, against the dtype of the others (not the other way round)
    "the first tensor in float64": (
        lambda sd, c, b: ({"transformer.wte.weight": sd["transformer.wte.weight"].double(),
                           **_without(sd, "transformer.wte.")}, c), TypeError,
        r"state_dict\['transformer\.wte\.weight'\]: expected dtype torch\.float32, as \d+ of the \d+ tensors are, "
        r"got torch\.float64"),
    "an integer tensor": (
        lambda sd, c, b: ({**sd, "transformer.ln_f.bias": sd["transformer.ln_f.bias"].long()}, c), TypeError,
        r"state_dict\['transformer\.ln_f\.bias'\]: expected a floating-point tensor of dtype torch\.float32"),
    "an unknown config key": (lambda sd, c, b: (sd, {**c, "rotary_dim": 8}), ValueError,
                              r"config: unknown key 'rotary_dim'"),
    "a config key without its value": (lambda sd, c, b: (sd, {k: v for k, v in c.items() if k != "n_head"}),
                                       ValueError, r"config: missing key 'n_head'"),
    "a layout the library cannot compute": (lambda sd, c, b: (sd, {**c, "scale_attn_by_inverse_layer_idx": True}),
                                            ValueError, r"config: scale_attn_by_inverse_layer_idx=True"),
    "not a dict": (lambda sd, c, b: (list(sd.values()), c), TypeError, r"state_dict: expected a GPT-2 state dict"),
}


@pytest.mark.parametrize("case", BAD_GPT2)
def test_bad_gpt2_input_is_named(case):
    make, error, message = BAD_GPT2[case]
    state_dict, config = make(*_gpt2(), _bert())
    with pytest.raises(error, match=message):
        from_gpt2(state_dict, config)


BAD_BERT = {
    "a GPT-2 state dict": (lambda sd, c, g: (g[0], c), ValueError, r"not a BERT state dict"),
    "truncated": (lambda sd, c, g: (_without(sd, "encoder.layer.0.output", "pooler"), c), ValueError,
                  r"missing 4 tensor\(s\): encoder\.layer\.0\.output\.dense\.weight"),
    "a wrong shape": (lambda sd, c, g: ({**sd, "embeddings.token_type_embeddings.weight": torch.zeros(9, 8)}, c),
                      ValueError, r"state_dict\['embeddings\.token_type_embeddings\.weight'\]: expected shape"),
    "an unknown config key": (lambda sd, c, g: (sd, {**c, "rope_theta": 1e4}), ValueError,
                              r"config: unknown key 'rope_theta'"),
    "relative positions": (lambda sd, c, g: (sd, {**c, "position_embedding_type": "relative_key"}), ValueError,
                           r"config: position_embedding_type='relative_key' is not supported"),
}


@pytest.mark.parametrize("case", BAD_BERT)
def test_bad_bert_input_is_named(case):
    make, error, message = BAD_BERT[case]
    state_dict, config = make(*_bert(), _gpt2())
    with pytest.raises(error, match=message):
        from_bert(state_dict, config)


def test_to_gpt2_names_what_gpt2_cannot_compute():
    model = DecoderOnlyTransformer(TransformerConfig(d_model=16, n_heads=2, d_ff=32, n_decoder_layers=1))
    with pytest.raises(ValueError, match=r"GPT-2 cannot compute this model: post-norm .*; sinusoidal positions .*; "
                                         r"embeddings scaled by sqrt\(d_model\)"):
        to_gpt2(model)
    with pytest.raises(TypeError, match=r"model: expected a DecoderOnlyTransformer"):
        to_gpt2(torch.nn.Linear(2, 2))


@pytest.mark.parametrize("name", list(hub_references.REFERENCES))
def test_the_stored_references_are_what_transformers_computes(name):
    """The chapters' small GPT-2 and BERT (package data) are what tools/hub_references.py writes today."""
    config, state_dict, outputs = load_reference(name)
    fresh_config, fresh_state_dict, fresh_outputs = hub_references.REFERENCES[name]()
    assert config == fresh_config
    assert state_dict.keys() == fresh_state_dict.keys() and outputs.keys() == fresh_outputs.keys()
    for key, tensor in state_dict.items():
        assert torch.equal(tensor, fresh_state_dict[key]), key
    for key, tensor in outputs.items():
        assert_close(tensor, fresh_outputs[key], torch.float64, key)
    with torch.no_grad():
        if name == "tiny_gpt2":
            assert_close(from_gpt2(state_dict, config)(outputs["ids"], attention_mask=outputs["attention_mask"]),
                         outputs["logits"], torch.float64, name)
        else:
            bert = from_bert(state_dict, config)
            assert_close(bert.encode(outputs["ids"]), outputs["last_hidden_state"], torch.float64, name)
            assert_close(bert(outputs["ids"]), outputs["mlm_logits"], torch.float64, f"{name}'s masked-LM logits")


def test_a_converted_model_is_not_saved_as_a_checkpoint(tmp_path):
    """A checkpoint rebuilds the model from its config alone, which would scale GPT-2's embeddings."""
    config, state_dict, _ = load_reference("tiny_gpt2")
    with pytest.raises(ValueError, match=r"model: its embedding is not the paper's .* convert\.to_gpt2"):
        save_checkpoint(tmp_path / "gpt2.pt", from_gpt2(state_dict, config))
    assert not (tmp_path / "gpt2.pt").exists()
