"""Every stored result (``transformer_lib.stored.STORED``) is what the code computes today.

One parametrised test runs each file's own check: the cheap files are computed again in full and
compared (the corpus, chapter 1's comparison, chapter 6's norm placement: seconds; chapter 5's
agreement heads: about a minute); Table 3, whose runs take hours, is checked for its summary, its base
recipe, its parameter counts and one run trained again (the base, pair 0, 500 steps: about 40 s of an
idle core) within ``TABLE3_TOLERANCE``.
"""

from __future__ import annotations

import copy
import dataclasses
import json

import pytest

from transformer_lib import stored
from transformer_lib.pretrained import ablations
from transformer_lib.pretrained.ablations import load_table3


@pytest.mark.parametrize("name", list(stored.STORED))
def test_the_stored_file_is_what_the_code_computes(name: str) -> None:
    assert stored.STORED[name].path.exists()
    stored.check(name)


def test_every_stored_file_is_registered() -> None:
    files = {p.name for p in stored.PRETRAINED.iterdir() if p.name.endswith((".json", ".json.gz"))}
    assert files == {s.path.name for s in stored.STORED.values() if s.path.parent == stored.PRETRAINED}


def test_a_changed_variant_fails_the_table3_check(monkeypatch: pytest.MonkeyPatch) -> None:
    data = load_table3()
    stored.check_table3_summary(data)
    learned = dataclasses.replace(ablations.TABLE3_VARIANTS["rope"], model={"positional": "learned"})
    monkeypatch.setitem(ablations.TABLE3_VARIANTS, "rope", learned)
    with pytest.raises(AssertionError, match="rope"):
        stored.check_table3_summary(data)


def test_rows_that_are_not_the_summary_fail() -> None:
    data = copy.deepcopy(load_table3())
    data["rows"]["rope"]["budgets"]["500"]["exact_match"]["values"]["median"] += 0.001
    with pytest.raises(AssertionError, match="table3 rows"):
        stored.check_table3_summary(data)
    data = copy.deepcopy(load_table3())
    data["base_recipe"]["warmup"] += 1
    with pytest.raises(AssertionError, match="base recipe"):
        stored.check_table3_summary(data)


def test_unknown_names_are_refused() -> None:
    with pytest.raises(ValueError, match="name"):
        stored.check("table4")


def test_a_changed_digit_recipe_or_a_drifted_median_fails_the_curve_check(monkeypatch: pytest.MonkeyPatch) -> None:
    from transformer_lib.pretrained import digit_curve

    data = json.loads(digit_curve.DIGIT_CURVE_PATH.read_text())
    stored_curve = data["accuracy"]
    stored.check_digit_curve(data, stored_curve)  # the stored numbers, given as today's: they pass
    monkeypatch.setattr(digit_curve, "DIGIT_STEPS", digit_curve.DIGIT_STEPS + 100)  # another recipe
    with pytest.raises(AssertionError, match="recipe"):
        stored.check_digit_curve(data, stored_curve)
    monkeypatch.undo()
    drifted = copy.deepcopy(stored_curve)
    smallest = str(min(digit_curve.DIGIT_CURVE_SIZES))
    drifted["small CNN"][smallest] = [a - 2 * stored.DIGIT_CURVE_TOLERANCE for a in drifted["small CNN"][smallest]]
    with pytest.raises(AssertionError, match="small CNN"):
        stored.check_digit_curve(data, {"small CNN": {smallest: drifted["small CNN"][smallest]}})
    fewer = copy.deepcopy(data)
    del fewer["accuracy"]["linear layer on the pixels"][smallest]
    with pytest.raises(AssertionError, match="sizes"):
        stored.check_digit_curve(fewer, {})
