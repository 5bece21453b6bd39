"""Each chapter's opening (tools/notebook_setup.py): the run-all note, and a set-up cell that runs
before torch is imported and installs the library from the repository _config.yml names."""

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
    assert code[0].get("id") == notebook_setup.SETUP_ID and code[0].source == notebook_setup.setup_source(), (
        f"{path.name}: first code cell is not the set-up cell; run tools/notebook_setup.py")
    assert "import torch" not in code[0].source and "from transformer_lib" not in code[0].source


def test_setup_cell_names_the_repository_of_config_yml() -> None:
    url, branch = notebook_setup.repository()
    assert url.startswith("https://github.com/")
    assert f'"git+{url}@{branch}"' in notebook_setup.setup_source()
    for path in CHAPTERS:  # and no other repository address anywhere in a chapter's code
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type == "code" and "github.com" in cell.source:
                assert cell.source == notebook_setup.setup_source(), path.name


def run_setup(tmp_path: Path, installed: bool) -> str:
    """Run the set-up cell in a fresh interpreter, with pip replaced by a recorder; what pip was asked."""
    script = tmp_path / "cell.py"
    hide = "" if installed else (
        "import importlib.util as u\n_find = u.find_spec\n"
        "u.find_spec = lambda name, *a: None if name == 'transformer_lib' else _find(name, *a)\n")
    record = ("import subprocess\nsubprocess.check_call = lambda cmd: print('PIP', ' '.join(cmd[1:]))\n")
    check = "\nimport sys, os\nassert 'torch' not in sys.modules\nprint('OMP', os.environ['OMP_WAIT_POLICY'])\n"
    script.write_text(hide + record + notebook_setup.setup_source() + check)
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, check=True)
    return result.stdout


def test_setup_cell_installs_only_when_the_library_is_missing(tmp_path: Path) -> None:
    assert importlib.util.find_spec("transformer_lib") is not None
    assert run_setup(tmp_path, installed=True).splitlines() == ["OMP PASSIVE"]
    url, branch = notebook_setup.repository()
    assert run_setup(tmp_path, installed=False).splitlines() == [
        f"PIP -m pip install --quiet git+{url}@{branch}", "OMP PASSIVE"]


def test_notebook_setup_check_passes() -> None:
    result = subprocess.run([sys.executable, str(notebook_setup.ROOT / "tools" / "notebook_setup.py"), "--check"],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
