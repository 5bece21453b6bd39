"""Valid calls for the bad-input sweep (tests/test_bad_input_sweep.py), for the beyond modules: "module.name" ->
a function returning (the callable, a dict of valid keyword arguments); EXEMPT: "module.name" -> why it is not
swept (where else its arguments are tested)."""

from __future__ import annotations

CALLS: dict = {}
EXEMPT: dict[str, str] = {}
