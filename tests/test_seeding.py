"""seeding: one seed for the book's cells that train or sample, from BOOK_SEED."""

import pytest

from transformer_lib.seeding import SEED_VARIABLE, book_seed, book_seeds, seed_range


def test_unset_or_empty_is_seed_zero(monkeypatch) -> None:
    monkeypatch.delenv(SEED_VARIABLE, raising=False)
    assert book_seed() == 0 and book_seeds(5) == [0, 1, 2, 3, 4]  # the stored outputs' seeds
    monkeypatch.setenv(SEED_VARIABLE, " ")
    assert book_seed() == 0


def test_another_seed_gives_disjoint_blocks(monkeypatch) -> None:
    monkeypatch.setenv(SEED_VARIABLE, "2")
    assert book_seed() == 2 and book_seeds(5) == [10, 11, 12, 13, 14] and book_seeds(1) == [2]
    blocks = []
    for seed in range(4):
        monkeypatch.setenv(SEED_VARIABLE, str(seed))
        blocks.append(set(book_seeds(3)))
    assert len(set().union(*blocks)) == 12  # no seed shared between two values of BOOK_SEED


@pytest.mark.parametrize("text", ["-1", "1.5", "one", "1e3", "١"])
def test_a_seed_that_is_not_a_whole_number_is_refused(monkeypatch, text) -> None:
    monkeypatch.setenv(SEED_VARIABLE, text)
    with pytest.raises(ValueError, match=SEED_VARIABLE):
        book_seed()


def test_bad_input(monkeypatch) -> None:
    monkeypatch.delenv(SEED_VARIABLE, raising=False)
    with pytest.raises(ValueError, match="n"):
        book_seeds(0)
    with pytest.raises(TypeError, match="n"):
        book_seeds(2.0)
    monkeypatch.setenv(SEED_VARIABLE, str(2**63))
    with pytest.raises(ValueError, match=SEED_VARIABLE):
        book_seed()


def test_seed_range_is_the_median_and_the_extremes() -> None:
    assert seed_range([0.95, 0.9, 0.93]) == "93% (90% to 95%)"
    assert seed_range([3, 1, 2, 10], ".1f") == "2.5 (1.0 to 10.0)"  # an even count: the mean of the middle two
    with pytest.raises(ValueError, match="values"):
        seed_range([])
    with pytest.raises(TypeError, match="values"):
        seed_range(["0.9"])
    with pytest.raises(ValueError, match="values"):
        seed_range([float("nan")])
