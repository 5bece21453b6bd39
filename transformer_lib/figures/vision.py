"""What a Vision Transformer's class token looks at: the digit beside its attention over the patches."""

from __future__ import annotations

import plotly.graph_objects as go
import torch
from plotly.subplots import make_subplots

from ..validation import check_positive_int, check_sentence
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
