"""The figures of chapter 1 (the limits of RNNs), as plotly figures that work in the static book.

Each function takes numbers the notebook computed and returns a ``go.Figure``; show it with
``transformer_lib.figures.display.show``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import plotly.graph_objects as go

from ..evaluation import LengthBucket
from ..validation import check_int, empty_or_wrong_type
from .display import BOOK_TEMPLATE, DASHES, MARKERS, PALETTE


def _positive_or_gap(values: Sequence[float]) -> list[float | None]:
    """Values for a log axis, rounded to 3 significant digits; zeros (underflow) become gaps."""
    return [float(f"{v:.3g}") if v > 0 and math.isfinite(v) else None for v in values]


def _check_curves(name: str, curves: Mapping, length: int | None = None, against: str = "the first") -> int:
    """Each curve of ``curves`` holds ``length`` values (``against`` names where that length comes from),
    or as many as the first."""
    if not isinstance(curves, Mapping):
        raise TypeError(f"{name}: expected a mapping of label -> sequence of numbers, got {type(curves).__name__}")
    for label, values in curves.items():
        if isinstance(values, str) or not isinstance(values, Sequence) or not values:
            raise empty_or_wrong_type(values)(
                f"{name}[{label!r}]: expected a non-empty sequence of numbers, got {values!r:.60}")
        if length is None:
            length = len(values)
        if len(values) != length:
            raise ValueError(f"{name}[{label!r}]: expected {length} values like {against} and the other curves, "
                             f"got {len(values)}")
    return length or 0


def gradient_norm_figure(
    by_scale: Mapping[float, Sequence[float]], fixed: Mapping[str, Sequence[float]] | None = None
) -> go.Figure:
    """Gradient norm || d h_T / d x_{T-k} || against the distance k, on a log scale.

    ``by_scale`` maps a recurrent scale (the singular values of W_hh) to the norms of a vanilla
    RNN, indexed by distance k = 0, 1, ...; a slider picks the scale. The curves of ``fixed``
    (e.g. an LSTM) stay visible whatever the slider says, for comparison. All curves are
    precomputed, so the slider works in the static page.
    """
    if not isinstance(by_scale, Mapping) or not by_scale:
        raise empty_or_wrong_type(by_scale)("by_scale: expected a mapping with at least one recurrent scale")
    fixed = {} if fixed is None else fixed
    length = _check_curves("by_scale", by_scale)
    _check_curves("fixed", fixed, length)
    scales = list(by_scale)
    distance = list(range(length))
    fig = go.Figure()
    for i, scale in enumerate(scales):
        fig.add_trace(go.Scatter(
            x=distance, y=_positive_or_gap(by_scale[scale]), mode="lines+markers", marker=dict(size=4),
            name=f"vanilla RNN, scale {scale:g}", visible=i == 0, line=dict(color=PALETTE[0]),
            hovertemplate=f"vanilla RNN (scale {scale:g})<br>distance %{{x}}: %{{y:.3g}}<extra></extra>",
        ))
    for j, (label, values) in enumerate(fixed.items()):
        # a dash pattern and a marker shape of their own, not only a colour, tell the curves apart
        fig.add_trace(go.Scatter(
            x=distance, y=_positive_or_gap(values), mode="lines+markers", name=label,
            line=dict(color=PALETTE[1 + j % (len(PALETTE) - 1)], dash=DASHES[1 + j % (len(DASHES) - 1)]),
            marker=dict(size=6, symbol=MARKERS[1 + j % (len(MARKERS) - 1)], maxdisplayed=25),
            hovertemplate=f"{label}<br>distance %{{x}}: %{{y:.3g}}<extra></extra>",
        ))
    steps = [dict(
        label=f"{scale:g}", method="update",
        args=[{"visible": [k == i for k in range(len(scales))] + [True] * len(fixed)},
              {"title.text": f"Gradient reaching back k steps, W_hh with singular values {scale:g}"}],
    ) for i, scale in enumerate(scales)]
    fig.update_layout(
        template=BOOK_TEMPLATE, height=500, title=dict(text=steps[0]["args"][1]["title.text"]),
        xaxis=dict(title=dict(text="distance k = T − t (steps back from the end)")),
        yaxis=dict(title=dict(text="‖∂h_T / ∂x_t‖"), type="log", exponentformat="power"),
        sliders=[dict(active=0, steps=steps, currentvalue=dict(prefix="recurrent scale = "), pad=dict(t=60))],
        # inside the plot, bottom left (the template hangs a legend below the plot, over the ticks)
        legend=dict(orientation="v", x=0.01, xanchor="left", y=0.01, yanchor="bottom", bgcolor="rgba(255,255,255,0.8)"),
    )
    return fig


def timing_figure(lengths: Sequence[int], seconds: Mapping[str, Sequence[float]]) -> go.Figure:
    """Wall-clock time of one forward pass against the sequence length, one line per model."""
    if isinstance(lengths, str) or not isinstance(lengths, Sequence) or not lengths:
        raise empty_or_wrong_type(lengths)(f"lengths: expected a non-empty sequence of ints, got {lengths!r:.60}")
    lengths = [check_int(f"lengths[{i}]", n, minimum=1) for i, n in enumerate(lengths)]
    _check_curves("seconds", seconds, len(lengths), against="lengths")
    fig = go.Figure()
    for j, (label, values) in enumerate(seconds.items()):
        fig.add_trace(go.Scatter(
            x=list(lengths), y=[round(1000 * v, 3) for v in values], mode="lines+markers", name=label,
            line=dict(dash=DASHES[j % len(DASHES)]), marker=dict(symbol=MARKERS[j % len(MARKERS)], size=7),
            hovertemplate=f"{label}<br>length %{{x}}: %{{y:.3g}} ms<extra></extra>",
        ))
    fig.update_layout(
        template=BOOK_TEMPLATE, height=420, title=dict(text="One forward pass, growing sequence length"),
        xaxis=dict(title=dict(text="sequence length T")), yaxis=dict(title=dict(text="milliseconds")),
    )
    return fig


def accuracy_by_length_figure(buckets: Mapping[str, Sequence[LengthBucket]]) -> go.Figure:
    """Exact-match accuracy per bucket of source length, grouped bars, one colour per model.

    Hovering a bar shows the bucket's sentence count and BLEU."""
    if not isinstance(buckets, Mapping) or not buckets:
        raise empty_or_wrong_type(buckets)(
            "buckets: expected a non-empty mapping of model name -> list of LengthBucket")
    fig = go.Figure()
    for j, (label, rows) in enumerate(buckets.items()):
        if isinstance(rows, str) or not isinstance(rows, Sequence) or not rows \
                or not all(isinstance(b, LengthBucket) for b in rows):
            raise empty_or_wrong_type(rows)(f"buckets[{label!r}]: expected a non-empty list of LengthBucket "
                            "(from evaluation.accuracy_by_length)")
        fig.add_trace(go.Bar(
            x=[f"{b.low}–{b.high - 1} words" for b in rows], y=[round(100 * b.exact_match, 2) for b in rows],
            name=label, marker=dict(pattern=dict(shape=["", "/", ".", "x", "-"][j % 5])),
            customdata=[[b.count, round(b.bleu, 1)] for b in rows],
            hovertemplate=f"{label}<br>%{{x}}: %{{y:.1f}}% exact<br>%{{customdata[0]}} sentences, "
                          "BLEU %{customdata[1]}<extra></extra>",
        ))
    fig.update_layout(
        template=BOOK_TEMPLATE, height=420, barmode="group",
        title=dict(text="Exact-match accuracy by source length (test split)"),
        xaxis=dict(title=dict(text="English source length")),
        yaxis=dict(title=dict(text="exact match (%)"), range=[0, 100]),
    )
    return fig
