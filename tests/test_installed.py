"""The package as readers install it, outside the checkout (tests/reader_env.py's environment: only
binder/requirements.txt's libraries; the checkout never on the path).

* One chapter alone in an empty folder, run headless (nbclient) where transformer_lib is not
  installed: its set-up cell installs the library (``transformer_lib[book] @ git+URL@COMMIT``, the
  cell as a reader gets it; git is pointed at this repository instead of GitHub) and the chapter
  runs to the end. Where the install cannot succeed, the cell shows its one short message, with
  the two ways on, and no traceback.
* ``pip install`` of the repository, then, from another folder: every shipped model loads, and
  bertviz's two views of the shipped Transformer carry d3 and jQuery from the installed package.

Slow (a chapter, pip installs): the environment is shared with tests/test_jupyterlab.py.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import nbformat
import pytest

from tools import notebook_setup

from . import reader_env

CHAPTER = "02_embeddings.ipynb"  # a short chapter: the test is about the installing, not the chapter


@pytest.fixture(scope="module")
def venv(reader_venv: Path) -> Path:
    return reader_venv


def git_pointing_at(repository: Path | str, tmp_path: Path) -> dict[str, str]:
    """An environment whose git fetches the book's GitHub URL from ``repository`` instead."""
    config = tmp_path / "gitconfig"
    config.write_text(f'[url "{repository}"]\n\tinsteadOf = {notebook_setup.repository()}\n'
                      "[safe]\n\tdirectory = *\n")
    # and pip's own cache, empty: a built wheel of the commit would be installed without asking git
    return {"GIT_CONFIG_GLOBAL": str(config), "GIT_CONFIG_NOSYSTEM": "1", "PIP_CACHE_DIR": str(tmp_path / "pip-cache")}


def chapter_alone(folder: Path, commit: str) -> Path:
    """The chapter, its set-up cell installing ``commit``, alone in ``folder`` (its stored outputs
    cleared, so that what the run leaves is what it did)."""
    nb = notebook_setup.updated(nbformat.read(notebook_setup.ROOT / "book" / CHAPTER, as_version=4), commit)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    folder.mkdir()
    nbformat.write(nb, folder / CHAPTER)
    return folder / CHAPTER


HEADLESS = """
import sys

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

source, executed, folder = sys.argv[1:]
nb = nbformat.read(source, as_version=4)
try:  # the environment's own python3 kernel, as a reader's Jupyter starts it
    NotebookClient(nb, timeout=900, kernel_name="python3", resources={"metadata": {"path": folder}}).execute()
    print("ran to the end")
except CellExecutionError:
    print("stopped at an error")
nbformat.write(nb, executed)
"""


def run_headless(path: Path, venv: Path, env: dict[str, str]) -> tuple[str, nbformat.NotebookNode]:
    """Run ``path`` top to bottom with nbclient in ``venv``, from ``path``'s folder: (what happened,
    the executed notebook)."""
    executed = path.parent.parent / f"executed-{path.name}"
    result = subprocess.run([str(reader_env.python(venv)), "-c", HEADLESS, str(path), str(executed), str(path.parent)],
                            capture_output=True, text=True, env=env, cwd=path.parent, timeout=1800)
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout.strip().splitlines()[-1], nbformat.read(executed, as_version=4)


def error_outputs(nb: nbformat.NotebookNode) -> list[dict]:
    return [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []) if o.output_type == "error"]


def test_one_chapter_alone_installs_the_library_with_its_set_up_cell_and_runs_to_the_end(
        venv: Path, tmp_path: Path) -> None:
    reader_env.uninstall(venv)
    path = chapter_alone(tmp_path / "course", notebook_setup.git("rev-parse", "HEAD"))
    git_dir = notebook_setup.git("rev-parse", "--path-format=absolute", "--git-common-dir")
    env = reader_env.clean_env(OMP_NUM_THREADS="1", **git_pointing_at(f"file://{git_dir}", tmp_path))
    outcome, nb = run_headless(path, venv, env)
    assert outcome == "ran to the end" and not error_outputs(nb), error_outputs(nb)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.execution_count for c in code), "a cell did not run"
    location = reader_env.installed_location(venv, cwd=tmp_path)
    assert venv in location.parents, f"transformer_lib is imported from {location}"


def test_when_the_install_cannot_succeed_the_set_up_cell_says_so_in_one_message(venv: Path, tmp_path: Path) -> None:
    reader_env.uninstall(venv)
    commit = notebook_setup.git("rev-parse", "HEAD")
    path = chapter_alone(tmp_path / "course", commit)
    env = reader_env.clean_env(**git_pointing_at(f"file://{tmp_path / 'no-such-repository'}", tmp_path))
    outcome, nb = run_headless(path, venv, env)
    errors = error_outputs(nb)
    assert outcome == "stopped at an error" and len(errors) == 1 and nb.cells[1].get("id") == notebook_setup.SETUP_ID
    said, failed = nb.cells[1].outputs  # what it installs, then why it could not: the set-up cell, and only it
    assert said["output_type"] == "stream" and said["text"].startswith("Installing the book's library"), said
    assert failed == errors[0], "the set-up cell, and only it, failed"
    shown = "\n".join(errors[0]["traceback"])
    # the cause is git's own first error line (the repository is missing), not pip's generic last line
    assert shown.startswith("Could not install the book's library: fatal: "), shown
    assert "no-such-repository" in shown.splitlines()[0] and "\x1b" not in shown, shown
    assert "Two ways on:" in shown and f"/{commit}?urlpath=lab/tree/book" in shown and "git clone" in shown
    assert "Traceback" not in shown and "File " not in shown and len(shown.splitlines()) <= 8, shown
    assert all(c.get("execution_count") is None for c in nb.cells[2:] if c.cell_type == "code")


LOAD_EVERYTHING = """
import json
from importlib.resources import files

from transformer_lib.capture import capture_translation
from transformer_lib.decoding import translate
from transformer_lib.figures.bertviz import bertviz_head_view, bertviz_model_view
from transformer_lib.pretrained import book_model, load_shipped, snapshot_steps
from transformer_lib.pretrained.shipped import WEIGHTS_DIR

stored = {p.name for p in (files("transformer_lib.pretrained") / "weights").iterdir()}
# a model is its weights and its configuration; the replay's snapshots are weights of book_transformer
names = sorted(n.removesuffix(".safetensors") for n in stored
               if n.endswith(".safetensors") and n.replace(".safetensors", ".json") in stored)
loaded = {name: sum(p.numel() for p in load_shipped(name).model.parameters()) for name in names}
loaded.update({f"book_transformer_step{step:04d}": sum(p.numel() for p in book_model(step=step).model.parameters())
               for step in snapshot_steps() if f"book_transformer_step{step:04d}.safetensors" in stored})
book = load_shipped("book_transformer")
result = translate(book.model, "the cat sees the dog", book.src_vocab, book.tgt_vocab)
maps = capture_translation(book.model, result, book.src_vocab, book.tgt_vocab)
views = [view(maps, assets="inline").data for view in (bertviz_head_view, bertviz_model_view)]
print(json.dumps({"weights": str(WEIGHTS_DIR), "loaded": loaded, "translation": result.text,
                  "views": [len(v) for v in views], "d3": all("d3js.org" in v for v in views),
                  "jquery": all("jQuery v3.7.1" in v for v in views)}))
"""


def test_pip_install_of_the_repository_loads_every_shipped_model_from_another_folder(
        venv: Path, tmp_path: Path) -> None:
    reader_env.uninstall(venv)
    source = reader_env.package_source(tmp_path / "repository")
    reader_env.install(venv, source)  # with its dependencies: all there already, pip adds nothing
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    result = subprocess.run([str(reader_env.python(venv)), "-c", LOAD_EVERYTHING], cwd=elsewhere, text=True,
                            capture_output=True, env=reader_env.clean_env(OMP_NUM_THREADS="1"))
    assert result.returncode == 0, result.stderr[-3000:]
    seen = json.loads(result.stdout.strip().splitlines()[-1])
    shipped = sorted(p.stem for p in (notebook_setup.ROOT / "transformer_lib" / "pretrained" / "weights")
                     .glob("*.safetensors"))
    assert sorted(seen["loaded"]) == shipped and len(shipped) >= 4 and all(seen["loaded"].values())
    assert str(venv) in seen["weights"], "the models were read from elsewhere than the installed package"
    assert seen["translation"].strip(), "the shipped Transformer translated nothing"
    assert seen["d3"] and seen["jquery"] and min(seen["views"]) > 300_000, seen["views"]
