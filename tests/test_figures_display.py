"""Showing a figure: the two representations (JupyterLab and the static book) and the renderer."""

from __future__ import annotations

import plotly.graph_objects as go
import plotly.io as pio

from transformer_lib.figures.display import PLOTLY_MIMETYPE, div_id, figure_mimebundle, use_book_renderer

# --- showing figures ---------------------------------------------------------------------------


def test_figure_mimebundle_has_lab_and_book_forms_without_plotly_js() -> None:
    fig = go.Figure(go.Heatmap(z=[[0.0, 1.0]]), layout=dict(title=dict(text="a <b>title</b>"), height=300))
    bundle = figure_mimebundle(fig)
    assert bundle[PLOTLY_MIMETYPE]["data"][0]["type"] == "heatmap"
    page = bundle["text/html"]
    assert "Plotly.newPlot" in page and "<script src" not in page and len(page) < 50_000  # no plotly.js bundle inside
    assert "height:300px" in page
    assert bundle["text/plain"] == "<plotly figure: a  title>"


def test_figure_div_ids_are_repeatable_and_unique_on_a_page() -> None:
    fig = go.Figure(go.Scatter(y=[3, 1, 2]))
    first, second = (figure_mimebundle(fig)["text/html"] for _ in range(2))
    ids = [page.split('id="')[1].split('"')[0] for page in (first, second)]
    assert ids[0] != ids[1] and ids[0].rsplit("-", 1)[0] == ids[1].rsplit("-", 1)[0]
    digest = ids[0].split("-")[1]
    assert digest == div_id(pio.to_json(fig.to_dict(), validate=False)).split("-")[1]


def test_use_book_renderer_makes_figures_display_in_both_forms() -> None:
    before = pio.renderers.default
    try:
        use_book_renderer()
        bundle = go.Figure(go.Bar(y=[1, 2]))._repr_mimebundle_()
        assert {PLOTLY_MIMETYPE, "text/html"} <= set(bundle)
        assert "Plotly.newPlot" in bundle["text/html"]
    finally:
        pio.renderers.default = before


