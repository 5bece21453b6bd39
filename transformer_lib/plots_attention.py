"""Figures of chapters 4 and 5: masks as tables, and what the sqrt(d_k) scaling changes.

Attention maps of a trained model are drawn by :mod:`transformer_lib.visualization`; this
module holds the figures specific to the two attention chapters. Both return plotly figures
that use the book's template; display them with ``visualization.show``.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence

import plotly.graph_objects as go
from torch import Tensor

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
                   log_y: Sequence[str] = ()) -> go.Figure:
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
        template=BOOK_TEMPLATE, height=440, margin=dict(t=110),
        updatemenus=[dict(buttons=buttons, direction="down", x=0.0, y=1.2, xanchor="left", yanchor="bottom")],
        legend=dict(orientation="h", y=-0.25),
        xaxis=dict(type="log", title=dict(text="d_k (dimension of queries and keys)"), tickvals=d_ks),
        yaxis=dict(title=dict(text=names[0]), type="log" if names[0] in log_y else "linear"),
    )
    return fig
