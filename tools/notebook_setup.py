"""Write each notebook's opening: the note to run the notebook first, and the set-up cell.

    python tools/notebook_setup.py            # writes them into every notebook of _toc.yml (sources only)
    python tools/notebook_setup.py --check    # exit 1 if a notebook's opening differs
    python tools/notebook_setup.py --release  # the set-up cells install the release tag v<version>

The set-up cell is the first code cell of every notebook of the book (chapters and appendices),
before anything imports torch. It sets OpenMP's wait policy for a shared CPU, and, where
``transformer_lib`` cannot be imported (a single downloaded notebook, in Colab say), installs it with
the ``book`` extra (what the chapters import) from the repository named in ``_config.yml``
(``repository.url``, the one place that names it), at a revision that holds the library the
notebook's outputs were computed with: never a moving branch. It says what it is installing while
pip runs; pip's time is bounded (retries, a time-out per connection and one for the whole install);
when the install fails, the reader gets one short message with the cause (the first error line pip
printed, without colour codes) and the two ways on (Binder, or the clone-and-run commands), no
traceback.

The revision is a commit, written when the notebook is executed: ``tools/execute_notebooks.py`` calls
``executed_commit`` (HEAD, refused while ``transformer_lib/`` or ``pyproject.toml`` has uncommitted
changes, since no commit would then hold the library that computed the outputs) and writes the cell
before running it. Or it is a release tag, ``v`` and ``pyproject.toml``'s version, written by
``--release``: refused unless the library at HEAD (where the tag is to be made) is the library of
every notebook's commit. Writing without executing keeps each notebook's revision; a notebook without
one gets the last commit that changed it. Only cell sources change; every output stays
(tests/test_notebook_setup.py checks the result).
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import nbformat
import yaml

ROOT = Path(__file__).resolve().parent.parent
SETUP_ID = "setup"
LIBRARY_PATHS = ("transformer_lib", "pyproject.toml")  # what the set-up cell installs
RUN_ALL_NOTE = (
    "*Running this page as a notebook (JupyterLab on Binder from the rocket button, or a download): "
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
    # {what} (a torch already installed is kept).
    import re
    import subprocess
    import sys

    revision = "{revision}"
    print(f"Installing the book's library (transformer_lib at {{revision}}) and what the chapters import; "
          "this takes a minute or more...", flush=True)
    pip = [sys.executable, "-m", "pip", "install", "--quiet", "--retries", "2", "--timeout", "30",
           f"transformer_lib[book] @ git+{url}@{{revision}}"]
    try:
        subprocess.run(pip, check=True, capture_output=True, text=True, timeout={timeout})
    except (OSError, subprocess.SubprocessError) as failure:
        stderr = getattr(failure, "stderr", None)
        # pip's lines without colour codes or box drawing; the cause is the first error it printed
        lines = [re.sub(r"\\x1b\\[[0-9;]*[A-Za-z]", "", line).strip(" │╰─>×")
                 for line in (stderr.splitlines() if isinstance(stderr, str) else [])]
        causes = [line for line in lines
                  if re.match(r"(?i)(error|fatal):", line) and "subprocess-exited-with-error" not in line]
        if isinstance(failure, subprocess.TimeoutExpired):
            reason = "pip did not finish in {timeout} s"
        else:
            reason = (causes or [line for line in lines if line][-1:] or [str(failure)])[0]

        class SetupFailed(Exception):
            def _render_traceback_(self):  # IPython shows this message instead of a traceback
                return [str(self)]

        raise SetupFailed(
            f"Could not install the book's library: {{reason[:300]}}\\n"
            "Two ways on:\\n"
            "- open the notebook on Binder:\\n"
            f"  https://mybinder.org/v2/gh/{slug}/{{revision}}?urlpath=lab/tree/book\\n"
            f"- or run it on your machine: git clone {url}\\n"
            f"  cd {name} && git checkout {{revision}}\\n"
            "  pip install -r binder/requirements.txt . && jupyter lab book"
        ) from None
    importlib.invalidate_caches()'''
COMMIT = re.compile(r"[0-9a-f]{40}")
RELEASE_TAG = re.compile(r"v\d+\.\d+\.\d+")
PIN = re.compile(r'^    revision = "([^"]+)"$', re.MULTILINE)


def notebooks() -> list[Path]:
    """Every notebook of the book, in _toc.yml's order: the chapters and the appendices."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [toc["root"], *(entry["file"] for entry in toc.get("chapters", []))]
    return [ROOT / f"{name}.ipynb" for name in files if (ROOT / f"{name}.ipynb").is_file()]


def repository() -> str:
    """The URL of the book's repository, from _config.yml."""
    return yaml.safe_load((ROOT / "_config.yml").read_text())["repository"]["url"]


def version() -> str:
    """The library's version: pyproject.toml's, the one place that states it."""
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]


def release_tag() -> str:
    return f"v{version()}"


def setup_source(revision: str) -> str:
    """The set-up cell installing ``revision``: a full commit id, or the release tag ``v<version>``."""
    if COMMIT.fullmatch(revision):
        what = "at the commit these outputs were computed with"
    elif RELEASE_TAG.fullmatch(revision):
        what = "at the release tag whose library computed these outputs"
    else:
        raise ValueError(f"revision: expected a full commit id (40 hex digits) or a release tag like v1.2.3, "
                         f"got {revision!r}")
    url = repository()
    slug = url.removeprefix("https://github.com/")
    return SETUP_TEMPLATE.format(revision=revision, what=what, url=url, slug=slug, name=slug.split("/")[-1],
                                 timeout=PIP_TIMEOUT_S)


def git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()


def executed_commit() -> str:
    """The commit whose library is the one in this checkout: HEAD, if ``transformer_lib/`` and
    ``pyproject.toml`` have no uncommitted changes (else no commit holds what a run would use)."""
    changed = git("status", "--porcelain", "--", *LIBRARY_PATHS)
    if changed:
        raise SystemExit("The set-up cell names the commit a notebook is executed with, and the library has "
                         f"uncommitted changes:\n{changed}\nCommit them first.")
    return git("rev-parse", "HEAD")


def pinned_revision(nb: nbformat.NotebookNode) -> str | None:
    """The revision the notebook's set-up cell installs (None if it names none)."""
    setup = next((c for c in nb.cells if c.get("id") == SETUP_ID), None)
    match = PIN.search(setup.source) if setup is not None else None
    return match.group(1) if match else None


def last_commit(path: Path) -> str:
    return git("log", "-1", "--format=%H", "--", str(path.relative_to(ROOT)))


def library_changed_since(commit: str) -> list[str]:
    """The library's files (what the set-up cell installs) that differ between ``commit`` and HEAD."""
    return git("diff", "--name-only", commit, "HEAD", "--", *LIBRARY_PATHS).splitlines()


def title_cell_source(source: str) -> str:
    """The first markdown cell with the run-all note right under its title (added once)."""
    if RUN_ALL_NOTE in source:
        return source
    lines = source.split("\n")
    title = next(i for i, line in enumerate(lines) if line.startswith("# "))
    return "\n".join([*lines[: title + 1], "", RUN_ALL_NOTE, *lines[title + 1:]])


def updated(nb: nbformat.NotebookNode, revision: str) -> nbformat.NotebookNode:
    """``nb`` with its opening written: the note in the title cell, the set-up cell (installing
    ``revision``) after it."""
    first = nb.cells[0]
    assert first.cell_type == "markdown", "a notebook starts with its title cell"
    first.source = title_cell_source(first.source)
    setup = next((c for c in nb.cells if c.get("id") == SETUP_ID), None)
    if setup is None:
        setup = nbformat.v4.new_code_cell(id=SETUP_ID)
        nb.cells.insert(1, setup)
    setup.source = setup_source(revision)
    return nb


def is_book_notebook(path: Path) -> bool:
    return path.resolve() in {p.resolve() for p in notebooks()}


def revision_for(nb: nbformat.NotebookNode, path: Path, release: bool) -> str:
    """What ``nb``'s set-up cell is to install: its own revision (or the last commit that changed it),
    or with ``release`` the release tag, refused if the library changed since the notebook's commit."""
    pinned = pinned_revision(nb) or last_commit(path)
    if not release or RELEASE_TAG.fullmatch(pinned):
        return pinned
    changed = library_changed_since(pinned)
    if changed:
        raise SystemExit(f"{path.name} was executed at {pinned[:12]}, and the library changed since "
                         f"({', '.join(changed[:5])}): re-execute it before the release.")
    return release_tag()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only check; exit 1 if a notebook would change")
    parser.add_argument("--release", action="store_true",
                        help="install the release tag v<version> (pyproject.toml) instead of each notebook's commit")
    args = parser.parse_args()
    stale = []
    for path in notebooks():
        before = path.read_text()
        nb = nbformat.reads(before, as_version=4)
        nb = updated(nb, revision_for(nb, path, args.release))
        after = nbformat.writes(nb) + "\n"
        if after != before:
            stale.append(path.name)
            if not args.check:
                path.write_text(after)
    print(("stale: " if args.check else "written: ") + (", ".join(stale) or "none"))
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
