"""The bad values the library deliberately accepts, for the bad-input sweep (tests/test_bad_input_sweep.py):
(callable, argument, bad value's label in ``bad_input_sweep.bad_values``) -> why the value is accepted.

A case listed here must succeed (a refusal makes the entry stale, and the sweep says so); a case not
listed must be refused naming its argument. Nothing is listed to hide a defect: each reason says why
the value is a valid input, not a wrong one."""

from __future__ import annotations

ACCEPTED: dict[tuple[str, str, str], str] = {
}
