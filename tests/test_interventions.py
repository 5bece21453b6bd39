"""interventions: head ablation, activation patching and the logit lens, held to the identities that
make them trustworthy, in float64, on the shipped translator and on small random models (post-norm
with sinusoids, pre-norm with rotary positions: both kinds of residual stream)."""

from __future__ import annotations

import copy
import random

import pytest
import torch

from transformer_lib.batching import make_batches
from transformer_lib.capture import capture_model_activations, keep_attention_weights
from transformer_lib.config import TransformerConfig
from transformer_lib.interventions import (
    Head,
    Patch,
    head_ablation_drops,
    head_means,
    heads_of,
    intervene,
    interventions,
    logit_lens,
    patch_points,
    residual_streams,
)
from transformer_lib.models import Transformer
from transformer_lib.pretrained import book_corpus, book_model
from transformer_lib.tokenization import Vocab

WORDS = ["the", "cat", "sat", "on", "a", "mat", "dog", "ran"]
VOCAB = Vocab(WORDS)


def _pairs(n: int, seed: int = 0) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    return [(" ".join(rng.choices(WORDS, k=rng.randint(1, 6))), " ".join(rng.choices(WORDS, k=rng.randint(1, 6))))
            for _ in range(n)]


def _small(norm_first: bool, positional: str) -> Transformer:
    config = TransformerConfig(src_vocab_size=len(VOCAB), tgt_vocab_size=len(VOCAB), d_model=16, n_heads=4,
                               n_encoder_layers=2, n_decoder_layers=2, d_ff=32, dropout=0.1, max_len=16,
                               norm_first=norm_first, positional=positional)
    torch.manual_seed(0)
    return Transformer(config).double()


@pytest.fixture(scope="module")
def book():
    checkpoint = book_model(dtype=torch.float64)
    pairs = book_corpus().splits()["valid"][:48]
    batch = make_batches(pairs, checkpoint.src_vocab, checkpoint.tgt_vocab, 48, shuffle=False)[0]
    return checkpoint, pairs, batch


def _cases(book):
    checkpoint, pairs, batch = book
    small = [(_small(*kind), _pairs(12)) for kind in ((False, "sinusoidal"), (True, "rope"))]
    yield "book", checkpoint.model, batch.src, batch.tgt_in
    for name, (model, pairs) in zip(("post-norm", "pre-norm-rope"), small, strict=True):
        batch = make_batches(pairs, VOCAB, VOCAB, len(pairs), shuffle=False)[0]
        yield name, model, batch.src, batch.tgt_in


def _no_hooks_left(model) -> bool:
    return all(not m._forward_hooks and not m._forward_pre_hooks for m in model.modules())


def test_no_intervention_is_the_plain_forward_pass_bit_for_bit(book) -> None:
    for name, model, src, tgt in _cases(book):
        model.train()  # intervene evaluates, then gives the model back as it was
        with torch.no_grad():
            plain = model.eval()(src, tgt)
        model.train()
        for record in (False, True):
            run = intervene(model, src, tgt, record=record)
            assert torch.equal(run.logits, plain), (name, record)
            assert model.training and _no_hooks_left(model), name
        assert len(run.blocks) == len(patch_points(model)), name
        assert torch.equal(run.blocks["generator.logits"], plain), name


def test_the_recorded_blocks_are_captures_own(book) -> None:
    """The patch points are capture's hooks' points: row 0 of a batched recording is what
    capture_model_activations reads for that sentence alone, bit for bit (book model, row 0 cut to its
    length)."""
    checkpoint, _, batch = book
    model = checkpoint.model
    s, t = int((batch.src[0] != 0).sum()), int((batch.tgt_in[0] != 0).sum())
    src, tgt = batch.src[:1, :s], batch.tgt_in[:1, :t]
    with keep_attention_weights(model):  # as capture runs it: attention computes its weights, not fused
        recorded = intervene(model, src, tgt, record=True).blocks
    captured = capture_model_activations(model, src, tgt)
    derived = {name for name in captured if name.endswith((".scores", ".masked", ".weights", ".probabilities"))}
    assert set(recorded) == set(captured) - derived
    for name, value in recorded.items():
        want = captured[name]
        if name.endswith((".q", ".k", ".v", ".heads")):  # capture splits the heads: (T, h, d_k)
            want = want.reshape(want.shape[0], -1)
        assert torch.equal(value[0], want), name


def test_patching_a_run_into_itself_changes_nothing(book) -> None:
    for name, model, src, tgt in _cases(book):
        run = intervene(model, src, tgt, record=True)
        everywhere = [Patch(block, value) for block, value in run.blocks.items()]
        assert torch.equal(intervene(model, src, tgt, patches=everywhere).logits, run.logits), name
        some = [Patch(block, value, [0, value.shape[1] - 1]) for block, value in run.blocks.items()]
        assert torch.equal(intervene(model, src, tgt, patches=some).logits, run.logits), name


def _corrupted(src: torch.Tensor) -> torch.Tensor:
    """``src`` with its first token changed in every row (no padding moved: the masks stay the same)."""
    corrupted = src.clone()
    corrupted[:, 0] = torch.where(src[:, 0] == 4, 5, 4)
    return corrupted


def test_patching_every_block_from_the_clean_run_gives_the_clean_logits(book) -> None:
    for name, model, src, tgt in _cases(book):
        clean = intervene(model, src, tgt, record=True)
        corrupted = _corrupted(src)
        assert not torch.equal(intervene(model, corrupted, tgt).logits, clean.logits), name  # the corruption shows
        every = [Patch(block, value) for block, value in clean.blocks.items()]
        patched = intervene(model, corrupted, tgt, patches=every, record=True)
        assert torch.equal(patched.logits, clean.logits), name
        assert all(torch.equal(patched.blocks[b], clean.blocks[b]) for b in clean.blocks), name
        # the source's embedding alone, at the changed position: everything after it is recomputed, the same
        only_input = [Patch("src.input", clean.blocks["src.input"], [0])]
        assert torch.equal(intervene(model, corrupted, tgt, patches=only_input).logits, clean.logits), name
        # and the last encoder layer's output (the memory), every position
        memory = "encoder.final_norm" if model.config.norm_first else "encoder.1.ff_residual.norm"
        restored = intervene(model, corrupted, tgt, patches=[Patch(memory, clean.blocks[memory])]).logits
        assert torch.equal(restored, clean.logits), name


def _w_o_zeroed(model: Transformer, head: Head, mean: torch.Tensor | None = None) -> Transformer:
    """A copy of ``model`` whose W_O reads nothing from ``head``: its d_k input columns zeroed (and, for mean
    ablation, the mean's contribution through them moved into W_O's bias)."""
    changed = copy.deepcopy(model)
    stack, name = {"encoder_self": ("encoder", "self_attn"), "decoder_self": ("decoder", "self_attn"),
                   "cross": ("decoder", "cross_attn")}[head.kind]
    attention = getattr(getattr(changed, stack).layers[head.layer], name)
    columns = slice(head.head * attention.d_k, (head.head + 1) * attention.d_k)
    with torch.no_grad():
        if mean is not None:
            attention.w_o.bias += attention.w_o.weight[:, columns] @ mean[columns]
        attention.w_o.weight[:, columns] = 0.0
    return changed


def test_ablating_a_head_is_zeroing_its_columns_of_w_o(book) -> None:
    for name, model, src, tgt in _cases(book):
        plain = intervene(model, src, tgt).logits
        means = head_means(model, src, tgt)
        heads = heads_of(model)
        assert len(heads) == 3 * 2 * 4
        for head in heads:
            ablated = intervene(model, src, tgt, [head]).logits
            with torch.no_grad():
                want = _w_o_zeroed(model, head).eval()(src, tgt)
            assert torch.equal(ablated, want), (name, head)
            assert not torch.equal(ablated, plain), (name, head)  # a head that changes nothing would prove nothing
            mean_ablated = intervene(model, src, tgt, [head], means).logits
            with torch.no_grad():
                want = _w_o_zeroed(model, head, means[head.attention]).eval()(src, tgt)
            torch.testing.assert_close(mean_ablated, want, rtol=0, atol=1e-12)
        both = intervene(model, src, tgt, heads[:2]).logits  # two heads of one module at once
        with torch.no_grad():
            want = _w_o_zeroed(_w_o_zeroed(model, heads[0]), heads[1]).eval()(src, tgt)
        assert torch.equal(both, want), name


def test_head_means_are_the_mean_over_real_positions(book) -> None:
    checkpoint, _, batch = book
    model = checkpoint.model
    means = head_means(model, batch.src, batch.tgt_in)
    blocks = intervene(model, batch.src, batch.tgt_in, record=True).blocks
    rows = [blocks["decoder.1.cross_attn.heads"][i, : int((batch.tgt_in[i] != 0).sum())] for i in range(len(batch))]
    torch.testing.assert_close(means["decoder.1.cross_attn"], torch.cat(rows).mean(dim=0), rtol=0, atol=1e-12)


def test_the_logit_lens_at_the_last_layer_is_the_models_logits(book) -> None:
    for name, model, src, tgt in _cases(book):
        run = intervene(model, src, tgt, record=True)
        streams = residual_streams(model)
        assert len(streams) == 1 + 3 * model.config.n_decoder_layers
        assert torch.equal(logit_lens(model, run.blocks, streams[-1]), run.logits), name
        earlier = logit_lens(model, run.blocks, streams[-2])
        assert earlier.shape == run.logits.shape and not torch.equal(earlier, run.logits), name


def _direct_drops(model, pairs, ablation: str) -> torch.Tensor:
    """head_ablation_drops by the plainest route: one batch of every pair, a whole intervene per head."""
    batch = make_batches(pairs, VOCAB, VOCAB, len(pairs), shuffle=False)[0]
    means = head_means(model, batch.src, batch.tgt_in) if ablation == "mean" else None

    def log_likelihood(logits):
        found = logits.log_softmax(-1).gather(-1, batch.tgt_out[..., None])[..., 0]
        return found.masked_fill(batch.tgt_out == 0, 0.0).sum(1)

    base = log_likelihood(intervene(model, batch.src, batch.tgt_in).logits)
    return torch.stack([base - log_likelihood(intervene(model, batch.src, batch.tgt_in, [head], means).logits)
                        for head in heads_of(model)])


@pytest.mark.parametrize("ablation", ["mean", "zero"])
def test_head_ablation_drops_are_each_heads_own_run(ablation) -> None:
    """Batched by length, the encoder reused for the decoder's heads, the sentences put back in order: the
    same drops as a whole forward pass per head over one batch."""
    model, pairs = _small(False, "sinusoidal"), _pairs(30, seed=1)
    found = head_ablation_drops(model, pairs, VOCAB, VOCAB, ablation, batch_size=7)
    assert found.heads == heads_of(model) and found.drops.shape == (24, 30) and found.ablation == ablation
    torch.testing.assert_close(found.drops, _direct_drops(model, pairs, ablation), rtol=0, atol=1e-10)
    assert set(found.mean_drops()) == set(found.heads)


def test_interventions_hold_while_decoding_and_leave_no_hook() -> None:
    model = _small(True, "rope").eval()
    src = torch.tensor([[4, 5, 6, 7]])
    head = Head("cross", 1, 2)
    with interventions(model, [head]), torch.no_grad():
        memory = model.encode(src)
        cache = model.new_cache()
        steps = [model.decode(torch.tensor([[1]]), memory, src, cache),
                 model.decode(torch.tensor([[4]]), memory, src, cache)]
    full = intervene(model, src, torch.tensor([[1, 4]]), [head]).logits
    torch.testing.assert_close(model.generator(torch.cat(steps, dim=1)), full, rtol=0, atol=1e-12)
    assert _no_hooks_left(model)
    with pytest.raises(ValueError, match=r"patches\[0\]\.values"):
        intervene(model, src, torch.tensor([[1, 4]]), patches=[Patch("src.input", torch.zeros(1, 3, 16).double())])
    assert _no_hooks_left(model)


def test_bad_interventions_are_refused_by_name() -> None:
    model = _small(False, "sinusoidal")
    src, tgt = torch.tensor([[4, 5]]), torch.tensor([[1, 4]])
    with pytest.raises(ValueError, match=r"ablate\[1\]: .* listed twice"):
        intervene(model, src, tgt, [Head("cross", 0, 0), Head("cross", 0, 0)])
    with pytest.raises(ValueError, match=r"ablate\[0\]\.layer"):
        intervene(model, src, tgt, [Head("cross", 2, 0)])
    with pytest.raises(ValueError, match=r"means: no mean for decoder\.0\.cross_attn"):
        intervene(model, src, tgt, [Head("cross", 0, 0)], {})
    with pytest.raises(ValueError, match=r"patches\[0\]\.block"):
        intervene(model, src, tgt, patches=[Patch("decoder.0.cross_attn.weights", torch.zeros(1))])
    with pytest.raises(ValueError, match=r"patches\[0\]\.positions\[0\]"):
        intervene(model, src, tgt, patches=[Patch("src.input", torch.zeros(1, 2, 16).double(), [2])])
    with pytest.raises(ValueError, match=r"^block: "):
        logit_lens(model, {}, "encoder.0.ff_residual.norm")
