"""Two small random models in Hugging Face's layout, and what Hugging Face's own classes computed
from them (``tools/hub_references.py`` writes them with ``transformers``; no download, fixed seed).

The chapters convert them with ``convert.from_gpt2`` and ``convert.from_bert`` and compare, without
importing ``transformers``: ``load_reference("tiny_gpt2")`` (chapter 8) and ``"tiny_bert"`` (chapter 6).
"""

from __future__ import annotations

import json
from pathlib import Path

from safetensors.torch import load_file
from torch import Tensor

from ..validation import check_choice

DIRECTORY = Path(__file__).resolve().parent / "hub_references"
NAMES = ("tiny_gpt2", "tiny_bert")


def load_reference(name: str) -> tuple[dict, dict[str, Tensor], dict[str, Tensor]]:
    """``(config, state_dict, outputs)`` of reference model ``name``: the config as in a ``config.json``,
    the state dict under Hugging Face's names, and Hugging Face's outputs (``outputs["ids"]`` the input)."""
    check_choice("name", name, NAMES)
    config = json.loads((DIRECTORY / f"{name}.json").read_text())
    return config, load_file(DIRECTORY / f"{name}.safetensors"), load_file(DIRECTORY / f"{name}_outputs.safetensors")
