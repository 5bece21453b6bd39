"""Chapter 1 shows a stored comparison of the three shipped translators: it must be what the code computes.

``tools/rnn_comparison.py`` wrote ``transformer_lib/pretrained/rnn_comparison.json``; here the
comparison runs again (every second test sentence, greedy, float64: a few seconds of one core) and
must agree with the file, score by score.
"""

import dataclasses

import pytest

from transformer_lib.evaluation import LengthBucket
from transformer_lib.pretrained.comparison import (
    BOOK_TRANSLATORS,
    compare_book_models,
    comparison_sample,
    load_comparison,
    same_scores,
    scores_to_json,
)


@pytest.fixture(scope="module")
def stored():
    return load_comparison()


def test_the_stored_comparison_is_what_the_code_computes(stored):
    sentences, scores = stored
    assert sentences == len(comparison_sample())
    assert list(scores) == list(BOOK_TRANSLATORS)
    assert same_scores(compare_book_models(), scores)


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
