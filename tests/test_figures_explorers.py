"""The two ipywidgets explorers, driven without a browser: their controls are set from Python."""

from __future__ import annotations

import html
import re

import pytest

from transformer_lib.browser import explorers
from transformer_lib.browser.explorers import AttentionExplorer, PositionalEncodingExplorer
from transformer_lib.browser.theme import MESSAGES
from transformer_lib.capture import capture_translation
from transformer_lib.decoding import translate
from transformer_lib.figures.display import PLOTLY_MIMETYPE
from transformer_lib.models import Transformer

from .toy_translation import MAX_LEN, SRC, TGT, toy_model


@pytest.fixture(scope="module")
def model() -> Transformer:
    return toy_model()


def test_explorer_reads_the_sentence_as_typed(model: Transformer) -> None:
    explorer = AttentionExplorer(model, SRC, TGT, sentence="the cat")
    assert explorer.result is not None and explorer.result.src_ids == SRC.encode("the cat")


# --- the attention explorer --------------------------------------------------------------------


def _outputs(explorer: AttentionExplorer) -> list[dict]:
    return list(explorer.figure.outputs)


def test_explorer_draws_the_translation(model: Transformer) -> None:
    explorer = AttentionExplorer(model, SRC, TGT, sentence="the cat sat")
    (output,) = _outputs(explorer)
    figure = output["data"][PLOTLY_MIMETYPE]
    assert len(figure["data"]) == 2  # cross-attention, all heads
    assert "Plotly.newPlot" in output["data"]["text/html"]
    assert explorer.messages.value == ""
    assert "Model output:" in explorer.output_text.value


def test_explorer_controls_switch_kind_layer_and_head(model: Transformer) -> None:
    explorer = AttentionExplorer(model, SRC, TGT, sentence="the cat sat")
    explorer.kind.value = "encoder_self"
    assert [value for _, value in explorer.layer.options] == [0, 1]
    assert explorer.layer.value == 1  # the last layer until the reader picks one
    explorer.layer.value = 0
    explorer.kind.value = "cross"
    explorer.kind.value = "encoder_self"
    assert explorer.layer.value == 0  # the reader's choice is kept
    explorer.layer.value = 1
    explorer.head.value = 0
    figure = _outputs(explorer)[0]["data"][PLOTLY_MIMETYPE]
    assert len(figure["data"]) == 1 and "encoder self-attention, layer 2, head 1" in figure["layout"]["title"]["text"]
    explorer.kind.value = "decoder_self"  # one decoder layer: the layer choice must follow
    assert explorer.layer.options == (("layer 1", 0),) and explorer.layer.value == 0
    title = _outputs(explorer)[0]["data"][PLOTLY_MIMETYPE]["layout"]["title"]["text"]
    assert "decoder self-attention, layer 1" in title


def test_explorer_empty_sentence_says_so_and_clears_the_figure(model: Transformer) -> None:
    explorer = AttentionExplorer(model, SRC, TGT, sentence="the cat")
    explorer.sentence.value = "  "
    assert "Type a sentence" in explorer.messages.value
    assert _outputs(explorer) == [] and explorer.output_text.value == ""


def test_explorer_unknown_words_are_shown_as_a_warning(model: Transformer) -> None:
    explorer = AttentionExplorer(model, SRC, TGT, sentence="the zebra sat")
    assert "tc-warning" in explorer.messages.value
    assert "“zebra”" in explorer.messages.value and "&lt;unk&gt;" in explorer.messages.value
    assert len(_outputs(explorer)) == 1  # still drawn


def test_explorer_long_sentence_is_reported(model: Transformer) -> None:
    explorer = AttentionExplorer(model, SRC, TGT, sentence=" ".join(["cat"] * 20))
    assert f"reads at most {MAX_LEN}" in explorer.messages.value
    assert len(_outputs(explorer)) == 1


def test_explorer_turns_any_failure_into_a_message(model: Transformer, monkeypatch) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("decoder exploded")

    with monkeypatch.context() as patch:
        patch.setattr(explorers, "translate", broken)
        explorer = AttentionExplorer(model, SRC, TGT, sentence="the cat")  # must not raise
        assert "Something went wrong (RuntimeError: decoder exploded)" in explorer.messages.value
        explorer.sentence.value = "the mat"  # and it keeps working
        assert "decoder exploded" in explorer.messages.value
    explorer.button.click()
    assert explorer.messages.value == "" and len(_outputs(explorer)) == 1


def test_explorer_shows_what_decoding_translate_gives(model: Transformer) -> None:
    for beam_size in (1, 3):
        explorer = AttentionExplorer(model, SRC, TGT, sentence="the cat sat", beam_size=beam_size)
        expected = translate(model, "the cat sat", SRC, TGT, beam_size=beam_size)
        assert explorer.result == expected
        assert explorer.maps.tgt_tokens == capture_translation(model, expected, SRC, TGT).tgt_tokens
        assert html.escape(expected.text) in explorer.output_text.value


def test_explorer_rejects_a_model_that_is_not_a_transformer() -> None:
    with pytest.raises(TypeError, match="model: expected"):
        AttentionExplorer(object(), SRC, TGT)

# --- the positional-encoding explorer ------------------------------------------------------------


def test_positional_explorer_reports_bad_choices_and_keeps_working() -> None:
    explorer = PositionalEncodingExplorer(d_model=32, dims=(0, 3), positions=(0, 20))
    assert len(explorer.figure.outputs) == 1 and explorer.messages.value == ""
    explorer.dims.value = (0, 31)  # 32 waves: too many for one plot
    assert "Dimensions 0 to 31 are 32 waves; at most 16 fit in one plot" in explorer.messages.value
    assert re.search(r"choose a shorter range\.</div>", explorer.messages.value)  # a sentence, with its full stop
    assert explorer.messages.value.endswith(f"{MESSAGES['stale']}</div>")  # the figure that stays is the last good one
    explorer.dims.value = (4, 9)
    assert explorer.messages.value == ""
    figure = explorer.figure.outputs[0]["data"][PLOTLY_MIMETYPE]
    names = [f"dim {d} ({'sin' if d % 2 == 0 else 'cos'})" for d in range(4, 10)]
    assert [t["name"] for t in figure["data"][:6]] == names
    explorer.d_model.value = 6  # the dimension range follows the smaller d_model
    assert explorer.dims.max == 5 and explorer.messages.value == ""


