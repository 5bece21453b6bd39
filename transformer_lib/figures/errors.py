"""Where the decoder read when it wrote a wrong word (chapter 7): ``wrong_word_rows_figure``.

Each wrong output (``error_attention.wrong_word_rows``) is one panel: the cross-attention row that wrote
its first wrong word, one line per layer (mean over heads), drawn as the attention maps are drawn
(``figures.attention``'s colour scale, weights from 0 to 1) with each weight printed in its cell. The
source word it should have read and the one it copied are named in the column labels and outlined, solid
and dashed: not told by colour alone.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..error_attention import WrongWordRow
from ..validation import check_instance, empty_or_wrong_type
from .attention import _COLOR_AXIS, _rounded
from .display import BOOK_TEMPLATE

SHOULD_READ, COPIED = "should read", "copied"


def _column_label(token: str, key: int, row: WrongWordRow) -> str:
    mark = SHOULD_READ if key in row.expected_keys else COPIED if key in row.copied_keys else ""
    return f"{html.escape(token)}<br><b>{mark}</b>" if mark else html.escape(token)


def wrong_word_rows_figure(rows: Sequence[WrongWordRow]) -> go.Figure:
    """One panel per wrong output: the cross-attention row (each layer, mean over heads) that wrote its
    first wrong word, with the source word it should have read and the one it copied marked."""
    if isinstance(rows, str) or not isinstance(rows, Sequence) or not rows:
        raise empty_or_wrong_type(rows)(
            f"rows: expected a non-empty list of error_attention.WrongWordRow, got {rows!r:.60}")
    for i, row in enumerate(rows):
        check_instance(f"rows[{i}]", row, WrongWordRow, "an error_attention.WrongWordRow")
    titles = [f"“{html.escape(r.wrong)}” written for “{html.escape(r.expected)}” (output word {r.position})"
              for r in rows]
    fig = make_subplots(rows=len(rows), cols=1, subplot_titles=titles, vertical_spacing=0.9 / len(rows))
    for n, row in enumerate(rows, start=1):
        tokens = row.source.split()
        layers = [f"layer {i + 1}" for i in range(row.rows.shape[0])]
        z = _rounded(row.rows.numpy())
        fig.add_trace(go.Heatmap(
            z=z, x=list(range(len(tokens))), y=layers, coloraxis="coloraxis", texttemplate="%{z:.2f}",
            customdata=[[html.escape(t) for t in tokens]] * len(layers),
            hovertemplate="%{y}, source word %{x} “%{customdata}”<br>weight %{z:.3f}<extra></extra>"), row=n, col=1)
        fig.update_xaxes(tickmode="array", tickvals=list(range(len(tokens))), tickangle=-45,
                         ticktext=[_column_label(t, k, row) for k, t in enumerate(tokens)],
                         title=dict(text="source word (key)", standoff=4), row=n, col=1)
        fig.update_yaxes(autorange="reversed", title_text="layer", row=n, col=1)
        axis = "" if n == 1 else str(n)
        for keys, dash in ((row.expected_keys, "solid"), (row.copied_keys, "dash")):
            for key in keys:
                fig.add_shape(type="rect", x0=key - 0.5, x1=key + 0.5, y0=-0.5, y1=len(layers) - 0.5,
                              xref=f"x{axis}", yref=f"y{axis}", line=dict(color="#000000", width=2, dash=dash))
    fig.update_layout(template=BOOK_TEMPLATE, coloraxis=_COLOR_AXIS, height=80 + 320 * len(rows),
                      title=dict(text="Where the decoder read at each copied word<br><sup>cross-attention, mean "
                                      "over heads; outlined: solid, should read; dashed, copied</sup>"))
    return fig
