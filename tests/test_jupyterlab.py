"""The chapters as a Binder reader meets them: JupyterLab, every cell run, in a real browser.

As on Binder, the package runs from its wheel: ``pip wheel --no-deps .`` is installed into an
environment that holds only binder/requirements.txt's libraries (tests/reader_env.py: created once,
then reused), and JupyterLab and its kernels run from there, over a copy of the repository whose
transformer_lib/ is present but not importable (no PYTHONPATH; the kernel starts in book/). The
package's own files (bertviz's d3 and jQuery, the shipped models) must therefore come from the wheel.

JupyterLab is started on 127.0.0.1 (a free port, a token, a temporary root holding that copy, no
news, no update check, the read-only extension manager). Each chapter is
opened in Debian's chromium through playwright and run with JupyterLab's own "Run All Cells"
command; when the kernel is idle again, the page must show:

* no error output (the notebook model holds no ``error`` output, no stderr carries a traceback);
* the outputs equal the stored ones, by nbval's rules (tests/stored_outputs.py): this run is the
  chapters' check as another machine runs them, on one thread with torch's CPU dispatch lowered
  (``ATEN_CPU_CAPABILITY=default``), so tools/test.sh does not execute them a further time for it
  (the main run checks them with the machine's own dispatch);
* every plotly figure drawn (``.js-plotly-plot`` with its ``.main-svg``);
* every ipywidgets view rendered, and no "Error displaying widget";
* every bertviz view drawn (its SVG), and chapter 7 draws its two (head and model view);
* MyST rendered by jupyterlab-myst: exercise solutions folded, no literal ``{cite}`` or ``{ref}``,
  nothing marked "not found" (jupyterlab-myst reads no references.bib: the chapters cite with
  Markdown links written from it by tools/citations.py), and every citation link of the source
  shown as a link;
* no request for anything outside 127.0.0.1 (recorded, aborted and reported);
* no uncaught exception and no console error (jupyterlab-myst logged one for each ``{ref}`` to
  another chapter, which it cannot resolve: the chapters link to each other with plain Markdown
  links to the notebook, which JupyterLab opens and the book turns into links to the page).

In chapter 4 the attention explorer is then used: a typed sentence updates the translation and the
heatmap; an empty box and an unknown word show their messages. Screenshots of chapters 1, 4 and 7
after Run All go to screenshots/ (look at them). Times per chapter are printed (``-s`` shows them).
The trained models come from ``TRANSFORMER_BOOK_CACHE`` (or the package): nothing but chapter 7's
live training trains.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlparse

import pytest

from tools.book_browser import ROOT

from . import reader_env, stored_outputs

SCREENSHOTS = ROOT / "screenshots"
# Every chapter; JUPYTERLAB_TEST_CHAPTERS="04_attention.ipynb ..." runs only those (while debugging).
CHAPTERS = os.environ.get("JUPYTERLAB_TEST_CHAPTERS", "").split() or sorted(
    p.name for p in (ROOT / "book").glob("[0-9][0-9]_*.ipynb"))
RUN_TIMEOUT_MS = 600_000  # chapter 7 trains for about a minute on one thread; a busy machine is slower
SHOT = {"01_rnn_limits.ipynb", "04_attention.ipynb", "07_training_inference.ipynb"}

# JupyterLab settings for the test: every cell stays in the page (no windowing), so every output is
# drawn and can be counted; no announcements.
SETTINGS = {
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": '{"windowingMode": "none"}',
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings":
        '{"fetchNews": "false", "checkForUpdates": false}',
}


def started_server(command: list[str], root: Path, env: dict[str, str], runtime: Path, log: Path, token: str,
                   tries: int = 3) -> tuple[subprocess.Popen, str]:
    """JupyterLab started with ``--port=0``: the system gives it a port, which it writes into its server
    file in ``runtime`` (we never choose one and release it). jupyter-server itself binds that port, closes
    it and binds it again when its loop starts; in that instant another program can take it, and then the
    server exits saying the port is in use: start it again, ``tries`` times at most. Returns the server
    and its URL, once it answers."""
    for _ in range(tries):
        for stale in runtime.glob("jpserver-*.json"):
            stale.unlink()
        with log.open("w") as out:
            server = subprocess.Popen([*command, "--port=0", "--port-retries=0"], cwd=root, env=env, stdout=out,
                                      stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 120
        while server.poll() is None and time.monotonic() < deadline:
            for info in runtime.glob("jpserver-*.json"):  # this server's alone: the folder is its own
                try:
                    url = f"http://127.0.0.1:{json.loads(info.read_text())['port']}"
                    urllib.request.urlopen(f"{url}/api/status?token={token}", timeout=2)
                    return server, url
                except (ValueError, KeyError, OSError):  # the file half written, or not listening yet
                    pass
            time.sleep(0.5)
        if server.poll() is None:
            server.kill()
            pytest.fail(f"JupyterLab did not answer in 120 s:\n{log.read_text()[-3000:]}")
        if "already in use" not in log.read_text():
            break
    pytest.fail(f"JupyterLab did not start:\n{log.read_text()[-3000:]}")


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory, reader_venv: Path) -> Iterator[str]:
    """A JupyterLab server, from the reader's environment with the wheel installed, over a copy of
    the repository; yields its base URL (token in the query)."""
    base = tmp_path_factory.mktemp("lab")
    root = base / "root"
    shutil.copytree(ROOT / "book", root / "book", ignore=shutil.ignore_patterns("_build", ".ipynb_checkpoints"))
    for name in ("transformer_lib", "binder", "pyproject.toml"):  # present, as on Binder, but not importable
        (shutil.copytree if (ROOT / name).is_dir() else shutil.copy2)(ROOT / name, root / name)
    venv = reader_venv
    wheel = reader_env.build_wheel(base / "wheel")
    reader_env.install(venv, wheel, "--no-deps", "--force-reinstall")
    location = reader_env.installed_location(venv, cwd=root / "book")
    assert venv in location.parents, f"the kernel would import transformer_lib from {location}, not from the wheel"
    settings = base / "settings"
    for name, text in SETTINGS.items():
        (settings / name).parent.mkdir(parents=True, exist_ok=True)
        (settings / name).write_text(text)
    token = secrets.token_hex(16)
    # The runtime folder holds the kernels' socket files: a short path (a Unix socket's is limited to 107 bytes)
    runtime = Path(tempfile.mkdtemp(prefix="lab-"))
    env = {
        **reader_env.clean_env(),
        "PATH": os.pathsep.join([str(venv / "bin"), os.environ.get("PATH", "")]),
        "OMP_NUM_THREADS": "1",  # one thread, as on Binder's single CPU
        # The lowest CPU dispatch, as on a reader's older CPU: outputs that hang on the vector
        # instructions (the stored ones were computed with AVX-512) fail here, not on the reader's machine.
        "ATEN_CPU_CAPABILITY": "default",
        "JUPYTER_CONFIG_DIR": str(base / "config"), "JUPYTER_RUNTIME_DIR": str(runtime),
        "JUPYTERLAB_SETTINGS_DIR": str(settings), "JUPYTERLAB_WORKSPACES_DIR": str(base / "workspaces"),
        "IPYTHONDIR": str(base / "ipython"),
    }
    command = [
        str(reader_env.python(venv)), "-m", "jupyter", "lab", "--ip=127.0.0.1",
        f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}", "--ServerApp.open_browser=False",
        "--LabApp.news_url=None", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        "--LabApp.extension_manager=readonly", "--LabApp.expose_app_in_browser=True",
        "--allow-root",  # CI runs as root
        # Kernels meet the server over socket files in the runtime folder, not TCP ports picked free and
        # released before the kernel binds them (tools/ipc_kernels.py says why)
        "--KernelManager.transport=ipc",
    ]
    server, url = started_server(command, root, env, runtime, base / "server.log", token)
    try:
        yield f"{url}|{token}"
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
        shutil.rmtree(runtime, ignore_errors=True)


# The notebook in the main area, through the app JupyterLab exposes (expose_app_in_browser).
NOTEBOOK_JS = "window.jupyterapp.shell.currentWidget"
KERNEL_READY_JS = f"""(path) => {{
  const nb = window.jupyterapp && {NOTEBOOK_JS};
  if (!nb || !nb.context || nb.context.path !== path) return false;
  const kernel = nb && nb.sessionContext && nb.sessionContext.session && nb.sessionContext.session.kernel;
  return Boolean(kernel && kernel.status === 'idle' && nb.content && nb.content.widgets.length);
}}"""
DONE_JS = f"""() => {{
  const nb = {NOTEBOOK_JS};
  const kernel = nb.sessionContext.session.kernel;
  const cells = nb.content.widgets.filter(c => c.model.type === 'code');
  // Run All stops at an error: then the cells after it never run, and the error is reported.
  const failed = cells.some(c => (c.model.sharedModel.toJSON().outputs || []).some(o => o.output_type === 'error'));
  return kernel.status === 'idle' && (failed || cells.every(c => c.model.executionCount !== null))
    && ![...document.querySelectorAll('.jp-InputArea-prompt')].some(p => p.textContent.includes('*'));
}}"""
# Every code cell as nbformat JSON, with what this run computed: compared with the stored outputs.
CELLS_JS = f"""() => {NOTEBOOK_JS}.content.widgets.filter(c => c.model.type === 'code')
  .map(c => c.model.sharedModel.toJSON())"""
STATE_JS = f"""() => {{
  const nb = {NOTEBOOK_JS};
  const outputs = nb.content.widgets.filter(c => c.model.type === 'code')
    .flatMap(c => c.model.sharedModel.toJSON().outputs || []);
  const errors = outputs.filter(o => o.output_type === 'error').map(o => o.ename + ': ' + o.evalue);
  const tracebacks = [...document.querySelectorAll(
      '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"], '
      + '.jp-RenderedText[data-mime-type*="error"]')]
    .map(e => e.textContent).filter(t => /Traceback|Error:/.test(t)).map(t => t.slice(0, 300));
  const plots = [...document.querySelectorAll('.js-plotly-plot')];
  const plotOutputs = outputs.filter(o => o.data && o.data['application/vnd.plotly.v1+json']).length;
  const viewOutputs = outputs.filter(o => o.data && o.data['application/vnd.jupyter.widget-view+json']).length;
  const areas = [...document.querySelectorAll('.jp-OutputArea-output')];
  const bertviz = [...document.querySelectorAll('div[id^="bertviz-"]')];
  // Rendered markdown (jupyterlab-myst's .myst, or JupyterLab's own), not the hidden editors' source.
  const markdown = [...document.querySelectorAll('.jp-MarkdownCell .myst, .jp-MarkdownCell .jp-RenderedMarkdown')];
  const text = markdown.map(m => m.textContent).join(' ');
  return {{
    cells: nb.content.widgets.length,
    errors: errors.concat(tracebacks),
    plot_outputs: plotOutputs,
    plots: plots.length,
    plots_drawn: plots.filter(p => p.querySelector('.main-svg')).length,
    views: viewOutputs,
    views_rendered: areas.filter(a => a.querySelector(':scope > .jupyter-widgets')).length,
    widget_errors: areas.filter(a => a.textContent.includes('Error displaying widget')).length,
    bertviz: bertviz.length,
    bertviz_drawn: bertviz.filter(d => d.querySelector('svg')).length,
    raw_roles: (text.match(/\\{{(cite|ref|doc|numref|eval)\\}}`/g) || []).length,
    // jupyterlab-myst resolves neither {{cite}} (it reads no references.bib) nor {{ref}} to another
    // chapter: it shows their keys marked "Citation Not Found", "Cross Reference Not Found"
    unresolved: markdown.flatMap(m => [...m.querySelectorAll('[title$="Not Found"]')]).length,
    // a citation (tools/citations.py): JupyterLab shows bibliography.md#key as .../bibliography.md?_xsrf=...#key
    citation_links: markdown.flatMap(m => [...m.querySelectorAll('a')])
      .filter(a => /bibliography\\.md[^#]*#./.test(a.getAttribute('href') || '')).length,
    dropdowns: markdown.flatMap(m => [...m.querySelectorAll('details')]).length,
    dropdowns_open: markdown.flatMap(m => [...m.querySelectorAll('details[open]')]).length,
    dropdown_sources: (text.match(/:::\\s*\\{{admonition\\}}|```\\{{admonition\\}}/g) || []).length,
  }};
}}"""


def shut_down_kernels(url: str, token: str) -> None:
    """End every kernel of the server (one chapter's kernel must not slow down the next)."""
    request = urllib.request.Request(f"{url}/api/kernels?token={token}")
    for kernel in json.loads(urllib.request.urlopen(request, timeout=30).read()):
        urllib.request.urlopen(urllib.request.Request(f"{url}/api/kernels/{kernel['id']}?token={token}",
                                                      method="DELETE"), timeout=60)


def open_and_run(page, url: str, token: str, chapter: str) -> float:
    """Open ``chapter`` in JupyterLab, run all its cells, wait until the kernel is idle; return seconds.
    A page that already holds JupyterLab closes what it has open (the last chapter, unsaved; its kernel
    is shut down) and opens the chapter with JupyterLab's own command, as a reader opens the next one:
    loading the application again took 4 to 6 s a chapter."""
    if page.url.startswith(f"{url}/lab"):
        page.evaluate("""async (path) => { const app = window.jupyterapp;
          for (const widget of [...app.shell.widgets('main')]) {  // closed unsaved: the run changed it
            if (widget.context) widget.context.model.dirty = false;
            widget.dispose();
          }
          await app.commands.execute('docmanager:open', {path}); }""", f"book/{chapter}")
    else:
        # ?reset: a fresh workspace, so that only this chapter opens (JupyterLab restores the tabs of the last one)
        page.goto(f"{url}/lab/tree/book/{chapter}?reset&token={token}", wait_until="load")
    page.wait_for_function(KERNEL_READY_JS, arg=f"book/{chapter}", timeout=120_000, polling=250)
    started = time.monotonic()
    page.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells')")
    page.wait_for_function(DONE_JS, timeout=RUN_TIMEOUT_MS, polling=500)
    seconds = time.monotonic() - started
    page.wait_for_timeout(1500)  # figures draw after their output arrives
    return seconds


def problems_in(state: dict, source_dropdowns: int, source_citations: int) -> list[str]:
    problems = [f"error output: {e}" for e in state["errors"]]
    if state["unresolved"]:
        problems.append(f"{state['unresolved']} citations or references shown 'not found' by jupyterlab-myst")
    if state["citation_links"] != source_citations:
        problems.append(f"citations: {source_citations} links to bibliography.md in the source, "
                        f"{state['citation_links']} shown as links")
    if state["plots_drawn"] != state["plots"] or state["plots"] < state["plot_outputs"]:
        problems.append(f"plotly: {state['plot_outputs']} figure outputs, {state['plots']} plots, "
                        f"{state['plots_drawn']} drawn")
    if state["views_rendered"] < state["views"] or state["widget_errors"]:
        problems.append(f"ipywidgets: {state['views']} views, {state['views_rendered']} rendered, "
                        f"{state['widget_errors']} 'Error displaying widget'")
    if state["bertviz_drawn"] != state["bertviz"]:
        problems.append(f"bertviz: {state['bertviz']} views, {state['bertviz_drawn']} drawn")
    if state["raw_roles"] or state["dropdown_sources"]:
        problems.append(f"MyST shown raw: {state['raw_roles']} roles, {state['dropdown_sources']} admonitions")
    if state["dropdowns"] < source_dropdowns or state["dropdowns_open"]:
        problems.append(f"solutions: {source_dropdowns} dropdowns in the source, {state['dropdowns']} rendered, "
                        f"{state['dropdowns_open']} open")
    return problems


def explorer_problems(page) -> list[str]:
    """Use chapter 4's attention explorer (its last widget): type, translate, empty and unknown input."""
    problems = []
    explorer = page.locator(".jp-OutputArea-output .widget-vbox").filter(has=page.locator(".widget-text")).last
    box = explorer.locator(".widget-text input")
    button = explorer.get_by_role("button", name="Translate")
    heatmap = explorer.locator(".js-plotly-plot")

    def snapshot() -> tuple[str, str]:
        return explorer.locator(".widget-html").first.inner_text(), heatmap.first.inner_html()

    def wait_for_message(text: str) -> bool:
        try:
            explorer.get_by_text(text).first.wait_for(timeout=60_000)
            return True
        except Exception:  # noqa: BLE001 -- reported as a problem below
            return False

    before = snapshot()
    box.fill("The small cat sees the dogs!")  # capitals and punctuation: read as the corpus writes it, with a note
    button.click()
    if not wait_for_message("petit chat"):
        problems.append(f"explorer: no translation of a typed sentence (shows {snapshot()[0]!r})")
    elif not wait_for_message("Read as “the small cat sees the dogs”"):
        problems.append("explorer: no note saying how the typed sentence was normalised")
    elif snapshot()[1] == before[1]:
        problems.append("explorer: the heatmap did not change with the sentence")
    elif not heatmap.first.locator(".main-svg").count():
        problems.append("explorer: no heatmap drawn")
    box.fill("")
    button.click()
    if not wait_for_message("Type a sentence above"):
        problems.append("explorer: an empty box shows no message")
    box.fill("the zebra sleeps")
    button.click()
    if not wait_for_message("Not in the vocabulary"):
        problems.append("explorer: an unknown word shows no message")
    return problems


def test_chapters_run_in_jupyterlab(lab: str, browser) -> None:
    url, token = lab.split("|")
    outside: list[str] = []
    context = browser.new_context(viewport={"width": 1400, "height": 1000})

    def route(route) -> None:
        parsed = urlparse(route.request.url)
        if parsed.scheme in ("data", "blob") or parsed.hostname == "127.0.0.1":
            route.continue_()
        else:
            outside.append(route.request.url)
            route.abort()

    context.route("**/*", route)
    report, failures = [], {}
    page = context.new_page()  # one JupyterLab for every chapter (open_and_run)
    uncaught: list[str] = []
    console: list[str] = []
    page.on("pageerror", lambda err: uncaught.append(str(err)))
    page.on("console", lambda msg: console.append(msg.text) if msg.type == "error" else None)
    for chapter in CHAPTERS:
        uncaught.clear()
        console.clear()
        source = (ROOT / "book" / chapter).read_text()
        source_dropdowns = len(re.findall(r":class: dropdown", source))
        source_citations = len(re.findall(r"\]\(bibliography\.md#", source))
        seconds = open_and_run(page, url, token, chapter)
        state = page.evaluate(STATE_JS)
        problems = problems_in(state, source_dropdowns, source_citations)
        problems += stored_outputs.differences(ROOT / "book" / chapter, page.evaluate(CELLS_JS))
        problems += [f"uncaught exception: {e}" for e in uncaught]
        problems += [f"console error: {m[:300]}" for m in console]
        if chapter == "04_attention.ipynb":
            problems += explorer_problems(page)
        if chapter == "07_training_inference.ipynb" and state["bertviz_drawn"] < 2:
            problems.append(f"bertviz: the head and the model view should draw, {state['bertviz_drawn']} did")
        if chapter in SHOT:
            if chapter.startswith("07"):  # the attention explorer, with its translation and heatmap
                page.locator(".widget-vbox").filter(has=page.locator(".widget-text")).last.scroll_into_view_if_needed()
            SCREENSHOTS.mkdir(exist_ok=True)
            page.screenshot(path=str(SCREENSHOTS / f"jupyterlab_{chapter.removesuffix('.ipynb')}.png"))
        report.append(f"{chapter:32s} {seconds:6.1f} s  {state['plots']} plots, {state['views']} widget views, "
                      f"{state['bertviz']} bertviz, {state['dropdowns']} solutions folded, "
                      f"{state['citation_links']} citation links, {state['unresolved']} 'not found'")
        if problems:
            failures[chapter] = problems
        shut_down_kernels(url, token)
    page.close()
    context.close()
    print("\n" + "\n".join(report))
    if outside:
        failures["requests to another host"] = sorted(set(outside))
    assert not failures, "\n".join(f"{name}:\n  " + "\n  ".join(p) for name, p in failures.items())


def test_chapters_link_to_each_other_with_links_jupyterlab_can_open() -> None:
    """No ``{ref}`` or ``{doc}`` role in a chapter (jupyterlab-myst shows them "not found" and logs an
    error), and every relative Markdown link names a file of book/ (JupyterLab opens it; the book's
    build turns it into a link to the page)."""
    import nbformat

    for chapter in CHAPTERS:
        cells = nbformat.read(ROOT / "book" / chapter, as_version=4).cells
        text = "\n".join(c.source for c in cells if c.cell_type == "markdown")
        assert not re.findall(r"\{(?:ref|doc|numref)\}`", text), f"{chapter}: a role JupyterLab cannot resolve"
        for target in re.findall(r"\]\(([^)#:]+\.(?:ipynb|md))(?:#[^)]*)?\)", text):
            assert (ROOT / "book" / target).is_file(), f"{chapter}: a link to {target}, which book/ lacks"


def test_a_citation_opens_the_bibliography_with_its_entries(lab: str, browser) -> None:
    """A reader who follows a citation in JupyterLab lands on bibliography.md, rendered by jupyterlab-myst:
    it must show every work of references.bib, by the author-year text the chapters cite it with, each
    entry carrying its key as its anchor (its Markdown is written by tools/citations.py: a ``{bibliography}``
    directive, which jupyterlab-myst does not render, showed an empty page)."""
    from tools import citations

    url, token = lab.split("|")
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(f"{url}/lab/tree/book/01_rnn_limits.ipynb?reset&token={token}", wait_until="load")
    link = page.locator('a[href*="bibliography.md"][href*="#"]').first  # JupyterLab adds ?_xsrf=... before the #
    link.wait_for(timeout=120_000)
    key = link.get_attribute("href").rsplit("#", 1)[1]
    link.scroll_into_view_if_needed()
    link.click()
    entry = page.locator(f'.jp-MarkdownViewer [id="{key}"]')
    entry.wait_for(timeout=60_000)
    shown = page.locator(".jp-MarkdownViewer").inner_text()
    works = citations.works()
    missing = [w.key for w in works.values() if f"{w.authors}, {w.year}." not in shown]
    assert not missing, f"bibliography.md in JupyterLab does not show {missing}"
    assert entry.inner_text().startswith(f"{works[key].authors}, {works[key].year}.")
    assert "{bibliography}" not in shown
    page.close()
