"""The book's two explorers: ipywidgets controls that call back into a running kernel.

``AttentionExplorer`` translates whatever the reader types (``decoding.translate``, the one
translation path of the library) and draws any attention map behind it;
``PositionalEncodingExplorer`` redraws ``figures.positions.positional_encoding_figure`` as its
sliders move. In the built book, where no kernel runs, the saved widget state draws the
controls and the last figure. Like every explorer, both are ``live.LiveExplorer``s; the sentence
helpers here (``read_sentence``, ``typed_sentence_notes``) serve ``stepper`` and ``model_explorer``
too. This module, ``stepper``, ``lm_explorer``, ``model_explorer`` and ``vit_explorer`` are the only modules of the
library that import ipywidgets; this one only when an explorer is made: importing ipywidgets takes
a second on one CPU, and a chapter's first cell imports this module long before its explorer appears.
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

from ..capture import AttentionMaps, capture_translation
from ..decoding import Translation, max_decode_length, translate
from ..figures.attention import ATTENTION_KINDS, attention_figure
from ..figures.positions import MAX_POSITIONS, positional_encoding_figure, positions_note
from ..figures.training import replay_curve_figure
from ..models import Transformer
from ..tokenization import Vocab, normalize_sentence
from ..validation import check_bool, shorten
from .live import LiveExplorer, message, show_in, stale_note
from .page import live_explorer_html, translation_payload
from .theme import MESSAGES

if TYPE_CHECKING:
    import ipywidgets as widgets
    import plotly.graph_objects as go


def reading_notes(translation: Translation, src_vocab: Vocab, typed_tokens: int | None = None,
                  tgt_vocab: Vocab | None = None) -> list[str]:
    """What the reader should know about how the model read the sentence: unknown words, and that
    what the model writes in their place is a guess; words of the target language typed into the
    translator (with ``tgt_vocab``: unknown words it holds, at least half of the words read), first
    among these, as it says what to type instead; a
    sentence longer than the model reads (``typed_tokens``, when the explorer had to cut it); and a
    sentence of one word, or of one word repeated (the corpus has neither: the model tends to
    repeat). The page's ``bookText.readingNotes`` follows the same rules (tests/test_live_model.py)."""
    notes = []
    if translation.unknown_words:
        unknown = list(dict.fromkeys(translation.unknown_words))
        listed = ", ".join(MESSAGES["unknown_word"].format(word=shorten(w)) for w in unknown)
        target = [w for w in unknown if tgt_vocab is not None and w in tgt_vocab.stoi]
        typed_target = [w for w in translation.unknown_words if w in target]
        if target and 2 * len(typed_target) >= len(translation.src_ids):  # what to do comes first
            notes.append(MESSAGES["french"].format(
                words=", ".join(MESSAGES["unknown_word"].format(word=shorten(w)) for w in target)))
        notes.append(MESSAGES["unknown"].format(unk=src_vocab.itos[src_vocab.unk_id], words=listed))
        notes.append(MESSAGES["unknown_guess"].format(words=listed))
    read = len(translation.src_ids)
    if typed_tokens is not None and typed_tokens > read:
        notes.append(MESSAGES["too_long"].format(typed=typed_tokens, read=read))
    if read == 1:
        notes.append(MESSAGES["one_word"])
    elif not translation.unknown_words and len(set(translation.src_ids)) == 1:
        notes.append(MESSAGES["repeated_word"])
    return notes


def typed_sentence_notes(translation: Translation, src_vocab: Vocab, changes: list[str], words: list[str],
                         tgt_vocab: Vocab | None = None) -> list[str]:
    """The notes a translating explorer shows under the sentence typed (``words``, as :func:`read_sentence`
    returns them): how it was rewritten (``changes``, if any), then :func:`reading_notes`."""
    read_as = [MESSAGES["read_as"].format(text=shorten(" ".join(words), 80), changes="; ".join(changes))]
    return (read_as if changes else []) + reading_notes(translation, src_vocab, typed_tokens=len(words),
                                                        tgt_vocab=tgt_vocab)


def sentence_box(sentence: str) -> widgets.Text:
    """The box a translating explorer reads its sentence from: Enter (or leaving it) runs the explorer."""
    import ipywidgets as widgets  # on first use (see the module's docstring)

    return widgets.Text(value=sentence, placeholder="type a sentence, then Enter", description="Sentence",
                        continuous_update=False, layout=widgets.Layout(width="32em", max_width="100%"))


def step_buttons(unit: str) -> tuple[widgets.Button, widgets.Button]:
    """The previous / next buttons of an explorer that steps through ``unit``s (steps, blocks)."""
    import ipywidgets as widgets  # on first use (see the module's docstring)

    return (widgets.Button(description=f"\u25c0 previous {unit}", tooltip=f"previous {unit}"),
            widgets.Button(description=f"next {unit} \u25b6", tooltip=f"next {unit}"))


def wrapping_row(*children: widgets.Widget) -> widgets.HBox:
    """Controls side by side that wrap onto the next line where the page is narrow (a phone)."""
    import ipywidgets as widgets  # on first use (see the module's docstring)

    return widgets.HBox(list(children), layout=widgets.Layout(flex_flow="row wrap"))


def no_words_message(typed: str) -> str:
    """Why a typed text left no words to read: digits alone are named as digits, not punctuation."""
    return MESSAGES["no_words_digits" if any(ch.isdecimal() for ch in typed) else "no_words"]


def read_sentence(model: object, typed: str) -> tuple[str, list, list[str]]:
    """A typed sentence as the explorers read it: written as the training sentences are
    (``normalize_sentence``: the sentence and what changed), then cut to the words the model reads
    (``max_decode_length``); returns (the sentence read, the changes, the words typed)."""
    sentence, changes = normalize_sentence(typed)
    if not sentence:
        reason = no_words_message(typed)
        raise ValueError(f"sentence: {reason[:1].lower()}{reason[1:]}")
    words, limit = sentence.split(), max_decode_length(model)
    if limit is not None and len(words) > limit:
        sentence = " ".join(words[:limit])
    return sentence, changes, words


class AttentionExplorer(LiveExplorer):
    """Type a sentence, watch the model translate it, and look at any attention map behind it.

    The sentence goes through ``decoding.translate`` (greedy, or beam search with ``beam_size``
    > 1), and its maps through ``capture.capture_translation``. Nothing the reader does raises:
    every problem becomes a short message inside the widget.

    ``replay=True`` (for the book's model, ``pretrained.book_model()``): a step slider picks one of
    the snapshots of its training run (``pretrained.snapshot_steps()``); the sentence is translated
    again by ``book_model(step=N)`` and its maps redrawn, beside the training curve
    (``figures.training.replay_curve_figure``) with the step marked.
    """

    def __init__(
        self,
        model: Transformer,
        src_vocab: Vocab,
        tgt_vocab: Vocab,
        sentence: str = "",
        beam_size: int = 1,
        replay: bool = False,
    ) -> None:
        if not isinstance(model, Transformer):
            raise TypeError(f"model: expected a transformer_lib.models.Transformer, got {type(model).__name__}")
        import ipywidgets as widgets  # on first use (see the module's docstring)

        self.model, self.src_vocab, self.tgt_vocab, self.beam_size = model, src_vocab, tgt_vocab, beam_size
        self.replay = _Replay(model, src_vocab, tgt_vocab) if check_bool("replay", replay) else None
        self.result: Translation | None = None
        self.maps: AttentionMaps | None = None
        self.notes: list[str] = []
        self.sentence = sentence_box(sentence)
        self.button = widgets.Button(description="Translate", button_style="primary")
        self.kind = widgets.Dropdown(options=[(label.split(" (")[0], k) for k, label in ATTENTION_KINDS.items()],
                                     value="cross", description="Attention")
        self.layer = widgets.Dropdown(options=[("layer 1", 0)], value=0, description="Layer")
        self.head = widgets.Dropdown(options=[("all heads", "all")], value="all", description="Head")
        self.output_text = widgets.HTML()
        self.messages = widgets.HTML()
        self.figure = widgets.Output()
        replay_row = [] if self.replay is None else [self.replay.slider, self.replay.curve]
        self.widget = widgets.VBox([
            widgets.HBox([self.sentence, self.button]),
            *replay_row,
            self.output_text, self.messages,
            widgets.HBox([self.kind, self.layer, self.head]),
            self.figure,
        ])
        if self.replay is not None:
            self.replay.slider.observe(lambda _: self._safely(self._step_changed), "value")
        self.button.on_click(lambda _: self._safely(self.run))
        self.sentence.observe(lambda _: self._safely(self.run), "value")
        self.kind.observe(lambda _: self._safely(self._kind_changed), "value")
        self._layer_chosen = False  # until the reader picks a layer, show the last one
        self.layer.observe(lambda _: self._safely(self._layer_changed), "value")
        self.head.observe(lambda _: self._safely(self.draw), "value")
        self._safely(self.run)

    def page_html(self) -> str:
        result = None if self.result is None or self.maps is None else translation_payload(
            self.result, self.maps, self.src_vocab, self.tgt_vocab, self.notes)
        settings = {} if self.replay is None else {"replay": self.replay.state()}
        return live_explorer_html("attention", sentence=self.sentence.value, result=result, **settings)

    def _step_changed(self) -> None:
        """Another snapshot: the same sentence through the model at that step, and the curve's marker moved."""
        self.model = self.replay.model()
        self.replay.draw_curve()
        self.run()

    def run(self) -> None:
        """Translate the sentence in the box and draw the chosen attention map."""
        self.result = self.maps = None
        self.notes = []
        self.output_text.value = ""
        self.figure.outputs = ()
        if not self.sentence.value.strip():
            self.messages.value = message(MESSAGES["empty"], "info")
            return
        # Written the way the training sentences are (lower case, no punctuation), with a note if
        # that changed anything; then, since translate() refuses a sentence longer than the model
        # reads, the explorer reads the first words it can and says so (reading_notes).
        sentence, changes, words = read_sentence(self.model, self.sentence.value)
        result = translate(self.model, sentence, self.src_vocab, self.tgt_vocab, beam_size=self.beam_size)
        self.result, self.maps = result, capture_translation(self.model, result, self.src_vocab, self.tgt_vocab)
        self.notes = typed_sentence_notes(result, self.src_vocab, changes, words, self.tgt_vocab)
        text = html.escape(result.text) or "(nothing)"
        by = "" if self.replay is None else f" (step {self.replay.slider.value})"  # the snapshot that translated it
        self.output_text.value = (f"<b>Model output{by}:</b> {text} "
                                  f"<span style='color:#666'>({len(result.ids)} tokens)</span>")
        self.messages.value = "".join(message(note, "warning") for note in self.notes)
        self._updating = True
        try:
            n_heads = self.maps.cross[0].shape[1] if self.maps.cross else self.maps.encoder_self[0].shape[1]
            self.head.options = [("all heads", "all"), *[(f"head {h + 1}", h) for h in range(n_heads)]]
            self._set_layers()
        finally:
            self._updating = False
        self.draw()

    def _set_layers(self) -> None:
        n_layers = len(getattr(self.maps, self.kind.value))
        chosen = self.layer.value if self._layer_chosen else n_layers - 1
        self.layer.options = [(f"layer {i + 1}", i) for i in range(n_layers)]
        self.layer.value = min(chosen, n_layers - 1)

    def _layer_changed(self) -> None:
        self._layer_chosen = True
        self.draw()

    def _kind_changed(self) -> None:
        if self.maps is not None:
            self._updating = True
            try:
                self._set_layers()
            finally:
                self._updating = False
        self.draw()

    def draw(self) -> None:
        if self.maps is None:
            return
        fig = attention_figure(self.maps, self.kind.value, self.layer.value, self.head.value)
        show_in(self.figure, fig)


class _Replay:
    """The replay's part of ``AttentionExplorer``: the step slider, the curve and the snapshots' models
    (each loaded once, when first chosen; the last step is the model the explorer was given)."""

    def __init__(self, model: Transformer, src_vocab: Vocab, tgt_vocab: Vocab) -> None:
        import ipywidgets as widgets  # on first use (see the module's docstring)

        from ..pretrained import book_model
        from ..pretrained.snapshots import snapshot_record

        shipped = book_model()
        if src_vocab.itos != shipped.src_vocab.itos or tgt_vocab.itos != shipped.tgt_vocab.itos:
            raise ValueError("replay: replays the book's model; expected pretrained.book_model()'s vocabularies, "
                             "got others")
        record = snapshot_record()
        self.steps, self.curve_data = [int(s) for s in record["steps"]], record["curve"]
        self.dtype = next(model.parameters()).dtype
        self.models = {self.steps[-1]: model}
        self.slider = widgets.SelectionSlider(options=[(str(s), s) for s in self.steps], value=self.steps[-1],
                                              description="Step", continuous_update=False,
                                              layout=widgets.Layout(width="32em"))
        self.curve = widgets.Output()
        self.draw_curve()

    def model(self) -> Transformer:
        from ..pretrained import book_model

        step = self.slider.value
        if step not in self.models:
            self.models[step] = book_model(step=step, dtype=self.dtype).model
        return self.models[step]

    def figure(self) -> go.Figure:
        return replay_curve_figure(self.curve_data, self.steps, self.slider.value)

    def draw_curve(self) -> None:
        show_in(self.curve, self.figure())

    def state(self) -> dict:
        """What the page's explorer needs: the steps, the step shown, and the curve as plotly JSON (the
        book's template left out: the page applies its theme)."""
        figure = self.figure().to_plotly_json()
        figure["layout"].pop("template", None)
        return {"steps": self.steps, "step": self.slider.value,
                "figure": {"data": figure["data"], "layout": figure["layout"]}}


class PositionalEncodingExplorer(LiveExplorer):
    """Sliders for d_model, the dimensions drawn and the positions, redrawing
    ``positional_encoding_figure`` (needs a kernel; the saved state draws in the book)."""

    def __init__(self, d_model: int = 64, dims: tuple[int, int] = (0, 7), positions: tuple[int, int] = (0, 50)) -> None:
        import ipywidgets as widgets  # on first use (see the module's docstring)

        # One slider a line, each long enough to move by one step (three side by side were a few pixels long).
        look = dict(continuous_update=False, layout=widgets.Layout(width="36em"),
                    style={"description_width": "6em"})
        self.d_model = widgets.IntSlider(value=d_model, min=4, max=512, step=2, description="d_model", **look)
        self.dims = widgets.IntRangeSlider(value=dims, min=0, max=d_model - 1, description="dimensions", **look)
        self.positions = widgets.IntRangeSlider(value=positions, min=0, max=MAX_POSITIONS, description="positions",
                                                **look)
        self.messages = widgets.HTML()
        self.figure = widgets.Output()
        self.widget = widgets.VBox([self.d_model, self.dims, self.positions, self.messages, self.figure])
        self.d_model.observe(lambda _: self._safely(self._d_model_changed), "value")
        for control in (self.dims, self.positions):
            control.observe(lambda _: self._safely(self.draw), "value")
        self._safely(self.draw)

    def page_html(self) -> str:
        return live_explorer_html("positional", d_model=self.d_model.value, dims=list(self.dims.value),
                                  positions=list(self.positions.value))

    def _refused(self) -> None:
        self.messages.value += stale_note(self.figure)  # the last good figure stays

    def _d_model_changed(self) -> None:
        self.dims.max = self.d_model.value - 1  # moves the chosen range inside the new bounds
        self.draw()

    def draw(self) -> None:
        self.messages.value = ""
        fig = positional_encoding_figure(self.d_model.value, tuple(self.dims.value), tuple(self.positions.value))
        note = positions_note(tuple(self.positions.value))
        self.messages.value = message(note, "info") if note else ""
        show_in(self.figure, fig)
