"""The whole-model explorer: follow one token through every block of the book's Transformer.

``ModelExplorer`` translates the reader's sentence, captures every block's tensor in one forward
pass (``capture.capture_activations``) and shows, beside the whole-model figure
(``figures.architecture.architecture_svg(..., explorer=True)``, the chosen block outlined), the
chosen token's tensor at the chosen block (``figures.activations.activation_panel``). In JupyterLab
the block is picked from the menu or stepped with previous / next; in the static book the figure's
boxes are buttons too, and the arrow keys step (``static/model-explorer.js``, on
``window.bookModel.activations``). Odd input gets the explorers' messages, and the figure keeps
the last sentence it could read.
"""

from __future__ import annotations

import html

import ipywidgets as widgets
import torch

from ..capture import Activations, capture_activations, capture_model_activations
from ..decoding import translate
from ..figures.activations import (
    BAR_COLOR,
    HEAD_LINES,
    ROWS,
    SIDES,
    STAGE_TITLES,
    activation_panel,
    check_block_name,
    group_of,
    stage_of,
    token_path,
)
from ..figures.architecture import architecture_blocks, architecture_svg
from ..figures.display import PALETTE
from ..models import Transformer
from ..tokenization import Vocab
from ..validation import check_instance, check_int
from ..validation_models import check_model_vocab
from .explorers import read_sentence, sentence_box, step_buttons, typed_sentence_notes, wrapping_row
from .live import LiveExplorer, message, show_in, stale_note
from .page import live_explorer_html
from .theme import MESSAGES

TITLE = "The book's Transformer, opened up: pick a token, then a block"
HIGHLIGHT = PALETTE[1]  # the chosen box's outline (and its thicker stroke: not by colour alone)
# The page's panel before its first figure (in JupyterLab the kernel draws one at once).
PANEL_PROMPT = ("Choose a box of the figure below (click it, or Tab to it and press Enter): the chosen token's "
                "tensor at that block appears here, and stays in view while you scroll the figure.")


def block_label(name: str) -> str:
    return f"{name}: {STAGE_TITLES[stage_of(name)]}"


def block_paths(model: Transformer) -> dict[str, list[str]]:
    """Each side's path through the blocks (``figures.activations.token_path``): the block names
    depend on the model only, so a one-token pass finds them."""
    check_instance("model", model, Transformer, "a transformer_lib.models.Transformer")
    device = next(model.parameters()).device
    one = torch.tensor([[model.config.pad_id + 1]], device=device)
    names = list(capture_model_activations(model, one, one))
    return {side: token_path(names, side) for side in SIDES}


def explorer_svg(model: Transformer, chosen: str = "", src_len: int = 7, tgt_len: int = 8) -> str:
    """The whole-model figure as the explorer draws it, its shapes those of a sentence of ``src_len``
    source and ``tgt_len`` target tokens, with the group of block ``chosen`` outlined."""
    check_instance("chosen", chosen, str, "a block name of capture.Activations, or '' (none)")
    svg = architecture_svg(architecture_blocks(model, src_len, tgt_len), title=TITLE, explorer=True)
    if not chosen:
        return svg
    group = group_of(check_block_name("chosen", chosen))
    style = (f'<style>.tc-block[data-block="{html.escape(group)}"] rect {{stroke:{HIGHLIGHT};stroke-width:4}}'
             "</style>")
    return style + svg


class ModelExplorer(LiveExplorer):
    """Type a sentence, pick a token (source or target) and a block, and see that token's tensor there.

    Nothing the reader does raises: every problem becomes a short message, and the figure keeps
    the last sentence it could read.
    """

    def __init__(self, model: Transformer, src_vocab: Vocab, tgt_vocab: Vocab,
                 sentence: str = "the small dog sleeps") -> None:
        check_instance("model", model, Transformer, "a transformer_lib.models.Transformer")
        check_model_vocab("src_vocab", src_vocab, model, "src")
        check_model_vocab("tgt_vocab", tgt_vocab, model, "tgt")
        check_instance("sentence", sentence, str, "a str")
        self.model, self.src_vocab, self.tgt_vocab = model, src_vocab, tgt_vocab
        self.found: Activations | None = None
        # in the order shown
        self.sentence = sentence_box(sentence)
        self.messages, self.output = widgets.HTML(), widgets.HTML()
        self.token = widgets.Dropdown(description="Token", options=[])
        self.block = widgets.Dropdown(description="Block", options=[], layout=widgets.Layout(width="30em",
                                                                                             max_width="100%"))
        self.head = widgets.Dropdown(description="Head", options=[(str(h + 1), h) for h in range(model.config.n_heads)])
        self.previous, self.next = step_buttons("block")
        self.panel, self.figure = widgets.Output(), widgets.HTML()
        self.widget = widgets.VBox([
            self.sentence, self.messages, self.output,
            wrapping_row(self.token, self.block, self.head),
            wrapping_row(self.previous, self.next),
            self.panel, self.figure,
        ])
        self.sentence.observe(lambda _: self._safely(self.run), "value")
        self.token.observe(lambda _: self._safely(self._set_blocks), "value")
        self.block.observe(lambda _: self._safely(self.draw), "value")
        self.head.observe(lambda _: self._safely(self.draw), "value")
        self.previous.on_click(lambda _: self._safely(lambda: self.go(-1)))
        self.next.on_click(lambda _: self._safely(lambda: self.go(1)))
        self._safely(self.run)

    def page_html(self) -> str:
        # the page computes the same blocks itself; its figure starts with this sentence's shapes
        return live_explorer_html("model", sentence=self.sentence.value, n_heads=self.model.config.n_heads,
                                  paths=block_paths(self.model), stages=STAGE_TITLES, prompt=PANEL_PROMPT,
                                  colors={"bar": BAR_COLOR, "highlight": HIGHLIGHT, "head_lines": HEAD_LINES},
                                  svg=explorer_svg(self.model, "", *self._lengths()))

    def _lengths(self) -> tuple[int, ...]:
        """The sentence's source and target lengths, the figure's shapes (none read yet: explorer_svg's)."""
        return (len(self.found.src_tokens), len(self.found.tgt_tokens)) if self.found else ()

    def _refused(self) -> None:
        self.messages.value += stale_note(self.panel)  # the last good sentence's panel stays

    def run(self) -> None:
        """Translate the sentence in the box and capture its blocks; on odd input keep the last ones."""
        if not self.sentence.value.strip():
            self.messages.value = message(MESSAGES["empty"], "info") + stale_note(self.panel)
            return
        sentence, changes, words = read_sentence(self.model, self.sentence.value)
        translation = translate(self.model.eval(), sentence, self.src_vocab, self.tgt_vocab)
        found = capture_activations(self.model, translation, self.src_vocab, self.tgt_vocab)
        notes = typed_sentence_notes(translation, self.src_vocab, changes, words)
        self.messages.value = "".join(message(note, "warning") for note in notes)
        self.output.value = (f"<b>Model output:</b> {html.escape(translation.text) or '(nothing)'}")
        self.found = found
        chosen = self.token.value
        options = [(f"source {i}: {t}", ("source", i)) for i, t in enumerate(found.src_tokens)]
        options += [(f"target {i}: {t}", ("target", i)) for i, t in enumerate(found.tgt_tokens)]
        self.token.options = options
        self.token.value = chosen if chosen in [v for _, v in options] else options[0][1]
        self._set_blocks()

    def _set_blocks(self) -> None:
        if self.found is None or self.token.value is None:
            return
        path = token_path(list(self.found.blocks), self.token.value[0])
        chosen = self.block.value
        self.block.options = [(block_label(name), name) for name in path]
        self.block.value = chosen if chosen in path else path[0]
        self.draw()

    def go(self, step: int) -> None:
        """The previous (-1) or next (+1) block on the token's path, kept inside it."""
        step = check_int("step", step, minimum=-1, maximum=1)
        names = [name for _, name in self.block.options]
        if names:
            self.block.value = names[min(max(names.index(self.block.value) + step, 0), len(names) - 1)]

    def draw(self) -> None:
        if self.found is None or self.block.value is None or self.token.value is None:
            return
        side, position = self.token.value
        name = self.block.value
        self.head.layout.display = None if stage_of(name) in ROWS else "none"
        names = [n for _, n in self.block.options]
        self.previous.disabled = names.index(name) == 0
        self.next.disabled = names.index(name) == len(names) - 1
        show_in(self.panel, activation_panel(self.found.blocks, self.found.src_tokens, self.found.tgt_tokens,
                                              name, side, position, self.head.value))
        self.figure.value = explorer_svg(self.model, name, *self._lengths())
