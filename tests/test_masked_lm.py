"""masked_lm: BERT's corruption, its training, and filling a blank with each kind of model."""

import pytest
import torch

from transformer_lib.config import TransformerConfig
from transformer_lib.masked_lm import (
    FILL_FAILURES,
    IGNORE,
    encode_sentences,
    fill_failure,
    fill_masked,
    lm_fill,
    mask_id,
    mask_tokens,
    train_masked_lm,
)
from transformer_lib.models import DecoderOnlyTransformer, EncoderOnlyTransformer
from transformer_lib.pretrained import book_corpus, book_vocabularies, french_sentences


@pytest.fixture(scope="module")
def vocab():
    return book_vocabularies(book_corpus())[1]


def small(vocab) -> TransformerConfig:
    size = mask_id(vocab) + 1
    return TransformerConfig(src_vocab_size=size, tgt_vocab_size=size, d_model=16, n_heads=2, n_encoder_layers=1,
                             n_decoder_layers=1, d_ff=32, dropout=0.0, max_len=32)


def test_masking_follows_bert(vocab) -> None:
    ids = encode_sentences(french_sentences(book_corpus(), "train")[:2000], vocab)
    inputs, targets = mask_tokens(ids, vocab, 0.15, torch.Generator().manual_seed(0))
    chosen = targets != IGNORE
    real = ids != vocab.pad_id
    assert not (chosen & ~real).any() and chosen.any(1).all()  # never padding; every sentence something
    assert torch.equal(targets[chosen], ids[chosen]) and torch.equal(inputs[~chosen], ids[~chosen])
    share = chosen.sum() / real.sum()
    assert 0.13 < share < 0.25  # 15%, plus the one forced per sentence
    masked = (inputs[chosen] == mask_id(vocab)).float().mean()
    kept = (inputs[chosen] == ids[chosen]).float().mean()
    assert 0.75 < masked < 0.85 and 0.07 < kept < 0.14


def test_training_lowers_the_loss_and_fills_a_word(vocab) -> None:
    torch.manual_seed(0)
    model = EncoderOnlyTransformer(small(vocab))
    ids = encode_sentences(french_sentences(book_corpus(), "train")[:500], vocab)
    losses = train_masked_lm(model, ids, vocab, steps=60, lr=1e-2, rate=0.3)
    assert sum(losses[-10:]) / 10 < losses[0] - 1
    filled = fill_masked(model, vocab, "le chat mange le poisson", 1).split()
    assert len(filled) == 5 and filled[1] in vocab.stoi and not filled[1].startswith("<")
    lm = DecoderOnlyTransformer(small(vocab).replace(src_vocab_size=len(vocab.itos),
                                                     tgt_vocab_size=len(vocab.itos))).eval()
    left = lm_fill(lm, vocab, "le chat mange le poisson", 4).split()
    assert left[:4] == ["le", "chat", "mange", "le"] and not left[4].startswith("<")


def test_bad_input(vocab) -> None:
    model = EncoderOnlyTransformer(small(vocab))
    with pytest.raises(ValueError, match="src_vocab_size"):
        train_masked_lm(EncoderOnlyTransformer(small(vocab).replace(src_vocab_size=10)), torch.ones(2, 3).long(),
                        vocab, steps=1)
    with pytest.raises(TypeError, match="model"):
        train_masked_lm("model", torch.ones(2, 3).long(), vocab, steps=1)
    with pytest.raises(ValueError, match="position"):
        fill_masked(model, vocab, "le chat", 2)
    with pytest.raises(TypeError, match="model"):
        lm_fill(model, vocab, "le chat", 1)
    with pytest.raises(ValueError, match="rate"):
        mask_tokens(torch.ones(1, 3).long(), vocab, 1.5)
    with pytest.raises(TypeError, match="vocab"):
        mask_id("vocab")


def test_a_row_of_padding_alone_has_nothing_chosen(vocab) -> None:
    ids = encode_sentences(["le chat", "le petit chat noir"], vocab)
    ids = torch.cat([ids, torch.full_like(ids[:1], vocab.pad_id)])  # a third row: padding only
    for seed in range(20):
        inputs, targets = mask_tokens(ids, vocab, 0.15, torch.Generator().manual_seed(seed))
        assert (targets[2] == IGNORE).all() and torch.equal(inputs[2], ids[2])  # never <pad> to predict
        assert (targets[:2] != IGNORE).any(1).all()  # the other rows still teach something


def test_fill_failure_names_the_kind_from_the_word_written() -> None:
    sentence = "le petit cheval blanc va à leur maison chaude"
    assert fill_failure("notre petit frère est petit", "notre petit frère ne petit", 3) == "ne without pas"
    assert fill_failure("le chat ne mange pas", "le chat ne mange pas", 2) == "other"  # ne, with its pas
    assert fill_failure(sentence, "elle " + sentence.split(" ", 1)[1], 0) == "pronoun before a noun subject"
    assert fill_failure(sentence, sentence.replace("leur", "les"), 6) == "determiner"
    assert fill_failure(sentence, sentence.replace("chaude", "verte"), 8) == "other"
    assert set(FILL_FAILURES) == {"ne without pas", "pronoun before a noun subject", "determiner", "other"}
    with pytest.raises(ValueError, match="filled"):
        fill_failure("le chat dort", "le chat", 1)
    with pytest.raises(ValueError, match="position"):
        fill_failure("le chat dort", "le chat mange", 3)
