"""Showing a figure: the two representations (JupyterLab and the static book) and the renderer."""

from __future__ import annotations

import base64

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio

from transformer_lib.figures.display import (
    PLOTLY_MIMETYPE,
    div_id,
    figure_mimebundle,
    rounded_numbers,
    use_book_renderer,
)

# --- showing figures ---------------------------------------------------------------------------


def test_figure_mimebundle_has_lab_and_book_forms_without_plotly_js() -> None:
    fig = go.Figure(go.Heatmap(z=[[0.0, 1.0]]), layout=dict(title=dict(text="a <b>title</b>"), height=300))
    bundle = figure_mimebundle(fig)
    assert bundle[PLOTLY_MIMETYPE]["data"][0]["type"] == "heatmap"
    page = bundle["text/html"]
    assert "Plotly.newPlot" in page and "<script src" not in page and len(page) < 50_000  # no plotly.js bundle inside
    assert "height:300px" in page
    assert bundle["text/plain"] == "<plotly figure: a title>"
    # a text alternative for screen readers, and no toolbar button that uploads the figure
    assert '<div role="figure" aria-label="Plot: a title">' in page
    assert '"showSendToCloud": false' in page and "sendChartToCloud" in page


def _title(node: object) -> str:
    title = node.get("title", {}) if isinstance(node, dict) else {}
    return (title.get("text", "") if isinstance(title, dict) else str(title or "")).strip()


def test_every_stored_figure_has_a_title_and_titled_axes() -> None:
    """Every plotly figure the notebooks show (their stored outputs, made by the library's figure
    functions): a title, and a title on each visible axis that shows tick labels."""
    import json
    from pathlib import Path

    notebooks = sorted((Path(__file__).resolve().parent.parent / "book").glob("*.ipynb"))
    missing, figures = [], 0
    for path in notebooks:
        for cell in json.loads(path.read_text())["cells"]:
            for output in cell.get("outputs", []):
                fig = output.get("data", {}).get(PLOTLY_MIMETYPE)
                if fig is None:
                    continue
                figures += 1
                layout = fig.get("layout", {})
                if not _title(layout):
                    missing.append(f"{path.name}: a figure without a title")
                for key, axis in layout.items():
                    if (key[:5] in ("xaxis", "yaxis") and axis.get("visible", True)
                            and axis.get("showticklabels", True) and not _title(axis)):
                        missing.append(f"{path.name}: {_title(layout)!r}: {key} has no title")
    assert figures >= 15, f"only {figures} figures found in {len(notebooks)} notebooks"
    assert not missing, "\n".join(missing)


def test_figure_div_ids_are_repeatable_and_unique_on_a_page() -> None:
    fig = go.Figure(go.Scatter(y=[3, 1, 2]))
    first, second = (figure_mimebundle(fig)["text/html"] for _ in range(2))
    ids = [page.split('id="')[1].split('"')[0] for page in (first, second)]
    assert ids[0] != ids[1] and ids[0].rsplit("-", 1)[0] == ids[1].rsplit("-", 1)[0]
    digest = ids[0].split("-")[1]
    assert digest == div_id(pio.to_json(rounded_numbers(fig.to_dict()), validate=False)).split("-")[1]


def test_figure_numbers_are_stored_to_four_significant_digits() -> None:
    """What the notebook stores, and nbval compares on the reader's machine, must not carry the last
    digits of a float: those differ between CPUs."""
    z = np.array([[0.123456789, 2.0 / 3.0], [1e-20 / 3.0, -12345.678]])
    fig = go.Figure(go.Heatmap(z=z, x=np.arange(2), text=[["a", "b"], ["c", "d"]]))
    fig.update_layout(title="t", xaxis_range=[0.1234567, 1.0])
    stored = figure_mimebundle(fig)["application/vnd.plotly.v1+json"]
    z_stored = stored["data"][0]["z"]  # a numpy array: plotly's base64 form, kept compact as float32
    assert z_stored["dtype"] == "f4" and z_stored["shape"] == "2, 2"
    decoded = np.frombuffer(base64.b64decode(z_stored["bdata"]), dtype="<f4").reshape(2, 2)
    assert decoded.tolist() == np.array([[0.1235, 0.6667], [3.333e-21, -12350.0]], dtype=np.float32).tolist()
    x_stored = stored["data"][0]["x"]  # integers are kept exactly as they were
    assert np.frombuffer(base64.b64decode(x_stored["bdata"]), dtype=x_stored["dtype"]).tolist() == [0, 1]
    assert stored["data"][0]["text"] == [["a", "b"], ["c", "d"]]
    assert stored["layout"]["xaxis"]["range"] == [0.1235, 1.0]
    # two values that differ in the 12th digit, as on two CPUs, are stored the same
    nudged = go.Figure(go.Heatmap(z=z * (1 + 1e-12), x=np.arange(2), text=[["a", "b"], ["c", "d"]]))
    nudged.update_layout(title="t", xaxis_range=[0.1234567, 1.0])
    assert figure_mimebundle(nudged)["application/vnd.plotly.v1+json"] == stored
    assert rounded_numbers([True, 3, "x", None, float("inf")]) == [True, 3, "x", None, float("inf")]


def test_use_book_renderer_makes_figures_display_in_both_forms() -> None:
    before = pio.renderers.default
    try:
        use_book_renderer()
        bundle = go.Figure(go.Bar(y=[1, 2]))._repr_mimebundle_()
        assert {PLOTLY_MIMETYPE, "text/html"} <= set(bundle)
        assert "Plotly.newPlot" in bundle["text/html"]
    finally:
        pio.renderers.default = before




def _luminance(colour: str) -> float:
    channels = [int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5)]
    linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def test_every_palette_colour_stands_out_from_white_by_3_to_1() -> None:
    """WCAG 2.1's non-text contrast (1.4.11): a curve in any of the book's colours is visible on the
    figures' white background (Okabe and Ito's yellow #F0E442 had 1.3:1). The live explorers read the
    same palette from the theme JSON (tests/test_live_js.py)."""
    from transformer_lib.figures.display import PALETTE

    for colour in PALETTE:
        assert (1.0 + 0.05) / (_luminance(colour) + 0.05) >= 3.0, colour
    assert (1.0 + 0.05) / (_luminance("#F0E442") + 0.05) < 3.0  # the old yellow fails the same check


# --- where the plotly mimetype is not rendered (Colab) -------------------------------------------


def test_the_html_form_draws_with_the_pages_plotly_or_loads_plotlys_own_once(browser) -> None:
    """In a real browser: on a page with plotly.js (the book) a figure draws and asks for nothing;
    in a frame without it (Colab's output frame), two figures draw after one request for the
    plotly.js of plotly's CDN that the installed plotly package names (served here from the book's
    vendored bundle, since the test has no network)."""
    from plotly.io._utils import plotly_cdn_url

    from tools.book_browser import ROOT

    bundle = (ROOT / "book" / "_static" / "vendor" / "plotly" / "plotly-book.min.js").read_text()
    figures = [figure_mimebundle(go.Figure(go.Bar(x=["a", "b"], y=[1, n]), layout=dict(height=300)))["text/html"]
               for n in (2, 3)]
    for page_has_plotly in (True, False):
        page = browser.new_page()
        requests: list[str] = []

        def serve(route, _request=None, into=requests) -> None:
            into.append(route.request.url)
            route.fulfill(status=200, content_type="text/javascript", body=bundle)

        page.route("https://**/*", serve)
        head = f"<script>{bundle}</script>" if page_has_plotly else ""
        page.set_content(f"<html><head>{head}</head><body>{''.join(figures)}</body></html>")
        page.wait_for_function("document.querySelectorAll('.js-plotly-plot .main-svg').length >= 2",
                               timeout=30_000)
        assert page.evaluate("document.querySelectorAll('.js-plotly-plot').length") == 2
        assert requests == ([] if page_has_plotly else [plotly_cdn_url()])
        page.close()
