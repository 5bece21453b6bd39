"""The replay's snapshots of the book's Transformer (``pretrained.snapshots``), loaded in Python.

The page's side (the same floats from the page's files, the same translations and maps in
Chromium) is tests/test_replay_page.py."""

from __future__ import annotations

import json
import shutil

import pytest
import torch
from safetensors.torch import load_file

from transformer_lib.browser.explorers import AttentionExplorer
from transformer_lib.corpus import make_corpus
from transformer_lib.evaluation import evaluate_translation
from transformer_lib.figures.training import replay_curve_figure
from transformer_lib.models import Transformer
from transformer_lib.pretrained import BOOK_RECIPE, book_model, book_vocabularies, snapshot_steps
from transformer_lib.pretrained.shipped import WEIGHTS_DIR, ShippedModelError
from transformer_lib.pretrained.snapshots import (
    SCALE_SUFFIX,
    choose_steps,
    dequantize,
    excess_change,
    quantize,
    snapshot_file,
    snapshot_record,
)

STEPS = snapshot_steps()


def test_the_steps_run_from_the_initial_weights_to_the_shipped_model():
    assert STEPS == sorted(set(STEPS)) and STEPS[0] == 0 and STEPS[-1] == BOOK_RECIPE.training.steps
    assert 6 <= len(STEPS) <= 10
    record = snapshot_record()
    assert record["shipped_step"] == BOOK_RECIPE.training.steps
    assert record["recipe"]["seed"] == BOOK_RECIPE.seed and record["recipe"]["steps"] == BOOK_RECIPE.training.steps
    # the steps are the ones the rule picks from the recorded change of the maps
    change = record["change"]
    excess, floor = excess_change([0, *change["steps"]], change["values"], change["settled_from"])
    assert floor > 0 and change["floor_per_step"] == pytest.approx(floor, abs=1e-8)
    assert choose_steps([0, *change["steps"]], excess, len(STEPS)) == STEPS
    curve = record["curve"]
    assert len(curve["train_loss"]) == BOOK_RECIPE.training.steps
    assert curve["train_loss"] == book_model().extra["losses"]  # the shipped model's own run
    assert len(curve["valid_steps"]) == len(curve["valid_loss"]) and set(STEPS) <= set(curve["valid_steps"])


def test_the_last_step_is_the_shipped_model():
    shipped, last = book_model(), book_model(step=STEPS[-1])
    for (name, a), (_, b) in zip(shipped.model.state_dict().items(), last.model.state_dict().items(), strict=True):
        assert torch.equal(a, b), name


@pytest.mark.parametrize("step", STEPS[:-1])
def test_a_snapshot_holds_its_files_dequantized_floats(step):
    checkpoint = book_model(step=step)
    assert checkpoint.extra["step"] == step and isinstance(checkpoint.model, Transformer)
    assert not checkpoint.model.training
    stored = load_file(WEIGHTS_DIR / snapshot_file(step))
    expected = dequantize(stored)
    for name, value in checkpoint.model.state_dict().items():
        assert value.dtype == torch.float32
        assert torch.equal(value, expected[name]), name
        if value.dim() >= 2:
            assert stored[name].dtype == torch.int8 and stored[name + SCALE_SUFFIX].dtype == torch.float32
    float64 = book_model(step=step, dtype=torch.float64).model.state_dict()
    for name, value in float64.items():
        assert value.dtype == torch.float64 and torch.equal(value, expected[name].double()), name


def test_step_0_is_the_recipes_initial_model():
    """Initialisation draws from the seeded generator elementwise: the same on every CPU."""
    corpus = make_corpus(BOOK_RECIPE.seed, n_pairs=BOOK_RECIPE.n_pairs)
    src_vocab, tgt_vocab = book_vocabularies(corpus)
    torch.manual_seed(BOOK_RECIPE.seed)
    initial = Transformer(BOOK_RECIPE.config(len(src_vocab), len(tgt_vocab)))
    expected = dequantize(quantize(initial.state_dict()))
    got = book_model(step=0).model.state_dict()
    for name, value in got.items():
        assert torch.equal(value, expected[name]), name


def test_quantized_rows_are_within_half_a_step_of_the_floats():
    weights = book_model().model.state_dict()
    stored = quantize(weights)
    back = dequantize(stored)
    for name, value in weights.items():
        if value.dim() < 2:
            assert torch.equal(back[name], value)
            continue
        scale = stored[name + SCALE_SUFFIX]  # (rows,)
        error = (back[name] - value).abs().reshape(value.shape[0], -1).amax(dim=1)
        assert torch.all(error <= scale * 0.5 + 1e-6 * scale), name
        assert stored[name].abs().amax() == 127


def test_the_replay_learns():
    """The story the replay tells: nothing translated at step 0, the target reached at the end."""
    corpus = make_corpus(BOOK_RECIPE.seed, n_pairs=BOOK_RECIPE.n_pairs)
    pairs = corpus.test[:200]
    scores = []
    for step in STEPS:
        ck = book_model(step=step)
        scores.append(evaluate_translation(ck.model, pairs, ck.src_vocab, ck.tgt_vocab).exact_match)
    assert scores[0] == 0.0 and scores[-1] >= BOOK_RECIPE.target_exact_match
    assert max(scores[:-1]) < 1.0


def test_choose_steps_is_dense_where_the_change_is_fast():
    steps = list(range(0, 101, 10))
    assert choose_steps(steps, [1.0] * 10, 6) == [0, 20, 40, 60, 80, 100]
    fast_start = [5.0, 5.0, 1.0, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5]
    chosen = choose_steps(steps, fast_start, 5)
    assert chosen[0] == 0 and chosen[-1] == 100 and chosen[1:3] == [10, 20]
    with pytest.raises(ValueError, match="changes: expected one per interval"):
        choose_steps(steps, [1.0] * 9, 5)


def test_excess_change_keeps_what_rises_above_the_settled_jitter():
    steps = [0, 5, 10, 20, 30, 40]
    changes = [0.5, 0.25, 0.2, 0.1, 0.1]  # per step: 0.1, 0.05, 0.02, 0.01, 0.01
    excess, floor = excess_change(steps, changes, settled_from=20)
    assert floor == pytest.approx(0.01)
    assert excess == pytest.approx([0.45, 0.2, 0.1, 0.0, 0.0])
    with pytest.raises(ValueError, match="settled_from: expected a step before the last"):
        excess_change(steps, changes, settled_from=40)


@pytest.mark.parametrize(("step", "error", "message"), [
    (7, ValueError, r"step: expected one of \[0, .*\], got 7"),
    (-1, ValueError, r"step: expected one of"),
    ("0", TypeError, r"step: expected an int, got"),
    (True, TypeError, r"step: expected an int, got"),
    (100.0, TypeError, r"step: expected an int, got"),
])
def test_a_bad_step_is_named(step, error, message):
    with pytest.raises(error, match=message):
        book_model(step=step)


def test_a_changed_snapshot_byte_is_refused(tmp_path):
    directory = tmp_path / "weights"
    shutil.copytree(WEIGHTS_DIR, directory)
    path = directory / snapshot_file(STEPS[1])
    data = bytearray(path.read_bytes())
    data[-1] ^= 1
    path.write_bytes(bytes(data))
    with pytest.raises(ShippedModelError, match=rf"{snapshot_file(STEPS[1])}: SHA-256 is"):
        book_model(step=STEPS[1], directory=directory)
    book_model(step=STEPS[2], directory=directory)  # the others still load


def test_replay_curve_figure_marks_the_step_with_a_line_and_a_label():
    record = snapshot_record()
    fig = replay_curve_figure(record["curve"], STEPS, STEPS[2])
    layout = fig.layout
    assert layout.title.text and layout.xaxis.title.text == "training step" and "loss" in layout.yaxis.title.text
    (line,) = layout.shapes
    assert line.x0 == line.x1 == STEPS[2] and line.line.dash == "dash"
    (label,) = layout.annotations
    assert label.text == f"step {STEPS[2]}" and label.x == STEPS[2]
    snapshots = fig.data[2]
    assert list(snapshots.x) == STEPS and snapshots.marker.symbol == "diamond"
    with pytest.raises(ValueError, match=r"step: expected one of"):
        replay_curve_figure(record["curve"], STEPS, 3)
    with pytest.raises(ValueError, match=r"curve: expected lists under \['valid_loss'\]"):
        replay_curve_figure({"train_loss": [1.0], "valid_steps": [0]}, STEPS, 0)


def test_the_replay_explorer_retranslates_with_the_chosen_snapshot():
    ck = book_model()
    sentence = "the small white cars are not old"
    explorer = AttentionExplorer(ck.model, ck.src_vocab, ck.tgt_vocab, sentence=sentence, replay=True)
    assert list(explorer.replay.slider.options) == [(str(s), s) for s in STEPS]
    assert explorer.replay.slider.value == STEPS[-1]
    shipped_text = explorer.result.text
    explorer.replay.slider.value = STEPS[0]
    assert explorer.model is not ck.model and explorer.result is not None
    first = book_model(step=STEPS[0])
    from transformer_lib.decoding import translate

    assert explorer.result.tokens == translate(first.model, sentence, first.src_vocab, first.tgt_vocab).tokens
    curve = explorer.replay.curve.outputs[0]["data"]["application/vnd.plotly.v1+json"]
    assert curve["layout"]["annotations"][0]["text"] == f"step {STEPS[0]}"
    state = json.loads(explorer._repr_mimebundle_()["text/html"].split('class="tc-live-state">')[1]
                       .split("</script>")[0])
    assert state["replay"]["steps"] == STEPS and state["replay"]["step"] == STEPS[0]
    assert "template" not in state["replay"]["figure"]["layout"]
    explorer.replay.slider.value = STEPS[-1]
    assert explorer.model is ck.model and explorer.result.text == shipped_text
    explorer.sentence.value = ""
    explorer.replay.slider.value = STEPS[1]  # no sentence: a message, not a traceback
    assert "tc-info" in explorer.messages.value


def test_the_replay_explorer_refuses_another_models_vocabularies():
    from .toy_translation import SRC, TGT, toy_model

    with pytest.raises(ValueError, match="replay: replays the book's model"):
        AttentionExplorer(toy_model(), SRC, TGT, replay=True)
    with pytest.raises(TypeError, match="replay: expected True or False"):
        AttentionExplorer(toy_model(), SRC, TGT, replay="yes")
