"""Splitting ``training.py`` into ``loss``, ``optimiser``, ``training_step`` and ``training`` (issue 41)
changed no number: 40 steps of the book's recipe, trained once by the loop as it was before the split
(its source read from the repository's history) and once by the loop as it is, give equal weights,
tensor by tensor (``torch.equal``, not a tolerance), and equal losses step by step.

Both runs use the same model code; only the training code differs (the loss, Adam, the schedule, the
step, the loop). ``TrainingOptions``, a plain dataclass of settings, is the current one in both runs,
so that ``train_book_model`` can hand the same options to either loop.
"""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
import types
from pathlib import Path

import pytest
import torch

from transformer_lib import training
from transformer_lib.pretrained import recipe

ROOT = Path(__file__).resolve().parent.parent
BEFORE_THE_SPLIT = "e061d3620552e6cb4ac5fca8fe70681e52b14104"  # the last commit with training.py whole
STEPS = 40
VALIDATION = ("validation", "validation_tensors", "validation_models")  # validation.py, split (issue 41)


def training_before_the_split() -> types.ModuleType:
    """``transformer_lib/training.py`` at ``BEFORE_THE_SPLIT``, loaded as a module of the package (its
    relative imports, ``.progress`` and ``.validation``, resolve to today's package; ``_checks_of_today``)."""
    source = subprocess.run(["git", "show", f"{BEFORE_THE_SPLIT}:transformer_lib/training.py"], cwd=ROOT,
                            capture_output=True, text=True, check=True).stdout
    name = "transformer_lib._training_before_the_split"
    module = types.ModuleType(name)
    module.__package__ = "transformer_lib"
    sys.modules[name] = module  # dataclasses look their module up while the file runs
    try:
        source = _checks_of_today(source, module)
        exec(compile(source, f"{BEFORE_THE_SPLIT[:7]}:transformer_lib/training.py", "exec"), module.__dict__)
    finally:
        del sys.modules[name]
    module.TrainingOptions = training.TrainingOptions  # settings only: the old loop accepts today's
    return module


def _checks_of_today(source: str, module: types.ModuleType) -> str:
    """The old file imports its argument checks from ``.validation``, since split in three (``VALIDATION``):
    each name is put into ``module`` from the one that holds it today, and the import blanked (the line
    numbers kept). Checks decide no number, so the runs still compare the training code alone."""
    lines = source.splitlines(keepends=True)
    holders = [importlib.import_module(f"transformer_lib.{name}") for name in VALIDATION]
    for node in ast.parse(source).body:
        if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module == "validation":
            for alias in node.names:
                holder = next(holder for holder in holders if hasattr(holder, alias.name))
                setattr(module, alias.asname or alias.name, getattr(holder, alias.name))
            lines[node.lineno - 1: node.end_lineno] = ["\n"] * (node.end_lineno - node.lineno + 1)
    return "".join(lines)


@pytest.fixture(scope="module")
def both_runs() -> tuple[tuple[torch.nn.Module, training.TrainingHistory], tuple[torch.nn.Module, object]]:
    before = training_before_the_split()
    assert before.train is not training.train and before.training_step is not training.training_step
    now_model, _, _, now_history = recipe.train_book_model(steps=STEPS, progress=False, device="cpu")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(recipe, "train", before.train)
        old_model, _, _, old_history = recipe.train_book_model(steps=STEPS, progress=False, device="cpu")
    return (now_model, now_history), (old_model, old_history)


def test_forty_steps_of_the_book_recipe_give_equal_weights_before_and_after_the_split(both_runs) -> None:
    (now_model, now_history), (old_model, old_history) = both_runs
    assert len(now_history.losses) == len(old_history.losses) == STEPS
    now, old = now_model.state_dict(), old_model.state_dict()
    assert list(now) == list(old) and len(now) > 10
    different = [name for name in now if not torch.equal(now[name], old[name])]
    assert not different, f"weights that differ after {STEPS} steps: {different}"
    assert now_history.losses == old_history.losses and now_history.lrs == old_history.lrs


def test_the_runs_moved_the_weights(both_runs) -> None:
    """The comparison means something: 40 steps moved the weight matrices beyond where one step leaves them."""
    (now_model, now_history), _ = both_runs
    torch.manual_seed(recipe.BOOK_RECIPE.seed)
    fresh, _, _, _ = recipe.train_book_model(steps=1, progress=False, device="cpu")
    moved = [name for name, value in now_model.state_dict().items()
             if value.is_floating_point() and value.dim() == 2 and not torch.equal(value, fresh.state_dict()[name])]
    assert len(moved) > 10 and now_history.losses[-1] < now_history.losses[0]
