import collections
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import torch
from hypothesis import settings
from hypothesis.configuration import set_hypothesis_home_dir

from tools.book_browser import ROOT, build_book, chromium_path, launched_browser

from . import reader_env

# Property-based tests (tests/test_bad_input_*.py): small, repeatable, and writing nothing into the
# repository (no example database; hypothesis's own cache goes to the temporary directory).
set_hypothesis_home_dir(Path(tempfile.gettempdir()) / "transformer-book-hypothesis")
settings.register_profile("book", derandomize=True, database=None, max_examples=30, deadline=None, print_blob=False)
settings.load_profile("book")

# With pytest-xdist (``pytest -n 3``), a worker takes one group of tests at a time: a test module or a
# notebook (its module-scoped fixtures are made once; a notebook's cells run in order in one kernel),
# except that the modules which share one of these session fixtures form one group, on one worker:
# the book is built once, and the PDF's print page, which tools/build_pdf.py adds to the built site
# while it prints, is seen by no other test; one pip or one JupyterLab at a time in the reader's
# environment (tests/test_installed.py uninstalls the package there, tests/test_jupyterlab.py runs
# it). The groups are named by module because xdist's scheduler sees only test ids;
# ``pytest_collection_modifyitems`` fails a test that uses one of the fixtures from another module.
# (xdist's own ``--dist loadgroup`` does nothing under pytest 9.2: it renames ``item._nodeid``,
# which pytest 9.2 no longer reads.)
SHARED_GROUPS = {
    "site": ("built-book", {"tests/test_browser.py", "tests/test_citations.py", "tests/test_live_lm.py",
                            "tests/test_live_model.py", "tests/test_reader.py"}),
    "reader_venv": ("reader-env", {"tests/test_installed.py", "tests/test_jupyterlab.py"}),
}


def group_of(nodeid: str) -> str:
    """The group of the test ``nodeid``: its module's or notebook's path, or a shared group's name."""
    file = nodeid.split("::")[0]
    return next((group for group, modules in SHARED_GROUPS.values() if file in modules), file)


# Groups that take long (seconds of the fresh-clone CI on 2 cores, issue 34), longest first: under
# pytest-xdist each worker takes the next group in this order when it is free, so that the last groups
# to start are short ones and no worker waits long for the others at the end. The other groups follow,
# those with the most tests first. The two shared groups (the built book, ~650 s; the reader's
# environment, ~400 s) are not listed, so they start mid-run, after the seed and stress lanes beside the
# main run have had the cores: started first, beside those lanes, the browser's and JupyterLab's tests ran
# twice as long and a fresh clone's CI took 1,256 s of wall clock and 1,847 s of CPU (8f61e9a), against
# 1,090 s and 1,553 s when they started mid-run (d88bcfc, when this list named them by mistake).
LONGEST_FIRST = (
    "tests/test_distributed.py",  # ~200 s of torchrun launches
    "tests/test_bad_input_sweep.py",
    "tests/test_live_stepper.py",
    "tests/test_replay_page.py",
    "book/07_training_inference.ipynb",
    "book/distributed.ipynb",
    "tests/test_pretrained.py",
    "tests/test_snapshots.py",
    "tests/test_convert.py",
    "tests/test_decoding_steps.py",
    "tests/test_table3.py",
    "tests/test_stored.py",  # ~40 s: one Table 3 run trained again
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # A name here that is no group would quietly lose its place in the order (the shared groups were once
    # listed by their fixtures' names, which matched nothing, unnoticed).
    shared = {group for group, _ in SHARED_GROUPS.values()}
    unknown = [name for name in LONGEST_FIRST if name not in shared and not (ROOT / name).is_file()]
    if unknown:
        raise pytest.UsageError(f"tests/conftest.py's LONGEST_FIRST names no group: {unknown}")
    # Stable: the order within each group stays (a notebook's cells run in order).
    sizes: dict[str, int] = {}
    for item in items:
        sizes[group_of(item.nodeid)] = sizes.get(group_of(item.nodeid), 0) + 1
    rank = {group: index for index, group in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: (rank.get(group_of(item.nodeid), len(rank)), -sizes[group_of(item.nodeid)]))
    for item in items:
        for fixture, (group, modules) in SHARED_GROUPS.items():
            if fixture in getattr(item, "fixturenames", ()) and item.nodeid.split("::")[0] not in modules:
                raise pytest.UsageError(f"{item.nodeid} uses {fixture}: add its module to tests/conftest.py's "
                                        f"SHARED_GROUPS, so that pytest-xdist runs it in the group {group}")


@pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist, used when it runs the tests
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    from xdist.scheduler import LoadScopeScheduling

    class GroupScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return group_of(nodeid)

    # The groups in the order of ``pytest_collection_modifyitems`` (LONGEST_FIRST), which xdist's own
    # reordering (--loadscope-reorder, on by default: the groups with the most tests first) would undo:
    # it put the reader's environment, 5 tests and ~400 s, 69th of 107 groups, near the end of the run.
    config.option.loadscopereorder = False
    return GroupScheduling(config, log)


def pytest_configure(config: pytest.Config) -> None:
    # One torch thread in every test process. The test models are tiny: one thread runs them as fast
    # as two on a quiet machine, and under ``pytest -n 2`` (two workers beside the notebooks' kernels)
    # two threads per process oversubscribe the cores, and torch's threads spin waiting for each other:
    # the stepper's 104 traces (tests/test_live_stepper.py) took 1.0 s of CPU on one thread and 7.6 to
    # 25 s on two, with 5 other jobs running. Processes the tests start (kernels, torchrun, scripts) keep
    # their own settings: the notebooks are checked on the machine's thread count (their outputs, stored
    # from one thread, must hold on any), and again on one thread with the CPU dispatch lowered (.ci/run).
    torch.set_num_threads(1)


@pytest.fixture(autouse=True)
def _seed() -> None:
    torch.manual_seed(0)


@contextmanager
def torch_threads(count: int) -> Iterator[None]:
    """torch on ``count`` threads inside the block, the thread count before it restored after."""
    previous = torch.get_num_threads()
    torch.set_num_threads(count)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


@pytest.fixture(scope="module")
def one_torch_thread() -> Iterator[None]:
    """Tiny models run fastest on one thread, and far faster than on two when other jobs share the
    cores. A module asks for it with ``pytestmark = pytest.mark.usefixtures("one_torch_thread")``, which
    holds even where a test of another module has changed the thread count (``pytest_configure`` sets one)."""
    with torch_threads(1):
        yield


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
    """The book, built once per session for every test that opens it (test_browser, test_reader,
    test_live_model, ...; under pytest-xdist all on one worker, see ``SHARED_GROUPS``)."""
    return build_book(tmp_path_factory.mktemp("book"))


@pytest.fixture(scope="session")
def reader_venv() -> Path:
    """The reader's environment (tests/reader_env.py: created once, then reused), for the tests that
    install the package there and run it as a reader does (test_jupyterlab, test_installed)."""
    return reader_env.reader_venv()


# The bad-input sweep's tally (tests/bad_input_sweep.py counts its cases), printed at the end of the run:
# a summary, not a test, so that it cannot pass on a sweep that ran nothing (each argument's test fails
# when it has no bad value to try). Under pytest-xdist each worker hands its tally to the controller.
SWEEP_TALLY = "bad_input_sweep"
SWEEP_TALLY_KEY = pytest.StashKey[collections.Counter]()


def _sweep_tally() -> collections.Counter:
    from .bad_input_sweep import SWEEP_COUNT, SWEEP_OUTCOMES

    return collections.Counter(cases=SWEEP_COUNT["cases"], **collections.Counter(SWEEP_OUTCOMES.values()))


def pytest_sessionfinish(session: pytest.Session) -> None:
    tally = _sweep_tally()
    if hasattr(session.config, "workeroutput"):  # an xdist worker: the controller prints it
        session.config.workeroutput[SWEEP_TALLY] = dict(tally)
    else:
        session.config.stash.setdefault(SWEEP_TALLY_KEY, collections.Counter()).update(tally)


@pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist, on the controller, as each worker ends
def pytest_testnodedown(node: object, error: object) -> None:
    output = getattr(node, "workeroutput", {}).get(SWEEP_TALLY)
    if output:
        node.config.stash.setdefault(SWEEP_TALLY_KEY, collections.Counter()).update(output)


def pytest_terminal_summary(terminalreporter: object, config: pytest.Config) -> None:
    tally = config.stash.get(SWEEP_TALLY_KEY, collections.Counter())
    if tally["cases"]:
        terminalreporter.write_line(f"bad-input sweep: {tally['cases']} cases, {tally['refused']} refused naming "
                                    f"the argument, {tally['accepted']} accepted for a stated reason")
