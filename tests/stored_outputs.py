"""Outputs computed elsewhere compared with a notebook's stored ones, by nbval's own rules.

The JupyterLab test (tests/test_jupyterlab.py) runs every chapter as a Binder reader does: one thread,
the machine's own CPU dispatch, the package installed from its wheel. Comparing what that run
computed with the stored outputs makes it the notebooks' one-thread check, so that no second nbval
run has to execute the chapters again for it (tools/test.sh).

The comparison is nbval's: its per-cell options (``# NBVAL_IGNORE_OUTPUT``, ``NBVAL_SKIP``, ...),
its merging of streams (carriage returns and backspaces applied), the keys it never compares
(metadata, widget model ids, images) and the sanitising patterns of tests/nbval_sanitize.cfg. Only
the plumbing differs: nbval reads outputs from a kernel's messages, this reads them from the
notebook a front end holds after "Run All".
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from types import SimpleNamespace

import nbformat
from nbval.plugin import (  # nbval's own comparison, so that both runs judge alike
    IPyNbCell,
    coalesce_streams,
    find_comment_markers,
    find_metadata_tags,
    get_sanitize_patterns,
    nocolors,
)

SANITIZE = Path(__file__).with_name("nbval_sanitize.cfg")
# What nbval's IPyNbFile skips when run with --nbval (not --nbdime): see nbval.plugin.IPyNbFile.
SKIP_COMPARE = ("metadata", "traceback", "prompt_number", "output_type", "name", "execution_count",
                "application/vnd.jupyter.widget-view+json", "image/png", "image/jpeg")


def _comparer() -> SimpleNamespace:
    """An object with what nbval's ``IPyNbCell.compare_outputs`` reads from ``self``."""
    cell = SimpleNamespace(
        parent=SimpleNamespace(skip_compare=SKIP_COMPARE,
                               sanitize_patterns=dict(get_sanitize_patterns(SANITIZE.read_text()))),
        colors=nocolors, comparison_traceback=[])
    cell.sanitize = lambda s: IPyNbCell.sanitize(cell, s)
    cell.format_output_compare = lambda key, left, right: cell.comparison_traceback.append(
        f"{key}: stored {left!r:.1500}\n  computed {right!r:.1500}")
    return cell


def _options(cell: nbformat.NotebookNode) -> dict:
    options = defaultdict(bool, find_metadata_tags(cell.metadata))
    options.update(dict(find_comment_markers(cell.source)))
    options.setdefault("check", True)
    return options


def _joined(output: dict) -> dict:
    """A front end may keep multi-line text as a list of lines, as the .ipynb file does; nbformat.read
    joins them, and so does this."""
    output = dict(output)
    if isinstance(output.get("text"), list):
        output["text"] = "".join(output["text"])
    if isinstance(output.get("data"), dict):
        output["data"] = {k: "".join(v) if isinstance(v, list) else v for k, v in output["data"].items()}
    return output


def differences(stored_path: Path, computed_cells: list[dict]) -> list[str]:
    """For each code cell of ``stored_path`` whose outputs nbval would check, the difference from
    the outputs of the same cell in ``computed_cells`` (code cells, in order, as nbformat dicts)."""
    stored = [c for c in nbformat.read(stored_path, as_version=4).cells if c.cell_type == "code"]
    if len(stored) != len(computed_cells):
        return [f"{len(stored)} code cells stored, {len(computed_cells)} run"]
    problems = []
    for number, (reference, computed) in enumerate(zip(stored, computed_cells, strict=True)):
        options = _options(reference)
        if options["skip"] or not options["check"] or reference.execution_count is None:
            continue
        outputs = [nbformat.from_dict(_joined(o)) for o in computed.get("outputs", [])]
        comparer = _comparer()
        if not IPyNbCell.compare_outputs(comparer, coalesce_streams(outputs), coalesce_streams(reference.outputs)):
            problems.append(f"cell {number}: outputs differ from the stored ones\n"
                            + "\n".join(str(line) for line in comparer.comparison_traceback)[:3000])
    return problems
