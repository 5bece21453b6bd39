"""Pictures of the model: attention maps, positional encodings and bertviz views.

Every picture has to work in two places:

* a live notebook (JupyterLab, Binder), where ipywidgets controls call back into the
  kernel: ``AttentionExplorer`` translates whatever the reader types, and
  ``PositionalEncodingExplorer`` redraws as its sliders move;
* the built HTML book, where no kernel runs. There the ``*_menu_figure`` functions give
  plotly figures whose dropdowns and sliders switch between precomputed traces in the
  browser, and the saved widget state draws the explorers' controls and last figure.

Figures leave the kernel through ``show`` (or the ``"transformer_book"`` plotly renderer
that ``use_book_renderer`` installs) as two representations: the plotly mimetype, which
JupyterLab draws with the plotly extension, and ``text/html`` that calls ``Plotly.newPlot``
without embedding plotly.js, which the book draws with the one copy of plotly.js in its
static folder. bertviz views load d3 and jQuery from the same folder in the book, and
carry them inline in a live session (see ``bertviz_head_view``).
"""

from __future__ import annotations

import hashlib
import html
import json
import math
import os
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import ipywidgets as widgets
import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
import torch
from IPython.display import HTML, display
from plotly.io.base_renderers import MimetypeRenderer
from plotly.subplots import make_subplots
from torch import Tensor

from .capture import AttentionMaps, capture_attention
from .decoding import greedy_decode
from .models import Transformer
from .positional_encoding import RotaryEmbedding, sinusoidal_table
from .tokenization import normalize_sentence
from .validation import check_choice, check_positive_int


class Vocabulary(Protocol):
    """What these pictures use of a vocabulary (``transformer_lib.tokenization.Vocab`` has it)."""

    itos: Sequence[str]  # id -> token
    stoi: Mapping[str, int]  # token -> id
    pad_id: int
    sos_id: int
    eos_id: int
    unk_id: int

    def encode(self, sentence: str) -> list[int]: ...


# ---------------------------------------------------------------------------------------------
# Showing a figure: one representation for JupyterLab, one for the static book
# ---------------------------------------------------------------------------------------------

PLOTLY_MIMETYPE = "application/vnd.plotly.v1+json"
PLOTLY_CONFIG = {"responsive": True, "displaylogo": False}

# A small template: plotly's default one adds about 7 kB to every figure in the notebook and page.
BOOK_TEMPLATE = go.layout.Template(
    layout=dict(
        font=dict(family="Helvetica, Arial, sans-serif", size=13, color="#222"),
        colorway=["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2"],
        paper_bgcolor="white",
        plot_bgcolor="white",
        xaxis=dict(gridcolor="#e5e5e5", zerolinecolor="#bbb", linecolor="#888", automargin=True),
        yaxis=dict(gridcolor="#e5e5e5", zerolinecolor="#bbb", linecolor="#888", automargin=True),
        margin=dict(l=60, r=30, t=90, b=50),
        hoverlabel=dict(font_size=13),
    )
)

_shown: Counter[str] = Counter()  # how often each figure was shown: keeps div ids unique yet repeatable


def _div_id(content: str, prefix: str = "fig") -> str:
    """A page-unique id that is the same each time a notebook is re-run (plotly's and bertviz's are
    random): a digest of the content, and how often that content was shown before."""
    digest = hashlib.sha1(content.encode()).hexdigest()[:12]
    _shown[digest] += 1
    return f"{prefix}-{digest}-{_shown[digest]}"


def figure_mimebundle(fig: go.Figure | dict) -> dict[str, object]:
    """The display data of ``fig``: plotly JSON for JupyterLab, HTML for the book, a line of text.

    The HTML expects ``Plotly`` to be defined on the page (the book loads plotly.js once from
    its static folder) rather than carrying a 1.5 to 4.8 MB copy in every notebook and page.
    """
    fig_dict = fig.to_dict() if isinstance(fig, go.Figure) else fig
    fig_json = pio.to_json(fig_dict, validate=False)
    height = fig_dict.get("layout", {}).get("height")
    page_html = pio.to_html(
        fig_dict, include_plotlyjs=False, full_html=False, div_id=_div_id(fig_json), validate=False,
        config=PLOTLY_CONFIG, default_height=f"{height}px" if height else "100%",
    )
    title = fig_dict.get("layout", {}).get("title", {})
    title_text = title.get("text", "") if isinstance(title, dict) else str(title)
    plain = f"<plotly figure: {re.sub('<[^>]+>', ' ', title_text).strip() or 'untitled'}>"
    return {PLOTLY_MIMETYPE: json.loads(fig_json), "text/html": page_html, "text/plain": plain}


class BookRenderer(MimetypeRenderer):
    """The plotly renderer behind ``use_book_renderer``: ``fig.show()`` and a figure left as a
    cell's value then display through ``figure_mimebundle``."""

    def to_mimebundle(self, fig_dict: dict) -> dict[str, object]:
        return figure_mimebundle(fig_dict)


def use_book_renderer() -> None:
    """Make ``"transformer_book"`` plotly's default renderer.

    Since plotly 6.1, a figure shown inside a kernel carries only the plotly mimetype, which
    myst-nb cannot put in a page; this renderer adds the HTML form the book shows.
    """
    pio.renderers["transformer_book"] = BookRenderer()
    pio.renderers.default = "transformer_book"


def show(fig: go.Figure) -> None:
    """Display ``fig`` so that it draws in JupyterLab and in the built book."""
    display(figure_mimebundle(fig), raw=True)


def _show_in(output: widgets.Output, fig: go.Figure) -> None:
    """Replace what an Output widget shows by ``fig``. Setting ``outputs`` directly (rather than
    ``with output: show(fig)``) works from any callback, and in the saved widget state."""
    output.outputs = ({"output_type": "display_data", "data": figure_mimebundle(fig), "metadata": {}},)


# ---------------------------------------------------------------------------------------------
# From a typed sentence to attention maps
# ---------------------------------------------------------------------------------------------

# translate(src_ids of shape (1, S)) -> target ids, beginning with <sos> (and ending with <eos>
# unless the length limit came first): a list of ints, or a tensor of shape (T,) or (1, T).
Translate = Callable[[Tensor], Sequence[int] | Tensor]


@torch.no_grad()
def _greedy_translate(model: Transformer, src_ids: Tensor, sos_id: int, eos_id: int) -> list[int]:
    """<sos>, then the greedy tokens of ``decoding.greedy_decode``, then <eos> if the model ended the sentence."""
    max_new = model.config.max_len - 1  # the decoder reads <sos> and all but the last generated token
    (generated,) = greedy_decode(model, src_ids, sos_id=sos_id, eos_id=eos_id, max_len=max_new)
    ended = len(generated) < max_new
    return [sos_id, *generated, *([eos_id] if ended else [])]


@dataclass
class Translation:
    """A sentence, what the model made of it, the attention maps behind it, and notes for the reader."""

    sentence: str
    src_ids: list[int]  # what the encoder read: the source vocabulary's encoding, as in training
    tgt_ids: list[int]  # <sos> and every generated token
    maps: AttentionMaps  # decoder side: the inputs that produced each generated token
    notes: list[str] = field(default_factory=list)

    def output_text(self, tgt_vocab: Vocabulary) -> str:
        specials = {tgt_vocab.sos_id, tgt_vocab.eos_id, tgt_vocab.pad_id}
        return " ".join(tgt_vocab.itos[i] for i in self.tgt_ids if i not in specials)


def _source_ids(src_vocab: Vocabulary, sentence: str) -> list[int]:
    """The sentence encoded exactly as the training data was (``src_vocab.encode``)."""
    ids = list(src_vocab.encode(sentence))
    if not ids:
        raise ValueError("sentence: nothing to translate: the tokenizer found no tokens in it")
    return ids


def translate_sentence(
    model: Transformer,
    src_vocab: Vocabulary,
    tgt_vocab: Vocabulary,
    sentence: str,
    translate: Translate | None = None,
) -> Translation:
    """Translate ``sentence`` and capture every attention map of the final forward pass.

    The sentence is first written the way the training sentences are
    (``tokenization.normalize_sentence``: lower case, no punctuation; a note says what changed);
    the encoder then reads ``src_vocab.encode(sentence)``, which is what models trained on
    ``transformer_lib.tokenization`` batches (such as ``pretrained.book_model()``) have seen.

    Raises ``ValueError`` for an empty sentence. Unknown words and a sentence longer than the
    model can read are not errors: they come back as ``notes`` (unknown words appear as the
    unknown token; a long sentence is cut to ``model.config.max_len`` tokens).
    """
    if not isinstance(model, Transformer):
        raise TypeError(f"model: expected a transformer_lib.models.Transformer, got {type(model).__name__}")
    if not isinstance(sentence, str):
        raise TypeError(f"sentence: expected a str, got {type(sentence).__name__}")
    if not sentence.strip():
        raise ValueError("sentence: empty; type a sentence to translate")
    notes = []
    sentence, changes = normalize_sentence(sentence)  # as the training sentences are written
    if changes:
        notes.append(f"Read as “{sentence}” ({'; '.join(changes)}), the way the training sentences are written.")
    if not sentence:
        raise ValueError("sentence: no words left; type a sentence to translate")
    unknown = [word for word in sentence.split() if src_vocab.unk_id in src_vocab.encode(word)]
    if unknown:
        listed = ", ".join(f"“{w}”" for w in dict.fromkeys(unknown))
        unk = src_vocab.itos[src_vocab.unk_id]
        notes.append(f"Not in the vocabulary, so the model reads them as {unk}: {listed}.")
    ids = _source_ids(src_vocab, sentence)
    max_len = model.config.max_len
    if len(ids) > max_len:
        notes.append(
            f"The sentence is {len(ids)} tokens long, but this model reads at most {max_len}: "
            f"only the first {max_len} were used."
        )
        ids = ids[:max_len]
    device = next(model.parameters()).device
    src = torch.tensor([ids], device=device)  # (1, S)
    if translate is None:
        was_training = model.training
        model.eval()
        try:
            tgt_ids = _greedy_translate(model, src, tgt_vocab.sos_id, tgt_vocab.eos_id)
        finally:
            model.train(was_training)
    else:
        out = translate(src)
        tgt_ids = out.reshape(-1).tolist() if isinstance(out, Tensor) else [int(i) for i in out]
    # The decoder inputs are every token but a final <eos>: <eos> is produced, never read.
    decoder_in = tgt_ids[:-1] if len(tgt_ids) > 1 and tgt_ids[-1] == tgt_vocab.eos_id else tgt_ids
    maps = capture_attention(
        model, src, torch.tensor([decoder_in], device=device), src_vocab=src_vocab.itos, tgt_vocab=tgt_vocab.itos
    )
    return Translation(sentence=sentence, src_ids=ids, tgt_ids=tgt_ids, maps=maps, notes=notes)


# ---------------------------------------------------------------------------------------------
# Attention heatmaps
# ---------------------------------------------------------------------------------------------

ATTENTION_KINDS = {
    "encoder_self": "encoder self-attention",
    "decoder_self": "decoder self-attention",
    "cross": "cross-attention (decoder → encoder)",
}


def _attention(maps: AttentionMaps, kind: str, layer: int, index: int) -> tuple[np.ndarray, list[str], list[str]]:
    """Weights (heads, queries, keys) of one layer, with the query and key tokens."""
    check_choice("kind", kind, list(ATTENTION_KINDS))
    per_layer = getattr(maps, kind)
    if not per_layer:
        raise ValueError(f"kind: these attention maps hold no {ATTENTION_KINDS[kind]}")
    if isinstance(layer, bool) or not isinstance(layer, int) or not 0 <= layer < len(per_layer):
        raise ValueError(f"layer: expected an int in [0, {len(per_layer)}) for {kind}, got {layer!r}")
    weights = per_layer[layer]  # (B, h, Tq, Tk)
    if not 0 <= index < weights.shape[0]:
        raise ValueError(f"index: expected a batch row in [0, {weights.shape[0]}), got {index}")
    src = maps.src_tokens[index] if maps.src_tokens is not None else [str(i) for i in range(weights.shape[-1])]
    tgt = maps.tgt_tokens[index] if maps.tgt_tokens is not None else [str(i) for i in range(weights.shape[-2])]
    queries, keys = {"encoder_self": (src, src), "decoder_self": (tgt, tgt), "cross": (tgt, src)}[kind]
    return weights[index].float().cpu().numpy(), queries, keys


def _hover_text(queries: list[str], keys: list[str]) -> list[list[str]]:
    esc = html.escape
    return [[f"query {q} “{esc(tq)}” → key {k} “{esc(tk)}”" for k, tk in enumerate(keys)]
            for q, tq in enumerate(queries)]


def _rounded(z: np.ndarray) -> list:
    """Weights as short decimals in the page (float32 would print as 0.2712000012397766)."""
    return np.round(z.astype(np.float64), 4).tolist()


def _heatmap(z: np.ndarray, queries: list[str], keys: list[str], **kwargs: object) -> go.Heatmap:
    return go.Heatmap(
        z=_rounded(z),
        text=_hover_text(queries, keys),
        hovertemplate="%{text}<br>weight %{z:.3f}<extra></extra>",
        coloraxis="coloraxis",
        **kwargs,
    )


def _token_axes(queries: list[str], keys: list[str]) -> dict[str, dict]:
    """Axis settings putting tokens on the ticks (positions as values: repeated tokens stay apart)."""
    # plotly reads tick text as HTML: "<sos>" would vanish as an unknown tag.
    keys, queries = [html.escape(t) for t in keys], [html.escape(t) for t in queries]
    return dict(
        xaxis=dict(tickmode="array", tickvals=list(range(len(keys))), ticktext=keys, tickangle=-45),
        yaxis=dict(tickmode="array", tickvals=list(range(len(queries))), ticktext=queries, autorange="reversed"),
    )


_AXIS_TITLES = {
    "encoder_self": ("source token (key)", "source token (query)"),
    "decoder_self": ("target token (key)", "target token (query)"),
    "cross": ("source token (key)", "target token (query)"),
}

_COLOR_AXIS = dict(cmin=0.0, cmax=1.0, colorscale="Blues", colorbar=dict(title=dict(text="weight")))


def _grid(n: int) -> tuple[int, int]:
    """Rows and columns for n heads: two columns up to four heads (readable at book width), else four."""
    cols = min(n, 2 if n <= 4 else 4)
    return math.ceil(n / cols), cols


def attention_figure(
    maps: AttentionMaps, kind: str = "cross", layer: int = 0, head: int | str = 0, index: int = 0
) -> go.Figure:
    """Heatmap of one head (``head=i``) or of every head in a grid (``head="all"``).

    Rows are queries, columns keys; each row sums to 1. ``kind`` is ``"encoder_self"``,
    ``"decoder_self"`` or ``"cross"``.
    """
    weights, queries, keys = _attention(maps, kind, layer, index)
    n_heads = weights.shape[0]
    x_title, y_title = _AXIS_TITLES[kind]
    title = f"{ATTENTION_KINDS[kind]}, layer {layer + 1}"
    if head == "all":
        rows, cols = _grid(n_heads)
        fig = make_subplots(rows=rows, cols=cols, subplot_titles=[f"head {h + 1}" for h in range(n_heads)],
                            horizontal_spacing=0.08, vertical_spacing=0.18)
        for h in range(n_heads):
            fig.add_trace(_heatmap(weights[h], queries, keys, name=f"head {h + 1}"),
                          row=h // cols + 1, col=h % cols + 1)
        axes = _token_axes(queries, keys)
        fig.update_xaxes(**axes["xaxis"])
        fig.update_yaxes(**axes["yaxis"])
        fig.update_layout(title=dict(text=f"{title}, all {n_heads} heads"), height=330 * rows + 80)
    else:
        if isinstance(head, bool) or not isinstance(head, int) or not 0 <= head < n_heads:
            raise ValueError(f"head: expected \"all\" or an int in [0, {n_heads}), got {head!r}")
        fig = go.Figure(_heatmap(weights[head], queries, keys, name=f"head {head + 1}"))
        fig.update_layout(title=dict(text=f"{title}, head {head + 1}"), height=480, **_token_axes(queries, keys))
        fig.update_xaxes(title_text=x_title)
        fig.update_yaxes(title_text=y_title)
    fig.update_layout(template=BOOK_TEMPLATE, coloraxis=_COLOR_AXIS)
    return fig


def _menu(buttons: list[dict], x: float, label: str, active: int = 0) -> tuple[dict, dict]:
    """A dropdown placed above the plot, and its label."""
    menu = dict(buttons=buttons, direction="down", x=x, y=1.17, xanchor="left", yanchor="bottom",
                showactive=True, active=active, pad=dict(r=4, t=0))
    note = dict(text=label, x=x, y=1.30, xref="paper", yref="paper", xanchor="left", yanchor="bottom",
                showarrow=False, font=dict(size=12, color="#555"))
    return menu, note


def _layers(maps: AttentionMaps) -> list[tuple[str, int]]:
    return [(kind, layer) for kind in ATTENTION_KINDS for layer in range(len(getattr(maps, kind)))]


def _first_shown(layers: list[tuple[str, int]]) -> int:
    """Open on the last layer's cross-attention, where a translation model's alignment shows best."""
    cross = [i for i, (kind, _) in enumerate(layers) if kind == "cross"]
    return cross[-1] if cross else 0


def attention_menu_figure(maps: AttentionMaps, index: int = 0) -> go.Figure:
    """Every head of every layer and kind in one figure, chosen with two dropdowns in the browser.

    One heatmap per (kind, layer); the first dropdown shows one of them (and sets the token
    ticks), the second writes head h's weights into all of them, so the two choices combine.
    Works without a kernel: all the weights are in the figure.
    """
    layers = _layers(maps)
    if not layers:
        raise ValueError("maps: no attention maps to show")
    data = [_attention(maps, kind, layer, index) for kind, layer in layers]
    n_heads = data[0][0].shape[0]
    first = _first_shown(layers)
    fig = go.Figure()
    for i, (weights, queries, keys) in enumerate(data):
        name = f"{layers[i][0]} {layers[i][1] + 1}"
        fig.add_trace(_heatmap(weights[0], queries, keys, visible=i == first, name=name))
    buttons = []
    for i, ((kind, layer), (_, queries, keys)) in enumerate(zip(layers, data, strict=True)):
        x_title, y_title = _AXIS_TITLES[kind]
        axes = _token_axes(queries, keys)
        buttons.append(dict(
            label=f"{ATTENTION_KINDS[kind].split(' (')[0]}, layer {layer + 1}",
            method="update",
            args=[{"visible": [j == i for j in range(len(layers))]},
                  {"xaxis.tickvals": axes["xaxis"]["tickvals"], "xaxis.ticktext": axes["xaxis"]["ticktext"],
                   "yaxis.tickvals": axes["yaxis"]["tickvals"], "yaxis.ticktext": axes["yaxis"]["ticktext"],
                   "xaxis.title.text": x_title, "yaxis.title.text": y_title}],
        ))
    head_buttons = [
        dict(label=f"head {h + 1}", method="restyle",
             args=[{"z": [_rounded(weights[h]) for weights, _, _ in data]}, list(range(len(layers)))])
        for h in range(n_heads)
    ]
    kind_menu, kind_note = _menu(buttons, 0.0, "attention and layer", active=first)
    head_menu, head_note = _menu(head_buttons, 0.55, "head")
    first_kind, _ = layers[first]
    fig.update_layout(
        template=BOOK_TEMPLATE, coloraxis=_COLOR_AXIS, height=560, margin=dict(t=130),
        updatemenus=[kind_menu, head_menu], annotations=[kind_note, head_note],
        **_token_axes(data[first][1], data[first][2]),
    )
    fig.update_xaxes(title_text=_AXIS_TITLES[first_kind][0])
    fig.update_yaxes(title_text=_AXIS_TITLES[first_kind][1])
    return fig


def attention_heads_menu_figure(maps: AttentionMaps, index: int = 0) -> go.Figure:
    """All heads of one layer side by side; a dropdown picks the kind and layer in the browser."""
    layers = _layers(maps)
    if not layers:
        raise ValueError("maps: no attention maps to show")
    data = [_attention(maps, kind, layer, index) for kind, layer in layers]
    n_heads = data[0][0].shape[0]
    rows, cols = _grid(n_heads)
    first = _first_shown(layers)
    fig = make_subplots(rows=rows, cols=cols, subplot_titles=[f"head {h + 1}" for h in range(n_heads)],
                        horizontal_spacing=0.08, vertical_spacing=0.2)
    for i, (weights, queries, keys) in enumerate(data):
        for h in range(n_heads):
            fig.add_trace(_heatmap(weights[h], queries, keys, visible=i == first, name=f"head {h + 1}"),
                          row=h // cols + 1, col=h % cols + 1)
    axis_names = [("xaxis" if h == 0 else f"xaxis{h + 1}", "yaxis" if h == 0 else f"yaxis{h + 1}")
                  for h in range(n_heads)]
    buttons = []
    for i, ((kind, layer), (_, queries, keys)) in enumerate(zip(layers, data, strict=True)):
        axes = _token_axes(queries, keys)
        relayout: dict[str, object] = {}
        for x_name, y_name in axis_names:
            relayout |= {f"{x_name}.{key}": axes["xaxis"][key] for key in ("tickvals", "ticktext")}
            relayout |= {f"{y_name}.{key}": axes["yaxis"][key] for key in ("tickvals", "ticktext")}
        buttons.append(dict(
            label=f"{ATTENTION_KINDS[kind].split(' (')[0]}, layer {layer + 1}",
            method="update",
            args=[{"visible": [j == i for j in range(len(layers)) for _ in range(n_heads)]}, relayout],
        ))
    menu, note = _menu(buttons, 0.0, "attention and layer (all heads)", active=first)
    axes = _token_axes(data[first][1], data[first][2])
    fig.update_xaxes(**axes["xaxis"])
    fig.update_yaxes(**axes["yaxis"])
    fig.update_layout(template=BOOK_TEMPLATE, coloraxis=_COLOR_AXIS, height=330 * rows + 150,
                      margin=dict(t=140), updatemenus=[menu])
    fig.add_annotation(note)
    return fig


# ---------------------------------------------------------------------------------------------
# The attention explorer (needs a kernel to translate; its saved state draws in the book)
# ---------------------------------------------------------------------------------------------


def _message(text: str, level: str = "info") -> str:
    colors = {"info": ("#1b4f72", "#eaf2f8"), "warning": ("#7d5a00", "#fff6db"), "error": ("#8a1c1c", "#fdecea")}
    fg, bg = colors[level]
    return (f'<div class="tc-message tc-{level}" style="color:{fg};background:{bg};padding:4px 8px;'
            f'border-radius:4px;margin:2px 0">{html.escape(text)}</div>')


def _sentence_case(text: str) -> str:
    return text[:1].upper() + text[1:]


KERNEL_NOTE = ("Typing a sentence and changing these controls needs a running Python kernel "
               "(JupyterLab or Binder). In the static book, the figures with menus below switch "
               "layer and head without one.")


class AttentionExplorer:
    """Type a sentence, watch the model translate it, and look at any attention map behind it.

    ``translate`` maps source ids (1, S) to target ids starting with <sos>; by default a greedy
    loop over ``model`` (to become ``transformer_lib.decoding.greedy``). Nothing the reader does
    raises: every problem becomes a short message inside the widget.
    """

    def __init__(
        self,
        model: Transformer,
        src_vocab: Vocabulary,
        tgt_vocab: Vocabulary,
        sentence: str = "",
        translate: Translate | None = None,
    ) -> None:
        if not isinstance(model, Transformer):
            raise TypeError(f"model: expected a transformer_lib.models.Transformer, got {type(model).__name__}")
        self.model, self.src_vocab, self.tgt_vocab, self.translate = model, src_vocab, tgt_vocab, translate
        self.result: Translation | None = None
        self._updating = False
        self.sentence = widgets.Text(value=sentence, placeholder="type a sentence, then Enter",
                                     description="Sentence", continuous_update=False,
                                     layout=widgets.Layout(width="32em"))
        self.button = widgets.Button(description="Translate", button_style="primary")
        self.kind = widgets.Dropdown(options=[(label.split(" (")[0], k) for k, label in ATTENTION_KINDS.items()],
                                     value="cross", description="Attention")
        self.layer = widgets.Dropdown(options=[("layer 1", 0)], value=0, description="Layer")
        self.head = widgets.Dropdown(options=[("all heads", "all")], value="all", description="Head")
        self.output_text = widgets.HTML()
        self.messages = widgets.HTML()
        self.figure = widgets.Output()
        note = widgets.HTML(f'<div style="color:#666;font-size:0.85em">{html.escape(KERNEL_NOTE)}</div>')
        self.widget = widgets.VBox([
            widgets.HBox([self.sentence, self.button]),
            self.output_text, self.messages,
            widgets.HBox([self.kind, self.layer, self.head]),
            self.figure, note,
        ])
        self.button.on_click(lambda _: self._safely(self.run))
        self.sentence.observe(lambda _: self._safely(self.run), "value")
        self.kind.observe(lambda _: self._safely(self._kind_changed), "value")
        self._layer_chosen = False  # until the reader picks a layer, show the last one
        self.layer.observe(lambda _: self._safely(self._layer_changed), "value")
        self.head.observe(lambda _: self._safely(self.draw), "value")
        self._safely(self.run)

    def _repr_mimebundle_(self, **kwargs: object) -> dict:
        return self.widget._repr_mimebundle_(**kwargs)

    def _safely(self, action: Callable[[], None]) -> None:
        """Run a callback; turn any exception into a message in the widget."""
        if self._updating:
            return
        try:
            action()
        except ValueError as err:  # the argument checks of this library: already a sentence for a reader
            self.messages.value = _message(_sentence_case(str(err).split(": ", 1)[-1]), "error")
        except Exception as err:  # noqa: BLE001 -- a reader must never see a traceback
            self.messages.value = _message(f"Something went wrong ({type(err).__name__}: {err}).", "error")

    def run(self) -> None:
        """Translate the sentence in the box and draw the chosen attention map."""
        self.result = None
        self.output_text.value = ""
        self.figure.outputs = ()
        if not self.sentence.value.strip():
            self.messages.value = _message("Type a sentence above, then press Enter or Translate.", "info")
            return
        result = translate_sentence(self.model, self.src_vocab, self.tgt_vocab, self.sentence.value, self.translate)
        self.result = result
        text = html.escape(result.output_text(self.tgt_vocab)) or "(nothing)"
        self.output_text.value = (f"<b>Model output:</b> {text} "
                                  f"<span style='color:#666'>({len(result.tgt_ids) - 1} tokens)</span>")
        self.messages.value = "".join(_message(note, "warning") for note in result.notes)
        self._updating = True
        try:
            n_heads = result.maps.cross[0].shape[1] if result.maps.cross else result.maps.encoder_self[0].shape[1]
            self.head.options = [("all heads", "all"), *[(f"head {h + 1}", h) for h in range(n_heads)]]
            self._set_layers()
        finally:
            self._updating = False
        self.draw()

    def _set_layers(self) -> None:
        n_layers = len(getattr(self.result.maps, self.kind.value))
        chosen = self.layer.value if self._layer_chosen else n_layers - 1
        self.layer.options = [(f"layer {i + 1}", i) for i in range(n_layers)]
        self.layer.value = min(chosen, n_layers - 1)

    def _layer_changed(self) -> None:
        self._layer_chosen = True
        self.draw()

    def _kind_changed(self) -> None:
        if self.result is not None:
            self._updating = True
            try:
                self._set_layers()
            finally:
                self._updating = False
        self.draw()

    def draw(self) -> None:
        if self.result is None:
            return
        fig = attention_figure(self.result.maps, self.kind.value, self.layer.value, self.head.value)
        _show_in(self.figure, fig)


# ---------------------------------------------------------------------------------------------
# Positional encodings
# ---------------------------------------------------------------------------------------------


def _check_range(name: str, value: object, low: int, high: int) -> tuple[int, int]:
    """``value`` is a (first, last) pair of ints with low <= first <= last <= high."""
    if (not isinstance(value, Sequence) or len(value) != 2
            or any(isinstance(v, bool) or not isinstance(v, int) for v in value)):
        raise TypeError(f"{name}: expected a (first, last) pair of ints, got {value!r}")
    first, last = value
    if not low <= first <= last <= high:
        raise ValueError(f"{name}: expected {low} <= first <= last <= {high}, got ({first}, {last})")
    return first, last


def _check_d_model(d_model: object) -> int:
    check_positive_int("d_model", d_model)
    if d_model % 2:
        raise ValueError(f"d_model: expected an even number (sine and cosine pairs), got {d_model}")
    return d_model  # type: ignore[return-value]


MAX_POSITIONS = 512
MAX_WAVES = 16  # lines in one wave plot; more become unreadable


def _table(d_model: int, positions: tuple[int, int]) -> np.ndarray:
    first, last = positions
    return sinusoidal_table(last + 1, d_model)[first:].numpy()  # (positions, d_model)


def rope_scores(d_head: int, positions: tuple[int, int], seed: int = 0) -> np.ndarray:
    """q_m · k_n / sqrt(d_head) for one random query and one random key rotated to every position.

    The same two vectors sit at every position, so any change across the matrix comes from RoPE
    alone, and it depends on m - n only: the matrix is constant along each diagonal.
    """
    _check_d_model(d_head)
    first, last = _check_range("positions", positions, 0, MAX_POSITIONS)
    generator = torch.Generator().manual_seed(seed)
    q, k = torch.randn(2, d_head, generator=generator)
    n = last - first + 1
    rope = RotaryEmbedding(d_head, max_len=last + 1)
    q_rot = rope(q.expand(1, 1, n, d_head), offset=first)  # (1, 1, n, d_head)
    k_rot = rope(k.expand(1, 1, n, d_head), offset=first)
    return (q_rot @ k_rot.transpose(-1, -2))[0, 0].numpy() / math.sqrt(d_head)  # (n, n)


def _wave_traces(table: np.ndarray, d_model: int, dims: Sequence[int], x: np.ndarray) -> list[go.Scatter]:
    traces = []
    for dim in dims:
        pair = dim // 2
        wavelength = 2 * math.pi * 10000 ** (2 * pair / d_model)
        kind = "sin" if dim % 2 == 0 else "cos"
        traces.append(go.Scatter(
            x=x, y=table[:, dim].astype(np.float32), mode="lines", name=f"dim {dim} ({kind})",
            line=dict(dash="solid" if kind == "sin" else "dot"),
            hovertemplate=f"dim {dim}: {kind}(pos / 10000^({2 * pair}/{d_model})), wavelength {wavelength:.3g}"
                          "<br>position %{x}: %{y:.3f}<extra></extra>",
        ))
    return traces


def _matrix(z: np.ndarray, x: np.ndarray, y: np.ndarray, hover: str, **kwargs: object) -> go.Heatmap:
    return go.Heatmap(z=z.astype(np.float32), x=x, y=y, hovertemplate=hover + "<extra></extra>", **kwargs)


def positional_encoding_figure(
    d_model: int = 64, dims: tuple[int, int] = (0, 7), positions: tuple[int, int] = (0, 50)
) -> go.Figure:
    """Four views of the sinusoidal encoding of section 3.5, and RoPE beside it.

    Top left, the waves of dimensions ``dims`` (first, last); top right, the table itself
    (position by dimension); bottom left, PE(m) · PE(n) for every pair of positions; bottom right,
    a RoPE query-key score for the same positions. Both matrices depend on m - n only.
    """
    _check_d_model(d_model)
    first_dim, last_dim = _check_range("dims", dims, 0, d_model - 1)
    if last_dim - first_dim + 1 > MAX_WAVES:
        raise ValueError(f"dims: at most {MAX_WAVES} waves fit in one plot, got {last_dim - first_dim + 1} "
                         f"(dimensions {first_dim} to {last_dim})")
    positions = _check_range("positions", positions, 0, MAX_POSITIONS)
    table = _table(d_model, positions)
    x = np.arange(positions[0], positions[1] + 1)
    fig = make_subplots(rows=2, cols=2, horizontal_spacing=0.12, vertical_spacing=0.14, subplot_titles=[
        f"waves of dimensions {first_dim}–{last_dim}", "PE table: position × dimension",
        "sinusoidal: PE(m) · PE(n)", "RoPE: q at m · k at n / √d"])
    for trace in _wave_traces(table, d_model, range(first_dim, last_dim + 1), x):
        fig.add_trace(trace, row=1, col=1)
    fig.add_trace(_matrix(table, np.arange(d_model), x, "position %{y}, dimension %{x}: %{z:.3f}",
                          colorscale="RdBu", zmid=0, showscale=False), row=1, col=2)
    fig.add_trace(_matrix(table @ table.T, x, x, "m=%{y}, n=%{x}: %{z:.2f}", colorscale="Viridis",
                          showscale=False), row=2, col=1)
    fig.add_trace(_matrix(rope_scores(d_model, positions), x, x, "m=%{y}, n=%{x}: %{z:.2f}",
                          colorscale="Viridis", showscale=False), row=2, col=2)
    fig.update_xaxes(title_text="position", row=1, col=1)
    fig.update_xaxes(title_text="dimension", row=1, col=2)
    for col in (1, 2):
        fig.update_xaxes(title_text="position n", row=2, col=col)
        fig.update_yaxes(title_text="position m", autorange="reversed", row=2, col=col)
    fig.update_yaxes(title_text="position", autorange="reversed", row=1, col=2)
    fig.update_layout(template=BOOK_TEMPLATE, height=820, title=dict(text=f"Positional encodings, d_model = {d_model}"),
                      legend=dict(font=dict(size=11)))
    return fig


def _slider(steps: list[dict], prefix: str, active: int = 0) -> dict:
    return dict(active=active, steps=steps, currentvalue=dict(prefix=prefix), pad=dict(t=80))


def positional_waves_menu_figure(d_model: int = 64, positions: tuple[int, int] = (0, 100)) -> go.Figure:
    """The sine and cosine of each dimension pair i, one pair at a time, chosen by a slider.

    Pair i oscillates with wavelength 2π · 10000^(2i / d_model): from 2π (i = 0) to nearly
    2π · 10000 for the last pair. All pairs are precomputed; the slider works without a kernel.
    """
    _check_d_model(d_model)
    positions = _check_range("positions", positions, 0, MAX_POSITIONS)
    table = _table(d_model, positions)
    x = np.arange(positions[0], positions[1] + 1)
    fig = go.Figure()
    n_pairs = d_model // 2
    for pair in range(n_pairs):
        for trace in _wave_traces(table, d_model, (2 * pair, 2 * pair + 1), x):
            trace.visible = pair == 0
            fig.add_trace(trace)
    steps = []
    for pair in range(n_pairs):
        wavelength = 2 * math.pi * 10000 ** (2 * pair / d_model)
        steps.append(dict(
            label=str(pair), method="update",
            args=[{"visible": [p == pair for p in range(n_pairs) for _ in range(2)]},
                  {"title.text": f"Dimensions {2 * pair} (sin) and {2 * pair + 1} (cos) of d_model = {d_model}: "
                                 f"wavelength {wavelength:.3g} positions"}],
        ))
    fig.update_layout(
        template=BOOK_TEMPLATE, height=480, sliders=[_slider(steps, "pair i = ")],
        title=dict(text=steps[0]["args"][1]["title.text"]),
        xaxis=dict(title=dict(text="position")), yaxis=dict(title=dict(text="value"), range=[-1.1, 1.1]),
    )
    return fig


def positional_encoding_menu_figure(
    d_models: Sequence[int] = (16, 32, 64, 128), positions: tuple[int, int] = (0, 48)
) -> go.Figure:
    """The PE table, the sinusoidal similarity PE(m) · PE(n) and a RoPE score matrix, side by side,
    for each ``d_model`` in ``d_models``, chosen by a slider in the browser."""
    if isinstance(d_models, (str, bytes)) or not isinstance(d_models, Sequence) or not d_models:
        raise TypeError(f"d_models: expected a non-empty sequence of even ints, got {d_models!r}")
    for d_model in d_models:
        _check_d_model(d_model)
    positions = _check_range("positions", positions, 0, MAX_POSITIONS)
    x = np.arange(positions[0], positions[1] + 1)
    fig = make_subplots(rows=1, cols=3, horizontal_spacing=0.09, column_widths=[0.4, 0.3, 0.3], subplot_titles=[
        "PE table: position × dimension", "sinusoidal: PE(m) · PE(n)", "RoPE: q at m · k at n / √d"])
    for i, d_model in enumerate(d_models):
        table = _table(d_model, positions)
        visible = i == 0
        fig.add_trace(_matrix(table, np.arange(d_model), x, "position %{y}, dimension %{x}: %{z:.3f}",
                              colorscale="RdBu", zmid=0, showscale=False, visible=visible), row=1, col=1)
        fig.add_trace(_matrix(table @ table.T, x, x, "m=%{y}, n=%{x}: %{z:.2f}", colorscale="Viridis",
                              showscale=False, visible=visible), row=1, col=2)
        fig.add_trace(_matrix(rope_scores(d_model, positions), x, x, "m=%{y}, n=%{x}: %{z:.2f}",
                              colorscale="Viridis", showscale=False, visible=visible), row=1, col=3)
    steps = [dict(label=str(d_model), method="update",
                  args=[{"visible": [j == i for j in range(len(d_models)) for _ in range(3)]},
                        {"title.text": f"Positions {positions[0]}–{positions[1]}, d_model = {d_model}"}])
             for i, d_model in enumerate(d_models)]
    fig.update_xaxes(title_text="dimension", row=1, col=1)
    fig.update_xaxes(title_text="position n", row=1, col=2)
    fig.update_xaxes(title_text="position n", row=1, col=3)
    fig.update_yaxes(title_text="position", autorange="reversed")
    fig.update_layout(template=BOOK_TEMPLATE, height=520, sliders=[_slider(steps, "d_model = ")],
                      title=dict(text=steps[0]["args"][1]["title.text"]))
    return fig


class PositionalEncodingExplorer:
    """Sliders for d_model, the dimensions drawn and the positions, redrawing
    ``positional_encoding_figure`` (needs a kernel; the saved state draws in the book)."""

    def __init__(self, d_model: int = 64, dims: tuple[int, int] = (0, 7), positions: tuple[int, int] = (0, 50)) -> None:
        # One slider a line, each long enough to move by one step (three side by side were a few pixels long).
        look = dict(continuous_update=False, layout=widgets.Layout(width="36em"),
                    style={"description_width": "6em"})
        self.d_model = widgets.IntSlider(value=d_model, min=4, max=512, step=2, description="d_model", **look)
        self.dims = widgets.IntRangeSlider(value=dims, min=0, max=d_model - 1, description="dimensions", **look)
        self.positions = widgets.IntRangeSlider(value=positions, min=0, max=MAX_POSITIONS, description="positions",
                                                **look)
        self.messages = widgets.HTML()
        self.figure = widgets.Output()
        note = widgets.HTML('<div style="color:#666;font-size:0.85em">Moving these sliders needs a running '
                            'Python kernel; the figures with sliders below work in the static book.</div>')
        self.widget = widgets.VBox([self.d_model, self.dims, self.positions, self.messages,
                                    self.figure, note])
        self.d_model.observe(lambda _: self._safely(self._d_model_changed), "value")
        for control in (self.dims, self.positions):
            control.observe(lambda _: self._safely(self.draw), "value")
        self._safely(self.draw)

    def _repr_mimebundle_(self, **kwargs: object) -> dict:
        return self.widget._repr_mimebundle_(**kwargs)

    def _safely(self, action: Callable[[], None]) -> None:
        try:
            action()
        except ValueError as err:
            self.messages.value = _message(_sentence_case(str(err).split(": ", 1)[-1]), "error")
        except Exception as err:  # noqa: BLE001 -- a reader must never see a traceback
            self.messages.value = _message(f"Something went wrong ({type(err).__name__}: {err}).", "error")

    def _d_model_changed(self) -> None:
        self.dims.max = self.d_model.value - 1  # moves the chosen range inside the new bounds
        self.draw()

    def draw(self) -> None:
        self.messages.value = ""
        fig = positional_encoding_figure(self.d_model.value, tuple(self.dims.value), tuple(self.positions.value))
        _show_in(self.figure, fig)


# ---------------------------------------------------------------------------------------------
# bertviz, with its JavaScript libraries from the book's static folder
# ---------------------------------------------------------------------------------------------

BOOK_BUILD_ENV = "TRANSFORMER_BOOK_BUILD"  # set by tools/execute_notebooks.py
VENDOR = Path(__file__).resolve().parent.parent / "book" / "_static" / "vendor"
_LIBRARIES = {"jQuery": "jquery/jquery.min.js", "d3": "d3/d3.min.js"}  # under _static/vendor/

_BOOK_LOADER = """
  var root = document.documentElement.getAttribute("data-content_root");  // set by Sphinx on every page
  if (root === null) {
    element.textContent = "This bertviz view was saved for the book; run the cell again to draw it here.";
    return;
  }
  var loading = window.transformerBookScripts = window.transformerBookScripts || {};
  function load(path, name) {  // each library once per page, as a global (the book loads no AMD loader)
    loading[path] = loading[path] || new Promise(function (resolve, reject) {
      var script = document.createElement("script");
      script.src = root + "_static/vendor/" + path;
      script.onload = function () { resolve(window[name]); };
      script.onerror = function () { reject(new Error("could not load " + script.src)); };
      document.head.appendChild(script);
    });
    return loading[path];
  }
  Promise.all([load(PATHS.jQuery, "jQuery"), load(PATHS.d3, "d3")])
    .then(function (libs) { draw(libs[0], libs[1]); })
    .catch(function (err) { element.textContent = "bertviz: " + err.message; throw err; });
"""

_INLINE_LOADER = """
  var libs = {};
  // Evaluated with no AMD or CommonJS loader in sight, so that each library hands over its object.
  (function (define, module, exports) { JQUERY_SOURCE }).call(libs);
  (function (define, module, exports) { D3_SOURCE }).call(libs);
  draw(window.jQuery.noConflict(true), libs.d3);
"""


def _bertviz_html(view: Callable[..., HTML], maps: AttentionMaps, index: int, assets: str | None) -> HTML:
    """Run a bertviz view and make its output work without a CDN.

    bertviz's HTML loads require.js from cdnjs, then asks require.js for d3 and jQuery from
    cdnjs. We drop the require.js tag and hand bertviz's script a stand-in ``requirejs`` that
    passes it d3 and jQuery loaded from the book's static folder (``assets="book"``) or
    evaluated from copies carried inside the output (``assets="inline"``, for a live notebook).
    """
    if assets is None:
        assets = "book" if os.environ.get(BOOK_BUILD_ENV) == "1" else "inline"
    check_choice("assets", assets, ["book", "inline"])
    depths = {len(maps.encoder_self), len(maps.decoder_self), len(maps.cross)} - {0}
    if len(depths) > 1:  # bertviz indexes every stack with the layer numbers of the first one
        raise ValueError(
            f"maps: bertviz needs as many encoder as decoder layers, got {len(maps.encoder_self)} encoder "
            f"and {len(maps.decoder_self)} decoder layers; use attention_menu_figure instead"
        )
    page = view(**maps.bertviz_kwargs(index), html_action="return").data
    page = re.sub(r'<script src="https://cdnjs[^"]*require[^"]*"></script>', "", page)
    match = re.search(r'<script type="text/javascript">\n(.*)\n</script>', page, flags=re.DOTALL)
    if match is None or "https://" in page[: match.start()] + page[match.end():]:
        raise RuntimeError("bertviz: its HTML no longer has the layout this wrapper rewrites; check bertviz's version")
    # bertviz points require.js at cdnjs for d3 and jQuery; we hand them over ourselves.
    script, n_configs = re.subn(r"require\.config\(\{.*?\}\s*\}\);", "", match.group(1), count=1, flags=re.DOTALL)
    if n_configs != 1 or "cdnjs" in script:
        raise RuntimeError("bertviz: its script no longer has the require.config this wrapper removes; check bertviz")
    old_id = re.search(r"bertviz-[0-9a-f]{32}", page).group(0)
    content = json.dumps(maps.bertviz_kwargs(index), default=lambda t: t.tolist()) + view.__name__
    new_id = _div_id(content, prefix="bertviz")
    body = page[: match.start()].replace(old_id, new_id)
    script = script.replace(old_id, new_id)
    if assets == "book":
        loader = _BOOK_LOADER.replace("PATHS", json.dumps(_LIBRARIES))
    else:
        sources = {name: VENDOR / path for name, path in _LIBRARIES.items()}
        missing = [str(p) for p in sources.values() if not p.is_file()]
        if missing:
            raise FileNotFoundError(f"bertviz: d3 and jQuery are read from the book's vendor folder; missing "
                                    f"{', '.join(missing)} (run tools/vendor_assets.sh)")
        loader = (_INLINE_LOADER.replace("JQUERY_SOURCE", sources["jQuery"].read_text())
                  .replace("D3_SOURCE", sources["d3"].read_text()))
    wrapped = f"""<script type="text/javascript">
(function () {{
  var element = document.getElementById("{new_id}");
  function draw($, d3) {{
    // bertviz asks require.js for jQuery and d3; this stand-in hands it ours.
    var requirejs = function (names, callback) {{ callback($, d3); }};
{script}
  }}
{loader}
}})();
</script>"""
    # The model view is wider than a book page: let it scroll rather than spill over the margin.
    return HTML(f'<div style="overflow-x:auto">{body}</div>{wrapped}')


def bertviz_head_view(maps: AttentionMaps, index: int = 0, assets: str | None = None) -> HTML:
    """bertviz's head view of the encoder, decoder and cross attention in ``maps``.

    ``assets``: ``"book"`` loads d3 and jQuery from the book's ``_static/vendor`` folder (what
    the built book needs); ``"inline"`` carries them in the output (about 330 kB, for a live
    notebook). By default ``"book"`` when the environment variable TRANSFORMER_BOOK_BUILD is 1
    (tools/execute_notebooks.py sets it), else ``"inline"``.
    """
    from bertviz import head_view

    return _bertviz_html(head_view, maps, index, assets)


def bertviz_model_view(maps: AttentionMaps, index: int = 0, assets: str | None = None) -> HTML:
    """bertviz's model view (every layer and head at once); ``assets`` as in ``bertviz_head_view``."""
    from bertviz import model_view

    return _bertviz_html(model_view, maps, index, assets)
