"""The assertion shared by the bad-input tests."""

import re
from collections.abc import Callable

import pytest


def raises(exc: type[Exception], call: Callable[[], object], *names: str) -> str:
    """Run ``call``: it must raise exactly ``exc`` (not a subclass thrown from inside torch), with a
    message that starts with one of ``names`` (the argument the caller passed) then ':' or '['."""
    with pytest.raises(exc) as info:
        call()
    assert type(info.value) is exc, f"{type(info.value).__name__}: {info.value}"
    message = str(info.value)
    assert any(re.match(rf"{re.escape(name)}(\[|:)", message) for name in names), message
    return message
