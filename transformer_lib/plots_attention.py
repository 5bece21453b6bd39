"""Figures and measures of chapters 4 and 5: masks as tables, what the sqrt(d_k) scaling
changes, and how focused each attention head is.

Attention maps of a trained model are drawn by :mod:`transformer_lib.visualization`; this
module holds what is specific to the two attention chapters. The figures are plotly figures
that use the book's template; display them with ``visualization.show``.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence

import plotly.graph_objects as go
import torch
from torch import Tensor

from .attention import causal_mask
from .capture import AttentionMaps
from .visualization import BOOK_TEMPLATE


def _check_tokens(name: str, tokens: object, expected: int) -> list[str]:
    if isinstance(tokens, str) or not isinstance(tokens, Sequence):
        raise TypeError(f"{name}: expected a sequence of token strings, got {type(tokens).__name__}")
    if len(tokens) != expected:
        raise ValueError(f"{name}: expected {expected} tokens (one per mask {name[:-1]}), got {len(tokens)}")
    return [str(t) for t in tokens]


def mask_figure(mask: Tensor, queries: Sequence[str], keys: Sequence[str] | None = None,
                title: str = "attention mask") -> go.Figure:
    """Heatmap of a boolean (queries, keys) mask: dark where a query may attend, white where not.

    ``queries`` and ``keys`` label the rows and columns (``keys`` defaults to ``queries``,
    as in self-attention). Hovering a cell says whether that query may see that key.
    """
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
        zmin=0, zmax=1, colorscale=[[0.0, "#ffffff"], [1.0, "#1f4e79"]], showscale=False, xgap=2, ygap=2,
    ))
    fig.update_layout(
        template=BOOK_TEMPLATE, title=dict(text=title), height=120 + 45 * len(queries),
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
    d_ks = [int(d) for d in d_ks]
    if not d_ks:
        raise ValueError("d_ks: expected at least one d_k, got none")
    if not measures:
        raise ValueError("measures: expected at least one measure, got none")
    for name, curves in measures.items():
        for label, values in curves.items():
            if len(values) != len(d_ks):
                raise ValueError(f"measures: {name!r} / {label!r} has {len(values)} values, expected {len(d_ks)}"
                                 " (one per d_k)")
    fig = go.Figure()
    owner = []
    for m, curves in enumerate(measures.values()):
        for label, values in curves.items():
            fig.add_trace(go.Scatter(
                x=d_ks, y=[float(f"{v:.4g}") for v in values], mode="lines+markers", name=label,
                visible=m == 0, hovertemplate=f"{html.escape(label)}<br>d_k=%{{x}}: %{{y:.3g}}<extra></extra>",
            ))
            owner.append(m)
    names = list(measures)
    buttons = [dict(label=name, method="update",
                    args=[{"visible": [o == m for o in owner]},
                          {"yaxis.title.text": name, "yaxis.type": "log" if name in log_y else "linear"}])
               for m, name in enumerate(names)]
    fig.update_layout(
        template=BOOK_TEMPLATE, height=440, margin=dict(t=110), title=dict(text=title, x=0.98, xanchor="right"),
        updatemenus=[dict(buttons=buttons, direction="down", x=0.0, y=1.2, xanchor="left", yanchor="bottom")],
        legend=dict(orientation="h", y=-0.25),
        xaxis=dict(type="log", title=dict(text="d_k (dimension of queries and keys)"), tickvals=d_ks),
        yaxis=dict(title=dict(text=names[0]), type="log" if names[0] in log_y else "linear"),
    )
    return fig


def _row_statistics(weights: Tensor, visible: Tensor, self_attention: bool) -> dict[str, float]:
    """Averages over the query rows of one head's (T_q, T_k) weights that see more than one key."""
    n_visible = visible.sum(dim=-1).double()  # (T_q,)
    rows = n_visible > 1
    w = weights.double()
    entropy = -(w * w.clamp_min(1e-30).log()).sum(dim=-1)  # 0 log 0 = 0
    result = {"entropy": (entropy[rows] / n_visible[rows].log()).mean().item(),
              "max weight": w.max(dim=-1).values[rows].mean().item()}
    if self_attention:
        positions = torch.arange(w.shape[0])
        result["own"] = w[positions, positions][rows].mean().item()
        previous = torch.cat([torch.zeros(1, dtype=w.dtype), w[positions[1:], positions[1:] - 1]])
        result["previous"] = previous[rows].mean().item()
    else:
        result["own"] = result["previous"] = float("nan")
    return result


def head_statistics(maps: AttentionMaps, index: int = 0) -> list[dict[str, object]]:
    """How focused each head of each layer is, for batch row ``index`` of ``maps``.

    One dict per (attention kind, layer, head), averaged over the query rows that may see more
    than one key (with a causal mask, the first row sees only itself):

    * ``entropy``: of the row's weights, as a fraction of log(visible keys), the entropy of a
      uniform row (0 = all weight on one key, 1 = spread evenly);
    * ``max weight``: the largest weight of the row;
    * ``own`` and ``previous``: in self-attention, the weight on the query's own position and on
      the position before it (NaN in cross-attention, where queries and keys are different tokens).

    Padding is not removed: pass one unpadded sentence per call.
    """
    if not isinstance(maps, AttentionMaps):
        raise TypeError(f"maps: expected transformer_lib.capture.AttentionMaps, got {type(maps).__name__}")
    rows = []
    for kind in ("encoder_self", "decoder_self", "cross"):
        for layer, weights in enumerate(getattr(maps, kind)):  # (B, h, T_q, T_k)
            if not 0 <= index < weights.shape[0]:
                raise ValueError(f"index: expected a batch row in [0, {weights.shape[0]}), got {index}")
            n_q, n_k = weights.shape[-2:]
            visible = causal_mask(n_q, n_k) if kind == "decoder_self" else torch.ones(n_q, n_k, dtype=torch.bool)
            for head in range(weights.shape[1]):
                stats = _row_statistics(weights[index, head], visible, kind != "cross")
                rows.append({"attention": kind, "layer": layer + 1, "head": head + 1, **stats})
    if not rows:
        raise ValueError("maps: no attention maps to measure")
    return rows
