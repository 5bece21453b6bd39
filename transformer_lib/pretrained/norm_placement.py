"""Chapter 6's post-norm and pre-norm scales, computed once and stored.

``compute_norm_placement`` runs ``analysis.norm_placement_scales`` for both placements (a freshly
initialised 24-layer encoder, eight initialisations each, in float64 as chapter 6 computes): about
2 s of one core, a third of the chapter's budget, for numbers that are the same on every machine.
``tools/norm_placement.py`` stores them in ``norm_placement.json`` (package data: chapter 6
downloaded alone finds it); chapter 6 shows and asserts on the stored numbers and keeps the live
computation as an optional cell; ``tests/test_norm_placement.py`` checks that the stored numbers are
what ``compute_norm_placement`` computes.
"""

from __future__ import annotations

import json
from pathlib import Path

import torch

from ..analysis import norm_placement_scales

NORM_PLACEMENT_PATH = Path(__file__).with_name("norm_placement.json")
PLACEMENTS = {"post-norm": False, "pre-norm": True}  # the name the chapter gives each, and its norm_first


def compute_norm_placement() -> dict[str, dict[str, list[float]]]:
    """``norm_placement_scales`` of each of ``PLACEMENTS``, in float64: {"post-norm": {"activation": [...],
    "gradient": [...]}, "pre-norm": {...}}, one number per layer."""
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)  # as chapter 6 computes
    try:
        return {name: norm_placement_scales(norm_first=norm_first) for name, norm_first in PLACEMENTS.items()}
    finally:
        torch.set_default_dtype(previous)


def stored_norm_placement() -> dict[str, dict[str, list[float]]]:
    """What ``tools/norm_placement.py`` stored: ``compute_norm_placement()``'s numbers."""
    return json.loads(NORM_PLACEMENT_PATH.read_text())
