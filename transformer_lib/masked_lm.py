"""BERT's objective: hide some words, predict them from both sides.

A decoder-only model (chapter 8) predicts each word from the words before it. BERT ([Devlin et al., 2019])
trains an encoder-only model instead: 15% of the positions are chosen, 80% of those replaced by a
``<mask>`` token, 10% by a random word and 10% left as they are, and the model predicts the original word
at each chosen position, reading the whole sentence, left and right. Here ``EncoderOnlyTransformer``
learns it on the French side of the book's corpus; ``fill_masked`` and ``lm_fill`` then fill the same blank
with each model, for the grammar oracle to judge, and ``fill_failure`` names what went wrong in a fill
the grammar refuses.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor, nn

from .class_token import adam_steps
from .lexicon import DETERMINERS, ELISIONS, PRONOUNS
from .models import DecoderOnlyTransformer, EncoderOnlyTransformer
from .tokenization import Vocab, pad_sequences
from .validation import (
    check_index,
    check_instance,
    check_int,
    check_iterable,
    check_positive_int,
    check_probability,
    check_sentence,
)
from .validation_models import check_model_vocab
from .validation_tensors import check_token_ids

MASK = "<mask>"
IGNORE = -100  # cross_entropy's ignore_index: positions that were not chosen predict nothing


def mask_id(vocab: Vocab) -> int:
    """The ``<mask>`` token's id: one past the book vocabulary (the model's vocabulary is one larger)."""
    return len(check_instance("vocab", vocab, Vocab, "a tokenization.Vocab").itos)


def encode_sentences(sentences: Sequence[str], vocab: Vocab) -> Tensor:
    """Sentences as padded ids (B, T), no ``<sos>`` or ``<eos>``: an encoder reads the words only."""
    check_instance("vocab", vocab, Vocab, "a tokenization.Vocab")
    sentences = list(check_iterable("sentences", sentences, "a list of sentences"))
    if not sentences:
        raise ValueError("sentences: expected at least one sentence, got none")
    return pad_sequences([vocab.encode(check_sentence("sentences", s)) for s in sentences], vocab.pad_id)


BERT_MASK_RATE = 0.15  # Devlin et al. (2019), section 3.1: the share of positions BERT hides


def mask_tokens(ids: Tensor, vocab: Vocab, rate: float = BERT_MASK_RATE, generator: torch.Generator | None = None
                ) -> tuple[Tensor, Tensor]:
    """BERT's corruption: (inputs, targets). ``rate`` of the real tokens are chosen (at least one per
    sentence); of those 80% become ``<mask>``, 10% a random word, 10% stay. ``targets`` holds the
    original id at the chosen positions and ``IGNORE`` elsewhere."""
    check_token_ids("ids", ids, mask_id(vocab), "vocab")
    check_probability("rate", rate)
    if generator is not None:
        check_instance("generator", generator, torch.Generator, "a torch.Generator or None")
    real = ids != vocab.pad_id
    noise = torch.rand(ids.shape, generator=generator)
    chosen = real & (noise < rate)
    first_real = torch.where(real, noise, torch.full_like(noise, 2.0)).argmin(dim=1)  # the least noise
    rows = real.any(dim=1)  # a row of padding alone has no word to choose: it teaches nothing
    chosen[torch.arange(len(ids))[rows], first_real[rows]] = True  # every sentence teaches something
    how = torch.rand(ids.shape, generator=generator)
    inputs = ids.clone()
    inputs[chosen & (how < 0.8)] = mask_id(vocab)
    swap = chosen & (how >= 0.8) & (how < 0.9)
    first_word = vocab.unk_id + 1  # the specials come first in the book's vocabularies
    inputs[swap] = torch.randint(first_word, mask_id(vocab), (int(swap.sum()),), generator=generator)
    targets = torch.where(chosen, ids, torch.full_like(ids, IGNORE))
    return inputs, targets


def train_masked_lm(model: EncoderOnlyTransformer, ids: Tensor, vocab: Vocab, *, steps: int,
                    batch_size: int = 64, lr: float = 2e-3, rate: float = BERT_MASK_RATE, seed: int = 0) -> list[float]:
    """Adam on the masked-word cross-entropy, fresh masks for every batch; returns the losses."""
    _check_masked_lm(model, ids, vocab, rate, batch_size)
    generator = torch.Generator().manual_seed(check_int("seed", seed))

    def batch_loss() -> Tensor:
        batch = ids[torch.randint(len(ids), (batch_size,), generator=generator)]
        inputs, targets = mask_tokens(batch, vocab, rate, generator)
        logits = model(inputs)  # (B, T, vocab + 1)
        return nn.functional.cross_entropy(logits.flatten(0, 1), targets.flatten(), ignore_index=IGNORE)

    return adam_steps(model, batch_loss, steps=steps, lr=lr)


def _check_masked_lm(model: object, ids: Tensor, vocab: Vocab, rate: float, batch_size: int) -> None:
    """The inputs of ``train_masked_lm``: a model whose vocabulary is ``vocab``'s and <mask>."""
    check_instance("model", model, EncoderOnlyTransformer, "an EncoderOnlyTransformer")
    if model.config.src_vocab_size != mask_id(vocab) + 1:
        raise ValueError(f"model: expected config.src_vocab_size = len(vocab) + 1 = {mask_id(vocab) + 1} "
                         f"(the vocabulary and <mask>), got {model.config.src_vocab_size}")
    check_token_ids("ids", ids, mask_id(vocab), "vocab")
    check_probability("rate", rate)
    check_positive_int("batch_size", batch_size)


def _best_word(logits: Tensor, vocab: Vocab) -> str:
    logits = logits[: mask_id(vocab)].clone()  # never <mask> itself
    logits[: vocab.unk_id + 1] = float("-inf")  # nor a special token
    return vocab.itos[int(logits.argmax())]


@torch.no_grad()
def fill_masked(model: EncoderOnlyTransformer, vocab: Vocab, sentence: str, position: int) -> str:
    """``sentence`` with the word at ``position`` hidden behind ``<mask>`` and filled by the model's
    most probable word, read from both sides."""
    check_instance("model", model, EncoderOnlyTransformer, "an EncoderOnlyTransformer")
    check_model_vocab("vocab", vocab, model, "src", extra=1)  # the model's vocabulary adds <mask>
    words = check_sentence("sentence", sentence).split()
    check_index("position", position, len(words), context=" (a word of sentence)")
    ids = torch.tensor([vocab.encode(" ".join(words))])
    ids[0, position] = mask_id(vocab)
    model.eval()
    return " ".join([*words[:position], _best_word(model(ids)[0, position], vocab), *words[position + 1:]])


@torch.no_grad()
def lm_fill(model: DecoderOnlyTransformer, vocab: Vocab, sentence: str, position: int) -> str:
    """The same blank filled by a language model: its most probable next word after ``<sos>`` and the
    words before ``position`` (a decoder cannot read the words after it)."""
    check_instance("model", model, DecoderOnlyTransformer, "a DecoderOnlyTransformer")
    check_model_vocab("vocab", vocab, model, "tgt")
    words = check_sentence("sentence", sentence).split()
    check_index("position", position, len(words), context=" (a word of sentence)")
    ids = torch.tensor([[vocab.sos_id, *vocab.encode(" ".join(words[:position]))]])
    model.eval()
    return " ".join([*words[:position], _best_word(model(ids)[0, -1], vocab), *words[position + 1:]])


FILL_FAILURES = ("ne without pas", "pronoun before a noun subject", "determiner", "other")
_SUBJECT_PRONOUNS = frozenset(p[0] for p in PRONOUNS.values()) | {ELISIONS["je"]}
_DETERMINERS = frozenset(f for forms in DETERMINERS.values() for f in forms if f) | {ELISIONS["le"]}


def fill_failure(sentence: str, filled: str, position: int) -> str:
    """What is wrong with ``filled`` (``sentence`` with the word at ``position`` replaced), read off the
    word written there, one of ``FILL_FAILURES``: *ne* (or *n'*) with no *pas* after it; a subject pronoun
    written where the sentence's noun subject begins (*elle petit cheval blanc va ...*); a determiner that
    does not fit its place (another gender or number than its noun's, or where no determiner goes);
    anything else. It names a kind; whether the fill is grammatical is the oracle's to say."""
    words, written = check_sentence("sentence", sentence).split(), check_sentence("filled", filled).split()
    check_index("position", position, len(words), context=" (a word of sentence)")
    if len(written) != len(words):
        raise ValueError(f"filled: expected the sentence with one word replaced ({len(words)} words), "
                         f"got {len(written)} words")
    word = written[position]
    if word in ("ne", ELISIONS["ne"]) and "pas" not in written[position + 1:]:
        return FILL_FAILURES[0]
    if word in _SUBJECT_PRONOUNS and position == 0 and words[0] in _DETERMINERS:
        return FILL_FAILURES[1]
    if word in _DETERMINERS:
        return FILL_FAILURES[2]
    return FILL_FAILURES[3]
