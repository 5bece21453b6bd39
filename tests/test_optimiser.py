"""``optimiser.contiguous_parameters``: ``train`` updates one buffer instead of one tensor at a time, and
that changes no number. The reference is the plain loop with PyTorch's Adam on the model's own
tensors, gradients dropped between steps (``zero_grad(set_to_none=True)``), as the book trained before.
``optimiser.PaperAdam``, the book's Adam written out, gives ``torch.optim.Adam``'s numbers bit for bit
and, unlike it, does not import torch's compiler.
"""

from __future__ import annotations

import subprocess
import sys
from contextlib import nullcontext

import pytest
import torch
from safetensors.torch import save
from torch import nn

from transformer_lib import models, training
from transformer_lib.config import TransformerConfig
from transformer_lib.loss import label_smoothed_cross_entropy
from transformer_lib.optimiser import PAPER_BETAS, PAPER_EPS, contiguous_parameters, paper_adam, warmup_scheduler
from transformer_lib.tokenization import Batch

CONFIG = TransformerConfig(src_vocab_size=23, tgt_vocab_size=19, d_model=16, n_heads=2, d_ff=32,
                           n_encoder_layers=2, n_decoder_layers=2, dropout=0.1)
STEPS = 30


def _batches(n: int = 6) -> list[Batch]:
    generator = torch.Generator().manual_seed(1)
    batches = []
    for _ in range(n):
        src = torch.randint(4, CONFIG.src_vocab_size, (5, 7), generator=generator)
        tgt = torch.randint(4, CONFIG.tgt_vocab_size, (5, 6), generator=generator)
        tgt[0, -2:] = 0  # some padding
        batches.append(Batch(src=src, tgt_in=tgt[:, :-1].clone(), tgt_out=tgt[:, 1:].clone()))
    return batches


def torch_adam(params: object) -> torch.optim.Adam:
    """PyTorch's own Adam with the paper's settings: what ``PaperAdam`` must equal."""
    return torch.optim.Adam(params, lr=1.0, betas=PAPER_BETAS, eps=PAPER_EPS, foreach=True)


def _reference(batches: list[Batch], zero_in_place_only_the_buffer: bool = False, adam: object = torch_adam
               ) -> list[torch.Tensor]:
    """STEPS steps of the plain loop: per-tensor Adam, PyTorch's unless ``adam`` says (or, with the planted
    defect, the buffer's Adam whose gradients are dropped instead of cleared, so the model's gradient views
    keep adding up)."""
    torch.manual_seed(0)
    model = models.Transformer(CONFIG)
    options = training.TrainingOptions(steps=STEPS, warmup=10, lr_scale=1.0, pad_id=0, shuffle=False,
                                       progress=False)
    with contiguous_parameters(model) if zero_in_place_only_the_buffer else nullcontext() as buffer:
        optimizer = adam([buffer] if buffer is not None else model.parameters())
        scheduler = warmup_scheduler(optimizer, CONFIG.d_model, options.warmup, options.lr_scale)
        torch.manual_seed(options.seed)
        model.train()
        for step in range(STEPS):
            batch = batches[step % len(batches)]
            logits = model(batch.src, batch.tgt_in)
            loss = label_smoothed_cross_entropy(logits, batch.tgt_out, options.label_smoothing, 0, "sum")
            loss = loss / (batch.tgt_out != 0).sum()
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), options.clip_norm)
            optimizer.step()
            scheduler.step()
    return [p.detach().clone() for p in model.parameters()]


def _trained_by_train(batches: list[Batch]) -> tuple[nn.Module, list[torch.Tensor]]:
    torch.manual_seed(0)
    model = models.Transformer(CONFIG)
    options = training.TrainingOptions(steps=STEPS, warmup=10, lr_scale=1.0, pad_id=0, shuffle=False,
                                       progress=False)
    training.train(model, batches, options)
    return model, [p.detach().clone() for p in model.parameters()]


def test_one_update_of_the_buffer_gives_the_per_tensor_numbers() -> None:
    batches = _batches()
    reference = _reference(batches)
    _, trained = _trained_by_train(batches)
    assert len(trained) == len(reference) > 40
    assert all(torch.equal(a, b) for a, b in zip(trained, reference, strict=True))


def test_the_comparison_sees_gradients_that_are_not_cleared() -> None:
    """The planted defect: the buffer's gradient dropped (set_to_none) rather than cleared in place; Adam
    then finds no gradient on the buffer (and the model's gradient views are never zeroed), and the
    weights differ from the reference."""
    batches = _batches()
    defective = _reference(batches, zero_in_place_only_the_buffer=True)
    reference = _reference(batches)
    assert not all(torch.equal(a, b) for a, b in zip(defective, reference, strict=True))


def test_every_parameter_gets_its_own_storage_back() -> None:
    model, _ = _trained_by_train(_batches())
    storages = [p.untyped_storage().data_ptr() for p in model.parameters()]
    assert len(set(storages)) == len(storages)
    assert all(p.grad is not None and p.grad.untyped_storage().data_ptr() not in storages
               for p in model.parameters())
    save({name: t.contiguous() for name, t in model.state_dict().items()})  # safetensors refuses shared storage


def test_inside_the_block_the_parameters_are_views_of_the_buffer() -> None:
    model = models.Transformer(CONFIG)
    before = [p.detach().clone() for p in model.parameters()]
    with contiguous_parameters(model) as buffer:
        assert buffer.numel() == sum(p.numel() for p in model.parameters())
        buffer.data.add_(1.0)
        assert all(torch.equal(p, b + 1.0) for p, b in zip(model.parameters(), before, strict=True))
        buffer.grad.fill_(2.0)
        assert all(bool((p.grad == 2.0).all()) for p in model.parameters())


def test_bad_models_are_refused_by_name() -> None:
    with pytest.raises(TypeError, match="^model: expected a torch.nn.Module"):
        contiguous_parameters([torch.zeros(2)])
    with pytest.raises(ValueError, match="^model: expected at least one trainable parameter"):
        contiguous_parameters(nn.ReLU())
    mixed = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 2).double())
    with pytest.raises(ValueError, match="^model: expected parameters of one device and dtype"):
        contiguous_parameters(mixed)


def test_paper_adam_gives_torchs_numbers_tensor_by_tensor() -> None:
    batches = _batches()
    ours, theirs = _reference(batches, adam=paper_adam), _reference(batches)
    assert all(torch.equal(a, b) for a, b in zip(ours, theirs, strict=True))


def test_the_comparison_with_torchs_adam_sees_a_changed_update() -> None:
    """Planted: epsilon ten times larger in one of the two; the weights then differ."""
    batches = _batches()
    changed = _reference(batches, adam=lambda params: torch.optim.Adam(params, lr=1.0, betas=PAPER_BETAS,
                                                                        eps=PAPER_EPS * 10, foreach=True))
    assert not all(torch.equal(a, b) for a, b in zip(changed, _reference(batches, adam=paper_adam), strict=True))


def test_paper_adam_keeps_torchs_state_and_takes_a_closure() -> None:
    weight = nn.Parameter(torch.tensor([1.0, -2.0]))
    twin = nn.Parameter(weight.detach().clone())
    ours, theirs = paper_adam([weight]), torch_adam([twin])
    for optimizer, param in ((ours, weight), (theirs, twin)):
        def closure(param: nn.Parameter = param) -> torch.Tensor:
            loss = (param**2).sum()
            loss.backward()
            return loss
        assert float(optimizer.step(closure).detach()) == 5.0
    assert torch.equal(weight, twin)
    mine, torchs = ours.state_dict()["state"][0], theirs.state_dict()["state"][0]
    assert mine.keys() == torchs.keys() == {"step", "exp_avg", "exp_avg_sq"}
    assert all(torch.equal(mine[key], torchs[key]) for key in mine)


def test_training_with_paper_adam_imports_no_compiler() -> None:
    """Torch's optimisers import torch._dynamo when built (a second or more); ``train`` does not."""
    program = (
        "import sys, torch\n"
        "from transformer_lib import models, training\n"
        "from transformer_lib.config import TransformerConfig\n"
        "from transformer_lib.tokenization import Batch\n"
        "config = TransformerConfig(src_vocab_size=9, tgt_vocab_size=9, d_model=8, n_heads=2, d_ff=16,\n"
        "                           n_encoder_layers=1, n_decoder_layers=1)\n"
        "batch = Batch(src=torch.tensor([[4, 5, 6]]), tgt_in=torch.tensor([[1, 4]]), tgt_out=torch.tensor([[4, 2]]))\n"
        "training.train(models.Transformer(config), [batch], steps=3, progress=False)\n"
        "print('torch._dynamo' in sys.modules)\n"
        "torch.optim.Adam([torch.nn.Parameter(torch.zeros(1))])\n"
        "print('torch._dynamo' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "True"]  # the second line: torch's own Adam does import it


def test_complex_parameters_and_sparse_gradients_are_refused_as_torch_refuses():
    with pytest.raises(ValueError, match=r"^params: expected real parameters, got a complex one of shape \(2,\)"):
        paper_adam([nn.Parameter(torch.randn(2, dtype=torch.complex64))])
    with pytest.raises(ValueError, match=r"^params: expected real parameters"):
        paper_adam([{"params": [nn.Parameter(torch.randn(2, dtype=torch.complex128))]}])
    param = nn.Parameter(torch.randn(3))
    param.grad = torch.randn(3).to_sparse()
    with pytest.raises(RuntimeError) as theirs:
        torch.optim.Adam([param]).step()
    with pytest.raises(RuntimeError) as ours:
        paper_adam([param]).step()
    assert str(ours.value) == str(theirs.value).replace("Adam", "PaperAdam", 1)
