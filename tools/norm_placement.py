"""Store chapter 6's post-norm and pre-norm scales (``compute_norm_placement``) as package data.

Writes ``transformer_lib/pretrained/norm_placement.json``, which chapter 6 shows;
``tests/test_norm_placement.py`` checks that the file is what the code computes. Run it again after
the encoder, its initialisation or ``analysis.norm_placement_scales`` change.

    python tools/norm_placement.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from transformer_lib.pretrained.norm_placement import NORM_PLACEMENT_PATH, compute_norm_placement  # noqa: E402


def main() -> None:
    torch.set_num_threads(1)
    scales = compute_norm_placement()
    NORM_PLACEMENT_PATH.write_text(json.dumps(scales, indent=1) + "\n")
    for name, s in scales.items():
        print(f"{name}: top / bottom layer gradient {s['gradient'][-1] / s['gradient'][0]:.3g}")
    print(f"wrote {NORM_PLACEMENT_PATH}")


if __name__ == "__main__":
    main()
