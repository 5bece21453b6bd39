"""Citations as plain Markdown links, written from ``book/references.bib``.

jupyterlab-myst reads no ``.bib`` file (jupyter-book/jupyterlab-myst#127): it showed every
``{cite}`` role as its key, marked "Citation Not Found". A chapter cites a work with a link whose
text is the author and the year, and whose title (the tooltip) is the work's title::

    ([Vaswani et al., 2017](bibliography.md#vaswani2017attention "Attention Is All You Need"))

The bibliography page (``book/bibliography.md``) holds its entries as Markdown, written here from
the .bib too: jupyterlab-myst renders no ``{bibliography}`` directive either, so a reader who
followed a citation in JupyterLab found an empty page. Each entry is a target named by its key (the
anchor of the citation links, in the book and in JupyterLab), the author-year text the chapters cite
it by, then the reference in pybtex's ``unsrt`` style.

This module is the one place that writes that text: ``python tools/citations.py`` turns every
``{cite}`` / ``{cite:t}`` role of the book's notebooks and Markdown pages into such links and
rewrites the bibliography's entries (run it again after writing a new ``{cite}`` or editing the
.bib; a second run changes nothing), and tests/test_citations.py holds every link and the page to
this module.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from pybtex.database import parse_file
from pybtex.plugin import find_plugin
from pybtex.richtext import Text

ROOT = Path(__file__).resolve().parents[1]
BOOK = ROOT / "book"
BIB = BOOK / "references.bib"
BIBLIOGRAPHY_PAGE = "bibliography.md"

ROLE = re.compile(r"\{cite(?::(?P<kind>[pt]))?\}`(?P<keys>[^`]+)`")
# [text](bibliography.md#key "title")
LINK = re.compile(r"\[(?P<text>[^\]]+)\]\(" + re.escape(BIBLIOGRAPHY_PAGE)
                  + r"#(?P<key>[^)\s]+)(?: \"(?P<title>[^\"]*)\")?\)")


@dataclass(frozen=True)
class Work:
    key: str
    authors: str  # "Vaswani et al.", "Press and Wolf", "Mikolov"
    year: str
    title: str


_TEXT_BACKEND = find_plugin("pybtex.backends", "text")()


def _plain(latex: str) -> str:
    """``M{\\"u}ller`` -> ``Müller``, ``{RoFormer}: ...`` -> ``RoFormer: ...``."""
    # render(), not render_as("text"), which looks the backend up in every installed package's entry points
    # at each call: seconds of CPU for the .bib's names, in every test process that imports this module
    return Text.from_latex(latex).render(_TEXT_BACKEND)


def works(bib: Path = BIB) -> dict[str, Work]:
    """Every entry of the .bib, with the author-year text of its citations."""
    found = {}
    for key, entry in parse_file(str(bib)).entries.items():
        people = entry.persons.get("author") or entry.persons.get("editor") or []
        if not people:
            raise ValueError(f"{bib.name}: {key} names no author or editor")
        last = [_plain(" ".join(p.prelast_names + p.last_names)) for p in people]
        authors = last[0] if len(last) == 1 else " and ".join(last) if len(last) == 2 else f"{last[0]} et al."
        found[key] = Work(key, authors, entry.fields["year"], _plain(entry.fields["title"]))
    return found


def link(work: Work, textual: bool) -> str:
    """The Markdown link of one citation: "Britz et al. (2017)" (textual) or "Britz et al., 2017"."""
    text = f"{work.authors} ({work.year})" if textual else f"{work.authors}, {work.year}"
    return f'[{text}]({BIBLIOGRAPHY_PAGE}#{work.key} "{work.title}")'


def link_texts(work: Work) -> set[str]:
    """The texts a citation of ``work`` may show."""
    return {f"{work.authors} ({work.year})", f"{work.authors}, {work.year}"}


def _inside_parentheses(before: str) -> bool:
    """Whether the text just before a citation (in its paragraph) has an unclosed "(" ."""
    depth = 0
    for char in reversed(before.split("\n\n")[-1]):
        if char == ")":
            depth += 1
        elif char == "(":
            if depth == 0:
                return True
            depth -= 1
    return False


def convert(text: str, known: dict[str, Work]) -> str:
    """``text`` with every ``{cite}`` role replaced by links.

    ``{cite:t}`` and a role right after its authors' names ("Press and Wolf {cite}`...`") become
    "[Press and Wolf (2017)](...)"; any other role a parenthetical "([Press and Wolf, 2017](...))",
    without its own parentheses when it already stands inside some.
    """
    out, last = [], 0
    for match in ROLE.finditer(text):
        keys = [k.strip() for k in match["keys"].split(",")]
        missing = [k for k in keys if k not in known]
        if missing:
            raise KeyError(f"{', '.join(missing)}: not in {BIB.name}")
        before = text[last:match.start()]
        named = re.search(r"(?:^|(?<=\s))" + re.escape(known[keys[0]].authors) + r"\s+$", before)
        if len(keys) == 1 and (match["kind"] == "t" or named):
            if named:
                before = before[:named.start()]
            piece = link(known[keys[0]], textual=True)
        else:
            piece = "; ".join(link(known[k], textual=False) for k in keys)
            if not _inside_parentheses(text[:match.start()]):
                piece = f"({piece})"
        out += [before, piece]
        last = match.end()
    return "".join(out) + text[last:]


def convert_file(path: Path, known: dict[str, Work]) -> bool:
    """Convert one notebook's markdown cells or one Markdown page in place; True if it changed."""
    original = path.read_text(encoding="utf-8")
    if path.suffix == ".md":
        changed = convert(original, known)
    else:
        notebook = json.loads(original)
        for cell in notebook["cells"]:
            if cell["cell_type"] == "markdown":
                source = "".join(cell["source"])
                new = convert(source, known)
                if new != source:
                    cell["source"] = new.splitlines(keepends=True)
        # the format nbformat writes, so that the diff shows only the edited cells
        changed = json.dumps(notebook, indent=1, ensure_ascii=False) + "\n"
    if changed == original:
        return False
    path.write_text(changed, encoding="utf-8")
    return True


# The bibliography page's entries follow this line; above it, what the page says of itself.
ENTRIES_MARKER = ("<!-- The entries below are written from references.bib by tools/citations.py: edit the .bib, "
                  "then run it. -->")
_ESCAPED = re.compile(r"\\([.()\-:!])")  # pybtex's Markdown escapes, where Markdown needs none


def bibliography_entries(bib: Path = BIB) -> str:
    """Every work of the .bib as the bibliography page lists it, ordered by its author-year text: a
    target named by its key, then a paragraph "**Vaswani et al., 2017.** Ashish Vaswani, ... 2017."."""
    known = works(bib)
    style = find_plugin("pybtex.style.formatting", "unsrt")()
    markdown = find_plugin("pybtex.backends", "markdown")()
    formatted = {entry.key: entry.text.render(markdown) for entry in style.format_entries(
        parse_file(str(bib)).entries.values())}
    entries = []
    for work in sorted(known.values(), key=lambda w: (w.authors, w.year, w.title)):
        reference = _ESCAPED.sub(r"\1", " ".join(formatted[work.key].split()))  # one line
        entries.append(f"({work.key})=\n**{work.authors}, {work.year}.** {reference}")
    return "\n\n".join(entries) + "\n"


def bibliography_page(current: str, bib: Path = BIB) -> str:
    """The bibliography page ``current`` with its entries written anew from the .bib."""
    if ENTRIES_MARKER not in current:
        raise ValueError(f"{BIBLIOGRAPHY_PAGE}: no line {ENTRIES_MARKER!r} to write the entries after")
    return current[:current.index(ENTRIES_MARKER) + len(ENTRIES_MARKER)] + "\n\n" + bibliography_entries(bib)


def write_bibliography(page: Path = BOOK / BIBLIOGRAPHY_PAGE) -> bool:
    """Rewrite the bibliography page's entries; True if they changed."""
    original = page.read_text(encoding="utf-8")
    new = bibliography_page(original)
    if new == original:
        return False
    page.write_text(new, encoding="utf-8")
    return True


def book_pages(book: Path = BOOK) -> list[Path]:
    return sorted([*book.glob("*.ipynb"), *book.glob("*.md")])


def main() -> None:
    known = works()
    for path in book_pages():
        if convert_file(path, known):
            print(f"converted {path.relative_to(ROOT)}")
    if write_bibliography():
        print(f"wrote the entries of book/{BIBLIOGRAPHY_PAGE}")


if __name__ == "__main__":
    sys.exit(main())
