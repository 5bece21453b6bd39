"""class_token: the class-token classifier on the library's encoder, and its small training loop."""

import pytest
import torch

from transformer_lib.class_token import ClassTokenClassifier, accuracy, fit_classifier
from transformer_lib.config import TransformerConfig

CONFIG = TransformerConfig(d_model=16, n_heads=2, n_encoder_layers=1, d_ff=32, dropout=0.0, max_len=8)


def test_without_positions_the_class_output_ignores_order_and_the_rest_follow_it() -> None:
    torch.manual_seed(0)
    model = ClassTokenClassifier(CONFIG, 3, positions=False).eval()
    x = torch.randn(2, 5, 16)
    order = torch.tensor([4, 2, 0, 1, 3])
    out, moved = model.encode(x), model.encode(x[:, order])
    torch.testing.assert_close(moved[:, 0], out[:, 0], atol=1e-5, rtol=0)
    torch.testing.assert_close(moved[:, 1:], out[:, 1:][:, order], atol=1e-5, rtol=0)


def test_with_positions_order_changes_the_answer() -> None:
    torch.manual_seed(0)
    model = ClassTokenClassifier(CONFIG, 3).eval()
    with torch.no_grad():
        model.position.normal_()  # positions as large as the inputs: order must matter
    x = torch.randn(2, 5, 16)
    assert (model(x) - model(x.flip(1))).abs().max() > 1e-3


def test_padding_is_not_read() -> None:
    torch.manual_seed(0)
    model = ClassTokenClassifier(CONFIG, 3).eval()
    x = torch.randn(1, 5, 16)
    real = torch.tensor([[True, True, True, False, False]])
    other = x.clone()
    other[:, 3:] = torch.randn(1, 2, 16)  # different padding vectors, same answer
    torch.testing.assert_close(model(x, real), model(other, real))
    torch.testing.assert_close(model(x, real), model(x[:, :3]), atol=1e-5, rtol=0)


def test_fit_classifier_learns_a_separable_task() -> None:
    torch.manual_seed(0)
    x = torch.randn(256, 3, 16)
    y = (x[:, :, 0].sum(1) > 0).long()
    model = ClassTokenClassifier(CONFIG, 2, positions=False)
    losses = fit_classifier(model, x, y, steps=150, lr=1e-2)
    assert losses[-1] < losses[0] and accuracy(model, x, y) > 0.9


def test_bad_input() -> None:
    model = ClassTokenClassifier(CONFIG, 3)
    with pytest.raises(TypeError, match="config"):
        ClassTokenClassifier("config", 3)
    with pytest.raises(ValueError, match="n_classes"):
        ClassTokenClassifier(CONFIG, 0)
    with pytest.raises(ValueError, match="d_model"):
        model(torch.randn(1, 4, 8))
    with pytest.raises(ValueError, match="max_len"):
        model(torch.randn(1, 9, 16))
    with pytest.raises(ValueError, match="real"):
        model(torch.randn(1, 4, 16), torch.ones(1, 3, dtype=torch.bool))
    with pytest.raises(ValueError, match="labels"):
        fit_classifier(model, torch.randn(4, 2, 16), torch.zeros(3, dtype=torch.long), steps=1)
    with pytest.raises(ValueError, match="steps"):
        fit_classifier(model, torch.randn(4, 2, 16), torch.zeros(4, dtype=torch.long), steps=0)
