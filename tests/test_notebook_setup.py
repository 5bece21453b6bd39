"""Each chapter's opening (tools/notebook_setup.py): the run-all note, and a set-up cell that runs
before torch is imported and, where the library is missing, installs it from the repository
_config.yml names, at the commit the chapter was executed with, with a short message on failure."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from tools import notebook_setup

CHAPTERS = notebook_setup.chapters()


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_chapter_opens_with_the_note_and_the_setup_cell(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    assert notebook_setup.RUN_ALL_NOTE in nb.cells[0].source, "the title cell lacks the run-all note"
    code = [c for c in nb.cells if c.cell_type == "code"]
    commit = notebook_setup.pinned_commit(nb)
    assert commit is not None, f"{path.name}: the set-up cell names no commit; run tools/notebook_setup.py"
    assert code[0].get("id") == notebook_setup.SETUP_ID and code[0].source == notebook_setup.setup_source(commit), (
        f"{path.name}: first code cell is not the set-up cell; run tools/notebook_setup.py")
    assert "import torch" not in code[0].source and "from transformer_lib" not in code[0].source


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_the_setup_cell_installs_a_commit_of_this_history_not_a_branch(path: Path) -> None:
    """The pin is a commit of this repository's history (one the public repository therefore has
    once this branch is merged), not a branch name that moves."""
    commit = notebook_setup.pinned_commit(nbformat.read(path, as_version=4))
    ancestor = subprocess.run(["git", "merge-base", "--is-ancestor", commit, "HEAD"], cwd=notebook_setup.ROOT)
    assert ancestor.returncode == 0, f"{path.name}: {commit} is not a commit before HEAD"
    assert "@main" not in notebook_setup.setup_source(commit)


def test_setup_cell_names_the_repository_of_config_yml() -> None:
    url = notebook_setup.repository()
    commit = "0123456789abcdef0123456789abcdef01234567"
    assert url.startswith("https://github.com/")
    assert f"transformer_lib[book] @ git+{url}@{{commit}}" in notebook_setup.setup_source(commit)
    for path in CHAPTERS:  # and no other repository address anywhere in a chapter's code
        nb = nbformat.read(path, as_version=4)
        for cell in nb.cells:
            if cell.cell_type == "code" and "github.com" in cell.source:
                assert cell.source == notebook_setup.setup_source(notebook_setup.pinned_commit(nb)), path.name
    with pytest.raises(ValueError, match="40 hex digits"):
        notebook_setup.setup_source("main")


COMMIT = "0123456789abcdef0123456789abcdef01234567"


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
    pip, omp = run_setup(tmp_path, installed=False).splitlines()
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
    assert len(shown.splitlines()) <= 8, shown


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
