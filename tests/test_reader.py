"""The built book as a reader meets it: on a phone, with a keyboard or a screen reader, offline.

Every page of the book (built once per session, tests/conftest.py) is opened in chromium:

* at a phone's 390x844, no page is wider than the screen (no sideways panning);
* axe-core (tests/vendor/axe-core, for the tests only: the site does not ship it) finds no serious
  or critical accessibility violation, at desktop width and on the phone;
* no element offers an action that sends the page's data to another host: no form posting away,
  no plotly "Share chart..." (upload to plotly's cloud) or "Edit in Chart Studio" button. The links
  to other hosts that remain are ones the reader follows by choice (the repository, Binder, the
  cited papers): they are listed, and each must be one of the kinds named in ``LINK_HOSTS``;
* every plotly figure has a title, its axes have titles, and it has an accessible name; each of its
  dropdowns and sliders (which plotly does not let the keyboard reach) has a labelled <select>
  beside it (book/_static/plotly-config.js);
* at both widths (tests/reader_checks.py): axe-core's WCAG 2.1 A and AA rules find no serious or
  critical violation, the theme included; no text box of a figure overlaps another; every SVG and
  canvas figure fits its column or scrolls with a visible cue; every explorer and figure control is
  reached from the top of the page in at most 10 Tab presses; no figure title is covered.

The whole-book PDF (tools/build_pdf.py) is printed from the same build and holds every chapter.

Screenshots at 1366 and 390 px go to screenshots/ (``<page>__desktop.png``, ``<page>__phone.png``), for a
person to look at; ``tools/test.sh`` (what CI runs) sets ``BOOK_SCREENSHOTS=0``, and the walk takes none: 34
full pages cost chromium about a minute and a half of CPU, in a clone whose files nobody opens.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from urllib.parse import urlparse

from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tools.book_browser import ROOT, html_pages, serve

from .reader_checks import axe_violations, figure_problems, keyboard_problems
from .test_browser import SCREENSHOTS

WALK_SCREENSHOTS = os.environ.get("BOOK_SCREENSHOTS", "1") != "0"
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1366, "height": 900}
# Hosts a link may point to: links only, followed by the reader's choice, and sending no page data.
LINK_HOSTS = {
    "github.com": "the book's repository (_config.yml's repository.url)",
    "mybinder.org": "Binder, which runs the notebooks (the launch button, the intro)",
    "arxiv.org": "cited papers",
    "doi.org": "cited papers",
    "statmt.org": "the WMT 2014 data, which the distributed-training appendix tells a reader to download",
    "www.sphinx-doc.org": "the theme's footer credit",
    "sphinx-doc.org": "the theme's footer credit",
    "jupyterbook.org": "the theme's footer credit",
    "executablebooks.org": "the theme's footer credit",
    "creativecommons.org": "the licence of the text and figures (the footer, the intro)",
    "opensource.org": "the code's licence, MIT (the footer)",
}

WAIT_DRAWN_JS = """() => [...document.querySelectorAll('.js-plotly-plot')].every(p => p.querySelector('.main-svg'))"""

WIDTH_JS = """(viewport) => {
  const doc = document.documentElement;
  // an element past the screen's edge that no ancestor clips or scrolls: what widens the page
  const clipped = (e) => { for (let a = e.parentElement; a && a !== document.body; a = a.parentElement) {
    if (getComputedStyle(a).overflowX !== 'visible') return true; } return false; };
  const wide = [...document.querySelectorAll('body *')].filter(e => {
    const r = e.getBoundingClientRect();
    return r.width > 0 && r.right > viewport + 1 && getComputedStyle(e).position !== 'fixed' && !clipped(e);
  }).slice(0, 6).map(e => `${e.tagName.toLowerCase()}.${[...e.classList].join('.')} right=${
      Math.round(e.getBoundingClientRect().right)} "${(e.textContent || '').trim().slice(0, 40)}"`);
  return {width: Math.max(doc.scrollWidth, document.body.scrollWidth), wide};
}"""

ACTIONS_JS = """() => {
  const away = (url) => { try { const u = new URL(url, location.href);
    return /^https?:$/.test(u.protocol) && u.hostname !== location.hostname ? u.href : null;
  } catch (e) { return null; } };
  const forms = [...document.querySelectorAll('form')].map(f => away(f.getAttribute('action') || '')).filter(Boolean);
  const cloud = [...document.querySelectorAll('.modebar-btn')].map(b => b.getAttribute('data-title') || '')
    .filter(t => /cloud|share|chart studio|edit/i.test(t));
  const links = [...document.querySelectorAll('a[href], area[href]')].map(a => away(a.href)).filter(Boolean);
  const posts = [...document.querySelectorAll('[formaction], [ping]')].map(e => e.outerHTML.slice(0, 80));
  return {forms, cloud, links, posts};
}"""

# plotly's figures, and the attention explorer's maps (heatmap-canvas.js), which keep their figure as plotly's do
FIGURES_JS = """() => [...document.querySelectorAll('.js-plotly-plot, .tc-heatmaps')].map(p => {
  const layout = p.layout || {};
  const title = (t) => (typeof t === 'string' ? t : (t && t.text) || '').trim();
  const axes = Object.keys(layout).filter(k => /^[xy]axis\\d*$/.test(k))
    .filter(k => layout[k].visible !== false && !(layout[k].showticklabels === false && !title(layout[k].title)));
  return {
    id: p.id, title: title(layout.title),
    untitled_axes: axes.filter(k => !title(layout[k].title)
      && !(layout.annotations || []).some(a => a.textangle !== undefined && k.startsWith('y'))),
    name: (p.closest('[aria-label]') || {getAttribute: () => ''}).getAttribute('aria-label'),
    // plotly's own menus and sliders take no keyboard focus: each needs a <select> (plotly-config.js)
    menus: (layout.updatemenus || []).length + (layout.sliders || []).length,
    keys: document.querySelectorAll(`.tc-keys[data-for="${p.id}"] label > select`).length,
  };
})"""


def open_page(browser, url: str, viewport: dict):
    context = browser.new_context(viewport=viewport)
    context.route("**/*", lambda route: route.continue_() if urlparse(route.request.url).hostname in
                  (None, "127.0.0.1") else route.abort())
    page = context.new_page()
    page.goto(url, wait_until="load")
    page.wait_for_function(WAIT_DRAWN_JS, timeout=60_000, polling=250)
    page.wait_for_timeout(300)
    return context, page


# Every plotly figure as wide as its box again: a full-page screenshot resizes the viewport (the scroll
# bar goes), and plotly redraws responsive figures only after its own debounced resize handler has run.
SETTLED_JS = """() => [...document.querySelectorAll('.js-plotly-plot')].every(p => {
  const svg = p.querySelector('.main-svg');
  return !svg || p.getBoundingClientRect().width === 0
    || Math.abs(svg.getBoundingClientRect().width - p.getBoundingClientRect().width) < 1.5;
})"""


def screenshot(page, path: Path) -> None:
    """A full-page screenshot, then the page as the reader has it: the figures laid out at the viewport's
    width again (if one never settles, the figure checks that follow report it)."""
    page.screenshot(path=str(path), full_page=True)
    page.evaluate("window.dispatchEvent(new Event('resize'))")
    try:
        page.wait_for_function(SETTLED_JS, timeout=5_000, polling=100)
    except PlaywrightTimeout:
        pass


def shot(name: str, kind: str) -> Path:
    path = SCREENSHOTS / f"{name.removesuffix('.html').replace('/', '__')}__{kind}.png"
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def test_reader_phone_keyboard_offline(site: Path, browser) -> None:
    problems: dict[str, list[str]] = {}
    external: dict[str, set[str]] = {}
    with serve(site) as base:
        for path in html_pages(site):
            name = path.relative_to(site).as_posix()
            if "Refresh" in path.read_text()[:2000]:  # index.html only forwards to the first chapter
                continue
            found = problems.setdefault(name, [])
            context, page = open_page(browser, base + name, DESKTOP)
            actions = page.evaluate(ACTIONS_JS)
            found += [f"a form that posts to another host: {url}" for url in actions["forms"]]
            found += [f"plotly toolbar button that leaves the page: {title!r}" for title in actions["cloud"]]
            found += [f"an element that sends to a URL: {html}" for html in actions["posts"]]
            for url in actions["links"]:
                host = urlparse(url).hostname or ""
                external.setdefault(host, set()).add(url)
                if host not in LINK_HOSTS:
                    found.append(f"a link to an unlisted host: {url}")
            for figure in page.evaluate(FIGURES_JS):
                if not figure["title"]:
                    found.append(f"plotly figure {figure['id']} has no title")
                if figure["untitled_axes"]:
                    found.append(f"plotly figure {figure['id']} {figure['title']!r}: "
                                 f"untitled {figure['untitled_axes']}")
                if figure["keys"] != figure["menus"]:
                    found.append(f"plotly figure {figure['id']} {figure['title']!r}: {figure['menus']} menus and "
                                 f"sliders, {figure['keys']} keyboard controls")
                if not figure["name"]:
                    found.append(f"plotly figure {figure['id']} {figure['title']!r}: no accessible name")
            if WALK_SCREENSHOTS:
                screenshot(page, shot(name, "desktop"))  # before the checks scroll and focus
            found += [f"axe, desktop: {v}" for v in axe_violations(page)]
            found += [f"desktop: {p}" for p in figure_problems(page) + keyboard_problems(page)]
            context.close()
            context, page = open_page(browser, base + name, PHONE)
            width = page.evaluate(WIDTH_JS, PHONE["width"])
            if width["width"] > PHONE["width"]:
                found.append(f"{width['width']} px wide on a {PHONE['width']} px phone: {width['wide']}")
            if WALK_SCREENSHOTS:
                screenshot(page, shot(name, "phone"))
            found += [f"axe, phone: {v}" for v in axe_violations(page)]
            found += [f"phone: {p}" for p in figure_problems(page) + keyboard_problems(page)]
            context.close()
    print("links to other hosts:", json.dumps({h: sorted(u)[:5] for h, u in external.items()}, indent=1))
    problems = {name: found for name, found in problems.items() if found}
    assert not problems, json.dumps(problems, indent=1)


# Colours without contrast on the code boxes' background (#f3f4f5): a token class everywhere (keywords), or
# one span alone, the last name in the last code cell shown (not folded) that has names.
KEYWORDS_JS = """() => {
  const style = document.createElement('style');
  style.textContent = '.highlight .k { color: #c8c8c8 !important; }';
  document.head.appendChild(style);
  return document.querySelectorAll('.highlight .k').length;
}"""
ONE_SPAN_JS = """() => {
  const names = [...document.querySelectorAll('.cell:not([class*="tag_hide"]) .cell_input .highlight')]
    .map(b => b.querySelectorAll('span.n')).filter(n => n.length).pop();
  names[names.length - 1].style.color = '#d0d0d0';
  return names.length;
}"""


def test_axe_finds_a_code_colour_without_contrast(site: Path, browser) -> None:
    """axe sees one span of each style in each code box (tests/reader_checks.py, ``AXE_JS``): a keyword
    colour without contrast is found, and so is a single span's in the page's last shown code cell with
    names. (Without the plants the page has no violation: ``test_reader_phone_keyboard_offline``.)"""
    found = {}
    with serve(site) as base:
        for plant in (KEYWORDS_JS, ONE_SPAN_JS):
            context, page = open_page(browser, base + "book/02_embeddings.html", DESKTOP)
            found[plant] = (page.evaluate(plant), axe_violations(page))
            context.close()
    (keywords, [keyword]), (names, [name]) = found[KEYWORDS_JS], found[ONE_SPAN_JS]
    assert keywords > 50 and keyword.startswith("color-contrast (serious)"), keyword
    assert re.search(r"\.k(:nth-child\(\d+\))?$", keyword), keyword  # a keyword is named
    assert names > 1 and name.startswith("color-contrast (serious): 1x"), name
    assert re.search(r"\.n(:nth-child\(\d+\))?$", name), name  # the name


TABLE3_JS = """() => {
  const section = document.querySelector('section[id*="table-3"]');
  const tables = [...section.querySelectorAll('table.tc-table3')];
  const column = section.getBoundingClientRect().width;
  const wide = [...section.querySelectorAll('div.output pre, .cell_output pre')]
    .filter((pre) => pre.scrollWidth > pre.clientWidth + 1).map((pre) => pre.textContent.slice(0, 60));
  const figure = [...section.querySelectorAll('.js-plotly-plot')].find((p) => (p.layout.title.text || '')
    .startsWith("Table 3"));
  return {tables: tables.length, tableWidth: tables.length ? tables[0].scrollWidth : 0, column, wide,
          plotWidth: figure ? figure._fullLayout.xaxis._length : 0, figureWidth: figure ? figure.clientWidth : 0};
}"""


def test_table3_reads_as_a_table_on_a_phone(site: Path, browser) -> None:
    """Issue 53: at 390 px chapter 6's Table 3 section holds an HTML table no wider than its column, no
    output in it scrolls sideways (it was a 196-character pre), and its figure gives the data most of
    its width (the variants' names once took all but ~60 px)."""
    with serve(site) as base:
        context, page = open_page(browser, base + "book/06_encoder_decoder.html", PHONE)
        found = page.evaluate(TABLE3_JS)
        context.close()
    assert found["tables"] == 1 and found["tableWidth"] <= found["column"] + 1, found
    assert not found["wide"], found["wide"]
    assert found["plotWidth"] >= 0.6 * found["figureWidth"] > 0, found


MENU_STATE_JS = """(id) => {
  const gd = document.getElementById(id);
  return {active: gd.layout.updatemenus[0].active || 0,
          select: document.querySelector(`.tc-keys[data-for="${id}"] select`).value,
          trace: JSON.stringify(gd.data.map(t => t.visible))};
}"""


def test_a_plotly_menu_and_its_select_move_together(site: Path, browser) -> None:
    """The keyboard's <select> drives plotly's own menu, and plotly's menu, used with the mouse,
    moves the <select> along: both always show the same choice (chapter 4's first menu figure)."""
    with serve(site) as base:
        context, page = open_page(browser, base + "book/04_attention.html", DESKTOP)
        figure = page.evaluate("""() => [...document.querySelectorAll('.js-plotly-plot')]
          .find(p => (p.layout.updatemenus || []).length && (p.layout.updatemenus[0].buttons || []).length > 2).id""")
        before = page.evaluate(MENU_STATE_JS, figure)
        start = before["active"]
        assert before["select"] == str(start)
        count = page.evaluate("(id) => document.getElementById(id).layout.updatemenus[0].buttons.length", figure)
        keyed, key = (start + 1, "ArrowDown") if start + 1 < count else (start - 1, "ArrowUp")
        select = page.locator(f'.tc-keys[data-for="{figure}"] select').first
        select.focus()
        page.keyboard.press(key)  # the keyboard's way: the next (or previous) choice
        page.wait_for_function(f"() => ({MENU_STATE_JS})({json.dumps(figure)}).active === {keyed}", timeout=10_000)
        by_keyboard = page.evaluate(MENU_STATE_JS, figure)
        assert by_keyboard["select"] == str(keyed) and by_keyboard["trace"] != before["trace"]
        clicked = next(i for i in range(count) if i not in (start, keyed))
        page.locator(f"#{figure} .updatemenu-header-group").first.click()  # plotly's own menu, with the mouse
        page.locator(f"#{figure} .updatemenu-dropdown-button").nth(clicked).click()
        page.wait_for_function(f"() => ({MENU_STATE_JS})({json.dumps(figure)}).select === '{clicked}'",
                               timeout=10_000)
        by_mouse = page.evaluate(MENU_STATE_JS, figure)
        assert by_mouse["active"] == clicked and by_mouse["trace"] not in (before["trace"], by_keyboard["trace"])
        context.close()


def test_repository_url_has_one_source() -> None:
    """_config.yml's repository.url is the one place that names the repository: every other mention
    of a github.com/<owner>/<name> URL of it in the book (the intro's clone command) is the same."""
    import yaml

    url = yaml.safe_load((ROOT / "_config.yml").read_text())["repository"]["url"].rstrip("/")
    owner = urlparse(url).path.strip("/").split("/")[0]
    pattern = re.compile(rf"https://github\.com/{re.escape(owner)}/[A-Za-z0-9._-]+")
    files = [*(ROOT / "book").glob("*.md"), *(ROOT / "book").glob("*.ipynb"), ROOT / "README.md",
             ROOT / "transformer_lib" / "source.py"]
    found = {(path.name, m.group(0).removesuffix(".git")) for path in files for m in pattern.finditer(path.read_text())}
    assert ("intro.md", url) in found, "the intro's clone command names the repository"
    assert {u for _, u in found} == {url}, f"a repository URL other than _config.yml's {url}: {sorted(found)}"
    # the excerpts' links (transformer_lib.source, which a reader's installed wheel cannot read _config.yml for)
    from transformer_lib import source

    assert ("source.py", url) in found and source.REPOSITORY == url
    assert source.REVISION == yaml.safe_load((ROOT / "_config.yml").read_text())["repository"]["branch"]


def test_every_plotly_config_removes_the_same_toolbar_buttons() -> None:
    """The toolbar is set in two places (figures in notebooks, figures stored earlier); both remove
    plotly's upload buttons and the same others. (The live explorers read PLOTLY_CONFIG from the
    page's theme: tests/test_live_js.py.)"""
    from transformer_lib.figures.display import MODEBAR_REMOVED, PLOTLY_CONFIG

    assert PLOTLY_CONFIG["showSendToCloud"] is False and "sendChartToCloud" in MODEBAR_REMOVED
    for script in ("book/_static/plotly-config.js",):
        text = (ROOT / script).read_text()
        listed = re.search(r"modeBarButtonsToRemove:\s*\[([^\]]*)\]", text)
        assert listed and re.findall(r'"([A-Za-z0-9]+)"', listed.group(1)) == MODEBAR_REMOVED, script
        assert "showSendToCloud: false" in text, script


def test_the_whole_book_prints_to_one_pdf(site: Path, tmp_path: Path, browser) -> None:
    """tools/build_pdf.py prints every page of _toc.yml into one PDF (every figure drawn first, or it
    fails): the PDF's bookmarks name every chapter, and internal links land inside it."""
    import sys

    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import build_pdf
    finally:
        sys.path.remove(str(ROOT / "tools"))
    pdf = build_pdf.build_pdf(site, tmp_path / "book.pdf", browser=browser)
    data = pdf.read_bytes()
    assert data.startswith(b"%PDF-")
    pages = len(re.findall(rb"/Type\s*/Page\b(?!s)", data))
    titles = {_pdf_text(m) for m in re.findall(rb"/Title\s*(\((?:\\.|[^\\)])*\)|<[0-9A-Fa-f]+>)", data)}
    chapters = []
    for page in build_pdf.toc_pages():
        html = (site / f"{page}.html").read_text(encoding="utf-8")
        chapters.append(re.search(r"<h1>([^<]*)<a class=\"headerlink\"", html).group(1).strip())
    # Chromium writes a bookmark from the heading's lines as drawn (a wrapped title: its lines, without spaces)
    squeezed = ["".join(t.split()) for t in titles]
    missing = [c for c in chapters if not any("".join(c.replace("&amp;", "&").split()) in t for t in squeezed)]
    assert not missing, f"chapters without a bookmark in the PDF: {missing}; bookmarks: {sorted(titles)[:40]}"
    assert pages > 10 * len(chapters) // 2, f"{pages} pages for {len(chapters)} chapters"
    assert b"/URI (https://arxiv.org" in data or b"/URI(https://arxiv.org" in data  # links kept
    assert not (site / build_pdf.PRINT_PAGE).exists()  # the print page does not stay in the site
    _check_the_printed_pages(pdf, site, build_pdf)


PRINT_DPI = 36  # enough to see a colour bar cut at the page's edge; 225 pages in seconds
DEAD_CONTROLS = ("\u25c0 previous step", "next step \u25b6", "Next seed", "Beam size", "Training step",
                 # the whole-model explorer (issue 53): its buttons, its cue to click and its empty panel's prompt
                 "\u25c0 previous block", "next block \u25b6", "(or Tab to it, then Enter)",
                 "Choose a box of the figure")


def _check_the_printed_pages(pdf: Path, site: Path, build_pdf) -> None:
    """Each PDF page rendered to an image (poppler's pdftoppm, tools/setup-browser.sh installs it): the ink
    of every page lies inside the text width the print's margins leave (an explorer's colour bar cut at the
    paper's edge went past it). Each explorer prints as its figure with the line saying where to use it
    live, and none of its controls (they do nothing on paper). Three explorer pages go to screenshots/."""
    import shutil
    import subprocess

    import numpy as np

    from transformer_lib.browser.theme import MESSAGES

    for tool in ("pdftoppm", "pdftotext"):
        assert shutil.which(tool), f"{tool}: not found (apt-get install -y poppler-utils; tools/setup-browser.sh)"
    folder = pdf.parent / "pages"
    folder.mkdir()
    subprocess.run(["pdftoppm", "-r", str(PRINT_DPI), "-gray", str(pdf), str(folder / "p")], check=True)
    px_per_mm = PRINT_DPI / 25.4
    outside = []
    images = sorted(folder.glob("p-*.pgm"), key=lambda path: int(path.stem.split("-")[1]))
    for path in images:
        ink = _pgm(path) < 200  # (rows, columns): darker than light grey
        width_px = ink.shape[1]
        assert abs(width_px - build_pdf.PAGE_MM[0] * px_per_mm) <= 1.5  # an A4 page
        columns = np.flatnonzero(ink.any(axis=0))
        if not columns.size:
            continue
        left, right = columns[0], width_px - 1 - columns[-1]  # px of paper left blank at each side
        margins = [build_pdf.MARGINS_MM[side] * px_per_mm - 1.5 for side in ("left", "right")]  # 1.5 px: rounding
        if left < margins[0] or right < margins[1]:
            outside.append(f"page {path.stem.split('-')[1]}: blank {left / px_per_mm:.1f} mm left, "
                           f"{right / px_per_mm:.1f} mm right")
    assert len(images) > 10 and not outside, outside[:20]
    text = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], check=True, capture_output=True,
                          text=True).stdout.split("\f")
    explorers = sum((site / f"{page}.html").read_text(encoding="utf-8").count('<div class="tc-live" data-explorer=')
                    for page in build_pdf.toc_pages())
    first_words = " ".join(MESSAGES["print"].split()[:6])  # pdftotext breaks the line where the PDF does
    notes = {n: " ".join(page.split()).count(first_words) for n, page in enumerate(text, start=1)}
    noted = [n for n, count in notes.items() if count]
    assert explorers >= 3 and sum(notes.values()) == explorers, (explorers, noted)
    dead = [(n, label) for n, page in enumerate(text, start=1) for label in DEAD_CONTROLS if label in page]
    assert not dead, f"controls printed on paper: {dead}"
    SCREENSHOTS.mkdir(exist_ok=True)
    for n in noted[:3]:
        subprocess.run(["pdftoppm", "-r", "60", "-png", "-singlefile", "-f", str(n), "-l", str(n), str(pdf),
                        str(SCREENSHOTS / f"pdf-explorer-page-{n}")], check=True)


def _pgm(path: Path):
    """A binary PGM (pdftoppm -gray) as a (rows, columns) uint8 array."""
    import numpy as np

    data = path.read_bytes()
    fields, at = [], 0
    while len(fields) < 4:  # P5, width, height, maximum
        while data[at:at + 1].isspace():
            at += 1
        start = at
        while not data[at:at + 1].isspace():
            at += 1
        fields.append(data[start:at])
    width, height = int(fields[1]), int(fields[2])
    return np.frombuffer(data, dtype=np.uint8, count=width * height, offset=at + 1).reshape(height, width)


def _pdf_text(token: bytes) -> str:
    """A PDF string, (literal) or <hex> (UTF-16 with its byte order mark, as Chromium writes)."""
    if token.startswith(b"<"):
        raw = bytes.fromhex(token[1:-1].decode())
        return raw[2:].decode("utf-16-be") if raw.startswith(b"\xfe\xff") else raw.decode("latin-1")
    text = re.sub(rb"\\([()\\])", rb"\1", token[1:-1])
    return text.decode("latin-1")
