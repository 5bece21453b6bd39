"""The look and the words the page's explorers share with the kernel's: one JSON, written by Python.

The explorers of the static book (``static/explorers.js``, ``static/book-model.js``) draw figures
and say things to the reader that the kernel's explorers (``browser.explorers``) and figures
(``figures.display``) also draw and say. Rather than copying the palette, font, axis style,
toolbar and messages into JavaScript by hand, the page reads them from :func:`theme_json`:

* the book's build (``book/_ext/offline_assets.py``) writes it into ``_static/live/theme.json``
  and into each page that holds an explorer, as ``<script id="tc-live-theme">``;
* an explorer's HTML made in a kernel (``browser.page.live_explorer_html``) carries it too, so the
  scripts need nothing else wherever that HTML is shown.

Messages are templates with ``{name}`` fields, filled in by ``str.format`` here and by the same
rule in the page (``fill`` in ``book-model.js``). Tests compare what the page does with these.
"""

from __future__ import annotations

import json

import plotly.graph_objects as go

from ..decoding_steps import TOP_K
from ..figures.display import BOOK_TEMPLATE, PLOTLY_CONFIG
from ..figures.positions import MAX_POSITIONS, MAX_WAVES
from ..figures.sampling import SHOWN
from ..html_embed import PAGE_DECIMALS
from ..language_model import MAX_NEW_TOKENS

THEME_FILE = "theme.json"
THEME_ID = "tc-live-theme"  # the id of the <script type="application/json"> a built page holds

# What the explorers tell the reader, in the kernel and in the page.
MESSAGES = {
    "empty": "Type a sentence above, then press Enter or Translate.",
    "unknown": "Not in the vocabulary, so the model reads them as {unk}: {words}.",
    "unknown_word": "\u201c{word}\u201d",  # each word of "unknown", joined by ", "
    "read_as": "Read as \u201c{text}\u201d ({changes}), the way the training sentences are written.",
    "no_words": "No words left once punctuation is removed; type a sentence to translate",
    "no_words_digits": "The model reads words, not digits (its training sentences write numbers in words), so the "
                       "digits were removed and no words were left; type a sentence to translate",
    "unknown_guess": "Whatever the model writes for {words} is not a translation: it has no meaning for an "
                     "unknown word, so it fills the place from the rest of the sentence.",
    "french": "These words look French ({words}): the model reads English and writes French; type the English "
              "sentence to translate it.",
    "too_long": "The sentence is {typed} tokens long, but this model reads at most {read}: "
                "only the first {read} were used.",
    "failed": "Something went wrong ({error}).",
    "one_word": "The training corpus has no one-word sentences, so the model never learned to stop after a single "
                "word: it may repeat the word until its length limit.",
    "repeated_word": "The sentence is one word repeated; the training corpus has no such sentence, so the model "
                     "may repeat its translation until its length limit.",
    "stale": "The figures below are still those of the last input that could be read.",
    "loading": "Loading the book's model (about 1.1 MB, once)\u2026",
    "fallback": "This explorer runs in the page of the built book, or with a Python kernel (JupyterLab or Binder).",
    "print": "On paper, this explorer shows the state the book was computed with. Use it live in the HTML book "
             "(this page, online or offline) or in this chapter's notebook (JupyterLab or Binder).",
    # chapter 8's language-model explorer (browser.lm_explorer, static/lm-explorer.js, static/book-lm.js)
    "lm_empty": "No prompt: the bars are the model's bets on a sentence's first word. Type French words "
                "(the corpus's) to see what it expects next.",
    "lm_writes_french": "This model writes French (the French side of the book's corpus), and most of these words "
                        "are not in its vocabulary: start a French sentence, such as \u201cles petits chats\u201d.",
    "lm_temperature": "The temperature must be a number of at least 0 (0: always the most probable word), got {value}.",
    "lm_top_k": "Top-k must be a whole number of at least 1, or empty for no top-k, got \u201c{value}\u201d.",
    "lm_top_p": "Top-p must be a number above 0 and at most 1 (1: no top-p), got {value}.",
    "lm_seed": "The seed must be a whole number from 0 to {max}, got \u201c{value}\u201d.",
    "lm_too_long": "The prompt is {typed} words long, but this model reads at most {read} after <sos>: "
                   "shorten it.",
    "lm_max_new": "maxNew must be a whole number from 1 to {room} (the positions left after the prompt), "
                  "got {value}.",
    "lm_loading": "Loading the book's language model (about 0.5 MB, once)\u2026",
}
# plotly.js options plotly.py's config does not need to name (plotly.py never shows these links)
PAGE_ONLY_CONFIG = {"showEditInChartStudio": False, "showLink": False}
COLORSCALES = ("Blues", "RdBu", "Viridis")  # the explorers' heatmaps, as in figures.attention/positions
NARROW_PX = 620  # below this width the explorers draw one figure per row (explorers.js, stepper.js)


def theme() -> dict:
    """The page's theme: plotly layout defaults, axis style, toolbar config, colour scales, messages."""
    layout = BOOK_TEMPLATE.layout.to_plotly_json()
    axis = layout.pop("xaxis")
    layout.pop("yaxis")
    return json.loads(json.dumps({  # a copy: changing it changes nothing of the library's
        "layout": layout,
        "axis": axis,
        "config": {**PLOTLY_CONFIG, **PAGE_ONLY_CONFIG},
        # each named scale as plotly.py stores it in a figure: [[stop, colour], ...]
        "colorscales": {name: [list(stop) for stop in go.Heatmap(colorscale=name).colorscale] for name in COLORSCALES},
        "messages": MESSAGES,
        # the numbers the page's scripts share with the library: the positional explorer's bounds, as
        # positional_encoding_figure checks them; the language model's bars and continuation; the trace's
        # candidates per step; the decimals the page rounds to, as html_embed; the explorers' narrow width
        "limits": {"max_positions": MAX_POSITIONS, "max_waves": MAX_WAVES, "lm_shown": SHOWN,
                   "lm_max_new_tokens": MAX_NEW_TOKENS, "trace_top_k": TOP_K, "page_decimals": PAGE_DECIMALS,
                   "narrow_px": NARROW_PX},
    }))


def theme_json() -> str:
    """:func:`theme` as compact JSON, safe inside a ``<script>`` element (no ``</``)."""
    return json.dumps(theme(), ensure_ascii=True, sort_keys=True, separators=(",", ":")).replace("</", "<\\/")
