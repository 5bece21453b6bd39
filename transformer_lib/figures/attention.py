"""The attention figures of chapters 4 and 5, and the heatmaps of a trained model's attention.

* ``attention_figure``, ``attention_menu_figure`` and ``attention_heads_menu_figure`` draw the
  maps that ``capture.capture_attention`` reads out of a model: one head, every head, or any
  layer and head chosen with dropdowns that work in the static book (no kernel needed);
* ``mask_figure`` draws a mask as a table; ``scaling_figure`` what the sqrt(d_k) scaling
  changes. (How focused each head is, a measurement, is ``analysis.head_statistics``.)

All return plotly figures in the book's template; display them with ``figures.display.show``.
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots
from torch import Tensor

from ..capture import AttentionMaps
from ..html_embed import PAGE_DECIMALS
from ..validation import check_choice, check_index, check_instance, check_int, check_iterable, check_token_list
from .display import BOOK_TEMPLATE, DASHES, MARKERS, PALETTE

ATTENTION_KINDS = {
    "encoder_self": "encoder self-attention",
    "decoder_self": "decoder self-attention",
    "cross": "cross-attention (decoder → encoder)",
}


def _attention(maps: AttentionMaps, kind: str, layer: int, index: int) -> tuple[np.ndarray, list[str], list[str]]:
    """Weights (heads, queries, keys) of one layer, with the query and key tokens."""
    _check_maps(maps)
    check_choice("kind", kind, list(ATTENTION_KINDS))
    per_layer = getattr(maps, kind)
    if not per_layer:
        raise ValueError(f"kind: these attention maps hold no {ATTENTION_KINDS[kind]}")
    check_index("layer", layer, len(per_layer), context=f" for {kind}")
    weights = per_layer[layer]  # (B, h, Tq, Tk)
    index = check_index("index", index, weights.shape[0], "a batch row (int)")
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
    return np.round(z.astype(np.float64), PAGE_DECIMALS).tolist()


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
                            horizontal_spacing=_column_gap([queries]), vertical_spacing=0.18)
        for h in range(n_heads):
            fig.add_trace(_heatmap(weights[h], queries, keys, name=f"head {h + 1}"),
                          row=h // cols + 1, col=h % cols + 1)
        axes = _token_axes(queries, keys)
        fig.update_xaxes(**axes["xaxis"], title_text=x_title)  # each panel's axes say which side, as one head's
        fig.update_yaxes(**axes["yaxis"], title_text=y_title)
        fig.update_layout(title=dict(text=f"{title}, all {n_heads} heads"), height=330 * rows + 80)
    else:
        if isinstance(head, str):  # a name other than "all": the wrong type for a head's index
            raise TypeError(f'head: expected "all" or an int in [0, {n_heads}), got {head!r:.40}')
        check_index("head", head, n_heads, '"all" or an int')
        fig = go.Figure(_heatmap(weights[head], queries, keys, name=f"head {head + 1}"))
        fig.update_layout(title=dict(text=f"{title}, head {head + 1}"), height=480, **_token_axes(queries, keys))
        fig.update_xaxes(title_text=x_title)
        fig.update_yaxes(title_text=y_title)
    fig.update_layout(template=BOOK_TEMPLATE, coloraxis=_COLOR_AXIS)
    return fig


# In a grid each panel's axes say which side is which; the tokens on the ticks say the rest.
_GRID_AXIS_TITLES = ("key", "query")


def _column_gap(token_lists: list[list[str]]) -> float:
    """The gap between a grid's columns, as a fraction of the plot's width: room for the right-hand
    panels' query tokens and their "query" title, which a fixed 8% left on the left-hand heatmap.
    About 8 px a character of the 13 px tick font and 50 px for the ticks and the title, in a plot
    about 500 px wide (the book's column less the margins and the colour bar);
    book/_static/live/explorers.js spaces its grids alike."""
    longest = max((len(str(token)) for tokens in token_lists for token in tokens), default=1)
    return min(0.25, max(0.1, (8 * longest + 50) / 500))
# Menus stack above the plot, one per line, each a fixed number of pixels above the plot area,
# so that on a phone's narrow column they never overlap (side by side they did).
_MENU_LINE_PX = 34
_MENU_ABOVE_PX = 26  # clear of the subplot titles ("head 1") just above a grid's top row


def _menu(buttons: list[dict], line: int, plot_px: int, name: str, active: int = 0) -> dict:
    """A dropdown placed above the plot on line ``line`` (0: nearest the plot), given the plot
    area's height ``plot_px``. Its buttons' labels say what they choose ("head 2", "cross-attention,
    layer 1"), so it needs no separate label that could collide with it. ``name`` labels the
    keyboard control the book adds for it (book/_static/plotly-config.js)."""
    y = 1.0 + (_MENU_ABOVE_PX + line * _MENU_LINE_PX) / plot_px
    return dict(name=name, buttons=buttons, direction="down", x=0.0, y=y, xanchor="left", yanchor="bottom",
                showactive=True, active=active, pad=dict(r=4, t=0, b=0))


def _check_maps(maps: object) -> None:
    check_instance("maps", maps, AttentionMaps, "transformer_lib.capture.AttentionMaps")


def _check_title(title: object) -> None:
    check_instance("title", title, str, "a str")


def _layers(maps: AttentionMaps) -> list[tuple[str, int]]:
    _check_maps(maps)
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
    height, top, bottom = 600, 150, 50
    plot_px = height - top - bottom
    first_kind, _ = layers[first]
    fig.update_layout(
        template=BOOK_TEMPLATE, coloraxis=_COLOR_AXIS, height=height, margin=dict(t=top, b=bottom),
        title=dict(text="Attention maps: choose attention, layer and head", y=0.98, yanchor="top"),
        updatemenus=[_menu(buttons, 1, plot_px, "attention and layer", active=first),
                     _menu(head_buttons, 0, plot_px, "head")],
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
                        horizontal_spacing=_column_gap([queries for _, queries, _ in data]), vertical_spacing=0.2)
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
    axes = _token_axes(data[first][1], data[first][2])
    fig.update_xaxes(**axes["xaxis"], title_text=_GRID_AXIS_TITLES[0])
    fig.update_yaxes(**axes["yaxis"], title_text=_GRID_AXIS_TITLES[1])
    height, top, bottom = 330 * rows + 150, 140, 50
    fig.update_layout(template=BOOK_TEMPLATE, coloraxis=_COLOR_AXIS, height=height, margin=dict(t=top, b=bottom),
                      title=dict(text=f"All {n_heads} heads of one layer: choose attention and layer",
                                 y=0.99, yanchor="top"),
                      updatemenus=[_menu(buttons, 0, height - top - bottom, "attention and layer", active=first)])
    return fig



def _check_tokens(name: str, tokens: object, expected: int, what: str = "mask") -> list[str]:
    if isinstance(tokens, str) or not isinstance(tokens, Sequence):
        raise TypeError(f"{name}: expected a sequence of token strings, got {type(tokens).__name__}")
    if len(tokens) != expected:
        row = {"queries": "row", "keys": "column"}.get(name, name)
        raise ValueError(f"{name}: expected {expected} tokens (one per {what} {row}), got {len(tokens)}")
    return [str(t) for t in tokens]


def mask_figure(mask: Tensor, queries: Sequence[str], keys: Sequence[str] | None = None,
                title: str = "attention mask") -> go.Figure:
    """Heatmap of a boolean (queries, keys) mask: dark where a query may attend, white where not.

    ``queries`` and ``keys`` label the rows and columns (``keys`` defaults to ``queries``,
    as in self-attention). Hovering a cell says whether that query may see that key.
    """
    _check_title(title)
    if not isinstance(mask, Tensor):
        raise TypeError(f"mask: expected a torch.Tensor, got {type(mask).__name__}")
    if mask.dim() != 2:
        raise ValueError(f"mask: expected a 2-d (queries, keys) mask, got shape {tuple(mask.shape)}")
    keys = queries if keys is None else keys
    queries = _check_tokens("queries", queries, mask.shape[0])
    keys = _check_tokens("keys", keys, mask.shape[1])
    allowed = mask.bool().tolist()
    text = [[f"query {i} “{html.escape(q)}” → key {j} “{html.escape(k)}”: "
             f"{'may attend' if allowed[i][j] else 'blocked'}" for j, k in enumerate(keys)]
            for i, q in enumerate(queries)]
    fig = go.Figure(go.Heatmap(
        z=[[int(a) for a in row] for row in allowed], text=text, hovertemplate="%{text}<extra></extra>",
        zmin=0, zmax=1, colorscale=[[0.0, "#ffffff"], [0.5, "#ffffff"], [0.5, "#1f4e79"], [1.0, "#1f4e79"]],
        xgap=2, ygap=2, colorbar=dict(tickvals=[0.25, 0.75], ticktext=["blocked", "may attend"], len=0.6,
                                      thickness=14, outlinecolor="#888", outlinewidth=1),
    ))
    fig.update_layout(
        # the title at the top of the figure: in the middle of the top margin (plotly's default) it
        # lay on the key axis's title, which this figure puts above the plot
        template=BOOK_TEMPLATE, title=dict(text=title, y=1, yref="container", yanchor="top", pad=dict(t=14)),
        height=120 + 45 * len(queries),
        xaxis=dict(tickmode="array", tickvals=list(range(len(keys))), ticktext=[html.escape(k) for k in keys],
                   title=dict(text="key"), side="top"),
        yaxis=dict(tickmode="array", tickvals=list(range(len(queries))),
                   ticktext=[html.escape(q) for q in queries], title=dict(text="query"), autorange="reversed"),
        margin=dict(t=130),
    )
    return fig


def scaling_figure(d_ks: Sequence[int], measures: Mapping[str, Mapping[str, Sequence[float]]],
                   log_y: Sequence[str] = (), title: str = "") -> go.Figure:
    """Curves against d_k (log axis), one measure at a time, picked with a dropdown in the browser.

    ``measures`` maps a measure's name (e.g. ``"largest softmax weight"``) to its curves, e.g.
    ``{"divided by sqrt(d_k)": [...], "not scaled": [...]}``, each with one value per ``d_k``.
    Measures named in ``log_y`` get a logarithmic y axis.
    """
    check_iterable("d_ks", d_ks, "a list of ints")
    d_ks = [check_int(f"d_ks[{i}]", d, minimum=1) for i, d in enumerate(d_ks)]  # never truncated
    check_token_list("log_y", log_y, item="measure name")
    _check_title(title)
    if not d_ks:
        raise ValueError("d_ks: expected at least one d_k, got none")
    if not isinstance(measures, Mapping):
        raise TypeError(f"measures: expected a mapping of measure -> curves, got {type(measures).__name__}")
    if not measures:
        raise ValueError("measures: expected at least one measure, got none")
    for name, curves in measures.items():
        if not isinstance(curves, Mapping):
            raise TypeError(f"measures[{name!r}]: expected a mapping of label -> values, got {type(curves).__name__}")
    for name, curves in measures.items():
        for label, values in curves.items():
            if len(values) != len(d_ks):
                raise ValueError(f"measures: {name!r} / {label!r} has {len(values)} values, expected {len(d_ks)}"
                                 " (one per d_k)")
    fig = go.Figure()
    owner = []
    for m, curves in enumerate(measures.values()):
        for j, (label, values) in enumerate(curves.items()):
            # each curve its own colour, dash and marker (the same for a label under every measure),
            # so that no comparison rests on colour alone
            fig.add_trace(go.Scatter(
                x=d_ks, y=[float(f"{v:.4g}") for v in values], mode="lines+markers", name=label,
                line=dict(color=PALETTE[j % len(PALETTE)], dash=DASHES[j % len(DASHES)]),
                marker=dict(symbol=MARKERS[j % len(MARKERS)], size=8), visible=m == 0,
                hovertemplate=f"{html.escape(label)}<br>d_k=%{{x}}: %{{y:.3g}}<extra></extra>",
            ))
            owner.append(m)
    names = list(measures)
    buttons = [dict(label=name, method="update",
                    args=[{"visible": [o == m for o in owner]},
                          {"yaxis.title.text": name, "yaxis.type": "log" if name in log_y else "linear"}])
               for m, name in enumerate(names)]
    fig.update_layout(
        template=BOOK_TEMPLATE, height=440, margin=dict(t=110), title=dict(text=title, x=0.98, xanchor="right"),
        updatemenus=[dict(name="measure", buttons=buttons, direction="down", x=0.0, y=1.2, xanchor="left",
                          yanchor="bottom")],
        legend=dict(orientation="h", y=-0.3),
        xaxis=dict(type="log", title=dict(text="d_k (dimension of queries and keys)"), tickvals=d_ks),
        yaxis=dict(title=dict(text=names[0]), type="log" if names[0] in log_y else "linear"),
    )
    return fig


def weights_side_by_side_figure(weights: Mapping[str, Tensor], queries: Sequence[str], keys: Sequence[str],
                                title: str = "attention weights") -> go.Figure:
    """Heatmaps of (queries, keys) weight matrices side by side, one panel per label of ``weights``,
    on one colour scale (0 to 1), e.g. dot-product and additive attention on the same inputs."""
    _check_title(title)
    if not isinstance(weights, Mapping) or not weights:
        raise (ValueError if isinstance(weights, Mapping) else TypeError)(  # an empty mapping: a wrong value
            "weights: expected a non-empty mapping of label -> (queries, keys) tensor")
    shapes = set()
    for label, matrix in weights.items():
        if not isinstance(matrix, Tensor) or matrix.dim() != 2:
            raise TypeError(f"weights[{label!r}]: expected a 2-d (queries, keys) torch.Tensor, got {matrix!r:.60}")
        shapes.add(tuple(matrix.shape))
    if len(shapes) > 1:
        raise ValueError(f"weights: expected matrices of one shape, got shapes {sorted(shapes)}")
    ((n_queries, n_keys),) = shapes
    queries = _check_tokens("queries", queries, n_queries, "weight-matrix")
    keys = _check_tokens("keys", keys, n_keys, "weight-matrix")
    labels = list(weights)
    fig = make_subplots(rows=1, cols=len(labels), subplot_titles=[html.escape(label) for label in labels],
                        horizontal_spacing=0.12)
    for i, label in enumerate(labels):
        fig.add_trace(_heatmap(weights[label].detach().cpu().numpy(), queries, keys, name=label), row=1, col=i + 1)
    axes = _token_axes(queries, keys)
    fig.update_xaxes(**axes["xaxis"], title_text=_GRID_AXIS_TITLES[0])
    fig.update_yaxes(**axes["yaxis"], title_text=_GRID_AXIS_TITLES[1])
    fig.update_layout(template=BOOK_TEMPLATE, coloraxis=_COLOR_AXIS, title=dict(text=title),
                      height=140 + 40 * n_queries)
    return fig
