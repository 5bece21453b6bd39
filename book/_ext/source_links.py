"""Sphinx extension: each excerpt's link points at the revision the book is built from.

``transformer_lib.source.show_source`` heads every excerpt with a link to its lines in the
repository, at the branch (``_config.yml``'s ``repository.branch``), so that the notebooks' stored
outputs do not change with every commit. The built page is read on the web long after the
branch has moved on: this extension writes in the commit the book was built from (``git
rev-parse HEAD`` of the book's folder), whose lines are the lines the page shows. Without a git
checkout the links stay at the branch.
"""

from __future__ import annotations

import subprocess

from sphinx.application import Sphinx
from sphinx.util import logging

logger = logging.getLogger(__name__)


def build_revision(folder: str) -> str | None:
    """The commit checked out in ``folder``, or None outside a git checkout."""
    try:
        result = subprocess.run(["git", "rev-parse", "HEAD"], cwd=folder, capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return None
    return result.stdout.strip() or None


def pinned(body: str, repository: str, branch: str, revision: str) -> str:
    """``body`` with every link to the library's files at ``branch`` moved to ``revision``."""
    return body.replace(f'href="{repository}/blob/{branch}/transformer_lib/',
                        f'href="{repository}/blob/{revision}/transformer_lib/')


def setup(app: Sphinx) -> dict:
    revision = build_revision(app.srcdir)
    if revision is None:
        logger.info("source_links: not a git checkout; the excerpts' links stay at the branch")

    def pin_source_links(app: Sphinx, pagename: str, templatename: str, context: dict, doctree: object) -> None:
        options = app.config.html_theme_options
        repository = str(options.get("repository_url", "")).rstrip("/")
        branch = str(options.get("repository_branch", "") or "main")
        if repository and revision and "body" in context:
            context["body"] = pinned(context["body"], repository, branch, revision)

    app.connect("html-page-context", pin_source_links)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
