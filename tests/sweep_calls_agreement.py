"""Valid calls for the bad-input sweep (tests/test_bad_input_sweep.py), for the agreement modules: "module.name" ->
a function returning (the callable, a dict of valid keyword arguments); EXEMPT: "module.name" -> why it is not
swept (where else its arguments are tested)."""

from __future__ import annotations

import torch

from transformer_lib import agreement, exercises, models, paper, relative_position
from transformer_lib.config import TransformerConfig
from transformer_lib.figures.agreement import head_agreement_figure
from transformer_lib.tokenization import Vocab

FRENCH = "les petits chats noirs sur la table sont verts"  # a sentence of the corpus's grammar
LINKS = [agreement.Link(2, 0, "verb"), agreement.Link(3, 2, "adjective")]
VOCAB = Vocab(["the", "cat", "sat", "on", "a", "mat", "dog", "ran"])  # 12 tokens with the four specials
CONFIG = TransformerConfig(src_vocab_size=12, tgt_vocab_size=12, d_model=8, n_heads=2, n_encoder_layers=1,
                           n_decoder_layers=1, d_ff=16, dropout=0.0, max_len=32)
torch.manual_seed(0)
MODEL = models.Transformer(CONFIG).eval()
LM = models.DecoderOnlyTransformer(CONFIG).eval()
RELATIVE = relative_position.RelativePositions(4, 2)
Q4 = torch.randn(1, 2, 3, 4)  # (B, h, T, d_k)


def _weights() -> list[torch.Tensor]:
    """One layer's (B, h, 1 + T, 1 + T) weights for a 4-token sentence after <sos>."""
    return [torch.rand(1, 2, 5, 5).softmax(-1)]


CALLS = {
    # agreement
    "agreement.agreement": lambda: (agreement.agreement, dict(french=FRENCH)),
    "agreement.visible_links": lambda: (agreement.visible_links, dict(found=agreement.agreement(FRENCH),
                                                                      causal=True)),
    "agreement.head_agreement": lambda: (agreement.head_agreement, dict(weights=_weights(), links=[list(LINKS)],
                                                                        offset=1, predicting=False)),
    "agreement.position_baseline": lambda: (agreement.position_baseline, dict(links=list(LINKS), predicting=False)),
    "agreement.linear_probe": lambda: (agreement.linear_probe, dict(
        train_x=torch.randn(6, 3), train_y=torch.tensor([0, 1, 0, 1, 1, 0]), test_x=torch.randn(2, 3), ridge=1e-3)),
    "agreement.layer_states": lambda: (agreement.layer_states, dict(model=MODEL, ids=torch.tensor([[1, 4]]),
                                                                    src_ids=torch.tensor([[4, 5, 6]]))),
    # relative positions
    "relative_position.RelativePositions": lambda: (relative_position.RelativePositions, dict(d_k=4,
                                                                                              max_distance=2)),
    "relative_position.RelativePositions.offsets": lambda: (RELATIVE.offsets, dict(n_queries=2, n_keys=3,
                                                                                   device="cpu")),
    "relative_position.RelativePositions.scores": lambda: (RELATIVE.scores, dict(query=Q4.clone(), key=Q4.clone())),
    "relative_position.RelativePositions.forward": lambda: (RELATIVE, dict(
        query=Q4.clone(), key=Q4.clone(), value=Q4.clone(), mask=torch.ones(3, 3, dtype=torch.bool).tril(),
        dropout_p=0.0)),
    # exercises: each takes the book's answer; a wrong answer is an AssertionError, a bad argument is not
    "exercises.check_sequential_steps": lambda: (exercises.check_sequential_steps, dict(
        words=20, layers=2, pipelined=21, unpipelined=40)),
    "exercises.check_xavier_row_norm_ratio": lambda: (exercises.check_xavier_row_norm_ratio, dict(
        vocab=1000, d_models=(16, 64), falls=True, seed=0)),
    "exercises.check_longest_wavelength": lambda: (exercises.check_longest_wavelength, dict(
        base=100.0, positions=628, sentence=1000)),
    "exercises.check_scores_divided_by_d_k": lambda: (exercises.check_scores_divided_by_d_k, dict(
        d_k=256, keys=4, max_deviation=0.2, seed=0)),
    "exercises.check_heads_must_divide": lambda: (exercises.check_heads_must_divide, dict(
        d_model=10, n_heads=3, refused=True)),
    "exercises.check_base_layer_parameters": lambda: (exercises.check_base_layer_parameters, dict(
        attention=1_050_624, feed_forward=2_099_712, encoder_layer=3_152_384, decoder_layer=4_204_032)),
    "exercises.check_pre_norm_extra": lambda: (exercises.check_pre_norm_extra, dict(extra=2048)),
    "exercises.check_first_learning_rate": lambda: (exercises.check_first_learning_rate, dict(
        rate=0.0625, d_model=64, scale=0.5)),
    "exercises.check_top_k_one_is_greedy": lambda: (exercises.check_top_k_one_is_greedy, dict(
        model=LM, vocab=VOCAB, n=2, seed=0)),
    "exercises.check_judgements": lambda: (exercises.check_judgements, dict(
        judgements={"les garçons ne sont pas bleues": "ungrammatical"}, training_sentences=set())),
    # paper and the figure
    "paper.checkpoint_interval": lambda: (paper.checkpoint_interval, dict(steps=720)),
    "figures.agreement.head_agreement_figure": lambda: (head_agreement_figure, dict(
        rates={"verb": [[0.5, 1.0]]}, baselines={"verb": 0.25}, title="agreement")),
}
EXEMPT: dict[str, str] = {}
