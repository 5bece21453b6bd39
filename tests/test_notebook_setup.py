"""Each notebook's opening (tools/notebook_setup.py), appendices included: the run-all note, and a
set-up cell that runs before torch is imported and, where the library is missing, says so and installs
it from the repository _config.yml names, at the commit the notebook was executed with (or the release
tag that holds that library), with a short message naming pip's real error on failure."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
import yaml

from tools import notebook_setup

NOTEBOOKS = notebook_setup.notebooks()


def test_every_notebook_of_the_book_is_covered() -> None:
    """Every notebook _toc.yml names (chapters and appendices) gets the set-up cell, and every
    notebook in book/ is in _toc.yml, so none is left out of the tests below."""
    toc = yaml.safe_load((notebook_setup.ROOT / "_toc.yml").read_text())
    named = {entry["file"] for entry in toc["chapters"]} | {toc["root"]}
    on_disk = {p.relative_to(notebook_setup.ROOT).with_suffix("").as_posix()
               for p in (notebook_setup.ROOT / "book").glob("*.ipynb")}
    assert on_disk <= named, f"notebooks not in _toc.yml: {sorted(on_disk - named)}"
    assert {p.relative_to(notebook_setup.ROOT).with_suffix("").as_posix() for p in NOTEBOOKS} == on_disk
    assert {"book/paper_ledger", "book/performance", "book/distributed"} <= on_disk


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_opens_with_the_note_and_the_setup_cell(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    assert notebook_setup.RUN_ALL_NOTE in nb.cells[0].source, "the title cell lacks the run-all note"
    code = [c for c in nb.cells if c.cell_type == "code"]
    revision = notebook_setup.pinned_revision(nb)
    assert revision is not None, f"{path.name}: the set-up cell names no revision; run tools/notebook_setup.py"
    assert code[0].get("id") == notebook_setup.SETUP_ID and code[0].source == notebook_setup.setup_source(revision), (
        f"{path.name}: first code cell is not the set-up cell; run tools/notebook_setup.py")
    assert "import torch" not in code[0].source and "from transformer_lib" not in code[0].source


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_the_setup_cell_installs_a_commit_of_this_history_or_the_release_not_a_branch(path: Path) -> None:
    """The pin is a commit of this repository's history (one the public repository therefore has
    once this branch is merged), or this version's release tag; never a branch name that moves."""
    revision = notebook_setup.pinned_revision(nbformat.read(path, as_version=4))
    if notebook_setup.RELEASE_TAG.fullmatch(revision):
        assert revision == f"v{notebook_setup.version()}", f"{path.name}: {revision} is not this version's tag"
    else:
        ancestor = subprocess.run(["git", "merge-base", "--is-ancestor", revision, "HEAD"], cwd=notebook_setup.ROOT)
        assert ancestor.returncode == 0, f"{path.name}: {revision} is not a commit before HEAD"
    assert "@main" not in notebook_setup.setup_source(revision)


def test_a_release_tag_is_installed_only_if_the_library_is_each_notebooks(monkeypatch: pytest.MonkeyPatch) -> None:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# A title")])
    nb = notebook_setup.updated(nb, COMMIT)
    path = NOTEBOOKS[0]
    monkeypatch.setattr(notebook_setup, "library_changed_since", lambda commit: ["transformer_lib/models.py"])
    with pytest.raises(SystemExit, match="the library changed since"):
        notebook_setup.revision_for(nb, path, release=True)
    assert notebook_setup.revision_for(nb, path, release=False) == COMMIT
    monkeypatch.setattr(notebook_setup, "library_changed_since", lambda commit: [])
    tag = notebook_setup.revision_for(nb, path, release=True)
    assert tag == f"v{notebook_setup.version()}"
    source = notebook_setup.setup_source(tag)
    assert f"git+{notebook_setup.repository()}@{{revision}}" in source and f'revision = "{tag}"' in source
    assert "release tag" in source
    assert notebook_setup.revision_for(notebook_setup.updated(nb, tag), path, release=False) == tag


def test_setup_cell_names_the_repository_of_config_yml() -> None:
    url = notebook_setup.repository()
    commit = "0123456789abcdef0123456789abcdef01234567"
    assert url.startswith("https://github.com/")
    assert f"transformer_lib[book] @ git+{url}@{{revision}}" in notebook_setup.setup_source(commit)
    for path in NOTEBOOKS:  # and no other repository address anywhere in a notebook's code
        nb = nbformat.read(path, as_version=4)
        for cell in nb.cells:
            if cell.cell_type == "code" and "github.com" in cell.source:
                assert cell.source == notebook_setup.setup_source(notebook_setup.pinned_revision(nb)), path.name
    for moving in ("main", "v1", "0123abc"):
        with pytest.raises(ValueError, match="40 hex digits"):
            notebook_setup.setup_source(moving)


COMMIT = "0123456789abcdef0123456789abcdef01234567"
# What pip 25 printed here, without a network, for a git requirement (the colour codes as a terminal gets them)
PIP_OFFLINE = (
    "  \x1b[1;31merror\x1b[0m: \x1b[1msubprocess-exited-with-error\x1b[0m\n  \n"
    "  \x1b[31m×\x1b[0m git clone --filter=blob:none --quiet https://github.com/transformer-computed/"
    "transformer-computed /tmp/pip-install-x/transformer-lib did not run successfully.\n"
    "  \x1b[31m│\x1b[0m exit code: \x1b[1;36m128\x1b[0m\n  \x1b[31m╰─>\x1b[0m [1 lines of output]\n"
    "  \x1b[31m   \x1b[0m fatal: unable to access 'https://github.com/transformer-computed/transformer-computed/': "
    "Could not resolve host: github.com\n      [end of output]\n  \n"
    "  \x1b[1;35mnote\x1b[0m: This error originates from a subprocess, and is likely not a problem with pip.\n"
    "\x1b[1;31merror\x1b[0m: \x1b[1msubprocess-exited-with-error\x1b[0m\n"
    "\x1b[1;35mnote\x1b[0m: This error originates from a subprocess, and is likely not a problem with pip.\n"
)


def run_setup(tmp_path: Path, installed: bool, pip: str = "record") -> str:
    """Run the set-up cell in a fresh IPython shell, with pip replaced; what it printed."""
    cell = tmp_path / "cell.py"
    hide = "" if installed else (
        "import importlib.util as u\n_find = u.find_spec\n"
        "u.find_spec = lambda name, *a: None if name == 'transformer_lib' else _find(name, *a)\n")
    fake = {
        "record": "def run(cmd, **kw):\n    print('PIP', ' '.join(cmd[1:]), sorted(kw.items()))\n",
        "fail": ("def run(cmd, **kw):\n    raise subprocess.CalledProcessError(1, cmd, '', "
                 "'Collecting x\\nERROR: Could not find a version that satisfies the requirement\\n')\n"),
        "offline": f"def run(cmd, **kw):\n    raise subprocess.CalledProcessError(1, cmd, '', {PIP_OFFLINE!r})\n",
    }[pip]
    setup = notebook_setup.setup_source(COMMIT)
    check = "import sys, os\nassert 'torch' not in sys.modules\nprint('OMP', os.environ['OMP_WAIT_POLICY'])\n"
    cell.write_text(
        "import subprocess\n" + fake + "subprocess.run = run\n" + hide
        + "from IPython.core.interactiveshell import InteractiveShell\n"
        + "shell = InteractiveShell.instance(colors='nocolor')\n"
        + f"shell.run_cell({setup!r})\nshell.run_cell({check!r})\n")
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    result = subprocess.run([sys.executable, str(cell)], capture_output=True, text=True, env=env, check=True,
                            cwd=tmp_path)
    return result.stdout + result.stderr


def test_setup_cell_installs_only_when_the_library_is_missing(tmp_path: Path) -> None:
    assert importlib.util.find_spec("transformer_lib") is not None
    assert run_setup(tmp_path, installed=True).splitlines() == ["OMP PASSIVE"]
    url = notebook_setup.repository()
    says, pip, omp = run_setup(tmp_path, installed=False).splitlines()
    assert says.startswith(f"Installing the book's library (transformer_lib at {COMMIT})")  # before pip runs
    requirement = f"transformer_lib[book] @ git+{url}@{COMMIT}"
    assert pip.startswith(f"PIP -m pip install --quiet --retries 2 --timeout 30 {requirement} ")
    assert f"('timeout', {notebook_setup.PIP_TIMEOUT_S})" in pip and "('check', True)" in pip  # bounded in time
    assert omp == "OMP PASSIVE"


def test_a_failed_install_says_what_happened_and_the_two_ways_on_without_a_traceback(tmp_path: Path) -> None:
    shown = run_setup(tmp_path, installed=False, pip="fail")
    assert "Could not install the book's library: ERROR: Could not find a version" in shown
    assert f"https://mybinder.org/v2/gh/transformer-computed/transformer-computed/{COMMIT}" in shown
    assert f"git clone {notebook_setup.repository()}" in shown and f"git checkout {COMMIT}" in shown
    assert "Traceback" not in shown and "subprocess" not in shown and "CalledProcessError" not in shown
    assert len(shown.splitlines()) <= 9, shown  # the line that says what it installs, then the message


def test_a_failed_install_names_pips_real_cause_without_colour_codes(tmp_path: Path) -> None:
    """Offline, pip's last line is generic ("This error originates from a subprocess"); the cause is
    git's first error line, which the message shows, without the terminal's colour codes."""
    shown = run_setup(tmp_path, installed=False, pip="offline")
    message = next(line for line in shown.splitlines() if line.startswith("Could not install"))
    assert message == ("Could not install the book's library: fatal: unable to access "
                       "'https://github.com/transformer-computed/transformer-computed/': "
                       "Could not resolve host: github.com"), shown
    assert "\x1b" not in shown and "originates from a subprocess" not in shown


def test_executing_with_an_uncommitted_library_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """No commit holds an uncommitted library: execute_notebooks.py must not pin one."""
    monkeypatch.setattr(notebook_setup, "git", lambda *args: " M transformer_lib/models.py" if args[0] == "status"
                        else COMMIT)
    with pytest.raises(SystemExit, match="uncommitted changes"):
        notebook_setup.executed_commit()
    monkeypatch.setattr(notebook_setup, "git", lambda *args: "" if args[0] == "status" else COMMIT)
    assert notebook_setup.executed_commit() == COMMIT


def test_notebook_setup_check_passes() -> None:
    result = subprocess.run([sys.executable, str(notebook_setup.ROOT / "tools" / "notebook_setup.py"), "--check"],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
