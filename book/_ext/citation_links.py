"""Sphinx extension: a citation link lands on the work's entry in the bibliography.

The chapters cite with plain Markdown links, written from ``references.bib`` by
``tools/citations.py`` (jupyterlab-myst reads no .bib, so a ``{cite}`` role showed in JupyterLab
as its key, "Citation Not Found")::

    [Vaswani et al., 2017](bibliography.md#vaswani2017attention "Attention Is All You Need")

myst-parser resolves ``page.md#fragment`` only to a heading of that page, and a bibliography entry
is no heading. This post-transform runs first: a link to the page of the ``{bibliography}``
directive whose fragment is a key of the .bib becomes a link to that work's entry, whose anchor
is the key (``bibtex_cite_id: "{key}"`` in _config.yml). A key the bibliography does not list is a
warning, so the build (-W) fails on it.
"""

from __future__ import annotations

from docutils import nodes
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.util import logging

logger = logging.getLogger(__name__)


class CitationLinks(SphinxPostTransform):
    default_priority = 8  # before myst-parser's resolver (9), which would look for a heading

    def run(self, **kwargs) -> None:
        domain = self.env.get_domain("cite")
        entries = {(c.bibliography_key.docname, c.key): c.citation_id for c in domain.citations}
        pages = {docname for docname, _ in entries}
        for ref in list(self.document.findall(addnodes.pending_xref)):
            if ref.get("reftype") != "myst" or ref.get("reftarget") not in pages or not ref.get("reftargetid"):
                continue
            page, key = ref["reftarget"], ref["reftargetid"]
            if (page, key) not in entries:
                logger.warning(f"citation link to {key!r}: the bibliography of {page!r} lists no such work",
                               location=ref)
                ref.replace_self(ref.children)
                continue
            link = nodes.reference("", "", internal=True, classes=["citation-link"],
                                   refuri=self.app.builder.get_relative_uri(self.env.docname, page)
                                   + "#" + entries[page, key])
            if ref.get("title"):
                link["reftitle"] = ref["title"]
            link += ref.children
            ref.replace_self(link)


def setup(app: Sphinx) -> dict:
    app.add_post_transform(CitationLinks)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
