import pytest
import torch

from transformer_lib.capture import capture_attention
from transformer_lib.config import PRESETS, TransformerConfig
from transformer_lib.models import (
    COMPONENTS,
    DecoderOnlyTransformer,
    EncoderOnlyTransformer,
    Transformer,
    count_parameters,
    parameter_breakdown,
    parameter_count,
)


def tiny(**changes) -> TransformerConfig:
    base = TransformerConfig(src_vocab_size=30, tgt_vocab_size=25, d_model=16, n_heads=2, n_encoder_layers=2,
                             n_decoder_layers=2, d_ff=32, dropout=0.0, max_len=40)
    return base.replace(**changes)


POSITIONS = ["sinusoidal", "learned", "rope"]


def batch():
    src = torch.randint(1, 30, (2, 8))
    src[1, 5:] = 0
    tgt = torch.randint(1, 25, (2, 6))
    return src, tgt


@pytest.mark.parametrize("positional", POSITIONS)
@pytest.mark.parametrize("norm_first", [False, True])
def test_changing_a_later_decoder_token_changes_no_earlier_output(positional, norm_first):
    model = Transformer(tiny(positional=positional, norm_first=norm_first)).double().eval()
    src, tgt = batch()
    logits = model(src, tgt)
    for t in range(5):
        changed = tgt.clone()
        changed[:, t + 1 :] = torch.randint(1, 25, changed[:, t + 1 :].shape)
        changed[:, t + 1] = (tgt[:, t + 1] % 24) + 1  # surely different
        other = model(src, changed)
        torch.testing.assert_close(other[:, : t + 1], logits[:, : t + 1], rtol=0, atol=1e-12)
        assert not torch.allclose(other[:, t + 1], logits[:, t + 1])


@pytest.mark.parametrize("positional", POSITIONS)
@pytest.mark.parametrize("norm_first", [False, True])
def test_cached_incremental_decoding_gives_the_same_logits_at_every_step(positional, norm_first):
    model = Transformer(tiny(positional=positional, norm_first=norm_first)).double().eval()
    src, tgt = batch()
    full = model(src, tgt)
    memory = model.encode(src)
    cache = model.new_cache()
    for t in range(tgt.shape[1]):
        step = model.generator(model.decode(tgt[:, t : t + 1], memory, src, cache))
        torch.testing.assert_close(step[:, 0], full[:, t], rtol=0, atol=1e-10)
    assert len(cache[0].self_attn) == tgt.shape[1]
    assert len(cache[0].cross_attn) == src.shape[1]


@pytest.mark.parametrize("positional", POSITIONS)
def test_decoder_only_model_is_causal_and_its_cache_is_exact(positional):
    model = DecoderOnlyTransformer(tiny(positional=positional)).double().eval()
    ids = torch.randint(1, 25, (2, 7))
    full = model(ids)
    changed = ids.clone()
    changed[:, 4] = (ids[:, 4] % 24) + 1
    torch.testing.assert_close(model(changed)[:, :4], full[:, :4], rtol=0, atol=1e-12)
    cache = model.new_cache()
    prompt = model(ids[:, :3], cache)  # a prompt of three tokens at once, then one at a time
    steps = [prompt] + [model(ids[:, t : t + 1], cache) for t in range(3, 7)]
    torch.testing.assert_close(torch.cat(steps, dim=1), full, rtol=0, atol=1e-10)


def test_encoder_only_model_sees_both_directions():
    model = EncoderOnlyTransformer(tiny()).double().eval()
    ids = torch.randint(1, 30, (2, 7))
    changed = ids.clone()
    changed[:, 6] = (ids[:, 6] % 29) + 1
    assert not torch.allclose(model(changed)[:, 0], model(ids)[:, 0])


def test_the_three_models_are_built_from_the_same_layer_classes():
    enc_dec = Transformer(tiny())
    gpt = DecoderOnlyTransformer(tiny())
    bert = EncoderOnlyTransformer(tiny())
    assert type(gpt.blocks) is type(enc_dec.encoder) is type(bert.encoder)
    assert type(gpt.blocks.layers[0]) is type(enc_dec.encoder.layers[0])


def test_weight_sharing_of_section_3_4():
    shared = Transformer(tiny(tgt_vocab_size=30, tie_output_embedding=True, share_source_target_embedding=True))
    w = shared.tgt_embed.token.embedding.weight
    assert shared.generator.weight is w and shared.src_embed.token.embedding.weight is w
    separate = Transformer(tiny(tgt_vocab_size=30))
    assert count_parameters(separate) - count_parameters(shared) == 2 * 30 * 16
    with pytest.raises(ValueError, match="share_source_target_embedding"):
        tiny(share_source_target_embedding=True)  # 30 and 25 words cannot share one matrix


def test_paper_parameter_counts():
    # Table 3 of the paper reports 65M (base) and 213M (big); its vocabulary of "about 37000" is approximate.
    base, big = parameter_count(PRESETS["base"]), parameter_count(PRESETS["big"])
    assert 60e6 < base < 66e6 and 210e6 < big < 216e6
    layer = 4 * (512 * 512 + 512) + (512 * 2048 + 2048) + (2048 * 512 + 512)
    assert base == (37000 * 512 + 6 * (layer + 2 * 2 * 512) + 6 * (layer + 4 * (512 * 512 + 512) + 3 * 2 * 512)
                    + 37000)  # shared embedding, encoder, decoder, generator bias
    model = Transformer(tiny())
    assert parameter_count(tiny()) == count_parameters(model)


def test_capture_returns_every_map_in_bertviz_layout():
    model = Transformer(tiny()).train()
    src, tgt = batch()
    src_vocab = [f"s{i}" for i in range(30)]
    tgt_vocab = [f"t{i}" for i in range(25)]
    maps = capture_attention(model, src, tgt, src_vocab, tgt_vocab)
    assert model.training  # restored
    assert [m.shape for m in maps.encoder_self] == [(2, 2, 8, 8)] * 2
    assert [m.shape for m in maps.decoder_self] == [(2, 2, 6, 6)] * 2
    assert [m.shape for m in maps.cross] == [(2, 2, 6, 8)] * 2
    assert maps.src_tokens[0] == [src_vocab[i] for i in src[0].tolist()]
    for m in maps.encoder_self + maps.decoder_self + maps.cross:
        torch.testing.assert_close(m.sum(-1), torch.ones(m.shape[:-1]))
    assert torch.all(maps.decoder_self[0].triu(1) == 0)  # causal
    assert torch.all(maps.cross[1][1, :, :, 5:] == 0)  # source padding
    # the first encoder layer's map is softmax(QK^T/sqrt(d_k)) of its own projections
    model.eval()
    x = model.src_embed(src)
    attn = model.encoder.layers[0].self_attn
    _, expected = attn(x, x, x, model.src_mask(src), need_weights=True)
    torch.testing.assert_close(maps.encoder_self[0], expected)
    kwargs = maps.bertviz_kwargs(1)
    assert kwargs["cross_attention"][0].shape == (1, 2, 6, 8) and len(kwargs["encoder_tokens"]) == 8
    assert all(m.last_weights is None and not m.keep_weights for m in model.modules() if hasattr(m, "keep_weights"))


def test_capture_for_single_stack_models():
    gpt = DecoderOnlyTransformer(tiny())
    maps = capture_attention(gpt, torch.randint(1, 25, (1, 5)))
    assert len(maps.decoder_self) == 2 and maps.decoder_self[0].shape == (1, 2, 5, 5)
    bert = EncoderOnlyTransformer(tiny())
    maps = capture_attention(bert, torch.randint(1, 30, (1, 5)))
    assert len(maps.encoder_self) == 2 and not maps.cross


def test_presets():
    assert TransformerConfig.preset("base").d_model == 512
    assert TransformerConfig.preset("big").n_heads == 16
    assert TransformerConfig.preset("small", dropout=0.0).dropout == 0.0
    with pytest.raises(ValueError, match="name: expected one of"):
        TransformerConfig.preset("huge")


def test_dropout_is_active_in_training_only():
    model = Transformer(tiny(dropout=0.5))
    src, tgt = batch()
    model.train()
    assert not torch.equal(model(src, tgt), model(src, tgt))
    model.eval()
    assert torch.equal(model(src, tgt), model(src, tgt))


def test_the_book_preset_is_the_model_the_book_trains():
    from transformer_lib.pretrained import BOOK_RECIPE

    # The vocabulary sizes come from the corpus's vocabularies; every other field is the preset's.
    assert TransformerConfig.preset("book", src_vocab_size=37, tgt_vocab_size=41) == BOOK_RECIPE.config(37, 41)


def test_breakdown_adds_up_to_the_total_and_counts_shared_matrices_once():
    for name in ("small", "base"):
        config = TransformerConfig.preset(name)
        counts = parameter_breakdown(config)
        assert list(counts) == list(COMPONENTS)
        assert sum(counts.values()) == parameter_count(config)
    base = parameter_breakdown(TransformerConfig.preset("base"))
    assert base["embeddings"] == 37000 * 512  # one matrix for both embeddings and the projection
    assert base["output projection"] == 37000  # only the projection's bias is its own
    assert base["encoder feed-forward"] == 6 * (512 * 2048 + 2048 + 2048 * 512 + 512)


def test_breakdown_matches_a_real_model():
    config = TransformerConfig.preset("small", src_vocab_size=50, tgt_vocab_size=60, d_model=16, d_ff=32)
    model = Transformer(config)
    counts = parameter_breakdown(config)
    assert counts["decoder cross-attention"] == sum(
        p.numel() for n, p in model.named_parameters() if ".cross_attn." in n)
    assert counts["output projection"] == 60 * 16 + 60


def test_breakdown_rejects_a_preset_name():
    with pytest.raises(TypeError, match="config"):
        parameter_breakdown("base")


@pytest.mark.parametrize("positional", POSITIONS)
@pytest.mark.parametrize("chunks", [(3, 1, 1, 1), (1, 1, 1, 1, 1, 1), (2, 4)], ids=str)
def test_decoder_only_cache_masks_padding_like_the_full_forward(positional, chunks):
    """The issue's case: pad 0 inside the prompt; with a cache it used to be attended to (0.35 apart)."""
    torch.manual_seed(0)
    model = DecoderOnlyTransformer(tiny(positional=positional)).double().eval()
    ids = torch.tensor([[1, 0, 0, 7, 8, 9], [3, 4, 5, 6, 0, 0], [0, 2, 3, 0, 4, 5]])
    full = model(ids)
    cache, steps, start = model.new_cache(), [], 0
    for size in chunks:
        steps.append(model(ids[:, start:start + size], cache))
        start += size
    torch.testing.assert_close(torch.cat(steps, dim=1), full, rtol=0, atol=1e-10)


def test_padding_with_a_cache_that_cannot_record_it_is_refused():
    from transformer_lib.multi_head_attention import KVCache

    from .bad_input import raises

    model = DecoderOnlyTransformer(tiny()).eval()
    raises(ValueError, lambda: model(torch.tensor([[1, 0, 3]]), [KVCache() for _ in range(2)]), "cache")
    raises(TypeError, lambda: model(torch.tensor([[1, 2, 3]]), "cache"), "cache")


@pytest.mark.parametrize("pad_id", [0, None])
def test_an_attention_mask_marks_padding_as_the_padding_id_does(pad_id):
    """Padding of any id, marked 0 in ``attention_mask`` (Hugging Face's), is what the padding id is: at the
    real tokens, the decoder-only and encoder-only models compute what they compute on id-padding; with
    ``pad_id=None`` (GPT-2, BERT) no id is padding, and the mask alone says where it is."""
    torch.manual_seed(0)
    config = tiny(positional="learned")
    decoder, encoder = DecoderOnlyTransformer(config).double().eval(), EncoderOnlyTransformer(config).double().eval()
    by_id = torch.tensor([[3, 4, 5, 6, 0, 0], [7, 8, 9, 10, 11, 12]])
    real = by_id != 0
    any_id = by_id.masked_fill(~real, 13)  # padding of another id, marked by the mask only
    for model, in_full in ((decoder, lambda m, ids, **k: m(ids, **k)),
                           (encoder, lambda m, ids, **k: m.encode(ids, **k))):
        expected = in_full(model, by_id)
        model.config = config.replace(pad_id=pad_id)
        try:
            masked = in_full(model, any_id, attention_mask=real.long())
            masked_bool = in_full(model, any_id, attention_mask=real)
            unmasked = in_full(model, any_id)
        finally:
            model.config = config
        torch.testing.assert_close(masked[real], expected[real], rtol=0, atol=1e-12)
        torch.testing.assert_close(masked_bool, masked, rtol=0, atol=0)
        if model is encoder:  # unmarked, token 13 is read (by every position: the decoder's come later)
            assert (unmasked[0, :4] - expected[0, :4]).abs().max() > 1e-3
    cache = decoder.new_cache()
    stepped = torch.cat([decoder(any_id[:, t:t + 1], cache, attention_mask=real[:, t:t + 1]) for t in range(6)], 1)
    torch.testing.assert_close(stepped[real], decoder(by_id)[real], rtol=0, atol=1e-12)


def test_a_bad_attention_mask_is_refused_by_name():
    from .bad_input import raises

    model = DecoderOnlyTransformer(tiny()).eval()
    ids = torch.tensor([[1, 2, 3]])
    raises(TypeError, lambda: model(ids, attention_mask=torch.ones(1, 3)), "attention_mask")
    raises(ValueError, lambda: model(ids, attention_mask=torch.ones(1, 4, dtype=torch.long)), "attention_mask")
    raises(ValueError, lambda: model(ids, attention_mask=torch.tensor([[1, 2, 1]])), "attention_mask")
    raises(TypeError, lambda: model(ids, attention_mask=[[1, 1, 1]]), "attention_mask")


def test_the_encoder_decoder_needs_its_padding_id():
    from .bad_input import raises

    raises(ValueError, lambda: Transformer(tiny(pad_id=None)), "config")
    raises(ValueError, lambda: tiny(pad_id=25), "pad_id")  # outside the target vocabulary of 25
    raises(TypeError, lambda: tiny(pad_id="0"), "pad_id")
