"""tools/execute_notebooks.py's clean-up of a notebook's outputs before it is saved."""

from __future__ import annotations

import sys

from tools.book_browser import ROOT

sys.path.insert(0, str(ROOT / "tools"))
from execute_notebooks import coalesce_streams, final_progress_lines  # noqa: E402


def _cell(*outputs: dict) -> dict:
    return {"cell_type": "code", "source": "train()", "outputs": list(outputs)}


def _stream(name: str, text: str) -> dict:
    return {"output_type": "stream", "name": name, "text": text}


def test_a_progress_bar_keeps_only_what_a_terminal_shows() -> None:
    bar = "training:   0%|   | 0/3\rtraining:  33%|█  | 1/3\rtraining: 100%|███| 3/3\r"
    nb = {"cells": [_cell(_stream("stderr", bar), _stream("stdout", "3 steps in 1 s\n"), _stream("stderr", "\n"))]}
    outputs = final_progress_lines(nb)["cells"][0]["outputs"]
    assert outputs == [_stream("stderr", "training: 100%|███| 3/3"), _stream("stdout", "3 steps in 1 s\n")]


def test_outputs_without_carriage_returns_are_left_alone() -> None:
    cell = _cell(_stream("stdout", "a\n\nb\n"), _stream("stderr", "\n"), {"output_type": "display_data", "data": {}})
    nb = {"cells": [cell]}
    assert final_progress_lines(nb)["cells"][0]["outputs"] == cell["outputs"]
    # and several lines, each redrawn, keep their own last state
    nb = {"cells": [_cell(_stream("stderr", "a 1\ra 2\nb 1\rb 2\n"))]}
    assert final_progress_lines(nb)["cells"][0]["outputs"][0]["text"] == "a 2\nb 2\n"


def test_consecutive_prints_become_one_output() -> None:
    nb = {"cells": [_cell(_stream("stdout", "a\n"), _stream("stdout", "b\n"), _stream("stderr", "c\n"))]}
    assert coalesce_streams(nb)["cells"][0]["outputs"] == [_stream("stdout", "a\nb\n"), _stream("stderr", "c\n")]
