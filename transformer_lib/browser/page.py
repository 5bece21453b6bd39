"""The explorers of the static book: HTML that ``static/explorers.js`` makes live.

In JupyterLab the explorers are ipywidgets that call back into the kernel. A static page has no
kernel, so each explorer also offers a ``text/html`` representation (``live_explorer_html``): a
container holding the explorer's settings, and, for the attention explorer, the translation and
attention maps the kernel computed, so that the page draws them before any model is loaded. The
book's configuration (``nb_mime_priority_overrides`` in ``_config.yml``) makes the HTML builder
prefer this form to the saved widget; the Sphinx extension ``book/_ext/offline_assets.py`` adds
the scripts to the pages that hold one, and writes the model files the page loads on first use
(``browser.model``). The HTML carries the theme and messages (``browser.theme``) the scripts read.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from importlib import resources
from pathlib import Path

from ..capture import AttentionMaps
from ..decoding import Translation
from ..figures.positions import check_positional_settings
from ..html_embed import PAGE_DECIMALS, json_for_script
from ..tokenization import Vocab
from ..validation import check_choice, check_instance, check_iterable, check_token_list
from ..validation_models import check_spells
from .theme import MESSAGES, THEME_FILE, theme_json

KINDS = ("attention", "positional", "lm", "stepper", "model", "vit")
# The page's scripts (file names in this package's ``static`` folder), in the order a page loads them:
# each reads those before it. The one list that the book's build (``book/_ext/offline_assets.py``),
# ``tools/build_pdf.py`` and the tests read.
LIVE_SCRIPTS = ("book-text.js", "book-model.js", "heatmap-canvas.js", "explorers.js", "positional-explorer.js",
                "book-trace.js", "stepper.js", "book-activations.js", "model-explorer.js", "vit-explorer.js")
LM_SCRIPTS = ("book-lm.js", "lm-explorer.js")  # after LIVE_SCRIPTS, on the page with chapter 8's explorer
# A page loads the scripts its explorers need, not all of them (a chapter's first visit has a weight
# budget, benchmarks/page_weight.py): these two on every page with an explorer (the theme, the messages
# and the reader's text; explorers.js, which starts every explorer), and each kind's own: all but the
# positional explorer run the book's model (book-model.js).
SHARED_SCRIPTS = ("book-text.js", "explorers.js")
EXPLORER_SCRIPTS = {
    "attention": ("book-model.js", "heatmap-canvas.js"),
    "positional": ("positional-explorer.js",),
    "stepper": ("book-model.js", "book-trace.js", "stepper.js"),
    "model": ("book-model.js", "book-activations.js", "model-explorer.js"),
    "lm": ("book-model.js", *LM_SCRIPTS),
    "vit": ("book-model.js", "vit-explorer.js"),  # chapter 9's Vision Transformer, on book-model.js's encoder
}


def page_scripts(kinds: Iterable[str]) -> tuple[str, ...]:
    """The scripts a page holding explorers of ``kinds`` loads, in load order (``LIVE_SCRIPTS``, then
    ``LM_SCRIPTS``); none for a page without explorers."""
    kinds = list(check_iterable("kinds", kinds, "explorer kinds (str)"))
    for i, kind in enumerate(kinds):
        check_instance(f"kinds[{i}]", kind, str, f"an explorer kind, one of {KINDS}")
        check_choice(f"kinds[{i}]", kind, KINDS)
    needed = set(SHARED_SCRIPTS if kinds else ()).union(*(EXPLORER_SCRIPTS[kind] for kind in kinds))
    return tuple(script for script in (*LIVE_SCRIPTS, *LM_SCRIPTS) if script in needed)


def _rounded(values: object) -> object:
    """Nested lists of floats at ``PAGE_DECIMALS``: weights as short numbers in the page."""
    if isinstance(values, list):
        return [_rounded(v) for v in values]
    return round(float(values), PAGE_DECIMALS)


def translation_payload(translation: Translation, maps: AttentionMaps, src_vocab: Vocab, tgt_vocab: Vocab,
                        notes: Sequence[str] = ()) -> dict:
    """What ``window.bookModel.translate`` returns, from a ``decoding.translate`` result made in the
    kernel and its maps (``capture.capture_translation``: those of ``<sos>`` + output)."""
    check_instance("translation", translation, Translation, "a decoding.Translation")
    check_instance("maps", maps, AttentionMaps, "capture.AttentionMaps")
    check_instance("src_vocab", src_vocab, Vocab, "a tokenization.Vocab")
    check_instance("tgt_vocab", tgt_vocab, Vocab, "a tokenization.Vocab")
    notes = check_token_list("notes", notes, item="note")
    check_spells("src_vocab", src_vocab, translation.src_ids, maps.src_tokens[0] if maps.src_tokens else None,
                 "the translation")
    check_spells("tgt_vocab", tgt_vocab, translation.ids, translation.tokens, "the translation")
    tokens = list(translation.tokens)
    return {
        "tokens": tokens,
        "text": " ".join(tokens),
        "unknown": list(translation.unknown_words),
        "notes": list(notes),
        "ended": translation.ended,
        "src_tokens": [src_vocab.itos[i] for i in translation.src_ids],
        # the rows of the decoder maps: <sos> and the tokens read (a translation cut at its length
        # limit never read its last token: capture_translation has no row for it)
        "decoder_tokens": [tgt_vocab.itos[tgt_vocab.sos_id], *(tokens if translation.ended else tokens[:-1])],
        "attention": {kind: [_rounded(layer[0].tolist()) for layer in getattr(maps, kind)]
                      for kind in ("encoder_self", "decoder_self", "cross")},
    }


def live_explorer_html(kind: str, **settings: object) -> str:
    """The static book's form of an explorer: ``kind`` is ``"attention"`` (settings: ``sentence``,
    and ``result``, a :func:`translation_payload` or None), ``"positional"`` (settings:
    ``d_model``, ``dims``, ``positions``), ``"lm"`` (``browser.lm_explorer``'s controls and result) or
    ``"stepper"`` (settings: ``sentence``, ``beam`` and ``result``, a ``decoding_steps.SearchTrace``
    payload with ``notes``, or None) or ``"vit"`` (``browser.vit_explorer.digit_state``: the models' weights,
    the menu of test digits, the image to start from)."""
    check_choice("kind", kind, list(KINDS))
    if kind == "positional":  # the settings the page's positional explorer starts from
        check_positional_settings(settings.get("d_model"), settings.get("dims"), settings.get("positions"))
    for name, value in settings.items():  # each setting named in an error: it is an argument of this call
        try:
            json_for_script(value)
        except (TypeError, ValueError) as error:
            raise type(error)(f"{name}: {str(error).removeprefix('value: ')}") from None
    state = json_for_script(settings)  # a "<!--<script>" or "</script>" in a sentence cannot end the element
    return (f'<div class="tc-live" data-explorer="{kind}">'
            f'<script type="application/json" class="tc-live-state">{state}</script>'
            f'<script type="application/json" class="tc-live-theme">{theme_json()}</script>'
            f'<p class="tc-live-fallback">{html.escape(MESSAGES["fallback"])}</p>'
            # shown on paper only (explorers.css, @media print), where the controls are left out
            f'<p class="tc-print-note" style="display:none">{html.escape(MESSAGES["print"])}</p></div>')


def write_page_files(folder: Path | str) -> list[Path]:
    """The page's scripts and style (this package's ``static`` folder) and ``theme.json``, written
    into ``folder`` (the built book's ``_static/live``); return their paths. Unchanged files are left."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    files = {item.name: item.read_bytes() for item in (resources.files(__package__) / "static").iterdir()
             if item.name.endswith((".js", ".css"))}
    files[THEME_FILE] = theme_json().encode("ascii")
    paths = []
    for name, content in sorted(files.items()):
        path = folder / name
        if not path.is_file() or path.read_bytes() != content:
            path.write_bytes(content)
        paths.append(path)
    return paths
