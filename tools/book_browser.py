"""Helpers shared by the browser tests (tests/) and the page benchmarks (benchmarks/): build the book, serve it
on 127.0.0.1 (``serve``: tools/loopback.py's server, which tools/build_pdf.py prints from), and start
Debian's chromium through playwright (which cannot download a browser here)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # tools/ is a folder of scripts, not an installed package
    sys.path.insert(0, str(ROOT))
from tools.loopback import serve as serve  # noqa: E402 -- the one loopback server, tools/build_pdf.py's too

LAUNCH_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]


def chromium_path() -> str:
    """Debian's chromium (or $CHROMIUM); a clear error when there is none."""
    path = os.environ.get("CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None or not os.access(path, os.X_OK):
        raise RuntimeError(
            "chromium: not found. The browser test drives Debian's chromium through playwright; install it "
            "with `apt-get install -y chromium` (tools/setup-browser.sh does this when run as root), or set "
            "$CHROMIUM to a Chromium binary."
        )
    return path


@contextmanager
def launched_browser() -> Iterator:
    """Debian's chromium through playwright, headless, with the flags this closed network needs."""
    from playwright.sync_api import sync_playwright

    executable = chromium_path()
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=LAUNCH_ARGS, headless=True)
        try:
            yield browser
        finally:
            browser.close()


def build_book(output: Path) -> Path:
    """Build the book with warnings as errors into ``output``; return the HTML folder."""
    jupyter_book = Path(sys.executable).with_name("jupyter-book")
    command = [str(jupyter_book), "build", "-W", "-n", "--keep-going", "--path-output", str(output), str(ROOT)]
    result = subprocess.run(command, capture_output=True, text=True, cwd=ROOT)
    if result.returncode != 0:
        raise RuntimeError(f"jupyter-book build failed ({result.returncode}):\n{result.stdout[-4000:]}\n"
                           f"{result.stderr[-4000:]}")
    return output / "_build" / "html"


def html_pages(site: Path) -> list[Path]:
    """Every page of the book (not the copies of sources and static files)."""
    return sorted(p for p in site.rglob("*.html") if not {"_static", "_sources"} & set(p.relative_to(site).parts))


def minimal_page(folder: Path, title: str, body: str, scripts: tuple[str, ...]) -> Path:
    """``folder/index.html``: ``body`` with the book's plotly, the page scripts ``scripts`` (names in
    ``_static/live``, which the page files are written into) and the explorers' stylesheet, linked as the
    book's build links them; returns ``folder``. The caller writes the model files the body needs."""
    from transformer_lib.browser.page import write_page_files

    static = folder / "_static"
    write_page_files(static / "live")
    plotly = static / "vendor" / "plotly"
    plotly.mkdir(parents=True, exist_ok=True)
    shutil.copy(ROOT / "book" / "_static" / "vendor" / "plotly" / "plotly-book.min.js", plotly)
    tags = "".join(f'<script src="_static/{s}"></script>' for s in (
        "vendor/plotly/plotly-book.min.js", *(f"live/{name}" for name in scripts)))
    (folder / "index.html").write_text(
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{title}</title>'
        '<link rel="icon" href="data:,">'
        f'<link rel="stylesheet" href="_static/live/explorers.css">{tags}</head><body style="max-width:60em">'
        f'{body}</body></html>'
    )
    return folder


def live_test_page(folder: Path) -> Path:
    """A minimal page with both live explorers, the same scripts as the book and the model file
    written as the book's build writes it; returns ``folder`` (serve it). Faster than a book build."""
    from transformer_lib.browser.model import write_book_model
    from transformer_lib.browser.page import LIVE_SCRIPTS, live_explorer_html

    write_book_model(folder / "_static" / "live")
    body = (f'{live_explorer_html("attention", sentence="", result=None)}'
            f'{live_explorer_html("positional", d_model=64, dims=[0, 7], positions=[0, 50])}'
            f'{live_explorer_html("stepper", sentence="", beam=1, result=None)}')
    return minimal_page(folder, "live explorers", body, LIVE_SCRIPTS)


def model_explorer_page(folder: Path) -> str:
    """The minimal live page (:func:`live_test_page`) plus ``model.html``: chapter 6's whole-model
    explorer as the kernel's ``ModelExplorer`` writes it, with the book's stylesheet; returns its name."""
    from transformer_lib.browser.model_explorer import ModelExplorer
    from transformer_lib.browser.page import LIVE_SCRIPTS
    from transformer_lib.pretrained import book_model

    live_test_page(folder)
    shutil.copy(ROOT / "book" / "_static" / "reader.css", folder / "_static")
    checkpoint = book_model()
    bundle = ModelExplorer(checkpoint.model, checkpoint.src_vocab, checkpoint.tgt_vocab)._repr_mimebundle_()
    scripts = "".join(f'<script src="_static/{s}"></script>' for s in (
        "vendor/plotly/plotly-book.min.js", *(f"live/{name}" for name in LIVE_SCRIPTS)))
    (folder / "model.html").write_text(
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>whole-model explorer</title>'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<link rel="icon" href="data:,"><link rel="stylesheet" href="_static/reader.css">'
        f'<link rel="stylesheet" href="_static/live/explorers.css">{scripts}</head>'
        f'<body><main style="max-width:60em;margin:0 auto;padding:0 8px"><h1>Whole-model explorer</h1>'
        f'{bundle["text/html"]}</main></body></html>')
    return "model.html"
