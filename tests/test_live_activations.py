"""The page's capture (book-activations.js: window.bookModel.activations) against
``capture.capture_activations``, in Node: every block of every position within 1e-5, on 25
held-out sentences of the corpus and 6 whose translation is cut at its length limit, for the book's
model; and on small post-norm and pre-norm models (the branches the book's model does not take).
A block changed in either implementation (a missing norm, a bias, a head order) fails here."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from transformer_lib.browser.model import MANIFEST_FILE, WEIGHTS_FILE, browser_model_files
from transformer_lib.capture import capture_activations
from transformer_lib.decoding import translate
from transformer_lib.pretrained import book_corpus, book_model

from .test_live_js import _small_model, run_js
from .test_live_stepper import CUT

N_SENTENCES = 25
TOLERANCE = 1e-5


def _page_activations(model, src, tgt, sentences: list[str], tmp_path: Path) -> list[dict]:
    for name, content in browser_model_files(model, src, tgt).items():
        (tmp_path / name).write_bytes(content)
    return run_js(f"""(() => {{
      const manifest = JSON.parse(fs.readFileSync({json.dumps(str(tmp_path / MANIFEST_FILE))}, "utf8"));
      const bytes = fs.readFileSync({json.dumps(str(tmp_path / WEIGHTS_FILE))});
      const buffer = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
      const model = new window.bookModel.Model(manifest, buffer);
      return {json.dumps(sentences)}.map((s) => model.activations(s));
    }})()""", tmp_path)  # JSON writes -Infinity (a masked score) as null


def _compare(model, src, tgt, sentences: list[str], got: list[dict]) -> float:
    worst = 0.0
    for sentence, result in zip(sentences, got, strict=True):
        translation = translate(model, sentence, src, tgt)
        found = capture_activations(model, translation, src, tgt)
        assert result["tokens"] == translation.tokens and result["ended"] == translation.ended, sentence
        assert result["src_tokens"] == found.src_tokens, sentence
        assert result["decoder_tokens"] == found.tgt_tokens, sentence
        assert set(result["blocks"]) == set(found.blocks), sentence
        for name, tensor in found.blocks.items():
            reference = tensor.double().numpy()
            in_page = np.array(result["blocks"][name], dtype=np.float64)  # null -> nan
            assert in_page.shape == reference.shape, (sentence, name)
            finite = np.isfinite(reference)
            assert np.array_equal(np.isnan(in_page), ~finite), (sentence, name, "masked keys differ")
            difference = float(np.abs(in_page[finite] - reference[finite]).max())
            assert difference <= TOLERANCE, f"{sentence!r}: {name} differs by {difference:.2e}"
            worst = max(worst, difference)
    return worst


def test_the_page_captures_every_block_as_the_library(tmp_path: Path) -> None:
    checkpoint = book_model()
    model, src, tgt = checkpoint.model.eval(), checkpoint.src_vocab, checkpoint.tgt_vocab
    sentences = [s for s, _ in book_corpus().test[:N_SENTENCES]] + CUT
    got = _page_activations(model, src, tgt, sentences, tmp_path)
    cut = [translate(model, s, src, tgt) for s in CUT]
    assert not any(t.ended for t in cut)  # the cut sentences are cut
    worst = _compare(model, src, tgt, sentences, got)
    assert 0 < worst <= TOLERANCE
    print(f"largest difference over {len(sentences)} sentences: {worst:.2e}")


@pytest.mark.parametrize("norm_first", [False, True], ids=["post-norm", "pre-norm"])
def test_the_page_captures_both_norm_placements(tmp_path: Path, norm_first: bool) -> None:
    model, src, tgt = _small_model(norm_first)
    sentences = ["sa sb sc", "sd se sf sg sh", "si", "sj sk sa sa st ss"]
    got = _page_activations(model, src, tgt, sentences, tmp_path)
    _compare(model, src, tgt, sentences, got)
    assert ("encoder.final_norm" in got[0]["blocks"]) == norm_first
