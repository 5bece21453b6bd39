"""What a Vision Transformer's class token looks at: the digit beside its attention over the patches."""

from __future__ import annotations

import statistics
from numbers import Real

import plotly.graph_objects as go
import torch
from plotly.subplots import make_subplots

from ..validation import (
    check_fraction,
    check_instance,
    check_int,
    check_items,
    check_positive_int,
    check_sentence,
)
from ..validation_tensors import check_finite, check_ndim, check_tensor
from .display import BOOK_TEMPLATE


def patch_attention_figure(image: torch.Tensor, weights: torch.Tensor, patch: int, title: str) -> go.Figure:
    """``image`` (H, W) in [0, 1] and the class token's ``weights`` over its (H/patch) * (W/patch) patches,
    in reading order, side by side, each with its colour scale."""
    check_ndim("image", check_tensor("image", image), 2, "(height, width)")
    check_positive_int("patch", patch)
    check_sentence("title", title)
    h, w = image.shape
    if h % patch or w % patch:
        raise ValueError(f"patch: expected a divisor of the image size {h}x{w}, got {patch}")
    rows, cols = h // patch, w // patch
    check_ndim("weights", check_tensor("weights", weights), 1, "(n_patches,), in reading order")
    for name, values in (("image", image), ("weights", weights)):
        if values.is_floating_point():
            check_finite(name, values)
    if weights.numel() != rows * cols:
        raise ValueError(f"weights: expected {rows * cols} patch weights (the patches of image), "
                         f"got shape {tuple(weights.shape)}")
    grid = weights.detach().reshape(rows, cols).float()
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.18,
                        subplot_titles=("the image (8 x 8 pixels)", f"attention over {rows * cols} patches"))
    fig.add_trace(go.Heatmap(z=image.tolist(), colorscale="Greys", zmin=0, zmax=1,
                             hovertemplate="row %{y}, column %{x}: ink %{z:.2f}<extra></extra>",
                             colorbar=dict(title=dict(text="ink"), x=0.41, len=0.8, thickness=10)), row=1, col=1)
    fig.add_trace(go.Heatmap(z=grid.tolist(), colorscale="Blues", zmin=0,
                             hovertemplate="patch row %{y}, column %{x}: weight %{z:.3f}<extra></extra>",
                             colorbar=dict(title=dict(text="weight"), x=1.0, len=0.8, thickness=10)), row=1, col=2)
    for col, what in ((1, "pixel"), (2, "patch")):
        fig.update_xaxes(title_text=f"{what} column", row=1, col=col, constrain="domain")
        fig.update_yaxes(title_text=f"{what} row", autorange="reversed", row=1, col=col,
                         scaleanchor="x" if col == 1 else "x2")
    fig.update_layout(template=BOOK_TEMPLATE, title=dict(text=title), height=380)
    return fig


def learning_curve_figure(curve: dict[str, dict[int, list[float]]], title: str) -> go.Figure:
    """Test accuracy against the number of training images, a line a model ({model: {n: [accuracy per
    seed]}}): the median over the seeds, with bars from the lowest seed to the highest. Each model has its
    own marker and dash as well as its colour (and the legend names them), so no colour alone tells them apart."""
    check_sentence("title", title)
    _check_curve(curve)
    fig = go.Figure()
    for (name, by_size), symbol, dash in zip(curve.items(), ("circle", "square", "diamond", "triangle-up"),
                                             ("solid", "dash", "dot", "dashdot"), strict=False):
        sizes = sorted(by_size)
        median = [100 * statistics.median(by_size[n]) for n in sizes]
        low, high = [100 * min(by_size[n]) for n in sizes], [100 * max(by_size[n]) for n in sizes]
        fig.add_trace(go.Scatter(
            x=sizes, y=median, name=name, mode="lines+markers", line=dict(width=2, dash=dash),
            marker=dict(symbol=symbol, size=9),
            error_y=dict(type="data", symmetric=False, array=[h - m for h, m in zip(high, median, strict=True)],
                         arrayminus=[m - lo for m, lo in zip(median, low, strict=True)], thickness=1.2, width=4),
            customdata=list(zip(low, high, strict=True)),
            hovertemplate=(f"{name}<br>%{{x}} training images: %{{y:.1f}}% (median; "
                           "seeds from %{customdata[0]:.1f}% to %{customdata[1]:.1f}%)<extra></extra>")))
    sizes = sorted({n for by_size in curve.values() for n in by_size})
    fig.update_xaxes(title_text="training images (log scale)", type="log", tickvals=sizes,
                     ticktext=[f"{n:,}" for n in sizes])
    fig.update_yaxes(title_text="test accuracy (%)")
    fig.update_layout(template=BOOK_TEMPLATE, title=dict(text=title), height=420, showlegend=True,
                      legend=dict(orientation="h", y=-0.25), margin=dict(r=40))
    return fig


def _check_curve(curve: object) -> None:
    """{model name: {training-set size: [accuracies in [0, 1], one per seed]}}, at least one of each."""
    what = "{model: {training images: [accuracy per seed]}}"
    check_instance("curve", curve, dict, what)
    if not curve or len(curve) > 4:
        raise ValueError(f"curve: expected 1 to 4 models (each has its own marker and dash), got {len(curve)}")
    for name, by_size in curve.items():
        check_sentence("curve's model names", name)
        check_instance(f"curve[{name!r}]", by_size, dict, "{training images: [accuracy per seed]}")
        if not by_size:
            raise ValueError(f"curve[{name!r}]: expected one or more training-set sizes, got none")
        for n, accuracies in by_size.items():
            check_int(f"curve[{name!r}]'s sizes", n, minimum=1)
            for i, a in enumerate(check_items(f"curve[{name!r}][{n}]", accuracies, Real, "accuracy")):
                check_fraction(f"curve[{name!r}][{n}][{i}]", a, "an accuracy")
