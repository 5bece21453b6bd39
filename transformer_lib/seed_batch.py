"""Several seeds of one small model, trained side by side in one pass (``torch.func.vmap``).

A claim about a trained model is shown on several seeds (median and range, ``seeding.book_seeds``). The
book's small models are too small to keep a CPU busy: most of a step is Python and dispatch, not
arithmetic. ``fit_seeds`` stacks the seeds' parameters (``torch.func.stack_module_state``), maps one
model's loss over the stack with ``vmap``, and takes one Adam step on the stacked tensors. Adam works
element by element and the summed loss gives each seed's parameters that seed's own gradient, so each
model is trained exactly as alone (up to the order of float sums: ``tests/test_seed_batch.py`` checks it
against ``class_token.fit_classifier``), with its own initial weights (``torch.manual_seed(seed)``
before ``build()``) and its own batches (a ``torch.Generator`` seeded with ``seed``, given to ``draw``).

* ``fit_seeds``: the general loop; ``fit_classifier_seeds``: ``fit_classifier``'s batches and loss.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence

import torch
from torch import Tensor, nn
from torch.func import functional_call, stack_module_state, vmap

from .class_token import accuracy
from .validation import check_int, check_items, check_number, check_positive_int


def _function(name: str, value: object, what: str) -> None:
    if value is None or not callable(value):
        raise TypeError(f"{name}: expected {what}, got {type(value).__name__}")


def _structure(model: nn.Module) -> nn.Module:
    """A copy of ``model`` on the meta device (its structure, no values), with the parameters ``model`` shares
    between modules (a tied output embedding) shared again: ``.to("meta")`` gives each name its own tensor,
    and ``functional_call`` would then leave the second name's meta tensor in the computation."""
    template = copy.deepcopy(model).to("meta")
    first_name: dict[int, str] = {}
    for name, parameter in model.named_parameters(remove_duplicate=False):
        shared = first_name.setdefault(id(parameter), name)
        if shared != name:
            owner, _, attribute = name.rpartition(".")
            setattr(template.get_submodule(owner), attribute, template.get_parameter(shared))
    return template


def fit_seeds(build: Callable[[], nn.Module], seeds: Sequence[int],
              draw: Callable[[torch.Generator], tuple[Tensor, ...]],
              loss: Callable[..., Tensor], *, steps: int, lr: float) -> tuple[list[nn.Module], Tensor]:
    """Train one ``build()`` model per seed, all in one pass a step. ``draw(generator)`` returns one
    batch (a tuple of tensors); ``loss(model, *batch)`` its scalar loss, ``model`` being a function
    with the model's signature. Returns the models (in evaluation mode) and the losses, (steps, n_seeds)."""
    for name, function, what in (("build", build, "a function that builds the model"),
                                 ("draw", draw, "a function of a torch.Generator that returns a batch"),
                                 ("loss", loss, "a function (model, *batch) -> loss")):
        _function(name, function, what)
    seeds = [check_int(f"seeds[{i}]", s, minimum=0) for i, s in enumerate(check_items("seeds", seeds, int, "seed"))]
    if len(set(seeds)) != len(seeds):
        raise ValueError(f"seeds: expected different seeds (the same seed twice is one run twice), got {seeds}")
    check_positive_int("steps", steps)
    models = []
    for seed in seeds:
        torch.manual_seed(seed)  # each seed's initial weights, as if built alone
        models.append(build())
    # Inside the map no check can read a value (validation_tensors.in_vmap): one batch goes through the
    # first model outside it, so that the model's own checks see real values before training starts.
    with torch.no_grad():
        loss(models[0], *draw(torch.Generator().manual_seed(seeds[0])))
    params, buffers = stack_module_state(models)  # name -> (n_seeds, ...) leaf tensors
    template = _structure(models[0])

    def one_loss(p: dict[str, Tensor], b: dict[str, Tensor], *batch: Tensor) -> Tensor:
        return loss(lambda *inputs: functional_call(template, (p, b), inputs), *batch)

    generators = [torch.Generator().manual_seed(seed) for seed in seeds]
    optimiser = torch.optim.Adam(params.values(), lr=check_number("lr", lr, positive=True))
    template.train()
    losses = []
    for _ in range(steps):
        batches = [draw(g) for g in generators]
        stacked = [torch.stack(parts) for parts in zip(*batches, strict=True)]  # each (n_seeds, ...)
        per_seed = vmap(one_loss)(params, buffers, *stacked)  # (n_seeds,)
        optimiser.zero_grad()
        per_seed.sum().backward()  # seed i's parameters get seed i's gradient only
        optimiser.step()
        losses.append(per_seed.detach())
    with torch.no_grad():
        for i, model in enumerate(models):
            for name, value in (*model.named_parameters(), *model.named_buffers()):
                value.copy_((params if name in params else buffers)[name][i])
            model.eval()
    return models, torch.stack(losses)


def fit_classifier_seeds(build: Callable[[], nn.Module], seeds: Sequence[int], inputs: Tensor, labels: Tensor, *,
                         steps: int, batch_size: int = 64, lr: float = 3e-3) -> list[nn.Module]:
    """``class_token.fit_classifier`` for each seed (its batches, its cross-entropy, its Adam), in one
    pass a step: seed ``s``'s model is the one ``torch.manual_seed(s); fit_classifier(build(), ...,
    seed=s)`` trains."""
    check_positive_int("batch_size", batch_size)
    _function("build", build, "a function that builds the model")
    accuracy(build(), inputs, labels)  # every input and label checked once, by fit_classifier's rules and the model's

    def draw(generator: torch.Generator) -> tuple[Tensor, Tensor]:
        pick = torch.randint(len(labels), (batch_size,), generator=generator)
        return inputs[pick], labels[pick].long()

    def loss(model: Callable[..., Tensor], x: Tensor, y: Tensor) -> Tensor:
        return nn.functional.cross_entropy(model(x), y)

    models, _ = fit_seeds(build, seeds, draw, loss, steps=steps, lr=lr)
    return models
