"""Showing a figure, and the look every figure of the book shares.

Figures leave the kernel through ``show`` (or the ``"transformer_book"`` plotly renderer
that ``use_book_renderer`` installs) as two representations: the plotly mimetype, which
JupyterLab (Notebook 7, VS Code) draws with the plotly extension, and ``text/html`` that calls
``Plotly.newPlot`` without embedding plotly.js, which the book draws with the one copy of plotly.js
in its static folder. Where neither is there (Colab renders the HTML, in a frame of its own, and no
plotly mimetype), the HTML loads plotly.js from plotly's CDN itself, once per frame, as plotly's own
Colab renderer does. ``BOOK_TEMPLATE`` is the small plotly template every figure module uses.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import re
import sys
from collections import Counter

# plotly.io imports nbformat, nbformat imports jsonschema, and jsonschema imports rfc3987_syntax when it
# is installed (an optional extra that Jupyter's servers install), which builds a parser at import:
# 1.3 s of every chapter's first cell on a fast core, for checks of IRI strings no figure makes.
# A None in sys.modules makes that optional import fail, as if the extra were not installed.
sys.modules.setdefault("rfc3987_syntax", None)

import numpy as np  # noqa: E402
import plotly.graph_objects as go  # noqa: E402
import plotly.io as pio  # noqa: E402
from plotly.io._utils import plotly_cdn_url  # noqa: E402
from plotly.io.base_renderers import MimetypeRenderer  # noqa: E402

from ..validation import check_instance, check_int  # noqa: E402

PLOTLY_MIMETYPE = "application/vnd.plotly.v1+json"
# The toolbar keeps what works on the page itself (zoom, pan, reset, save as PNG): plotly.js 4
# offers "Share chart..." by default, which uploads the figure's data to plotly's cloud, and the
# book promises that nothing leaves the page's host. book/_static/plotly-config.js sets the same for
# figures stored before this changed; the live explorers read this config from browser.theme.
MODEBAR_REMOVED = ["sendChartToCloud", "sendDataToCloud", "editInChartStudio", "select2d", "lasso2d",
                   "toggleSpikelines", "hoverClosestCartesian", "hoverCompareCartesian"]
PLOTLY_CONFIG = {"responsive": True, "displaylogo": False, "showSendToCloud": False,
                 "modeBarButtonsToRemove": MODEBAR_REMOVED}

# Okabe and Ito's colour-blind-safe palette (distinct under the common colour-vision deficiencies),
# with its three light colours darkened to the same hues, so that every line stands out from the
# white background by at least 3:1 (WCAG 2.1's 1.4.11; Okabe and Ito's orange #E69F00, sky blue
# #56B4E9 and yellow #F0E442 have 2.3, 2.3 and 1.3, and the yellow was barely visible);
# tests/test_figures_display.py checks the contrast. Figures that compare curves or groups also vary
# line dash or marker shape (``DASHES``, ``MARKERS``), so that no comparison rests on colour alone.
# book/_static/live/explorers.js draws with the same colours.
PALETTE = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#BF8300", "#3993D0", "#000000", "#8A7D00"]
DASHES = ["solid", "dash", "dot", "dashdot", "longdash", "longdashdot"]
MARKERS = ["circle", "square", "diamond", "triangle-up", "x", "cross", "star", "triangle-down"]

# A small template: plotly's default one adds about 7 kB to every figure in the notebook and page.
BOOK_TEMPLATE = go.layout.Template(
    layout=dict(
        font=dict(family="Helvetica, Arial, sans-serif", size=13, color="#222"),
        colorway=PALETTE,
        # below the plot, in rows: a legend at the side takes a third of a phone's width from the plot
        legend=dict(orientation="h", x=0.0, xanchor="left", y=-0.3, yanchor="top"),
        paper_bgcolor="white",
        plot_bgcolor="white",
        xaxis=dict(gridcolor="#e5e5e5", zerolinecolor="#bbb", linecolor="#888", automargin=True),
        yaxis=dict(gridcolor="#e5e5e5", zerolinecolor="#bbb", linecolor="#888", automargin=True),
        margin=dict(l=60, r=30, t=90, b=50),
        hoverlabel=dict(font_size=13),
    )
)

# The HTML form draws at once where plotly.js is on the page (the book loads its bundle before any
# figure); elsewhere (Colab) it first loads plotly.js, the version plotly's Python package writes
# figures for, from plotly's CDN: one script element per frame, shared by the figures drawn in it.
_DRAW_WHEN_PLOTLY_IS_THERE = (
    '(function(draw){if(window.Plotly)return draw();var u="URL",s=document.querySelector(\'script[src="\'+u+\'"]\');'
    'if(!s){s=document.createElement("script");s.src=u;document.head.appendChild(s);}'
    's.addEventListener("load",draw);})(function(){DRAW});'
)

_shown: Counter[str] = Counter()  # how often each figure was shown: keeps div ids unique yet repeatable


def div_id(content: str, prefix: str = "fig") -> str:
    """A page-unique id that is the same each time a notebook is re-run (plotly's and bertviz's are
    random): a digest of the content, and how often that content was shown before."""
    check_instance("content", content, str, "a str")
    check_instance("prefix", prefix, str, "a str")
    digest = hashlib.sha1(content.encode()).hexdigest()[:12]
    _shown[digest] += 1
    return f"{prefix}-{digest}-{_shown[digest]}"


SIGNIFICANT_DIGITS = 4


def rounded_numbers(value: object, digits: int = SIGNIFICANT_DIGITS) -> object:
    """``value`` (a figure's dict, or any part of it) with every float rounded to ``digits``
    significant digits.

    A figure's numbers are stored in the notebook and compared by the notebook tests on the
    reader's machine. Two CPUs compute the same float64 result up to about 1e-15 (their vector
    instructions add in different orders); four digits hide that, and are more than a screen shows.
    Plotly's compact form of an array (base64 of its bytes) stays compact: the rounded numbers are
    stored as float32, whose bytes are then the same on every machine too.
    """
    check_int("digits", digits, minimum=1)
    return _rounded(value, digits)


def _rounded(value: object, digits: int) -> object:
    if isinstance(value, dict) and "bdata" in value and "dtype" in value:  # plotly's base64 form of an array
        array = np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"]))
        if array.dtype.kind != "f":
            return value
        rounded = np.array([float(f"{x:.{digits}g}") for x in array.tolist()], dtype="<f4")
        return {**value, "dtype": "f4", "bdata": base64.b64encode(rounded.tobytes()).decode("ascii")}
    if isinstance(value, dict):
        return {key: rounded_numbers(item, digits) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [rounded_numbers(item, digits) for item in value]
    if isinstance(value, np.ndarray):
        return rounded_numbers(value.tolist(), digits) if value.dtype.kind in "fiuc" else value.tolist()
    if isinstance(value, float | np.floating):
        return float(f"{float(value):.{digits}g}")
    if isinstance(value, np.integer):
        return int(value)
    return value


def figure_mimebundle(fig: go.Figure | dict) -> dict[str, object]:
    """The display data of ``fig``: plotly JSON for JupyterLab, HTML for the book, a line of text.

    The HTML expects ``Plotly`` to be defined on the page (the book loads plotly.js once from
    its static folder) rather than carrying a 1.5 to 4.8 MB copy in every notebook and page.
    Every number is rounded to ``SIGNIFICANT_DIGITS`` (``rounded_numbers``), so that the stored
    figure is the same on every machine.
    """
    fig_dict = rounded_numbers(fig.to_dict() if isinstance(fig, go.Figure) else fig)
    fig_json = pio.to_json(fig_dict, validate=False)
    height = fig_dict.get("layout", {}).get("height")
    page_html = pio.to_html(
        fig_dict, include_plotlyjs=False, full_html=False, div_id=div_id(fig_json), validate=False,
        config=PLOTLY_CONFIG, default_height=f"{height}px" if height else "100%",
    )
    page_html = _loading_plotly_where_missing(page_html)
    title = fig_dict.get("layout", {}).get("title", {})
    title_text = title.get("text", "") if isinstance(title, dict) else str(title)
    name = re.sub(r"\s+", " ", re.sub("<[^>]+>", " ", title_text)).strip() or "untitled"
    plain = f"<plotly figure: {name}>"
    # A screen reader announces the figure by its title (the plot's SVG has no text alternative);
    # role="figure" keeps plotly's toolbar buttons inside it reachable.
    page_html = f'<div role="figure" aria-label="{html.escape(_accessible_name(fig_dict, name))}">{page_html}</div>'
    return {PLOTLY_MIMETYPE: json.loads(fig_json), "text/html": page_html, "text/plain": plain}


def _loading_plotly_where_missing(page_html: str) -> str:
    """plotly's HTML with its drawing script wrapped in ``_DRAW_WHEN_PLOTLY_IS_THERE``."""
    match = re.search(r"<script[^>]*>(.*)</script>", page_html, flags=re.DOTALL)
    if match is None or "Plotly.newPlot" not in match.group(1):
        raise RuntimeError("plotly's HTML no longer has the one script this wraps; check plotly's version")
    script = _DRAW_WHEN_PLOTLY_IS_THERE.replace("URL", plotly_cdn_url()).replace("DRAW", match.group(1).strip())
    return page_html[: match.start(1)] + script + page_html[match.end(1):]


def _axis_title(axis: object) -> str:
    title = axis.get("title", {}) if isinstance(axis, dict) else {}
    text = title.get("text", "") if isinstance(title, dict) else str(title)
    return re.sub("<[^>]+>", " ", text or "").strip()


def _accessible_name(fig_dict: dict, name: str) -> str:
    """"Plot: <title>; x: <axis title>; y: <axis title>", the text alternative of a figure."""
    layout = fig_dict.get("layout", {})
    axes = []
    for key in sorted(k for k in layout if re.fullmatch(r"[xy]axis\d*", k)):
        text = _axis_title(layout[key])
        if text and f"{key[0]}: {text}" not in axes:
            axes.append(f"{key[0]}: {text}")
    return "; ".join([f"Plot: {name}", *axes])


class BookRenderer(MimetypeRenderer):
    """The plotly renderer behind ``use_book_renderer``: ``fig.show()`` and a figure left as a
    cell's value then display through ``figure_mimebundle``."""

    def to_mimebundle(self, fig_dict: dict) -> dict[str, object]:
        return figure_mimebundle(fig_dict)


def use_book_renderer() -> None:
    """Make ``"transformer_book"`` plotly's default renderer.

    Since plotly 6.1, a figure shown inside a kernel carries only the plotly mimetype, which
    myst-nb cannot put in a page; this renderer adds the HTML form the book shows.
    """
    pio.renderers["transformer_book"] = BookRenderer()
    pio.renderers.default = "transformer_book"


def show(fig: go.Figure) -> None:
    """Display ``fig`` so that it draws in JupyterLab and in the built book."""
    from IPython.display import display  # only a notebook needs IPython; the figures themselves do not

    display(figure_mimebundle(fig), raw=True)
