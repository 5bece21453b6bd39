"""The language model's batches, training, perplexity, entropy and the bigram baseline."""

import math
from collections import Counter

import pytest
import torch
import torch.nn.functional as F

from transformer_lib.config import TransformerConfig
from transformer_lib.language_model import (
    bigram_perplexity,
    lm_batches,
    next_token_entropy,
    perplexity,
    sample_sentences,
    train_language_model,
)
from transformer_lib.models import DecoderOnlyTransformer
from transformer_lib.tokenization import Vocab

from .bad_input import raises

SENTENCES = ["le chat dort", "le chien dort", "la fille mange une pomme", "le chat mange", "la fille dort"]
VOCAB = Vocab.build(SENTENCES)


def model_for(vocab: Vocab, seed: int = 0) -> DecoderOnlyTransformer:
    torch.manual_seed(seed)
    config = TransformerConfig(src_vocab_size=len(vocab), tgt_vocab_size=len(vocab), d_model=16, n_heads=2,
                               n_decoder_layers=1, d_ff=32, dropout=0.0, max_len=16)
    return DecoderOnlyTransformer(config).double().eval()


def test_batches_read_sos_and_the_words_and_predict_the_words_and_eos():
    (batch,) = lm_batches(SENTENCES[:1], VOCAB, batch_size=4, shuffle=False)
    words = VOCAB.encode("le chat dort")
    assert batch.tgt_in.tolist() == [[VOCAB.sos_id, *words]]
    assert batch.tgt_out.tolist() == [[*words, VOCAB.eos_id]]
    batches = lm_batches(SENTENCES, VOCAB, batch_size=2)
    assert sorted(len(b) for b in batches) == [1, 2, 2]


def test_perplexity_is_exp_of_the_mean_cross_entropy_and_v_for_a_uniform_model():
    model = model_for(VOCAB)
    losses, count = 0.0, 0
    for sentence in SENTENCES:
        ids = [VOCAB.sos_id, *VOCAB.encode(sentence), VOCAB.eos_id]
        with torch.no_grad():
            logits = model(torch.tensor([ids[:-1]]))[0]
        losses += float(F.cross_entropy(logits, torch.tensor(ids[1:]), reduction="sum"))
        count += len(ids) - 1
    assert perplexity(model, SENTENCES, VOCAB, batch_size=2) == pytest.approx(math.exp(losses / count), rel=1e-12)
    with torch.no_grad():
        model.lm_head.weight.zero_()
        model.lm_head.bias.zero_()
    assert perplexity(model, SENTENCES, VOCAB) == pytest.approx(len(VOCAB), rel=1e-12)
    assert next_token_entropy(model, SENTENCES, VOCAB) == pytest.approx(math.log(len(VOCAB)), rel=1e-12)


def test_entropy_grows_with_the_temperature():
    model = model_for(VOCAB)
    entropies = [next_token_entropy(model, SENTENCES, VOCAB, temperature=t) for t in (0.25, 0.5, 1.0, 2.0, 4.0)]
    assert entropies == sorted(entropies) and entropies[-1] < math.log(len(VOCAB))


def test_bigram_perplexity_counts_by_hand():
    train, test, alpha = SENTENCES[:4], SENTENCES[4:], 0.5
    pairs = Counter()
    for sentence in train:
        words = ["<sos>", *sentence.split(), "<eos>"]
        pairs.update(zip(words, words[1:], strict=False))
    follows = len(VOCAB) - 2  # not <pad>, not <sos>
    words = ["<sos>", *test[0].split(), "<eos>"]
    log_likelihood = 0.0
    for previous, word in zip(words, words[1:], strict=False):
        total = sum(c for (p, _), c in pairs.items() if p == previous)
        log_likelihood += math.log((pairs[previous, word] + alpha) / (total + alpha * follows))
    expected = math.exp(-log_likelihood / (len(words) - 1))
    assert bigram_perplexity(train, test, VOCAB, alpha) == pytest.approx(expected, rel=1e-12)


def test_training_lowers_the_loss_and_perplexity():
    model = model_for(VOCAB).float()
    before = perplexity(model, SENTENCES, VOCAB)
    history = train_language_model(model, lm_batches(SENTENCES, VOCAB, batch_size=5), steps=60, warmup=10,
                                   label_smoothing=0.0, progress=False)
    assert isinstance(model, DecoderOnlyTransformer) and not model.training
    assert history.losses[-1] < 0.5 * history.losses[0]
    assert perplexity(model, SENTENCES, VOCAB) < 0.5 * before


@pytest.mark.parametrize("call, error, name", [
    (lambda: lm_batches("le chat", VOCAB, 2), TypeError, "sentences"),
    (lambda: lm_batches([], VOCAB, 2), ValueError, "sentences"),
    (lambda: lm_batches(["le chat", " "], VOCAB, 2), ValueError, "sentences[1]"),
    (lambda: lm_batches(SENTENCES, ["a"], 2), TypeError, "vocab"),
    (lambda: lm_batches(SENTENCES, VOCAB, 0), ValueError, "batch_size"),
    (lambda: perplexity(torch.nn.Linear(2, 2), SENTENCES, VOCAB), TypeError, "model"),
    (lambda: perplexity(model_for(VOCAB), SENTENCES, VOCAB, batch_size=2.0), TypeError, "batch_size"),
    (lambda: next_token_entropy(model_for(VOCAB), SENTENCES, VOCAB, temperature=0), ValueError, "temperature"),
    (lambda: bigram_perplexity(SENTENCES, [3], VOCAB), TypeError, "test_sentences[0]"),
    (lambda: bigram_perplexity(SENTENCES, SENTENCES, VOCAB, alpha=0.0), ValueError, "alpha"),
    (lambda: train_language_model(torch.nn.Linear(2, 2), []), TypeError, "model"),
])
def test_bad_arguments_name_themselves(call, error, name):
    raises(error, call, name)


def test_sampled_sentences_are_the_continuations_of_sos_decoded():
    from transformer_lib.sampling import sample_continuation

    model = model_for(VOCAB, seed=3)
    samples = sample_sentences(model, VOCAB, 6, max_new_tokens=5, temperature=1.5,
                               generator=torch.Generator().manual_seed(0))
    prompt = torch.full((6, 1), VOCAB.sos_id)
    rows = sample_continuation(model, prompt, max_new_tokens=5, temperature=1.5, eos_id=VOCAB.eos_id,
                               banned_ids=(VOCAB.sos_id, VOCAB.unk_id), generator=torch.Generator().manual_seed(0))
    for sample, row in zip(samples, rows, strict=True):
        assert sample.ended == (VOCAB.eos_id in row)
        assert sample.text == " ".join(VOCAB.itos[i] for i in row if i != VOCAB.eos_id)
        assert "<unk>" not in sample.text.split()


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
@pytest.mark.parametrize("temperature", [1e-300, 5e-324, 1e300])
def test_entropy_is_finite_at_extreme_temperatures(temperature, dtype):
    """draw_next's computation (float64, best logit shifted to 0): greedy's entropy 0, a huge temperature's log V."""
    model = model_for(VOCAB).to(dtype)
    entropy = next_token_entropy(model, SENTENCES, VOCAB, temperature=temperature)
    assert math.isfinite(entropy)
    if temperature < 1:
        assert entropy == 0.0  # random weights: no exact ties, one token takes all the probability
    else:
        assert entropy == pytest.approx(math.log(len(VOCAB)), rel=1e-12)
