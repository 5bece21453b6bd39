"""The bad-input sweep fails on a planted defect of each kind (issue 41): a check removed so that a bad
value succeeds, a refusal that names another argument, the wrong kind of refusal, an IndexError from
inside, and an acceptance that has gone stale. Each plant runs through the sweep's own
``sweep_argument`` (the body of ``test_a_bad_argument_is_refused_by_name``), on a small function put into
its ``CALLS`` with monkeypatch, and once on the library itself with one of its checks removed."""

from __future__ import annotations

import pytest

from transformer_lib import decoding
from transformer_lib.validation import check_int, check_sentence

from . import test_bad_input_sweep as sweep
from .bad_input_sweep import SWEEP_COUNT, bad_values


def checked(length: int, word: str) -> str:
    """The control: every bad value of either argument is refused naming it."""
    check_int("length", length, minimum=1)
    if len(check_sentence("word", word)) > 100:
        raise ValueError(f"word: expected a word of at most 100 letters, got {len(word)}")
    return word[:length]


def check_removed(length: int, word: str) -> str:
    check_sentence("word", word)
    return word[:length] if isinstance(length, int) else word  # no check of length: -1 and None succeed


def names_the_other_argument(length: int, word: str) -> str:
    if not isinstance(length, int) or isinstance(length, bool) or length < 1:
        raise ValueError(f"word: cannot take {length!r} letters")  # the replaced argument is length
    return check_sentence("word", word)[:length]


def wrong_kind(length: int, word: str) -> str:
    if not isinstance(length, int) or isinstance(length, bool) or length < 1:
        raise ValueError(f"length: expected a positive int, got {length!r}")  # None is a TypeError
    return check_sentence("word", word)[:length]


def index_error(length: int, word: str) -> str:
    check_int("length", length)  # the type is checked, the range is not
    return check_sentence("word", word)[length]  # -1000000: IndexError from inside


def plant(monkeypatch: pytest.MonkeyPatch, function: object) -> None:
    monkeypatch.setitem(sweep.CALLS, "planted.function", lambda: (function, dict(length=2, word="cat")))


def test_the_control_passes_and_each_bad_value_is_one_case(monkeypatch):
    plant(monkeypatch, checked)
    before = SWEEP_COUNT["cases"]
    assert sweep.sweep_argument("planted.function", "length") == []
    assert sweep.sweep_argument("planted.function", "word") == []
    assert SWEEP_COUNT["cases"] - before == len(bad_values(2)) + len(bad_values("cat"))
    assert sweep.SWEEP_OUTCOMES[("planted.function", "length", "-1")] == "refused"


@pytest.mark.parametrize(("function", "finding"), [
    (check_removed, "planted.function(length=-1): succeeded; a bad value must be refused"),
    (names_the_other_argument, "planted.function(length=-1): ValueError that does not name 'length': word: cannot"),
    (wrong_kind, "planted.function(length=None): ValueError where TypeError was due"),
    (index_error, "planted.function(length=-1000000): IndexError from inside: string index out of range"),
])
def test_a_planted_defect_is_a_finding(monkeypatch, function, finding):
    plant(monkeypatch, function)
    findings = sweep.sweep_argument("planted.function", "length")
    assert any(f.startswith(finding) for f in findings), findings
    with pytest.raises(AssertionError, match="length"):
        sweep.test_a_bad_argument_is_refused_by_name("planted.function", "length")


def test_a_stale_acceptance_is_a_finding(monkeypatch):
    plant(monkeypatch, checked)
    monkeypatch.setitem(sweep.ACCEPTED, ("planted.function", "length", "-1"), "a planted acceptance of a refused value")
    findings = sweep.sweep_argument("planted.function", "length")
    assert findings == ["planted.function(length=-1): refused, but ACCEPTED says it is accepted (a planted "
                        "acceptance of a refused value): remove the stale acceptance"]


def test_an_acceptance_lets_its_one_case_succeed(monkeypatch):
    plant(monkeypatch, check_removed)
    findings = sweep.sweep_argument("planted.function", "length")
    monkeypatch.setitem(sweep.ACCEPTED, ("planted.function", "length", "-1"), "a planted acceptance of -1")
    assert len(sweep.sweep_argument("planted.function", "length")) == len(findings) - 1


def test_a_check_removed_from_the_library_is_a_finding(monkeypatch):
    """decoding.length_penalty without its check of alpha: NaN, inf and negative exponents go through."""
    assert sweep.sweep_argument("decoding.length_penalty", "alpha") == []
    monkeypatch.setattr(decoding, "check_number", lambda name, value, **limits: value)
    findings = sweep.sweep_argument("decoding.length_penalty", "alpha")
    assert any(f.startswith("decoding.length_penalty(alpha=NaN): succeeded") for f in findings), findings
