import tempfile
from pathlib import Path

import pytest
import torch
from hypothesis import settings
from hypothesis.configuration import set_hypothesis_home_dir

# Property-based tests (tests/test_bad_input_*.py): small, repeatable, and writing nothing into the
# repository (no example database; hypothesis's own cache goes to the temporary directory).
set_hypothesis_home_dir(Path(tempfile.gettempdir()) / "transformer-book-hypothesis")
settings.register_profile("book", derandomize=True, database=None, max_examples=30, deadline=None, print_blob=False)
settings.load_profile("book")


@pytest.fixture(autouse=True)
def _seed() -> None:
    torch.manual_seed(0)
