"""The decoding stepper: greedy decoding and beam search, one step at a time, in JupyterLab.

``DecodingStepper`` traces the reader's sentence with ``decoding_steps.trace_translation`` (the
library's ``beam_search``, recorded by its observer) and shows one step at a time: the top
candidates of every live beam with their probabilities, the beams kept, the hypotheses ended and
the cross-attention row behind the choice (``figures.decoding_steps``). In the static book its
``text/html`` form (``page.live_explorer_html("stepper", ...)``) becomes the page's stepper
(``static/stepper.js``), which computes the same trace in the browser (``bookModel.trace``).
"""

from __future__ import annotations

import ipywidgets as widgets

from ..decoding import translate
from ..decoding_steps import SearchTrace, trace_translation
from ..figures.decoding_steps import step_figures, step_summary_html
from ..html_embed import PAGE_DECIMALS
from ..models import Transformer
from ..tokenization import Vocab
from ..validation import check_instance, check_int
from .explorers import read_sentence, sentence_box, step_buttons, typed_sentence_notes, wrapping_row
from .live import LiveExplorer, message, show_in
from .page import live_explorer_html
from .theme import MESSAGES

MAX_BEAM = 4  # greedy (1) and beam search (2 to 4), as the page's stepper (book-trace.js)


def _short(value: object) -> object:
    """A trace's numbers at ``PAGE_DECIMALS``, for the page's copy (float64 would print 17 digits each)."""
    if isinstance(value, float):
        return round(value, PAGE_DECIMALS)
    if isinstance(value, list | tuple):
        return [_short(v) for v in value]
    if isinstance(value, dict):
        return {k: _short(v) for k, v in value.items()}
    return value


class DecodingStepper(LiveExplorer):
    """Type a sentence, pick a beam size, and step through its decoding (previous / next step).

    Nothing the reader does raises: every problem becomes a short message inside the widget.
    """

    def __init__(self, model: Transformer, src_vocab: Vocab, tgt_vocab: Vocab, sentence: str = "",
                 beam_size: int = 1) -> None:
        check_instance("model", model, Transformer, "a transformer_lib.models.Transformer")
        check_instance("src_vocab", src_vocab, Vocab, "a tokenization.Vocab")
        check_instance("tgt_vocab", tgt_vocab, Vocab, "a tokenization.Vocab")
        check_int("beam_size", beam_size, minimum=1, maximum=MAX_BEAM)
        self.model, self.src_vocab, self.tgt_vocab = model, src_vocab, tgt_vocab
        self.trace: SearchTrace | None = None
        self.notes: list[str] = []
        self.step = 1
        self.sentence = sentence_box(sentence)
        self.beam = widgets.Dropdown(options=[("1 (greedy)", 1), *[(str(k), k) for k in range(2, MAX_BEAM + 1)]],
                                     value=beam_size, description="Beam size")
        self.previous, self.next = step_buttons("step")
        self.messages = widgets.HTML()
        self.summary = widgets.HTML()
        self.candidates = widgets.Output()
        self.cross = widgets.Output()
        self.widget = widgets.VBox([
            wrapping_row(self.sentence, self.beam),
            wrapping_row(self.previous, self.next),
            self.messages, self.candidates, self.summary, self.cross,  # the chart right under its controls
        ])
        self.sentence.observe(lambda _: self._safely(self.run), "value")
        self.beam.observe(lambda _: self._safely(self.run), "value")
        self.previous.on_click(lambda _: self._safely(lambda: self.go(self.step - 1)))
        self.next.on_click(lambda _: self._safely(lambda: self.go(self.step + 1)))
        self._safely(self.run)

    def page_html(self) -> str:
        result = None if self.trace is None else _short({**self.trace.payload(), "notes": list(self.notes)})
        return live_explorer_html("stepper", sentence=self.sentence.value, beam=self.beam.value, result=result)

    def run(self) -> None:
        """Trace the sentence in the box with the chosen beam size, and show its first step."""
        self.trace, self.notes, self.step = None, [], 1
        self.summary.value = ""
        self.candidates.outputs = self.cross.outputs = ()
        self._buttons()
        if not self.sentence.value.strip():
            self.messages.value = message(MESSAGES["empty"], "info")
            return
        # read as the attention explorer reads it: written as the training sentences are, cut to
        # the positions the model reads (with a note)
        sentence, changes, words = read_sentence(self.model, self.sentence.value)
        self.trace = trace_translation(self.model, sentence, self.src_vocab, self.tgt_vocab, beam_size=self.beam.value)
        translation = translate(self.model, sentence, self.src_vocab, self.tgt_vocab, beam_size=self.beam.value)
        self.notes = typed_sentence_notes(translation, self.src_vocab, changes, words, self.tgt_vocab)
        self.messages.value = "".join(message(note, "warning") for note in self.notes)
        self.go(1)

    def go(self, step: int) -> None:
        """Show step ``step`` (1-based), kept inside the trace."""
        if self.trace is None:
            return
        self.step = min(max(step, 1), len(self.trace.steps))
        self._buttons()
        self.summary.value = step_summary_html(self.trace, self.step)
        bars, cross = step_figures(self.trace, self.step)
        show_in(self.candidates, bars)
        show_in(self.cross, cross)

    def _buttons(self) -> None:
        self.previous.disabled = self.trace is None or self.step <= 1
        self.next.disabled = self.trace is None or self.step >= len(self.trace.steps)

