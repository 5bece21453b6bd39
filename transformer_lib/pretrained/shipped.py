"""The trained models the chapters analyse, shipped with the package.

Training is not bit-reproducible across machines: a different CPU (its vector instructions)
or thread count changes the rounding of sums, and over hundreds of steps the weights drift
apart. So the book does not train its models on the reader's machine: it ships them. Each
model is two files in ``weights/``:

* ``NAME.safetensors``: the weights (the safetensors format holds tensors only, so loading
  a file can never run code);
* ``NAME.json``: the model class and config, both vocabularies, the recipe and the training
  figures.

``weights/SHA256SUMS`` lists the SHA-256 of every file (``sha256sum -c SHA256SUMS`` checks them
by hand); loading checks both files against it first, so a corrupt or changed file gives a
``ShippedModelError`` that says what to do, never a half-right model.
``tools/train_book_models.py`` trains the models again from the recipe and rewrites the files.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path

import torch
from safetensors import SafetensorError
from safetensors.torch import load_file, save
from torch import nn

from ..checkpoint import (
    FORMAT,
    MODEL_CLASSES,
    VERSION,
    Checkpoint,
    CheckpointError,
    check_sha256,
    checkpoint_from_parts,
    write_atomically,
)
from ..tokenization import Vocab
from ..validation import check_device

WEIGHTS_DIR = Path(__file__).resolve().parent / "weights"
SUMS_FILE = "SHA256SUMS"
BOOK_TRANSFORMER = "book_transformer"
BOOK_RNN = "book_rnn"
BOOK_LM = "book_lm"
BOOK_RNN_ATTENTION = "book_rnn_attention"


class ShippedModelError(CheckpointError):
    """A shipped model whose files are missing, corrupt or changed."""


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _read_sums(directory: Path) -> dict[str, str]:
    sums_path = directory / SUMS_FILE
    if not sums_path.is_file():
        raise ShippedModelError(f"{sums_path}: missing; it lists the SHA-256 of the shipped model files")
    sums = {}
    for line in sums_path.read_text().splitlines():
        digest, _, name = line.partition("  ")
        if len(digest) != 64 or not name:
            raise ShippedModelError(f"{sums_path}: expected lines 'SHA256  FILE' (as sha256sum writes), got {line!r}")
        sums[name] = digest
    return sums


def _verified(directory: Path, filename: str, sums: dict[str, str]) -> Path:
    path = directory / filename
    if not path.is_file():
        raise ShippedModelError(f"{path}: missing (reinstall the package, or run tools/train_book_models.py)")
    if filename not in sums:
        raise ShippedModelError(f"{directory / SUMS_FILE}: has no line for {filename}")
    check_sha256(str(path), "", sha256_of(path), sums[filename], f"{SUMS_FILE} expects", ShippedModelError,
                 "Restore it (git checkout, or reinstall the package), or retrain the shipped models with "
                 "tools/train_book_models.py, which rewrites the files and their sums together.")
    return path


def load_shipped(name: str, directory: Path = WEIGHTS_DIR, device: torch.device | str = "cpu",
                 dtype: torch.dtype | None = None) -> Checkpoint:
    """Load ``NAME.safetensors`` + ``NAME.json`` from ``directory`` after checking their SHA-256.

    The model comes back in eval mode, on ``device``, in ``dtype`` (default: torch's default dtype).
    The files hold float32. A float64 copy computes the same function with rounding errors of about
    1e-16 instead of 1e-7, which is why the chapters analyse it in float64: their printed digits
    are then the same on every CPU, whatever its vector instructions or thread count.
    """
    device = check_device("device", device)
    dtype = torch.get_default_dtype() if dtype is None else dtype
    if dtype not in (torch.float32, torch.float64):
        raise ValueError(f"dtype: expected torch.float32 or torch.float64, got {dtype}")
    directory = Path(directory)
    sums = _read_sums(directory)
    weights_path = _verified(directory, f"{name}.safetensors", sums)
    description_path = _verified(directory, f"{name}.json", sums)
    try:
        description = json.loads(description_path.read_text())
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ShippedModelError(f"{description_path}: not valid JSON ({error})") from error
    if not isinstance(description, dict):
        raise ShippedModelError(f"{description_path}: expected a JSON object, got {type(description).__name__}")
    try:
        state_dict = load_file(weights_path)
    except (SafetensorError, OSError) as error:
        raise ShippedModelError(f"{weights_path}: not a readable safetensors file ({error})") from error
    checkpoint = checkpoint_from_parts(str(weights_path), description, state_dict)
    checkpoint.model.to(device=device, dtype=dtype)
    return checkpoint


def write_shipped(
    name: str,
    model: nn.Module,
    src_vocab: Vocab | None,
    tgt_vocab: Vocab,
    extra: dict,
    directory: Path = WEIGHTS_DIR,
) -> list[Path]:
    """Write ``NAME.safetensors`` and ``NAME.json`` into ``directory`` and update ``SHA256SUMS``.
    ``src_vocab`` is None for a model without a source (the language model).

    Each file is written under a temporary name and renamed into place, the sums last."""
    class_name = type(model).__name__
    if class_name not in MODEL_CLASSES or not isinstance(model, MODEL_CLASSES[class_name][0]):
        raise TypeError(f"model: expected one of {list(MODEL_CLASSES)}, got {class_name}")
    for arg, vocab in (("src_vocab", src_vocab), ("tgt_vocab", tgt_vocab)):
        if not isinstance(vocab, Vocab) and not (arg == "src_vocab" and vocab is None):
            raise TypeError(f"{arg}: expected a tokenization.Vocab, got {type(vocab).__name__}")
    if not isinstance(extra, dict):
        raise TypeError(f"extra: expected a dict of JSON values, got {type(extra).__name__}")
    description = {
        "format": FORMAT, "version": VERSION, "model_class": class_name,
        "config": dataclasses.asdict(model.config),
        "src_vocab": None if src_vocab is None else src_vocab.to_dict(), "tgt_vocab": tgt_vocab.to_dict(),
        "extra": extra,
    }
    try:  # a value JSON cannot hold fails here, before anything is written, not when the model is loaded
        text = json.dumps(description, indent=1, sort_keys=True, allow_nan=False) + "\n"
    except TypeError as error:
        raise TypeError(f"extra: expected only JSON values (dict, list, str, number, bool, None): {error}") from error
    except ValueError as error:
        raise ValueError(f"extra: expected finite numbers: {error}") from error
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    # A copy of each tensor: safetensors refuses tensors that share memory (a tied embedding and output layer).
    weights = {key: value.detach().to("cpu", torch.float32).clone().contiguous()
               for key, value in model.state_dict().items()}
    written = [directory / f"{name}.safetensors", directory / f"{name}.json"]
    write_atomically(written[0], lambda file: file.write(save(weights)))
    write_atomically(written[1], lambda file: file.write(text.encode()))
    sums = _read_sums(directory) if (directory / SUMS_FILE).is_file() else {}
    sums.update({path.name: sha256_of(path) for path in written})
    lines = "".join(f"{digest}  {filename}\n" for filename, digest in sorted(sums.items()))
    write_atomically(directory / SUMS_FILE, lambda file: file.write(lines.encode()))
    return written


def book_rnn(device: torch.device | str = "cpu", dtype: torch.dtype | None = None) -> Checkpoint:
    """The GRU encoder-decoder without attention, trained on the same data with the same recipe (chapter 1)."""
    return load_shipped(BOOK_RNN, device=device, dtype=dtype)


def book_lm(device: torch.device | str = "cpu", dtype: torch.dtype | None = None) -> Checkpoint:
    """The book's GPT-style language model of French (chapter 8): ``.model`` (a ``DecoderOnlyTransformer``),
    ``.tgt_vocab`` (the French vocabulary; ``.src_vocab`` is None) and ``.extra`` (its recipe, training figures)."""
    return load_shipped(BOOK_LM, device=device, dtype=dtype)
def book_rnn_attention(device: torch.device | str = "cpu", dtype: torch.dtype | None = None) -> Checkpoint:
    """The GRU encoder-decoder with additive attention, trained like ``book_rnn()`` (chapter 1)."""
    return load_shipped(BOOK_RNN_ATTENTION, device=device, dtype=dtype)
