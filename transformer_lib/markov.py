"""From Markov chains to attention, on one long-range dependency of the book's French.

In "son beau canard dans les villes froides est vieux" the last word agrees with *canard*, six words
back, not with *villes*, the nearest noun. Four ways to choose between an adjective's four forms
(masculine / feminine, singular / plural) after the words before it:

* ``bigram_table``: a first-order Markov chain, the next word counted after the previous one (chapter 8's
  baseline). After "est" it knows the number, never the gender.
* ``skip_bigram_table``: every earlier word votes for the next one with its own counts, at any distance
  (a second-order "skip" model): the subject votes, and so does every other word, *villes* included.
* ``HandSetAgreement``: one attention head whose query asks for "the first noun" and whose value carries
  that noun's gender and number, then a feed-forward network that turns them into the form. Attention is
  the skip model with a learned choice of *which* earlier word to listen to.
* ``AgreementReader``: a one-layer, one-head encoder trained on the same examples (``class_token``).

``agreement_examples`` finds the dependency in the corpus with the grammar's own parse.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import Tensor, nn

from .attention import scaled_dot_product_attention
from .class_token import ClassTokenClassifier
from .config import TransformerConfig
from .grammar import NounPhrase
from .lexicon import ADJECTIVES, NOUNS
from .oracle import parse_french
from .tokenization import Vocab, pad_sequences
from .validation import (
    check_index,
    check_instance,
    check_iterable,
    check_number,
    check_positive_int,
    check_sentence,
    check_token_list,
)
from .validation_tensors import check_token_ids

FORMS = ("masculine singular", "feminine singular", "masculine plural", "feminine plural")  # Adjective.forms' order
_FRENCH_ADJECTIVES = {form: a for a in ADJECTIVES.values() for form in a.forms}
_BE = ("est", "sont")


def _noun_features() -> dict[str, tuple[float, float]]:
    """French noun form -> (feminine, plural); 0.5 where one spelling is both numbers ("souris")."""
    features: dict[str, tuple[float, float]] = {}
    for noun in NOUNS.values():
        fem = float(noun.gender == "f")
        for form, plural in ((noun.fr, 0.0), (noun.fr_plural, 1.0)):
            features[form] = (fem, 0.5) if form in features and features[form][1] != plural else (fem, plural)
    return features


NOUN_FEATURES = _noun_features()


@dataclass(frozen=True)
class AgreementExample:
    prefix: tuple[str, ...]  # the words before the predicate adjective
    forms: tuple[str, str, str, str]  # the adjective's four forms, in FORMS order
    label: int  # the form the grammar wrote: index into FORMS
    subject: int  # position of the subject noun in prefix

    @property
    def distance(self) -> int:
        return len(self.prefix) - self.subject  # words from the subject noun to the adjective

    @property
    def noun_between(self) -> bool:
        """Whether another noun stands between the subject and the adjective ("... dans les villes ...")."""
        return any(w in NOUN_FEATURES for w in self.prefix[self.subject + 1:])


def agreement_examples(sentences: Sequence[str]) -> list[AgreementExample]:
    """Every sentence "<noun phrase> ... est|sont [pas] <adjective>" the grammar parses: a predicate
    adjective that agrees with the subject noun, however many words stand between them."""
    found = []
    for sentence in check_iterable("sentences", sentences, "a list of French sentences"):
        words = check_sentence("sentences", sentence).split()
        be = words[-3] if len(words) > 3 and words[-2] == "pas" else words[-2] if len(words) > 2 else ""
        if words[-1] not in _FRENCH_ADJECTIVES or be not in _BE:
            continue  # cheap filter first: the parse is slower
        parsed = parse_french(sentence)
        if parsed is None or parsed.adjective is None or not isinstance(parsed.subject, NounPhrase):
            continue
        forms = ADJECTIVES[parsed.adjective].forms
        label = (NOUNS[parsed.subject.noun].gender == "f") + 2 * parsed.subject.plural
        subject = next(i for i, w in enumerate(words) if w in NOUN_FEATURES)
        found.append(AgreementExample(tuple(words[:-1]), forms, label, subject))
    return found


def correct(example: AgreementExample, choice: int) -> bool:
    """Whether form ``choice`` is the word the grammar wrote (two forms may be spelled alike: "rouge")."""
    check_instance("example", example, AgreementExample, "an AgreementExample")
    return example.forms[check_index("choice", choice, len(FORMS))] == example.forms[example.label]


def bigram_table(sentences: Sequence[str]) -> Counter:
    """(previous word, next word) counts over the sentences: a first-order Markov chain."""
    table: Counter = Counter()
    for sentence in check_iterable("sentences", sentences, "a list of sentences"):
        words = check_sentence("sentences", sentence).split()
        table.update(zip(words, words[1:], strict=False))
    return table


def skip_bigram_table(sentences: Sequence[str]) -> Counter:
    """(earlier word, next word) counts for every earlier word of the sentence, at any distance."""
    table: Counter = Counter()
    for sentence in check_iterable("sentences", sentences, "a list of sentences"):
        words = check_sentence("sentences", sentence).split()
        table.update((earlier, words[i]) for i in range(1, len(words)) for earlier in words[:i])
    return table


def row_totals(table: Counter) -> Counter:
    """Each first word's count in a (first word, next word) table: the denominators of its probabilities."""
    check_instance("table", table, Counter, "a Counter from bigram_table or skip_bigram_table")
    totals: Counter = Counter()
    for (first, _), n in table.items():
        totals[first] += n
    return totals


def _words(name: str, words: Sequence[str], max_len: int | None = None) -> list[str]:
    """A non-empty list of words (at most ``max_len``): a choice needs a previous word, and forms to choose from."""
    words = check_token_list(name, words, "word")
    if not words:
        raise ValueError(f"{name}: expected at least one word, got none")
    if max_len is not None and len(words) > max_len:
        raise ValueError(f"{name}: expected at most max_len = {max_len} words, got {len(words)}")
    return words


def _check_hand_set(sharpness: float, max_len: int) -> tuple[float, int]:
    """``HandSetAgreement``'s settings: a positive sharpness, a positive longest prefix."""
    return check_number("sharpness", sharpness, positive=True), check_positive_int("max_len", max_len)


def bigram_choice(table: Counter, prefix: Sequence[str], forms: Sequence[str]) -> int:
    """The form the previous word was most often followed by (the first form on a tie)."""
    check_instance("table", table, Counter, "a Counter from bigram_table")
    last = _words("prefix", prefix)[-1]
    counts = [table[(last, form)] for form in _words("forms", forms)]
    return counts.index(max(counts))


def skip_vote_choice(table: Counter, prefix: Sequence[str], forms: Sequence[str],
                     totals: Counter | None = None) -> int:
    """Every earlier word votes with P(form | that word earlier in the sentence); the most votes win."""
    check_instance("table", table, Counter, "a Counter from skip_bigram_table")
    totals = row_totals(table) if totals is None else check_instance("totals", totals, Counter, "a Counter")
    words = _words("prefix", prefix)
    votes = [sum(table[(w, form)] / totals[w] for w in words if totals[w]) for form in _words("forms", forms)]
    return votes.index(max(votes))


class HandSetAgreement(nn.Module):
    """One attention head and one feed-forward network with weights set by hand.

    Each word enters as x = [is a noun, feminine, plural, position, 1]. The last word's query and every
    word's key make the score ``sharpness * (is_noun - position / (max_len + 1))``: nouns win, the earliest
    noun most. The value is [feminine, plural]; the feed-forward network turns it into four form logits.
    """

    def __init__(self, sharpness: float = 40.0, max_len: int = 64) -> None:
        super().__init__()
        sharpness, max_len = _check_hand_set(sharpness, max_len)
        x_size = 5  # is_noun, feminine, plural, position, constant 1
        self.w_q = torch.zeros(x_size, 2)
        self.w_q[4] = torch.tensor([sharpness, sharpness / (max_len + 1)])  # asks: "noun? early?"
        self.w_k = torch.zeros(x_size, 2)
        self.w_k[0, 0], self.w_k[3, 1] = 1.0, -1.0  # answers: [is_noun, -position]
        self.w_v = torch.zeros(x_size, 2)
        self.w_v[1, 0] = self.w_v[2, 1] = 1.0  # carries: [feminine, plural]
        # feed-forward: hidden = relu([f, 1 - f, p, 1 - p]); the logit of (gender g, number n) adds two of them
        self.ff1 = nn.Linear(2, 4)
        self.ff2 = nn.Linear(4, 4, bias=False)
        with torch.no_grad():
            self.ff1.weight.copy_(torch.tensor([[1.0, 0], [-1, 0], [0, 1], [0, -1]]))
            self.ff1.bias.copy_(torch.tensor([0.0, 1, 0, 1]))
            # rows in FORMS order: ms = (1-f)+(1-p), fs = f+(1-p), mp = (1-f)+p, fp = f+p
            self.ff2.weight.copy_(torch.tensor([[0.0, 1, 0, 1], [1, 0, 0, 1], [0, 1, 1, 0], [1, 0, 1, 0]]))
        self.max_len = max_len
        self.last_weights: Tensor | None = None

    def features(self, prefix: Sequence[str]) -> Tensor:
        words = _words("prefix", prefix, self.max_len)
        rows = [[float(w in NOUN_FEATURES), *NOUN_FEATURES.get(w, (0.0, 0.0)), float(i), 1.0]
                for i, w in enumerate(words)]
        return torch.tensor(rows)  # (T, 5)

    def forward(self, prefix: Sequence[str]) -> Tensor:
        x = self.features(prefix)
        q = (x[-1:] @ self.w_q)[None, None]  # (1, 1, 1, 2): the query of the word before the adjective
        k, v = (x @ self.w_k)[None, None], (x @ self.w_v)[None, None]  # (1, 1, T, 2)
        read, weights = scaled_dot_product_attention(q * math.sqrt(2), k, v)  # undo the 1/sqrt(d_k): scores as set
        self.last_weights = weights[0, 0, 0]  # (T,)
        return self.ff2(torch.relu(self.ff1(read[0, 0, 0])))  # (4,) form logits


class AgreementReader(nn.Module):
    """Word embeddings + ``ClassTokenClassifier``: the prefix in, four form logits out, trained."""

    def __init__(self, vocab: Vocab, config: TransformerConfig) -> None:
        super().__init__()
        self.vocab = check_instance("vocab", vocab, Vocab, "a tokenization.Vocab")
        check_instance("config", config, TransformerConfig, "a TransformerConfig")
        self.embed = nn.Embedding(len(vocab.itos), config.d_model)
        self.classifier = ClassTokenClassifier(config, len(FORMS))

    def forward(self, ids: Tensor) -> Tensor:
        check_token_ids("ids", ids, len(self.vocab.itos))
        return self.classifier(self.embed(ids), ids != self.vocab.pad_id)

    def encode(self, examples: Sequence[AgreementExample]) -> Tensor:
        """The examples' prefixes as padded ids (B, T)."""
        examples = _examples("examples", examples)
        return pad_sequences([self.vocab.encode(" ".join(e.prefix)) for e in examples], self.vocab.pad_id)


def _examples(name: str, examples: Sequence[AgreementExample]) -> list[AgreementExample]:
    """At least one AgreementExample (from ``agreement_examples``)."""
    examples = list(check_iterable(name, examples, "a list of AgreementExample"))
    for i, example in enumerate(examples):
        check_instance(f"{name}[{i}]", example, AgreementExample, "an AgreementExample")
    if not examples:
        raise ValueError(f"{name}: expected at least one example, got none")
    return examples


def labels(examples: Sequence[AgreementExample]) -> Tensor:
    """The forms the grammar wrote, (n_examples,) indices into FORMS."""
    return torch.tensor([e.label for e in _examples("examples", examples)])


def agreement_accuracy(examples: Sequence[AgreementExample], choices: Sequence[int]) -> float:
    """Share of the examples whose chosen form is the word the grammar wrote."""
    examples = _examples("examples", examples)
    choices = [check_index(f"choices[{i}]", c, len(FORMS))
               for i, c in enumerate(check_iterable("choices", choices, "a list of form indices"))]
    if len(choices) != len(examples):
        raise ValueError(f"choices: expected one per example ({len(examples)}), got {len(choices)}")
    return sum(correct(e, c) for e, c in zip(examples, choices, strict=True)) / len(examples)
