import numpy as np
import pytest

from transformer_lib.figures.embeddings import embedding_scatter_figure


def test_embedding_scatter_has_a_dropdown_over_groupings():
    points = np.array([[0.0, 1.0], [1.0, 0.0], [2.0, 2.0]])
    fig = embedding_scatter_figure(points, ["chat", "chats", "le"], {
        "number": ["singular", "plural", "singular"],
        "part of speech": ["noun", "noun", None],
    })
    assert [(t.name, t.visible) for t in fig.data] == [
        ("plural", True), ("singular", True), ("noun", False), ("other", False)]
    assert fig.data[1].text == ("chat", "le")
    buttons = fig.layout.updatemenus[0].buttons
    assert [b.label for b in buttons] == ["number", "part of speech"]
    assert buttons[1].args[0]["visible"] == [False, False, True, True]


def test_embedding_scatter_checks_shapes():
    with pytest.raises(ValueError, match="points"):
        embedding_scatter_figure(np.zeros((3, 3)), ["a", "b", "c"], {"g": ["x", "y", "z"]})
    with pytest.raises(ValueError, match="groupings"):
        embedding_scatter_figure(np.zeros((3, 2)), ["a", "b", "c"], {"g": ["x"]})


def test_french_word_labels_from_the_lexicon():
    from transformer_lib.figures.embeddings import french_word_labels

    labels = french_word_labels(["chat", "chattes", "vertes", "rouge", "mangent", "la", "sur", "<pad>", "souris"])
    assert labels["part of speech"] == ["noun", None, "adjective", "adjective", "verb", "determiner",
                                        "preposition", None, "noun"]
    assert labels["gender"] == ["masculine", None, "feminine", None, None, "feminine", None, None, "feminine"]
    assert labels["number"] == ["singular", None, "plural", "singular", "plural", "singular", None, None, None]
