"""markov: the agreement examples the grammar finds, the counting models, the hand-set head."""

import pytest
import torch

from transformer_lib.config import TransformerConfig
from transformer_lib.markov import (
    FORMS,
    AgreementReader,
    HandSetAgreement,
    agreement_accuracy,
    agreement_examples,
    bigram_choice,
    bigram_table,
    labels,
    skip_bigram_table,
    skip_vote_choice,
)
from transformer_lib.pretrained import book_corpus, book_vocabularies

SENTENCE = "son beau canard dans les villes froides est vieux"


def test_the_grammar_finds_the_subject_not_the_nearest_noun() -> None:
    (example,) = agreement_examples([SENTENCE, "elle est vieille", "le chat mange le poisson"])
    assert example.prefix[example.subject] == "canard" and FORMS[example.label] == "masculine singular"
    assert example.distance == 6 and example.noun_between
    assert example.forms[example.label] == "vieux"


def test_counting_models_count() -> None:
    sentences = ["a b c", "a b d", "x b d"]
    bigrams, skips = bigram_table(sentences), skip_bigram_table(sentences)
    assert bigrams[("b", "d")] == 2 and bigrams[("a", "d")] == 0
    assert skips[("a", "d")] == 1 and skips[("a", "c")] == 1 and skips[("x", "d")] == 1
    assert bigram_choice(bigrams, ["a", "b"], ["c", "d"]) == 1
    assert skip_vote_choice(skips, ["a"], ["d", "c"]) == 0  # a tie: the first form
    assert skip_vote_choice(skips, ["x"], ["c", "d"]) == 1


def test_hand_set_head_reads_the_first_noun() -> None:
    (example,) = agreement_examples([SENTENCE])
    head = HandSetAgreement()
    logits = head(example.prefix)
    assert int(logits.argmax()) == example.label
    assert int(head.last_weights.argmax()) == example.subject and head.last_weights.sum().item() == pytest.approx(1)
    (feminine,) = agreement_examples(["les vieilles vaches avec un chien ne sont pas grises"])
    assert FORMS[int(head(feminine.prefix).argmax())] == "feminine plural"


def test_reader_and_accuracy() -> None:
    _, vocab = book_vocabularies(book_corpus())
    examples = agreement_examples([SENTENCE, "la reine est belle"])
    reader = AgreementReader(vocab, TransformerConfig(d_model=8, n_heads=1, n_encoder_layers=1, d_ff=16,
                                                      dropout=0.0, max_len=16)).eval()
    assert reader(reader.encode(examples)).shape == (2, 4)
    assert labels(examples).tolist() == [0, 1]
    assert agreement_accuracy(examples, [0, 0]) == 0.5


def test_bad_input() -> None:
    with pytest.raises(TypeError, match="sentences"):
        agreement_examples("la reine est belle")
    with pytest.raises(TypeError, match="table"):
        bigram_choice({}, ["a"], ["b"])
    with pytest.raises(ValueError, match="prefix"):
        HandSetAgreement(max_len=2)(["a", "b", "c"])
    with pytest.raises(ValueError, match="choices"):
        agreement_accuracy(agreement_examples([SENTENCE]), [0, 1])
    with pytest.raises(TypeError, match="vocab"):
        AgreementReader("vocab", TransformerConfig())
    assert torch.is_tensor(HandSetAgreement().features(["le", "chat"]))
