"""Chapter 9's digit classifiers, and their learning curve over training-set size, computed once and stored.

Chapter 9 trains three models on the digits in front of the reader (``digit_classifiers``: a Vision
Transformer, a small convolutional network and one linear layer, the same steps and batches for each,
five seeds side by side). How each one's accuracy grows with the number of training images is the same
training at four sizes, twenty models a kind: half a minute of one core, as much as the rest of the
chapter. ``compute_digit_curve`` computes it; ``tools/store.py digit_curve`` stores it in
``digit_curve.json`` (package data: chapter 9 downloaded alone finds it); the chapter draws and asserts on
the stored numbers; ``tests/test_stored.py`` checks that the recipe stored is today's and trains the
smallest size again (``transformer_lib.stored``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path

from torch import nn

from ..class_token import accuracy
from ..config import TransformerConfig
from ..seed_batch import fit_classifier_seeds
from ..validation import check_int, check_items
from ..vision import DIGIT_SIZE, N_DIGITS, DigitCNN, VisionTransformer, load_digit_images

DIGIT_CURVE_PATH = Path(__file__).with_name("digit_curve.json")
# one layer, two heads of 8: far above chance on every seed of ten in DIGIT_STEPS (chapter 9's asserts)
DIGIT_VIT = TransformerConfig(d_model=16, n_heads=2, n_encoder_layers=1, d_ff=32, dropout=0.0, norm_first=True,
                              max_len=16)
DIGIT_CNN_CHANNELS = 8  # the first convolution's filters (the second has twice as many)
DIGIT_PATCH = 2  # 2 x 2 pixels a patch: 16 patches, 16 tokens and the class token
DIGIT_STEPS = 300  # Adam steps of 64 images, for every model and every training-set size
DIGIT_CURVE_SIZES = (100, 200, 400, 1300)  # training images: from about ten of each digit to the whole training split
DIGIT_CURVE_SEEDS = (0, 1, 2, 3, 4)


def digit_classifiers() -> dict[str, tuple[Callable[[], nn.Module], float]]:
    """The three digit classifiers chapter 9 compares, by name: a function that builds each, and its Adam
    learning rate."""
    return {
        "Vision Transformer": (lambda: VisionTransformer(DIGIT_VIT, n_classes=N_DIGITS, patch=DIGIT_PATCH), 8e-3),
        "small CNN": (lambda: DigitCNN(channels=DIGIT_CNN_CHANNELS), 5e-3),
        "linear layer on the pixels": (lambda: nn.Sequential(nn.Flatten(), nn.Linear(DIGIT_SIZE ** 2, N_DIGITS)),
                                       1e-2),
    }


def compute_digit_curve(sizes: Sequence[int] = DIGIT_CURVE_SIZES,
                        seeds: Sequence[int] = DIGIT_CURVE_SEEDS) -> dict[str, dict[str, list[float]]]:
    """Test accuracy of each of ``digit_classifiers``, trained ``DIGIT_STEPS`` steps on the first ``n``
    training images (they are shuffled) for each ``n`` in ``sizes``, from each seed:
    {model: {str(n): [accuracy per seed]}}, on the 497 test images."""
    digits = load_digit_images()
    sizes = [check_int(f"sizes[{i}]", n, minimum=1, maximum=len(digits.train_labels))
             for i, n in enumerate(check_items("sizes", sizes, int, "training-set size"))]
    curve: dict[str, dict[str, list[float]]] = {}
    for name, (build, lr) in digit_classifiers().items():
        curve[name] = {}
        for n in sizes:
            models = fit_classifier_seeds(build, seeds, digits.train_images[:n], digits.train_labels[:n],
                                          steps=DIGIT_STEPS, lr=lr)
            curve[name][str(n)] = [accuracy(m, digits.test_images, digits.test_labels) for m in models]
    return curve


def digit_curve_recipe() -> dict:
    """What the stored curve was computed with, as it is stored beside it."""
    return {"vision_transformer": DIGIT_VIT.__dict__, "patch": DIGIT_PATCH, "cnn_channels": DIGIT_CNN_CHANNELS,
            "steps": DIGIT_STEPS, "sizes": list(DIGIT_CURVE_SIZES), "seeds": list(DIGIT_CURVE_SEEDS),
            "learning_rates": {name: lr for name, (_, lr) in digit_classifiers().items()}}


def stored_digit_curve() -> dict[str, dict[int, list[float]]]:
    """What ``tools/store.py digit_curve`` stored: ``compute_digit_curve()``'s accuracies,
    {model: {n: [accuracy per seed]}}."""
    curve = json.loads(DIGIT_CURVE_PATH.read_text())["accuracy"]
    return {name: {int(n): values for n, values in by_size.items()} for name, by_size in curve.items()}
