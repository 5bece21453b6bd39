"""Vocabularies, byte-pair encoding and teacher-forcing batches."""

from __future__ import annotations

import json
from collections import Counter

import pytest
import torch

from transformer_lib.config import TransformerConfig
from transformer_lib.corpus import french_words, make_corpus
from transformer_lib.models import Transformer
from transformer_lib.tokenization import (
    END_OF_WORD,
    SPECIALS,
    Batch,
    BPETokenizer,
    Merge,
    Vocab,
    bpe_trace,
    collate,
    encode_pairs,
    learn_bpe,
    make_batches,
    pad_sequences,
)


@pytest.fixture(scope="module")
def corpus():
    return make_corpus(seed=0, n_pairs=2_000)


@pytest.fixture(scope="module")
def vocabs(corpus):
    pairs = corpus.train + corpus.valid  # a small corpus may hold a valid word that train does not
    return Vocab.build(e for e, _ in pairs), Vocab.build(f for _, f in pairs)


# ----------------------------------------------------------------------------- Vocab


def test_specials_come_first() -> None:
    vocab = Vocab.build(["le chat dort"])
    assert vocab.itos[:4] == list(SPECIALS) == ["<pad>", "<sos>", "<eos>", "<unk>"]
    assert (vocab.pad_id, vocab.sos_id, vocab.eos_id, vocab.unk_id) == (0, 1, 2, 3)
    assert all(vocab.stoi[s] == i for i, s in enumerate(SPECIALS))
    assert len(vocab) == 7


def test_build_orders_by_frequency_then_alphabet() -> None:
    vocab = Vocab.build(["b a a", "c b a", "z y"])
    assert vocab.itos[4:] == ["a", "b", "c", "y", "z"]  # a:3, b:2, then the ties alphabetically
    assert Vocab.build(["a a b"], min_freq=2).itos[4:] == ["a"]


def test_round_trip(corpus, vocabs) -> None:
    src_vocab, tgt_vocab = vocabs
    for english, french in corpus.train[:500]:
        assert src_vocab.decode(src_vocab.encode(english)) == english
        assert tgt_vocab.decode(tgt_vocab.encode(french)) == french
    assert [tgt_vocab.itos[i] for i in tgt_vocab.encode("le chat")] == ["le", "chat"]


def test_unknown_words_are_reported() -> None:
    vocab = Vocab.build(["the cat eats a mouse"])
    ids, unknown = vocab.encode_with_unknowns("the zebra eats a unicorn")
    assert unknown == ["zebra", "unicorn"]
    assert ids == [vocab.stoi["the"], vocab.unk_id, vocab.stoi["eats"], vocab.stoi["a"], vocab.unk_id]
    assert vocab.encode("the zebra") == ids[:2]
    assert vocab.decode(ids) == "the <unk> eats a <unk>"
    assert vocab.encode_with_unknowns("the cat")[1] == []


def test_decode_drops_specials_and_stops_at_eos() -> None:
    vocab = Vocab.build(["a b c"])
    a, b, c = (vocab.stoi[w] for w in "abc")
    ids = [vocab.sos_id, a, b, vocab.eos_id, c, vocab.pad_id]
    assert vocab.decode(ids) == "a b"
    assert vocab.decode(ids, stop_at_eos=False) == "a b c"
    assert vocab.decode(torch.tensor(ids)) == "a b"


def test_serialisation_round_trip(vocabs) -> None:
    _, tgt_vocab = vocabs
    restored = Vocab.from_dict(json.loads(json.dumps(tgt_vocab.to_dict())))
    assert restored == tgt_vocab and restored.itos == tgt_vocab.itos and restored.stoi == tgt_vocab.stoi
    assert restored.encode("le chat noir dort") == tgt_vocab.encode("le chat noir dort")
    assert restored != Vocab.build(["le chat"])


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda v: v.encode(["a", "b"]), TypeError, "sentence"),
        (lambda v: v.decode([0, 99]), ValueError, r"ids\[1\]"),
        (lambda v: v.decode([0, 1.0]), TypeError, r"ids\[1\]"),
        (lambda v: v.decode("a b"), TypeError, "ids"),
        (lambda v: v.decode(torch.zeros(2, 2, dtype=torch.long)), ValueError, "1-D"),
        (lambda v: Vocab.build("a b c"), TypeError, "single str"),
        (lambda v: Vocab.build(["a", 3]), TypeError, r"sentences\[1\]"),
        (lambda v: Vocab.build(["a <unk>"]), ValueError, "special"),
        (lambda v: Vocab.build(["a"], min_freq=0), ValueError, "min_freq"),
        (lambda v: Vocab(["a", "a"]), ValueError, "duplicates"),
        (lambda v: Vocab(["a b"]), ValueError, "whitespace"),
        (lambda v: Vocab.from_dict({"itos": ["a", "b"]}), ValueError, "specials"),
        (lambda v: Vocab.from_dict(["a"]), TypeError, "itos"),
    ],
)
def test_vocab_rejects_bad_input(call, error: type, match: str) -> None:
    vocab = Vocab.build(["a b c"])
    with pytest.raises(error, match=match):
        call(vocab)


# ----------------------------------------------------------------------------- byte-pair encoding


def test_bpe_wikipedia_example() -> None:
    """aaabdaaabac: aa -> Z gives ZabdZabac, ab -> Y gives ZYdZYac, ZY -> X gives XdXac."""
    steps = bpe_trace("aaabdaaabac", 3)
    assert [s.merge.pair for s in steps] == [("a", "a"), ("a", "b"), ("aa", "ab")]
    assert [s.merge.count for s in steps] == [4, 2, 2]  # "aaa" holds the pair (a, a) twice
    names = {"aa": "Z", "ab": "Y", "aaab": "X"}
    assert ["".join(names.get(sym, sym) for sym in s.symbols) for s in steps] == ["ZabdZabac", "ZYdZYac", "XdXac"]
    merges = learn_bpe("aaabdaaabac", 3, end_of_word=None)
    assert merges == [s.merge for s in steps]
    assert BPETokenizer(merges, end_of_word=None).tokenize_word("aaabdaaabac") == list(steps[-1].symbols)


def test_bpe_ties_go_to_the_pair_that_sorts_first() -> None:
    assert learn_bpe("xy ab", 1, end_of_word=None) == [Merge(("a", "b"), 1)]  # not the first-seen (x, y)
    assert learn_bpe("ab xy", 1, end_of_word=None) == [Merge(("a", "b"), 1)]


def test_bpe_stops_when_nothing_is_left_to_merge() -> None:
    merges = learn_bpe("ab", 10, end_of_word=None)
    assert merges == [Merge(("a", "b"), 1)]
    assert learn_bpe("abc abc", 10) == [Merge(("a", "b"), 2), Merge(("ab", "c"), 2), Merge(("abc", END_OF_WORD), 2)]


@pytest.fixture(scope="module")
def french_bpe(corpus) -> BPETokenizer:
    return BPETokenizer.learn([f for _, f in corpus.train], n_merges=300)


def test_bpe_merge_counts_never_increase(french_bpe) -> None:
    counts = [m.count for m in french_bpe.merges]
    assert len(counts) == 300 and counts == sorted(counts, reverse=True)


def test_bpe_frequent_words_become_one_symbol(corpus, french_bpe) -> None:
    counts = Counter(w for _, f in corpus.train for w in f.split())
    for word, _ in counts.most_common(20):
        assert french_bpe.tokenize_word(word) == [word + END_OF_WORD]
    rare = [w for w, n in counts.items() if n <= 2 and len(w) >= 5]  # e.g. "trouvons" -> trouv ons
    assert rare and all(len(french_bpe.tokenize_word(w)) > 1 for w in rare)


def test_bpe_splits_unseen_words_into_known_subwords(french_bpe) -> None:
    for word in ("chanteront", "voitureries", "chatons", "grandement"):
        assert word not in french_words()
        pieces = french_bpe.tokenize_word(word)
        assert len(pieces) > 1
        assert set(pieces) <= french_bpe.symbols, set(pieces) - french_bpe.symbols
        assert "".join(pieces) == word + END_OF_WORD
    sentence = "les chatons chanteront"
    assert french_bpe.detokenize(french_bpe.tokenize(sentence)) == sentence


def test_bpe_keeps_unseen_characters_as_their_own_symbol(french_bpe) -> None:
    assert "k" not in french_bpe.alphabet  # no k in the French corpus
    pieces = french_bpe.tokenize_word("kayak")
    assert pieces[0] == pieces[-2] == "k" and "k" not in french_bpe.symbols


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: learn_bpe("abc", -1), ValueError, "n_merges"),
        (lambda: learn_bpe("   ", 3), ValueError, "at least one word"),
        (lambda: learn_bpe(["a", 3], 3), TypeError, r"text\[1\]"),
        (lambda: learn_bpe("abc", 3, end_of_word=""), ValueError, "end_of_word"),
        (lambda: bpe_trace("", 3), ValueError, "non-empty"),
        (lambda: BPETokenizer(["ab"]), TypeError, r"merges\[0\]"),
        (lambda: BPETokenizer([]).tokenize_word("a b"), ValueError, "one non-empty word"),
        (lambda: BPETokenizer([], end_of_word=None).detokenize(["a"]), ValueError, "end_of_word"),
    ],
)
def test_bpe_rejects_bad_input(call, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        call()


# ----------------------------------------------------------------------------- batches

PAIRS = [("a b c", "x y"), ("a", "x y z w"), ("b c", "y")]


@pytest.fixture
def small_vocabs():
    return Vocab.build(e for e, _ in PAIRS), Vocab.build(f for _, f in PAIRS)


def test_batch_padding_and_teacher_forcing(small_vocabs) -> None:
    src_vocab, tgt_vocab = small_vocabs
    (batch,) = make_batches(PAIRS, src_vocab, tgt_vocab, batch_size=3, shuffle=False)
    assert batch.src.dtype == batch.tgt_in.dtype == batch.tgt_out.dtype == torch.long
    assert batch.src.shape == (3, 3) and batch.tgt_in.shape == batch.tgt_out.shape == (3, 5)
    s, t = src_vocab.stoi, tgt_vocab.stoi
    assert batch.src.tolist() == [[s["a"], s["b"], s["c"]], [s["a"], 0, 0], [s["b"], s["c"], 0]]
    sos, eos = tgt_vocab.sos_id, tgt_vocab.eos_id
    assert batch.tgt_in.tolist() == [
        [sos, t["x"], t["y"], 0, 0], [sos, t["x"], t["y"], t["z"], t["w"]], [sos, t["y"], 0, 0, 0]]
    assert batch.tgt_out.tolist() == [
        [t["x"], t["y"], eos, 0, 0], [t["x"], t["y"], t["z"], t["w"], eos], [t["y"], eos, 0, 0, 0]]
    assert int((batch.tgt_out != 0).sum()) == 3 + 5 + 2 and len(batch) == 3  # tokens to predict


def test_shift_right_relation(corpus, vocabs) -> None:
    src_vocab, tgt_vocab = vocabs
    for batch in make_batches(corpus.valid, src_vocab, tgt_vocab, batch_size=32, seed=1):
        assert (batch.tgt_in[:, 0] == tgt_vocab.sos_id).all()
        real = batch.tgt_in[:, 1:] != 0
        assert torch.equal(batch.tgt_in[:, 1:][real], batch.tgt_out[:, :-1][real])
        assert ((batch.tgt_out == tgt_vocab.eos_id).sum(dim=1) == 1).all()
        assert torch.equal(batch.tgt_in != 0, batch.tgt_out != 0)  # same lengths, one step apart


def test_the_models_masks_of_a_batch(small_vocabs) -> None:
    src_vocab, tgt_vocab = small_vocabs
    (batch,) = make_batches(PAIRS, src_vocab, tgt_vocab, batch_size=3, shuffle=False)
    model = Transformer(TransformerConfig(src_vocab_size=len(src_vocab), tgt_vocab_size=len(tgt_vocab), d_model=8,
                                          n_heads=2, n_encoder_layers=1, n_decoder_layers=1, d_ff=16, max_len=8))
    src_mask = model.src_mask(batch.src)
    assert src_mask.shape == (3, 1, 1, 3) and src_mask.dtype == torch.bool
    assert torch.equal(src_mask[:, 0, 0], batch.src != 0)
    assert src_mask[1, 0, 0].tolist() == [True, False, False]
    tgt_mask = model.tgt_mask(batch.tgt_in)
    assert tgt_mask.shape == (3, 1, 5, 5)
    assert tgt_mask[1, 0].tolist() == torch.ones(5, 5, dtype=torch.bool).tril().tolist()
    assert tgt_mask[2, 0, 4].tolist() == [True, True, False, False, False]  # causal and no padding key


def test_every_pair_once_in_batches_of_the_right_size(corpus, vocabs) -> None:
    src_vocab, tgt_vocab = vocabs
    for by_length in (False, True):
        batches = make_batches(corpus.valid, src_vocab, tgt_vocab, batch_size=64, seed=3, by_length=by_length)
        assert [len(b) for b in batches].count(64) == len(corpus.valid) // 64
        assert sum(len(b) for b in batches) == len(corpus.valid)
        seen = sorted((src_vocab.decode(b.src[i]), tgt_vocab.decode(b.tgt_out[i]))
                      for b in batches for i in range(len(b)))
        assert seen == sorted(corpus.valid)


def test_shuffle_is_seeded(corpus, vocabs) -> None:
    def first_sources(**kwargs) -> list:
        return make_batches(corpus.valid, *vocabs, batch_size=16, **kwargs)[0].src.tolist()

    assert first_sources(seed=1) == first_sources(seed=1)
    assert first_sources(seed=1) != first_sources(seed=2)
    in_order = first_sources(shuffle=False)
    assert in_order == pad_sequences([vocabs[0].encode(e) for e, _ in corpus.valid[:16]]).tolist()


def test_by_length_reduces_padding(corpus, vocabs) -> None:
    def padding(by_length: bool) -> int:
        batches = make_batches(corpus.train, *vocabs, batch_size=32, seed=0, by_length=by_length)
        return sum(int((b.src == 0).sum()) for b in batches)

    assert padding(True) < padding(False) / 3


def test_encode_pairs_and_collate(small_vocabs) -> None:
    encoded = encode_pairs(PAIRS, *small_vocabs)
    assert encoded[1] == ([small_vocabs[0].stoi["a"]], [small_vocabs[1].stoi[w] for w in "x y z w".split()])
    batch = collate(encoded[:1], small_vocabs[1])
    assert isinstance(batch, Batch) and batch.tgt_out[0, -1] == small_vocabs[1].eos_id
    moved = batch.to("cpu")
    assert torch.equal(moved.src, batch.src)


@pytest.mark.parametrize(
    ("pairs", "batch_size", "kwargs", "error", "match"),
    [
        ([], 2, {}, ValueError, "empty"),
        ("a b", 2, {}, TypeError, "pairs"),
        ([("a", 3)], 2, {}, TypeError, r"pairs\[0\]"),
        ([("a", "x"), ("a b",)], 2, {}, TypeError, r"pairs\[1\]"),
        ([("a", "  ")], 2, {}, ValueError, "non-empty"),
        (PAIRS, 0, {}, ValueError, "batch_size"),
        (PAIRS, -4, {}, ValueError, "batch_size"),
        (PAIRS, 2.5, {}, TypeError, "batch_size"),
        (PAIRS, 2, {"seed": 1.5}, TypeError, "seed"),
        (PAIRS, 2, {"shuffle": "yes"}, TypeError, "shuffle"),
    ],
)
def test_make_batches_rejects_bad_input(small_vocabs, pairs, batch_size, kwargs, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        make_batches(pairs, *small_vocabs, batch_size=batch_size, **kwargs)


def test_make_batches_rejects_a_non_vocab(small_vocabs) -> None:
    with pytest.raises(TypeError, match="tgt_vocab"):
        make_batches(PAIRS, small_vocabs[0], small_vocabs[1].itos, batch_size=2)


def test_pad_sequences_pads_on_the_right_and_checks_every_id():
    padded = pad_sequences([[5, 6, 7], [], [8]], pad_id=1)
    assert padded.dtype == torch.long and padded.tolist() == [[5, 6, 7], [1, 1, 1], [8, 1, 1]]
    for bad, error, where in [(True, TypeError, r"\[1\]\[0\]"), (2.7, TypeError, r"\[1\]\[0\]"),
                              (-1, ValueError, r"\[1\]\[0\]: expected an int >= 0")]:
        with pytest.raises(error, match=r"sequences" + where):
            pad_sequences([[3, 4], [bad, 4]])
