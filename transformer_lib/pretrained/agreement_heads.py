"""Chapter 5's agreement heads and probes, computed once and stored.

``compute_agreement_heads`` scores every head of the shipped translator and language model against the
grammar's agreement links, over the whole test split: for each head, the fraction of agreeing words
(adjectives, verbs) whose largest attention weight lands on the word they agree with; the best
position-only rule for the same links; the verbs whose subject is separated from them by another noun
(an "attractor"). Then a linear probe per layer for gender and number, trained on the vectors of the
training split's words and tested on the test split's. About a minute of one core: the registry
(``transformer_lib.stored``) stores it in ``agreement_heads.json``, which chapter 5 reads
(``agreement.stored_head_scores``), and its test recomputes it.
"""

from __future__ import annotations

from collections import defaultdict

import torch

from ..agreement import KINDS, agreement, head_agreement, layer_states, linear_probe, position_baseline, visible_links
from ..capture import capture_attention
from ..lexicon import NOUNS
from .recipe import book_corpus
from .shipped import book_lm
from .snapshots import book_model

RECHECK = 60  # the chapter recomputes the scores of the first RECHECK test sentences live
PROBE_TRAIN = 3000  # training sentences for the probes
NOUN_FORMS = {form for noun in NOUNS.values() for form in (noun.fr, noun.fr_plural)}


def _groups(pairs: list[tuple[str, str]]) -> dict[tuple[int, int], list[int]]:
    """Sentence indices by (source length, target length): one forward pass per group, no padding."""
    same = defaultdict(list)
    for n, (en, fr) in enumerate(pairs):
        same[len(en.split()), len(fr.split())].append(n)
    return same


def _encode(model_name: str, checkpoint, pairs, indices):
    vocab = checkpoint.tgt_vocab  # the language model's vocabulary is the translator's French one
    tgt = torch.tensor([[vocab.sos_id, *vocab.encode(pairs[n][1])] for n in indices])  # (B, 1 + T)
    if model_name != "translator":
        return None, tgt
    return torch.tensor([checkpoint.src_vocab.encode(pairs[n][0]) for n in indices]), tgt


def _attention_of(model_name, checkpoint, src, tgt):
    if model_name == "translator":
        return capture_attention(checkpoint.model, src, tgt).decoder_self
    return capture_attention(checkpoint.model, tgt).decoder_self


def _attractor(found, link) -> bool:
    """A verb with another noun between it and its subject ("le chat sur les tables dort")."""
    between = found.tokens[link.controller + 1:link.dependent]
    return link.kind == "verb" and any(word in NOUN_FORMS for word in between)


def _score(model_name: str, checkpoint, pairs) -> dict:
    found = [agreement(fr) for _, fr in pairs]
    hits, links = {False: [], True: []}, []
    for indices in _groups(pairs).values():
        src, tgt = _encode(model_name, checkpoint, pairs, indices)
        rows = [visible_links(found[n]) for n in indices]
        weights = _attention_of(model_name, checkpoint, src, tgt)
        for predicting in hits:
            hits[predicting].append(head_agreement(weights, rows, predicting=predicting))
        links += [(n, link) for n, row in zip(indices, rows, strict=True) for link in row]
    kinds = [link.kind for _, link in links]
    first = torch.tensor([n < RECHECK for n, _ in links])
    far = torch.tensor([_attractor(found[n], link) for n, link in links])
    result = {"n_links": {k: kinds.count(k) for k in KINDS}, "first_links": int(first.sum()),
              "attractor_links": int(far.sum())}
    for predicting, parts in hits.items():
        found_hits = torch.cat(parts, dim=2)  # (L, h, n_links)
        part = result["predicting" if predicting else "from the word"] = {"heads": {}, "baseline": {}}
        for kind in ("adjective", "verb"):
            chosen = torch.tensor([k == kind for k in kinds])
            part["heads"][kind] = found_hits[:, :, chosen].double().mean(dim=2).tolist()  # (L, h)
            distance, rate = position_baseline([link for _, link in links if link.kind == kind], predicting)
            part["baseline"][kind] = {"distance": distance, "rate": rate}
        part["first_hits"] = found_hits[:, :, first].sum(dim=2).tolist()  # (L, h), first RECHECK sentences
        part["attractor_heads"] = found_hits[:, :, far].double().mean(dim=2).tolist()
        part["attractor_baseline"] = position_baseline([link for (_, link), f in zip(links, far, strict=True)
                                                         if f], predicting)[1]
    return result


def _probe(model_name: str, checkpoint, train_pairs, test_pairs) -> dict:
    """Per layer (0 = the input embedding): test accuracy of linear probes for gender and number."""
    features = {}
    for split, pairs in (("train", train_pairs), ("test", test_pairs)):
        found = [agreement(fr) for _, fr in pairs]
        per_layer, gender, plural, words = None, [], [], []
        for indices in _groups(pairs).values():
            src, tgt = _encode(model_name, checkpoint, pairs, indices)
            states = layer_states(checkpoint.model, tgt, src)  # per layer (B, 1 + T, d)
            tokens = [(b, i) for b, n in enumerate(indices) for i in sorted(found[n].plural)]
            batch = torch.tensor([b for b, _ in tokens])
            position = torch.tensor([i + 1 for _, i in tokens])
            vectors = [s[batch, position] for s in states]
            per_layer = vectors if per_layer is None else [torch.cat(p) for p in zip(per_layer, vectors, strict=True)]
            gender += [found[indices[b]].gender.get(i) for b, i in tokens]
            plural += [found[indices[b]].plural[i] for b, i in tokens]
            words += [found[indices[b]].tokens[i] for b, i in tokens]
        features[split] = per_layer, gender, plural, words
    result = {}
    (train_x, train_g, train_p, train_w), (test_x, test_g, test_p, test_w) = features["train"], features["test"]
    for label in ("gender", "number"):
        train_y, test_y = (train_g, test_g) if label == "gender" else (train_p, test_p)
        keep_train = torch.tensor([y is not None for y in train_y])  # verbs have a number and no gender
        keep_test = torch.tensor([y is not None for y in test_y])
        to_label = (lambda y: y == "f") if label == "gender" else bool
        train_t = torch.tensor([to_label(y) for y in train_y if y is not None])
        test_t = torch.tensor([to_label(y) for y in test_y if y is not None])
        # words whose form has both labels in the training split ("les", "rouge"): only context can tell
        labels_of = defaultdict(set)
        for word, y in zip(train_w, train_y, strict=True):
            if y is not None:
                labels_of[word].add(y)
        ambiguous = torch.tensor([len(labels_of[w]) == 2 for w, y in zip(test_w, test_y, strict=True) if y is not None])
        share = test_t[ambiguous].double().mean().item()
        accuracies, ambiguous_accuracies = [], []
        for x, z in zip(train_x, test_x, strict=True):
            correct = linear_probe(x[keep_train], train_t, z[keep_test]) == test_t
            accuracies.append(correct.double().mean().item())
            ambiguous_accuracies.append(correct[ambiguous].double().mean().item())
        result[label] = {
            "accuracy": accuracies, "ambiguous_accuracy": ambiguous_accuracies,
            "majority": max(test_t.double().mean().item(), 1 - test_t.double().mean().item()),
            "ambiguous_majority": max(share, 1 - share), "n_ambiguous": int(ambiguous.sum()),
            "n_train": len(train_t), "n_test": len(test_t),
        }
    return result


def compute_agreement_heads() -> dict:
    """The head scores and the probes of the shipped translator and language model (the module's docstring)."""
    torch.manual_seed(0)
    corpus = book_corpus()
    checkpoints = {"translator": book_model(), "language model": book_lm()}
    record = {"recheck_sentences": RECHECK, "probe_train_sentences": PROBE_TRAIN, "models": {}}
    for name, checkpoint in checkpoints.items():
        record["models"][name] = {"scores": _score(name, checkpoint, corpus.test),
                                  "probes": _probe(name, checkpoint, corpus.train[:PROBE_TRAIN], corpus.test)}
    return record
