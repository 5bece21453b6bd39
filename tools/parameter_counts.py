"""Store the parameter breakdowns of the configs the book counts, as ``models.breakdown_on_meta`` computes them.

Writes ``transformer_lib/pretrained/parameter_counts.json``, which ``models.parameter_breakdown`` (and so
``parameter_count`` and chapter 6's tables and figure) reads for these configs instead of building the
paper's models on the meta device; ``tests/test_parameter_counts.py`` checks that the file is what the code
computes. Run it again after a change to the model's parts or to the presets.

    python tools/parameter_counts.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from transformer_lib.config import PRESETS, TransformerConfig  # noqa: E402
from transformer_lib.models import STORED_BREAKDOWNS, breakdown_key, breakdown_on_meta  # noqa: E402


def counted_configs() -> list[TransformerConfig]:
    """Every preset, and the variants chapter 6 and its exercises count (untied, pre-norm)."""
    return [*(TransformerConfig.preset(name) for name in PRESETS),
            TransformerConfig.preset("base", tie_output_embedding=False, share_source_target_embedding=False),
            TransformerConfig.preset("base", norm_first=True)]


def main() -> None:
    stored = {breakdown_key(config): breakdown_on_meta(config) for config in counted_configs()}
    STORED_BREAKDOWNS.write_text(json.dumps(stored, indent=1, sort_keys=True) + "\n")
    print(f"wrote {len(stored)} breakdowns to {STORED_BREAKDOWNS}")


if __name__ == "__main__":
    main()
