import pytest
import torch
from hypothesis import settings

# Property-based tests (tests/test_bad_input_*.py): small, repeatable, and writing nothing into the repository.
settings.register_profile("book", derandomize=True, database=None, max_examples=30, deadline=None, print_blob=False)
settings.load_profile("book")


@pytest.fixture(autouse=True)
def _seed() -> None:
    torch.manual_seed(0)
