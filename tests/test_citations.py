"""Citations readers can follow in JupyterLab and in the built book (tools/citations.py).

jupyterlab-myst reads no .bib: a ``{cite}`` role showed in JupyterLab as its key, "Citation Not
Found". The chapters cite with Markdown links written from book/references.bib. The fast tests
hold every page of book/ to that: no role left, every link's key in the .bib, its text the .bib's
authors and year, its tooltip the work's title, and every work of the .bib cited. The bibliography
page holds the entries as Markdown, as tools/citations.py writes them from the .bib now (jupyterlab-myst
renders no ``{bibliography}`` directive: a reader who followed a citation in JupyterLab found an empty
page). The last test reads the built book: every citation link lands on an entry of the bibliography
page.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from tools.book_browser import ROOT, html_pages

sys.path.insert(0, str(ROOT))
from tools import citations  # noqa: E402 -- tools/ is a folder of scripts, not an installed package

sys.path.remove(str(ROOT))

WORKS = citations.works()


def markdown_of(path: Path) -> str:
    """The Markdown a reader's JupyterLab renders: a page, or a notebook's markdown cells."""
    if path.suffix == ".md":
        return path.read_text(encoding="utf-8")
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return "\n\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")


PAGES = {path.name: markdown_of(path) for path in citations.book_pages()}


def test_no_page_cites_with_a_role_jupyterlab_cannot_resolve() -> None:
    for name, text in PAGES.items():
        roles = re.findall(r"\{(?:cite|footcite)(?::\w+)?\}`[^`]*`", text)
        assert not roles, f"{name}: {roles}; run `python tools/citations.py` to write them as links"


def test_every_citation_link_names_a_work_of_the_bib_by_its_authors_and_year() -> None:
    count = 0
    for name, text in PAGES.items():
        for link in citations.LINK.finditer(text):
            count += 1
            work = WORKS.get(link["key"])
            assert work is not None, f"{name}: {link[0]}: {link['key']!r} is not in references.bib"
            assert link["text"] in citations.link_texts(work), (
                f"{name}: {link[0]}: the text should be one of {sorted(citations.link_texts(work))}")
            assert link["title"] == work.title, f"{name}: {link[0]}: the title should be {work.title!r}"
    assert count >= 50, f"{count} citation links in book/ (59 when this was written)"


def test_every_link_to_the_bibliography_is_a_citation_link() -> None:
    """A link to bibliography.md that the pattern misses (a typo in it) would go unchecked above."""
    for name, text in PAGES.items():
        loose = len(re.findall(r"\]\(bibliography\.md", text))
        assert loose == len(citations.LINK.findall(text)), f"{name}: a bibliography link of another form"


def test_the_bibliography_lists_the_works_cited_and_no_other() -> None:
    cited = {link["key"] for text in PAGES.values() for link in citations.LINK.finditer(text)}
    assert set(WORKS) == cited, f"in references.bib but cited nowhere: {sorted(set(WORKS) - cited)}"
    page = PAGES["bibliography.md"]
    listed = re.findall(r"^\((\w+)\)=\n\*\*(.+?)\.\*\* ", page, re.M)
    assert sorted(key for key, _ in listed) == sorted(WORKS), "the page lists other works than the .bib"
    for key, label in listed:
        assert label == f"{WORKS[key].authors}, {WORKS[key].year}", f"{key}: listed as {label!r}"
    assert "{bibliography}" not in page  # a directive jupyterlab-myst does not render


def test_the_bibliography_page_is_written_from_the_bib_as_it_is() -> None:
    """Edit references.bib without running tools/citations.py and the page would list the old entries."""
    page = PAGES["bibliography.md"]
    assert citations.bibliography_page(page) == page, "run `python tools/citations.py` to write the entries anew"


def test_a_bibliography_entry_is_its_key_its_citation_text_and_the_reference() -> None:
    entries = citations.bibliography_entries().split("\n\n")
    assert len(entries) == len(WORKS)
    vaswani = next(e for e in entries if e.startswith("(vaswani2017attention)="))
    assert vaswani.startswith("(vaswani2017attention)=\n**Vaswani et al., 2017.** Ashish Vaswani, Noam Shazeer")
    assert "Attention is all you need. In *Advances in Neural Information Processing Systems 30*" in vaswani
    assert "\\" not in "".join(entries), "an escape of pybtex's Markdown left in an entry"
    labels = [e.split("**")[1] for e in entries]
    assert labels == sorted(labels), "ordered by the text the chapters cite them by"
    with pytest.raises(ValueError, match="no line"):
        citations.bibliography_page("# Bibliography\n")  # the marker removed: nothing is written blindly


def test_author_year_text_from_the_bib() -> None:
    assert WORKS["vaswani2017attention"].authors == "Vaswani et al."
    assert WORKS["press2017using"].authors == "Press and Wolf"
    assert WORKS["post2018call"].authors == "Post"
    assert WORKS["muller2019when"].authors == "Müller et al."  # M{\"u}ller in the .bib
    assert WORKS["su2021roformer"].title.startswith("RoFormer:")  # {RoFormer} in the .bib


@pytest.mark.parametrize(("role", "expected"), [
    ("the paper {cite}`post2018call`.", 'the paper ([Post, 2018](bibliography.md#post2018call "{t}")).'),
    ("(section 3.4, {cite}`post2018call`)", '(section 3.4, [Post, 2018](bibliography.md#post2018call "{t}"))'),
    ("{cite:t}`post2018call` shows", '[Post (2018)](bibliography.md#post2018call "{t}") shows'),
    ("as Post\n{cite}`post2018call` shows", 'as [Post (2018)](bibliography.md#post2018call "{t}") shows'),
    ("(see [x](a.md)) {cite}`post2018call`", '(see [x](a.md)) ([Post, 2018](bibliography.md#post2018call "{t}"))'),
])
def test_convert_writes_roles_as_links(role: str, expected: str) -> None:
    converted = citations.convert(role, WORKS)
    assert converted == expected.format(t=WORKS["post2018call"].title)
    assert citations.convert(converted, WORKS) == converted  # a second run changes nothing


def test_convert_two_works_and_an_unknown_key() -> None:
    both = citations.convert("{cite}`post2018call,ba2016layer`", WORKS)
    assert both.startswith("([Post, 2018](") and "; [Ba et al., 2016](bibliography.md#ba2016layer " in both
    with pytest.raises(KeyError, match="nosuch2020"):
        citations.convert("{cite}`nosuch2020`", WORKS)


def test_built_citation_links_land_on_bibliography_entries(site: Path) -> None:
    """book/_ext/citation_links.py: in the built book, each citation link points at an anchor of
    the bibliography page that holds the entry of that work; every chapter keeps all its links."""
    bibliography = (site / "book" / "bibliography.html").read_text()
    for key, work in WORKS.items():
        entry = re.search(rf'<p id="{re.escape(key)}"><strong>(.*?)</strong>(.*?)</p>', bibliography, re.S)
        assert entry, f"bibliography.html: no entry with the anchor {key!r}"
        assert entry[1] == f"{work.authors}, {work.year}.", f"{key}: the entry {entry[0][:200]!r}"
    for page in html_pages(site):
        html = page.read_text()
        hrefs = re.findall(r'href="bibliography\.html#([^"]+)"', html)
        source = PAGES.get(page.stem + ".ipynb") or PAGES.get(page.stem + ".md") or ""
        assert len(hrefs) == len(citations.LINK.findall(source)), f"{page.name}: {len(hrefs)} citation links"
        assert set(hrefs) <= set(WORKS), f"{page.name}: links to {sorted(set(hrefs) - set(WORKS))}"
