"""The book's Transformer along its training run: snapshots for the replay (chapter 7, the page).

``tools/train_book_models.py --only snapshots`` trains the book's Transformer again with the
shipped recipe (``BOOK_RECIPE``, same seed), keeps its weights along the way, and refuses to
write anything unless the run ends on the shipped weights bit for bit. It then chooses the
steps to keep from how fast the held-out attention maps change (``choose_steps``) and writes

* ``book_transformer_step{N}.safetensors`` per kept step (the last one, the shipped model, is
  not stored again): every matrix as int8 rows with one float32 scale per row
  (``quantize``), every vector (biases, layer norms) as float32;
* ``book_transformer_snapshots.json``: the steps, the training and validation curves, and the
  measured change of the attention maps that chose the steps.

Every file is listed in ``SHA256SUMS`` and checked on loading, like the shipped models. A
snapshot's weights are ``int8 * scale`` in float32 (``dequantize``): the page's
``book-model.js`` computes exactly these floats from the same bytes.
"""

from __future__ import annotations

import json
from pathlib import Path

import torch
from safetensors import SafetensorError
from safetensors.torch import load_file, save
from torch import Tensor

from ..capture import AttentionMaps
from ..checkpoint import Checkpoint, write_atomically
from ..validation import check_choice, check_int, check_iterable, check_number, check_path
from .shipped import (
    BOOK_TRANSFORMER,
    SUMS_FILE,
    WEIGHTS_DIR,
    ShippedModelError,
    _read_sums,
    _verified,
    load_shipped,
    sha256_of,
)

SNAPSHOTS_FILE = f"{BOOK_TRANSFORMER}_snapshots.json"
SCALE_SUFFIX = ":scale"  # the per-row float32 scales of a quantized matrix NAME are stored as NAME:scale


def snapshot_file(step: int) -> str:
    step = check_int("step", step, minimum=0)
    return f"{BOOK_TRANSFORMER}_step{step:04d}.safetensors"


# --------------------------------------------------------------------------- int8 rows


def quantize(state_dict: dict[str, Tensor]) -> dict[str, Tensor]:
    """Each matrix (2 or more dimensions) as int8 rows, ``round(w / scale)`` with ``scale`` = the row's
    largest magnitude / 127 (a float32 per row, under ``NAME:scale``); each vector as float32.
    A row of zeros has scale 0 and stays zeros."""
    out = {}
    for name, tensor in state_dict.items():
        tensor = tensor.detach().to("cpu", torch.float32)
        if tensor.dim() < 2:
            out[name] = tensor.clone().contiguous()
            continue
        rows = tensor.reshape(tensor.shape[0], -1)  # (rows, columns)
        scale = rows.abs().amax(dim=1) / 127  # (rows,) float32
        safe = torch.where(scale > 0, scale, torch.ones_like(scale))
        q = torch.round(rows / safe[:, None]).clamp(-127, 127).to(torch.int8)  # (rows, columns)
        out[name] = q.reshape(tensor.shape).contiguous()
        out[name + SCALE_SUFFIX] = scale.contiguous()
    return out


def dequantize(stored: dict[str, Tensor]) -> dict[str, Tensor]:
    """The float32 state dict of ``quantize``'s output: ``int8 * scale`` rounded once to float32,
    which is what the page computes (the product of an int8 and a float32 is exact in float64)."""
    out = {}
    for name, tensor in stored.items():
        if name.endswith(SCALE_SUFFIX):
            continue
        if tensor.dtype == torch.int8:
            scale_name = name + SCALE_SUFFIX
            if scale_name not in stored or stored[scale_name].shape != tensor.shape[:1]:
                raise ShippedModelError(f"{name}: an int8 matrix needs its scales {scale_name} of shape "
                                        f"({tensor.shape[0]},)")
            rows = tensor.reshape(tensor.shape[0], -1).to(torch.float32)
            out[name] = (rows * stored[scale_name].to(torch.float32)[:, None]).reshape(tensor.shape)
        elif tensor.dtype == torch.float32:
            out[name] = tensor
        else:
            raise ShippedModelError(f"{name}: expected int8 or float32, got {tensor.dtype}")
    return out


# --------------------------------------------------------------------------- choosing the steps


def attention_change(before: AttentionMaps, after: AttentionMaps, src_lengths: list[int],
                     tgt_lengths: list[int]) -> float:
    """How far the attention maps moved between two checkpoints, on the same batch: the total-variation
    distance (half the L1 distance) between each query's two weight rows, averaged over every real
    query row (padding queries left out; ``src_lengths``/``tgt_lengths``: per batch row) of every
    kind, layer and head. 0: the same maps; 1: disjoint ones."""
    total, count = 0.0, 0
    for kind, lengths in (("encoder_self", src_lengths), ("decoder_self", tgt_lengths), ("cross", tgt_lengths)):
        for old, new in zip(getattr(before, kind), getattr(after, kind), strict=True):  # (B, h, queries, keys)
            for b, n in enumerate(lengths):
                rows = 0.5 * (old[b, :, :n] - new[b, :, :n]).abs().sum(dim=-1)  # (h, n)
                total += float(rows.sum())
                count += rows.numel()
    return total / max(count, 1)


def excess_change(steps: list[int], changes: list[float], settled_from: int) -> tuple[list[float], float]:
    """The change of the maps beyond the jitter that stays once they have settled: even a trained model's
    maps move a little from one checkpoint to the next (each batch nudges the weights), and summed over a
    long settled stretch that jitter would outweigh the real learning. ``floor``: the median change per
    step over the intervals ending after ``settled_from``; each interval keeps what exceeds the floor
    (``max(0, change / length - floor) * length``). Returns (excess per interval, floor)."""
    steps = [check_int(f"steps[{i}]", step) for i, step in enumerate(check_iterable("steps", steps, "a list of ints"))]
    changes = [check_number(f"changes[{i}]", change, minimum=0.0)
               for i, change in enumerate(check_iterable("changes", changes, "a list of numbers"))]
    settled_from = check_int("settled_from", settled_from)
    if len(changes) != len(steps) - 1:
        raise ValueError(f"changes: expected one per interval of steps ({len(steps) - 1}), got {len(changes)}")
    lengths = [b - a for a, b in zip(steps[:-1], steps[1:], strict=True)]
    settled = sorted(c / n for c, n, end in zip(changes, lengths, steps[1:], strict=True) if end > settled_from)
    if not settled:
        raise ValueError(f"settled_from: expected a step before the last ({steps[-1]}), got {settled_from}")
    middle = len(settled) // 2
    floor = settled[middle] if len(settled) % 2 else (settled[middle - 1] + settled[middle]) / 2
    return [max(0.0, c / n - floor) * n for c, n in zip(changes, lengths, strict=True)], floor


def choose_steps(steps: list[int], changes: list[float], count: int) -> list[int]:
    """``count`` steps from ``steps`` (the recorded checkpoints, from 0 to the last), the first and the
    last included, placed at equal shares of the accumulated change of the maps: ``changes[i]`` is the
    change from ``steps[i]`` to ``steps[i + 1]``. Where the maps change fast the steps come close
    together, where they settle they spread out. Each inner step is the recorded checkpoint whose
    accumulated change is nearest its share (never one already taken)."""
    steps = [check_int(f"steps[{i}]", step) for i, step in enumerate(check_iterable("steps", steps, "a list of ints"))]
    changes = [check_number(f"changes[{i}]", change, minimum=0.0)
               for i, change in enumerate(check_iterable("changes", changes, "a list of numbers"))]
    count = check_int("count", count)
    if steps != sorted(set(steps)):
        raise ValueError(f"steps: expected increasing steps, got {steps}")
    if len(changes) != len(steps) - 1 or count < 2 or count > len(steps):
        raise ValueError(f"changes: expected one per interval of steps ({len(steps) - 1}) and "
                         f"2 <= count <= {len(steps)}, "
                         f"got {len(changes)} changes, count {count}")
    accumulated = [0.0]
    for change in changes:
        accumulated.append(accumulated[-1] + change)
    total = accumulated[-1]
    chosen = [0]
    for k in range(1, count - 1):
        target = total * k / (count - 1)
        free = [i for i in range(chosen[-1] + 1, len(steps) - (count - 1 - k))]
        chosen.append(min(free, key=lambda i: abs(accumulated[i] - target)))
    chosen.append(len(steps) - 1)
    return [steps[i] for i in chosen]


# --------------------------------------------------------------------------- writing and loading


def write_snapshots(states: dict[int, dict[str, Tensor]], record: dict, directory: Path = WEIGHTS_DIR) -> list[Path]:
    """Write one quantized file per step of ``states`` and the JSON ``record`` (which must hold
    ``"steps"``: every step of the replay, the shipped model's last), and update ``SHA256SUMS``."""
    directory = Path(directory)
    written = []
    for step, state in sorted(states.items()):
        path = directory / snapshot_file(step)
        data = save(quantize(state), metadata={"step": str(step)})
        write_atomically(path, lambda file, data=data: file.write(data))
        written.append(path)
    text = json.dumps(record, indent=1, sort_keys=True, allow_nan=False) + "\n"
    path = directory / SNAPSHOTS_FILE
    write_atomically(path, lambda file: file.write(text.encode()))
    written.append(path)
    sums = _read_sums(directory)
    sums.update({p.name: sha256_of(p) for p in written})
    lines = "".join(f"{digest}  {filename}\n" for filename, digest in sorted(sums.items()))
    write_atomically(directory / SUMS_FILE, lambda file: file.write(lines.encode()))
    return written


def snapshot_record(directory: Path = WEIGHTS_DIR) -> dict:
    """The replay's JSON: ``steps``, ``shipped_step``, the ``curve`` (training loss per step, validation
    loss at recorded steps) and the ``change`` of the attention maps that chose the steps."""
    directory = check_path("directory", directory)
    path = _verified(directory, SNAPSHOTS_FILE, _read_sums(directory))
    try:
        record = json.loads(path.read_text())
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ShippedModelError(f"{path}: not valid JSON ({error})") from error
    if not isinstance(record, dict) or not isinstance(record.get("steps"), list):
        raise ShippedModelError(f"{path}: expected a JSON object with a list 'steps'")
    return record


def snapshot_steps(directory: Path = WEIGHTS_DIR) -> list[int]:
    """The training steps the replay shows, from 0 (the initial weights) to the shipped model's."""
    return [int(step) for step in snapshot_record(directory)["steps"]]


def snapshot_weights(step: int, directory: Path = WEIGHTS_DIR) -> dict[str, Tensor]:
    """The stored (quantized) tensors of one snapshot, checked against ``SHA256SUMS``."""
    directory = check_path("directory", directory)
    path = _verified(directory, snapshot_file(step), _read_sums(directory))
    try:
        return load_file(path)
    except (SafetensorError, OSError) as error:
        raise ShippedModelError(f"{path}: not a readable safetensors file ({error})") from error


def book_model(device: torch.device | str = "cpu", dtype: torch.dtype | None = None, *, step: object = None,
               directory: Path = WEIGHTS_DIR) -> Checkpoint:
    """The book's trained Transformer with its vocabularies (``.model``, ``.src_vocab``, ``.tgt_vocab``,
    and ``.extra``: the recipe and the training figures). Loaded from the package, never trained here.

    ``step``: None for the shipped model; else one of ``snapshot_steps()``, the same model at that step
    of its training run (its weights as the replay stores them, int8 rows dequantized to float32;
    ``.extra`` names the step). The last step is the shipped model itself."""
    directory = check_path("directory", directory)
    if step is None:
        return load_shipped(BOOK_TRANSFORMER, directory, device=device, dtype=dtype)
    step = check_int("step", step)
    steps = snapshot_steps(directory)
    check_choice("step", step, steps)
    shipped = load_shipped(BOOK_TRANSFORMER, directory, device=device, dtype=dtype)
    if step == steps[-1]:
        return shipped
    weights = dequantize(snapshot_weights(step, directory))
    try:  # copied into the model's float32 or float64 weights exactly
        shipped.model.load_state_dict(weights, strict=True)
    except RuntimeError as error:
        raise ShippedModelError(f"{directory / snapshot_file(step)}: weights do not fit the book's "
                                f"Transformer:\n{error}") from error
    extra = {"step": step, "snapshot_of": BOOK_TRANSFORMER, "recipe": shipped.extra.get("recipe")}
    return Checkpoint(shipped.model.eval(), shipped.src_vocab, shipped.tgt_vocab, extra)
