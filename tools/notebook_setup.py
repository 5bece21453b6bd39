"""Write each chapter's opening: the note to run the notebook first, and the set-up cell.

    python tools/notebook_setup.py          # writes them into book/0*.ipynb (sources only)
    python tools/notebook_setup.py --check  # exit 1 if a chapter's opening differs

The set-up cell is the first code cell of every chapter, before anything imports torch. It sets
OpenMP's wait policy for a shared CPU, and, where ``transformer_lib`` cannot be imported (a single
downloaded notebook, in Colab say), installs it with the ``book`` extra (what the chapters import)
from the repository named in ``_config.yml`` (``repository.url``, the one place that names it), at
the commit the chapter's outputs were computed with: never a moving branch. pip's time is bounded
(retries, a time-out per connection and one for the whole install); when the install fails, the
reader gets one short message with the two ways on (Binder, or the clone-and-run commands), no
traceback.

The commit is written when the chapter is executed: ``tools/execute_notebooks.py`` calls
``executed_commit`` (HEAD, refused while ``transformer_lib/`` or ``pyproject.toml`` has uncommitted
changes, since no commit would then hold the library that computed the outputs) and writes the cell
before running it. Writing without executing (this script) keeps each chapter's commit; a chapter
without one gets the last commit that changed it. Only cell sources change; every output stays
(tests/test_notebook_setup.py checks the result).
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import yaml

ROOT = Path(__file__).resolve().parent.parent
SETUP_ID = "setup"
LIBRARY_PATHS = ("transformer_lib", "pyproject.toml")  # what the set-up cell installs
RUN_ALL_NOTE = (
    "*Running this chapter as a notebook (JupyterLab on Binder from the rocket button, or a download): "
    "run all cells first (Run ▸ Run All Cells), then read from the top; the figures and explorers "
    "appear once their cells have run.*"
)
PIP_TIMEOUT_S = 1200  # the whole install; pip's own --timeout is per connection
SETUP_TEMPLATE = '''\
# Set-up, before torch is imported. Run the whole notebook first: Run > Run All Cells.
import importlib.util
import os

# On a shared CPU (Binder's, Colab's), idle PyTorch threads sleep instead of spinning:
# training stays fast when other programs compete for the cores.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

if importlib.util.find_spec("transformer_lib") is None:
    # This notebook alone (in Colab, say): install the book's library and what the chapters import,
    # at the commit these outputs were computed with (a torch already installed is kept).
    import subprocess
    import sys

    commit = "{commit}"
    pip = [sys.executable, "-m", "pip", "install", "--quiet", "--retries", "2", "--timeout", "30",
           f"transformer_lib[book] @ git+{url}@{{commit}}"]
    try:
        subprocess.run(pip, check=True, capture_output=True, text=True, timeout={timeout})
    except (OSError, subprocess.SubprocessError) as failure:
        stderr = getattr(failure, "stderr", None)
        lines = stderr.strip().splitlines() if isinstance(stderr, str) else []
        timed_out = isinstance(failure, subprocess.TimeoutExpired)
        reason = "pip did not finish in {timeout} s" if timed_out else (lines[-1] if lines else str(failure))

        class SetupFailed(Exception):
            def _render_traceback_(self):  # IPython shows this message instead of a traceback
                return [str(self)]

        raise SetupFailed(
            f"Could not install the book's library: {{reason[:300]}}\\n"
            "Two ways on:\\n"
            "- open the chapter on Binder:\\n"
            f"  https://mybinder.org/v2/gh/{slug}/{{commit}}?urlpath=lab/tree/book\\n"
            f"- or run it on your machine: git clone {url}\\n"
            f"  cd {name} && git checkout {{commit}}\\n"
            "  pip install -r binder/requirements.txt . && jupyter lab book"
        ) from None
    importlib.invalidate_caches()'''
PIN = re.compile(r'^    commit = "([0-9a-f]{40})"$', re.MULTILINE)


def chapters() -> list[Path]:
    return sorted((ROOT / "book").glob("[0-9][0-9]_*.ipynb"))


def repository() -> str:
    """The URL of the book's repository, from _config.yml."""
    return yaml.safe_load((ROOT / "_config.yml").read_text())["repository"]["url"]


def setup_source(commit: str) -> str:
    if not re.fullmatch(r"[0-9a-f]{40}", commit):
        raise ValueError(f"commit: expected a full commit id (40 hex digits), got {commit!r}")
    url = repository()
    slug = url.removeprefix("https://github.com/")
    return SETUP_TEMPLATE.format(commit=commit, url=url, slug=slug, name=slug.split("/")[-1], timeout=PIP_TIMEOUT_S)


def git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()


def executed_commit() -> str:
    """The commit whose library is the one in this checkout: HEAD, if ``transformer_lib/`` and
    ``pyproject.toml`` have no uncommitted changes (else no commit holds what a run would use)."""
    changed = git("status", "--porcelain", "--", *LIBRARY_PATHS)
    if changed:
        raise SystemExit("The set-up cell names the commit a chapter is executed with, and the library has "
                         f"uncommitted changes:\n{changed}\nCommit them first.")
    return git("rev-parse", "HEAD")


def pinned_commit(nb: nbformat.NotebookNode) -> str | None:
    """The commit the chapter's set-up cell installs (None if it names none)."""
    setup = next((c for c in nb.cells if c.get("id") == SETUP_ID), None)
    match = PIN.search(setup.source) if setup is not None else None
    return match.group(1) if match else None


def last_commit(path: Path) -> str:
    return git("log", "-1", "--format=%H", "--", str(path.relative_to(ROOT)))


def title_cell_source(source: str) -> str:
    """The first markdown cell with the run-all note right under its title (added once)."""
    if RUN_ALL_NOTE in source:
        return source
    lines = source.split("\n")
    title = next(i for i, line in enumerate(lines) if line.startswith("# "))
    return "\n".join([*lines[: title + 1], "", RUN_ALL_NOTE, *lines[title + 1:]])


def updated(nb: nbformat.NotebookNode, commit: str) -> nbformat.NotebookNode:
    """``nb`` with its opening written: the note in the title cell, the set-up cell (installing
    ``commit``) after it."""
    first = nb.cells[0]
    assert first.cell_type == "markdown", "a chapter starts with its title cell"
    first.source = title_cell_source(first.source)
    setup = next((c for c in nb.cells if c.get("id") == SETUP_ID), None)
    if setup is None:
        setup = nbformat.v4.new_code_cell(id=SETUP_ID)
        nb.cells.insert(1, setup)
    setup.source = setup_source(commit)
    return nb


def is_chapter(path: Path) -> bool:
    return path.resolve() in {p.resolve() for p in chapters()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only check; exit 1 if a chapter would change")
    args = parser.parse_args()
    stale = []
    for path in chapters():
        before = path.read_text()
        nb = nbformat.reads(before, as_version=4)
        nb = updated(nb, pinned_commit(nb) or last_commit(path))
        after = nbformat.writes(nb) + "\n"
        if after != before:
            stale.append(path.name)
            if not args.check:
                path.write_text(after)
    print(("stale: " if args.check else "written: ") + (", ".join(stale) or "none"))
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
