"""Sphinx extension: a citation link lands on the work's entry in the bibliography.

The chapters cite with plain Markdown links, written from ``references.bib`` by
``tools/citations.py`` (jupyterlab-myst reads no .bib, so a ``{cite}`` role showed in JupyterLab
as its key, "Citation Not Found")::

    [Vaswani et al., 2017](bibliography.md#vaswani2017attention "Attention Is All You Need")

The bibliography page lists the entries as Markdown, written by the same tool: each is a MyST
target named by the work's key, ``(vaswani2017attention)=``, then its paragraph. myst-parser
resolves ``page.md#fragment`` only to a heading of that page, and an entry is no heading. This
post-transform runs first: a link to the bibliography page whose fragment is the name of a target
on that page becomes a link to the target's anchor. A fragment the page has no target for is a
warning, so the build (-W) fails on it.
"""

from __future__ import annotations

from docutils import nodes
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.util import logging

logger = logging.getLogger(__name__)

BIBLIOGRAPHY = "book/bibliography"  # the page's document name


class CitationLinks(SphinxPostTransform):
    default_priority = 8  # before myst-parser's resolver (9), which would look for a heading

    def run(self, **kwargs) -> None:
        # every target of the page: (its name) -> its anchor
        anchors = {name: anchor for name, (docname, anchor) in self.env.get_domain("std").anonlabels.items()
                   if docname == BIBLIOGRAPHY}
        for ref in list(self.document.findall(addnodes.pending_xref)):
            if ref.get("reftype") != "myst" or ref.get("reftarget") != BIBLIOGRAPHY or not ref.get("reftargetid"):
                continue
            key = ref["reftargetid"]
            if key not in anchors:
                logger.warning(f"citation link to {key!r}: the bibliography lists no such work "
                               "(python tools/citations.py writes its entries from references.bib)", location=ref)
                ref.replace_self(ref.children)
                continue
            link = nodes.reference("", "", internal=True, classes=["citation-link"],
                                   refuri=self.app.builder.get_relative_uri(self.env.docname, BIBLIOGRAPHY)
                                   + "#" + anchors[key])
            if ref.get("title"):
                link["reftitle"] = ref["title"]
            link += ref.children
            ref.replace_self(link)


def setup(app: Sphinx) -> dict:
    app.add_post_transform(CitationLinks)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
