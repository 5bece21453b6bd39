"""Figures of chapter 7: the learning-rate schedule, the training loss and the replay's curve.

``learning_rate_figure`` draws equation 3 of the paper (``training.transformer_lr``) for
several warm-up lengths, with a slider choosing one; ``loss_curve_figure`` draws a
``TrainingHistory``'s loss per step with its moving average.
"""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go

from ..training import TrainingHistory, transformer_lr
from ..validation import check_index, check_instance, check_int, check_number, check_positive_int, empty_or_wrong_type
from .display import BOOK_TEMPLATE


def _sig(value: float) -> float:
    """Four significant digits: enough for a plot, and a smaller page."""
    return float(f"{value:.4g}")


def _sampled_steps(total: int, points: int = 200) -> list[int]:
    stride = max(1, total // points)
    return list(range(1, total + 1, stride))


def learning_rate_figure(
    d_model: int = 512, warmups: Sequence[int] = (1000, 2000, 4000, 8000), steps: int = 30_000,
    active: int | None = None,
) -> go.Figure:
    """The learning rate of ``transformer_lr(step, d_model, warmup)`` against the step, one curve
    per warm-up length; a slider picks which one is drawn (the others stay as grey context).

    ``active`` is the index in ``warmups`` shown first (default: 4000 if present, else the first)."""
    check_positive_int("d_model", d_model)
    check_positive_int("steps", steps)
    if isinstance(warmups, str) or not isinstance(warmups, Sequence):
        raise TypeError(f"warmups: expected a list of positive ints, got {warmups!r:.60}")
    if not warmups:
        raise ValueError("warmups: expected at least one warm-up length, got none")
    for i, w in enumerate(warmups):
        check_positive_int(f"warmups[{i}]", w)
    if active is None:
        active = list(warmups).index(4000) if 4000 in warmups else 0
    active = check_index("active", active, len(warmups), "an index into warmups")
    x = _sampled_steps(steps)
    fig = go.Figure()
    for w in warmups:  # grey context curves, always visible
        fig.add_trace(go.Scatter(x=x, y=[_sig(transformer_lr(s, d_model, w)) for s in x], mode="lines",
                                 line=dict(color="#cccccc", width=1), hoverinfo="skip", showlegend=False))
    for i, w in enumerate(warmups):  # the highlighted curve, one per slider step
        fig.add_trace(go.Scatter(
            x=x, y=[_sig(transformer_lr(s, d_model, w)) for s in x], mode="lines", name=f"warmup {w}",
            visible=i == active, line=dict(width=3),
            hovertemplate="step %{x}: lr %{y:.2e}<extra>warmup " + str(w) + "</extra>",
        ))
        peak = transformer_lr(w, d_model, w)
        fig.add_trace(go.Scatter(x=[w], y=[_sig(peak)], mode="markers+text", visible=i == active,
                                 text=[f"peak {peak:.2e} at step {w}"], textposition="top right",
                                 marker=dict(size=9), showlegend=False, hoverinfo="skip"))
    n = len(warmups)

    def visible(i: int) -> list[bool]:
        return [True] * n + [j == i for j in range(n) for _ in range(2)]

    slider = dict(
        active=active, currentvalue=dict(prefix="warmup_steps = "), pad=dict(t=75),  # clear of the axis title
        steps=[dict(label=str(w), method="update", args=[{"visible": visible(i)}]) for i, w in enumerate(warmups)],
    )
    fig.update_layout(
        template=BOOK_TEMPLATE, height=440, sliders=[slider], showlegend=False,
        title=dict(text=f"lrate = d_model^-0.5 · min(step^-0.5, step · warmup^-1.5), d_model = {d_model}"),
        xaxis=dict(title=dict(text="training step")), yaxis=dict(title=dict(text="learning rate")),
    )
    return fig


def moving_average(values: Sequence[float], window: int) -> list[float]:
    """The mean of each value and the ``window - 1`` before it (fewer at the start): a training
    curve with the batch-to-batch noise smoothed out."""
    check_positive_int("window", window)
    if isinstance(values, str) or not isinstance(values, Sequence):
        raise TypeError(f"values: expected a list of numbers, got {type(values).__name__}")
    values = [check_number(f"values[{i}]", v) for i, v in enumerate(values)]
    average, total = [], 0.0
    for i, value in enumerate(values):
        total += value - (values[i - window] if i >= window else 0.0)
        average.append(total / min(i + 1, window))
    return average


def loss_curve_figure(history: TrainingHistory, window: int = 50,
                      loss_name: str = "label-smoothed cross-entropy per token") -> go.Figure:
    """The per-step training loss of ``history`` (thin) and its moving average over ``window``
    steps (thick), against the step; ``loss_name`` says in the title which loss it is."""
    if not isinstance(history, TrainingHistory):
        raise TypeError(f"history: expected a training.TrainingHistory, got {type(history).__name__}")
    if not history.losses:
        raise ValueError("history: expected at least one training step, got an empty history")
    check_positive_int("window", window)
    check_instance("loss_name", loss_name, str, "a str")
    losses = history.losses
    average = moving_average(losses, window)
    fig = go.Figure([
        go.Scatter(x=history.steps, y=[round(v, 4) for v in losses], mode="lines", name="loss per batch",
                   line=dict(width=1, color="#9ecae1")),
        go.Scatter(x=history.steps, y=[round(v, 4) for v in average], mode="lines",
                   name=f"average of {window} steps", line=dict(width=3, color="#1f77b4")),
    ])
    fig.update_layout(
        template=BOOK_TEMPLATE, height=400, title=dict(text=f"Training loss ({loss_name})"),
        xaxis=dict(title=dict(text="step")), yaxis=dict(title=dict(text="loss"), type="log"),
        legend=dict(x=0.98, xanchor="right", y=0.98),
    )
    return fig


def replay_curve_figure(curve: dict, steps: Sequence[int], step: int, window: int = 25) -> go.Figure:
    """The replay's training curve (``pretrained.snapshots.snapshot_record()["curve"]``): the training
    loss (moving average of ``window`` steps) and the validation loss at the recorded checkpoints,
    the snapshots' ``steps`` as diamonds on the validation curve, and ``step`` marked by a dashed
    vertical line labelled "step N" (a line and a label, not a colour alone)."""
    check_instance("curve", curve, dict, "a dict with train_loss, valid_steps and valid_loss (snapshot_record)")
    missing = [key for key in ("train_loss", "valid_steps", "valid_loss") if not isinstance(curve.get(key), list)]
    if missing:
        raise ValueError(f"curve: expected lists under {missing}, got keys {sorted(curve)}")
    if isinstance(steps, str) or not isinstance(steps, Sequence) or not steps:
        raise empty_or_wrong_type(steps)(f"steps: expected a non-empty list of the snapshots' steps, got {steps!r:.60}")
    check_positive_int("window", window)
    if len(curve["valid_steps"]) != len(curve["valid_loss"]):
        raise ValueError(f"curve: expected as many valid_loss as valid_steps, got {len(curve['valid_loss'])} and "
                         f"{len(curve['valid_steps'])}")
    valid = dict(zip(curve["valid_steps"], curve["valid_loss"], strict=True))
    unknown = [s for s in steps if s not in valid]
    if unknown:
        raise ValueError(f"steps: expected steps of curve['valid_steps'], got {unknown[:3]}")
    if check_int("step", step) not in steps:
        raise ValueError(f"step: expected one of steps {list(steps)}, got {step!r}")
    losses = [check_number(f"curve['train_loss'][{i}]", v) for i, v in enumerate(curve["train_loss"])]
    average = moving_average(losses, window)
    shown = list(range(0, len(losses), 5))  # every 5th step: the average is smooth at this scale
    fig = go.Figure([
        go.Scatter(x=[i + 1 for i in shown], y=[_sig(average[i]) for i in shown], mode="lines",
                   name=f"training loss (average of {window} steps)", line=dict(width=2, color="#9ecae1")),
        go.Scatter(x=curve["valid_steps"], y=[_sig(v) for v in curve["valid_loss"]], mode="lines",
                   name="validation loss", line=dict(width=2, color="#1f77b4", dash="dot")),
        go.Scatter(x=list(steps), y=[_sig(valid[s]) for s in steps], mode="markers", name="snapshots",
                   marker=dict(symbol="diamond", size=10, color="#08306b")),
    ])
    fig.update_layout(
        template=BOOK_TEMPLATE, height=330, title=dict(text="Training replayed: the loss along the run"),
        xaxis=dict(title=dict(text="training step")),
        yaxis=dict(title=dict(text="loss (label-smoothed, per token)"), type="log"),
        # the legend below the top edge, where the step's label runs (at step 1500 it would cover it)
        legend=dict(x=0.98, xanchor="right", y=0.8, yanchor="top"), margin=dict(t=60),
        **replay_step_marker(step),
    )
    return fig


def replay_step_marker(step: int) -> dict:
    """The layout entries that mark ``step`` on ``replay_curve_figure``: a dashed vertical line and its
    label. The page moves the same marker (explorers.js) when the reader picks another snapshot."""
    step = check_int("step", step, minimum=0)
    return dict(
        shapes=[dict(type="line", x0=step, x1=step, xref="x", y0=0, y1=1, yref="paper",
                     line=dict(color="#333333", width=2, dash="dash"))],
        annotations=[dict(x=step, y=1, xref="x", yref="paper", text=f"step {step}", showarrow=False,
                          xanchor="left", yanchor="top", bgcolor="rgba(255,255,255,0.8)")],
    )
