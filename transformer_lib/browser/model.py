"""The book's model for the reader's browser: weights, configuration and vocabularies in two files.

The static book runs the trained Transformer in the page (``static/book-model.js``,
plain JavaScript, no runtime to download). It reads

* ``book-model.bin``: every weight tensor of ``model.state_dict()``, little-endian float32, one
  after the other (a matrix shared by two layers is stored once and listed under both names);
* ``book-model.json``: the configuration, both vocabularies (``itos``), the tokenisation rules
  and, for each tensor name, its shape and offset (in floats) into the ``.bin`` file.

Any model is written the same way under its own stem: chapter 8's language model
(``models.DecoderOnlyTransformer``, one vocabulary, ``src_vocab`` None) as ``book-lm.bin`` and
``book-lm.json`` (:func:`write_book_lm`), which ``static/book-lm.js`` reads. The translator also gets,
for the replay, one ``book-model-step{N}.bin`` per training snapshot (``pretrained.snapshots``),
fetched when the reader first asks for that step: float32 scales and vectors, then the int8 matrices,
as the package stores them; ``book-model.json`` lists their tensors under ``snapshots``, with the
training curve. The page dequantizes them to the floats ``book_model(step=N)`` holds.

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
import torch
from torch import nn

from ..decoding import MAX_LEN_EXTRA, MAX_LEN_PER_SOURCE_TOKEN, max_decode_length, translate
from ..language_model import never_drawn
from ..models import DecoderOnlyTransformer, Transformer
from ..tokenization import SPECIALS, Vocab
from ..validation import check_int
from ..validation_models import check_model_vocab

FORMAT = "transformer-computed/browser-model"
VERSION = 1
STEM = "book-model"  # the translator's files
LM_STEM = "book-lm"  # chapter 8's language model's files
WEIGHTS_FILE = f"{STEM}.bin"
MANIFEST_FILE = f"{STEM}.json"


def file_names(stem: str = STEM) -> tuple[str, str]:
    """(weights file, manifest file) of the model written under ``stem``."""
    if not isinstance(stem, str):
        raise TypeError(f"stem: expected a str, got {type(stem).__name__}")
    if not stem or not all(c.isascii() and (c.isalnum() or c in "-_") for c in stem):
        raise ValueError(f"stem: expected a file name of ASCII letters, digits, '-' and '_', got {stem!r:.60}")
    return f"{stem}.bin", f"{stem}.json"


def _check_model(model: object) -> Transformer | DecoderOnlyTransformer:
    if not isinstance(model, Transformer | DecoderOnlyTransformer):
        raise TypeError(f"model: expected a transformer_lib.models.Transformer or DecoderOnlyTransformer, "
                        f"got {type(model).__name__}")
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


def browser_model_files(model: Transformer | DecoderOnlyTransformer, src_vocab: Vocab | None, tgt_vocab: Vocab,
                        stem: str = STEM) -> dict[str, bytes]:
    """``{file name: content}`` for the page: the float32 weights and the JSON manifest, named by ``stem``.
    A decoder-only model has one vocabulary, ``tgt_vocab``; its ``src_vocab`` is None."""
    model = _check_model(model)
    weights_file, manifest_file = file_names(stem)
    decoder_only = isinstance(model, DecoderOnlyTransformer)
    if decoder_only and src_vocab is not None:
        raise ValueError("src_vocab: a decoder-only model reads no source; expected None, got a Vocab")
    if not decoder_only:
        check_model_vocab("src_vocab", src_vocab, model, "src")
    check_model_vocab("tgt_vocab", tgt_vocab, model, "tgt")
    weights, tensors = _weights(model)
    manifest = {
        "format": FORMAT,
        "version": VERSION,
        "model_class": type(model).__name__,
        "config": dataclasses.asdict(model.config),
        "src_vocab": None if decoder_only else list(src_vocab.itos),
        "tgt_vocab": list(tgt_vocab.itos),
        "special_ids": {"pad": Vocab.pad_id, "sos": Vocab.sos_id, "eos": Vocab.eos_id, "unk": Vocab.unk_id},
        # a language model's tokens that are never drawn (language_model.never_drawn), for book-lm.js
        **({"never_drawn": list(never_drawn(tgt_vocab))} if decoder_only else {}),
        # decoding.default_max_len's rule (a translation takes at most per_source_token * S + extra
        # tokens, at most max_len) and translate's length-penalty alpha, for the page's decoding
        **({} if decoder_only else {"decoding": {
            "per_source_token": MAX_LEN_PER_SOURCE_TOKEN, "extra": MAX_LEN_EXTRA, "max_len": max_decode_length(model),
            "alpha": inspect.signature(translate).parameters["alpha"].default}}),
        "tokenization": {
            # Vocab.encode: words are the pieces of str.split() (the page holds Python's whitespace set);
            # a word outside the vocabulary is <unk>.
            # A special token typed as a word is not the special: it reads as <unk>, like any unknown word.
            "specials": list(SPECIALS),
        },
        "weights": {
            "file": weights_file,
            "dtype": "float32-le",
            "floats": len(weights) // 4,
            "sha256": hashlib.sha256(weights).hexdigest(),
            "tensors": tensors,
        },
    }
    text = json.dumps(manifest, ensure_ascii=True, sort_keys=True, separators=(",", ":"))
    return {weights_file: weights, manifest_file: text.encode("ascii")}


def write_browser_model(folder: Path | str, model: Transformer | DecoderOnlyTransformer, src_vocab: Vocab | None,
                        tgt_vocab: Vocab, stem: str = STEM) -> list[Path]:
    """Write the two files into ``folder`` (created if needed); return their paths. Same model, same bytes."""
    return _write_files(folder, browser_model_files(model, src_vocab, tgt_vocab, stem))


def snapshot_file(step: int) -> str:
    """The page's file of the snapshot at ``step``."""
    return f"book-model-step{check_int('step', step, minimum=0):04d}.bin"


def snapshot_files(stored: dict[str, dict[str, torch.Tensor]], record: dict) -> tuple[dict, dict[str, bytes]]:
    """The manifest's ``snapshots`` entry and ``{file name: content}`` for the replay's snapshots:
    ``stored`` maps each step (as a str) to its tensors as ``pretrained.snapshots.quantize`` wrote them.
    Per file: the float32 section (each matrix's row scales, each vector's values) then the int8 section
    (each matrix's values); per tensor the ``offset`` of its floats and, for a matrix, ``q``, the offset
    of its bytes in the int8 section."""
    from ..pretrained.snapshots import SCALE_SUFFIX

    files, entries = {}, {}
    for step, tensors in stored.items():
        floats, int8s, table = [], [], {}
        n_floats = n_bytes = 0
        for name, tensor in tensors.items():
            if name.endswith(SCALE_SUFFIX):
                continue
            entry = {"shape": list(tensor.shape), "offset": n_floats}
            values = tensors[name + SCALE_SUFFIX] if tensor.dtype == torch.int8 else tensor
            floats.append(values.detach().cpu().contiguous().numpy().astype("<f4", copy=False).tobytes())
            n_floats += values.numel()
            if tensor.dtype == torch.int8:
                entry["q"] = n_bytes
                int8s.append(tensor.contiguous().numpy().tobytes())
                n_bytes += tensor.numel()
            table[name] = entry
        content = b"".join(floats) + b"".join(int8s)
        name = snapshot_file(int(step))
        files[name] = content
        entries[step] = {"file": name, "floats": n_floats, "int8": n_bytes,
                         "sha256": hashlib.sha256(content).hexdigest(), "tensors": table}
    manifest = {"steps": record["steps"], "shipped_step": record["shipped_step"], "files": entries,
                "curve": record["curve"]}
    return manifest, files


def write_book_model(folder: Path | str) -> list[Path]:
    """The book's shipped model (``pretrained.book_model()``) and the replay's snapshots, written for
    the page into ``folder``."""
    from ..pretrained import book_model
    from ..pretrained.snapshots import snapshot_record, snapshot_weights

    checkpoint = book_model()
    files = browser_model_files(checkpoint.model, checkpoint.src_vocab, checkpoint.tgt_vocab)
    record = snapshot_record()
    stored = {str(step): snapshot_weights(step) for step in record["steps"] if step != record["shipped_step"]}
    snapshots, snapshot_contents = snapshot_files(stored, record)
    manifest = json.loads(files[MANIFEST_FILE])
    manifest["snapshots"] = snapshots
    files[MANIFEST_FILE] = json.dumps(manifest, ensure_ascii=True, sort_keys=True, separators=(",", ":")).encode()
    files.update(snapshot_contents)
    return _write_files(folder, files)


def _write_files(folder: Path | str, files: dict[str, bytes]) -> list[Path]:
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, content in files.items():
        path = folder / name
        if not path.is_file() or path.read_bytes() != content:
            path.write_bytes(content)
        paths.append(path)
    return paths


def read_snapshot_weights(folder: Path | str, step: int) -> dict[str, np.ndarray]:
    """A snapshot's tensors back from the page's files, dequantized as the page does (float32 of
    ``int8 * scale``), by state-dict name."""
    folder = Path(folder)
    entry = json.loads((folder / MANIFEST_FILE).read_text())["snapshots"]["files"][str(step)]
    content = (folder / entry["file"]).read_bytes()
    floats = np.frombuffer(content[: 4 * entry["floats"]], dtype="<f4")
    int8s = np.frombuffer(content[4 * entry["floats"]:], dtype=np.int8)
    out = {}
    for name, tensor in entry["tensors"].items():
        shape = tensor["shape"]
        size = int(np.prod(shape)) if shape else 1
        if "q" in tensor:
            rows = int8s[tensor["q"]: tensor["q"] + size].reshape(shape[0], -1).astype(np.float32)
            scales = floats[tensor["offset"]: tensor["offset"] + shape[0]]
            out[name] = (rows * scales[:, None]).reshape(shape)
        else:
            out[name] = floats[tensor["offset"]: tensor["offset"] + size].reshape(shape)
    return out


def write_book_lm(folder: Path | str) -> list[Path]:
    """Chapter 8's shipped language model (``pretrained.book_lm()``), written for the page into ``folder``
    as ``book-lm.bin`` and ``book-lm.json`` (``static/book-lm.js`` fetches them on first use)."""
    from ..pretrained import book_lm

    checkpoint = book_lm()
    return write_browser_model(folder, checkpoint.model, None, checkpoint.tgt_vocab, LM_STEM)


def read_weights(folder: Path | str, stem: str = STEM) -> dict[str, np.ndarray]:
    """The tensors back from the two files (what the page reads), by state-dict name."""
    folder = Path(folder)
    manifest = json.loads((folder / file_names(stem)[1]).read_text())
    flat = np.frombuffer((folder / manifest["weights"]["file"]).read_bytes(), dtype="<f4")
    out = {}
    for name, entry in manifest["weights"]["tensors"].items():
        size = int(np.prod(entry["shape"])) if entry["shape"] else 1
        out[name] = flat[entry["offset"]: entry["offset"] + size].reshape(entry["shape"])
    return out
