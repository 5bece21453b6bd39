"""The corpus's lexicon: every English word the grammar uses, with its French forms.

Data, not code: nouns with their gender, plural and the kinds of thing they are (which
verbs and adjectives make sense with them), adjectives with their four French forms and
their place before or after the noun, verbs with their six French present-tense forms and
the subjects and objects they take, prepositions, determiners and pronouns. ``grammar``
builds sentences from these tables; ``corpus`` draws the book's sentence pairs.

The lexicon avoids what the grammar cannot make exactly right: no noun or pre-noun
adjective starts with a vowel or an h, no English noun whose plural equals its singular,
and "you" always means "vous", "they" always "ils" (see ``corpus``).
"""

from __future__ import annotations

from typing import NamedTuple


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
