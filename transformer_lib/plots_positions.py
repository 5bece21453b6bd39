"""The figures of chapter 3 (positional encoding), as plotly figures that work in the static book."""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go

from .positional_encoding import sinusoidal_table
from .validation import check_positive_int
from .visualization import BOOK_TEMPLATE


def similarity_by_offset(d_model: int, max_offset: int) -> list[float]:
    """Cosine similarity PE(0) · PE(k) / (d_model / 2) for k = 0 .. max_offset.

    Every row of the sinusoidal table has squared norm d_model / 2, and PE(m) · PE(n) equals
    sum_i cos((m - n) omega_i), so this one curve gives the similarity of any two positions
    ``k`` apart."""
    check_positive_int("max_offset", max_offset)
    table = sinusoidal_table(max_offset + 1, d_model).double()  # (max_offset + 1, d_model)
    return ((table[0] @ table.T) / (d_model / 2)).tolist()


def similarity_by_offset_figure(d_models: Sequence[int] = (16, 64, 256), max_offset: int = 100) -> go.Figure:
    """Similarity of two sinusoidal encodings against their distance, one line per d_model.

    A dropdown shows one d_model at a time or all together (precomputed; no kernel needed)."""
    if isinstance(d_models, str) or not isinstance(d_models, Sequence) or not d_models:
        raise TypeError(f"d_models: expected a non-empty sequence of even ints, got {d_models!r}")
    fig = go.Figure()
    offsets = list(range(max_offset + 1))
    for d_model in d_models:
        values = [round(v, 4) for v in similarity_by_offset(d_model, max_offset)]
        fig.add_trace(go.Scatter(
            x=offsets, y=values, mode="lines", name=f"d_model = {d_model}",
            hovertemplate=f"d_model {d_model}<br>offset %{{x}}: %{{y:.3f}}<extra></extra>",
        ))
    n = len(d_models)
    buttons = [dict(label="all", method="update", args=[{"visible": [True] * n}])]
    buttons += [dict(label=f"d_model = {d}", method="update", args=[{"visible": [j == i for j in range(n)]}])
                for i, d in enumerate(d_models)]
    fig.update_layout(
        template=BOOK_TEMPLATE, height=440,
        title=dict(text="Similarity of two positional encodings k positions apart"),
        xaxis=dict(title=dict(text="offset k = |m − n|")),
        yaxis=dict(title=dict(text="PE(m) · PE(n) / (d_model / 2)")),
        updatemenus=[dict(buttons=buttons, direction="down", x=1.0, xanchor="right", y=1.15, yanchor="top")],
    )
    return fig
