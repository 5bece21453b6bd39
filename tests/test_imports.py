"""Importing the library costs what it gives: ``import transformer_lib`` and every module outside the
figures and the browser load none of the heavy libraries that only some cells use (plotly, pandas,
ipywidgets, sacrebleu, tqdm); those load on first use.

Each check runs in a fresh interpreter in which those libraries cannot be imported (their entries
in ``sys.modules`` are ``None``, so an ``import`` of them raises ImportError), as if they were not
installed. torch imports tqdm itself, inside a ``try``, and carries on without it, so tqdm is
covered too. The same block makes a module that does import one of them (the figures) fail, so it
bites. That the libraries still load when used is the other tests' business (tests/test_evaluation.py
scores BLEU, tests/test_figures_explorers.py drives the explorers, tests/test_training.py draws a bar).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LAZY = ("plotly", "pandas", "ipywidgets", "sacrebleu", "tqdm")
# The top level, the model (one module per concept, chapters 1 to 6) and the rest that a chapter's
# first cell imports besides figures and explorers: training, decoding, evaluation, the shipped models.
CHEAP = (
    "transformer_lib", "transformer_lib.rnn", "transformer_lib.embeddings", "transformer_lib.tokenization",
    "transformer_lib.positional_encoding", "transformer_lib.attention", "transformer_lib.multi_head_attention",
    "transformer_lib.residual", "transformer_lib.feed_forward", "transformer_lib.encoder",
    "transformer_lib.decoder", "transformer_lib.models", "transformer_lib.config", "transformer_lib.capture",
    "transformer_lib.corpus", "transformer_lib.grammar", "transformer_lib.training", "transformer_lib.decoding",
    "transformer_lib.greedy_trace", "transformer_lib.evaluation", "transformer_lib.checkpoint",
    "transformer_lib.language_model", "transformer_lib.sampling", "transformer_lib.analysis",
    "transformer_lib.pretrained", "transformer_lib.source", "transformer_lib.torch_reference",
    "transformer_lib.measure", "transformer_lib.paper",
)
# Runs in the subprocess: block LAZY, import each module, report what failed and what got loaded.
PROBE = """\
import importlib, json, sys
lazy = {lazy!r}
for name in lazy:
    sys.modules[name] = None  # "import name" now raises ImportError, as if it were not installed
failed = {{}}
for module in {modules!r}:
    try:
        importlib.import_module(module)
    except ImportError as err:
        failed[module] = str(err)
loaded = sorted(name for name in sys.modules if name.split(".")[0] in lazy and sys.modules[name] is not None)
print(json.dumps({{"failed": failed, "loaded": loaded}}))
"""


def import_blocked(modules: tuple[str, ...]) -> dict:
    """Import ``modules`` in a fresh interpreter where LAZY cannot be imported: what failed, what loaded."""
    probe = PROBE.format(lazy=LAZY, modules=modules)
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, timeout=300,
                         env={**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"})
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_the_library_and_its_models_import_none_of_the_heavy_libraries() -> None:
    # One interpreter (each costs a torch import): the cheap modules first, then two that need plotly,
    # which must fail under the block (the explorers for their figures; ipywidgets only when one is made).
    needs_plotly = ("transformer_lib.figures.display", "transformer_lib.browser.explorers")
    result = import_blocked(CHEAP + needs_plotly)
    assert result["loaded"] == []
    assert sorted(result["failed"]) == sorted(needs_plotly)
    assert all("plotly" in message for message in result["failed"].values())
