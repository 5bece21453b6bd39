"""Chapter 8's language-model explorer: type a prompt, move temperature, top-k and top-p, draw a continuation.

``LanguageModelExplorer`` (ipywidgets, calling back into the kernel) shows the next-word distribution
after ``<sos>`` and the prompt (``language_model.next_word_probs``, the one ``sample_sentences`` draws
from) as ``figures.sampling.next_word_figure``, the causal attention maps behind it
(``capture.capture_attention``, ``figures.attention.attention_figure``), and a continuation drawn
with a seed (``sample_sentences(prompt=...)``). In the static book its HTML form
(``browser.page.live_explorer_html("lm", ...)``) carries the kernel's first result, and
``static/lm-explorer.js`` makes it live on ``static/book-lm.js``, the same model in the page,
fetched when the reader first changes something. The controls are read by :func:`read_lm_settings`
in the kernel and by the same rules in the page (tests/test_live_lm.py compares the two).
Nothing the reader does raises: every problem becomes a message in the widget.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

import ipywidgets as widgets
import torch

from ..capture import AttentionMaps, capture_attention
from ..figures.attention import attention_figure
from ..figures.sampling import next_word_figure
from ..html_embed import PAGE_DECIMALS
from ..language_model import MAX_NEW_TOKENS, next_word_probs, sample_sentences
from ..models import DecoderOnlyTransformer
from ..tokenization import Vocab, normalize_sentence
from ..validation import check_instance, check_number, shorten
from .live import LiveExplorer, message, show_in, stale_note
from .page import live_explorer_html
from .theme import MESSAGES

MAX_SEED = 2**32 - 1  # the page's generator (mulberry32) takes 32-bit seeds
_WHOLE_NUMBER = re.compile(r"[0-9]+")


@dataclass(frozen=True)
class LMSettings:
    temperature: float
    top_k: int | None  # None: no top-k
    top_p: float  # 1: no top-p
    seed: int


def read_lm_settings(temperature: object, top_k: object, top_p: object, seed: object) -> LMSettings:
    """The explorer's controls as sampling arguments: ``temperature`` >= 0, ``top_k`` a whole number >= 1
    as typed (text; empty: none), ``top_p`` in (0, 1], ``seed`` a whole number as typed, 0 to 2**32 - 1.
    A wrong value is a ``ValueError`` whose text after the argument's name is the reader's message."""
    def refuse(name: str, message: str, **values: object) -> ValueError:
        shown = {k: f"{v:g}" if isinstance(v, float) else v for k, v in values.items()}  # 0.0 as "0", as the page
        return ValueError(f"{name}: {MESSAGES[message].format(**shown)}")

    try:
        temperature = check_number("temperature", temperature, minimum=0.0)
    except ValueError:
        raise refuse("temperature", "lm_temperature", value=temperature) from None
    for name, value in (("top_k", top_k), ("seed", seed)):
        if not isinstance(value, str | int) or isinstance(value, bool):
            raise TypeError(f"{name}: expected the text of its box (a str) or an int, got {type(value).__name__}")
    top_k_text, seed_text = str(top_k).strip(), str(seed).strip()
    if top_k_text and not (_WHOLE_NUMBER.fullmatch(top_k_text) and int(top_k_text) >= 1):
        raise refuse("top_k", "lm_top_k", value=shorten(top_k_text))
    try:
        top_p = check_number("top_p", top_p)
    except ValueError:
        raise refuse("top_p", "lm_top_p", value=top_p) from None
    if not 0.0 < top_p <= 1.0:
        raise refuse("top_p", "lm_top_p", value=top_p)
    if not (_WHOLE_NUMBER.fullmatch(seed_text) and int(seed_text) <= MAX_SEED):
        raise refuse("seed", "lm_seed", value=shorten(seed_text), max=MAX_SEED)
    return LMSettings(temperature, int(top_k_text) if top_k_text else None, top_p, int(seed_text))


def _sig(value: float, digits: int = 6) -> float:
    return float(f"{value:.{digits}g}")


class LanguageModelExplorer(LiveExplorer):
    """Type a prompt (French, as the corpus), see the next word's distribution under temperature, top-k
    and top-p, the causal attention behind it, and a continuation drawn with a seed."""

    def __init__(self, model: DecoderOnlyTransformer, vocab: Vocab, prompt: str = "", temperature: float = 1.0,
                 top_k: int | None = None, top_p: float = 1.0, seed: int = 0) -> None:
        check_instance("model", model, DecoderOnlyTransformer, "a DecoderOnlyTransformer")
        check_instance("vocab", vocab, Vocab, "a tokenization.Vocab")
        if not isinstance(prompt, str):
            raise TypeError(f"prompt: expected a str, got {type(prompt).__name__}")
        read_lm_settings(temperature, "" if top_k is None else top_k, top_p, seed)  # a wrong start raises here
        self.model, self.vocab = model.eval(), vocab
        self.payload: dict | None = None  # what the page draws first (bookLM.next's result, from the kernel)
        self.maps: AttentionMaps | None = None
        self.continuation = ""
        look = dict(continuous_update=False, style={"description_width": "7em"})
        self.prompt = widgets.Text(value=prompt, placeholder="type French words, then Enter", description="Prompt",
                                   layout=widgets.Layout(width="32em"), **look)
        self.temperature = widgets.FloatSlider(value=temperature, min=0.0, max=2.0, step=0.05,
                                               description="Temperature", readout_format=".2f", **look)
        self.top_k = widgets.Text(value="" if top_k is None else str(top_k), placeholder="empty: all",
                                  description="Top-k", layout=widgets.Layout(width="16em"), **look)
        self.top_p = widgets.FloatSlider(value=top_p, min=0.05, max=1.0, step=0.05, description="Top-p",
                                         readout_format=".2f", **look)
        self.seed = widgets.Text(value=str(seed), description="Seed", layout=widgets.Layout(width="16em"), **look)
        self.sample_button = widgets.Button(description="Sample", button_style="primary")
        self.next_seed = widgets.Button(description="Next seed")
        self.layer = widgets.Dropdown(options=[("layer 1", 0)], value=0, description="Layer")
        self.head = widgets.Dropdown(options=[("all heads", "all")], value="all", description="Head")
        self.messages = widgets.HTML()
        self.output_text = widgets.HTML()
        self.bars = widgets.Output()
        self.attention = widgets.Output()
        self.widget = widgets.VBox([
            self.prompt, self.temperature, self.top_k, self.top_p,
            widgets.HBox([self.seed, self.sample_button, self.next_seed]),
            self.messages, self.output_text, self.bars, widgets.HBox([self.layer, self.head]), self.attention,
        ])
        for control in (self.prompt, self.temperature, self.top_k, self.top_p):
            control.observe(lambda _: self._safely(self.run), "value")
        self.sample_button.on_click(lambda _: self._safely(self.sample))
        self.seed.observe(lambda _: self._safely(self.run), "value")  # run: a message of a wrong seed goes
        self.next_seed.on_click(lambda _: self._safely(self._next_seed))
        self.layer.observe(lambda _: self._safely(self.draw_attention), "value")
        self.head.observe(lambda _: self._safely(self.draw_attention), "value")
        self._safely(self.run)

    def page_html(self) -> str:
        return live_explorer_html("lm", prompt=self.prompt.value, temperature=self.temperature.value,
                                  top_k=self.top_k.value, top_p=self.top_p.value, seed=self.seed.value,
                                  result=self.payload)

    def _refused(self) -> None:
        # the last continuation goes; the figures of the last prompt read stay, said to be stale
        self.output_text.value = ""
        self.messages.value += stale_note(self.bars, self.attention)

    def settings(self) -> LMSettings:
        return read_lm_settings(self.temperature.value, self.top_k.value, self.top_p.value, self.seed.value)

    def _read_prompt(self) -> tuple[str, list[str]]:
        """The prompt as the training sentences are written, and the notes to show about it."""
        text, changes = normalize_sentence(self.prompt.value)
        ids, unknown = self.vocab.encode_with_unknowns(text)
        notes = []
        if changes:
            notes.append(MESSAGES["read_as"].format(text=shorten(text, 80), changes="; ".join(changes)))
        if 2 * len(unknown) > len(ids):  # most words unknown (English, say): what to type instead comes first
            notes.append(MESSAGES["lm_writes_french"])
        if unknown:
            listed = ", ".join(MESSAGES["unknown_word"].format(word=shorten(w)) for w in dict.fromkeys(unknown))
            notes.append(MESSAGES["unknown"].format(unk=self.vocab.itos[self.vocab.unk_id], words=listed))
        read = self.model.config.max_len - 1  # <sos> takes the first position
        if len(ids) > read:
            raise ValueError(f"prompt: {MESSAGES['lm_too_long'].format(typed=len(ids), read=read)}")
        return text, notes

    def run(self) -> None:
        """Read the controls and the prompt; draw the next word's distribution and the attention maps.
        A wrong setting or prompt leaves the last good figures, as the page does, with its message."""
        s = self.settings()
        text, notes = self._read_prompt()
        self.messages.value = self.output_text.value = ""
        kwargs = dict(temperature=s.temperature, top_k=s.top_k, top_p=s.top_p)
        unfiltered = next_word_probs(self.model, self.vocab, text, temperature=s.temperature)
        probs = next_word_probs(self.model, self.vocab, text, **kwargs)
        ids = torch.tensor([[self.vocab.sos_id, *self.vocab.encode(text)]], device=next(self.model.parameters()).device)
        self.maps = capture_attention(self.model, ids, tgt_vocab=self.vocab.itos)
        self.payload = {
            "text": text, "notes": notes,
            "probs": [_sig(p) for p in probs.tolist()], "unfiltered": [_sig(p) for p in unfiltered.tolist()],
            "tokens": [self.vocab.itos[i] for i in ids[0].tolist()],
            "vocab": list(self.vocab.itos),
            "attention": [[[[round(w, PAGE_DECIMALS) for w in row] for row in head] for head in layer[0].tolist()]
                          for layer in self.maps.decoder_self],
            "settings": {"temperature": s.temperature, "topK": s.top_k, "topP": s.top_p},
        }
        info = [] if text else [message(MESSAGES["lm_empty"], "info")]
        self.messages.value = "".join(info + [message(note, "warning") for note in notes])
        show_in(self.bars, next_word_figure(unfiltered, probs, self.vocab.itos, prompt=text, **kwargs))
        n_layers, n_heads = len(self.maps.decoder_self), self.maps.decoder_self[0].shape[1]
        layer = self.layer.value if len(self.layer.options) == n_layers else n_layers - 1  # the last, at first
        head = self.head.value if self.head.value == "all" or self.head.value < n_heads else "all"
        self._updating = True  # no drawing while the choices change
        try:
            self.layer.options = [(f"layer {i + 1}", i) for i in range(n_layers)]
            self.head.options = [("all heads", "all"), *[(f"head {h + 1}", h) for h in range(n_heads)]]
            self.layer.value, self.head.value = layer, head
        finally:
            self._updating = False
        self.draw_attention()
        self.sample()

    def _next_seed(self) -> None:
        self.seed.value = str((self.settings().seed + 1) % (MAX_SEED + 1))

    def draw_attention(self) -> None:
        if self.maps is not None and not self._updating:
            show_in(self.attention, attention_figure(self.maps, "decoder_self", self.layer.value, self.head.value))

    def sample(self) -> None:
        """A continuation of the prompt, drawn with the seed (the kernel's generator; the page has its own)."""
        if self.payload is None:
            return
        s = self.settings()
        text = self.payload["text"]
        room = self.model.config.max_len - len(self.payload["tokens"]) + 1
        limit = min(MAX_NEW_TOKENS, room)
        [drawn] = sample_sentences(self.model, self.vocab, 1, prompt=text, max_new_tokens=limit,
                                   temperature=s.temperature, top_k=s.top_k, top_p=s.top_p,
                                   generator=torch.Generator().manual_seed(s.seed))
        ending = "then <eos>" if drawn.ended else f"cut at {limit} words"
        self.continuation = drawn.text
        self.output_text.value = (f"<b>Continuation:</b> {html.escape(text)} <b>{html.escape(drawn.text)}</b> "
                                  f"<span style='color:#555'>({html.escape(ending)}; seed {s.seed})</span>")
