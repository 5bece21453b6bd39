"""A generated English -> French corpus: the translation task the book trains on.

Nothing is downloaded. Sentences come from a small grammar and a hand-written lexicon,
chosen so that the French differs from the English in the ways attention has to handle:

* **word order**: most French adjectives follow the noun ("the black cat" -> "le chat
  noir"), a few precede it ("the small cat" -> "le petit chat"); negation wraps the verb
  ("does not sleep" -> "ne dort pas");
* **agreement**: determiners and adjectives agree in gender and number with the noun,
  verbs with their subject, and a predicate adjective with a subject several words away
  ("the old tables are not green" -> "les vieilles tables ne sont pas vertes");
* **small rules**: elision before a vowel (j', n', d'), contractions of de and à with
  le and les (du, des, au, aux), "pas de" for an indefinite object of a negated verb
  ("i do not have a cat" -> "je n' ai pas de chat"), "a" -> "an" in English.

Conventions: lower case, no punctuation, tokens separated by single spaces. An elided
French word is its own token ("je n' aime pas", like the Moses tokenizer's split), so
the word-level vocabulary stays small and "n'" lines up with "not";
:func:`join_elisions` gives the usual spelling ("je n'aime pas") for display.

The lexicon avoids what this grammar cannot make exactly right: no noun or pre-noun
adjective starts with a vowel or an h (so there is no l', bel, vieil, mon before a
feminine vowel), no English noun whose plural equals its singular (sheep, fish), and
English "you" always means "vous", "they" always "ils", so that every English sentence
has exactly one French translation.

The test split holds adjective-noun combinations that never occur in training
(:data:`DEFAULT_HELD_OUT`): a model that gets them right has composed the adjective and
the noun rather than memorised the phrase.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from .validation import check_edges, check_int

# ----------------------------------------------------------------------------- lexicon


class Noun(NamedTuple):
    en: str
    en_plural: str
    fr: str
    fr_plural: str
    gender: str  # "m" or "f"
    kinds: frozenset[str]  # what the noun is: person, animal, food, drink, object, place, and where it can be
    countable: bool = True  # mass nouns (milk, bread) take no "a" and no plural


def _noun(en: str, en_plural: str, fr: str, fr_plural: str, gender: str, kinds: str, countable: bool = True) -> Noun:
    return Noun(en, en_plural, fr, fr_plural, gender, frozenset(kinds.split()), countable)


NOUNS: dict[str, Noun] = {n.en: n for n in (
    # people
    _noun("boy", "boys", "garçon", "garçons", "m", "person"),
    _noun("girl", "girls", "fille", "filles", "f", "person"),
    _noun("woman", "women", "femme", "femmes", "f", "person"),
    _noun("brother", "brothers", "frère", "frères", "m", "person"),
    _noun("sister", "sisters", "sœur", "sœurs", "f", "person"),
    _noun("mother", "mothers", "mère", "mères", "f", "person"),
    _noun("father", "fathers", "père", "pères", "m", "person"),
    _noun("king", "kings", "roi", "rois", "m", "person"),
    _noun("queen", "queens", "reine", "reines", "f", "person"),
    # animals
    _noun("cat", "cats", "chat", "chats", "m", "animal"),
    _noun("dog", "dogs", "chien", "chiens", "m", "animal"),
    _noun("horse", "horses", "cheval", "chevaux", "m", "animal"),
    _noun("mouse", "mice", "souris", "souris", "f", "animal"),
    _noun("cow", "cows", "vache", "vaches", "f", "animal"),
    _noun("fox", "foxes", "renard", "renards", "m", "animal"),
    _noun("duck", "ducks", "canard", "canards", "m", "animal"),
    _noun("goat", "goats", "chèvre", "chèvres", "f", "animal"),
    _noun("rabbit", "rabbits", "lapin", "lapins", "m", "animal"),
    # food and drink
    _noun("apple", "apples", "pomme", "pommes", "f", "food"),
    _noun("cake", "cakes", "gâteau", "gâteaux", "m", "food"),
    _noun("carrot", "carrots", "carotte", "carottes", "f", "food"),
    _noun("banana", "bananas", "banane", "bananes", "f", "food"),
    _noun("pear", "pears", "poire", "poires", "f", "food"),
    _noun("lemon", "lemons", "citron", "citrons", "m", "food"),
    _noun("cookie", "cookies", "biscuit", "biscuits", "m", "food"),
    _noun("bread", "breads", "pain", "pains", "m", "food", countable=False),
    _noun("cheese", "cheeses", "fromage", "fromages", "m", "food", countable=False),
    _noun("soup", "soups", "soupe", "soupes", "f", "food", countable=False),
    _noun("milk", "milks", "lait", "laits", "m", "drink", countable=False),
    _noun("coffee", "coffees", "café", "cafés", "m", "drink", countable=False),
    _noun("tea", "teas", "thé", "thés", "m", "drink", countable=False),
    _noun("juice", "juices", "jus", "jus", "m", "drink", countable=False),
    _noun("wine", "wines", "vin", "vins", "m", "drink", countable=False),
    # things
    _noun("table", "tables", "table", "tables", "f", "object surface"),
    _noun("chair", "chairs", "chaise", "chaises", "f", "object surface"),
    _noun("bed", "beds", "lit", "lits", "m", "object surface"),
    _noun("book", "books", "livre", "livres", "m", "object readable openable"),
    _noun("letter", "letters", "lettre", "lettres", "f", "object readable openable"),
    _noun("newspaper", "newspapers", "journal", "journaux", "m", "object readable"),
    _noun("car", "cars", "voiture", "voitures", "f", "object container surface"),
    _noun("box", "boxes", "boîte", "boîtes", "f", "object container surface openable"),
    _noun("bag", "bags", "sac", "sacs", "m", "object container openable"),
    _noun("key", "keys", "clé", "clés", "f", "object"),
    _noun("ball", "balls", "ballon", "ballons", "m", "object"),
    _noun("hat", "hats", "chapeau", "chapeaux", "m", "object"),
    _noun("cup", "cups", "tasse", "tasses", "f", "object"),
    _noun("door", "doors", "porte", "portes", "f", "object openable"),
    _noun("lamp", "lamps", "lampe", "lampes", "f", "object"),
    _noun("bike", "bikes", "vélo", "vélos", "m", "object"),
    # places ("destination": one can go to it)
    _noun("house", "houses", "maison", "maisons", "f", "place container destination"),
    _noun("garden", "gardens", "jardin", "jardins", "m", "place container destination"),
    _noun("market", "markets", "marché", "marchés", "m", "place destination"),
    _noun("park", "parks", "parc", "parcs", "m", "place container destination"),
    _noun("beach", "beaches", "plage", "plages", "f", "place destination"),
    _noun("station", "stations", "gare", "gares", "f", "place destination"),
    _noun("museum", "museums", "musée", "musées", "m", "place container destination"),
    _noun("forest", "forests", "forêt", "forêts", "f", "place container"),
    _noun("city", "cities", "ville", "villes", "f", "place container"),
    _noun("shop", "shops", "magasin", "magasins", "m", "place container destination"),
    _noun("kitchen", "kitchens", "cuisine", "cuisines", "f", "place container destination"),
)}


class Adjective(NamedTuple):
    en: str
    forms: tuple[str, str, str, str]  # masculine singular, feminine singular, masculine plural, feminine plural
    before_noun: bool  # French position: "petit chat" (True) or "chat noir" (False)
    kinds: frozenset[str]  # the kinds of noun it describes
    colour: bool = False  # English puts a colour last: "the small black cat"


def _adjective(en: str, forms: str, before_noun: bool, kinds: str, colour: bool = False) -> Adjective:
    ms, fs, mp, fp = forms.split()
    return Adjective(en, (ms, fs, mp, fp), before_noun, frozenset(kinds.split()), colour)


ADJECTIVES: dict[str, Adjective] = {a.en: a for a in (
    # before the noun in French
    _adjective("small", "petit petite petits petites", True, "person animal food object place"),
    _adjective("big", "grand grande grands grandes", True, "animal object place"),  # not "grand père"
    _adjective("beautiful", "beau belle beaux belles", True, "animal object place"),  # not "belle sœur"
    _adjective("young", "jeune jeune jeunes jeunes", True, "person animal"),
    _adjective("old", "vieux vieille vieux vieilles", True, "person animal object place"),
    _adjective("good", "bon bonne bons bonnes", True, "food drink"),
    _adjective("pretty", "joli jolie jolis jolies", True, "person animal object place"),
    _adjective("new", "nouveau nouvelle nouveaux nouvelles", True, "object place"),
    # after the noun
    _adjective("red", "rouge rouge rouges rouges", False, "object food", colour=True),
    _adjective("green", "vert verte verts vertes", False, "object food", colour=True),
    _adjective("black", "noir noire noirs noires", False, "animal object", colour=True),
    _adjective("white", "blanc blanche blancs blanches", False, "animal object", colour=True),
    _adjective("blue", "bleu bleue bleus bleues", False, "object", colour=True),
    _adjective("grey", "gris grise gris grises", False, "animal object", colour=True),
    _adjective("happy", "heureux heureuse heureux heureuses", False, "person animal"),
    _adjective("tired", "fatigué fatiguée fatigués fatiguées", False, "person animal"),
    _adjective("sad", "triste triste tristes tristes", False, "person animal"),
    _adjective("heavy", "lourd lourde lourds lourdes", False, "object"),
    _adjective("hot", "chaud chaude chauds chaudes", False, "food drink object place"),
    _adjective("cold", "froid froide froids froides", False, "food drink object place"),
)}


# Combinations the sampler never makes: correct grammar, but a French idiom with another meaning
# ("vieille fille" is a spinster, "vieux garçon" a bachelor, "petit pain" a bread roll).
IDIOMS = frozenset({("old", "girl"), ("old", "boy"), ("small", "bread")})


def fits(adjective: str, noun: str) -> bool:
    """Does the sampler ever put this adjective on this noun?"""
    return bool(ADJECTIVES[adjective].kinds & NOUNS[noun].kinds) and (adjective, noun) not in IDIOMS


class Verb(NamedTuple):
    en: str  # base form: "eat"
    en_third: str  # third person singular: "eats"
    fr: tuple[str, ...]  # present tense: je, tu, il/elle, nous, vous, ils/elles
    subjects: frozenset[str]  # kinds of noun that can be its subject
    objects: frozenset[str]  # kinds of noun that can be its object; empty for an intransitive verb


def _verb(en: str, en_third: str, fr: str, subjects: str, objects: str = "") -> Verb:
    forms = tuple(fr.split())
    assert len(forms) == 6, en
    return Verb(en, en_third, forms, frozenset(subjects.split()), frozenset(objects.split()))


ANIMATE = "person animal"
VERBS: dict[str, Verb] = {v.en: v for v in (
    # transitive
    _verb("see", "sees", "vois vois voit voyons voyez voient", ANIMATE, "person animal object place food"),
    _verb("like", "likes", "aime aimes aime aimons aimez aiment", ANIMATE, "person animal object food drink place"),
    _verb("eat", "eats", "mange manges mange mangeons mangez mangent", ANIMATE, "food"),
    _verb("drink", "drinks", "bois bois boit buvons buvez boivent", ANIMATE, "drink"),
    _verb("have", "has", "ai as a avons avez ont", ANIMATE, "animal object food"),
    _verb("want", "wants", "veux veux veut voulons voulez veulent", ANIMATE, "animal object food drink"),
    _verb("take", "takes", "prends prends prend prenons prenez prennent", ANIMATE, "object food"),
    _verb("buy", "buys", "achète achètes achète achetons achetez achètent", "person", "animal object food drink"),
    _verb("find", "finds", "trouve trouves trouve trouvons trouvez trouvent", ANIMATE, "animal object"),
    _verb("watch", "watches", "regarde regardes regarde regardons regardez regardent", ANIMATE, ANIMATE),
    _verb("hear", "hears", "entends entends entend entendons entendez entendent", ANIMATE, ANIMATE),
    _verb("read", "reads", "lis lis lit lisons lisez lisent", "person", "readable"),
    _verb("open", "opens", "ouvre ouvres ouvre ouvrons ouvrez ouvrent", "person", "openable"),
    # intransitive
    _verb("sleep", "sleeps", "dors dors dort dormons dormez dorment", ANIMATE),
    _verb("run", "runs", "cours cours court courons courez courent", ANIMATE),
    _verb("sing", "sings", "chante chantes chante chantons chantez chantent", "person"),
    _verb("walk", "walks", "marche marches marche marchons marchez marchent", ANIMATE),
    _verb("play", "plays", "joue joues joue jouons jouez jouent", ANIMATE),
    _verb("work", "works", "travaille travailles travaille travaillons travaillez travaillent", "person"),
    _verb("swim", "swims", "nage nages nage nageons nagez nagent", ANIMATE),
    _verb("wait", "waits", "attends attends attend attendons attendez attendent", ANIMATE),
    # special: "be" takes a predicate adjective or a place, "go" a destination ("to the park")
    _verb("be", "is", "suis es est sommes êtes sont", "person animal food drink object place"),
    _verb("go", "goes", "vais vas va allons allez vont", ANIMATE),
)}


class Preposition(NamedTuple):
    en: str
    fr: str
    objects: frozenset[str]  # kinds of noun it can govern


PREPOSITIONS: dict[str, Preposition] = {p.en: p for p in (
    Preposition("on", "sur", frozenset({"surface"})),
    Preposition("under", "sous", frozenset({"surface"})),
    Preposition("in", "dans", frozenset({"container"})),
    Preposition("near", "près de", frozenset({"person", "animal", "object", "place"})),
    Preposition("behind", "derrière", frozenset({"person", "animal", "object", "place"})),
    Preposition("in front of", "devant", frozenset({"person", "animal", "object", "place"})),
    Preposition("with", "avec", frozenset({"person", "animal"})),
    Preposition("to", "à", frozenset({"destination"})),  # only after "go"
)}
LOCATIONS = ("on", "under", "in", "near", "behind", "in front of", "with")  # "with" last

# English determiner -> French (masculine singular, feminine singular, plural); "a" has no plural.
DETERMINERS: dict[str, tuple[str, str, str | None]] = {
    "the": ("le", "la", "les"),
    "a": ("un", "une", None),
    "my": ("mon", "ma", "mes"),
    "your": ("votre", "votre", "vos"),
    "his": ("son", "sa", "ses"),
    "her": ("son", "sa", "ses"),
    "our": ("notre", "notre", "nos"),
    "their": ("leur", "leur", "leurs"),
}

# Subject pronoun -> (French pronoun, index into Verb.fr, English verb is third person singular)
PRONOUNS: dict[str, tuple[str, int, bool]] = {
    "i": ("je", 0, False),
    "you": ("vous", 4, False),
    "he": ("il", 2, True),
    "she": ("elle", 2, True),
    "we": ("nous", 3, False),
    "they": ("ils", 5, False),
}
# Pronouns whose gender and number French can show on a predicate adjective: "she is happy" ->
# "elle est heureuse". "i am happy" could be "heureux" or "heureuse", so the grammar does not make it.
PREDICATE_PRONOUNS: dict[str, tuple[str, bool]] = {"he": ("m", False), "she": ("f", False), "they": ("m", True)}

BE_FORMS_EN = {"i": "am", "you": "are", "we": "are", "they": "are", "he": "is", "she": "is"}

FRENCH_VOWELS = frozenset("aeiouyàâäéèêëîïôöùûüœ")
ELISIONS = {"je": "j'", "ne": "n'", "de": "d'", "le": "l'", "la": "l'"}
CONTRACTIONS = {("de", "le"): "du", ("de", "les"): "des", ("à", "le"): "au", ("à", "les"): "aux"}

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
MAX_NOVEL_PER_COMBINATION = 10_000  # bounded work: 5 combinations x 10,000 take about 10 s


# "be" and "go" are drawn more often than the other verbs: their forms (suis, sommes, vont...) and the
# predicate agreement they bring would otherwise be rare.
_VERB_DRAW = [v for v in VERBS for _ in range({"be": 3, "go": 2}.get(v, 1))]


class _Sampler:
    """Draws random grammatical, sensible sentences ("the cat eats the apple", never "the apple eats the cat").

    ``force`` = (adjective, noun) puts that combination into one noun phrase that can hold it.
    """

    def __init__(self, rng: random.Random, force: tuple[str, str] | None = None) -> None:
        self.rng = rng
        self.force = force

    def nouns(self, kinds: frozenset[str]) -> list[Noun]:
        return [n for n in NOUNS.values() if n.kinds & kinds]

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
        fitting = [a for a in ADJECTIVES.values() if fits(a.en, noun.en)]
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


# ----------------------------------------------------------------------------- the corpus

Pair = tuple[str, str]

DEFAULT_HELD_OUT: tuple[tuple[str, str], ...] = (
    ("white", "car"),  # "voiture blanche": feminine form, after the noun
    ("small", "horse"),  # "petits chevaux": before the noun, irregular plural
    ("old", "table"),  # "vieille table": irregular feminine, before the noun
    ("happy", "girl"),  # "fille heureuse"
    ("green", "book"),  # "livre vert"
)


@dataclass
class Corpus:
    """Sentence pairs split for training.

    ``test`` holds ``n_pairs // 10`` ordinary pairs plus ``novel``: pairs that combine
    an adjective and a noun in a way (``held_out``) that neither ``train`` nor ``valid``
    ever does.
    """

    train: list[Pair]
    valid: list[Pair]
    test: list[Pair]
    novel: list[Pair] = field(default_factory=list)
    held_out: tuple[tuple[str, str], ...] = DEFAULT_HELD_OUT
    seed: int = 0

    def splits(self) -> dict[str, list[Pair]]:
        return {"train": self.train, "valid": self.valid, "test": self.test}


def _length_ok(pair: Pair) -> bool:
    return all(MIN_WORDS <= len(side.split()) <= MAX_WORDS for side in pair)


def make_corpus(
    seed: int = 0,
    n_pairs: int = 15_000,
    held_out: Sequence[tuple[str, str]] = DEFAULT_HELD_OUT,
    novel_per_combination: int = 40,
) -> Corpus:
    """Generate ``n_pairs`` unique (English, French) pairs, split 80/10/10, plus the novel test pairs.

    Deterministic: the same arguments give the same corpus. Every sentence has 3 to 15
    words on both sides. Pairs that combine a ``held_out`` (adjective, noun) go only to
    the test split, ``novel_per_combination`` of them per combination at least.
    """
    check_int("seed", seed)
    check_int("n_pairs", n_pairs, minimum=10, maximum=MAX_PAIRS)  # at least 10 to split 80/10/10
    check_int("novel_per_combination", novel_per_combination, minimum=0, maximum=MAX_NOVEL_PER_COMBINATION)
    if isinstance(held_out, str):
        raise TypeError("held_out: expected a sequence of (adjective, noun) pairs, got a str")
    held_out = tuple(_check_combination("held_out", c) for c in held_out)
    if len(held_out) * novel_per_combination > MAX_PAIRS:  # checked up front: bounded work, never a hang
        raise ValueError(f"novel_per_combination: {len(held_out)} held-out combinations x {novel_per_combination} "
                         f"novel pairs exceed {MAX_PAIRS} pairs in all")

    rng = random.Random(seed)
    seen: set[str] = set()
    regular: list[Pair] = []
    novel: dict[tuple[str, str], list[Pair]] = {c: [] for c in held_out}

    def add(sentence: Sentence) -> tuple[str, str] | None:
        """Render and keep a new pair; returns the held-out combination it holds, if any."""
        pair = render(sentence)
        if pair[0] in seen or not _length_ok(pair):
            return None
        seen.add(pair[0])
        hits = sorted(adjective_noun_pairs(sentence) & set(held_out))
        if hits:
            novel[hits[0]].append(pair)
            return hits[0]
        regular.append(pair)
        return None

    attempts, max_attempts = 0, 50 * n_pairs
    while len(regular) < n_pairs:
        attempts += 1
        if attempts > max_attempts:
            raise ValueError(f"n_pairs: the grammar did not yield {n_pairs} unique pairs in {max_attempts} draws")
        add(random_sentence(rng))
    for combination in held_out:
        attempts = 0
        while len(novel[combination]) < novel_per_combination:
            attempts += 1
            if attempts > 50 * (novel_per_combination + 1):
                raise ValueError(f"novel_per_combination: could not make {novel_per_combination} "
                                 f"unique pairs with {combination}")
            add(random_sentence(rng, force=combination))

    n_train, n_valid = (8 * n_pairs) // 10, n_pairs // 10
    novel_pairs = [pair for combination in held_out for pair in novel[combination]]
    test = regular[n_train + n_valid:] + novel_pairs
    rng.shuffle(test)
    return Corpus(
        train=regular[:n_train],
        valid=regular[n_train:n_train + n_valid],
        test=test,
        novel=novel_pairs,
        held_out=held_out,
        seed=seed,
    )


def split_by_length(
    pairs: Sequence[Pair], edges: Sequence[int] = (3, 6, 9, 12, 16)
) -> dict[tuple[int, int], list[Pair]]:
    """Group pairs by source length (words): bucket (lo, hi) holds lo <= length < hi.

    Consecutive ``edges`` bound the buckets. A pair outside every bucket is an error,
    not silently dropped.
    """
    edges = check_edges("edges", edges)
    buckets: dict[tuple[int, int], list[Pair]] = {(a, b): [] for a, b in zip(edges, edges[1:], strict=False)}
    for i, pair in enumerate(_check_pairs(pairs)):
        length = len(pair[0].split())
        if not edges[0] <= length < edges[-1]:
            raise ValueError(
                f"pairs[{i}]: source length {length} lies outside the buckets [{edges[0]}, {edges[-1]}): {pair[0]!r}"
            )
        for lo, hi in buckets:
            if lo <= length < hi:
                buckets[(lo, hi)].append(pair)
                break
    return buckets


def _check_pairs(pairs: object, name: str = "pairs") -> Sequence[Pair]:
    if isinstance(pairs, str) or not isinstance(pairs, Sequence):
        raise TypeError(f"{name}: expected a list of (source, target) string pairs, got {type(pairs).__name__}")
    for i, pair in enumerate(pairs):
        if not (isinstance(pair, tuple | list) and len(pair) == 2 and all(isinstance(s, str) for s in pair)):
            raise TypeError(f"{name}[{i}]: expected a (source, target) pair of strings, got {pair!r}")
    return pairs


def iter_rule_examples() -> Iterator[tuple[str, Sentence]]:
    """One sentence per rule of the grammar, for the book and corpus_stats.py."""
    cat, table = NounPhrase("cat"), NounPhrase("table")
    yield "adjective after the noun", Sentence(NounPhrase("cat", adjectives=("black",)), "sleep")
    yield "adjective before the noun", Sentence(NounPhrase("horse", "a", adjectives=("small",)), "run")
    yield "both sides of the noun", Sentence("i", "see", obj=NounPhrase("car", "the", adjectives=("old", "red")))
    yield "feminine and plural agreement", Sentence(NounPhrase("chair", plural=True, adjectives=("old",)),
                                                    "be", adjective="green")
    yield "conjugation (nous)", Sentence("we", "eat", obj=NounPhrase("apple", plural=True))
    yield "negation with n'", Sentence("he", "have", obj=NounPhrase("dog", "a"), negated=True)
    yield "elision j'", Sentence("i", "like", obj=cat)
    yield "contraction de + le = du", Sentence(NounPhrase("girl", "my"), "sleep",
                                              pp=PrepositionalPhrase("near", cat))
    yield "contraction à + le = au", Sentence("they", "go", pp=PrepositionalPhrase("to", NounPhrase("market")))
    yield "subject with a phrase", Sentence(NounPhrase("cat", plural=True, pp=PrepositionalPhrase("on", table)),
                                            "be", adjective="tired")
