"""pyproject.toml declares what the book imports: the core for the package's own modules, the
``book`` extra (``pip install "transformer_lib[book]"``) for everything a chapter needs besides.

Every import statement of every notebook in book/ and of every module in transformer_lib/ is read
(``ast``), each top-level name that is not the standard library's nor the book's own is mapped to the
distribution that provides it in this environment, and that distribution must be declared.
"""

from __future__ import annotations

import ast
import json
import sys
import tomllib
from collections.abc import Iterator
from functools import cache
from importlib.metadata import packages_distributions
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
OWN = {"transformer_lib"}


def imported_names(source: str) -> Iterator[str]:
    """The top-level module of every absolute import in ``source`` (IPython's magics left out)."""
    code = "\n".join(line for line in source.splitlines() if not line.lstrip().startswith(("%", "!")))
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Import):
            yield from (alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.module.split(".")[0]


def third_party(names: set[str]) -> set[str]:
    return {n for n in names if n not in sys.stdlib_module_names and n not in OWN and n != "__future__"}


def notebook_imports() -> dict[str, set[str]]:
    found = {}
    for path in sorted((ROOT / "book").glob("*.ipynb")):
        cells = json.loads(path.read_text())["cells"]
        found[path.name] = third_party({n for c in cells if c["cell_type"] == "code"
                                        for n in imported_names("".join(c["source"]))})
    return found


def package_imports() -> set[str]:
    return third_party({n for path in (ROOT / "transformer_lib").rglob("*.py")
                        for n in imported_names(path.read_text())})


def declared(requirements: list[str]) -> set[str]:
    return {canonicalize_name(Requirement(r).name) for r in requirements}


@cache
def providers() -> dict[str, list[str]]:
    return packages_distributions()


def distribution(module: str) -> str:
    dists = providers().get(module)
    assert dists, f"no installed distribution provides the module {module!r}"
    return canonicalize_name(dists[0])


def test_the_scan_sees_the_imports_it_must() -> None:
    """The scan itself: it finds what a chapter and the figures are known to import."""
    chapters = notebook_imports()
    assert {"torch", "numpy"} <= chapters["01_rnn_limits.ipynb"]
    assert {"plotly", "ipywidgets", "bertviz", "IPython", "safetensors", "sacrebleu", "tqdm"} <= package_imports()
    assert distribution("IPython") == "ipython"


def test_the_core_declares_every_import_of_the_package_but_the_figures() -> None:
    core = declared(PROJECT["dependencies"])
    book = declared(PROJECT["optional-dependencies"]["book"])
    assert not core & book, "a distribution in both the core and the book extra"
    assert "torch" in core and "plotly" not in core, "the core is the library: torch yes, figures no"
    missing = {m: distribution(m) for m in package_imports() if distribution(m) not in core | book}
    assert not missing, f"transformer_lib imports {missing}, which pyproject.toml does not declare"


def test_the_book_extra_declares_every_import_of_every_chapter() -> None:
    everything = declared(PROJECT["dependencies"]) | declared(PROJECT["optional-dependencies"]["book"])
    missing = {f"{name}: {m}": distribution(m) for name, modules in notebook_imports().items()
               for m in modules if distribution(m) not in everything}
    assert not missing, f"chapters import what pyproject.toml does not declare: {missing}"


def test_every_declared_requirement_has_a_lower_bound() -> None:
    """A bound from below (the oldest release tested), none from above: a reader's environment
    (Colab's torch, say) is kept when it is new enough."""
    for text in PROJECT["dependencies"] + PROJECT["optional-dependencies"]["book"]:
        specifiers = {s.operator for s in Requirement(text).specifier}
        assert specifiers == {">="}, f"{text}: expected one lower bound (>=)"
