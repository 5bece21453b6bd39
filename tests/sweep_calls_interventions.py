"""Valid calls for the bad-input sweep (tests/test_bad_input_sweep.py), for ``interventions``: "module.name" ->
a function returning (the callable, a dict of valid keyword arguments); EXEMPT: "module.name" -> why it is not
swept."""

from __future__ import annotations

import functools

import torch

from transformer_lib import interventions, models
from transformer_lib.config import TransformerConfig
from transformer_lib.tokenization import Vocab

VOCAB = Vocab(["the", "cat", "sat", "on", "a", "mat", "dog", "ran"])  # 12 tokens with the four specials
PAIRS = [("the cat sat", "the cat sat"), ("a dog ran", "a dog ran")]
CONFIG = TransformerConfig(src_vocab_size=12, tgt_vocab_size=12, d_model=8, n_heads=2, n_encoder_layers=1,
                           n_decoder_layers=1, d_ff=16, dropout=0.0, max_len=16)
torch.manual_seed(0)
MODEL = models.Transformer(CONFIG).eval()
SRC, TGT = torch.tensor([[4, 5, 6]]), torch.tensor([[1, 4]])
HEAD = interventions.Head("cross", 0, 1)
RUN = interventions.intervene(MODEL, SRC, TGT, record=True)


def _arguments() -> dict:
    """The arguments of an intervention: a head switched off by its mean, and the source's embedding patched."""
    return dict(model=MODEL, ablate=[HEAD], means=interventions.head_means(MODEL, SRC, TGT),
                patches=[interventions.Patch("src.input", RUN.blocks["src.input"], [1])], record=True)


@functools.wraps(interventions.interventions)  # its signature: None is documented for means
def _entered(**arguments) -> None:
    """``interventions`` entered and left (its checks run on entering), the model left without hooks."""
    with interventions.interventions(**arguments):
        pass


CALLS = {
    "interventions.heads_of": lambda: (interventions.heads_of, dict(model=MODEL)),
    "interventions.patch_points": lambda: (interventions.patch_points, dict(model=MODEL)),
    "interventions.residual_streams": lambda: (interventions.residual_streams, dict(model=MODEL)),
    "interventions.head_means": lambda: (interventions.head_means, dict(model=MODEL, src_ids=SRC.clone(),
                                                                        tgt_ids=TGT.clone())),
    "interventions.intervene": lambda: (interventions.intervene, dict(src_ids=SRC.clone(), tgt_ids=TGT.clone(),
                                                                      **_arguments())),
    "interventions.interventions": lambda: (_entered, _arguments()),
    "interventions.logit_lens": lambda: (interventions.logit_lens, dict(
        model=MODEL, blocks=dict(RUN.blocks), block="decoder.0.ff_residual.norm")),
    "interventions.head_ablation_drops": lambda: (interventions.head_ablation_drops, dict(
        model=MODEL, pairs=list(PAIRS), src_vocab=VOCAB, tgt_vocab=VOCAB, ablation="zero", batch_size=1)),
}
EXEMPT: dict[str, str] = {}
