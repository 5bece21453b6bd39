from pathlib import Path

import pytest
import torch

from .book_browser import build_book


@pytest.fixture(autouse=True)
def _seed() -> None:
    torch.manual_seed(0)


@pytest.fixture(scope="session")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The book, built once per session for every test that opens it (test_browser, test_live_model)."""
    return build_book(tmp_path_factory.mktemp("book"))
