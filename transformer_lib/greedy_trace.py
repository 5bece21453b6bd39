"""Greedy decoding of one sentence, step by step, as data for the book (chapter 7).

``trace_greedy`` makes the same choices as ``decoding.greedy_decode`` and records, at every step,
what the decoder had read, the ``top_k`` candidates with their probabilities, and the token chosen.
It is the greedy view of ``decoding_steps.trace_decoding`` with one beam: the steps come from
``decoding.beam_search`` itself (with ``beam_size=1``, greedy decoding), not from a copy of its loop.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import torch
from torch import Tensor

from .decoding import Seq2SeqModel
from .decoding_steps import trace_decoding
from .vocabulary import SpecialIds


@dataclass
class TraceStep:
    """One step of greedy decoding: what the decoder had read, what it considered, what it chose."""

    prefix: list[str]  # tokens read so far, from <sos>
    candidates: list[tuple[str, float]]  # the top-k next tokens and their probabilities, best first
    chosen: str

    def __str__(self) -> str:
        options = ", ".join(f"{token} {p:.2f}" for token, p in self.candidates)
        return f"{' '.join(self.prefix)} -> {self.chosen}   ({options})"


@dataclass
class DecodingTrace:
    """The steps of ``trace_greedy``; ``str()`` prints one line per step, ``rows()`` gives table rows."""

    steps: list[TraceStep] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.steps)

    def __getitem__(self, index: int) -> TraceStep:
        return self.steps[index]

    def __str__(self) -> str:
        return "\n".join(str(step) for step in self.steps)

    def rows(self) -> list[dict[str, object]]:
        """One dict per step: ``step``, ``prefix``, ``chosen``, and ``candidate i`` / ``p i`` columns."""
        table = []
        for i, step in enumerate(self.steps, start=1):
            row: dict[str, object] = {"step": i, "prefix": " ".join(step.prefix), "chosen": step.chosen}
            for j, (token, p) in enumerate(step.candidates, start=1):
                row[f"candidate {j}"] = token
                row[f"p {j}"] = round(p, 4)
            table.append(row)
        return table


@torch.inference_mode()
def trace_greedy(
    model: Seq2SeqModel,
    src_ids: Tensor,
    itos: Sequence[str],
    special: SpecialIds,
    *,
    max_len: int,
    top_k: int = 5,
) -> DecodingTrace:
    """Greedy decoding of one source (``src_ids`` of shape (1, S)), recording every step.

    ``itos`` maps target ids to tokens. The probabilities are the model's softmax with
    ``<pad>`` and ``<sos>`` excluded, as in ``greedy_decode``; the chosen tokens are
    the ones ``greedy_decode`` returns (tests/test_decoding.py compares them).
    """
    search = trace_decoding(model, src_ids, itos, special, max_len=max_len, beam_size=1, top_k=top_k)
    trace = DecodingTrace()
    for step in search.steps:
        (beam,) = step["beams"]
        trace.steps.append(TraceStep(prefix=beam["prefix"], candidates=[tuple(c) for c in beam["candidates"]],
                                     chosen=step["chosen"]["token"]))
    return trace
