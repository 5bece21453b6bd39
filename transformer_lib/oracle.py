"""The corpus grammar as an oracle: is a French sentence one the grammar makes, and what kind of mistake is
a wrong translation?

``parse_french`` reads a French sentence back into the ``grammar.Sentence`` that renders to it (or none):
a small recursive-descent reader proposes structures from the lexicon, and ``grammar.render`` decides, so
agreement, elision, contraction and word order are checked by the same code that made the corpus.
``classify_error`` sorts a wrong translation against its reference into one of ``ERROR_KINDS``;
``classify_sentence`` sorts a sentence a model wrote into memorised / new / nonsense / ungrammatical.
``source_positions`` says where in an English source a French content word's lexeme stands (the grammar
translates word by word within a phrase, so a noun, adjective, verb or preposition has its source words).
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import product

from .grammar import NounPhrase, PrepositionalPhrase, Sentence, render
from .lexicon import ADJECTIVES, DETERMINERS, NOUNS, PREDICATE_PRONOUNS, PREPOSITIONS, PRONOUNS, VERBS, fits
from .validation import check_instance, check_iterable, check_sentence, check_token_list

ERROR_KINDS = ("dropped phrase", "agreement", "repetition", "copied phrase", "other")
SENTENCE_KINDS = ("memorised", "new", "nonsense", "ungrammatical")

# French word -> the readings the reader tries. Contractions and elisions are undone first.
_UNDO = {"du": ("de", "le"), "des": ("de", "les"), "au": ("à", "le"), "aux": ("à", "les"),
         "d'": ("de",), "n'": ("ne",), "j'": ("je",), "l'": ("l'",)}
_DETERMINERS: dict[str, set[str]] = {}
for _en, _forms in DETERMINERS.items():
    for _form in _forms:
        if _form is not None:
            _DETERMINERS.setdefault(_form, set()).add(_en)
_DETERMINERS["l'"] = {"the"}
_NOUN_FORMS: dict[str, set[tuple[str, bool]]] = {}  # "souris" is singular and plural
for _noun in NOUNS.values():
    for _form, _plural in ((_noun.fr, False), (_noun.fr_plural, True)):
        _NOUN_FORMS.setdefault(_form, set()).add((_noun.en, _plural))
_ADJECTIVE_FORMS = {form: a.en for a in ADJECTIVES.values() for form in a.forms}
_VERB_FORMS = {form: v.en for v in VERBS.values() for form in v.fr}
_PRONOUNS = {fr: en for en, (fr, _, _) in PRONOUNS.items()}
_PREPOSITIONS = {p.fr: p.en for p in PREPOSITIONS.values()}  # "près de" is two words
# A French word's lexeme: forms of one adjective, noun, verb or determiner share one.
_LEMMAS = {**{f: ("adjective", a) for f, a in _ADJECTIVE_FORMS.items()},
           **{f: ("noun", min(n for n, _ in readings)) for f, readings in _NOUN_FORMS.items()},
           **{f: ("verb", v) for f, v in _VERB_FORMS.items()},
           **{f: ("determiner", "/".join(sorted(d))) for f, d in _DETERMINERS.items()}}


# A French content word -> the English phrases of its lexeme, in either number or person.
_ENGLISH: dict[str, set[tuple[str, ...]]] = {}
for _adjective in ADJECTIVES.values():
    for _form in _adjective.forms:
        _ENGLISH.setdefault(_form, set()).add((_adjective.en,))
for _noun in NOUNS.values():
    for _form in (_noun.fr, _noun.fr_plural):
        _ENGLISH.setdefault(_form, set()).update({(_noun.en,), (_noun.en_plural,)})
for _verb in VERBS.values():
    for _form in _verb.fr:
        _ENGLISH.setdefault(_form, set()).update({(_verb.en,), (_verb.en_third,)})
for _preposition in PREPOSITIONS.values():  # "près de": "près" stands for "near"; "de" alone is no preposition
    _ENGLISH.setdefault(_preposition.fr.split()[0], set()).add(tuple(_preposition.en.split()))


def _expand(words: Sequence[str]) -> list[str]:
    return [part for w in words for part in _UNDO.get(w, (w,))]


def _noun_phrases(words: list[str], i: int, negated_object: bool, with_pp: bool) -> Iterator[tuple[NounPhrase, int]]:
    if i >= len(words):
        return
    determiners = set(_DETERMINERS.get(words[i], ()))
    if negated_object and words[i] == "de":
        determiners.add("a")
    for determiner in sorted(determiners):
        j = i + 1
        before = [_ADJECTIVE_FORMS[words[j]]] if j < len(words) and words[j] in _ADJECTIVE_FORMS else []
        for start in ([j + 1, j] if before else [j]):
            adjectives = before if start == j + 1 else []
            if start >= len(words) or words[start] not in _NOUN_FORMS:
                continue
            k = start + 1
            afters = [([], k)]
            if k < len(words) and words[k] in _ADJECTIVE_FORMS:
                afters.append(([_ADJECTIVE_FORMS[words[k]]], k + 1))
            for (noun, plural), (after, end) in product(sorted(_NOUN_FORMS[words[start]]), afters):
                phrase = NounPhrase(noun, determiner, plural, tuple(adjectives + after))
                yield phrase, end
                if with_pp:
                    for pp, pp_end in _prepositional_phrases(words, end):
                        yield NounPhrase(noun, determiner, plural, phrase.adjectives, pp), pp_end


def _prepositional_phrases(words: list[str], i: int) -> Iterator[tuple[PrepositionalPhrase, int]]:
    for fr, en in _PREPOSITIONS.items():
        parts = fr.split()
        if words[i:i + len(parts)] == parts:
            for phrase, end in _noun_phrases(words, i + len(parts), negated_object=False, with_pp=False):
                yield PrepositionalPhrase(en, phrase), end


def _readings(words: list[str]) -> Iterator[Sentence]:
    subjects: list[tuple[str | NounPhrase, int]] = []
    if words and words[0] in _PRONOUNS:
        subjects.append((_PRONOUNS[words[0]], 1))
    subjects += list(_noun_phrases(words, 0, negated_object=False, with_pp=True))
    for subject, i in subjects:
        negated = i < len(words) and words[i] == "ne"
        j = i + negated
        if j >= len(words) or words[j] not in _VERB_FORMS:
            continue
        verb = _VERB_FORMS[words[j]]
        k = j + 1
        if negated:
            if k >= len(words) or words[k] != "pas":
                continue
            k += 1
        rest: list[tuple[dict, int]] = [({}, k)]
        rest += [({"obj": obj}, e) for obj, e in _noun_phrases(words, k, negated_object=negated, with_pp=False)]
        if k < len(words) and words[k] in _ADJECTIVE_FORMS:
            rest.append(({"adjective": _ADJECTIVE_FORMS[words[k]]}, k + 1))
        for parts, e in rest:
            if e == len(words):
                yield Sentence(subject, verb, negated=negated, **parts)
            if "adjective" not in parts:
                for pp, end in _prepositional_phrases(words, e):
                    if end == len(words):
                        yield Sentence(subject, verb, negated=negated, pp=pp, **parts)


def parse_french(sentence: str) -> Sentence | None:
    """The grammar's ``Sentence`` whose French rendering is exactly ``sentence`` (space-separated tokens,
    elisions as their own token: "d' une"), or None when the grammar makes no such sentence. Sense is
    not checked here (``makes_sense``): "la table boit le lait" parses."""
    words = check_sentence("sentence", sentence).split()
    text = " ".join(words)
    for reading in _readings(_expand(words)):
        try:
            if render(reading)[1] == text:
                return reading
        except ValueError:  # a structure the grammar does not allow (a plural mass noun, ...)
            continue
    return None


def _phrases(sentence: Sentence) -> list[NounPhrase]:
    found = []
    for phrase in (sentence.subject, sentence.obj, None if sentence.pp is None else sentence.pp.object):
        while isinstance(phrase, NounPhrase):
            found.append(phrase)
            phrase = None if phrase.pp is None else phrase.pp.object
    return found


def makes_sense(sentence: Sentence) -> bool:
    """Whether the grammar's sampler could draw ``sentence``: every adjective fits its noun, and the verb's
    subject and object and every preposition's object are of the kinds they take."""
    check_instance("sentence", sentence, Sentence, "a grammar.Sentence (parse_french reads one)")
    verb = VERBS[sentence.verb]
    if any(not fits(a, p.noun) for p in _phrases(sentence) for a in p.adjectives):
        return False
    if isinstance(sentence.subject, NounPhrase):
        if not NOUNS[sentence.subject.noun].kinds & verb.subjects:
            return False
    elif sentence.adjective is not None and sentence.subject not in PREDICATE_PRONOUNS:
        return False
    if sentence.obj is not None and not NOUNS[sentence.obj.noun].kinds & verb.objects:
        return False
    if sentence.adjective is not None and isinstance(sentence.subject, NounPhrase):
        if not fits(sentence.adjective, sentence.subject.noun):
            return False
    pps = [p.pp for p in _phrases(sentence) if p.pp is not None] + ([sentence.pp] if sentence.pp else [])
    return all(NOUNS[pp.object.noun].kinds & PREPOSITIONS[pp.preposition].objects for pp in pps)


def classify_sentence(sentence: str, training: Collection[str]) -> str:
    """One of ``SENTENCE_KINDS`` for a sentence a model wrote: "memorised" (a training sentence), "new" (not
    one, but the grammar makes it and its sampler could draw it), "nonsense" (the grammar's syntax and
    agreement, with a pairing the sampler never draws, like a table that drinks), or "ungrammatical"."""
    text = " ".join(check_sentence("sentence", sentence).split())
    # a str is refused: ``in`` would find the sentence inside a longer one
    if not isinstance(check_iterable("training", training, "a set or list of training sentences"), Collection):
        raise TypeError(f"training: expected a set or list of training sentences, got {type(training).__name__}")
    if text in training:
        return "memorised"
    reading = parse_french(text)
    if reading is None:
        return "ungrammatical"
    return "new" if makes_sense(reading) else "nonsense"


def _loops(words: list[str]) -> set[tuple[str, ...]]:
    """The runs of words immediately followed by themselves: ("sur", "la", "table") in "sur la table sur la
    table"."""
    return {tuple(words[i:i + n]) for n in range(1, len(words) // 2 + 1) for i in range(len(words) - 2 * n + 1)
            if words[i:i + n] == words[i + n:i + 2 * n]}


def _lemma(word: str) -> tuple[str, str]:
    return _LEMMAS.get(word, ("word", word))


def source_positions(french_word: str, source: str) -> tuple[int, ...]:
    """The positions of ``source`` (an English sentence, split on spaces) that hold ``french_word``'s
    lexeme in English: every occurrence, and every word of a phrase ("in front of" for *devant*).
    Empty for a word that is no noun, adjective, verb or preposition (a determiner, *ne*, *pas*), or
    whose lexeme the source does not have.

    >>> source_positions("grises", "a grey car near the grey cats")
    (1, 5)
    >>> source_positions("devant", "the cat in front of a dog"), source_positions("le", "the cat")
    ((2, 3, 4), ())
    """
    check_sentence("french_word", french_word)
    words = check_sentence("source", source).split()
    found = {i + k for phrase in _ENGLISH.get(french_word, ()) for i in range(len(words) - len(phrase) + 1)
             if tuple(words[i:i + len(phrase)]) == phrase for k in range(len(phrase))}
    return tuple(sorted(found))


def first_difference(hypothesis: str, reference: str) -> int:
    """The index of the first word where ``hypothesis`` departs from ``reference`` (the shorter one's
    length if one is the start of the other).

    >>> first_difference("le chat noir dort", "le chat dort"), first_difference("le chat", "le chat dort")
    (2, 2)
    """
    h = check_sentence("hypothesis", hypothesis).split()
    r = check_sentence("reference", reference).split()
    return next((i for i, (a, b) in enumerate(zip(h, r, strict=False)) if a != b), min(len(h), len(r)))


def classify_error(hypothesis: str, reference: str) -> str:
    """One of ``ERROR_KINDS`` for a wrong translation ``hypothesis`` of ``reference``, the first that
    applies. Both are compared word by word; a word's *lexeme* is the adjective, noun, verb or determiner
    it is a form of (petites and petit share one; le, la, l' and les share "the"; un and une share "a").

    - "repetition": the output has a run of words immediately followed by the same run ("sur la table
      sur la table", "mange mange") that the reference does not have: the decoder looped. A phrase that
      occurs twice but not back to back ("le chat mange le chat") is no loop;
    - "dropped phrase": the output is the reference with two or more consecutive words left out (what
      is left may change form: "n'est pas froid" for "n'est pas sur la table froide");
    - "agreement": the same lexemes in the same places, some in another form, and the output is not a
      sentence the grammar makes (``parse_french`` finds none): its forms disagree ("table noires"). A
      change the grammar accepts ("les chats mangent" for "le chat mange") says something else: "other";
    - "copied phrase": the words that replace or add to the reference (the shortest edit) include one
      that is not a determiner, and each of those is (a form of) a word the reference has elsewhere: the
      decoder took it from another phrase of the sentence. A wrong determiner alone is not a copy;
    - "other": none of these.
    """
    h = check_sentence("hypothesis", hypothesis).split()
    r = check_sentence("reference", reference).split()
    if h == r:
        raise ValueError(f"hypothesis: expected a wrong translation, got the reference itself {hypothesis!r}")
    if _loops(h) - _loops(r):
        return "repetition"
    lemmas = [_lemma(w) for w in h]
    gap = len(r) - len(h)
    if gap >= 2 and any(lemmas == [_lemma(w) for w in r[:i] + r[i + gap:]] for i in range(len(h) + 1)):
        return "dropped phrase"
    if len(h) == len(r) and all(_lemma(a) == _lemma(b) for a, b in zip(h, r, strict=True)):
        return "agreement" if parse_french(hypothesis) is None else "other"
    # the words the output has that the reference has not at that place: the shortest edit
    prefix = first_difference(hypothesis, reference)
    suffix = 0
    while suffix < min(len(h), len(r)) - prefix and h[-1 - suffix] == r[-1 - suffix]:
        suffix += 1
    added = h[prefix:len(h) - suffix]
    elsewhere = {_lemma(w) for w in r[:prefix] + r[len(r) - suffix:]}
    content = [w for w in added if _lemma(w)[0] != "determiner"]
    if content and all(_lemma(w) in elsewhere for w in content):
        return "copied phrase"
    return "other"


@dataclass
class ErrorAnalysis:
    counts: dict[str, int]  # every kind of ERROR_KINDS, in that order
    examples: dict[str, list[tuple[str, str, str]]] = field(default_factory=dict)  # kind -> (source, output, ref)


def classify_errors(errors: Sequence[tuple[str, str, str]]) -> ErrorAnalysis:
    """Counts and examples by kind for (source, hypothesis, reference) triples (``EvaluationResult.errors()``)."""
    if not isinstance(errors, Sequence) or isinstance(errors, str):
        raise TypeError(f"errors: expected a sequence of (source, hypothesis, reference), got {type(errors).__name__}")
    analysis = ErrorAnalysis({kind: 0 for kind in ERROR_KINDS}, {kind: [] for kind in ERROR_KINDS})
    for n, triple in enumerate(errors):
        source, hypothesis, reference = check_token_list(f"errors[{n}]", triple, item="string")
        kind = classify_error(hypothesis, reference)
        analysis.counts[kind] += 1
        analysis.examples[kind].append((source, hypothesis, reference))
    return analysis
