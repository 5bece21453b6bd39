"""seed_batch: several seeds of one model trained side by side under torch.func.vmap, each as if alone."""

import pytest
import torch
from torch import nn

from transformer_lib.class_token import fit_classifier
from transformer_lib.config import TransformerConfig
from transformer_lib.masked_lm import IGNORE, encode_sentences, mask_id, mask_tokens, train_masked_lm
from transformer_lib.models import EncoderOnlyTransformer
from transformer_lib.seed_batch import fit_classifier_seeds, fit_seeds
from transformer_lib.tokenization import Vocab
from transformer_lib.validation_tensors import check_finite, in_vmap
from transformer_lib.vision import VisionTransformer

CONFIG = TransformerConfig(d_model=16, n_heads=2, n_encoder_layers=1, d_ff=32, dropout=0.0, norm_first=True,
                           max_len=16)


def _same_weights(a: nn.Module, b: nn.Module) -> float:
    return max((x - y).abs().max().item() for x, y in zip(a.state_dict().values(), b.state_dict().values(),
                                                           strict=True))


def test_each_seed_is_trained_as_fit_classifier_trains_it_alone() -> None:
    torch.manual_seed(5)
    images, labels = torch.rand(40, 4, 4, dtype=torch.float64), torch.randint(3, (40,))
    default = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)  # the same sums in another order agree to 1e-12, not to float32's 1e-3
    try:
        def build() -> nn.Module:
            return VisionTransformer(CONFIG, 3, patch=2)

        batched = fit_classifier_seeds(build, [3, 8], images, labels, steps=6, batch_size=8, lr=1e-2)
        for seed, model in zip([3, 8], batched, strict=True):
            torch.manual_seed(seed)
            alone = build()
            fit_classifier(alone, images, labels, steps=6, batch_size=8, lr=1e-2, seed=seed)
            assert _same_weights(model, alone) < 1e-10
            assert not model.training
        torch.manual_seed(3)
        assert _same_weights(batched[0], build()) > 1e-3  # and training moved them
    finally:
        torch.set_default_dtype(default)


@pytest.mark.parametrize("tied", [False, True], ids=["own output matrix", "output tied to the embedding"])
def test_masked_lm_seeds_train_as_train_masked_lm(tied: bool) -> None:
    vocab = Vocab(["le", "chat", "dort", "la", "souris", "mange"])
    ids = encode_sentences(["le chat dort", "la souris mange", "le chat mange la souris"], vocab)
    config = CONFIG.replace(src_vocab_size=mask_id(vocab) + 1, tgt_vocab_size=mask_id(vocab) + 1,
                            tie_output_embedding=tied)
    default = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        def draw(generator):
            return mask_tokens(ids[torch.randint(len(ids), (4,), generator=generator)], vocab, 0.25, generator)

        def loss(model, inputs, targets):
            return nn.functional.cross_entropy(model(inputs).flatten(0, 1), targets.flatten(), ignore_index=IGNORE)

        models, losses = fit_seeds(lambda: EncoderOnlyTransformer(config), [1, 2], draw, loss, steps=4, lr=1e-2)
        torch.manual_seed(2)
        alone = EncoderOnlyTransformer(config)
        alone_losses = train_masked_lm(alone, ids, vocab, steps=4, batch_size=4, lr=1e-2, rate=0.25, seed=2)
        assert losses.shape == (4, 2)
        assert torch.allclose(losses[:, 1], torch.tensor(alone_losses), rtol=0, atol=1e-10)
        assert _same_weights(models[1], alone) < 1e-10
        assert (models[1].mlm_head.weight is models[1].embed.token.embedding.weight) == tied
    finally:
        torch.set_default_dtype(default)


def test_checks_pass_inside_the_map_and_still_refuse_outside() -> None:
    seen = []

    def check(x):
        seen.append(in_vmap(x))
        check_finite("x", x)
        return x.sum()

    torch.func.vmap(check)(torch.tensor([[1.0, float("nan")], [0.0, 1.0]]))
    assert seen == [True] and not in_vmap(torch.zeros(1))
    with pytest.raises(ValueError, match="x"):
        check_finite("x", torch.tensor([float("nan")]))


def test_bad_input() -> None:
    images, labels = torch.rand(6, 4, 4), torch.randint(3, (6,))

    def build():
        return VisionTransformer(CONFIG, 3, patch=2)

    with pytest.raises(ValueError, match="seeds"):
        fit_classifier_seeds(build, [], images, labels, steps=1)
    with pytest.raises(ValueError, match="seeds"):
        fit_classifier_seeds(build, [-1], images, labels, steps=1)
    with pytest.raises(TypeError, match="build"):
        fit_classifier_seeds(None, [0], images, labels, steps=1)
    with pytest.raises(ValueError, match="steps"):
        fit_classifier_seeds(build, [0], images, labels, steps=0)
    bad = images.clone()
    bad[4, 1, 1] = float("nan")  # checked before the map, where the model's checks cannot look
    with pytest.raises(ValueError, match="inputs"):
        fit_classifier_seeds(build, [0], bad, labels, steps=1)
    with pytest.raises(ValueError, match="labels"):
        fit_classifier_seeds(build, [0], images, labels.clone().fill_(7), steps=1)
    with pytest.raises(TypeError, match="draw"):
        fit_seeds(build, [0], "batches", lambda model, x: model(x).sum(), steps=1, lr=1e-3)
