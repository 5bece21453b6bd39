"""Sphinx extension: the prose's ``{eval}`name``` numbers, read from the stored notebook.

The book is built from the executed notebooks without a kernel (``execute_notebooks: "off"``), where
myst-nb's own ``{eval}`` role has nothing to evaluate. The value is in the notebook already:
``tools/execute_notebooks.py`` asked the kernel for it at the markdown cell's place in the run and
stored the answer in the cell's ``user_expressions`` metadata, the field jupyterlab-myst writes and
reads in JupyterLab. This role shows that stored ``text/plain``; a name the notebook never stored is a
build warning (the book builds with -W: an error), never an empty gap in a sentence.
"""

from __future__ import annotations

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxRole


def stored_expressions(notebook: dict) -> dict[str, str]:
    """expression -> the text/plain stored for it, over the markdown cells of ``notebook``."""
    found: dict[str, str] = {}
    for cell in notebook.get("cells", []):
        if cell.get("cell_type") != "markdown":
            continue
        for entry in cell.get("metadata", {}).get("user_expressions", []):
            result = entry.get("result", {})
            if result.get("status") == "ok" and "text/plain" in result.get("data", {}):
                found[entry["expression"]] = result["data"]["text/plain"]
    return found


class StoredEvalRole(SphinxRole):
    def run(self) -> tuple[list[nodes.Node], list[nodes.system_message]]:
        expression = self.text.strip()
        renderer = self.inliner.document.get("nb_renderer")
        notebook = getattr(getattr(getattr(renderer, "renderer", None), "nb_client", None), "notebook", None)
        text = stored_expressions(notebook or {}).get(expression)
        if text is None:
            message = self.inliner.reporter.warning(
                f"{{eval}}`{expression}`: no stored value in this notebook (run tools/execute_notebooks.py)",
                line=self.lineno)
            return [], [message]
        node = nodes.inline(text, text, classes=["bound-number"])
        self.set_source_info(node)
        return [node], []


def setup(app: Sphinx) -> dict:
    app.setup_extension("myst_nb")  # first, so that this role replaces myst-nb's kernel-only one
    app.add_role("eval", StoredEvalRole(), override=True)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
