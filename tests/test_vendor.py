"""The book ships a partial plotly.js bundle (built for the traces the book draws): every figure must use its traces.

A figure whose trace type the bundle lacks (``scatter3d``, ``sankey``, ...) draws nothing in the
built book, without an error. This test finds every plotly figure the committed notebooks show,
in a cell's output or inside saved widget state, and checks its traces against the list that
``tools/vendor_assets.sh`` took from the bundle's README.
"""

from __future__ import annotations

import json
import re
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
    bundle = (VENDOR / "plotly-book.min.js").read_text()
    assert len(bundle) > 1_000_000
    assert (VENDOR / "LICENSE").is_file()
    assert {"scatter", "heatmap", "bar"} <= bundle_traces()
    assert "scatter3d" not in bundle_traces()
    # TRACES.txt is what tools/plotly-bundle/entry.js registers (scatter is in plotly.js's core)
    entry = (ROOT / "tools" / "plotly-bundle" / "entry.js").read_text()
    registered = set(re.findall(r"require\('plotly\.js/lib/([a-z0-9]+)'\)", entry)) - {"core"}
    assert bundle_traces() == registered | {"scatter"}


def test_the_bundle_is_the_plotly_js_of_the_installed_plotly():
    """The figures are written by the plotly Python package for its plotly.js: the bundle is built
    from that version (pinned in tools/plotly-bundle), and says so."""
    import plotly.offline

    version = plotly.offline.get_plotlyjs_version()
    package = json.loads((ROOT / "tools" / "plotly-bundle" / "package.json").read_text())
    assert package["dependencies"]["plotly.js"] == version
    assert f'.version="{version}"' in (VENDOR / "plotly-book.min.js").read_text()  # src/version.js


def test_the_build_time_mathjax_is_the_vendored_version_with_its_licence():
    """book/_ext/math_to_svg.js typesets the formulas with the subset of npm mathjax in book/_ext/mathjax."""
    build = ROOT / "book" / "_ext" / "mathjax"
    assert (build / "LICENSE").is_file() and (build / "es5" / "node-main.js").is_file()
    version = re.search(r"mathjax\s+(\S+)", (VENDOR.parent / "VERSIONS.txt").read_text()).group(1)
    assert (build / "VERSION.txt").read_text().startswith(f"mathjax {version} ")


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


def test_the_package_carries_the_same_d3_and_jquery_as_the_book():
    """bertviz's views in a live notebook read d3 and jQuery from the package (an installed wheel has
    no book/ beside it); the built book serves its own copy from _static. One source: the same bytes."""
    from transformer_lib.figures import bertviz

    book = ROOT / "book" / "_static" / "vendor"
    package = ROOT / "transformer_lib" / "browser" / "vendor"
    assert str(bertviz.VENDOR) == str(package), "bertviz reads another folder than the package's"
    for folder in ("d3", "jquery"):
        names = sorted(p.name for p in (book / folder).iterdir())
        assert names == sorted(p.name for p in (package / folder).iterdir()), folder
        assert any("LICENSE" in name for name in names), f"{folder} has no licence"
        for name in names:
            assert (book / folder / name).read_bytes() == (package / folder / name).read_bytes(), f"{folder}/{name}"
