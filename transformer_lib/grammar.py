"""The corpus's grammar: sentence structures, their English and French renderings, and a sampler.

``Sentence``, ``NounPhrase`` and ``PrepositionalPhrase`` describe a sentence once; ``render``
writes it in both languages, applying French word order, agreement, negation, elision and
contraction (the rules listed in ``corpus``); ``random_sentence`` draws a grammatical,
sensible sentence from the lexicon (``lexicon``).

Longer than 400 lines: the French rules (word order, agreement, negation, elision, contraction)
act on one another inside ``render``; read apart, none of them would be the grammar.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

from .lexicon import (
    ADJECTIVES,
    BE_FORMS_EN,
    CONTRACTIONS,
    DETERMINERS,
    ELISIONS,
    FRENCH_VOWELS,
    LOCATIONS,
    NOUNS,
    PREDICATE_PRONOUNS,
    PREPOSITIONS,
    PRONOUNS,
    VERBS,
    Adjective,
    Noun,
    Preposition,
    Verb,
    fits,
)

# ----------------------------------------------------------------------------- sentences


@dataclass(frozen=True)
class NounPhrase:
    """A determiner, a noun, up to two adjectives (in English order) and an optional phrase.

    ``NounPhrase("cat", "the", plural=True, adjectives=("small", "black"))`` is
    "the small black cats" / "les petits chats noirs".
    """

    noun: str
    determiner: str = "the"
    plural: bool = False
    adjectives: tuple[str, ...] = ()
    pp: PrepositionalPhrase | None = None  # "the cat [on the table]"


@dataclass(frozen=True)
class PrepositionalPhrase:
    preposition: str  # a key of PREPOSITIONS
    object: NounPhrase


@dataclass(frozen=True)
class Sentence:
    """Subject, verb (present tense) and what the verb needs.

    A transitive verb takes ``obj``; "be" takes a predicate ``adjective`` or a place
    ``pp``; "go" takes a ``pp`` with "to". Any verb but "go" may add a location ``pp``.
    ``subject`` is a pronoun (a key of PRONOUNS) or a NounPhrase.
    """

    subject: str | NounPhrase
    verb: str
    obj: NounPhrase | None = None
    adjective: str | None = None
    pp: PrepositionalPhrase | None = None
    negated: bool = False


# ----------------------------------------------------------------------------- rendering


def _lookup(table: dict, key: object, what: str, name: str):
    if not isinstance(key, str):
        raise TypeError(f"{name}: expected a {what} (str), got {type(key).__name__} {key!r}")
    if key not in table:
        raise ValueError(f"{name}: unknown {what} {key!r}; expected one of {sorted(table)}")
    return table[key]


def _check_noun_phrase(phrase: object, name: str) -> tuple[Noun, list[Adjective]]:
    if not isinstance(phrase, NounPhrase):
        raise TypeError(f"{name}: expected a NounPhrase, got {type(phrase).__name__}")
    noun = _lookup(NOUNS, phrase.noun, "noun", f"{name}.noun")
    _lookup(DETERMINERS, phrase.determiner, "determiner", f"{name}.determiner")
    if phrase.plural and (phrase.determiner == "a" or not noun.countable):
        why = "'a' has no plural" if phrase.determiner == "a" else f"{noun.en!r} is a mass noun"
        raise ValueError(f"{name}.plural: cannot be True here ({why})")
    if phrase.determiner == "a" and not noun.countable:
        raise ValueError(f"{name}.determiner: {noun.en!r} is a mass noun and takes no 'a'")
    adjectives = [_lookup(ADJECTIVES, a, "adjective", f"{name}.adjectives") for a in phrase.adjectives]
    before = [a for a in adjectives if a.before_noun]
    after = [a for a in adjectives if not a.before_noun]
    if len(before) > 1 or len(after) > 1:
        raise ValueError(
            f"{name}.adjectives: expected at most one adjective placed before the noun in French and one "
            f"after, got {list(phrase.adjectives)}"
        )
    if len(adjectives) == 2 and (adjectives[0].before_noun is False or not adjectives[1].colour):
        raise ValueError(
            f"{name}.adjectives: two adjectives must be (pre-noun adjective, colour) in English order, "
            f"like ('small', 'black'); got {list(phrase.adjectives)}"
        )
    if phrase.pp is not None:
        _check_pp(phrase.pp, f"{name}.pp")
        if phrase.pp.object.pp is not None:
            raise ValueError(f"{name}.pp.object.pp: phrases nest one level deep at most")
    return noun, adjectives


def _check_pp(pp: object, name: str) -> Preposition:
    if not isinstance(pp, PrepositionalPhrase):
        raise TypeError(f"{name}: expected a PrepositionalPhrase, got {type(pp).__name__}")
    preposition = _lookup(PREPOSITIONS, pp.preposition, "preposition", f"{name}.preposition")
    _check_noun_phrase(pp.object, f"{name}.object")
    return preposition


def _english_noun_phrase(phrase: NounPhrase) -> list[str]:
    noun = NOUNS[phrase.noun]
    words = [phrase.determiner, *phrase.adjectives, noun.en_plural if phrase.plural else noun.en]
    if phrase.pp is not None:
        words += _english_pp(phrase.pp)
    return words


def _english_pp(pp: PrepositionalPhrase) -> list[str]:
    return [*pp.preposition.split(), *_english_noun_phrase(pp.object)]


def _gender_number(phrase: NounPhrase) -> tuple[str, bool]:
    return NOUNS[phrase.noun].gender, phrase.plural


def _agree(adjective: Adjective, gender: str, plural: bool) -> str:
    return adjective.forms[(gender == "f") + 2 * plural]


def _french_noun_phrase(phrase: NounPhrase, negated_object: bool = False) -> list[str]:
    """French words before elision and contraction: "de le chat" becomes "du chat" later."""
    noun = NOUNS[phrase.noun]
    gender, plural = _gender_number(phrase)
    if negated_object and phrase.determiner == "a":
        determiner = "de"  # "je n'ai pas de chat": the indefinite article of a negated object
    else:
        masculine, feminine, plural_form = DETERMINERS[phrase.determiner]
        determiner = plural_form if plural else (feminine if gender == "f" else masculine)
    adjectives = [ADJECTIVES[a] for a in phrase.adjectives]
    before = [_agree(a, gender, plural) for a in adjectives if a.before_noun]
    after = [_agree(a, gender, plural) for a in adjectives if not a.before_noun]
    words = [determiner, *before, noun.fr_plural if plural else noun.fr, *after]
    if phrase.pp is not None:
        words += _french_pp(phrase.pp)
    return words


def _french_pp(pp: PrepositionalPhrase) -> list[str]:
    return [*PREPOSITIONS[pp.preposition].fr.split(), *_french_noun_phrase(pp.object)]


def elide_and_contract(words: Sequence[str]) -> list[str]:
    """Apply French elision (je aime -> j' aime) and then contraction (de le -> du).

    Elision comes first so that "de le" + vowel would stay "de l'" and not become "du".
    """
    elided = [
        ELISIONS[w] if w in ELISIONS and i + 1 < len(words) and words[i + 1][0] in FRENCH_VOWELS else w
        for i, w in enumerate(words)
    ]
    out: list[str] = []
    for w in elided:
        if out and (out[-1], w) in CONTRACTIONS:
            out[-1] = CONTRACTIONS[(out[-1], w)]
        else:
            out.append(w)
    return out


def english_articles(words: Sequence[str]) -> list[str]:
    """"a" becomes "an" before a vowel (every word of the lexicon that starts with one is pronounced so)."""
    return ["an" if w == "a" and i + 1 < len(words) and words[i + 1][0] in "aeiou" else w for i, w in enumerate(words)]


def render(sentence: Sentence) -> tuple[str, str]:
    """The (English, French) pair for a sentence, as space-separated lower-case tokens.

    >>> render(Sentence(NounPhrase("cat", adjectives=("small", "black")), "sleep", negated=True))
    ('the small black cat does not sleep', 'le petit chat noir ne dort pas')
    """
    if not isinstance(sentence, Sentence):
        raise TypeError(f"sentence: expected a Sentence, got {type(sentence).__name__}")
    if not isinstance(sentence.subject, str | NounPhrase):
        raise TypeError(
            f"sentence.subject: expected a pronoun (str) or a NounPhrase, got {type(sentence.subject).__name__}"
        )
    verb = _lookup(VERBS, sentence.verb, "verb", "sentence.verb")
    _check_complements(sentence, verb)

    # subject, and the person/number the verb agrees with
    if isinstance(sentence.subject, str):
        fr_subject, person, third = _lookup(PRONOUNS, sentence.subject, "pronoun", "sentence.subject")
        en_subject, fr_subject = [sentence.subject], [fr_subject]
        be_en = BE_FORMS_EN[sentence.subject]
    else:
        _check_noun_phrase(sentence.subject, "sentence.subject")
        plural = sentence.subject.plural
        person, third = (5, False) if plural else (2, True)
        en_subject, fr_subject = _english_noun_phrase(sentence.subject), _french_noun_phrase(sentence.subject)
        be_en = "are" if plural else "is"

    # the verb group: "does not eat" / "ne mange pas"
    fr_verb = verb.fr[person]
    if verb.en == "be":
        en_verb = [be_en, "not"] if sentence.negated else [be_en]
    elif sentence.negated:
        en_verb = ["does" if third else "do", "not", verb.en]
    else:
        en_verb = [verb.en_third if third else verb.en]
    fr_verb_group = ["ne", fr_verb, "pas"] if sentence.negated else [fr_verb]

    english = en_subject + en_verb
    french = fr_subject + fr_verb_group
    if sentence.obj is not None:
        english += _english_noun_phrase(sentence.obj)
        french += _french_noun_phrase(sentence.obj, negated_object=sentence.negated)
    if sentence.adjective is not None:
        gender, plural = _predicate_agreement(sentence.subject)
        english.append(sentence.adjective)
        french.append(_agree(ADJECTIVES[sentence.adjective], gender, plural))
    if sentence.pp is not None:
        english += _english_pp(sentence.pp)
        french += _french_pp(sentence.pp)
    return " ".join(english_articles(english)), " ".join(elide_and_contract(french))


def _predicate_agreement(subject: str | NounPhrase) -> tuple[str, bool]:
    if isinstance(subject, NounPhrase):
        return _gender_number(subject)
    if subject not in PREDICATE_PRONOUNS:
        raise ValueError(
            f"sentence.subject: a predicate adjective needs a subject whose gender French can show "
            f"({sorted(PREDICATE_PRONOUNS)} or a NounPhrase), got {subject!r}"
        )
    return PREDICATE_PRONOUNS[subject]


def _check_complements(sentence: Sentence, verb: Verb) -> None:
    """The verb gets exactly the complements it needs."""
    transitive = bool(verb.objects)
    if transitive and sentence.obj is None:
        raise ValueError(f"sentence.obj: {verb.en!r} is transitive and needs an object, got None")
    if not transitive and sentence.obj is not None:
        raise ValueError(f"sentence.obj: {verb.en!r} takes no object, got {sentence.obj!r}")
    if sentence.obj is not None:
        _check_noun_phrase(sentence.obj, "sentence.obj")
    if sentence.adjective is not None:
        if verb.en != "be":
            raise ValueError(f"sentence.adjective: only 'be' takes a predicate adjective, got verb {verb.en!r}")
        _lookup(ADJECTIVES, sentence.adjective, "adjective", "sentence.adjective")
    if not isinstance(sentence.negated, bool):
        raise TypeError(f"sentence.negated: expected a bool, got {type(sentence.negated).__name__}")
    preposition = None if sentence.pp is None else _check_pp(sentence.pp, "sentence.pp")
    if verb.en == "go":
        if preposition is None or preposition.en != "to":
            raise ValueError("sentence.pp: 'go' needs a destination phrase with preposition 'to', got "
                             f"{sentence.pp!r}")
    elif preposition is not None and preposition.en == "to":
        raise ValueError(f"sentence.pp: preposition 'to' only follows 'go', got verb {verb.en!r}")
    if verb.en == "be" and (sentence.adjective is None) == (sentence.pp is None):
        raise ValueError("sentence: 'be' needs exactly one of a predicate adjective or a place phrase, got "
                         f"adjective={sentence.adjective!r}, pp={sentence.pp!r}")


def join_elisions(french: str) -> str:
    """Display spelling: "je n' aime pas" -> "je n'aime pas"."""
    return french.replace("' ", "'")


def adjective_noun_pairs(sentence: Sentence) -> set[tuple[str, str]]:
    """Every (adjective, noun) the sentence combines, as a modifier or as a predicate ("the car is red")."""
    pairs: set[tuple[str, str]] = set()
    phrases = []

    def visit(phrase: NounPhrase | None) -> None:
        if phrase is not None:
            phrases.append(phrase)
            if phrase.pp is not None:
                visit(phrase.pp.object)

    visit(sentence.subject if isinstance(sentence.subject, NounPhrase) else None)
    visit(sentence.obj)
    visit(None if sentence.pp is None else sentence.pp.object)
    for phrase in phrases:
        pairs.update((a, phrase.noun) for a in phrase.adjectives)
    if sentence.adjective is not None and isinstance(sentence.subject, NounPhrase):
        pairs.add((sentence.adjective, sentence.subject.noun))
    return pairs


def english_words() -> set[str]:
    """Every token an English sentence of this grammar can contain."""
    words = {"do", "does", "not", "an", *DETERMINERS, *PRONOUNS, *BE_FORMS_EN.values(), *ADJECTIVES}
    words.update(w for p in PREPOSITIONS for w in p.split())
    for n in NOUNS.values():
        words.update((n.en, n.en_plural))
    for v in VERBS.values():
        words.update((v.en, v.en_third))
    return words


def english_word_classes() -> dict[str, str]:
    """Every token of ``english_words`` with its word class: noun, verb ("is" and "eats" too),
    adjective, determiner ("the", "a", "an", possessives), pronoun, preposition (each word of
    "in front of"), or auxiliary ("do", "does", "not"). No token of this grammar has two."""
    classes = dict.fromkeys(("do", "does", "not"), "auxiliary")
    classes.update(dict.fromkeys((*DETERMINERS, "an"), "determiner"))
    classes.update(dict.fromkeys(PRONOUNS, "pronoun"))
    classes.update(dict.fromkeys((w for p in PREPOSITIONS for w in p.split()), "preposition"))
    classes.update(dict.fromkeys(ADJECTIVES, "adjective"))
    classes.update({w: "noun" for n in NOUNS.values() for w in (n.en, n.en_plural)})
    classes.update({w: "verb" for v in VERBS.values() for w in (v.en, v.en_third)})
    classes.update(dict.fromkeys(BE_FORMS_EN.values(), "verb"))
    return classes


def french_words() -> set[str]:
    """Every token a French sentence of this grammar can contain."""
    words = {"ne", "pas", "de", *ELISIONS.values(), *CONTRACTIONS.values(), *(p[0] for p in PRONOUNS.values())}
    words.update(w for forms in DETERMINERS.values() for w in forms if w is not None)
    words.update(w for p in PREPOSITIONS.values() for w in p.fr.split())
    for n in NOUNS.values():
        words.update((n.fr, n.fr_plural))
    for a in ADJECTIVES.values():
        words.update(a.forms)
    for v in VERBS.values():
        words.update(v.fr)
    return words


# ----------------------------------------------------------------------------- sampling

MIN_WORDS, MAX_WORDS = 3, 15
MAX_PAIRS = 200_000  # far below what the grammar can make, so that generation never runs dry


# "be" and "go" are drawn more often than the other verbs: their forms (suis, sommes, vont...) and the
# predicate agreement they bring would otherwise be rare.
_VERB_DRAW = [v for v in VERBS for _ in range({"be": 3, "go": 2}.get(v, 1))]


# The lexicon never changes, so which nouns fit a role and which adjectives fit a noun are looked up
# once (the same lists, in the same order: the sampler draws the same sentences from the same seed).
@cache
def _nouns_of(kinds: frozenset[str]) -> tuple[Noun, ...]:
    return tuple(n for n in NOUNS.values() if n.kinds & kinds)


@cache
def _adjectives_fitting(noun: str) -> tuple[Adjective, ...]:
    return tuple(a for a in ADJECTIVES.values() if fits(a.en, noun))


class _Sampler:
    """Draws random grammatical, sensible sentences ("the cat eats the apple", never "the apple eats the cat").

    ``force`` = (adjective, noun) puts that combination into one noun phrase that can hold it.
    """

    def __init__(self, rng: random.Random, force: tuple[str, str] | None = None) -> None:
        self.rng = rng
        self.force = force

    def nouns(self, kinds: frozenset[str]) -> list[Noun]:
        return list(_nouns_of(kinds))

    def noun_phrase(self, kinds: frozenset[str], with_pp: bool = False) -> NounPhrase:
        rng = self.rng
        if self.force is not None and NOUNS[self.force[1]].kinds & kinds and rng.random() < 0.5:
            adjective, noun_name = self.force
            self.force = None
            noun = NOUNS[noun_name]
            adjectives = [adjective]
            partner_before = not ADJECTIVES[adjective].before_noun
            if ADJECTIVES[adjective].colour or ADJECTIVES[adjective].before_noun:
                partners = [a for a in ADJECTIVES.values() if a.before_noun == partner_before
                            and (a.colour or partner_before) and fits(a.en, noun.en)]
                if partners and rng.random() < 0.3:
                    adjectives.append(rng.choice(partners).en)
            adjectives.sort(key=lambda a: not ADJECTIVES[a].before_noun)
        else:
            noun = rng.choice(self.nouns(kinds))
            adjectives = self.adjectives(noun)
        determiner = rng.choice(("the", "the", "the", "a", "a", "my", "your", "his", "her", "our", "their"))
        if determiner == "a" and not noun.countable:
            determiner = "the"
        plural = noun.countable and determiner != "a" and rng.random() < 0.4
        pp = None
        if with_pp and rng.random() < 0.15:
            preposition = rng.choice(LOCATIONS)
            pp = PrepositionalPhrase(preposition, self.noun_phrase(PREPOSITIONS[preposition].objects))
        return NounPhrase(noun.en, determiner, plural, tuple(adjectives), pp)

    def adjectives(self, noun: Noun) -> list[str]:
        rng = self.rng
        fitting = _adjectives_fitting(noun.en)
        r = rng.random()
        if r < 0.45 or not fitting:
            return []
        if r < 0.85:
            return [rng.choice(fitting).en]
        before = [a.en for a in fitting if a.before_noun]
        colours = [a.en for a in fitting if a.colour]
        if not before or not colours:
            return [rng.choice(fitting).en]
        return [rng.choice(before), rng.choice(colours)]

    def location(self, prepositions: Sequence[str] = LOCATIONS) -> PrepositionalPhrase:
        preposition = self.rng.choice(prepositions)
        return PrepositionalPhrase(preposition, self.noun_phrase(PREPOSITIONS[preposition].objects))

    def sentence(self) -> Sentence:
        rng = self.rng
        verb = VERBS[rng.choice(_VERB_DRAW)]
        negated = rng.random() < 0.3
        if verb.en == "be":
            if rng.random() < 0.5:  # "the car is red"
                if rng.random() < 0.25:
                    pronoun = rng.choice(sorted(PREDICATE_PRONOUNS))
                    fitting = [a.en for a in ADJECTIVES.values() if "person" in a.kinds]
                    return Sentence(pronoun, "be", adjective=rng.choice(fitting), negated=negated)
                subject = self.noun_phrase(verb.subjects, with_pp=True)
                fitting = [a for a in ADJECTIVES if fits(a, subject.noun)]
                return Sentence(subject, "be", adjective=rng.choice(fitting), negated=negated)
            subject = self.subject(frozenset({"person", "animal", "object"}))
            return Sentence(subject, "be", pp=self.location(LOCATIONS[:-1]), negated=negated)  # not "with"
        subject = self.subject(verb.subjects)
        if verb.en == "go":
            destination = PrepositionalPhrase("to", self.noun_phrase(PREPOSITIONS["to"].objects))
            return Sentence(subject, "go", pp=destination, negated=negated)
        obj = self.noun_phrase(verb.objects) if verb.objects else None
        pp = self.location() if rng.random() < (0.3 if obj is not None else 0.6) else None
        return Sentence(subject, verb.en, obj=obj, pp=pp, negated=negated)

    def subject(self, kinds: frozenset[str]) -> str | NounPhrase:
        if "person" in kinds and self.rng.random() < 0.45:
            return self.rng.choice(sorted(PRONOUNS))
        return self.noun_phrase(kinds, with_pp=True)


def random_sentence(rng: random.Random, force: tuple[str, str] | None = None) -> Sentence:
    """One random sentence; with ``force``, one that combines that (adjective, noun)."""
    if not isinstance(rng, random.Random):
        raise TypeError(f"rng: expected a random.Random, got {type(rng).__name__}")
    if force is not None:
        _check_combination("force", force)
    for _ in range(10_000):
        sentence = _Sampler(rng, force).sentence()
        if force is None or force in adjective_noun_pairs(sentence):
            return sentence
    raise ValueError(f"force: no sentence of the grammar combines {force}")


def _check_combination(name: str, combination: object) -> tuple[str, str]:
    if not (isinstance(combination, tuple | list) and len(combination) == 2):
        raise TypeError(f"{name}: expected an (adjective, noun) pair, got {combination!r}")
    adjective, noun = combination
    _lookup(ADJECTIVES, adjective, "adjective", name)
    _lookup(NOUNS, noun, "noun", name)
    if not fits(adjective, noun):
        raise ValueError(f"{name}: the grammar never combines {adjective!r} with {noun!r}")
    return adjective, noun


