"""The bad-input sweep's machinery: every public callable of transformer_lib, found by walking the
package, with one valid call each (``tests/test_bad_input_sweep.py`` lists them), and the bad values
tried for an argument (all of them, no sampling), chosen by the kind of its valid value.

The rule checked (``transformer_lib.validation``): a bad argument is refused, with a ``TypeError`` (a wrong
type) or a ``ValueError`` (a wrong value or shape) whose message names that argument, the one replaced;
never an error from deep inside torch, never any other exception, and never a silent success, unless
``tests/sweep_accepted.py`` lists the value as one the library deliberately takes, with the reason.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import math
import pkgutil
import re
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import Tensor, nn

import transformer_lib
from transformer_lib.tokenization import Vocab

SWEEP_COUNT = {"cases": 0}
SWEEP_OUTCOMES: dict[tuple[str, str, str], str] = {}  # (callable, argument, bad value) -> "refused" / "accepted"


def public_callables() -> dict[str, object]:
    """"module.name" for each public function and class, and "module.Class.method" for each public method
    of a public class, defined in a module of transformer_lib (imports from elsewhere are not counted)."""
    found = {}
    for info in pkgutil.walk_packages(transformer_lib.__path__, "transformer_lib."):
        if info.name.endswith(".__main__"):  # runs its command when imported; what it calls is in the package
            continue
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if name.startswith("_") or getattr(value, "__module__", None) != info.name:
                continue
            if inspect.isfunction(value):
                found[f"{info.name}.{name}"] = value
            elif inspect.isclass(value):
                found[f"{info.name}.{name}"] = value
                for method, member in vars(value).items():
                    if not method.startswith("_") and (inspect.isfunction(member)
                                                       or isinstance(member, classmethod | staticmethod)):
                        found[f"{info.name}.{name}.{method}"] = getattr(value, method)
    return found


@dataclass(frozen=True)
class Bad:
    """One bad value: ``label`` names it in a case's id and in ``ACCEPTED``; ``refusal`` is the error a
    refusal must be (a wrong type is a TypeError, a wrong value or shape a ValueError; where the same
    value is a wrong type for one argument and a wrong value for another, either)."""

    label: str
    value: object
    refusal: tuple[type[Exception], ...]


WRONG_TYPE, WRONG_VALUE, EITHER = (TypeError,), (ValueError,), (TypeError, ValueError)


class _Unknown:
    def __repr__(self) -> str:
        return "<an unknown object>"


def _odd(valid: object) -> list[Bad]:
    odd = [Bad("None", None, WRONG_TYPE), Bad("an unknown object", _Unknown(), WRONG_TYPE)]
    return odd if isinstance(valid, str) else [*odd, Bad("a string", "text", EITHER)]


def _tensor_variants(t: Tensor) -> list[Bad]:
    variants = [Bad("None", None, WRONG_TYPE), Bad("a list", t.tolist(), WRONG_TYPE),
                Bad("bool dtype", t.to(torch.bool), EITHER), Bad("float16 dtype", t.to(torch.float16), EITHER)]
    if t.dim() > 0:
        variants += [Bad("one dimension fewer", t[0], WRONG_VALUE), Bad("empty", t.narrow(-1, 0, 0), WRONG_VALUE)]
    variants.append(Bad("one dimension more", t[None], WRONG_VALUE))
    if t.is_floating_point():
        other = torch.float64 if t.dtype != torch.float64 else torch.float32
        variants += [Bad("int64 dtype", t.long(), EITHER), Bad(f"{other} dtype".removeprefix("torch."), t.to(other),
                                                              EITHER)]
        for label, bad in (("a NaN", math.nan), ("an infinity", math.inf)):
            if t.numel():
                changed = t.clone()
                changed.view(-1)[0] = bad
                variants.append(Bad(label, changed, WRONG_VALUE))
    elif t.dtype == torch.bool:  # a mask
        variants += [Bad("float dtype", t.float(), EITHER), Bad("uint8 dtype", t.to(torch.uint8), EITHER),
                     Bad("int64 dtype", t.long(), EITHER)]
    else:  # ids or an index
        variants += [Bad("float dtype", t.float(), EITHER), Bad("uint8 dtype", t.to(torch.uint8), EITHER),
                     Bad("ids + 10000", t + 10_000, WRONG_VALUE), Bad("ids - 10000", t - 10_000, WRONG_VALUE)]
    # a "bad" dtype that is the valid one is no bad value (a mask is already bool)
    return [bad for bad in variants if not (isinstance(bad.value, Tensor) and bad.value.dtype == t.dtype
                                            and bad.value.shape == t.shape and torch.equal(bad.value, t))]


def bad_values(valid: object) -> list[Bad]:
    """Values of the wrong type, shape, dtype, or out of range, for an argument whose valid value is ``valid``:
    every one is tried (no sampling), so a case is the same run after run and ``ACCEPTED`` can name it."""
    if isinstance(valid, bool):
        return [Bad("None", None, WRONG_TYPE), Bad("1", 1, WRONG_TYPE), Bad("0", 0, WRONG_TYPE),
                Bad("'yes'", "yes", WRONG_TYPE), Bad("1.0", 1.0, WRONG_TYPE),
                Bad("an unknown object", _Unknown(), WRONG_TYPE)]
    if isinstance(valid, int):
        return [Bad("None", None, WRONG_TYPE), Bad("2.5", 2.5, WRONG_TYPE), Bad("3.0", 3.0, WRONG_TYPE),
                Bad("True", True, WRONG_TYPE), Bad("'3'", "3", WRONG_TYPE), Bad("NaN", math.nan, WRONG_TYPE),
                Bad("an unknown object", _Unknown(), WRONG_TYPE), Bad("-1", -1, WRONG_VALUE),
                Bad("-1000000", -1_000_000, WRONG_VALUE)]
    if isinstance(valid, float):
        return [Bad("None", None, WRONG_TYPE), Bad("NaN", math.nan, WRONG_VALUE), Bad("inf", math.inf, WRONG_VALUE),
                Bad("-inf", -math.inf, WRONG_VALUE), Bad("'0.5'", "0.5", WRONG_TYPE), Bad("True", True, WRONG_TYPE),
                Bad("an unknown object", _Unknown(), WRONG_TYPE), Bad("-1e-06", -1e-6, WRONG_VALUE),
                Bad("-1000000.0", -1e6, WRONG_VALUE)]
    if isinstance(valid, str):
        return [*_odd(valid), Bad("3", 3, WRONG_TYPE), Bad("bytes", b"bytes", WRONG_TYPE),
                Bad("a list of it", [valid], WRONG_TYPE), Bad("10,000 characters", "x" * 10_000, WRONG_VALUE)]
    if isinstance(valid, Tensor):
        return _tensor_variants(valid)
    if isinstance(valid, Vocab):
        return [*_odd(valid), Bad("its list of tokens", valid.itos, WRONG_TYPE),
                Bad("a one-word Vocab", Vocab(["lonely"]), WRONG_VALUE)]
    if isinstance(valid, nn.Module):
        return [*_odd(valid), Bad("an nn.Linear", nn.Linear(2, 2), EITHER), Bad("3", 3, WRONG_TYPE)]
    if isinstance(valid, list | tuple):
        repeated = type(valid)([valid[0]] * 2) if valid else [1]
        empty = () if isinstance(valid, tuple) else []
        return [*_odd(valid), Bad("3", 3, WRONG_TYPE), Bad("[None]", [None], EITHER),
                Bad("[an unknown object]", [_Unknown()], EITHER), Bad("empty", empty, WRONG_VALUE),
                Bad("[NaN]", [math.nan], EITHER), Bad("its first item twice", repeated, EITHER)]
    if isinstance(valid, dict):
        return [*_odd(valid), Bad("[]", [], EITHER),
                Bad("{'key': an unknown object}", {"key": _Unknown()}, EITHER), Bad("{3: None}", {3: None}, EITHER)]
    return [*_odd(valid), Bad("3", 3, WRONG_TYPE), Bad("2.5", 2.5, WRONG_TYPE)]


def names_argument(message: str, argument: str) -> bool:
    """Whether ``message`` names ``argument``: it starts with the name (``argument: ...``,
    ``argument[2]: ...``, ``argument.field ...``), or names it further on as ``argument`` set
    apart by the punctuation a message uses (``... disagrees with argument: ...``). A name inside a
    longer word (``x`` in ``max_len``) does not count."""
    return re.search(rf"(?<![\w.]){re.escape(argument)}(?=\[|:|\.\w| |,|\)|'|$)", message) is not None


def none_is_documented(function: object, argument: str) -> bool:
    """Whether ``argument``'s type hint says it may be None (``int | None``, ``Optional[...]``) or its
    default is None: then None is one of its documented values, not a bad one."""
    owner = getattr(function, "__self__", None)
    if getattr(function, "__name__", "") == "replace" and dataclasses.is_dataclass(owner):  # replace(**fields)
        fields = {field.name: field for field in dataclasses.fields(owner)}
        return argument in fields and re.search(r"\bNone\b", str(fields[argument].type)) is not None
    try:
        parameter = inspect.signature(function.forward if isinstance(function, nn.Module) else function
                                      ).parameters[argument]
    except (TypeError, ValueError, KeyError):
        return False
    hint = parameter.annotation if isinstance(parameter.annotation, str) else repr(parameter.annotation)
    return parameter.default is None or re.search(r"\bNone\b|Optional", hint) is not None


def check_outcome(label: str, call: Callable[[], object], argument: str, bad: Bad, accepted: str | None,
                  documented: bool = False) -> str:
    """Run ``call`` (whose ``argument`` is ``bad``). A refusal must be ``bad.refusal`` (a TypeError or
    ValueError, or a library subclass of one) whose message names ``argument``; success is a finding unless
    ``accepted`` gives the reason the library takes the value; anything else fails with what came.
    ``documented``: the value is one the signature names (None for an optional argument), so a refusal
    naming ``argument`` is fine too. Returns "refused" or "accepted"."""
    SWEEP_COUNT["cases"] += 1
    try:
        call()
    except (TypeError, ValueError) as error:
        message = str(error)
        if type(error).__module__.startswith("torch"):
            raise AssertionError(f"{label}: torch's own {type(error).__name__}: {message[:300]}") from error
        if not isinstance(error, EITHER if documented else bad.refusal):  # refusing a None the type allows: either
            wanted = " or ".join(kind.__name__ for kind in bad.refusal)
            raise AssertionError(f"{label}: {type(error).__name__} where {wanted} was due: {message[:300]}") from error
        if not names_argument(message, argument):
            raise AssertionError(f"{label}: {type(error).__name__} that does not name {argument!r}: "
                                 f"{message[:300]}") from error
        if accepted is not None and not documented:
            raise AssertionError(f"{label}: refused, but ACCEPTED says it is accepted ({accepted}): "
                                 "remove the stale acceptance") from error
        return "refused"
    except Exception as error:  # noqa: BLE001 -- the point: any other exception is a finding
        raise AssertionError(f"{label}: {type(error).__name__} from inside: {str(error)[:300]}") from error
    if accepted is None:
        raise AssertionError(f"{label}: succeeded; a bad value must be refused with a TypeError or ValueError "
                             f"naming {argument!r}, or listed in ACCEPTED with the reason it is accepted")
    return "accepted"
