"""Agreement links read off the grammar, head scores against them, the baseline and the probe."""

import pytest
import torch

from transformer_lib import agreement as ag
from transformer_lib.figures.agreement import head_agreement_figure
from transformer_lib.grammar import NounPhrase, PrepositionalPhrase, Sentence, render


def words(found, kind):
    return [(found.tokens[link.dependent], found.tokens[link.controller]) for link in found.links if link.kind == kind]


def test_links_of_a_sentence_with_an_attractor():
    subject = NounPhrase("cat", plural=True, adjectives=("small", "black"),
                         pp=PrepositionalPhrase("on", NounPhrase("table")))
    _, french = render(Sentence(subject, "be", adjective="green"))
    assert french == "les petits chats noirs sur la table sont verts"
    found = ag.agreement(french)
    assert words(found, "verb") == [("sont", "chats")]  # past the attractor "table"
    assert sorted(words(found, "adjective")) == [("noirs", "chats"), ("petits", "chats"), ("verts", "chats")]
    assert sorted(words(found, "determiner")) == [("la", "table"), ("les", "chats")]
    tokens = french.split()
    assert found.gender[tokens.index("table")] == "f" and found.plural[tokens.index("sont")] is True
    # causal attention sees only controllers before their dependent: no determiner, no "petits"
    assert sorted(words(type(found)(found.tokens, ag.visible_links(found)), "adjective")) == [("noirs", "chats"),
                                                                                           ("verts", "chats")]


def test_negated_object_and_pronoun_subject():
    _, french = render(Sentence("we", "eat", obj=NounPhrase("apple", "a"), negated=True))
    found = ag.agreement(french)  # "nous ne mangeons pas de pomme": "de" agrees with nothing
    assert words(found, "verb") == [("mangeons", "nous")] and words(found, "determiner") == []


def test_head_agreement_and_baseline():
    links = [[ag.Link(2, 0, "verb"), ag.Link(3, 2, "adjective")]]
    weights = torch.zeros(1, 2, 5, 5)  # (B, h, 1 + T, 1 + T), token i at position i + 1
    weights[0, 0, 3, 1] = weights[0, 0, 4, 2] = 1.0  # head 0: verb -> token 0, adjective -> token 1 (wrong)
    weights[0, 1, 3, 3] = weights[0, 1, 4, 3] = 1.0  # head 1: both look at token 2
    hits = ag.head_agreement([weights], links)
    assert hits.tolist() == [[[True, False], [False, True]]]
    assert ag.head_agreement([weights], links, predicting=True)[0, 0].tolist() == [False, False]
    assert ag.position_baseline([ag.Link(3, 2, "a"), ag.Link(4, 3, "a"), ag.Link(5, 1, "a")]) == (1, 2 / 3)
    assert ag.position_baseline([ag.Link(3, 2, "a")], predicting=True) == (0, 1.0)


def test_linear_probe_reads_a_linear_label():
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(400, 8, generator=generator)
    y = x[:, 3] - 0.5 * x[:, 5] > 0.2
    predictions = ag.linear_probe(x[:300], y[:300], x[300:])
    assert (predictions == y[300:]).double().mean() > 0.9
    noise = ag.linear_probe(x[:300], torch.rand(300, generator=generator) > 0.5, x[300:])
    assert (noise == y[300:]).double().mean() < 0.75  # a random label teaches nothing


def test_layer_states_of_the_shipped_models():
    from transformer_lib.pretrained import book_lm, book_model
    lm, translator = book_lm(), book_model()
    ids = torch.tensor([[lm.tgt_vocab.sos_id, *lm.tgt_vocab.encode("le chat dort")]])
    states = ag.layer_states(lm.model, ids)
    assert len(states) == 1 + len(lm.model.blocks.layers) and states[-1].shape == (1, 4, lm.model.config.d_model)
    src = torch.tensor([translator.src_vocab.encode("the cat sleeps")])
    assert len(ag.layer_states(translator.model, ids, src)) == 1 + len(translator.model.decoder.layers)


def test_bad_input():
    with pytest.raises(TypeError, match="french"):
        ag.agreement(3)
    with pytest.raises(ValueError, match="french: expected a sentence of the corpus's grammar"):
        ag.agreement("chat le dort")
    with pytest.raises(ValueError, match="links: expected one list per batch row"):
        ag.head_agreement([torch.zeros(2, 1, 3, 3)], [[]])
    with pytest.raises(TypeError, match="predicting"):
        ag.head_agreement([torch.zeros(1, 1, 3, 3)], [[]], predicting=1)
    with pytest.raises(ValueError, match="links: expected at least one"):
        ag.position_baseline([])
    with pytest.raises(ValueError, match="test_x"):
        ag.linear_probe(torch.zeros(4, 3), torch.zeros(4), torch.zeros(2, 5))
    with pytest.raises(ValueError, match="train_y"):
        ag.linear_probe(torch.zeros(4, 3), torch.zeros(3), torch.zeros(2, 3))
    with pytest.raises(TypeError, match="model"):
        ag.layer_states("gpt", torch.zeros(1, 2, dtype=torch.long))
    with pytest.raises(ValueError, match="rates"):
        head_agreement_figure({"x": [[1.5]]}, {"x": 0.5})
    with pytest.raises(ValueError, match="baselines"):
        head_agreement_figure({"x": [[0.5]]}, {})


def test_figure():
    fig = head_agreement_figure({"verbs": [[0.1, 0.9], [0.5, 0.2]]}, {"verbs": 0.48}, title="verbs")
    assert fig.data[0].text[0][1] == "90%" and "48%" in fig.layout.annotations[0].text
    assert fig.layout.title.text == "verbs" and fig.layout.xaxis.title.text and fig.layout.yaxis.title.text
    assert fig.layout.coloraxis.colorbar.title.text == "hit rate"
