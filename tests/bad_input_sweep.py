"""The bad-input sweep's machinery: every public callable of transformer_lib, found by walking the
package, with one valid call each (``tests/test_bad_input_sweep.py`` lists them), and the bad values
hypothesis draws for an argument, chosen by the kind of its valid value.

The rule checked (``transformer_lib.validation``): a bad argument gives a ``TypeError`` or ``ValueError``
whose message starts with the argument's name (or the name of the argument it disagrees with),
never an error from deep inside torch, and never any other exception.
"""

from __future__ import annotations

import importlib
import inspect
import math
import pkgutil
import re
from collections.abc import Callable

import torch
from hypothesis import strategies as st
from torch import Tensor, nn

import transformer_lib
from transformer_lib.tokenization import Vocab

SWEEP_COUNT = {"cases": 0}


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


def _tensor_variants(t: Tensor) -> list[object]:
    variants: list[object] = [None, t.tolist(), t.to(torch.bool), t.to(torch.float16)]
    if t.dim() > 0:
        variants += [t[0], t.narrow(-1, 0, 0)]
    variants.append(t[None])
    if t.is_floating_point():
        variants += [t.long(), t.to(torch.float64 if t.dtype != torch.float64 else torch.float32)]
        for bad in (math.nan, math.inf):
            if t.numel():
                changed = t.clone()
                changed.view(-1)[0] = bad
                variants.append(changed)
    elif t.dtype == torch.bool:  # a mask
        variants += [t.float(), t.to(torch.uint8), t.long()]
    else:
        variants += [t.float(), t.to(torch.uint8), t + 10_000, t - 10_000]
    return variants


class _Unknown:
    def __repr__(self) -> str:
        return "<an unknown object>"


def bad_values(valid: object) -> st.SearchStrategy:
    """Values of the wrong type, shape, dtype, or out of range, for an argument whose valid value is ``valid``."""
    odd = [None, _Unknown(), "text"]
    if isinstance(valid, bool):
        return st.sampled_from([None, 1, 0, "yes", 1.0, _Unknown()])
    if isinstance(valid, int):
        return st.one_of(st.sampled_from([None, 2.5, 3.0, True, "3", math.nan, _Unknown()]),
                         st.integers(-10**6, -1))
    if isinstance(valid, float):
        return st.one_of(st.sampled_from([None, math.nan, math.inf, -math.inf, "0.5", True, _Unknown()]),
                         st.floats(-1e6, -1e-6))
    if isinstance(valid, str):
        return st.sampled_from([None, 3, b"bytes", [valid], _Unknown(), "x" * 10_000])
    if isinstance(valid, Tensor):
        return st.sampled_from(_tensor_variants(valid))
    if isinstance(valid, Vocab):
        return st.sampled_from([*odd, valid.itos, Vocab(["lonely"])])
    if isinstance(valid, nn.Module):
        return st.sampled_from([*odd, nn.Linear(2, 2), 3])
    if isinstance(valid, list | tuple):
        return st.sampled_from([*odd, 3, [None], [_Unknown()], [], [math.nan], type(valid)([valid[0]] * 2)
                                if valid else [1]])
    if isinstance(valid, dict):
        return st.sampled_from([*odd, [], {"key": _Unknown()}, {3: None}])
    return st.sampled_from([*odd, 3, 2.5])


def check_outcome(label: str, call: Callable[[], object], names: list[str]) -> None:
    """Run ``call``: it may succeed, or raise a TypeError or ValueError (or a library subclass of them)
    whose message starts with one of ``names``; anything else fails with what came."""
    SWEEP_COUNT["cases"] += 1
    try:
        call()
    except (TypeError, ValueError) as error:
        message = str(error)
        if not any(re.match(rf"{re.escape(name)}(\[|:|\.| )", message) for name in names):
            raise AssertionError(f"{label}: {type(error).__name__} that does not start with one of {names}: "
                                 f"{message[:300]}") from error
        if type(error).__module__.startswith("torch"):
            raise AssertionError(f"{label}: torch's own {type(error).__name__}: {message[:300]}") from error
    except Exception as error:  # noqa: BLE001 -- the point: any other exception is a finding
        raise AssertionError(f"{label}: {type(error).__name__} from inside: {str(error)[:300]}") from error
