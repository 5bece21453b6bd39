"""Chapter 6's look inside the layers: the residual-free ablation, the feed-forward hidden units
captured by hooks, and the word classes they are read against."""

import math

import pytest
import torch
import torch.nn.functional as F

from transformer_lib.analysis import encoder_unit_activations, encoder_unit_activations_by_layer
from transformer_lib.capture import capture_feed_forward
from transformer_lib.config import TransformerConfig
from transformer_lib.corpus import make_corpus
from transformer_lib.evaluation import evaluate_translation
from transformer_lib.figures.models import ablation_figure
from transformer_lib.grammar import english_word_classes, english_words
from transformer_lib.models import Transformer, count_parameters
from transformer_lib.pretrained import BOOK_RECIPE, BookRecipe, book_vocabularies, train_book_model
from transformer_lib.pretrained.ablations import (
    TABLE3_VARIANTS,
    run_table3,
    validation_loss,
)
from transformer_lib.residual import NoResidual, Residual, without_residuals
from transformer_lib.tokenization import make_batches

from .toy_translation import SRC, TGT, toy_model

D_MODEL = 8


def test_no_residual_is_the_residual_without_its_skip():
    x = torch.randn(2, 3, D_MODEL, dtype=torch.float64)
    sublayer = torch.sin  # not a multiple of x: a norm would hide that difference
    post = NoResidual(D_MODEL, dropout=0.0, norm_first=False).double()
    pre = NoResidual(D_MODEL, dropout=0.0, norm_first=True).double()
    torch.testing.assert_close(post(x, sublayer), post.norm(torch.sin(x)))
    torch.testing.assert_close(pre(x, sublayer), torch.sin(pre.norm(x)))
    with_skip = Residual(D_MODEL, dropout=0.0).double()
    torch.testing.assert_close(with_skip(x, sublayer), post.norm(x + torch.sin(x)))
    assert not torch.allclose(with_skip(x, sublayer), post(x, sublayer))


@pytest.mark.parametrize("norm_first", [False, True])
def test_without_residuals_keeps_the_weights_and_drops_every_skip(norm_first):
    torch.manual_seed(0)
    model = toy_model()
    if norm_first:
        model = Transformer(model.config.replace(norm_first=True)).eval()
    before = {name: p.clone() for name, p in model.state_dict().items()}
    src, tgt = torch.tensor([SRC.encode("the cat sat on a mat")]), torch.tensor([[TGT.sos_id, 5, 6]])
    with torch.no_grad():
        with_skips = model(src, tgt)
        assert without_residuals(model) is model
        without = model(src, tgt)
    n_sublayers = 2 * 2 + 3 * 1  # two encoder layers of two sub-layers, one decoder layer of three
    assert sum(type(m) is NoResidual for m in model.modules()) == n_sublayers
    assert not any(type(m) is Residual for m in model.modules())
    assert model.state_dict().keys() == before.keys()
    assert all(torch.equal(model.state_dict()[k], v) for k, v in before.items())
    assert not model.training and not torch.allclose(with_skips, without)
    # the first encoder layer by hand: attention, norm (no skip), feed-forward, norm (no skip)
    layer, x = model.encoder.layers[0], model.src_embed(src)
    if norm_first:
        h = layer.self_attn(*[layer.attn_residual.norm(x)] * 3)[0]
        h = layer.feed_forward(layer.ff_residual.norm(h))
    else:
        h = layer.attn_residual.norm(layer.self_attn(x, x, x)[0])
        h = layer.ff_residual.norm(layer.feed_forward(h))
    torch.testing.assert_close(layer(x), h)
    with pytest.raises(TypeError, match="model"):
        without_residuals("a model")


def test_capture_feed_forward_is_the_relu_of_the_first_linear_layer():
    model = toy_model(n_decoder_layers=2)
    src = torch.tensor([SRC.encode("the cat sat on a mat"), SRC.encode("a dog ran") + [0, 0, 0]])
    tgt = torch.tensor([[TGT.sos_id, 5, 6], [TGT.sos_id, 7, 0]])
    found = capture_feed_forward(model, src, tgt)
    assert len(found.encoder) == 2 and len(found.decoder) == 2
    assert found.encoder[0].shape == (2, 6, 32) and found.decoder[1].shape == (2, 3, 32)
    # recomputed by hand from the module's own weights and the encoder's first layer's input
    layer = model.encoder.layers[0]
    with torch.no_grad():
        x = model.src_embed(src)
        h = layer.attn_residual(x, lambda y: layer.self_attn(y, y, y, model.src_mask(src))[0])
        manual = F.relu(h @ layer.feed_forward.linear1.weight.T + layer.feed_forward.linear1.bias)
    torch.testing.assert_close(found.encoder[0], manual)
    assert (found.decoder[0] >= 0).all() and (found.encoder[1] == 0).any()
    assert not any(m._forward_hooks for m in model.modules())  # the hooks are gone
    with pytest.raises(TypeError, match="model"):
        capture_feed_forward(torch.nn.Linear(2, 2), src, tgt)


def test_encoder_unit_activations_rows_words_and_statistics():
    model = toy_model()
    sentences = ["the cat sat on a mat", "a dog ran"]
    units = encoder_unit_activations(model, SRC, sentences, layer=1)
    assert units.words == "the cat sat on a mat a dog ran".split()
    assert units.sentences == [sentences[0]] * 6 + [sentences[1]] * 3
    assert units.positions == [0, 1, 2, 3, 4, 5, 0, 1, 2]
    alone = capture_feed_forward(model, torch.tensor([SRC.encode("a dog ran")]), torch.tensor([[TGT.sos_id]]))
    torch.testing.assert_close(units.values[6:], alone.encoder[1][0])  # padding changes nothing
    torch.testing.assert_close(units.zero_fraction(), (units.values == 0).double().mean(-1))
    best = units.top_tokens(3, k=2)
    column = units.values[:, 3]
    assert best[0].value == column.max().item() and best[0].value >= best[1].value
    row = int(column.argmax())
    assert (best[0].word, best[0].sentence, best[0].position) == (units.words[row], units.sentences[row],
                                                                 units.positions[row])
    assert best[0].sentence.split()[best[0].position] == best[0].word
    classes = {"the": "det", "a": "det", "cat": "noun", "mat": "noun", "dog": "noun", "sat": "verb",
               "ran": "verb", "on": "prep"}
    names, means = units.class_means(classes)
    assert names == ["det", "noun", "prep", "verb"]
    torch.testing.assert_close(means[0], units.values[[0, 4, 6]].mean(0))
    with pytest.raises(ValueError, match="word_classes"):
        units.class_means({"the": "det"})
    with pytest.raises(ValueError, match="unit"):
        units.top_tokens(32)
    with pytest.raises(ValueError, match="layer"):
        encoder_unit_activations(model, SRC, sentences, layer=2)
    with pytest.raises(TypeError, match="sentences: expected a list of sentences, got a single str"):  # as everywhere
        encoder_unit_activations(model, SRC, "the cat")


def test_english_word_classes_cover_every_word_once():
    classes = english_word_classes()
    assert classes.keys() == english_words()
    assert set(classes.values()) == {"noun", "verb", "adjective", "determiner", "pronoun", "preposition",
                                     "auxiliary"}
    assert (classes["cats"], classes["eats"], classes["is"], classes["front"], classes["her"]) == (
        "noun", "verb", "verb", "preposition", "determiner")


def _tiny_recipe():
    return BookRecipe(model=TransformerConfig.preset("book", d_model=16, n_heads=2, d_ff=32),
                      batch_size=16).with_training(warmup=4)


def test_table3_variants_change_one_thing_each():
    base = TABLE3_VARIANTS["base"].book_recipe(0)
    assert base == BOOK_RECIPE and TABLE3_VARIANTS["base"].adapt() is None
    assert TABLE3_VARIANTS["no_residual"].adapt() is without_residuals
    assert TABLE3_VARIANTS["layers_1"].book_recipe(0).model == BOOK_RECIPE.model.replace(
        n_encoder_layers=1, n_decoder_layers=1)
    assert TABLE3_VARIANTS["dropout_0.0"].book_recipe(0).model == BOOK_RECIPE.model.replace(dropout=0.0)
    assert TABLE3_VARIANTS["label_smoothing_0"].book_recipe(0) == BOOK_RECIPE.with_training(label_smoothing=0.0)
    for name, variant in TABLE3_VARIANTS.items():
        recipe = variant.book_recipe(2)
        changed = {k for k in BOOK_RECIPE.__dataclass_fields__ if getattr(recipe, k) != getattr(BOOK_RECIPE, k)}
        assert changed <= {"seed", "model", "training"}, name
        assert recipe.training in (BOOK_RECIPE.training, BOOK_RECIPE.training.replace(label_smoothing=0.0)), name


def test_adapt_changes_the_initial_model_and_nothing_else():
    corpus = make_corpus(0, n_pairs=60, novel_per_combination=1)
    recipe = _tiny_recipe()
    seen = {}

    def keep(model):
        seen["initial"] = {k: v.clone() for k, v in model.state_dict().items()}
        return without_residuals(model)

    model, *_ = train_book_model(steps=1, recipe=recipe, corpus=corpus, adapt=keep, progress=False)
    assert any(type(m) is NoResidual for m in model.modules())
    torch.manual_seed(recipe.seed)
    fresh = Transformer(recipe.config(*(len(v) for v in book_vocabularies(corpus))))
    assert all(torch.equal(fresh.state_dict()[k], v) for k, v in seen["initial"].items())  # the same start
    with pytest.raises(TypeError, match="adapt"):
        train_book_model(steps=1, recipe=recipe, corpus=corpus, adapt="no residual", progress=False)


def test_run_table3_measures_what_it_trained():
    corpus = make_corpus(0, n_pairs=60, novel_per_combination=1)
    result = run_table3("layers_1", 1, (2, 3), corpus=corpus)
    assert result["variant"] == "layers_1" and len(result["losses"]) == 3 and set(result["budgets"]) == {"2", "3"}
    recipe = TABLE3_VARIANTS["layers_1"].book_recipe(1)
    model, src_vocab, tgt_vocab, history = train_book_model(steps=3, recipe=recipe, corpus=corpus, progress=False)
    assert history.losses == result["losses"]  # measuring at step 2 did not change the run
    assert result["budgets"]["3"]["perplexity"] == pytest.approx(math.exp(validation_loss(model, corpus)), rel=1e-12)
    assert result["parameters"] == count_parameters(model)
    evaluation = evaluate_translation(model, corpus.valid, src_vocab, tgt_vocab)
    assert result["budgets"]["3"]["exact_match"] == evaluation.exact_match
    *_, two = train_book_model(steps=2, recipe=recipe, corpus=corpus, progress=False)
    assert two.losses == result["losses"][:2]
    # the validation loss by hand: plain cross-entropy over the real target tokens, teacher-forced
    batch = make_batches(corpus.valid, src_vocab, tgt_vocab, len(corpus.valid), shuffle=False)[0]
    with torch.no_grad():
        logits = model(batch.src, batch.tgt_in)
    expected = F.cross_entropy(logits.flatten(0, 1), batch.tgt_out.flatten(), ignore_index=tgt_vocab.pad_id)
    assert validation_loss(model, corpus) == pytest.approx(float(expected), rel=1e-6)
    with pytest.raises(ValueError, match="name"):
        run_table3("one layer", 0, (1,), corpus=corpus)
    with pytest.raises(ValueError, match="budgets"):
        run_table3("base", 0, (0,), corpus=corpus)


def test_run_table3_trains_in_its_dtype_and_restores_the_default():
    corpus = make_corpus(0, n_pairs=60, novel_per_combination=1)
    recipe = TABLE3_VARIANTS["layers_1"].book_recipe(0)
    default = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        in_float32 = run_table3("layers_1", 0, (3,), corpus=corpus)  # the default: float32
        assert torch.get_default_dtype() == torch.float64  # the chapter's float64 is left as it was
        in_float64 = run_table3("layers_1", 0, (3,), corpus=corpus, dtype=torch.float64)
        *_, history64 = train_book_model(steps=3, recipe=recipe, corpus=corpus, progress=False)
    finally:
        torch.set_default_dtype(default)
    *_, history32 = train_book_model(steps=3, recipe=recipe, corpus=corpus, progress=False)
    assert default == torch.float32
    assert in_float32["losses"] == history32.losses and in_float64["losses"] == history64.losses
    assert in_float32["losses"] != in_float64["losses"]  # the precision did change the run
    with pytest.raises(TypeError, match="dtype"):
        run_table3("base", 0, (1,), corpus=corpus, dtype="float32")
    with pytest.raises(ValueError, match="dtype"):
        run_table3("base", 0, (1,), corpus=corpus, dtype=torch.int64)


def test_ablation_figure_draws_each_curve_apart():
    fig = ablation_figure({"baseline": [3.0, 2.0, 1.0, 0.5], "no residual": [3.0, 2.9, 2.8, 2.7]}, window=2)
    assert fig.layout.title.text and fig.layout.xaxis.title.text and fig.layout.yaxis.title.text
    first, second = fig.data
    assert list(first.y) == [3.0, 2.5, 1.5, 0.75]  # the moving average over two steps
    assert first.line.dash != second.line.dash and first.marker.symbol != second.marker.symbol
    assert first.line.color != second.line.color
    assert [a.text for a in fig.layout.annotations] == ["baseline", "no residual"]  # direct labels
    close = ablation_figure({"a": [3.0, 1.0], "b": [3.0, 1.01], "c": [3.0, 2.0]}, window=1)
    label_y = sorted(a.y for a in close.layout.annotations)
    assert label_y[0] == 1.0 and label_y[1] - label_y[0] >= 0.06 * 2.0 - 1e-9  # moved apart
    with pytest.raises(ValueError, match="curves"):
        ablation_figure({})
    with pytest.raises(ValueError, match="curves"):
        ablation_figure({"baseline": []})


def test_encoder_unit_activations_in_chunks_are_each_sentence_alone():
    model = toy_model()
    sentences = ["the cat sat on a mat", "a dog ran", "the dog sat"] * 100  # 300: two chunks of at most 256
    units = encoder_unit_activations(model, SRC, sentences, layer=0)
    assert len(units.words) == 100 * (6 + 3 + 3)
    for index in (0, 255, 256, 299):  # each side of the chunk boundary
        first = sum(len(s.split()) for s in sentences[:index])
        alone = capture_feed_forward(model, torch.tensor([SRC.encode(sentences[index])]), torch.tensor([[TGT.sos_id]]))
        torch.testing.assert_close(units.values[first:first + len(sentences[index].split())], alone.encoder[0][0])


def test_encoder_unit_activations_by_layer_are_each_layer_of_each_sentence_alone():
    model = toy_model()
    sentences = ["the cat sat on a mat", "a dog ran", "the dog sat"] * 100  # two chunks
    by_layer = encoder_unit_activations_by_layer(model, SRC, sentences)
    assert len(by_layer) == len(model.encoder.layers) > 1
    for index in (0, 256, 299):
        first = sum(len(s.split()) for s in sentences[:index])
        alone = capture_feed_forward(model, torch.tensor([SRC.encode(sentences[index])]), torch.tensor([[TGT.sos_id]]))
        rows = slice(first, first + len(sentences[index].split()))
        for layer, units in enumerate(by_layer):
            torch.testing.assert_close(units.values[rows], alone.encoder[layer][0])
    assert torch.equal(by_layer[1].values, encoder_unit_activations(model, SRC, sentences, layer=1).values)
