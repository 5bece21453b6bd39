"""Every figure of chapter 3 (positional encoding), as plotly figures that work in the static book.

``positional_encoding_figure`` shows four views of the sinusoidal table and RoPE beside it (the
positional-encoding explorer in ``browser.explorers`` redraws it); the ``*_menu_figure``
functions precompute every choice behind a slider, so they work without a kernel;
``similarity_by_offset_figure`` draws how alike two encodings k positions apart are.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
import torch
from plotly.subplots import make_subplots

from ..positional_encoding import RotaryEmbedding, sinusoidal_table
from ..validation import check_even, check_int, check_positive_int, empty_or_wrong_type
from .display import BOOK_TEMPLATE, DASHES, PALETTE


def _check_range(name: str, value: object, low: int, high: int) -> tuple[int, int]:
    """``value`` is a (first, last) pair of ints with low <= first <= last <= high."""
    if not isinstance(value, Sequence) or len(value) != 2:
        raise empty_or_wrong_type(value)(f"{name}: expected a (first, last) pair of ints, got {value!r}")
    first, last = (check_int(f"{name}[{i}]", v) for i, v in enumerate(value))
    noun = {"dims": "dimension", "positions": "position"}.get(name, "value")
    # Said as a reader of the explorers would understand it (they show this message), naming the argument.
    if first > last:
        raise ValueError(f"{name}: the first {noun} ({first}) is after the last ({last}): "
                         f"choose a first {noun} no larger than the last.")
    if not low <= first <= last <= high:
        raise ValueError(f"{name}: each {noun} must lie between {low} and {high}, got {first} to {last}.")
    return first, last


def _check_d_model(d_model: object) -> int:
    return check_even("d_model", d_model, "an even number (sine and cosine pairs)")


MAX_POSITIONS = 512
MAX_WAVES = 16  # lines in one wave plot; more become unreadable


def check_positional_settings(d_model: object, dims: object, positions: object
                              ) -> tuple[int, tuple[int, int], tuple[int, int]]:
    """The positional explorer's settings (``positional_encoding_figure``'s, and the page's)."""
    d_model = _check_d_model(d_model)
    first_dim, last_dim = _check_range("dims", dims, 0, d_model - 1)
    if last_dim - first_dim + 1 > MAX_WAVES:
        raise ValueError(f"dims: dimensions {first_dim} to {last_dim} are {last_dim - first_dim + 1} waves; "
                         f"at most {MAX_WAVES} fit in one plot: choose a shorter range.")
    return d_model, (first_dim, last_dim), _check_range("positions", positions, 0, MAX_POSITIONS)


def positions_note(positions: tuple[int, int]) -> str | None:
    """What the positional explorer says beside a figure that its settings leave nearly empty: with one
    position, each wave is a single point and each matrix a single cell (the page says the same)."""
    first, last = _check_range("positions", positions, 0, MAX_POSITIONS)
    if first == last:
        return (f"One position only ({first}): each wave is a single point and each matrix a single cell. "
                "Move the last position to see the waves.")
    return None


def _table(d_model: int, positions: tuple[int, int]) -> np.ndarray:
    first, last = positions
    return sinusoidal_table(last + 1, d_model)[first:].numpy()  # (positions, d_model)


def rope_scores(d_head: int, positions: tuple[int, int], seed: int = 0) -> np.ndarray:
    """q_m · k_n / sqrt(d_head) for one random query and one random key rotated to every position.

    The same two vectors sit at every position, so any change across the matrix comes from RoPE
    alone, and it depends on m - n only: the matrix is constant along each diagonal.
    """
    check_even("d_head", d_head, "an even head size (dimensions rotate in pairs)")
    check_int("seed", seed)
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


def _colorbar(x: float, y: float) -> dict:
    """A slim colour scale beside one panel of a grid (``x``, ``y``: its place in the figure)."""
    return dict(x=x, y=y, len=0.4, thickness=10, xpad=4, tickfont=dict(size=10))


def positional_encoding_figure(
    d_model: int = 64, dims: tuple[int, int] = (0, 7), positions: tuple[int, int] = (0, 50)
) -> go.Figure:
    """Four views of the sinusoidal encoding of section 3.5, and RoPE beside it.

    Top left, the waves of dimensions ``dims`` (first, last); top right, the table itself
    (position by dimension); bottom left, PE(m) · PE(n) for every pair of positions; bottom right,
    a RoPE query-key score for the same positions. Both matrices depend on m - n only.
    """
    d_model, (first_dim, last_dim), positions = check_positional_settings(d_model, dims, positions)
    table = _table(d_model, positions)
    x = np.arange(positions[0], positions[1] + 1)
    fig = make_subplots(rows=2, cols=2, horizontal_spacing=0.12, vertical_spacing=0.14, subplot_titles=[
        f"waves of dimensions {first_dim}–{last_dim}", "PE table: position × dimension",
        "sinusoidal: PE(m) · PE(n)", "RoPE: q at m · k at n / √d"])
    for trace in _wave_traces(table, d_model, range(first_dim, last_dim + 1), x):
        fig.add_trace(trace, row=1, col=1)
    fig.add_trace(_matrix(table, np.arange(d_model), x, "position %{y}, dimension %{x}: %{z:.3f}",
                          colorscale="RdBu", zmid=0, colorbar=_colorbar(1.0, 0.79)), row=1, col=2)
    fig.add_trace(_matrix(table @ table.T, x, x, "m=%{y}, n=%{x}: %{z:.2f}", colorscale="Viridis",
                          colorbar=_colorbar(0.45, 0.21)), row=2, col=1)
    fig.add_trace(_matrix(rope_scores(d_model, positions), x, x, "m=%{y}, n=%{x}: %{z:.2f}",
                          colorscale="Viridis", colorbar=_colorbar(1.0, 0.21)), row=2, col=2)
    fig.update_xaxes(title_text="position", row=1, col=1)
    fig.update_yaxes(title_text="value", row=1, col=1)
    fig.update_xaxes(title_text="dimension", row=1, col=2)
    for col in (1, 2):
        fig.update_xaxes(title_text="position n", row=2, col=col)
        fig.update_yaxes(title_text="position m", autorange="reversed", row=2, col=col)
    fig.update_yaxes(title_text="position", autorange="reversed", row=1, col=2)
    fig.update_layout(template=BOOK_TEMPLATE, height=820, title=dict(text=f"Positional encodings, d_model = {d_model}"),
                      legend=dict(font=dict(size=11)))
    return fig


def _slider(steps: list[dict], prefix: str, active: int = 0, below_px: int = 80) -> dict:
    return dict(active=active, steps=steps, currentvalue=dict(prefix=prefix), pad=dict(t=below_px))


def _colorbar_below(center: float, length: float) -> dict:
    """A horizontal colour scale under one panel of a row of panels (``center``, ``length``: its place
    and width in the figure), clear of the x-axis title above it."""
    return dict(orientation="h", x=center, xanchor="center", y=-0.3, yanchor="top", len=length, thickness=10,
                tickfont=dict(size=10))


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
        # above the plot, right: below it, the legend would sit on the slider
        legend=dict(orientation="h", x=1.0, xanchor="right", y=1.02, yanchor="bottom"),
        xaxis=dict(title=dict(text="position")), yaxis=dict(title=dict(text="value"), range=[-1.1, 1.1]),
    )
    return fig


def positional_encoding_menu_figure(
    d_models: Sequence[int] = (16, 32, 64, 128), positions: tuple[int, int] = (0, 48)
) -> go.Figure:
    """The PE table, the sinusoidal similarity PE(m) · PE(n) and a RoPE score matrix, side by side,
    for each ``d_model`` in ``d_models``, chosen by a slider in the browser."""
    if isinstance(d_models, (str, bytes)) or not isinstance(d_models, Sequence) or not d_models:
        raise empty_or_wrong_type(d_models)(f"d_models: expected a non-empty sequence of even ints, got {d_models!r}")
    for i, d_model in enumerate(d_models):
        check_even(f"d_models[{i}]", d_model, "an even number (sine and cosine pairs)")
    positions = _check_range("positions", positions, 0, MAX_POSITIONS)
    x = np.arange(positions[0], positions[1] + 1)
    fig = make_subplots(rows=1, cols=3, horizontal_spacing=0.09, column_widths=[0.4, 0.3, 0.3], subplot_titles=[
        "PE table: position × dimension", "sinusoidal: PE(m) · PE(n)", "RoPE: q at m · k at n / √d"])
    domains = [fig.layout[name].domain for name in ("xaxis", "xaxis2", "xaxis3")]
    bars = [_colorbar_below((a + b) / 2, b - a) for a, b in domains]
    for i, d_model in enumerate(d_models):
        table = _table(d_model, positions)
        visible = i == 0
        fig.add_trace(_matrix(table, np.arange(d_model), x, "position %{y}, dimension %{x}: %{z:.3f}",
                              colorscale="RdBu", zmid=0, colorbar=bars[0], visible=visible), row=1, col=1)
        fig.add_trace(_matrix(table @ table.T, x, x, "m=%{y}, n=%{x}: %{z:.2f}", colorscale="Viridis",
                              colorbar=bars[1], visible=visible), row=1, col=2)
        fig.add_trace(_matrix(rope_scores(d_model, positions), x, x, "m=%{y}, n=%{x}: %{z:.2f}",
                              colorscale="Viridis", colorbar=bars[2], visible=visible), row=1, col=3)
    steps = [dict(label=str(d_model), method="update",
                  args=[{"visible": [j == i for j in range(len(d_models)) for _ in range(3)]},
                        {"title.text": f"Positions {positions[0]}–{positions[1]}, d_model = {d_model}"}])
             for i, d_model in enumerate(d_models)]
    fig.update_xaxes(title_text="dimension", row=1, col=1)
    fig.update_xaxes(title_text="position n", row=1, col=2)
    fig.update_xaxes(title_text="position n", row=1, col=3)
    fig.update_yaxes(title_text="position", autorange="reversed")
    fig.update_layout(template=BOOK_TEMPLATE, height=580, sliders=[_slider(steps, "d_model = ", below_px=150)],
                      title=dict(text=steps[0]["args"][1]["title.text"]))
    return fig



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
        raise empty_or_wrong_type(d_models)(f"d_models: expected a non-empty sequence of even ints, got {d_models!r}")
    for i, d_model in enumerate(d_models):
        check_even(f"d_models[{i}]", d_model, "an even number (sine and cosine pairs)")
    check_positive_int("max_offset", max_offset)
    fig = go.Figure()
    offsets = list(range(max_offset + 1))
    for i, d_model in enumerate(d_models):
        values = [round(v, 4) for v in similarity_by_offset(d_model, max_offset)]
        fig.add_trace(go.Scatter(  # a dash pattern of its own as well as a colour: not told apart by colour alone
            x=offsets, y=values, mode="lines", name=f"d_model = {d_model}",
            line=dict(color=PALETTE[i % len(PALETTE)], dash=DASHES[i % len(DASHES)]),
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
        updatemenus=[dict(name="d_model", buttons=buttons, direction="down", x=1.0, xanchor="right", y=1.15,
                          yanchor="top")],
    )
    return fig
