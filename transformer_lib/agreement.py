"""Which word agrees with which, and which attention heads find it.

The corpus's grammar knows every agreement of a French sentence: a determiner and an adjective take
the gender and number of their noun, a predicate adjective those of the subject, a verb the person
and number of its subject. ``agreement`` reads them off a sentence the grammar generates (through
``oracle.parse_french``); ``head_agreement`` asks, for every head, whether the largest weight from
the agreeing word (the query) lands on the word it agrees with; ``position_baseline`` is the best a
head that looks a fixed number of tokens back could do; ``linear_probe`` asks whether a layer's
vectors encode gender or number linearly. ``stored_head_scores`` reads what ``tools/agreement_heads.py``
computed with them over the whole test split for the shipped models (package data, so that a chapter
downloaded alone finds it too).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

import torch
from torch import Tensor

from .grammar import NounPhrase, Sentence
from .lexicon import ADJECTIVES, NOUNS, PRONOUNS
from .models import DecoderOnlyTransformer, Transformer
from .oracle import parse_french
from .validation import check_bool, check_instance, check_int, check_number, check_sentence
from .validation_tensors import check_finite, check_ndim, check_token_ids

KINDS = ("determiner", "adjective", "verb")
STORED_SCORES = "agreement_heads.json"  # in transformer_lib/pretrained, written by tools/agreement_heads.py


def stored_head_scores() -> dict[str, Any]:
    """The head scores and probes of the shipped translator and language model over the test split,
    as ``tools/agreement_heads.py`` stored them (chapter 5 reads them and re-checks a part live)."""
    return json.loads(resources.files("transformer_lib.pretrained").joinpath(STORED_SCORES).read_text())


@dataclass(frozen=True)
class Link:
    """Token ``dependent`` agrees with token ``controller`` (indices into ``sentence.split()``)."""

    dependent: int
    controller: int
    kind: str  # one of KINDS


@dataclass
class SentenceAgreement:
    tokens: list[str]
    links: list[Link] = field(default_factory=list)
    gender: dict[int, str] = field(default_factory=dict)  # token -> "m" / "f", for the words of noun phrases
    plural: dict[int, bool] = field(default_factory=dict)  # token -> number, for noun phrases and verbs


def _phrases_in_order(phrase: NounPhrase | None) -> list[NounPhrase]:
    """A noun phrase and those nested in it, in the order render writes them."""
    if phrase is None:
        return []
    return [phrase, *_phrases_in_order(None if phrase.pp is None else phrase.pp.object)]


class _Reader:
    """Walks the tokens left to right, finding each phrase of a parsed sentence where render put it."""

    def __init__(self, tokens: list[str]) -> None:
        self.tokens, self.cursor, self.found = tokens, 0, SentenceAgreement(tokens)

    def noun_phrase(self, phrase: NounPhrase, negated_object: bool = False) -> int:
        """Record the phrase's agreements; return its noun's index."""
        noun = NOUNS[phrase.noun]
        gender = noun.gender
        form = noun.fr_plural if phrase.plural else noun.fr
        at = self.tokens.index(form, self.cursor)
        adjectives = [ADJECTIVES[a] for a in phrase.adjectives]
        before = [a for a in adjectives if a.before_noun]
        after = [a for a in adjectives if not a.before_noun]
        span = range(at - len(before), at + 1 + len(after))
        for i, adjective in zip([*span[:len(before)], *span[len(before) + 1:]], [*before, *after], strict=True):
            expected = adjective.forms[(gender == "f") + 2 * phrase.plural]
            if self.tokens[i] != expected:
                raise ValueError(f"sentence: expected the adjective {expected!r} at token {i}, got {self.tokens[i]!r}")
            self.found.links.append(Link(i, at, "adjective"))
        determiner = span[0] - 1
        if not (negated_object and phrase.determiner == "a"):  # "pas de chats": "de" shows no agreement
            self.found.links.append(Link(determiner, at, "determiner"))
        for i in (determiner, *span):
            self.found.gender[i], self.found.plural[i] = gender, phrase.plural
        self.cursor = span[-1] + 1
        return at

    def subject(self, sentence: Sentence) -> tuple[int, bool]:
        """The index of the word the verb agrees with, and whether it is plural."""
        if isinstance(sentence.subject, str):
            self.cursor = 1
            return 0, PRONOUNS[sentence.subject][1] >= 3  # persons 4-6 of Verb.fr are plural
        phrases = _phrases_in_order(sentence.subject)
        head = self.noun_phrase(phrases[0])
        for phrase in phrases[1:]:
            self.noun_phrase(phrase)
        return head, sentence.subject.plural


def agreement(french: str) -> SentenceAgreement:
    """Every agreement link of a French sentence of the corpus's grammar (space-separated tokens)."""
    sentence = parse_french(check_sentence("french", french))
    if sentence is None:
        raise ValueError(f"french: expected a sentence of the corpus's grammar, got {french!r}")
    reader = _Reader(french.split())
    subject, plural = reader.subject(sentence)
    verb = reader.cursor + (reader.tokens[reader.cursor] in ("ne", "n'"))
    reader.found.links.append(Link(verb, subject, "verb"))
    reader.found.plural[verb] = plural
    reader.cursor = verb + 1
    for phrase in _phrases_in_order(sentence.obj):
        reader.noun_phrase(phrase, negated_object=sentence.negated and phrase is sentence.obj)
    if sentence.adjective is not None:  # "les chaises sont vertes": the last word
        reader.found.links.append(Link(len(reader.tokens) - 1, subject, "adjective"))
    for phrase in _phrases_in_order(None if sentence.pp is None else sentence.pp.object):
        reader.noun_phrase(phrase)
    return reader.found


def visible_links(found: SentenceAgreement, causal: bool = True) -> list[Link]:
    """The links a query can see: with causal attention, only controllers before their dependent."""
    check_instance("found", found, SentenceAgreement, "a SentenceAgreement (from agreement())")
    check_bool("causal", causal)
    return [link for link in found.links if not causal or link.controller < link.dependent]


def head_agreement(weights: Sequence[Tensor], links: Sequence[Sequence[Link]], offset: int = 1,
                   predicting: bool = False) -> Tensor:
    """(n_layers, n_heads, n_links) bool: whether each head's largest weight from each link's dependent
    lands on its controller. ``weights``: per layer (B, h, T, T), batch row b holding the sentence of
    ``links[b]``, its token i at position i + ``offset`` (1 after ``<sos>``). ``predicting=True`` asks
    from the position that predicts the dependent instead (the one before it, which must know the
    agreement to write the word)."""
    check_bool("predicting", predicting)
    check_int("offset", offset, minimum=int(predicting))
    check_instance("weights", weights, list | tuple, "a list of (batch, heads, T, T) tensors, one per layer")
    for i, w in enumerate(weights):
        check_ndim(f"weights[{i}]", w, 4, "(batch, heads, T, T)")
        if not w.is_floating_point() or w.shape[-1] != w.shape[-2] or w.shape[-1] == 0:
            raise ValueError(f"weights[{i}]: expected floating-point (batch, heads, T, T) weights with T >= 1, "
                             f"got {w.dtype} of shape {tuple(w.shape)}")
        check_finite(f"weights[{i}]", w)
    if not weights or len({w.shape for w in weights}) != 1:
        raise ValueError("weights: expected one (batch, heads, T, T) tensor per layer, all of one shape")
    check_instance("links", links, list | tuple, "one list of Links per batch row")
    if len(links) != weights[0].shape[0]:
        raise ValueError(f"links: expected one list per batch row ({weights[0].shape[0]}), got {len(links)}")
    rows = [(b, link) for b, row in enumerate(links) for link in _check_links(f"links[{b}]", row)]
    size = weights[0].shape[-1]
    for _, link in rows:
        if not 0 <= link.controller + offset < size or not 0 <= link.dependent + offset - predicting < size:
            raise ValueError(f"links: expected links within the {size} positions of weights at offset {offset}, "
                             f"got {link}")
    if not rows:
        return torch.zeros(len(weights), weights[0].shape[1], 0, dtype=torch.bool)
    batch = torch.tensor([b for b, _ in rows])
    query = torch.tensor([link.dependent + offset - predicting for _, link in rows])
    key = torch.tensor([link.controller + offset for _, link in rows])
    return torch.stack([w[batch, :, query].argmax(dim=-1).T == key for w in weights])  # (L, h, n)


def _check_links(name: str, links: object) -> Sequence[Link]:
    check_instance(name, links, list | tuple, "a list of Links")
    for i, link in enumerate(links):
        check_instance(f"{name}[{i}]", link, Link, "a Link")
    return links


def position_baseline(links: Sequence[Link], predicting: bool = False) -> tuple[int, float]:
    """The best position-only rule, "look d tokens back", for these links: (d, fraction it gets right),
    from the dependent or (``predicting``) from the position before it."""
    _check_links("links", links)
    check_bool("predicting", predicting)
    distances = torch.tensor([link.dependent - predicting - link.controller for link in links])
    if distances.numel() == 0:
        raise ValueError("links: expected at least one link")
    values, counts = distances.unique(return_counts=True)
    best = int(counts.argmax())
    return int(values[best]), counts[best].item() / distances.numel()


def linear_probe(train_x: Tensor, train_y: Tensor, test_x: Tensor, ridge: float = 1e-3) -> Tensor:
    """A linear classifier (ridge regression to +-1 on standardised features) trained to read the binary
    label ``train_y`` (N,) off vectors ``train_x`` (N, d); returns its (M,) bool predictions for ``test_x``."""
    check_number("ridge", ridge, minimum=0.0)
    check_ndim("train_x", train_x, 2, "(N, d)")
    for name, x in (("train_x", train_x), ("test_x", test_x)):
        check_instance(name, x, Tensor, "a (N, d) tensor")
        check_finite(name, x)
        if x.dim() != 2 or x.shape[1] != train_x.shape[1] or x.shape[0] == 0:
            raise ValueError(f"{name}: expected (N, {train_x.shape[1]}) with N >= 1 (the width of train_x), "
                             f"got {tuple(x.shape)}")
    check_instance("train_y", train_y, Tensor, "an (N,) tensor of 0/1 labels")
    if train_y.shape != train_x.shape[:1]:
        raise ValueError(f"train_y: expected shape ({len(train_x)},) like train_x's rows, got {tuple(train_y.shape)}")
    if not bool(((train_y == 0) | (train_y == 1)).all()):
        raise ValueError(f"train_y: expected 0/1 labels, got values {train_y.unique().tolist()!r:.60}")
    mean, std = train_x.double().mean(0), train_x.double().std(0).clamp_min(1e-6)

    def design(x: Tensor) -> Tensor:
        return torch.cat([(x.double() - mean) / std, torch.ones(len(x), 1, dtype=torch.float64)], dim=1)

    a = design(train_x)
    target = train_y.double() * 2 - 1
    w = torch.linalg.solve(a.T @ a + ridge * len(a) * torch.eye(a.shape[1], dtype=torch.float64), a.T @ target)
    return design(test_x) @ w > 0


@torch.no_grad()
def layer_states(model: Transformer | DecoderOnlyTransformer, ids: Tensor,
                 src_ids: Tensor | None = None) -> list[Tensor]:
    """The vectors a decoder stack holds for target ids (B, T): the input embedding (with positions) and
    the output of every layer, each (B, T, d_model), read by forward hooks. A ``Transformer`` also needs
    its source, ``src_ids`` (B, S); a ``DecoderOnlyTransformer`` reads ``ids`` alone."""
    check_instance("model", model, (Transformer, DecoderOnlyTransformer), "a Transformer or DecoderOnlyTransformer")
    translator = isinstance(model, Transformer)
    check_token_ids("ids", ids, model.config.tgt_vocab_size)
    if translator and src_ids is None:
        raise ValueError("src_ids: a Transformer needs its source ids, got None")
    if translator:
        check_token_ids("src_ids", src_ids, model.config.src_vocab_size)
    embed, layers = (model.tgt_embed, model.decoder.layers) if translator else (model.embed, model.blocks.layers)
    states: list[Tensor] = []
    hooks = [m.register_forward_hook(lambda _m, _i, out: states.append(out.detach())) for m in (embed, *layers)]
    was_training = model.training
    model.eval()
    try:
        model(src_ids, ids) if translator else model(ids)
    finally:
        model.train(was_training)
        for hook in hooks:
            hook.remove()
    return states
