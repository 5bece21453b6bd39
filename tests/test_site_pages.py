"""book/_ext/site_pages.py without a build: the root redirect page, and the intro's PDF mention,
a link only while the PDF is in the site (tools/build_pdf.py prints the book with the link)."""

from __future__ import annotations

import base64
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "book" / "_ext"))
import site_pages  # noqa: E402 -- a build extension, in book/_ext

sys.path.remove(str(ROOT / "book" / "_ext"))


def test_the_root_page_forwards_with_a_title_and_the_favicon() -> None:
    svg = (ROOT / "book" / "_static" / "favicon.svg").read_bytes()
    page = site_pages.root_redirect("book/intro.html", "The Transformer, Computed", svg)
    assert page.startswith("<!DOCTYPE html>") and '<html lang="en">' in page
    assert re.search(r'<meta http-equiv="Refresh" content="0; url=book/intro.html"', page)
    icon = re.search(r'<link rel="icon" href="data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)">', page)
    assert icon is not None and base64.b64decode(icon.group(1)) == svg  # inline: no request the redirect cuts off
    assert "<title>The Transformer, Computed</title>" in page and '<a href="book/intro.html">' in page


def test_the_intro_writes_the_link_the_extension_looks_for() -> None:
    assert site_pages.PDF_LINK in (ROOT / "book" / "intro.md").read_text()


def test_the_pdf_link_follows_the_pdf(tmp_path: Path) -> None:
    (tmp_path / "book").mkdir()
    intro = tmp_path / site_pages.INTRO
    intro.write_text(f"<p>{site_pages.PDF_LINK} is a copy to keep.</p>")
    site_pages.link_pdf(tmp_path)  # no PDF: no link to it
    assert site_pages.PDF_MISSING in intro.read_text() and "the-transformer-computed.pdf\"" not in intro.read_text()
    site_pages.link_pdf(tmp_path, present=True)  # tools/build_pdf.py, while it prints
    assert site_pages.PDF_LINK in intro.read_text()
    site_pages.link_pdf(tmp_path)
    assert site_pages.PDF_MISSING in intro.read_text()
    (tmp_path / site_pages.PDF).parent.mkdir()
    (tmp_path / site_pages.PDF).write_bytes(b"%PDF-1.7")
    site_pages.link_pdf(tmp_path)
    assert intro.read_text() == f"<p>{site_pages.PDF_LINK} is a copy to keep.</p>"
    intro.write_text("<p>no mention</p>")
    with pytest.raises(RuntimeError, match="neither the PDF link nor its placeholder"):
        site_pages.link_pdf(tmp_path)
