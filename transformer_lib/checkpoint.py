"""Save a trained model with everything needed to use it again, and load it safely.

A checkpoint is one file written by ``torch.save`` holding only tensors and plain
Python values (dicts, lists, strings, numbers):

    {"format": "transformer_lib.checkpoint", "version": 1,
     "model_class": "Transformer", "DecoderOnlyTransformer" or "Seq2SeqGRU",
     "config": the model's config as a dict,
     "state_dict": the weights,
     "sha256": the SHA-256 of the weights (``state_dict_sha256``),
     "src_vocab", "tgt_vocab": the vocabularies as dicts (or None),
     "extra": any plain values the caller adds (training figures, a note...)}

``extra`` may hold only what loading reads back (None, bool, int, float, str, tensors, and
lists, tuples and dicts of them): anything else, a NumPy scalar for one, is refused on save
with a ``TypeError`` naming its key path (``extra['history'][3]``).

Integrity: torch's zip reader checks no CRC, so a flipped byte in a tensor would load as a
changed weight. The file therefore records the SHA-256 of its weights (names, dtypes, shapes
and bytes), and loading recomputes it: a mismatch is a ``CheckpointError`` naming the file. The
shipped models (``pretrained``) are checked the same way (``check_sha256``), against their
``SHA256SUMS``. Each tensor must also have the dtype of the model's own weights: an ``int64``
or ``float16`` tensor is refused, never cast (a float64 model is saved and loaded as float64).

Loading uses ``torch.load(weights_only=True)``, which refuses to run code hidden in
a file (a full pickle can). It builds a fresh model from the config and loads the
weights with ``strict=True``: any problem (unreadable or truncated file, other
format or version, missing or unexpected weights, wrong shapes) raises a
``CheckpointError`` naming the file, and no half-loaded model ever comes back.

Saving is atomic: the file is written next to its destination under a temporary
name, then renamed over it, so a crash mid-save leaves the old file intact.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import signal
import tempfile
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

import torch
from torch import nn

from .config import TransformerConfig
from .models import DecoderOnlyTransformer, Transformer
from .rnn import Seq2SeqGRU, Seq2SeqGRUAttention, Seq2SeqGRUConfig
from .tokenization import Vocab
from .validation import check_device, check_instance, check_path, check_plain_data
from .vocabularies import Vocabularies

FORMAT = "transformer_lib.checkpoint"
RUN_CHECKPOINT = "checkpoint.pt"  # the checkpoint in a run folder of ``python -m transformer_lib.train``
RUN_VOCABULARIES = "vocab.json"  # its vocabularies (and tokenizer), beside it, for ``--vocab``
TEMPORARY_SUFFIX = ".tmp"  # of write_atomically's files while they are written
VERSION = 1

# model class name -> (model class, config class)
MODEL_CLASSES: dict[str, tuple[type[nn.Module], type]] = {
    "Transformer": (Transformer, TransformerConfig),
    "DecoderOnlyTransformer": (DecoderOnlyTransformer, TransformerConfig),
    "Seq2SeqGRU": (Seq2SeqGRU, Seq2SeqGRUConfig),
    "Seq2SeqGRUAttention": (Seq2SeqGRUAttention, Seq2SeqGRUConfig),
}


class CheckpointError(ValueError):
    """A checkpoint file that cannot be loaded; the message names the file and the problem."""


def state_dict_sha256(state_dict: dict[str, torch.Tensor]) -> str:
    """The SHA-256 of a state dict: each tensor's name, dtype, shape and bytes, in key order."""
    check_instance("state_dict", state_dict, dict, "a dict of tensors (a state dict)")
    for key, value in state_dict.items():
        if type(key) is not str or not isinstance(value, torch.Tensor):
            raise TypeError(f"state_dict[{key!r}]: expected a tensor under a str key, got {type(value).__name__}")
    digest = hashlib.sha256()
    for key in sorted(state_dict):
        tensor = state_dict[key].detach().cpu().contiguous()
        digest.update(f"{key}\0{tensor.dtype}\0{tuple(tensor.shape)}\0".encode())
        digest.update(tensor.reshape(-1).view(torch.uint8).numpy().tobytes())
    return digest.hexdigest()


def check_sha256(source: str, what: str, actual: str, recorded: str, where: str,
                 error: type[CheckpointError] = CheckpointError, advice: str = "") -> None:
    """The one integrity check of both file formats: ``actual`` (the SHA-256 of ``what``) must be the
    digest recorded in ``where``; otherwise ``error`` names ``source``, both digests and ``advice``."""
    if actual != recorded:
        raise error(f"{source}: SHA-256 {what}is {actual}, but {where} {recorded}: the file is corrupt or was "
                    f"changed.{' ' + advice if advice else ''}")


@dataclass
class Checkpoint:
    model: nn.Module  # in eval mode, on the device given to ``load_checkpoint``
    src_vocab: Vocab | None
    tgt_vocab: Vocab | None
    extra: dict = field(default_factory=dict)

    @property
    def config(self) -> object:
        return self.model.config


def save_checkpoint(
    path: str | os.PathLike,
    model: nn.Module,
    src_vocab: Vocab | None = None,
    tgt_vocab: Vocab | None = None,
    extra: dict | None = None,
) -> Path:
    """Write ``model`` (a ``Transformer``, ``DecoderOnlyTransformer`` or ``Seq2SeqGRU``), its config and
    vocabularies to ``path``."""
    path = check_path("path", path)
    if path.is_dir():  # refused before writing: os.replace would fail only after the whole save
        raise ValueError(f"path: expected a file path, got the directory {path}")
    name = type(model).__name__
    if name not in MODEL_CLASSES or not isinstance(model, MODEL_CLASSES[name][0]):
        raise TypeError(f"model: expected one of {list(MODEL_CLASSES)}, got {type(model).__name__}")
    if hasattr(model, "embed") and not model.embed.is_papers:  # the config alone would rebuild it scaled
        raise ValueError("model: its embedding is not the paper's (a GPT-2 or BERT conversion); save it with "
                         "convert.to_gpt2 instead")
    for arg, vocab in (("src_vocab", src_vocab), ("tgt_vocab", tgt_vocab)):
        if vocab is not None:
            check_instance(arg, vocab, Vocab, "a tokenization.Vocab or None")
    if extra is not None:
        check_instance("extra", extra, dict, "a dict of plain values or None")
        check_plain_data("extra", extra)  # on save: a value torch.load(weights_only=True) refuses would be lost
    state_dict = {key: value.detach().cpu() for key, value in model.state_dict().items()}
    payload = {
        "format": FORMAT,
        "version": VERSION,
        "model_class": name,
        "config": dataclasses.asdict(model.config),
        "state_dict": state_dict,
        "sha256": state_dict_sha256(state_dict),
        "src_vocab": None if src_vocab is None else src_vocab.to_dict(),
        "tgt_vocab": None if tgt_vocab is None else tgt_vocab.to_dict(),
        "extra": dict(extra or {}),
    }
    return write_atomically(path, lambda file: torch.save(payload, file))


def write_atomically(path: Path, write: Callable[[BinaryIO], object]) -> Path:
    """Call ``write(file)`` on a temporary file beside ``path``, then rename it over ``path``: a crash
    mid-write leaves the old file intact. Also used for the shipped models' files (``pretrained``).

    The temporary file is removed on every way out that runs code: an exception, Ctrl-C, and SIGTERM
    (how ``torchrun`` stops its processes), after which the process still dies of the signal. Only a
    SIGKILL leaves it: ``remove_temporary_files`` clears those (the training command does, on start)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=TEMPORARY_SUFFIX, dir=path.parent)
    try:
        with _removed_on_sigterm(temporary), os.fdopen(handle, "wb") as file:
            write(file)
            file.flush()
            os.fsync(file.fileno())
        os.chmod(temporary, 0o644)  # mkstemp makes the file private; a saved model is for reading
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise
    return path


@contextmanager
def _removed_on_sigterm(temporary: str) -> Iterator[None]:
    """While writing, a SIGTERM removes ``temporary``, then ends the process as the signal would have.
    (Signal handlers belong to the main thread: elsewhere this does nothing.)"""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.getsignal(signal.SIGTERM)

    def remove_then_die(signum: int, frame: object) -> None:
        if os.path.exists(temporary):
            os.unlink(temporary)
        signal.signal(signal.SIGTERM, previous)
        if callable(previous):
            previous(signum, frame)
        else:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGTERM)

    signal.signal(signal.SIGTERM, remove_then_die)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def remove_temporary_files(folder: Path) -> list[Path]:
    """Remove the temporary files that ``write_atomically`` left in ``folder`` when its process was
    killed outright (SIGKILL); the files removed, sorted. Only call it where no other process is writing."""
    folder = check_path("folder", folder)
    leftovers = sorted(folder.glob(f".*{TEMPORARY_SUFFIX}"))
    for leftover in leftovers:
        leftover.unlink()
    return leftovers


def load_checkpoint(path: str | os.PathLike, device: torch.device | str = "cpu") -> Checkpoint:
    """Read a file written by ``save_checkpoint``, or the run folder of ``python -m transformer_lib.train``
    (its ``checkpoint.pt``); the model comes back in eval mode on ``device``, carrying its vocabularies.

    Raises ``FileNotFoundError`` if there is no such file, ``CheckpointError`` if it cannot
    be loaded exactly.
    """
    path = check_path("path", path)
    device = check_device("device", device)
    if path.is_dir():
        folder, path = path, path / RUN_CHECKPOINT
        if not path.is_file():
            raise FileNotFoundError(f"path: no {RUN_CHECKPOINT} in the folder {folder}")
    if not path.is_file():
        raise FileNotFoundError(f"path: no checkpoint file at {path}")
    try:
        payload = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as error:  # truncated zip, random bytes, a pickle with code in it...
        raise CheckpointError(f"{path}: not a readable checkpoint ({type(error).__name__}: {error})") from error

    if not isinstance(payload, dict):
        raise CheckpointError(f"{path}: not a transformer_lib checkpoint (no format tag {FORMAT!r})")
    if "state_dict" not in payload:
        raise CheckpointError(f"{path}: checkpoint lacks the entries ['state_dict']")
    state_dict = payload["state_dict"]
    if not isinstance(state_dict, dict):
        raise CheckpointError(f"{path}: state_dict is a {type(state_dict).__name__}, expected a dict of tensors")
    for key, value in state_dict.items():
        if type(key) is not str or not isinstance(value, torch.Tensor):
            raise CheckpointError(f"{path}: state_dict[{key!r}] is a {type(value).__name__}, expected a tensor")
    if not isinstance(payload.get("sha256"), str):
        raise CheckpointError(f"{path}: checkpoint lacks the entries ['sha256'] (the SHA-256 of its weights)")
    check_sha256(str(path), "of the weights ", state_dict_sha256(state_dict), payload["sha256"], "the file records")
    checkpoint = checkpoint_from_parts(str(path), payload, state_dict, device)
    _check_vocabularies_beside(path, checkpoint)
    return checkpoint


def _check_vocabularies_beside(path: Path, checkpoint: Checkpoint) -> None:
    """A run's ``vocab.json`` beside its checkpoint must hold the vocabularies the checkpoint carries."""
    beside = path.parent / RUN_VOCABULARIES
    carried = checkpoint.extra.get("tokenizer")
    if carried is None or not beside.is_file():
        return
    try:
        record = json.loads(beside.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise CheckpointError(f"{beside}: not readable beside {path} ({error})") from error
    if record != carried:
        raise CheckpointError(f"{beside}: not the vocabularies that {path} carries (another run's, or changed); "
                              f"the model's own are in the checkpoint: remove or replace {beside}")


def checkpoint_from_parts(
    source: str, description: dict, state_dict: dict[str, torch.Tensor], device: torch.device | str = "cpu"
) -> Checkpoint:
    """Build the model that ``description`` (the format tag, version, model class, config, vocabularies
    and extra of a checkpoint) names, and load ``state_dict`` into it exactly.

    Both file formats use it: ``load_checkpoint``'s single file and the shipped models'
    safetensors + JSON pair (``transformer_lib.pretrained``). ``source`` names the file in errors.
    """
    if description.get("format") != FORMAT:
        raise CheckpointError(f"{source}: not a transformer_lib checkpoint (no format tag {FORMAT!r})")
    if description.get("version") != VERSION:
        raise CheckpointError(
            f"{source}: checkpoint format version {description.get('version')!r}; this library reads version {VERSION}"
        )
    missing = [key for key in ("model_class", "config", "src_vocab", "tgt_vocab") if key not in description]
    if missing:
        raise CheckpointError(f"{source}: checkpoint lacks the entries {missing}")
    name = description["model_class"]
    if not isinstance(name, str) or name not in MODEL_CLASSES:  # a list is not even hashable
        raise CheckpointError(f"{source}: unknown model class {name!r}; expected one of {list(MODEL_CLASSES)}")
    model_class, config_class = MODEL_CLASSES[name]
    extra = {} if description.get("extra") is None else description["extra"]
    if not isinstance(extra, dict):
        raise CheckpointError(f"{source}: extra is a {type(extra).__name__}, expected a dict (or none)")

    try:
        config = config_class(**description["config"])
    except (TypeError, ValueError) as error:
        raise CheckpointError(f"{source}: invalid {config_class.__name__} ({error})") from error
    try:
        src_vocab = None if description["src_vocab"] is None else Vocab.from_dict(description["src_vocab"])
        tgt_vocab = None if description["tgt_vocab"] is None else Vocab.from_dict(description["tgt_vocab"])
    except (TypeError, ValueError, KeyError) as error:
        raise CheckpointError(f"{source}: invalid vocabulary ({error})") from error
    for arg, vocab, size in (("src_vocab", src_vocab, config.src_vocab_size),
                             ("tgt_vocab", tgt_vocab, config.tgt_vocab_size)):
        if vocab is not None and len(vocab) != size:
            raise CheckpointError(f"{source}: {arg} holds {len(vocab)} tokens but the config says {size}")

    model = model_class(config)  # a fresh model: the only one that could be half-filled is never returned
    check_dtypes(source, state_dict, model)
    try:
        model.load_state_dict(state_dict, strict=True)
    except RuntimeError as error:  # missing or unexpected keys, shape mismatches
        raise CheckpointError(f"{source}: weights do not fit a {name} with this config:\n{error}") from error
    if src_vocab is not None and tgt_vocab is not None:
        # The model carries its vocabularies (and the tokenizer of a run on text): decoding.translate's defaults.
        model.vocabularies = _vocabularies_of(source, src_vocab, tgt_vocab, extra.get("tokenizer"))
    return Checkpoint(model.to(device).eval(), src_vocab, tgt_vocab, dict(extra))


def _vocabularies_of(source: str, src_vocab: Vocab, tgt_vocab: Vocab, record: object) -> Vocabularies:
    """The vocabularies, with the tokenizer of ``record`` (``Vocabularies.record``, or None), which must
    describe the same vocabulary."""
    if record is None:
        return Vocabularies(src_vocab, tgt_vocab)
    try:
        recorded = Vocabularies.from_record(record)
    except ValueError as error:
        raise CheckpointError(f"{source}: extra['tokenizer']: {error}") from error
    if recorded.src != src_vocab or recorded.tgt != tgt_vocab:
        raise CheckpointError(f"{source}: extra['tokenizer'] describes {recorded.src!r}, but the checkpoint's "
                              f"vocabularies are {src_vocab!r} and {tgt_vocab!r}")
    return Vocabularies(src_vocab, tgt_vocab, recorded.tokenizer)


def check_dtypes(source: str, state_dict: dict[str, torch.Tensor], model: nn.Module) -> None:
    """Every stored tensor has the dtype of the model's weight it fills (``load_state_dict`` would cast
    it silently). The stored floating-point weights choose the model's dtype, float32 or float64: the
    model is converted to it first, so that a float64 model loads as float64, exactly."""
    # The most common floating dtype among the stored tensors is the model's; any other one is the odd one out.
    floating = Counter(value.dtype for value in state_dict.values() if isinstance(value, torch.Tensor)
                       and value.is_floating_point())
    if floating and floating.most_common(1)[0][0] in (torch.float32, torch.float64):
        model.to(floating.most_common(1)[0][0])
    expected = model.state_dict()
    for key, value in state_dict.items():
        if key in expected and isinstance(value, torch.Tensor) and value.dtype != expected[key].dtype:
            raise CheckpointError(f"{source}: state_dict[{key!r}]: expected dtype {expected[key].dtype} like the "
                                  f"model's other weights, got {value.dtype}")
