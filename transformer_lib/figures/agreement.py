"""How often each head's largest weight lands on the word an agreeing word agrees with (chapter 5)."""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..validation import check_instance, check_number, empty_or_wrong_type
from .display import BOOK_TEMPLATE


def head_agreement_figure(rates: Mapping[str, Sequence[Sequence[float]]], baselines: Mapping[str, float],
                          title: str = "agreement found by each head") -> go.Figure:
    """One panel per label of ``rates``: a (layers, heads) grid of hit rates in [0, 1], each cell printed
    as a percentage; the panel's title gives ``baselines[label]``, the best position-only rule's rate."""
    check_instance("title", title, str, "a str")
    if not isinstance(rates, Mapping) or not rates:
        raise empty_or_wrong_type(rates)("rates: expected a non-empty mapping of label -> (layers, heads) rates")
    check_instance("baselines", baselines, Mapping, "a mapping of label -> the position rule's rate")
    panels = []
    for label, grid in rates.items():
        name = f"rates[{label!r}]"
        check_instance(name, grid, Sequence, "a (layers, heads) grid of rates")
        rows = [[check_number(name, v) for v in check_instance(name, row, Sequence, "a row of rates")]
                for row in grid]
        if not rows or len({len(row) for row in rows}) != 1 or not all(0 <= v <= 1 for row in rows for v in row):
            raise ValueError(f"rates[{label!r}]: expected a non-empty (layers, heads) grid of rates in [0, 1]")
        if label not in baselines:
            raise ValueError(f"baselines: expected a rate for {label!r}, got labels {list(baselines)!r:.60}")
        if not 0 <= check_number(f"baselines[{label!r}]", baselines[label]) <= 1:
            raise ValueError(f"baselines[{label!r}]: expected a rate in [0, 1], got {baselines[label]}")
        panels.append((label, rows))
    fig = make_subplots(rows=1, cols=len(panels), horizontal_spacing=0.14, subplot_titles=[
        f"{html.escape(label)}<br>(position rule: {100 * baselines[label]:.0f}%)" for label, _ in panels])
    for i, (label, rows) in enumerate(panels):
        fig.add_trace(go.Heatmap(
            z=rows, x=[f"head {h + 1}" for h in range(len(rows[0]))], y=[f"layer {n + 1}" for n in range(len(rows))],
            coloraxis="coloraxis", text=[[f"{100 * v:.0f}%" for v in row] for row in rows], texttemplate="%{text}",
            name=label, hovertemplate="%{y}, %{x}: %{text}<extra></extra>"), row=1, col=i + 1)
        fig.update_yaxes(autorange="reversed", row=1, col=i + 1)
    fig.update_xaxes(title_text="head")
    fig.update_yaxes(title_text="layer")  # every panel's axis, as the tests and screen readers ask
    fig.update_layout(template=BOOK_TEMPLATE, title=dict(text=html.escape(title)), height=320,
                      coloraxis=dict(cmin=0.0, cmax=1.0, colorscale="Blues",
                                     colorbar=dict(title=dict(text="hit rate"))))
    return fig
