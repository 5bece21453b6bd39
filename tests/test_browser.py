"""The built book in a real browser: every page draws everything, offline, without errors.

The book is built (warnings are errors) into a temporary folder, served on 127.0.0.1, and every
HTML page is opened in Debian's chromium through playwright. For each page:

* no console error and no uncaught exception; no response with an error status;
* no request for anything outside 127.0.0.1 (such requests are aborted and reported);
* every plotly figure has drawn its SVG and at least one trace;
* every saved ipywidgets view has been rendered by the widget manager;
* every bertviz view has drawn its SVG once the reader pressed its button (from the keyboard), and
  not one of bertviz's libraries (d3, jQuery) was fetched before that: they load on first use;
* MathJax has typeset every equation, and no raw ``$$`` or ``\\[`` is left in the text; it does so
  when the book is built (book/_ext/static_math.py): a page without saved widgets loads no MathJax.

A page whose bertviz views were drawn is photographed then (screenshots/, look at it); every page, at
both widths, is photographed by tests/test_reader.py's walk before anything is pressed (a blank plot
is a bug). Without chromium the test fails with a message saying how to install it.
"""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path
from urllib.parse import urlparse

import pytest

from tools.book_browser import ROOT, html_pages, serve

SCREENSHOTS = ROOT / "screenshots"
PAGE_TIMEOUT_MS = 60_000

# What has been drawn so far; the page is ready when it matches what its HTML promises.
STATE_JS = """() => {
  const plots = [...document.querySelectorAll('.js-plotly-plot')];
  const traces = '.main-svg g.trace, .main-svg .hm image';  // scatter, bar...: g.trace; heatmap: an image
  const views = [...document.querySelectorAll('script[type="application/vnd.jupyter.widget-view+json"]')];
  const rendered = views.filter(s => {
    const area = s.previousElementSibling;
    return area && area.classList.contains('widget-subarea') && area.querySelector('.jupyter-widgets');
  });
  const bertviz = [...document.querySelectorAll('div[id^="bertviz-"]')];
  const math = [...document.querySelectorAll('.math')];
  const text = document.body.cloneNode(true);
  text.querySelectorAll('pre, code, script, style, .highlight').forEach(e => e.remove());
  return {
    plots: plots.length,
    plots_drawn: plots.filter(p => p.querySelector(traces)).length,
    heatmaps_drawn: [...document.querySelectorAll('.tc-heatmaps')].filter(
      d => d.tcWidth && d.querySelector('canvas').width > 0 && d.querySelector('svg text')).length,
    views: views.length,
    views_rendered: rendered.length,
    widgets: document.querySelectorAll('.jupyter-widgets').length,
    bertviz: bertviz.length,
    bertviz_drawn: bertviz.filter(d => d.querySelector('#vis svg')).length,
    math: math.length,
    math_typeset: math.filter(m => m.querySelector('mjx-container')).length,
    raw_tex: (text.textContent.match(/\\$\\$|\\\\\\[|\\\\\\(/g) || []).length,
  };
}"""

READY_JS = """([state, expected]) => {
  const s = state();
  return s.plots_drawn >= expected.plots && s.heatmaps_drawn >= expected.heatmaps && s.views_rendered >= expected.views
    && s.bertviz_drawn >= expected.bertviz && s.math_typeset === s.math;
}"""


# The plotly figures a live explorer draws (transformer_lib/browser/static): the attention explorer none (its
# maps are a canvas, heatmap-canvas.js, counted apart; with the replay, its training curve), the positional
# explorer one, the stepper its candidates
# and the cross-attention row, the language-model explorer its bars and its maps; the whole-model explorer
# none on arrival (its figure is SVG; its panel is drawn on the first click, which fetches the model); the
# digits explorer none (its grid, attention and probabilities are HTML tables).
LIVE_FIGURES = {"attention": 0, "positional": 1, "stepper": 2, "lm": 2, "model": 0, "vit": 0}
LIVE_HEATMAPS = {"attention": 1}  # the canvas maps (.tc-heatmaps) an explorer draws on arrival
# The build gives each explorer an id, the target of the page's skip links, and the name the links call it by
# (book/_ext/reader_view.py)
LIVE_EXPLORER = re.compile(r'<div class="tc-live" data-explorer="(\w+)"(?: id="[\w-]+" data-skip-name="[^"]*")?>'
                           r'<script type="application/json" class="tc-live-state">(.*?)</script>', re.DOTALL)


def live_figures(html: str) -> int:
    """The figures the page's live explorers draw, by their kind and state."""
    return sum(LIVE_FIGURES[kind] + bool(json.loads(state).get("replay"))
               for kind, state in LIVE_EXPLORER.findall(html))


def promised(html: str) -> dict[str, int]:
    """What a page's HTML asks the browser to draw: figures (in the page, in saved widget outputs,
    where the quotes are JSON-escaped, and those of each live explorer), widget views and bertviz views."""
    assert len(LIVE_EXPLORER.findall(html)) == html.count('class="tc-live"')  # every live explorer counted
    return {
        "plots": html.count('class="plotly-graph-div"') + html.count('class=\\"plotly-graph-div\\"')
        + live_figures(html),
        "heatmaps": sum(LIVE_HEATMAPS.get(kind, 0) for kind, _ in LIVE_EXPLORER.findall(html)),
        "views": len(re.findall(r'<script type="application/vnd\.jupyter\.widget-view\+json">', html)),
        "bertviz": len(re.findall(r'<div id="bertviz-[0-9a-f-]+"', html)),
    }


REDIRECT = re.compile(r'<meta http-equiv="Refresh" content="0; url=([^"]+)"', re.IGNORECASE)


def check_page(browser, url: str, html: str, screenshot: Path, redirect_html: str | None = None) -> dict:
    """Open ``url``; return what was drawn and the problems found. For a page that redirects,
    ``redirect_html`` is the HTML of its target, whose promises are then checked."""
    problems: list[str] = []
    context = browser.new_context(viewport={"width": 1280, "height": 900})

    def route(route) -> None:
        parsed = urlparse(route.request.url)
        if parsed.scheme in ("data", "blob") or parsed.hostname == "127.0.0.1":
            route.continue_()
        else:
            problems.append(f"request to another host: {route.request.url}")
            route.abort()

    context.route("**/*", route)
    page = context.new_page()
    page.on("console", lambda m: m.type == "error" and problems.append(f"console error: {m.text} ({m.location})"))
    page.on("pageerror", lambda err: problems.append(f"uncaught exception: {err}"))
    page.on("requestfailed", lambda r: problems.append(f"request failed: {r.url} ({r.failure})"))
    page.on("response", lambda r: r.status >= 400 and problems.append(f"HTTP {r.status}: {r.url}"))
    expected = promised(redirect_html if redirect_html is not None else html)
    page.goto(url, wait_until="load")
    if redirect_html is not None:
        target = REDIRECT.search(html).group(1)
        page.wait_for_url(f"**/{target}", wait_until="load")
    page.wait_for_load_state("networkidle")
    # bertviz's views wait for the reader: press each one's button from the keyboard
    loaded_before_use = page.evaluate("() => performance.getEntriesByType('resource').map(e => e.name)")
    buttons = page.locator("button.tc-bertviz-load")
    for number in range(buttons.count()):  # one at a time: a button is removed once its view is drawn
        button = buttons.first
        label = button.inner_text()
        promised_download = "loads d3 and jQuery" in label
        if promised_download != (number == 0):  # only the first view's libraries are a download
            problems.append(f"bertviz button {number + 1} says {label!r}")
        left = buttons.count() - 1  # counted before the press: a view whose libraries are loaded draws at once
        button.focus()
        page.keyboard.press("Enter")
        page.wait_for_function("(left) => document.querySelectorAll('button.tc-bertviz-load').length <= left",
                               arg=left, timeout=PAGE_TIMEOUT_MS)
    state_fn = f"({STATE_JS})"
    try:
        page.wait_for_function(f"(expected) => ({READY_JS})([{state_fn}, expected])", arg=expected,
                               timeout=PAGE_TIMEOUT_MS, polling=250)
    except Exception:  # noqa: BLE001 -- reported below with what was and was not drawn
        problems.append(f"timed out after {PAGE_TIMEOUT_MS} ms waiting for everything to draw")
    page.wait_for_timeout(500)  # let transitions settle before the screenshot
    state = page.evaluate(STATE_JS)
    if state["plots"] != expected["plots"] or state["plots_drawn"] != state["plots"]:
        problems.append(f"plotly: {expected['plots']} figures in the HTML, {state['plots']} plotted, "
                        f"{state['plots_drawn']} with drawn traces")
    if state["heatmaps_drawn"] != expected["heatmaps"]:
        problems.append(f"canvas maps: {expected['heatmaps']} promised, {state['heatmaps_drawn']} drawn")
    if state["views_rendered"] != expected["views"]:
        problems.append(f"ipywidgets: {expected['views']} saved views, {state['views_rendered']} rendered")
    if state["bertviz_drawn"] != expected["bertviz"]:
        problems.append(f"bertviz: {expected['bertviz']} views, {state['bertviz_drawn']} drawn")
    if state["math_typeset"] != state["math"]:
        problems.append(f"MathJax: {state['math']} equations, {state['math_typeset']} typeset")
    if state["raw_tex"]:
        problems.append(f"MathJax: {state['raw_tex']} raw TeX delimiters left in the text")
    # The bertviz views as drawn; every page as it arrives is the reader walk's screenshot (a second full
    # page of each would cost CI about a minute of chromium's CPU).
    if state["bertviz"]:
        screenshot.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(screenshot), full_page=True)
    context.close()
    return {"state": state, "problems": problems, "loaded_before_use": loaded_before_use}


def test_every_page_draws_offline(site: Path, browser) -> None:
    pages = html_pages(site)
    names = {p.relative_to(site).as_posix() for p in pages}
    assert {"book/intro.html", "book/06_encoder_decoder.html", "search.html", "genindex.html"} <= names
    reports = {}
    with serve(site) as base:
        for path in pages:
            name = path.relative_to(site).as_posix()
            shot = SCREENSHOTS / (name.removesuffix(".html").replace("/", "__") + ".png")
            html = path.read_text()
            redirect = REDIRECT.search(html)  # index.html only forwards to the first chapter
            target = (path.parent / redirect.group(1)).read_text() if redirect else None
            reports[name] = check_page(browser, base + name, html, shot, target)
    problems = {name: r["problems"] for name, r in reports.items() if r["problems"]}
    assert not problems, json.dumps(problems, indent=1)
    # The checks above must have had something to check: chapter 6 has two figures and equations.
    chapter6 = reports["book/06_encoder_decoder.html"]["state"]
    assert chapter6["plots_drawn"] >= 2 and chapter6["math_typeset"] >= 2
    if "book/07_training_inference.html" in reports:  # every kind of picture: plots, live explorer, bertviz
        chapter7 = reports["book/07_training_inference.html"]["state"]
        # no saved widget left: the explorer is live (tests/test_live_model.py), the progress bar is text
        assert chapter7["plots_drawn"] >= 3 and chapter7["views_rendered"] == 0 and chapter7["widgets"] == 0
        assert chapter7["bertviz_drawn"] == 2 and chapter7["math_typeset"] >= 2
    for name, report in reports.items():
        if not report["state"]["views"]:
            assert not [url for url in report["loaded_before_use"] if "/mathjax/" in url], name
    if "book/07_training_inference.html" in reports:
        first_visit = reports["book/07_training_inference.html"]["loaded_before_use"]
        assert not [url for url in first_visit if re.search(r"/(d3|jquery)/", url)], first_visit


def test_saved_outputs_have_a_form_the_book_renders() -> None:
    """Figures carry plotly's mimetype (JupyterLab) and HTML (the book); myst-nb's warning about the
    former is switched off in _config.yml, so check here that no output depends on it alone."""
    notebooks = sorted((ROOT / "book").rglob("*.ipynb"))
    assert notebooks
    for path in notebooks:
        nb = json.loads(path.read_text())
        assert path.stat().st_size <= 2 * 1024 * 1024, f"{path.name}: over 2 MB"
        state = nb.get("metadata", {}).get("widgets", {}).get("application/vnd.jupyter.widget-state+json", {})
        outputs = [o for c in nb["cells"] for o in c.get("outputs", [])]
        states = state.get("state", {}).values()
        outputs += [o for s in states for o in s.get("state", {}).get("outputs", [])]
        for output in outputs:
            data = output.get("data", {})
            if "application/vnd.plotly.v1+json" in data:
                page = data.get("text/html", "")
                page = "".join(page) if isinstance(page, list) else page  # nbformat may store lines
                assert "Plotly.newPlot" in page, f"{path.name}: a figure without its HTML form"
            if "application/vnd.jupyter.widget-view+json" in data:
                assert data["application/vnd.jupyter.widget-view+json"]["model_id"] in state.get("state", {}), (
                    f"{path.name}: a widget view without saved state (run tools/execute_notebooks.py)")


def test_chapters_have_a_binder_launch_button_into_jupyterlab(site: Path) -> None:
    """Each chapter's page links to Binder, opening that chapter in JupyterLab (_config.yml's
    launch_buttons and repository)."""
    from urllib.parse import unquote

    import yaml

    repository = yaml.safe_load((ROOT / "_config.yml").read_text())["repository"]
    owner_repo = urlparse(repository["url"]).path.strip("/")
    for chapter in sorted((ROOT / "book").glob("[0-9][0-9]_*.ipynb")):
        html = unquote((site / "book" / f"{chapter.stem}.html").read_text())
        links = re.findall(r'href="(https://mybinder\.org/v2/gh/[^"]+)"', html)
        expected = f"https://mybinder.org/v2/gh/{owner_repo}/{repository['branch']}?urlpath=lab/tree/book/{chapter.name}"
        assert expected in [link.replace("&amp;", "&") for link in links], f"{chapter.name}: Binder links {links}"


def test_excerpt_links_point_at_the_commit_the_book_was_built_from(site: Path) -> None:
    """book/_ext/source_links.py: every link above an excerpt of the library (transformer_lib.source)
    names the commit checked out for the build, not the branch the notebooks store."""
    import subprocess

    from transformer_lib.source import REPOSITORY

    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True)
    links = [m for page in html_pages(site)
             for m in re.findall(rf'href="{re.escape(REPOSITORY)}/blob/([^/"]+)/transformer_lib/', page.read_text())]
    assert len(links) >= 40, f"{len(links)} excerpt links in the built book (44 excerpts when this was written)"
    assert set(links) == {head.stdout.strip()}


def test_every_page_names_both_licences_and_the_root_page_links_the_favicon(site: Path) -> None:
    """The footer of every page names the text's licence (CC BY 4.0) and the code's (MIT), as
    LICENSE-TEXT.md and LICENSE state them; index.html, Sphinx's redirect, links the favicon (else
    a browser logs a 404 for /favicon.ico); the intro links the PDF only where the build has it."""
    assert "https://creativecommons.org/licenses/by/4.0/" in (ROOT / "LICENSE-TEXT.md").read_text()
    assert (ROOT / "LICENSE").read_text().startswith("MIT License")
    for path in html_pages(site):
        html = path.read_text()
        if REDIRECT.search(html):
            continue
        footer = html[html.index('<footer class="bd-footer-content"'):]
        assert 'href="https://creativecommons.org/licenses/by/4.0/">CC BY 4.0</a>' in footer, path.name
        assert 'href="https://opensource.org/license/mit">MIT</a>' in footer, path.name
    root = (site / "index.html").read_text()
    assert REDIRECT.search(root).group(1) == "book/intro.html" and "<title>The Transformer, Computed</title>" in root
    favicon = re.search(r'<link rel="icon" href="data:image/svg\+xml;base64,([^"]+)"', root).group(1)
    assert base64.b64decode(favicon) == (site / "_static" / "favicon.svg").read_bytes()
    intro = (site / "book" / "intro.html").read_text()
    has_pdf = (site / "_static" / "the-transformer-computed.pdf").is_file()
    assert ("the-transformer-computed.pdf\"" in intro) == has_pdf
    assert ("(not part of this build)" in intro) != has_pdf


def test_a_page_loads_the_scripts_of_its_explorers_and_no_other() -> None:
    """browser.page.page_scripts: each kind's scripts and the shared ones, in load order; the positional
    explorer alone runs no model (chapter 3 loads no book-model.js); a page without explorers loads none."""
    from transformer_lib.browser.page import KINDS, LIVE_SCRIPTS, LM_SCRIPTS, page_scripts

    order = (*LIVE_SCRIPTS, *LM_SCRIPTS)
    assert page_scripts([]) == ()
    assert page_scripts(["positional"]) == ("book-text.js", "explorers.js", "positional-explorer.js")
    assert page_scripts(["attention", "stepper", "attention"]) == (
        "book-text.js", "book-model.js", "heatmap-canvas.js", "explorers.js", "book-trace.js", "stepper.js")
    every = page_scripts(KINDS)
    assert every == order, "every script serves some kind of explorer, and loads in the list's order"
    for kind in KINDS:
        scripts = page_scripts([kind])
        assert list(scripts) == sorted(scripts, key=order.index)
    with pytest.raises(ValueError, match=r"kinds\[0\]"):
        page_scripts(["attentoin"])


def test_each_built_page_loads_the_scripts_of_the_explorers_it_holds(site: Path) -> None:
    """The build (book/_ext/offline_assets.py) gives each page page_scripts of the explorers in it."""
    from transformer_lib.browser.page import page_scripts

    pages = 0
    for page in html_pages(site):
        text = page.read_text()
        kinds = set(re.findall(r'<div class="tc-live" data-explorer="(\w+)"', text))
        loaded = tuple(re.findall(r'<script src="[^"]*_static/live/([\w-]+\.js)', text))
        assert loaded == page_scripts(kinds), f"{page.name}: loads {loaded} for {sorted(kinds)}"
        pages += bool(kinds)
    assert pages >= 5, f"{pages} pages with an explorer (chapters 3, 4, 6, 7 and 8 when this was written)"
