"""Each exercise check accepts the book's answer and refuses a wrong one, naming the right one."""

import pytest

from transformer_lib import exercises


@pytest.mark.parametrize(("check", "right", "wrong"), [
    (exercises.check_sequential_steps, dict(words=20, layers=2, pipelined=21, unpipelined=40), dict(pipelined=20)),
    (exercises.check_longest_wavelength, dict(base=100, positions=628, sentence=1000), dict(positions=600)),
    (exercises.check_xavier_row_norm_ratio, dict(vocab=1000, d_models=(64, 256, 1024), falls=True),
     dict(falls=False)),
    (exercises.check_scores_divided_by_d_k, dict(d_k=1024, keys=16, max_deviation=0.02), dict(d_k=4)),
    (exercises.check_base_layer_parameters, dict(attention=1_050_624, feed_forward=2_099_712,
                                                 encoder_layer=3_152_384, decoder_layer=4_204_032),
     dict(decoder_layer=4_202_496)),
    (exercises.check_heads_must_divide, dict(d_model=10, n_heads=3, refused=True), dict(refused=False)),
    (exercises.check_heads_must_divide, dict(d_model=8, n_heads=2, refused=False), dict(refused=True)),
    (exercises.check_pre_norm_extra, dict(extra=2048), dict(extra=1024)),
    (exercises.check_first_learning_rate, dict(rate=0.0625, d_model=64, scale=0.5), dict(rate=0.125)),
])
def test_a_check_takes_the_right_answer_and_refuses_a_wrong_one(check, right, wrong):
    assert check(**right).startswith("right")
    with pytest.raises(AssertionError):
        check(**{**right, **wrong})


def test_the_judgement_check():
    from transformer_lib.oracle import classify_sentence

    sentence = "les garçons ne sont pas bleues"
    assert classify_sentence(sentence, set()) == "ungrammatical"
    assert exercises.check_judgements({sentence: "ungrammatical"}, set()).startswith("right")
    with pytest.raises(AssertionError, match="ungrammatical"):
        exercises.check_judgements({sentence: "new"}, set())
