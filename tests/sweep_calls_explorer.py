"""Valid calls for the bad-input sweep (tests/test_bad_input_sweep.py), for the explorer modules: "module.name" ->
a function returning (the callable, a dict of valid keyword arguments); EXEMPT: "module.name" -> why it is not
swept (where else its arguments are tested)."""

from __future__ import annotations

import torch

from transformer_lib import capture, decoding, decoding_steps, models
from transformer_lib.browser import live, model_explorer
from transformer_lib.config import TransformerConfig
from transformer_lib.figures import activations, architecture, positions
from transformer_lib.figures import decoding_steps as step_figures
from transformer_lib.tokenization import Vocab
from transformer_lib.vocabulary import SpecialIds

VOCAB = Vocab(["the", "cat", "sat", "on", "a", "mat", "dog", "ran"])  # 12 tokens with the four specials
CONFIG = TransformerConfig(src_vocab_size=12, tgt_vocab_size=12, d_model=8, n_heads=2, n_encoder_layers=1,
                           n_decoder_layers=1, d_ff=16, dropout=0.0, max_len=16)
torch.manual_seed(0)
MODEL = models.Transformer(CONFIG).eval()
SRC, TGT = torch.tensor([[4, 5, 6]]), torch.tensor([[1, 4]])
TRANSLATION = decoding.translate(MODEL, "the cat", VOCAB, VOCAB, max_len=3)
FOUND = capture.capture_activations(MODEL, TRANSLATION, VOCAB, VOCAB)
NAMES = list(FOUND.blocks)
WEIGHTS = "decoder.0.self_attn.weights"  # a row per head over the keys
LAYER = next(b for b in architecture.architecture_blocks(MODEL) if b.name == "encoder.layers.0")
TRACE = decoding_steps.trace_decoding(MODEL, SRC, VOCAB.itos, special=SpecialIds(1, 2), max_len=3, beam_size=2)
BEAM = TRACE.steps[0]["beams"][0]

CALLS: dict = {
    "browser.model_explorer.block_label": lambda: (model_explorer.block_label, dict(name=WEIGHTS)),
    "browser.model_explorer.block_paths": lambda: (model_explorer.block_paths, dict(model=MODEL)),
    "browser.model_explorer.explorer_svg": lambda: (model_explorer.explorer_svg, dict(model=MODEL,
                                                                                      chosen=WEIGHTS)),
    "capture.capture_model_activations": lambda: (capture.capture_model_activations, dict(
        model=MODEL, src_ids=SRC.clone(), tgt_ids=TGT.clone())),
    "capture.capture_activations": lambda: (capture.capture_activations, dict(
        model=MODEL, translation=TRANSLATION, src_vocab=VOCAB, tgt_vocab=VOCAB)),
    "browser.live.message": lambda: (live.message, dict(text="a note", level="warning")),
    "figures.positions.positions_note": lambda: (positions.positions_note, dict(positions=(3, 3))),
    "browser.live.sentence_case": lambda: (live.sentence_case, dict(text="expected a word")),
    "figures.activations.stage_of": lambda: (activations.stage_of, dict(name=WEIGHTS)),
    "figures.activations.token_path": lambda: (activations.token_path, dict(names=list(NAMES), side="target")),
    "figures.activations.group_of": lambda: (activations.group_of, dict(name=WEIGHTS)),
    "figures.activations.keys_of": lambda: (activations.keys_of, dict(
        name=WEIGHTS, src_tokens=list(FOUND.src_tokens), tgt_tokens=list(FOUND.tgt_tokens))),
    "figures.activations.panel_title": lambda: (activations.panel_title, dict(
        name=WEIGHTS, side="target", token="the", position=0, shape=(2, 2), whole=(2, 2, 2), extra="")),
    "figures.activations.activation_panel": lambda: (activations.activation_panel, dict(
        blocks=dict(FOUND.blocks), src_tokens=list(FOUND.src_tokens), tgt_tokens=list(FOUND.tgt_tokens),
        name=WEIGHTS, side="target", position=0, head=1)),
    "figures.architecture.block_groups": lambda: (architecture.block_groups, dict(block=LAYER)),
    "figures.decoding_steps.total_log_prob": lambda: (step_figures.total_log_prob, dict(beam=dict(BEAM),
                                                                                        probability=0.5)),
    "figures.decoding_steps.beam_rule_html": lambda: (step_figures.beam_rule_html, dict(trace=TRACE)),
    # the widget: its arguments are checked; what the reader does after becomes a message in it
    "browser.model_explorer.ModelExplorer": lambda: (model_explorer.ModelExplorer, dict(
        model=MODEL, src_vocab=VOCAB, tgt_vocab=VOCAB, sentence="the cat")),
    "browser.model_explorer.ModelExplorer.go": lambda: (model_explorer.ModelExplorer(MODEL, VOCAB, VOCAB,
                                                                                     "the cat").go, dict(step=1)),
}
EXEMPT: dict[str, str] = {
    # the explorers' own helpers, given their widgets by the explorer: swept through every explorer above
    "browser.live.show_in": "draws a figure into an explorer's ipywidgets.Output (tests/test_figures_explorers.py)",
    "browser.live.stale_note": "reads an explorer's ipywidgets.Output figures (tests/test_live_lm.py)",
    # as validation's checks: it reports the name it is given; swept through every caller above
    "figures.activations.check_block_name": "a check that reports the name it is given (as validation's); "
                                            "swept through block_label, group_of, keys_of, panel_title, explorer_svg",
}
