"""Figures of chapter 6: where a Transformer's parameters live, and how norms scale through depth.

``parameter_breakdown_figure`` draws ``models.parameter_breakdown`` (the parameters of each part
of the encoder-decoder) as bars with a menu over presets. ``norm_placement_figure`` draws
``analysis.norm_placement_scales`` (activations and gradients, layer by layer, of a deep encoder
stack, post-norm against pre-norm). ``ablation_figure`` draws the training curves of
``pretrained.ablations``: the book's model and its variants without residual connections, with one
layer, without dropout.
"""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go

from ..analysis import norm_placement_scales
from ..config import PRESETS
from ..models import COMPONENTS, parameter_breakdown
from ..validation import check_number, check_positive_int, empty_or_wrong_type
from .display import BOOK_TEMPLATE, DASHES, MARKERS, PALETTE
from .training import moving_average


def _millions(n: int) -> str:
    return f"{n / 1e6:.2f}M" if n >= 1e5 else f"{n / 1e3:.1f}k"


def parameter_breakdown_figure(presets: Sequence[str] = ("small", "base", "big")) -> go.Figure:
    """Horizontal bars of ``parameter_breakdown`` per component, one set per preset, with a
    dropdown menu choosing the preset (every preset is stored in the figure)."""
    if isinstance(presets, str) or not isinstance(presets, Sequence) or not presets:
        raise empty_or_wrong_type(presets)(f"presets: expected a non-empty list of preset names, got {presets!r}")
    for name in presets:
        if name not in PRESETS:
            raise ValueError(f"presets: expected names among {sorted(PRESETS)}, got {name!r}")
    fig = go.Figure()
    totals = []
    for i, name in enumerate(presets):
        counts = parameter_breakdown(PRESETS[name])
        totals.append(sum(counts.values()))
        labels = list(reversed(COMPONENTS))
        values = [counts[c] for c in labels]
        fig.add_trace(go.Bar(
            x=values, y=labels, orientation="h", visible=i == 0, name=name,
            text=[_millions(v) for v in values], textposition="auto",
            hovertemplate="%{y}: %{x:,} parameters<extra>" + name + "</extra>",
        ))

    def title(i: int) -> str:
        return f"Parameters of the {presets[i]!r} preset: {_millions(totals[i])} in all"

    buttons = [
        dict(label=name, method="update",
             args=[{"visible": [j == i for j in range(len(presets))]}, {"title.text": title(i)}])
        for i, name in enumerate(presets)
    ]
    fig.update_layout(
        template=BOOK_TEMPLATE, title=dict(text=title(0)), height=430, showlegend=False,
        xaxis=dict(title=dict(text="parameters")), yaxis=dict(title=dict(text="component")),
        updatemenus=[dict(name="preset", buttons=buttons, direction="down", x=1.0, xanchor="right", y=1.13,
                          yanchor="top", showactive=True, active=0)],
    )
    return fig


def _checked_scales(name: str, scales: object) -> dict[str, list[float]]:
    """A result of ``norm_placement_scales``: "activation" and "gradient", equally long lists of numbers."""
    if not isinstance(scales, dict):
        raise TypeError(f"{name}: expected a dict from norm_placement_scales, got {type(scales).__name__}")
    if set(scales) != {"activation", "gradient"}:
        raise ValueError(f"{name}: expected the keys 'activation' and 'gradient', got {sorted(map(str, scales))}")
    checked = {}
    for key, values in scales.items():
        if not isinstance(values, list | tuple) or not values:
            raise ValueError(f"{name}[{key!r}]: expected a non-empty list of numbers, got {values!r:.60}")
        checked[key] = [check_number(f"{name}[{key!r}][{i}]", v) for i, v in enumerate(values)]
    if len(checked["activation"]) != len(checked["gradient"]):
        raise ValueError(f"{name}: expected one activation and one gradient per layer, got "
                         f"{len(checked['activation'])} and {len(checked['gradient'])}")
    return checked


def norm_placement_figure(n_layers: int = 24, *, post: dict[str, list[float]] | None = None,
                          pre: dict[str, list[float]] | None = None, **kwargs: object) -> go.Figure:
    """Two panels from ``norm_placement_scales``: activation RMS and gradient norm per layer,
    post-norm against pre-norm (log scale); a menu switches between the panels.

    ``post`` and ``pre``: the two results of ``norm_placement_scales`` (``norm_first`` False and True)
    when they are already computed (chapter 6 prints them first); otherwise they are computed here
    with ``n_layers`` and ``kwargs``."""
    if (post is None) != (pre is None):
        raise ValueError(f"{'pre' if pre is None else 'post'}: expected post and pre together, or neither")
    if post is None:
        post, pre = (norm_placement_scales(first, n_layers, **kwargs) for first in (False, True))
    else:
        post, pre = _checked_scales("post", post), _checked_scales("pre", pre)
        if len(pre["activation"]) != len(post["activation"]):
            raise ValueError(f"pre: expected as many layers as post ({len(post['activation'])}), "
                             f"got {len(pre['activation'])}")
        n_layers = len(post["activation"])
    scales = {"post-norm (the paper)": post, "pre-norm": pre}
    fig = go.Figure()
    layers = list(range(1, n_layers + 1))
    for quantity in ("gradient", "activation"):
        for label, values in scales.items():
            fig.add_trace(go.Scatter(
                x=layers, y=[round(v, 4) for v in values[quantity]], mode="lines+markers", name=label,
                visible=quantity == "gradient",
                hovertemplate="layer %{x}: %{y:.3g}<extra>" + label + "</extra>",
            ))
    titles = {"gradient": "Gradient norm of each layer's weights", "activation": "RMS of each layer's output"}
    axis_titles = {"gradient": "gradient norm (log scale)", "activation": "RMS of the output (log scale)"}
    buttons = [
        dict(label=quantity, method="update",
             args=[{"visible": [q == quantity for q in ("gradient", "activation") for _ in scales]},
                   {"title.text": titles[quantity], "yaxis.title.text": axis_titles[quantity]}])
        for quantity in ("gradient", "activation")
    ]
    fig.update_layout(
        template=BOOK_TEMPLATE, title=dict(text=titles["gradient"]), height=420,
        xaxis=dict(title=dict(text="layer")), yaxis=dict(type="log", title=dict(text=axis_titles["gradient"])),
        legend=dict(orientation="h", y=-0.3),
        updatemenus=[dict(name="quantity", buttons=buttons, direction="down", x=1.0, xanchor="right", y=1.15,
                          yanchor="top")],
    )
    return fig


def ablation_figure(curves: dict[str, Sequence[float]], window: int = 20) -> go.Figure:
    """The training loss per step of each variant in ``curves`` (name -> losses), as a moving average
    over ``window`` steps; each curve has its own colour, dash pattern and marker, and its name at its
    right end, so that none is told apart by colour alone."""
    if not isinstance(curves, dict) or not curves:
        raise empty_or_wrong_type(curves)(f"curves: expected a non-empty dict of name -> losses, got {curves!r:.60}")
    check_positive_int("window", window)
    fig = go.Figure()
    ends = {}
    for i, (name, losses) in enumerate(curves.items()):
        if isinstance(losses, str) or not isinstance(losses, Sequence) or len(losses) == 0:
            raise ValueError(f"curves[{name!r}]: expected a non-empty list of losses, got {losses!r:.60}")
        average = [round(v, 4) for v in moving_average(list(losses), window)]
        steps = list(range(1, len(average) + 1))
        fig.add_trace(go.Scatter(
            x=steps, y=average, name=name, mode="lines+markers",
            line=dict(color=PALETTE[i % len(PALETTE)], dash=DASHES[i % len(DASHES)], width=2.5),
            # about ten markers along each curve: enough to tell the shapes apart
            marker=dict(symbol=MARKERS[i % len(MARKERS)], size=8, maxdisplayed=10),
            hovertemplate="step %{x}: loss %{y:.3f}<extra>" + name + "</extra>",
        ))
        ends[name] = (i, steps[-1], average[-1])
    # direct labels at the curves' right ends, moved apart where two curves end close together
    lows = [y for _, _, y in ends.values()]
    highs = [max(fig.data[i].y) for i, _, _ in ends.values()]
    gap = 0.06 * (max(highs) - min(lows) or 1.0)
    placed: list[float] = []
    for name, (i, x, y) in sorted(ends.items(), key=lambda item: item[1][2]):
        label_y = max(y, placed[-1] + gap) if placed else y
        placed.append(label_y)
        fig.add_annotation(x=x, y=round(label_y, 4), text=name, showarrow=False, xanchor="left", xshift=6,
                           font=dict(color=PALETTE[i % len(PALETTE)]))
    fig.update_layout(
        template=BOOK_TEMPLATE, height=440,
        title=dict(text=f"Training loss, same seed and batches (average of {window} steps)"),
        xaxis=dict(title=dict(text="training step")),
        yaxis=dict(title=dict(text="loss (label-smoothed cross-entropy per token)")),
        margin=dict(r=110),
    )
    return fig
