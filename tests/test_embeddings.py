import math

import torch
import torch.nn.functional as F

from transformer_lib.config import TransformerConfig
from transformer_lib.embeddings import TokenEmbedding
from transformer_lib.models import InputEmbedding
from transformer_lib.positional_encoding import sinusoidal_table


def test_lookup_is_a_one_hot_row_times_the_matrix_scaled_by_sqrt_d_model():
    embed = TokenEmbedding(vocab_size=11, d_model=8)
    ids = torch.tensor([[3, 0, 10], [1, 1, 2]])
    one_hot = F.one_hot(ids, num_classes=11).float()  # (B, T, vocab)
    expected = one_hot @ embed.weight * math.sqrt(8)
    torch.testing.assert_close(embed(ids), expected)


def test_input_embedding_adds_the_sinusoids_to_the_scaled_tokens():
    config = TransformerConfig(src_vocab_size=11, tgt_vocab_size=11, d_model=8, n_heads=2, max_len=10, dropout=0.3)
    embed = InputEmbedding(11, config).eval()
    ids = torch.tensor([[3, 4, 5, 6]])
    expected = embed.token.weight[ids] * math.sqrt(8) + sinusoidal_table(10, 8)[:4]
    torch.testing.assert_close(embed(ids), expected)
    torch.testing.assert_close(embed(ids[:, 2:], offset=2), expected[:, 2:])
    embed.train()  # dropout on the sum, in training only
    assert (embed(ids) == 0).any()


def test_rope_models_add_nothing_to_the_embeddings():
    config = TransformerConfig(src_vocab_size=11, tgt_vocab_size=11, d_model=8, n_heads=2, positional="rope")
    embed = InputEmbedding(11, config).eval()
    ids = torch.tensor([[3, 4]])
    torch.testing.assert_close(embed(ids), embed.token(ids))
