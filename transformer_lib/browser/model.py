"""The book's model for the reader's browser: weights, configuration and vocabularies in two files.

The static book runs the trained Transformer in the page (``static/book-model.js``,
plain JavaScript, no runtime to download). It reads

* ``book-model.bin``: every weight tensor of ``model.state_dict()``, little-endian float32, one
  after the other (a matrix shared by two layers is stored once and listed under both names);
* ``book-model.json``: the configuration, both vocabularies (``itos``), the tokenisation rules
  and, for each tensor name, its shape and offset (in floats) into the ``.bin`` file.

The sinusoidal table is not stored: the page computes it from the formula, as the library does
(float64, then rounded to float32). :func:`write_browser_model` is called by the book's Sphinx
extension at build time, so the site always carries the weights the notebooks used.
"""

from __future__ import annotations

import dataclasses
import hashlib
import inspect
import json
from pathlib import Path

import numpy as np
from torch import nn

from ..decoding import MAX_LEN_EXTRA, MAX_LEN_PER_SOURCE_TOKEN, max_decode_length, translate
from ..models import Transformer
from ..tokenization import SPECIALS, Vocab

FORMAT = "transformer-computed/browser-model"
VERSION = 1
WEIGHTS_FILE = "book-model.bin"
MANIFEST_FILE = "book-model.json"


def _check_model(model: object) -> Transformer:
    if not isinstance(model, Transformer):
        raise TypeError(f"model: expected a transformer_lib.models.Transformer, got {type(model).__name__}")
    config = model.config
    unsupported = {
        "positional": (config.positional, "sinusoidal"),
        "activation": (config.activation, "relu"),
    }
    for name, (got, supported) in unsupported.items():
        if got != supported:
            raise ValueError(f"model.config.{name}: the page's forward pass implements {supported!r}, got {got!r}")
    return model


def _weights(model: nn.Module) -> tuple[bytes, dict[str, dict]]:
    """The state dict as one little-endian float32 buffer and a table of (offset, shape) by name."""
    chunks: list[bytes] = []
    tensors: dict[str, dict] = {}
    offsets: dict[int, int] = {}  # storage address -> offset: tied weights are written once
    offset = 0
    for name, tensor in model.state_dict().items():
        key = tensor.data_ptr()
        if key not in offsets:
            array = tensor.detach().cpu().float().contiguous().numpy().astype("<f4", copy=False)
            offsets[key] = offset
            chunks.append(array.tobytes())
            offset += array.size
        tensors[name] = {"offset": offsets[key], "shape": list(tensor.shape)}
    return b"".join(chunks), tensors


def browser_model_files(model: Transformer, src_vocab: Vocab, tgt_vocab: Vocab) -> dict[str, bytes]:
    """``{file name: content}`` for the page: the float32 weights and the JSON manifest."""
    model = _check_model(model)
    for name, vocab in (("src_vocab", src_vocab), ("tgt_vocab", tgt_vocab)):
        if not isinstance(vocab, Vocab):
            raise TypeError(f"{name}: expected a Vocab, got {type(vocab).__name__}")
    weights, tensors = _weights(model)
    manifest = {
        "format": FORMAT,
        "version": VERSION,
        "config": dataclasses.asdict(model.config),
        "src_vocab": list(src_vocab.itos),
        "tgt_vocab": list(tgt_vocab.itos),
        "special_ids": {"pad": Vocab.pad_id, "sos": Vocab.sos_id, "eos": Vocab.eos_id, "unk": Vocab.unk_id},
        # decoding.default_max_len's rule (a translation takes at most per_source_token * S + extra
        # tokens, at most max_len) and translate's length-penalty alpha, for the page's decoding
        "decoding": {"per_source_token": MAX_LEN_PER_SOURCE_TOKEN, "extra": MAX_LEN_EXTRA,
                     "max_len": max_decode_length(model),
                     "alpha": inspect.signature(translate).parameters["alpha"].default},
        "tokenization": {
            # Vocab.encode: words are the pieces of str.split() (the page holds Python's whitespace set);
            # a word outside the vocabulary is <unk>.
            # A special token typed as a word is not the special: it reads as <unk>, like any unknown word.
            "specials": list(SPECIALS),
        },
        "weights": {
            "file": WEIGHTS_FILE,
            "dtype": "float32-le",
            "floats": len(weights) // 4,
            "sha256": hashlib.sha256(weights).hexdigest(),
            "tensors": tensors,
        },
    }
    text = json.dumps(manifest, ensure_ascii=True, sort_keys=True, separators=(",", ":"))
    return {WEIGHTS_FILE: weights, MANIFEST_FILE: text.encode("ascii")}


def write_browser_model(folder: Path | str, model: Transformer, src_vocab: Vocab, tgt_vocab: Vocab) -> list[Path]:
    """Write the two files into ``folder`` (created if needed); return their paths. Same model, same bytes."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, content in browser_model_files(model, src_vocab, tgt_vocab).items():
        path = folder / name
        if not path.is_file() or path.read_bytes() != content:
            path.write_bytes(content)
        paths.append(path)
    return paths


def write_book_model(folder: Path | str) -> list[Path]:
    """The book's shipped model (``pretrained.book_model()``), written for the page into ``folder``."""
    from ..pretrained import book_model

    checkpoint = book_model()
    return write_browser_model(folder, checkpoint.model, checkpoint.src_vocab, checkpoint.tgt_vocab)


def read_weights(folder: Path | str) -> dict[str, np.ndarray]:
    """The tensors back from the two files (what the page reads), by state-dict name."""
    folder = Path(folder)
    manifest = json.loads((folder / MANIFEST_FILE).read_text())
    flat = np.frombuffer((folder / manifest["weights"]["file"]).read_bytes(), dtype="<f4")
    out = {}
    for name, entry in manifest["weights"]["tensors"].items():
        size = int(np.prod(entry["shape"])) if entry["shape"] else 1
        out[name] = flat[entry["offset"]: entry["offset"] + size].reshape(entry["shape"])
    return out
