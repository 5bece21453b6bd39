"""Argument checks shared by the public API.

Every check raises ``TypeError`` (wrong kind of thing) or ``ValueError`` (right kind, wrong value or shape)
with a message that names the argument, says what was expected and what came, so a reader never has to
decode an error from deep inside torch.

What is accepted, everywhere:

* an integer argument (a size, a length, an id, an offset) is a Python ``int`` or any other
  ``numbers.Integral`` (a NumPy integer), never a ``bool`` and never a float, not even ``3.0``: a fraction is
  refused, never truncated;
* a real-valued argument (a temperature, a smoothing) is an ``int`` or ``float`` (not a ``bool``), and finite
  unless the function says otherwise;
* token ids are a tensor of dtype ``torch.int64`` or ``torch.int32``, the two index dtypes of
  ``torch.nn.Embedding``. Other integer dtypes (``uint8``, ``int8``, ``int16``) are refused with a
  ``TypeError`` that says to call ``.long()``: converting them silently would hide that a ``uint8`` cannot
  hold ids above 255;
* a floating-point input to a module has the module's dtype (a float64 tensor to a float32 module is a
  ``TypeError``, not a deep matrix-multiply error);
* a list of tokens is a sequence of strings; a plain string is refused (it would be read as its characters);
  ``None`` where a sequence is expected is a ``TypeError`` naming it;
* a vocabulary passed with a model holds exactly the model's number of tokens;
* a floating-point input holds no NaN and no infinity; logits may hold -inf (an excluded token);
* a message quotes what came cut short (``shorten``): never a 10,000-character word whole.

``tests/test_bad_input_sweep.py`` holds every public callable of the library to this rule.

The checks live in three modules, one place for each (a message is written once), split where the concepts
divide:

* ``validation`` (this module): plain Python arguments, numbers, choices, paths and devices, text, and the
  plain data a checkpoint stores;
* ``validation_tensors``: tensors, their shapes, dtypes and values (token ids, masks, features);
* ``validation_models``: an argument checked against a model (its vocabulary sizes, its interface).

Each imports only the ones above it in this list.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from numbers import Integral, Real
from pathlib import Path

import torch
from torch import Tensor


def _describe(value: object) -> str:
    return f"{type(value).__name__} {value!r:.60}"


def shorten(text: str, limit: int = 40) -> str:
    """``text`` cut to ``limit`` characters with an ellipsis: a message quotes what came, never 10,000 characters."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


# --------------------------------------------------------------------------- Python values


def check_int(name: str, value: object, minimum: int | None = None, maximum: int | None = None) -> int:
    """An integer (not a bool, not a float such as 3.0) within [minimum, maximum]; returned as an ``int``."""
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise TypeError(f"{name}: expected an int, got {_describe(value)}")
    value = int(value)
    if minimum is not None and value < minimum:
        wanted = "a positive int" if minimum == 1 else f"an int >= {minimum}"
        raise ValueError(f"{name}: expected {wanted}, got {value}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name}: expected an int of at most {maximum}, got {value}")
    return value


def check_index(name: str, value: object, size: int, what: str = "an int", context: str = "") -> int:
    """An index into ``size`` things: an int in [0, size). ``what`` describes the accepted values,
    ``context`` what they index (" for decoder_self")."""
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise TypeError(f"{name}: expected {what} in [0, {size}){context}, got {_describe(value)}")
    if not 0 <= value < size:
        raise ValueError(f"{name}: expected {what} in [0, {size}){context}, got {value!r}")
    return int(value)


def check_positive_int(name: str, value: object) -> int:
    return check_int(name, value, minimum=1)


def check_number(
    name: str, value: object, *, positive: bool = False, minimum: float | None = None, allow_inf: bool = False
) -> float:
    """A real number (int or float, not a bool), not NaN, finite unless ``allow_inf``."""
    if isinstance(value, bool) or not isinstance(value, Real):
        raise TypeError(f"{name}: expected a number, got {_describe(value)}")
    value = float(value)
    if math.isnan(value) or (math.isinf(value) and not allow_inf):
        raise ValueError(f"{name}: expected a finite number, got {value}")
    if positive and not value > 0:
        raise ValueError(f"{name}: expected a positive number, got {value}")
    if minimum is not None and value < minimum:
        raise ValueError(f"{name}: expected a number >= {minimum}, got {value}")
    return value


def check_probability(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, Real):
        raise TypeError(f"{name}: expected a float in [0, 1), got {_describe(value)}")
    if not 0.0 <= value < 1.0:
        raise ValueError(f"{name}: expected a probability in [0, 1), got {value}")
    return float(value)


def check_fraction(name: str, value: object, what: str = "a number") -> float:
    """A number in [0, 1], both ends included (a pixel's ink, a share)."""
    number = check_number(name, value)
    if not 0.0 <= number <= 1.0:
        raise ValueError(f"{name}: expected {what} in [0, 1], got {value}")
    return number


def check_probability_mass(name: str, value: object) -> float:
    """A share of the probability in (0, 1]: top-p sampling's nucleus (1 keeps every token)."""
    number = check_number(name, value)
    if not 0.0 < number <= 1.0:
        raise ValueError(f"{name}: expected a probability in (0, 1], got {value}")
    return number


def check_bool(name: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{name}: expected True or False, got {_describe(value)}")
    return value


def check_special_id(name: str, value: object, vocab_size: int | None = None, optional: bool = False) -> int | None:
    """A special token id (``<pad>``, ``<sos>``, ``<eos>``): an int in [0, vocab_size).

    A negative id is refused rather than read from the end of the vocabulary, where it
    would silently stand for a real token. ``optional``: None is accepted too.
    """
    if optional and value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise TypeError(f"{name}: expected an int{' or None' if optional else ''}, got {_describe(value)}")
    value = int(value)
    if value < 0:
        raise ValueError(f"{name}: expected a token id >= 0, got {value}")
    if vocab_size is not None and value >= vocab_size:
        raise ValueError(f"{name}: expected a token id in [0, {vocab_size}) for a vocabulary of {vocab_size}, "
                         f"got {value}")
    return value


def check_instance(name: str, value: object, cls: type | tuple[type, ...], what: str) -> object:
    """``value`` is an instance of ``cls``; ``what`` names it for the reader ("a Vocab")."""
    if not isinstance(value, cls):
        raise TypeError(f"{name}: expected {what}, got {type(value).__name__}")
    return value


def check_callable(name: str, value: object, what: str) -> object:
    if value is not None and not callable(value):  # what: what it is called with and returns
        raise TypeError(f"{name}: expected {what} or None, got {_describe(value)}")
    return value


def empty_or_wrong_type(value: object) -> type[Exception]:
    """Where a non-empty collection is due: ValueError for an empty one (right type, wrong value), else TypeError."""
    empty = not isinstance(value, str | bytes) and hasattr(value, "__len__") and not len(value)
    return ValueError if empty else TypeError


def check_choice(name: str, value: object, choices: Sequence[str]) -> str:
    """One of ``choices`` (names): anything but a ``str`` is a TypeError, an unknown name a ValueError."""
    if not isinstance(value, str) and all(isinstance(choice, str) for choice in choices):
        raise TypeError(f"{name}: expected one of {list(choices)}, got {_describe(value)}")
    if value not in choices:
        raise ValueError(f"{name}: expected one of {list(choices)}, got {value!r}")
    return value  # type: ignore[return-value]


def check_even(name: str, value: object, expected: str = "an even number") -> int:
    """A positive even int; ``expected`` says what and why, e.g. "an even number (sine and cosine pairs)"."""
    value = check_positive_int(name, value)
    if value % 2:
        raise ValueError(f"{name}: expected {expected}, got {value}")
    return value


def check_edges(name: str, edges: object) -> list[int]:
    """Bucket boundaries: at least two strictly increasing ints."""
    if isinstance(edges, str) or not isinstance(edges, Sequence):
        raise TypeError(f"{name}: expected a list of ints, got {type(edges).__name__}")
    edges = [check_int(f"{name}[{i}]", e) for i, e in enumerate(edges)]
    if len(edges) < 2 or any(b <= a for a, b in zip(edges, edges[1:], strict=False)):
        raise ValueError(f"{name}: expected at least two strictly increasing ints, got {edges}")
    return edges


def check_device(name: str, value: object, here: bool = True) -> torch.device:
    """A device that torch can put a tensor on here: a ``torch.device`` or its name ("cpu", "cuda:0");
    ``here=False``: a well-formed name is enough, whether this machine has it is asked when it is used."""
    if not isinstance(value, str | torch.device):
        raise TypeError(f"{name}: expected a torch.device or a device name such as 'cpu', got {_describe(value)}")
    try:
        device = torch.device(value)
        if here:
            torch.empty(0, device=device)  # a well-formed name for hardware this machine lacks fails here
    except (RuntimeError, AssertionError) as error:  # torch raises either, depending on the build
        raise ValueError(f"{name}: expected a device {'this machine has' if here else 'name'}, such as 'cpu', got "
                         f"{shorten(repr(value))} ({str(error).splitlines()[0]:.100})") from None
    return device


def check_path(name: str, value: object) -> Path:
    """A file path: a ``str`` or ``os.PathLike``."""
    if not isinstance(value, str | os.PathLike):
        raise TypeError(f"{name}: expected a file path (str or pathlib.Path), got {_describe(value)}")
    return Path(value)


# --------------------------------------------------------------------------- text


def check_sentence(name: str, sentence: object) -> str:
    if not isinstance(sentence, str):
        raise TypeError(f"{name}: expected a str (a sentence), got {_describe(sentence)}")
    return sentence


def check_token_list(name: str, tokens: object, item: str = "token") -> list[str]:
    """A sequence of strings (tokens, or sentences with ``item="sentence"``). A plain ``str`` is
    refused: it would be read as its characters."""
    if isinstance(tokens, str):
        raise TypeError(f"{name}: expected a list of {item}s, got a single str {tokens!r:.60} "
                        "(it would be read character by character)")
    if isinstance(tokens, Tensor) or not isinstance(tokens, Sequence):
        raise TypeError(f"{name}: expected a list of {item}s (str), got {type(tokens).__name__}")
    for i, token in enumerate(tokens):
        if not isinstance(token, str):
            raise TypeError(f"{name}[{i}]: expected a str ({item}), got {_describe(token)}")
    return list(tokens)


def check_pairs(name: str, pairs: object) -> list[tuple[str, str]]:
    """A non-empty list of (source, target) sentence pairs: the one check of every function that
    reads a parallel corpus (batching, bucketing, evaluation).

    TypeError for anything but a sequence (a str is not one) or an element that is not a pair of
    strings; ValueError for an empty list, or a source or target without a word (empty or blank):
    such a pair has nothing to translate or to learn, so it is an error, not skipped."""
    if isinstance(pairs, str) or not isinstance(pairs, Sequence):
        raise TypeError(f"{name}: expected a list of (source, target) pairs of strings, got {_describe(pairs)}")
    if not pairs:
        raise ValueError(f"{name}: expected a non-empty list of (source, target) pairs, got an empty one")
    for i, pair in enumerate(pairs):
        if not (isinstance(pair, tuple | list) and len(pair) == 2 and all(isinstance(s, str) for s in pair)):
            raise TypeError(f"{name}[{i}]: expected a (source, target) pair of strings, got {pair!r:.80}")
        if not pair[0].split() or not pair[1].split():
            raise ValueError(f"{name}[{i}]: expected a non-empty source and target, got {pair!r:.80}")
    return [(s, t) for s, t in pairs]


def check_iterable(name: str, value: object, what: str) -> object:
    """``value`` can be iterated (a list, a tuple, a generator...), and is not a ``str`` (read as its
    characters) nor a tensor; ``what`` says what it should hold ("a list of sentences")."""
    if isinstance(value, str | bytes | Tensor) or not hasattr(value, "__iter__"):
        raise TypeError(f"{name}: expected {what}, got {_describe(value)}")
    return value


def check_items(name: str, value: object, cls: type, what: str) -> list:
    """A non-empty list (or other iterable) of ``cls`` instances; ``what`` names one ("a KVCache")."""
    items = list(check_iterable(name, value, f"a list of {what}"))
    if not items:
        raise ValueError(f"{name}: expected at least one {what}, got none")
    for i, item in enumerate(items):
        check_instance(f"{name}[{i}]", item, cls, what)
    return items


def check_names(name: str, value: object, what: str) -> dict[str, str]:
    """A mapping of str to str (``what`` says what it maps: "row key -> name shown")."""
    if not isinstance(value, Mapping):
        raise TypeError(f"{name}: expected a dict of {what}, got {_describe(value)}")
    for key, item in value.items():
        if not isinstance(key, str) or not isinstance(item, str):
            raise TypeError(f"{name}[{key!r:.40}]: expected a dict of {what} (str -> str), got {_describe(key)} -> "
                            f"{_describe(item)}")
    return dict(value)


def check_id_lists(name: str, sequences: object) -> list[list[int]]:
    """A non-empty list of lists of token ids (ints >= 0). Each id is checked: ``torch.tensor(dtype=long)``
    would truncate 2.7 to 2 and read True as 1."""
    if isinstance(sequences, str | Tensor) or not isinstance(sequences, Sequence):
        raise TypeError(f"{name}: expected a list of lists of ids, got {type(sequences).__name__}")
    if not sequences:
        raise ValueError(f"{name}: expected at least one sequence, got none")
    rows = []
    for i, sequence in enumerate(sequences):
        if isinstance(sequence, str | Tensor) or not isinstance(sequence, Sequence):
            raise TypeError(f"{name}[{i}]: expected a list of ids, got {type(sequence).__name__}")
        if all(type(token) is int for token in sequence) and min(sequence, default=0) >= 0:
            rows.append(list(sequence))  # plain ints, none negative: what the check below returns, at a glance
        else:
            rows.append([check_int(f"{name}[{i}][{j}]", token, minimum=0) for j, token in enumerate(sequence)])
    return rows


def check_word(name: str, token: object) -> str:
    """One token of a whitespace-split vocabulary: a non-empty str without whitespace (which
    ``str.split`` would cut, so the token could never be encoded)."""
    if not isinstance(token, str):
        raise TypeError(f"{name}: expected a token (str), got {_describe(token)}")
    if not token or any(c.isspace() for c in token):
        raise ValueError(f"{name}: expected one non-empty word without whitespace, got {token!r}")
    return token


# --------------------------------------------------------------------------- stored data

PLAIN_TYPES = (type(None), bool, int, float, str)


def check_plain_data(name: str, value: object) -> None:
    """``value`` holds only what ``torch.load(weights_only=True)`` reads back: None, bool, int,
    float, str, tensors, and lists, tuples and dicts of them (dict keys: str or int).

    Exact types: a NumPy scalar (``np.float64`` is a subclass of ``float``) or an enum would
    be written without complaint and then refused on loading. The error names the key path.
    """
    if type(value) in PLAIN_TYPES or type(value) is Tensor or type(value) is torch.nn.Parameter:
        return
    if type(value) in (list, tuple):
        for i, item in enumerate(value):
            check_plain_data(f"{name}[{i}]", item)
        return
    if type(value) is dict:
        for key, item in value.items():
            if type(key) not in (str, int):
                raise TypeError(f"{name}: expected str or int keys, got key {_describe(key)}")
            check_plain_data(f"{name}[{key!r}]", item)
        return
    raise TypeError(
        f"{name}: expected a plain value (None, bool, int, float, str, a tensor, or a list, tuple or dict "
        f"of them) that a checkpoint can load again, got {type(value).__module__}.{type(value).__qualname__} "
        f"{value!r:.40}; convert it first (e.g. float(x), x.tolist())"
    )
