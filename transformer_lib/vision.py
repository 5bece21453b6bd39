"""Beyond text: an image as a sequence of patches, and a set with no order at all.

The Vision Transformer ([Dosovitskiy et al., 2021]) cuts an image into square patches, flattens each into a
vector, projects it to ``d_model``: the patches are its tokens. A class token and learned positions go in,
and the encoder of the translation model does the rest. Here the images are scikit-learn's handwritten
digits (1,797 greyscale 8x8 images that ship with the package: nothing is downloaded).

* ``load_digit_images``: the digits as a (N, 8, 8) float tensor in [0, 1] and their labels, split in two.
* ``image_patches``: (B, H, W) -> (B, n_patches, patch * patch), patches in reading order.
* ``VisionTransformer``: patch projection + ``class_token.ClassTokenClassifier``.
* ``DigitCNN``: a small convolutional network, the baseline the Vision Transformer paper measures itself
  against: it assumes what images are (nearby pixels go together, a stroke means the same anywhere).
* ``digit_sets`` / ``SetClassifier``: a set of digit images whose label is their largest digit;
  the classifier has no positions, so reordering the set cannot change its answer.
"""

from __future__ import annotations

import gzip
import importlib.util
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from torch import Tensor, nn

from .class_token import ClassTokenClassifier
from .config import TransformerConfig
from .validation import check_instance, check_int, check_positive_int
from .validation_tensors import (
    check_features,
    check_finite,
    check_in_range,
    check_ndim,
    check_nonempty,
    check_tensor,
    module_dtype,
)

DIGIT_SIZE = 8  # load_digits' images are 8 x 8, grey levels 0..16
N_DIGITS = 10  # their labels: the digits 0..9


@dataclass
class DigitSplit:
    train_images: Tensor  # (N_train, 8, 8) in [0, 1]
    train_labels: Tensor  # (N_train,) digits 0..9
    test_images: Tensor
    test_labels: Tensor


def sklearn_digits() -> tuple[np.ndarray, np.ndarray]:
    """The (1797, 8, 8) images and (1797,) labels of scikit-learn's ``load_digits()``, read from the file
    scikit-learn ships them in, without importing ``sklearn.datasets``: that loads SciPy and pandas, a
    second and 100 MB of the chapter's memory (tests/test_vision.py checks it against ``load_digits``)."""
    spec = importlib.util.find_spec("sklearn")  # a dependency of this chapter only
    if spec is None or spec.origin is None:
        raise ModuleNotFoundError("the digits are scikit-learn's: pip install scikit-learn")
    with gzip.open(Path(spec.origin).parent / "datasets" / "data" / "digits.csv.gz", "rt") as rows:
        data = np.loadtxt(rows, delimiter=",")  # 64 pixels (0 to 16), then the label
    return data[:, :-1].reshape(-1, 8, 8), data[:, -1].astype(int)


def load_digit_images(n_test: int = 497, seed: int = 0) -> DigitSplit:
    """scikit-learn's 1,797 handwritten digits, shuffled with ``seed``, the last ``n_test`` held out."""
    check_positive_int("n_test", n_test)
    digit_images, digit_labels = sklearn_digits()
    if n_test >= len(digit_labels):
        raise ValueError(f"n_test: expected fewer than {len(digit_labels)} test images, got {n_test}")
    order = torch.randperm(len(digit_labels), generator=torch.Generator().manual_seed(check_int("seed", seed)))
    images = torch.tensor(digit_images, dtype=torch.float32)[order] / 16.0
    labels = torch.tensor(digit_labels, dtype=torch.long)[order]
    cut = len(labels) - n_test
    return DigitSplit(images[:cut], labels[:cut], images[cut:], labels[cut:])


def _check_images(images: object, layout: str) -> None:
    """(B, H, W) images: at least one pixel in each dimension, and no NaN or infinity among them."""
    check_ndim("images", check_tensor("images", images), 3, layout)
    for dim in range(3):
        check_nonempty("images", images, dim)
    if images.is_floating_point():
        check_finite("images", images)


def image_patches(images: Tensor, patch: int) -> Tensor:
    """(B, H, W) -> (B, (H/patch) * (W/patch), patch * patch): non-overlapping squares, row by row."""
    _check_images(images, "(batch, height, width)")
    check_positive_int("patch", patch)
    b, h, w = images.shape
    if h % patch or w % patch:
        raise ValueError(f"patch: expected a divisor of the image size {h}x{w}, got {patch}")
    x = images.reshape(b, h // patch, patch, w // patch, patch)  # (B, rows, p, cols, p)
    return x.permute(0, 1, 3, 2, 4).reshape(b, (h // patch) * (w // patch), patch * patch)


class VisionTransformer(nn.Module):
    """(B, H, W) images -> (B, n_classes) logits: patches as tokens, a class token, the library's encoder."""

    def __init__(self, config: TransformerConfig, n_classes: int, patch: int = 2) -> None:
        super().__init__()
        check_instance("config", config, TransformerConfig, "a TransformerConfig")
        self.patch = check_positive_int("patch", patch)
        self.project = nn.Linear(patch * patch, config.d_model)  # one patch -> one token vector
        self.classifier = ClassTokenClassifier(config, n_classes)

    def tokens(self, images: Tensor) -> Tensor:
        check_ndim("images", images, 3, "(batch, height, width)")
        check_features("images", images, images.shape[-1], "(batch, height, width)",
                       module_dtype(self.project.weight), width_name="width")
        check_nonempty("images", images, dim=2)
        check_finite("images", images)
        return self.project(image_patches(images, self.patch))  # (B, n_patches, d_model)

    def forward(self, images: Tensor) -> Tensor:
        return self.classifier(self.tokens(images))


class DigitCNN(nn.Module):
    """(B, 8, 8) images -> (B, 10) logits: two 3x3 convolutions, each followed by 2x2 max-pooling, then a
    linear layer. A convolution applies the same small filter at every place of the image: locality and
    translation equivariance, built in, where the Vision Transformer must learn them."""

    def __init__(self, channels: int = 16, n_classes: int = N_DIGITS) -> None:
        super().__init__()
        c = check_positive_int("channels", channels)
        self.layers = nn.Sequential(
            nn.Conv2d(1, c, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),  # (B, c, 4, 4)
            nn.Conv2d(c, 2 * c, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),  # (B, 2c, 2, 2)
            nn.Flatten(), nn.Linear(2 * c * (DIGIT_SIZE // 4) ** 2, check_positive_int("n_classes", n_classes)),
        )

    def forward(self, images: Tensor) -> Tensor:
        check_features("images", check_tensor("images", images), DIGIT_SIZE, "(batch, 8, 8)",
                       module_dtype(self.layers[0].weight), width_name="width")
        if images.shape[1] != DIGIT_SIZE:
            raise ValueError(f"images: expected 8 x 8 images, got {tuple(images.shape[1:])}")
        check_finite("images", images)
        return self.layers(images[:, None])  # a channel dimension: (B, 1, 8, 8)


def digit_sets(images: Tensor, labels: Tensor, n_sets: int, set_size: int, seed: int = 0) -> tuple[Tensor, Tensor]:
    """``n_sets`` sets of ``set_size`` digit images drawn at random, (n_sets, set_size, 64), and the
    largest digit of each set, (n_sets,)."""
    _check_images(images, "(n_images, height, width)")
    check_positive_int("n_sets", n_sets)
    check_positive_int("set_size", set_size)
    check_ndim("labels", labels, 1, "(n_images,)")
    if len(labels) != len(images) or not len(labels):
        raise ValueError(f"labels: expected one per image ({len(images)}), got {len(labels)}")
    check_in_range("labels", labels, N_DIGITS, "digit labels")
    pick = torch.randint(len(labels), (n_sets, set_size),
                         generator=torch.Generator().manual_seed(check_int("seed", seed)))
    return images.flatten(1)[pick], labels[pick].amax(dim=1)


class SetClassifier(nn.Module):
    """(B, k, 64) sets of images -> (B, n_classes): each image one token, no positions (a set)."""

    def __init__(self, config: TransformerConfig, n_classes: int, element_size: int = DIGIT_SIZE ** 2) -> None:
        super().__init__()
        check_instance("config", config, TransformerConfig, "a TransformerConfig")
        self.project = nn.Linear(check_positive_int("element_size", element_size), config.d_model)
        self.classifier = ClassTokenClassifier(config, n_classes, positions=False)

    def forward(self, sets: Tensor) -> Tensor:
        check_features("sets", sets, self.project.in_features, "(batch, set_size, element_size)",
                       module_dtype(self.project.weight), width_name="element_size")
        check_finite("sets", sets)
        return self.classifier(self.project(sets))
