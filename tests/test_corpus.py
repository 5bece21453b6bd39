"""The generated English -> French corpus: grammar rule by rule, random samples, splits."""

from __future__ import annotations

import random
import re

import pytest

from transformer_lib.corpus import (
    DEFAULT_HELD_OUT,
    MAX_WORDS,
    MIN_WORDS,
    NOUNS,
    Corpus,
    NounPhrase,
    PrepositionalPhrase,
    Sentence,
    english_words,
    french_words,
    iter_rule_examples,
    join_elisions,
    make_corpus,
    random_sentence,
    render,
    split_by_length,
)

NP, PP = NounPhrase, PrepositionalPhrase

# Written by hand, checked by a French speaker's rules, not produced by render().
GRAMMAR_TABLE = [
    # adjective after the noun, masculine and feminine
    (Sentence(NP("dog", adjectives=("black",)), "run"), "the black dog runs", "le chien noir court"),
    (Sentence("i", "see", obj=NP("car", "a", adjectives=("blue",))), "i see a blue car", "je vois une voiture bleue"),
    # adjective before the noun, regular and irregular
    (Sentence(NP("horse", "a", adjectives=("small",)), "sleep"), "a small horse sleeps", "un petit cheval dort"),
    (Sentence("she", "have", obj=NP("house", "a", adjectives=("beautiful",))),
     "she has a beautiful house", "elle a une belle maison"),
    (Sentence("they", "buy", obj=NP("bike", "a", adjectives=("new",))),
     "they buy a new bike", "ils achètent un nouveau vélo"),
    (Sentence(NP("woman", plural=True), "open", obj=NP("door", plural=True, adjectives=("new",))),
     "the women open the new doors", "les femmes ouvrent les nouvelles portes"),
    # both sides of the noun, plural agreement of everything
    (Sentence(NP("cat", "my", plural=True, adjectives=("old", "white")), "eat", obj=NP("cheese")),
     "my old white cats eat the cheese", "mes vieux chats blancs mangent le fromage"),
    (Sentence(NP("goat", plural=True, adjectives=("young", "grey")), "walk"),
     "the young grey goats walk", "les jeunes chèvres grises marchent"),
    (Sentence("we", "watch", obj=NP("horse", plural=True, adjectives=("beautiful",))),
     "we watch the beautiful horses", "nous regardons les beaux chevaux"),
    # conjugation, person by person
    (Sentence("i", "eat", obj=NP("bread")), "i eat the bread", "je mange le pain"),
    (Sentence("you", "eat", obj=NP("bread")), "you eat the bread", "vous mangez le pain"),
    (Sentence("he", "eat", obj=NP("bread")), "he eats the bread", "il mange le pain"),
    (Sentence("she", "eat", obj=NP("apple", "a")), "she eats an apple", "elle mange une pomme"),
    (Sentence("we", "eat", obj=NP("bread")), "we eat the bread", "nous mangeons le pain"),
    (Sentence("they", "eat", obj=NP("bread")), "they eat the bread", "ils mangent le pain"),
    (Sentence("we", "drink", obj=NP("milk")), "we drink the milk", "nous buvons le lait"),
    (Sentence(NP("dog", plural=True), "drink", obj=NP("milk")),
     "the dogs drink the milk", "les chiens boivent le lait"),
    (Sentence("you", "go", pp=PP("to", NP("park"))), "you go to the park", "vous allez au parc"),
    # elision of je
    (Sentence("i", "like", obj=NP("cake")), "i like the cake", "j' aime le gâteau"),
    (Sentence("i", "have", obj=NP("cat", "a")), "i have a cat", "j' ai un chat"),
    # negation, n' before a vowel, "pas de" for an indefinite object
    (Sentence("i", "sleep", negated=True), "i do not sleep", "je ne dors pas"),
    (Sentence("i", "like", obj=NP("cake"), negated=True), "i do not like the cake", "je n' aime pas le gâteau"),
    (Sentence("she", "have", obj=NP("dog", "a"), negated=True), "she does not have a dog", "elle n' a pas de chien"),
    (Sentence("we", "want", obj=NP("car", "a", adjectives=("small",)), negated=True),
     "we do not want a small car", "nous ne voulons pas de petite voiture"),
    (Sentence("i", "buy", obj=NP("cake", "a"), negated=True), "i do not buy a cake", "je n' achète pas de gâteau"),
    (Sentence("he", "read", obj=NP("newspaper", plural=True), negated=True),
     "he does not read the newspapers", "il ne lit pas les journaux"),
    (Sentence("they", "go", pp=PP("to", NP("beach")), negated=True),
     "they do not go to the beach", "ils ne vont pas à la plage"),
    (Sentence("you", "go", pp=PP("to", NP("market", plural=True)), negated=True),
     "you do not go to the markets", "vous n' allez pas aux marchés"),
    # "be": predicate agreement across the verb
    (Sentence(NP("table", plural=True), "be", adjective="green", negated=True),
     "the tables are not green", "les tables ne sont pas vertes"),
    (Sentence("she", "be", adjective="happy"), "she is happy", "elle est heureuse"),
    (Sentence("he", "be", adjective="old", negated=True), "he is not old", "il n' est pas vieux"),
    (Sentence("they", "be", adjective="tired"), "they are tired", "ils sont fatigués"),
    (Sentence(NP("soup"), "be", adjective="hot"), "the soup is hot", "la soupe est chaude"),
    (Sentence("i", "be", pp=PP("in", NP("kitchen"))), "i am in the kitchen", "je suis dans la cuisine"),
    # prepositions and contractions
    (Sentence(NP("cat"), "sleep", pp=PP("on", NP("bed"))), "the cat sleeps on the bed", "le chat dort sur le lit"),
    (Sentence(NP("dog"), "run", pp=PP("under", NP("table"))),
     "the dog runs under the table", "le chien court sous la table"),
    (Sentence(NP("girl", "my"), "wait", pp=PP("near", NP("cat"))),
     "my girl waits near the cat", "ma fille attend près du chat"),
    (Sentence("he", "play", pp=PP("near", NP("car", plural=True))),
     "he plays near the cars", "il joue près des voitures"),
    (Sentence("she", "work", pp=PP("near", NP("car", "a"))),
     "she works near a car", "elle travaille près d' une voiture"),
    (Sentence("we", "sing", pp=PP("near", NP("garden", "a"))),
     "we sing near a garden", "nous chantons près d' un jardin"),
    (Sentence("we", "sing", pp=PP("near", NP("garden", "our"))),
     "we sing near our garden", "nous chantons près de notre jardin"),
    (Sentence(NP("boy"), "walk", pp=PP("in front of", NP("house"))),
     "the boy walks in front of the house", "le garçon marche devant la maison"),
    (Sentence(NP("duck", "a"), "swim", pp=PP("behind", NP("horse", plural=True))),
     "a duck swims behind the horses", "un canard nage derrière les chevaux"),
    (Sentence(NP("girl"), "play", pp=PP("with", NP("dog", "her"))),
     "the girl plays with her dog", "la fille joue avec son chien"),
    (Sentence(NP("king"), "go", pp=PP("to", NP("garden"))), "the king goes to the garden", "le roi va au jardin"),
    (Sentence(NP("queen", plural=True), "go", pp=PP("to", NP("station"))),
     "the queens go to the station", "les reines vont à la gare"),
    # a phrase inside the subject: agreement with the head noun, not the nearest one
    (Sentence(NP("cat", plural=True, pp=PP("on", NP("table"))), "be", adjective="tired"),
     "the cats on the table are tired", "les chats sur la table sont fatigués"),
    (Sentence(NP("girl", pp=PP("near", NP("dog", plural=True))), "sing", negated=True),
     "the girl near the dogs does not sing", "la fille près des chiens ne chante pas"),
    # possessives agree with the thing owned
    (Sentence(NP("brother", "her"), "read", obj=NP("letter", "his")),
     "her brother reads his letter", "son frère lit sa lettre"),
    (Sentence(NP("sister", "our", plural=True), "find", obj=NP("key", "their", plural=True)),
     "our sisters find their keys", "nos sœurs trouvent leurs clés"),
    (Sentence(NP("mother", "your"), "eat", obj=NP("soup", "your")),
     "your mother eats your soup", "votre mère mange votre soupe"),
    # English "an"
    (Sentence("he", "hear", obj=NP("horse", "a", adjectives=("old",))),
     "he hears an old horse", "il entend un vieux cheval"),
]


@pytest.mark.parametrize(("sentence", "english", "french"), GRAMMAR_TABLE, ids=[row[1] for row in GRAMMAR_TABLE])
def test_grammar_table(sentence: Sentence, english: str, french: str) -> None:
    assert render(sentence) == (english, french)


def test_rule_examples_render() -> None:
    examples = dict(iter_rule_examples())
    assert render(examples["negation with n'"]) == ("he does not have a dog", "il n' a pas de chien")
    assert len(examples) >= 8


def test_join_elisions() -> None:
    assert join_elisions("je n' aime pas près d' une voiture") == "je n'aime pas près d'une voiture"


@pytest.mark.parametrize(
    ("sentence", "error", "match"),
    [
        (Sentence("i", "eat"), ValueError, "transitive"),
        (Sentence("i", "sleep", obj=NP("cat")), ValueError, "takes no object"),
        (Sentence("i", "be", adjective="happy"), ValueError, "gender"),
        (Sentence("he", "be"), ValueError, "exactly one"),
        (Sentence("he", "be", adjective="old", pp=PP("in", NP("house"))), ValueError, "exactly one"),
        (Sentence("he", "go"), ValueError, "'to'"),
        (Sentence("he", "sleep", pp=PP("to", NP("park"))), ValueError, "only follows 'go'"),
        (Sentence("he", "sleep", adjective="old"), ValueError, "only 'be'"),
        (Sentence(NP("zebra"), "sleep"), ValueError, "unknown noun 'zebra'"),
        (Sentence(NP("cat", "a", plural=True), "sleep"), ValueError, "'a' has no plural"),
        (Sentence("i", "drink", obj=NP("milk", "a")), ValueError, "mass noun"),
        (Sentence("i", "drink", obj=NP("milk", plural=True)), ValueError, "mass noun"),
        (Sentence(NP("cat", adjectives=("small", "big")), "sleep"), ValueError, "at most one"),
        (Sentence(NP("cat", adjectives=("black", "small")), "sleep"), ValueError, "English order"),
        (Sentence(NP("cat", "some"), "sleep"), ValueError, "unknown determiner"),
        (Sentence("it", "sleep"), ValueError, "unknown pronoun"),
        (Sentence(NP("cat"), "fly"), ValueError, "unknown verb"),
        (Sentence(NP("cat", pp=PP("on", NP("bed", pp=PP("in", NP("house"))))), "sleep"), ValueError, "one level"),
        (Sentence("he", "sleep", negated="yes"), TypeError, "negated"),
        (Sentence(3, "sleep"), TypeError, "pronoun"),
        ("the cat sleeps", TypeError, "expected a Sentence"),
    ],
)
def test_render_rejects_bad_sentences(sentence: object, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        render(sentence)  # type: ignore[arg-type]


# ----------------------------------------------------------------------------- random samples

VOWEL_START = re.compile(r"^[aeiouyàâéèêîôœ]")


def french_problems(french: str) -> list[str]:
    """Rules checked on the surface string, independently of how render() builds it."""
    words = french.split()
    problems = []
    for a, b in zip(words, words[1:], strict=False):
        if a in ("je", "ne", "de", "le", "la") and VOWEL_START.match(b):
            problems.append(f"missing elision: {a} {b}")
        if a.endswith("'") and not VOWEL_START.match(b):
            problems.append(f"elision before a consonant: {a} {b}")
        if (a, b) in {("de", "le"), ("de", "les"), ("à", "le"), ("à", "les")}:
            problems.append(f"missing contraction: {a} {b}")
        if a == "pas" and b in ("un", "une", "des"):
            problems.append(f"indefinite article after negation: {a} {b}")
    if words.count("ne") + words.count("n'") != words.count("pas"):
        problems.append("ne ... pas unbalanced")
    return problems


def english_problems(english: str) -> list[str]:
    words = english.split()
    problems = []
    for a, b in zip(words, words[1:], strict=False):
        if a == "a" and b[0] in "aeiou":
            problems.append(f"a before a vowel: {a} {b}")
        if a == "an" and b[0] not in "aeiou":
            problems.append(f"an before a consonant: {a} {b}")
    return problems


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    return make_corpus(seed=0)


def all_pairs(corpus: Corpus) -> list[tuple[str, str]]:
    return corpus.train + corpus.valid + corpus.test


def test_samples_are_well_formed(corpus: Corpus) -> None:
    en_lexicon, fr_lexicon = english_words(), french_words()
    for english, french in all_pairs(corpus):
        for side, lexicon in ((english, en_lexicon), (french, fr_lexicon)):
            words = side.split(" ")
            assert MIN_WORDS <= len(words) <= MAX_WORDS, side
            assert all(words), f"empty word (doubled or stray space) in {side!r}"
            assert side == side.lower()
            assert set(words) <= lexicon, (side, set(words) - lexicon)
        assert not french_problems(french), (french, french_problems(french))
        assert not english_problems(english), (english, english_problems(english))
        assert english.split().count("not") == french.split().count("pas"), (english, french)


def test_surface_checks_can_fail() -> None:
    assert french_problems("je aime de le chat")
    assert french_problems("il n' a pas un chat")
    assert french_problems("il ne dort")
    assert english_problems("a apple") and english_problems("an cat")


def test_no_misleading_french_idiom(corpus: Corpus) -> None:
    """Grammatical, but a French reader would read "grand père" as grandfather, "belle sœur" as sister-in-law."""
    idioms = {("grand", "père"), ("grands", "pères"), ("grande", "mère"), ("grandes", "mères"),
              ("beau", "père"), ("beaux", "pères"), ("belle", "mère"), ("belles", "mères"),
              ("beau", "frère"), ("beaux", "frères"), ("belle", "sœur"), ("belles", "sœurs"),
              ("vieille", "fille"), ("vieilles", "filles"), ("vieux", "garçon"), ("vieux", "garçons"),
              ("petit", "pain")}
    for _, french in all_pairs(corpus):
        words = french.split()
        assert not idioms & set(zip(words, words[1:], strict=False)), french


def test_english_determines_french() -> None:
    """One English sentence, one French translation: otherwise exact match would be unreachable."""
    rng = random.Random(7)
    translation: dict[str, str] = {}
    for _ in range(10_000):
        english, french = render(random_sentence(rng))
        assert translation.setdefault(english, french) == french, (english, french, translation[english])


def test_every_rule_occurs_in_the_corpus(corpus: Corpus) -> None:
    french = [f for _, f in corpus.train]
    for pattern in (r"\bj' ", r"\bn' ", r"\bd' un", r"\bdu\b", r"\bau\b", r"\baux\b", r"\bdes\b", r"\bpas de\b",
                    r"\bchevaux\b", r"\bvieilles\b", r"\bbelle\b", r"\bvous \w+ez\b", r"\bnous \w+ons\b"):
        assert any(re.search(pattern, f) for f in french), pattern
    english = [e for e, _ in corpus.train]
    assert any(" an " in e for e in english)


def test_deterministic_from_seed() -> None:
    a, b, c = make_corpus(seed=3, n_pairs=500), make_corpus(seed=3, n_pairs=500), make_corpus(seed=4, n_pairs=500)
    assert (a.train, a.valid, a.test) == (b.train, b.valid, b.test)
    assert a.train != c.train


def test_sizes_and_uniqueness(corpus: Corpus) -> None:
    assert (len(corpus.train), len(corpus.valid)) == (12_000, 1_500)
    assert len(corpus.test) == 1_500 + len(corpus.novel)
    english = [e for e, _ in all_pairs(corpus)]
    assert len(set(english)) == len(english) >= 15_000
    french = {f for _, f in all_pairs(corpus)}
    assert len(french) > 0.95 * len(english)  # his/her and you/your are all that merge


def test_vocabulary_is_moderate_and_test_words_are_seen_in_training(corpus: Corpus) -> None:
    for side in (0, 1):
        train_words = {w for pair in corpus.train for w in pair[side].split()}
        assert 100 <= len(train_words) <= 400
        for pair in corpus.valid + corpus.test:
            assert set(pair[side].split()) <= train_words, pair


def combines(english: str, adjective: str, noun: str) -> bool:
    """Does the English sentence put ``adjective`` on ``noun``, as a modifier or as a predicate?"""
    words = english.split()
    forms = {NOUNS[noun].en, NOUNS[noun].en_plural}
    all_nouns = {f for n in NOUNS.values() for f in (n.en, n.en_plural)}
    for i, word in enumerate(words):  # modifiers sit right before the noun: "the small red car"
        if word in forms and adjective in words[max(0, i - 2): i]:
            return True
    predicate = words[-1] == adjective and ("is" in words[-3:-1] or "are" in words[-3:-1])
    subject_nouns = [w for w in words if w in all_nouns][:1]  # the subject comes first: its head noun
    return predicate and subject_nouns == [w for w in subject_nouns if w in forms] != []


def test_combines_checker() -> None:
    assert combines("the small red car sleeps", "red", "car")
    assert combines("the small red cars sleep", "small", "car")
    assert combines("the cars on the table are not white", "white", "car")
    assert not combines("the cars on the table are not white", "white", "table")
    assert not combines("the red box is near the car", "red", "car")


def test_held_out_combinations_only_in_test(corpus: Corpus) -> None:
    assert corpus.held_out == DEFAULT_HELD_OUT
    for english, _ in corpus.train + corpus.valid:
        for adjective, noun in corpus.held_out:
            assert not combines(english, adjective, noun), english
    for adjective, noun in corpus.held_out:
        assert sum(combines(e, adjective, noun) for e, _ in corpus.test) >= 40
    test = set(corpus.test)
    for pair in corpus.novel:
        assert pair in test
        assert any(combines(pair[0], a, n) for a, n in corpus.held_out), pair


def test_held_out_words_are_seen_apart_in_training(corpus: Corpus) -> None:
    """The novel test asks for a new combination of known words, not for unknown words."""
    english = [e.split() for e, _ in corpus.train]
    for adjective, noun in corpus.held_out:
        assert sum(adjective in words for words in english) >= 50
        assert sum(NOUNS[noun].en in words or NOUNS[noun].en_plural in words for words in english) >= 50


def test_split_by_length(corpus: Corpus) -> None:
    buckets = split_by_length(corpus.test, edges=(3, 6, 9, 12, 16))
    assert list(buckets) == [(3, 6), (6, 9), (9, 12), (12, 16)]
    assert sum(len(b) for b in buckets.values()) == len(corpus.test)
    for (lo, hi), pairs in buckets.items():
        assert pairs, (lo, hi)
        assert all(lo <= len(e.split()) < hi for e, _ in pairs)


@pytest.mark.parametrize(
    ("pairs", "edges", "error", "match"),
    [
        ([("a b c d", "x")], (3, 4), ValueError, "outside the buckets"),
        ([("a b c", "x")], (3,), ValueError, "at least two"),
        ([("a b c", "x")], (5, 3), ValueError, "increasing"),
        ("a b c", (3, 6), TypeError, "pairs"),
        ([("a b c", 3)], (3, 6), TypeError, r"pairs\[0\]"),
    ],
)
def test_split_by_length_rejects(pairs: object, edges: tuple, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        split_by_length(pairs, edges)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"seed": "0"}, TypeError, "seed"),
        ({"n_pairs": 5}, ValueError, "n_pairs"),
        ({"n_pairs": 100.0}, TypeError, "n_pairs"),
        ({"novel_per_combination": -1}, ValueError, "novel_per_combination"),
        ({"held_out": [("purple", "car")]}, ValueError, "unknown adjective"),
        ({"held_out": [("young", "car")]}, ValueError, "never combines"),
        ({"n_pairs": 10_000_000}, ValueError, "at most"),
        ({"held_out": "white car"}, TypeError, "held_out"),
    ],
)
def test_make_corpus_rejects(kwargs: dict, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        make_corpus(**kwargs)
