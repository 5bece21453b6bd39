import math

import pytest
import torch
import torch.nn.functional as F

from transformer_lib.analysis import (
    analogy,
    analogy_ranks,
    contextual_occurrences,
    head_statistics,
    nearest_words,
    norm_placement_scales,
    prefix_corruption,
)
from transformer_lib.attention import causal_mask
from transformer_lib.capture import AttentionMaps
from transformer_lib.tokenization import Vocab

from .toy_translation import SRC, TGT, toy_model

WORDS = Vocab("a b c d e".split())  # ids 4..8


def _vectors(rows):
    return torch.tensor([[0.0, 0.0, 0.0]] * 4 + rows, dtype=torch.float64)


def test_contextual_occurrences_same_embedding_different_outputs():
    model = toy_model()
    found = contextual_occurrences(model, SRC, ["the cat sat", "a dog ran on the mat"], "the")
    assert [o.position for o in found] == [0, 4]
    assert torch.equal(found[0].embedding, found[1].embedding)  # the lookup ignores the context
    assert not torch.allclose(found[0].encoded, found[1].encoded)
    # the encoded vector is the encoder's output at that position
    ids = torch.tensor([SRC.encode("a dog ran on the mat")])
    with torch.no_grad():
        assert torch.allclose(found[1].encoded, model.encode(ids)[0, 4])
    assert found[1].attention.shape == (2, 6)  # layers, source length
    assert torch.allclose(found[1].attention.sum(-1), torch.ones(2, dtype=found[1].attention.dtype))
    with pytest.raises(ValueError, match=r"sentences\[1\]"):
        contextual_occurrences(model, SRC, ["the cat", "a dog"], "the")
    with pytest.raises(ValueError, match="word"):
        contextual_occurrences(model, SRC, ["the cat"], "zebra")
    with pytest.raises(TypeError, match="model"):
        contextual_occurrences(None, SRC, ["the cat"], "the")


def test_nearest_words_and_analogy_by_cosine():
    # a=(1,0,0), b=(1,1,0), c=(0,0,1), d=(0,1,1): d - c = b - a; e far from all
    vectors = _vectors([[1, 0, 0], [1, 1, 0], [0, 0, 1], [0, 1, 1], [-1, -1, -1]])
    near = nearest_words(vectors, WORDS, "a", k=2)
    assert near[0] == ("b", pytest.approx(1 / 2 ** 0.5)) and near[1][0] in {"c", "d"}
    assert analogy(vectors, WORDS, "a", "b", "c", k=1)[0][0] == "d"
    # the offset is taken between unit vectors and the answer compared by cosine
    unit = F.normalize(vectors, dim=-1)
    expected = F.cosine_similarity(unit[5] - unit[4] + unit[6], unit[7], dim=0).item()
    assert analogy(vectors, WORDS, "a", "b", "c", k=1)[0][1] == pytest.approx(expected)
    ranks = analogy_ranks(vectors, WORDS, [("a", "b"), ("c", "d")])
    assert ranks.tolist() == [1, 1]  # both directions answered first
    with pytest.raises(ValueError, match="vectors"):
        nearest_words(vectors[:5], WORDS, "a")
    with pytest.raises(ValueError, match="word"):
        nearest_words(vectors, WORDS, "<pad>")
    with pytest.raises(ValueError, match="pairs"):
        analogy_ranks(vectors, WORDS, [("a", "b")])


def test_analogy_rank_counts_better_candidates():
    # for a:b :: c:?, the query is unit(b) - unit(a) + unit(c) = (0, 1, 1) -> d first, then e = (0, 1, 0.5)
    vectors = _vectors([[1, 0, 0], [1, 1, 0], [0, 0, 1], [0, 1, 0.5], [0, 1, 1]])
    assert analogy(vectors, WORDS, "a", "b", "c", k=1)[0][0] == "e"
    assert analogy_ranks(vectors, WORDS, [("a", "b"), ("c", "d")])[0].item() == 2


def test_prefix_corruption_changes_only_the_prefix_word():
    model = toy_model()
    pairs = [("the cat sat", "le chat assis"), ("a dog ran", "un chien couru"), ("the mat", "le")]
    r = prefix_corruption(model, pairs, SRC, TGT, position=2, seed=1)
    assert len(r.wrong_words) == 2  # the one-word target is too short to change at position 2
    assert r.pairs == pairs[:2]
    assert all(w != ref for w, ref in zip(r.wrong_words, ["chat", "chien"], strict=True))
    assert [len(p) for p in r.clean] == [2, 2]  # predictions at positions 2 and 3: the last word and <eos>
    # clean predictions are the model's teacher-forced argmax
    src = torch.tensor([SRC.encode("the cat sat")])
    tgt = torch.tensor([[TGT.sos_id, *TGT.encode("le chat assis")]])
    with torch.no_grad():
        argmax = model(src, tgt).argmax(-1)[0, 2:].tolist()
    assert r.clean[0] == [TGT.itos[i] for i in argmax]
    assert 0 <= r.corrupted_accuracy <= 1 and 0 <= r.clean_accuracy <= 1
    with pytest.raises(ValueError, match="position"):
        prefix_corruption(model, pairs, SRC, TGT, position=9)
    with pytest.raises(TypeError, match="tgt_vocab"):
        prefix_corruption(model, pairs, SRC, None)


def test_head_statistics_measures_known_patterns():
    n = 4
    identity = torch.eye(n)  # every query looks at itself
    uniform = torch.full((n, n), 1 / n)
    causal_uniform = causal_mask(n).float() / causal_mask(n).sum(-1, keepdim=True)
    maps = AttentionMaps(encoder_self=[torch.stack([identity, uniform])[None]],
                         decoder_self=[torch.stack([causal_uniform, identity])[None]],
                         cross=[torch.stack([uniform, identity])[None]])
    rows = {(r["attention"], r["head"]): r for r in head_statistics(maps)}
    assert len(rows) == 6 and all(r["layer"] == 1 for r in rows.values())
    assert rows["encoder_self", 1]["entropy"] == pytest.approx(0) and rows["encoder_self", 1]["own"] == 1
    assert rows["encoder_self", 2]["entropy"] == pytest.approx(1) and rows["encoder_self", 2]["max weight"] == 0.25
    # causal uniform: rows 1..3 spread over 2, 3, 4 keys: entropy 1, own = mean(1/2, 1/3, 1/4)
    assert rows["decoder_self", 1]["entropy"] == pytest.approx(1)
    assert rows["decoder_self", 1]["own"] == pytest.approx((1 / 2 + 1 / 3 + 1 / 4) / 3)
    assert rows["decoder_self", 1]["previous"] == pytest.approx((1 / 2 + 1 / 3 + 1 / 4) / 3)
    assert rows["decoder_self", 2]["previous"] == 0
    assert math.isnan(rows["cross", 1]["own"]) and rows["cross", 2]["entropy"] == pytest.approx(0)


def test_head_statistics_of_every_head_are_each_head_alone():
    # the heads are measured together; each must get what its (T_q, T_k) map gives on its own
    generator = torch.Generator().manual_seed(0)
    n_q, n_k, heads = 5, 7, 3
    scores = torch.randn(2, heads, n_q, n_q, generator=generator, dtype=torch.float64)
    causal = scores.masked_fill(~causal_mask(n_q), float("-inf")).softmax(-1)
    cross = torch.randn(2, heads, n_q, n_k, generator=generator, dtype=torch.float64).softmax(-1)
    rows = head_statistics(AttentionMaps(decoder_self=[causal], cross=[cross]), index=1)
    for row in rows:
        w = (causal if row["attention"] == "decoder_self" else cross)[1, row["head"] - 1]
        seen = torch.arange(1, n_q + 1) if row["attention"] == "decoder_self" else torch.full((n_q,), n_k)
        keep = seen > 1
        entropy = -(w * w.clamp_min(1e-30).log()).sum(-1)[keep] / seen[keep].double().log()
        assert row["entropy"] == pytest.approx(entropy.mean().item(), abs=1e-12)
        assert row["max weight"] == pytest.approx(w.max(-1).values[keep].mean().item(), abs=1e-12)
        if row["attention"] == "decoder_self":
            assert row["own"] == pytest.approx(w.diagonal()[keep].mean().item(), abs=1e-12)
            assert row["previous"] == pytest.approx(torch.cat([torch.zeros(1), w.diagonal(-1)])[keep].mean().item(),
                                                    abs=1e-12)
        else:
            assert math.isnan(row["own"]) and math.isnan(row["previous"])


def test_head_statistics_of_every_batch_row_are_each_row_alone():
    # index=None measures the whole batch in one pass: the rows of each sentence, in batch order,
    # must be what that sentence's own call gives
    generator = torch.Generator().manual_seed(1)
    scores = torch.randn(3, 2, 4, 4, generator=generator, dtype=torch.float64)
    maps = AttentionMaps(encoder_self=[scores.softmax(-1), (2 * scores).softmax(-1)],
                         decoder_self=[scores.masked_fill(~causal_mask(4), float("-inf")).softmax(-1)],
                         cross=[torch.randn(3, 2, 4, 6, generator=generator, dtype=torch.float64).softmax(-1)])
    together = head_statistics(maps, index=None)
    alone = [row for index in range(3) for row in head_statistics(maps, index)]
    assert len(together) == len(alone) == 3 * 4 * 2
    for batched, single in zip(together, alone, strict=True):
        assert batched.keys() == single.keys()
        for name, value in single.items():
            if isinstance(value, float) and math.isnan(value):
                assert math.isnan(batched[name])
            else:
                assert batched[name] == pytest.approx(value, abs=1e-14), name


def test_head_statistics_checks_its_arguments():
    with pytest.raises(TypeError, match="maps: expected"):
        head_statistics({})
    with pytest.raises(ValueError, match="maps: no attention maps"):
        head_statistics(AttentionMaps())
    with pytest.raises(ValueError, match="index"):
        head_statistics(AttentionMaps(encoder_self=[torch.ones(1, 1, 2, 2) / 2]), index=1)


def test_norm_placement_scales_post_norm_keeps_unit_rms_pre_norm_grows():
    post = norm_placement_scales(False, n_layers=6, d_model=16, d_ff=32, seq_len=5, batch=2)
    pre = norm_placement_scales(True, n_layers=6, d_model=16, d_ff=32, seq_len=5, batch=2)
    assert len(post["activation"]) == len(pre["gradient"]) == 6
    # a LayerNorm with gain 1 and bias 0 ends every post-norm layer: RMS 1 (up to its eps)
    assert torch.allclose(torch.tensor(post["activation"]), torch.ones(6), atol=1e-3)
    assert pre["activation"][-1] > pre["activation"][0]  # the residual stream adds up
    assert all(g > 0 for g in post["gradient"] + pre["gradient"])
