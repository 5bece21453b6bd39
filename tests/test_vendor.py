"""The book ships a partial plotly.js bundle (the cartesian one): every figure must use its traces.

A figure whose trace type the bundle lacks (``scatter3d``, ``sankey``, ...) draws nothing in the
built book, without an error. This test finds every plotly figure the committed notebooks show,
in a cell's output or inside saved widget state, and checks its traces against the list that
``tools/vendor_assets.sh`` took from the bundle's README.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
VENDOR = ROOT / "book" / "_static" / "vendor" / "plotly"
PLOTLY_MIMETYPE = "application/vnd.plotly.v1+json"
NOTEBOOKS = sorted((ROOT / "book").glob("*.ipynb"))


def bundle_traces() -> set[str]:
    return set((VENDOR / "TRACES.txt").read_text().split())


def figures(node: object) -> Iterator[dict]:
    """Every plotly figure (the plotly mimetype's JSON) anywhere in a notebook's JSON tree."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == PLOTLY_MIMETYPE and isinstance(value, dict):
                yield value
            else:
                yield from figures(value)
    elif isinstance(node, list):
        for item in node:
            yield from figures(item)


def test_the_vendored_bundle_and_its_trace_list_are_there():
    assert (VENDOR / "plotly-cartesian.min.js").stat().st_size > 1_000_000
    assert (VENDOR / "LICENSE").is_file()
    assert {"scatter", "heatmap", "bar"} <= bundle_traces()
    assert "scatter3d" not in bundle_traces()


def test_the_search_finds_figures_in_outputs_and_in_widget_state():
    figure = {"data": [{"type": "scatter3d"}], "layout": {}}
    output = {"outputs": [{"data": {PLOTLY_MIMETYPE: figure}}]}
    state = {"metadata": {"widgets": {"state": {"m": {"state": {"outputs": [{"data": {PLOTLY_MIMETYPE: figure}}]}}}}}}
    assert list(figures(output)) == [figure]
    assert list(figures(state)) == [figure]


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_every_figure_uses_traces_the_bundle_draws(notebook: Path):
    allowed = bundle_traces()
    for figure in figures(json.loads(notebook.read_text())):
        for trace in figure.get("data", []):
            kind = trace.get("type", "scatter")  # plotly.js draws a trace without a type as a scatter
            assert kind in allowed, f"{notebook.name}: a {kind!r} trace, which the book's plotly.js bundle cannot draw"


def test_the_chapters_show_plotly_figures():
    # the search above must not pass for want of finding anything
    assert sum(1 for notebook in NOTEBOOKS for _ in figures(json.loads(notebook.read_text()))) >= 10
