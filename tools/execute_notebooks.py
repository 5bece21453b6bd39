"""Re-execute the book's notebooks in place, saving their outputs and ipywidgets state.

    python tools/execute_notebooks.py                 # every notebook under book/
    python tools/execute_notebooks.py book/x.ipynb    # just these

Each notebook runs top to bottom in a fresh ``python3`` kernel (nbclient), from its own folder,
importing ``transformer_lib`` from this checkout. ``store_widget_state=True`` writes the widgets'
state into the notebook metadata, which is what lets the built book draw them without a kernel.
The kernel sees ``TRANSFORMER_BOOK_BUILD=1``, so bertviz views load their libraries from the
book's static folder instead of carrying them (``transformer_lib.figures.bertviz``), and
``OMP_NUM_THREADS=1``: the stored outputs are computed as Binder's one-CPU reader runs them, so the
times a page prints (chapter 7's training) are the ones the performance appendix budgets. On the
2-core machine that executes them, two threads trained chapter 7's model slower than one (27 to 29 ms
a step against 16 to 21, OMP_WAIT_POLICY=PASSIVE, as the chapter sets it).

A markdown cell's inline expressions (``{eval}`name```, the numbers the prose quotes: see
``transformer_lib.prose``) are evaluated in the kernel at the cell's place in the run, and their results
stored in the cell's ``user_expressions`` metadata, where JupyterLab (jupyterlab-myst) and the book
(book/_ext/bound_prose.py) read them; an expression that fails stops the run.

A notebook's set-up cell is written first (tools/notebook_setup.py) with the commit it runs from,
which a reader's single notebook installs; the library must be committed (else this stops).

Re-running on unchanged code changes nothing but that commit: widget model ids (random per kernel) are renamed
to ids derived from the notebook's name and their order, and no timings are recorded.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import sys
from pathlib import Path

import nbformat
import notebook_setup  # tools/, beside this script
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's package, as the kernel's
from transformer_lib.prose import expressions  # noqa: E402 -- the one reader of {eval} roles

ROOT = Path(__file__).resolve().parent.parent
MAX_BYTES = 2 * 1024 * 1024  # a committed notebook stays under 2 MB
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"


def notebooks() -> list[Path]:
    skip = {"_build", ".ipynb_checkpoints"}
    return sorted(p for p in (ROOT / "book").rglob("*.ipynb") if not skip & set(p.parts))


def stable_widget_ids(nb: dict, name: str) -> dict:
    """Rename the kernel's random widget model ids, and order the saved state, so that both depend
    only on the notebook: ids come from ``name`` and each model's place in a walk that starts at the
    views in the outputs (in cell order) and follows the models' references to one another."""
    widgets = nb.get("metadata", {}).get("widgets", {}).get(WIDGET_STATE, {})
    state = widgets.get("state", {})
    if not state:
        return nb
    order: list[str] = []

    def visit(model_id: str) -> None:
        if model_id in state and model_id not in order:
            order.append(model_id)
            for ref in re.findall(r"IPY_MODEL_([0-9a-f]{32})", json.dumps(state[model_id], sort_keys=True)):
                visit(ref)

    for ref in re.findall(r'"model_id": "([0-9a-f]{32})"', json.dumps(nb["cells"], sort_keys=True)):
        visit(ref)
    # Models no view reaches (rare): after the others, ordered by their content.
    masked = {m: re.sub(r"[0-9a-f]{32}", "", json.dumps(state[m], sort_keys=True)) for m in state}
    order += sorted((m for m in state if m not in order), key=masked.__getitem__)
    widgets["state"] = {m: state[m] for m in order}
    text = json.dumps(nb)
    for i, old in enumerate(order):
        text = text.replace(old, hashlib.sha1(f"{name}:{i}".encode()).hexdigest()[:32])
    return json.loads(text)


def coalesce_streams(nb: dict) -> dict:
    """Join consecutive stdout (or stderr) outputs of a cell into one: how the kernel splits a
    cell's prints into messages depends on timing, so the split would change from run to run."""
    for cell in nb.get("cells", []):
        merged: list = []
        for output in cell.get("outputs", []):
            previous = merged[-1] if merged else None
            if (output.get("output_type") == "stream" and previous is not None
                    and previous.get("output_type") == "stream" and previous.get("name") == output.get("name")):
                previous["text"] = "".join(previous["text"]) + "".join(output["text"])
            else:
                merged.append(output)
        if "outputs" in cell:
            cell["outputs"] = merged
    return nb


def final_progress_lines(nb: dict) -> dict:
    """Keep what a terminal would show of a progress bar: a text bar (tqdm) redraws its line with
    carriage returns, which JupyterLab honours but the static book prints as one line per redraw
    (a hundred lines for chapter 7's training). Each line keeps the text after its last ``\r``;
    the bare newline the bar writes when it closes is dropped with the empty output it leaves."""
    for cell in nb.get("cells", []):
        outputs = cell.get("outputs", [])
        redrawn = False
        for output in outputs:
            text = "".join(output.get("text", "")) if output.get("output_type") == "stream" else ""
            if "\r" in text:
                lines = text.split("\n")
                output["text"] = "\n".join(line.rstrip("\r").rsplit("\r", 1)[-1] for line in lines)
                redrawn = True
        if redrawn:
            cell["outputs"] = [o for o in outputs if o.get("output_type") != "stream" or "".join(o["text"]).strip()]
    return nb


class ProseClient(NotebookClient):
    """nbclient, plus the markdown cells' ``{eval}`` expressions evaluated in order, as JupyterLab does."""

    async def async_execute_cell(self, cell, cell_index, execution_count=None, store_history=True):
        if cell.cell_type != "markdown":
            return await super().async_execute_cell(cell, cell_index, execution_count, store_history)
        found = expressions(cell.source)
        if not found:
            cell.metadata.pop("user_expressions", None)
            return cell
        msg_id = self.kc.execute("", silent=True, store_history=False,
                                 user_expressions={str(i): e for i, e in enumerate(found)})
        reply = await self.async_wait_for_reply(msg_id, cell)
        results = reply["content"]["user_expressions"]
        stored = []
        for i, expression in enumerate(found):
            result = results[str(i)]
            if result.get("status") != "ok":
                raise CellExecutionError(f"markdown cell {cell_index}: {{eval}}`{expression}` failed: "
                                         f"{result.get('ename')}: {result.get('evalue')}", "", "")
            stored.append({"expression": expression,
                           "result": {"status": "ok", "data": {"text/plain": result["data"]["text/plain"]},
                                      "metadata": {}}})
        cell.metadata["user_expressions"] = stored
        return cell


def execute(path: Path, timeout: int) -> int:
    nb = nbformat.read(path, as_version=4)
    if notebook_setup.is_book_notebook(path):  # its set-up cell installs the commit these outputs come from
        notebook_setup.updated(nb, notebook_setup.executed_commit())
    client = ProseClient(
        nb, kernel_name="python3", timeout=timeout, store_widget_state=True, record_timing=False,
        resources={"metadata": {"path": str(path.parent)}},
    )
    client.execute()
    plain = final_progress_lines(coalesce_streams(json.loads(nbformat.writes(nb))))
    nb = nbformat.from_dict(stable_widget_ids(plain, path.stem))
    nbformat.validate(nb)
    text = nbformat.writes(nb) + "\n"
    path.write_text(text)
    return len(text.encode())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="*", type=Path, help="notebooks to run (default: all under book/)")
    parser.add_argument("--timeout", type=int, default=600, help="seconds allowed per cell")
    args = parser.parse_args()
    # The kernel inherits this environment: our transformer_lib first, and a fixed hash seed.
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    os.environ["PYTHONHASHSEED"] = "0"
    os.environ["TRANSFORMER_BOOK_BUILD"] = "1"
    os.environ["OMP_NUM_THREADS"] = "1"  # as a Binder reader's one CPU (see above)
    too_big = []
    for path in [p.resolve() for p in args.paths] or notebooks():
        size = execute(path, args.timeout)
        print(f"{path.relative_to(ROOT)}: {size / 1024:.0f} kB")
        if size > MAX_BYTES:
            too_big.append(path)
    if too_big:
        print(f"over {MAX_BYTES // 1024} kB: {', '.join(map(str, too_big))}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
