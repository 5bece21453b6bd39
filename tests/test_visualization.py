"""The figure functions and explorers of transformer_lib.visualization, without a browser.

Figures are checked through their data (traces, visibility, menu arguments), which is what the
browser receives; tests/test_browser.py checks that the browser then draws them.
"""

from __future__ import annotations

import html
import json

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
import pytest
import torch

from transformer_lib import visualization as viz
from transformer_lib.config import TransformerConfig
from transformer_lib.models import Transformer
from transformer_lib.positional_encoding import sinusoidal_table


class ToyVocab:
    """A stand-in with the interface of transformer_lib.tokenization.Vocab."""

    def __init__(self, words: list[str], specials_in_encode: bool = False) -> None:
        self.itos = ["<pad>", "<sos>", "<eos>", "<unk>", *words]
        self.stoi = {t: i for i, t in enumerate(self.itos)}
        self.pad_id, self.sos_id, self.eos_id, self.unk_id = 0, 1, 2, 3
        self.specials_in_encode = specials_in_encode

    def encode(self, sentence: str) -> list[int]:
        ids = [self.stoi.get(w, self.unk_id) for w in sentence.lower().split()]
        return [self.sos_id, *ids, self.eos_id] if self.specials_in_encode else ids


SRC = ToyVocab("the cat sat on a mat dog ran".split())
TGT = ToyVocab("le chat assis sur un tapis chien couru".split())
MAX_LEN = 10


@pytest.fixture(scope="module")
def model() -> Transformer:
    torch.manual_seed(0)
    config = TransformerConfig(src_vocab_size=len(SRC.itos), tgt_vocab_size=len(TGT.itos), d_model=16, n_heads=2,
                               n_encoder_layers=2, n_decoder_layers=1, d_ff=32, dropout=0.0, max_len=MAX_LEN)
    return Transformer(config).eval()


@pytest.fixture(scope="module")
def translation(model: Transformer) -> viz.Translation:
    return viz.translate_sentence(model, SRC, TGT, "the cat sat on the mat")


# --- translation --------------------------------------------------------------------------------


def test_translation_encodes_source_as_in_training_and_captures_matching_maps(translation: viz.Translation) -> None:
    assert translation.src_ids == SRC.encode("the cat sat on the mat")
    assert translation.tgt_ids[0] == TGT.sos_id and len(translation.tgt_ids) <= MAX_LEN
    maps = translation.maps
    s = len(translation.src_ids)
    t = len(maps.tgt_tokens[0])
    assert maps.src_tokens[0] == [SRC.itos[i] for i in translation.src_ids]
    assert [a.shape for a in maps.encoder_self] == [(1, 2, s, s)] * 2
    assert [a.shape for a in maps.cross] == [(1, 2, t, s)]
    assert translation.notes == []


def test_greedy_translation_matches_step_by_step_argmax(model: Transformer, translation: viz.Translation) -> None:
    src = torch.tensor([translation.src_ids])
    ys = translation.tgt_ids
    logits = model(src, torch.tensor([ys[:-1]]))  # (1, T, V): teacher forcing on the model's own output
    logits[..., [TGT.pad_id, TGT.sos_id]] = float("-inf")  # greedy decoding never emits these two
    assert logits.argmax(-1)[0].tolist() == ys[1:]


def test_the_encoded_sentence_is_fed_as_it_is(model: Transformer) -> None:
    result = viz.translate_sentence(model, SRC, TGT, "the cat sat on the mat")
    assert result.src_ids == SRC.encode("the cat sat on the mat")
    assert result.maps.src_tokens[0] == "the cat sat on the mat".split()
    assert [a.shape[-1] for a in result.maps.cross] == [6]
    long = viz.translate_sentence(model, SRC, TGT, " ".join(["cat"] * (MAX_LEN + 2)))
    assert long.src_ids == [SRC.stoi["cat"]] * MAX_LEN and "only the first 10 were used" in long.notes[0]
    explorer = viz.AttentionExplorer(model, SRC, TGT, sentence="the cat")
    assert explorer.result is not None and explorer.result.src_ids == SRC.encode("the cat")


def test_encode_that_adds_specials_is_not_framed_twice(model: Transformer) -> None:
    src = ToyVocab("the cat sat on a mat dog ran".split(), specials_in_encode=True)
    result = viz.translate_sentence(model, src, TGT, "the cat")
    assert result.src_ids == [1, src.stoi["the"], src.stoi["cat"], 2]


@pytest.mark.parametrize("sentence", ["", "   \n"])
def test_empty_sentence_is_a_value_error(model: Transformer, sentence: str) -> None:
    with pytest.raises(ValueError, match="sentence: empty"):
        viz.translate_sentence(model, SRC, TGT, sentence)


def test_unknown_words_become_unk_with_a_note(model: Transformer) -> None:
    result = viz.translate_sentence(model, SRC, TGT, "the zebra sat on the zebra quux")
    assert result.maps.src_tokens[0][1] == "<unk>"
    assert len(result.notes) == 1
    assert "“zebra”, “quux”" in result.notes[0] and "<unk>" in result.notes[0]


def test_long_sentence_is_cut_to_max_len_with_a_note(model: Transformer) -> None:
    words = "the cat sat on a mat the dog ran on a mat".split()  # 12 words
    result = viz.translate_sentence(model, SRC, TGT, " ".join(words))
    assert result.src_ids == SRC.encode(" ".join(words[:MAX_LEN]))
    assert any("12 tokens" in n and f"at most {MAX_LEN}" in n for n in result.notes)


def test_translate_callable_replaces_greedy_decoding(model: Transformer) -> None:
    seen = []

    def translate(src_ids: torch.Tensor) -> list[int]:
        seen.append(src_ids.tolist())
        return [TGT.sos_id, TGT.stoi["chat"], TGT.stoi["assis"], TGT.eos_id]

    result = viz.translate_sentence(model, SRC, TGT, "the cat", translate=translate)
    assert seen == [[[SRC.stoi["the"], SRC.stoi["cat"]]]]
    assert result.output_text(TGT) == "chat assis"
    assert result.maps.tgt_tokens[0] == ["<sos>", "chat", "assis"]  # <eos> is produced, not read


def test_translate_callable_may_return_a_batch_tensor(model: Transformer) -> None:
    ids = torch.tensor([[TGT.sos_id, TGT.stoi["chat"], TGT.eos_id]])  # (1, T), as a batched decoder returns

    result = viz.translate_sentence(model, SRC, TGT, "the cat", translate=lambda src_ids: ids)
    assert result.tgt_ids == ids[0].tolist() and result.output_text(TGT) == "chat"


def test_translate_sentence_checks_its_arguments(model: Transformer) -> None:
    with pytest.raises(TypeError, match="model: expected a transformer_lib.models.Transformer, got str"):
        viz.translate_sentence("model", SRC, TGT, "the cat")
    with pytest.raises(TypeError, match="sentence: expected a str, got int"):
        viz.translate_sentence(model, SRC, TGT, 3)


# --- attention figures -------------------------------------------------------------------------


def test_attention_figure_one_head_holds_its_weights(translation: viz.Translation) -> None:
    maps = translation.maps
    fig = viz.attention_figure(maps, "cross", 0, 1)
    assert len(fig.data) == 1
    z = np.array(fig.data[0].z)
    np.testing.assert_allclose(z, maps.cross[0][0, 1].numpy(), atol=5e-5)
    np.testing.assert_allclose(z.sum(axis=1), 1.0, atol=1e-3)  # every query's weights sum to 1
    assert list(fig.layout.xaxis.ticktext) == [html.escape(t) for t in maps.src_tokens[0]]
    assert list(fig.layout.yaxis.ticktext) == [html.escape(t) for t in maps.tgt_tokens[0]]
    assert fig.layout.yaxis.ticktext[0] == "&lt;sos&gt;"  # plotly would drop "<sos>" as an HTML tag


def test_attention_figure_all_heads_is_a_grid(translation: viz.Translation) -> None:
    fig = viz.attention_figure(translation.maps, "encoder_self", 1, "all")
    assert len(fig.data) == 2
    for h, trace in enumerate(fig.data):
        np.testing.assert_allclose(trace.z, translation.maps.encoder_self[1][0, h].numpy(), atol=5e-5)
    assert {trace.xaxis for trace in fig.data} == {"x", "x2"}


@pytest.mark.parametrize(("kwargs", "message"), [
    (dict(kind="self"), "kind: expected one of"),
    (dict(kind="decoder_self", layer=1), r"layer: expected an int in \[0, 1\) for decoder_self, got 1"),
    (dict(head=2), r"head: expected \"all\" or an int in \[0, 2\), got 2"),
    (dict(head="every"), "head: expected"),
])
def test_attention_figure_names_the_bad_argument(translation: viz.Translation, kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        viz.attention_figure(translation.maps, **kwargs)


def test_attention_menu_figure_precomputes_every_layer_and_head(translation: viz.Translation) -> None:
    maps = translation.maps
    fig = viz.attention_menu_figure(maps)
    layers = [("encoder_self", 0), ("encoder_self", 1), ("decoder_self", 0), ("cross", 0)]
    assert len(fig.data) == len(layers)
    assert [trace.visible for trace in fig.data] == [False, False, False, True]  # opens on the last cross-attention
    kind_menu, head_menu = fig.layout.updatemenus
    assert len(kind_menu.buttons) == len(layers) and kind_menu.active == 3
    assert list(fig.layout.xaxis.ticktext) == [html.escape(t) for t in maps.src_tokens[0]]
    for i, button in enumerate(kind_menu.buttons):
        assert button.args[0]["visible"] == [j == i for j in range(len(layers))]
        kind = layers[i][0]
        keys = maps.src_tokens[0] if kind != "decoder_self" else maps.tgt_tokens[0]
        assert button.args[1]["xaxis.ticktext"] == [html.escape(t) for t in keys]
    assert len(head_menu.buttons) == 2
    for h, button in enumerate(head_menu.buttons):
        assert button.method == "restyle" and list(button.args[1]) == [0, 1, 2, 3]
        for z, (kind, layer) in zip(button.args[0]["z"], layers, strict=True):
            np.testing.assert_allclose(z, getattr(maps, kind)[layer][0, h].numpy(), atol=5e-5)


def test_attention_heads_menu_figure_shows_one_layer_at_a_time(translation: viz.Translation) -> None:
    fig = viz.attention_heads_menu_figure(translation.maps)
    assert len(fig.data) == 4 * 2  # (kind, layer) pairs x heads
    (menu,) = fig.layout.updatemenus
    assert len(menu.buttons) == 4 and menu.active == 3
    assert [j for j, trace in enumerate(fig.data) if trace.visible] == [6, 7]
    for i, button in enumerate(menu.buttons):
        visible = button.args[0]["visible"]
        assert [j for j, v in enumerate(visible) if v] == [2 * i, 2 * i + 1]
        assert "xaxis2.ticktext" in button.args[1]


# --- showing figures ---------------------------------------------------------------------------


def test_figure_mimebundle_has_lab_and_book_forms_without_plotly_js() -> None:
    fig = go.Figure(go.Heatmap(z=[[0.0, 1.0]]), layout=dict(title=dict(text="a <b>title</b>"), height=300))
    bundle = viz.figure_mimebundle(fig)
    assert bundle[viz.PLOTLY_MIMETYPE]["data"][0]["type"] == "heatmap"
    page = bundle["text/html"]
    assert "Plotly.newPlot" in page and "<script src" not in page and len(page) < 50_000  # no plotly.js bundle inside
    assert "height:300px" in page
    assert bundle["text/plain"] == "<plotly figure: a  title>"


def test_figure_div_ids_are_repeatable_and_unique_on_a_page() -> None:
    fig = go.Figure(go.Scatter(y=[3, 1, 2]))
    first, second = (viz.figure_mimebundle(fig)["text/html"] for _ in range(2))
    ids = [page.split('id="')[1].split('"')[0] for page in (first, second)]
    assert ids[0] != ids[1] and ids[0].rsplit("-", 1)[0] == ids[1].rsplit("-", 1)[0]
    digest = ids[0].split("-")[1]
    assert digest == viz._div_id(pio.to_json(viz.rounded_numbers(fig.to_dict()), validate=False)).split("-")[1]


def test_figure_numbers_are_stored_to_four_significant_digits() -> None:
    """What the notebook stores, and nbval compares on the reader's machine, must not carry the last
    digits of a float: those differ between CPUs."""
    z = np.array([[0.123456789, 2.0 / 3.0], [1e-20 / 3.0, -12345.678]])
    fig = go.Figure(go.Heatmap(z=z, x=np.arange(2), text=[["a", "b"], ["c", "d"]]))
    fig.update_layout(title="t", xaxis_range=[0.1234567, 1.0])
    stored = viz.figure_mimebundle(fig)["application/vnd.plotly.v1+json"]
    assert stored["data"][0]["z"] == [[0.1235, 0.6667], [3.333e-21, -12350.0]]  # numpy arrays, sent as base64
    assert stored["data"][0]["x"] == [0, 1] and stored["data"][0]["text"] == [["a", "b"], ["c", "d"]]
    assert stored["layout"]["xaxis"]["range"] == [0.1235, 1.0]
    # two values that differ in the 12th digit, as on two CPUs, are stored the same
    nudged = go.Figure(go.Heatmap(z=z * (1 + 1e-12), x=np.arange(2), text=[["a", "b"], ["c", "d"]]))
    nudged.update_layout(title="t", xaxis_range=[0.1234567, 1.0])
    assert viz.figure_mimebundle(nudged)["application/vnd.plotly.v1+json"] == stored
    assert viz.rounded_numbers([True, 3, "x", None, float("inf")]) == [True, 3, "x", None, float("inf")]


def test_use_book_renderer_makes_figures_display_in_both_forms() -> None:
    before = pio.renderers.default
    try:
        viz.use_book_renderer()
        bundle = go.Figure(go.Bar(y=[1, 2]))._repr_mimebundle_()
        assert {viz.PLOTLY_MIMETYPE, "text/html"} <= set(bundle)
        assert "Plotly.newPlot" in bundle["text/html"]
    finally:
        pio.renderers.default = before


# --- the attention explorer --------------------------------------------------------------------


def _outputs(explorer: viz.AttentionExplorer) -> list[dict]:
    return list(explorer.figure.outputs)


def test_explorer_draws_the_translation(model: Transformer) -> None:
    explorer = viz.AttentionExplorer(model, SRC, TGT, sentence="the cat sat")
    (output,) = _outputs(explorer)
    figure = output["data"][viz.PLOTLY_MIMETYPE]
    assert len(figure["data"]) == 2  # cross-attention, all heads
    assert "Plotly.newPlot" in output["data"]["text/html"]
    assert explorer.messages.value == ""
    assert "Model output:" in explorer.output_text.value


def test_explorer_controls_switch_kind_layer_and_head(model: Transformer) -> None:
    explorer = viz.AttentionExplorer(model, SRC, TGT, sentence="the cat sat")
    explorer.kind.value = "encoder_self"
    assert [value for _, value in explorer.layer.options] == [0, 1]
    assert explorer.layer.value == 1  # the last layer until the reader picks one
    explorer.layer.value = 0
    explorer.kind.value = "cross"
    explorer.kind.value = "encoder_self"
    assert explorer.layer.value == 0  # the reader's choice is kept
    explorer.layer.value = 1
    explorer.head.value = 0
    figure = _outputs(explorer)[0]["data"][viz.PLOTLY_MIMETYPE]
    assert len(figure["data"]) == 1 and "encoder self-attention, layer 2, head 1" in figure["layout"]["title"]["text"]
    explorer.kind.value = "decoder_self"  # one decoder layer: the layer choice must follow
    assert explorer.layer.options == (("layer 1", 0),) and explorer.layer.value == 0
    title = _outputs(explorer)[0]["data"][viz.PLOTLY_MIMETYPE]["layout"]["title"]["text"]
    assert "decoder self-attention, layer 1" in title


def test_explorer_empty_sentence_says_so_and_clears_the_figure(model: Transformer) -> None:
    explorer = viz.AttentionExplorer(model, SRC, TGT, sentence="the cat")
    explorer.sentence.value = "  "
    assert "Type a sentence" in explorer.messages.value
    assert _outputs(explorer) == [] and explorer.output_text.value == ""


def test_explorer_unknown_words_are_shown_as_a_warning(model: Transformer) -> None:
    explorer = viz.AttentionExplorer(model, SRC, TGT, sentence="the zebra sat")
    assert "tc-warning" in explorer.messages.value
    assert "“zebra”" in explorer.messages.value and "&lt;unk&gt;" in explorer.messages.value
    assert len(_outputs(explorer)) == 1  # still drawn


def test_explorer_long_sentence_is_reported(model: Transformer) -> None:
    explorer = viz.AttentionExplorer(model, SRC, TGT, sentence=" ".join(["cat"] * 20))
    assert f"reads at most {MAX_LEN}" in explorer.messages.value
    assert len(_outputs(explorer)) == 1


def test_explorer_turns_any_failure_into_a_message(model: Transformer) -> None:
    def broken(src_ids: torch.Tensor) -> list[int]:
        raise RuntimeError("decoder exploded")

    explorer = viz.AttentionExplorer(model, SRC, TGT, sentence="the cat", translate=broken)  # must not raise
    assert "Something went wrong (RuntimeError: decoder exploded)" in explorer.messages.value
    explorer.sentence.value = "the mat"  # and it keeps working
    assert "decoder exploded" in explorer.messages.value
    explorer.translate = None
    explorer.button.click()
    assert explorer.messages.value == "" and len(_outputs(explorer)) == 1


def test_explorer_rejects_a_model_that_is_not_a_transformer() -> None:
    with pytest.raises(TypeError, match="model: expected"):
        viz.AttentionExplorer(object(), SRC, TGT)


# --- positional encodings ----------------------------------------------------------------------


def test_positional_encoding_figure_panels_hold_the_table() -> None:
    fig = viz.positional_encoding_figure(d_model=16, dims=(2, 5), positions=(3, 20))
    table = sinusoidal_table(21, 16)[3:].numpy()
    waves, heatmap, similarity, rope = fig.data[:4], fig.data[4], fig.data[5], fig.data[6]
    assert len(fig.data) == 7
    for dim, trace in zip(range(2, 6), waves, strict=True):
        np.testing.assert_allclose(trace.y, table[:, dim], atol=1e-6)
        assert list(trace.x) == list(range(3, 21))
    np.testing.assert_allclose(heatmap.z, table, atol=1e-6)
    np.testing.assert_allclose(similarity.z, table @ table.T, atol=1e-4)
    np.testing.assert_allclose(rope.z, viz.rope_scores(16, (3, 20)), atol=1e-6)


def test_sinusoidal_and_rope_scores_depend_on_the_offset_only() -> None:
    scores = viz.rope_scores(16, (5, 30))
    table = sinusoidal_table(31, 16)[5:].numpy()
    for matrix in (scores, table @ table.T):
        for offset in range(-5, 6):
            diagonal = np.diagonal(matrix, offset)
            np.testing.assert_allclose(diagonal, diagonal[0], atol=1e-4)
    assert not np.allclose(np.diagonal(scores, 0)[0], np.diagonal(scores, 3)[0])


@pytest.mark.parametrize(("kwargs", "error", "message"), [
    (dict(d_model=15), ValueError, "d_model: expected an even number"),
    (dict(d_model=0), ValueError, "d_model: expected a positive int"),
    (dict(dims=(3, 2)), ValueError, r"dims: expected 0 <= first <= last <= 63, got \(3, 2\)"),
    (dict(dims=(0, 30)), ValueError, "dims: at most 16 waves"),
    (dict(positions=(0, 10_000)), ValueError, "positions: expected 0 <= first <= last <= 512"),
    (dict(positions=5), TypeError, "positions: expected a \\(first, last\\) pair of ints, got 5"),
])
def test_positional_encoding_figure_names_the_bad_argument(kwargs: dict, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        viz.positional_encoding_figure(**kwargs)


def test_positional_waves_menu_figure_slides_over_dimension_pairs() -> None:
    fig = viz.positional_waves_menu_figure(d_model=8, positions=(0, 30))
    table = sinusoidal_table(31, 8).numpy()
    assert len(fig.data) == 8
    np.testing.assert_allclose(fig.data[5].y, table[:, 5], atol=1e-6)
    (slider,) = fig.layout.sliders
    assert len(slider.steps) == 4
    assert slider.steps[2].args[0]["visible"] == [False] * 4 + [True, True] + [False] * 2
    assert [t.visible for t in fig.data] == [True, True] + [False] * 6


def test_positional_encoding_menu_figure_slides_over_d_model() -> None:
    fig = viz.positional_encoding_menu_figure(d_models=(8, 16), positions=(0, 12))
    assert len(fig.data) == 6
    assert np.array(fig.data[3].z).shape == (13, 16)
    (slider,) = fig.layout.sliders
    assert [s.label for s in slider.steps] == ["8", "16"]
    assert slider.steps[1].args[0]["visible"] == [False] * 3 + [True] * 3
    with pytest.raises(TypeError, match="d_models: expected a non-empty sequence"):
        viz.positional_encoding_menu_figure(d_models=16)


def test_positional_explorer_reports_bad_choices_and_keeps_working() -> None:
    explorer = viz.PositionalEncodingExplorer(d_model=32, dims=(0, 3), positions=(0, 20))
    assert len(explorer.figure.outputs) == 1 and explorer.messages.value == ""
    explorer.dims.value = (0, 31)  # 32 waves: too many for one plot
    assert "At most 16 waves" in explorer.messages.value
    explorer.dims.value = (4, 9)
    assert explorer.messages.value == ""
    figure = explorer.figure.outputs[0]["data"][viz.PLOTLY_MIMETYPE]
    names = [f"dim {d} ({'sin' if d % 2 == 0 else 'cos'})" for d in range(4, 10)]
    assert [t["name"] for t in figure["data"][:6]] == names
    explorer.d_model.value = 6  # the dimension range follows the smaller d_model
    assert explorer.dims.max == 5 and explorer.messages.value == ""


# --- bertviz -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def even_translation() -> viz.Translation:
    """bertviz needs as many decoder as encoder layers."""
    torch.manual_seed(1)
    config = TransformerConfig(src_vocab_size=len(SRC.itos), tgt_vocab_size=len(TGT.itos), d_model=16, n_heads=2,
                               n_encoder_layers=2, n_decoder_layers=2, d_ff=32, dropout=0.0, max_len=MAX_LEN)
    return viz.translate_sentence(Transformer(config).eval(), SRC, TGT, "the cat sat on the mat")


def test_bertviz_refuses_unequal_depths_clearly(translation: viz.Translation) -> None:
    with pytest.raises(ValueError, match="maps: bertviz needs as many encoder as decoder layers, got 2 encoder and 1"):
        viz.bertviz_head_view(translation.maps)


@pytest.mark.parametrize("view", [viz.bertviz_head_view, viz.bertviz_model_view])
def test_bertviz_book_form_loads_nothing_from_another_host(even_translation: viz.Translation, view) -> None:
    page = view(even_translation.maps, assets="book").data
    assert "cdnjs" not in page and "require.config" not in page and "require.min.js" not in page
    urls = [line for line in page.splitlines() if "://" in line]
    assert all(line.lstrip().startswith("*") for line in urls), urls  # only in bertviz's comments
    assert '"jquery/jquery.min.js"' in page and '"d3/d3.min.js"' in page and "data-content_root" in page
    assert json.dumps(even_translation.maps.src_tokens[0])[1:-1] in page  # bertviz's own parameters are there
    root_id = page.split('id="bertviz-')[1].split('"')[0]
    assert page.count(f"bertviz-{root_id}") >= 2  # the div and the script agree on the (repeatable) id


def test_bertviz_inline_form_carries_d3_and_jquery(even_translation: viz.Translation) -> None:
    page = viz.bertviz_head_view(even_translation.maps, assets="inline").data
    assert "d3js.org" in page and "jQuery v3.7.1" in page
    assert "https://cdnjs" not in page and "_static/vendor" not in page


def test_bertviz_assets_follow_the_book_build_variable(even_translation: viz.Translation, monkeypatch) -> None:
    monkeypatch.setenv(viz.BOOK_BUILD_ENV, "1")
    assert "data-content_root" in viz.bertviz_head_view(even_translation.maps).data
    monkeypatch.delenv(viz.BOOK_BUILD_ENV)
    assert "d3js.org" in viz.bertviz_head_view(even_translation.maps).data
    with pytest.raises(ValueError, match="assets: expected one of"):
        viz.bertviz_head_view(even_translation.maps, assets="cdn")
