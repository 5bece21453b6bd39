"""vision: patches as tokens, the digits that ship with scikit-learn, sets of digits, and the figure."""

import numpy as np
import pytest
import torch

from transformer_lib.config import TransformerConfig
from transformer_lib.figures.vision import patch_attention_figure
from transformer_lib.vision import (
    DigitCNN,
    SetClassifier,
    VisionTransformer,
    digit_sets,
    image_patches,
    load_digit_images,
    sklearn_digits,
)

CONFIG = TransformerConfig(d_model=16, n_heads=2, n_encoder_layers=1, d_ff=32, dropout=0.0, max_len=16)


def test_patches_are_squares_in_reading_order() -> None:
    images = torch.arange(2 * 4 * 6, dtype=torch.float32).reshape(2, 4, 6)
    patches = image_patches(images, 2)
    assert patches.shape == (2, 6, 4)
    for b in range(2):
        for r in range(2):
            for c in range(3):
                assert torch.equal(patches[b, r * 3 + c], images[b, 2 * r:2 * r + 2, 2 * c:2 * c + 2].flatten())


def test_digits_load_and_split_without_overlap() -> None:
    split = load_digit_images(n_test=497, seed=0)
    assert split.train_images.shape == (1300, 8, 8) and split.test_images.shape == (497, 8, 8)
    assert 0 <= split.train_images.min() and split.train_images.max() <= 1
    assert set(split.train_labels.tolist()) == set(range(10))
    again = load_digit_images(n_test=497, seed=0)
    assert torch.equal(split.test_images, again.test_images)  # seeded


def test_models_give_logits_and_sets_are_order_free() -> None:
    torch.manual_seed(0)
    vit = VisionTransformer(CONFIG, 10, patch=2).eval()
    assert vit(torch.rand(3, 8, 8)).shape == (3, 10)
    sets, largest = digit_sets(torch.rand(20, 8, 8), torch.arange(20) % 10, n_sets=5, set_size=4)
    assert sets.shape == (5, 4, 64) and largest.shape == (5,)
    model = SetClassifier(CONFIG, 10).eval()
    torch.testing.assert_close(model(sets), model(sets.flip(1)), atol=1e-5, rtol=0)


def test_digit_sets_label_is_the_largest_member() -> None:
    images = torch.zeros(10, 8, 8)
    images[:, 0, 0] = torch.arange(10.0)  # each image remembers its index
    labels = torch.tensor([3, 1, 4, 1, 5, 9, 2, 6, 5, 3])
    sets, largest = digit_sets(images, labels, n_sets=50, set_size=3, seed=1)
    members = sets[:, :, 0].long()
    assert torch.equal(labels[members].amax(1), largest)


def test_patch_attention_figure() -> None:
    fig = patch_attention_figure(torch.rand(8, 8), torch.softmax(torch.randn(16), 0), 2, "a title")
    assert fig.layout.title.text == "a title" and len(fig.data) == 2
    assert all(trace.colorbar.title.text for trace in fig.data)
    assert fig.layout.xaxis.title.text and fig.layout.yaxis2.title.text


def test_bad_input() -> None:
    with pytest.raises(ValueError, match="patch"):
        image_patches(torch.rand(1, 8, 8), 3)
    with pytest.raises(ValueError, match="images"):
        image_patches(torch.rand(8, 8), 2)
    with pytest.raises(TypeError, match="images"):
        image_patches([[0.0]], 2)
    with pytest.raises(ValueError, match="n_test"):
        load_digit_images(n_test=5000)
    with pytest.raises(ValueError, match="set_size"):
        digit_sets(torch.rand(4, 8, 8), torch.arange(4), n_sets=2, set_size=0)
    with pytest.raises(ValueError, match="weights"):
        patch_attention_figure(torch.rand(8, 8), torch.rand(9), 2, "t")


def test_the_digits_are_scikit_learns() -> None:
    from sklearn.datasets import load_digits

    images, labels = sklearn_digits()
    digits = load_digits()
    assert images.shape == (1797, 8, 8) and labels.dtype.kind == "i"
    assert np.array_equal(images, digits.images) and np.array_equal(labels, digits.target)


def test_digit_cnn_is_torchs_convolutions_in_order() -> None:
    torch.manual_seed(0)
    cnn = DigitCNN(channels=4).eval()
    images = torch.rand(3, 8, 8)
    conv1, _, _, conv2, _, _, _, head = cnn.layers
    x = torch.nn.functional.max_pool2d(torch.relu(torch.nn.functional.conv2d(images[:, None], conv1.weight,
                                                                             conv1.bias, padding=1)), 2)
    x = torch.nn.functional.max_pool2d(torch.relu(torch.nn.functional.conv2d(x, conv2.weight, conv2.bias,
                                                                             padding=1)), 2)
    expected = x.flatten(1) @ head.weight.T + head.bias
    assert cnn(images).shape == (3, 10)
    assert torch.allclose(cnn(images), expected, atol=1e-6)
    with pytest.raises(ValueError, match="images"):
        cnn(torch.rand(3, 6, 8))
    with pytest.raises(ValueError, match="images"):
        cnn(torch.rand(3, 8, 7))
    with pytest.raises(TypeError, match="images"):
        cnn(torch.rand(3, 8, 8, dtype=torch.float64))
    with pytest.raises(ValueError, match="images"):
        cnn(torch.full((1, 8, 8), float("nan")))
