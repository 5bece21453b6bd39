"""Chapter 1's stored comparison of the three shipped translators: its comparison of scores.

That the file is what the code computes is checked with every stored result, in ``tests/test_stored.py``.
"""

import dataclasses

import pytest

from transformer_lib.evaluation import LengthBucket
from transformer_lib.pretrained.comparison import (
    load_comparison,
    same_scores,
    scores_to_json,
)


@pytest.fixture(scope="module")
def stored():
    return load_comparison()


def test_same_scores_sees_a_changed_number(stored, tmp_path):
    sentences, scores = stored
    path = tmp_path / "comparison.json"
    path.write_text(scores_to_json(scores, sentences))
    assert same_scores(load_comparison(path)[1], scores)  # written and read back: the same
    name = "GRU with attention"
    last = scores[name].by_length[-1]
    changed = dataclasses.replace(last, count=last.count + 1)
    assert isinstance(changed, LengthBucket)
    other = {**scores, name: dataclasses.replace(scores[name], by_length=[*scores[name].by_length[:-1], changed])}
    assert not same_scores(other, scores)
    assert not same_scores({**scores, name: dataclasses.replace(scores[name], bleu=scores[name].bleu + 0.01)}, scores)
