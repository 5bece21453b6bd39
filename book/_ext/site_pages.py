"""Sphinx extension: the two pages around the book that no source file makes.

* ``index.html``, the site's root: Sphinx's external TOC writes a bare ``<meta http-equiv="Refresh">``
  there (when the root is not ``index``), without a favicon link, so a browser asks for
  ``/favicon.ico`` and logs a 404 on every first visit. This writes a complete redirect page first
  (the TOC extension keeps an ``index.html`` that exists): language, title, the book's favicon, and
  a link for a browser that does not follow the redirect. The favicon is inline (a ``data:`` URL):
  the page leaves at once, and a request for a file would be cut off by the redirect.
* The intro's link to the whole book as one PDF: ``tools/build-pdf.sh`` prints the PDF after the
  HTML build, into ``_static/``. A build without it (``tools/build-book.sh`` alone) turns the link
  into plain text that says the PDF is not part of the build (the intro's next words name the
  script that makes it), so no page links a missing file;
  ``tools/build_pdf.py`` prints the book with the link (in the PDF it loses its address, as every
  link to a file does) and keeps it once the PDF is written there (``link_pdf``).
"""

from __future__ import annotations

import base64
import html
from pathlib import Path

from sphinx.application import Sphinx

PDF = "_static/the-transformer-computed.pdf"  # tools/build_pdf.py writes it here
INTRO = Path("book") / "intro.html"
PDF_LINK = '<a href="../_static/the-transformer-computed.pdf">The whole book as one PDF</a>'
PDF_MISSING = '<span class="tc-pdf-missing">The whole book as one PDF (not part of this build)</span>'


def root_redirect(target: str, title: str, favicon: bytes) -> str:
    """The root page: forwards to ``target`` at once, with a title, the favicon (an SVG's bytes,
    inline) and a plain link."""
    target, title = html.escape(target), html.escape(title)
    icon = "data:image/svg+xml;base64," + base64.b64encode(favicon).decode("ascii")
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Refresh" content="0; url={target}" />\n<title>{title}</title>\n'
        f'<link rel="icon" href="{icon}">\n</head>\n'
        f'<body><p><a href="{target}">{title}</a></p></body>\n</html>\n'
    )


def link_pdf(site: Path, present: bool | None = None) -> None:
    """Make the intro's PDF mention a link if the PDF is in ``site`` (or ``present``), plain text if not."""
    intro = site / INTRO
    text = intro.read_text(encoding="utf-8")
    present = (site / PDF).is_file() if present is None else present
    before, after = (PDF_MISSING, PDF_LINK) if present else (PDF_LINK, PDF_MISSING)
    if after not in text:
        if before not in text:
            raise RuntimeError(f"{intro}: neither the PDF link nor its placeholder is there")
        intro.write_text(text.replace(before, after), encoding="utf-8")


def write_site_pages(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.name != "html":
        return
    outdir = Path(app.outdir)
    root = app.config.root_doc
    if root != "index":
        favicon = (outdir / "_static" / Path(app.config.html_favicon).name).read_bytes()
        (outdir / "index.html").write_text(root_redirect(f"{root}.html", app.config.html_title, favicon),
                                           encoding="utf-8")
    if (outdir / INTRO).is_file():
        link_pdf(outdir)


def setup(app: Sphinx) -> dict:
    app.connect("build-finished", write_site_pages, priority=400)  # before the TOC extension's redirect
    return {"parallel_read_safe": True, "parallel_write_safe": True}
