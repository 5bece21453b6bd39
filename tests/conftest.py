import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch
from hypothesis import settings
from hypothesis.configuration import set_hypothesis_home_dir

from .book_browser import build_book, chromium_path, launched_browser

# Property-based tests (tests/test_bad_input_*.py): small, repeatable, and writing nothing into the
# repository (no example database; hypothesis's own cache goes to the temporary directory).
set_hypothesis_home_dir(Path(tempfile.gettempdir()) / "transformer-book-hypothesis")
settings.register_profile("book", derandomize=True, database=None, max_examples=30, deadline=None, print_blob=False)
settings.load_profile("book")



@pytest.fixture(autouse=True)
def _seed() -> None:
    torch.manual_seed(0)


@pytest.fixture(scope="module")
def one_torch_thread() -> Iterator[None]:
    """Tiny models run fastest on one thread, and far faster than on two when other jobs share the
    cores. A module asks for it with ``pytestmark = pytest.mark.usefixtures("one_torch_thread")``."""
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


@pytest.fixture(scope="package")
def browser() -> Iterator:
    """Debian's chromium through playwright, started once for every test of tests/ that opens a page;
    without chromium, a failure (not a skip) saying why. It closes when tests/ is done, before nbval
    runs the notebooks: between its calls, playwright's sync API marks an asyncio loop as running in
    this thread, which the notebooks' kernel client could not share."""
    try:
        chromium_path()
    except RuntimeError as err:
        pytest.fail(str(err))
    with launched_browser() as launched:
        yield launched


@pytest.fixture(scope="session")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The book, built once per session for every test that opens it (test_browser, test_live_model)."""
    return build_book(tmp_path_factory.mktemp("book"))
