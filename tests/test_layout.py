"""The package's layout: no import circle between its modules, and no module or page script over 500 lines
(the hard cap), nor over 400 (the soft cap) without a reason given at its top.

Every module of ``transformer_lib`` is parsed with ``ast`` (nothing is imported), and every
import of a module of the package becomes an edge of a graph: absolute and relative
imports, at the top of the file or inside a function (an import that only runs later still
ties the two modules together). ``from .m import name`` counts as importing ``m.name`` when
that is a module, else ``m``; so ``from . import x`` imports the module ``x``, not the
package's ``__init__`` (which every submodule's import runs first anyway).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from pathlib import Path

PACKAGE = "transformer_lib"
ROOT = Path(__file__).resolve().parent.parent / PACKAGE
MAX_LINES = 500
SOFT_MAX_LINES = 400  # split where the concepts divide before this; past it, the file says why it is whole
SOFT_CAP_REASON = "Longer than 400 lines:"  # in a module's docstring, or a script's first comment
STATIC = ROOT / "browser" / "static"  # the page's scripts: the same limits


def module_files(root: Path = ROOT, package: str = PACKAGE) -> dict[str, Path]:
    """Dotted module name -> file, for every .py file under ``root`` (a package's is its __init__.py)."""
    modules = {}
    for path in sorted(root.rglob("*.py")):
        parts = [package, *path.relative_to(root).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


def _resolve(importer: str, is_package: bool, level: int, module: str | None) -> str:
    """The absolute name that ``from <level dots><module> import ...`` inside ``importer`` refers to."""
    if level == 0:
        return module or ""
    base = importer.split(".") if is_package else importer.split(".")[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join([*base, module] if module else base)


def imported_modules(name: str, source: str, modules: Iterable[str], is_package: bool = False) -> set[str]:
    """The modules of ``modules`` that the module ``name`` (whose text is ``source``) imports, anywhere in it."""
    known = set(modules)
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(name, is_package, node.level, node.module)
            # Each name is a submodule, or something defined in the module ``base`` itself.
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names]
        for target in targets:
            # "import a.b.c" also imports a and a.b: the innermost module of the package is enough.
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def import_graph(root: Path = ROOT, package: str = PACKAGE) -> dict[str, set[str]]:
    files = module_files(root, package)
    return {name: imported_modules(name, path.read_text(), files, path.name == "__init__.py")
            for name, path in files.items()}


def find_cycle(graph: Mapping[str, Iterable[str]]) -> list[str] | None:
    """One import circle of ``graph`` as [a, b, ..., a], or None (depth-first search, three colours)."""
    state: dict[str, int] = {}  # absent: not seen; 1: on the current path; 2: done, no circle through it
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt):], nxt]
            if nxt not in state:
                cycle = visit(nxt)
                if cycle:
                    return cycle
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state:
            cycle = visit(start)
            if cycle:
                return cycle
    return None


# ---------------------------------------------------------------- the checks on the package


def test_the_package_has_no_import_circle() -> None:
    graph = import_graph()
    assert len(graph) > 30 and graph[f"{PACKAGE}.models"] >= {f"{PACKAGE}.config", f"{PACKAGE}.encoder"}
    cycle = find_cycle(graph)
    assert cycle is None, "import circle: " + " -> ".join(cycle)


def too_long_modules(root: Path = ROOT, package: str = PACKAGE) -> dict[str, int]:
    lengths = {name: len(path.read_text().splitlines()) for name, path in module_files(root, package).items()}
    return {name: n for name, n in lengths.items() if n > MAX_LINES}


def test_no_module_is_over_500_lines() -> None:
    too_long = too_long_modules()
    assert not too_long, f"modules over {MAX_LINES} lines: {too_long}"


def _header(path: Path) -> str:
    """A module's docstring, or a script's leading comment (everything before its first line of code)."""
    text = path.read_text()
    if path.suffix == ".py":
        return ast.get_docstring(ast.parse(text)) or ""
    header = []
    for line in text.splitlines():
        stripped = line.strip()
        if stripped and not stripped.startswith(("//", "/*", "*")):
            break
        header.append(stripped)
    return "\n".join(header)


def long_files_without_a_reason(paths: Mapping[str, Path]) -> dict[str, int]:
    """The files of ``paths`` over the soft cap whose docstring (or leading comment) gives no reason."""
    lengths = {name: len(path.read_text().splitlines()) for name, path in paths.items()}
    return {name: n for name, n in lengths.items()
            if n > SOFT_MAX_LINES and SOFT_CAP_REASON not in " ".join(_header(paths[name]).split())}


def test_no_module_is_over_400_lines_without_a_reason() -> None:
    unexplained = long_files_without_a_reason(module_files())
    assert not unexplained, (f"modules over {SOFT_MAX_LINES} lines: split them where the concepts divide, or say "
                             f"why they are whole in the docstring ({SOFT_CAP_REASON} ...): {unexplained}")


def test_no_page_script_is_over_400_lines_without_a_reason() -> None:
    unexplained = long_files_without_a_reason({path.name: path for path in STATIC.glob("*.js")})
    assert not unexplained, (f"page scripts over {SOFT_MAX_LINES} lines: split them, or say why they are whole in "
                             f"their first comment ({SOFT_CAP_REASON} ...): {unexplained}")


def too_long_scripts(static: Path = STATIC) -> dict[str, int]:
    lengths = {path.name: len(path.read_text().splitlines()) for path in sorted(static.glob("*.js"))}
    return {name: n for name, n in lengths.items() if n > MAX_LINES}


def test_no_page_script_is_over_500_lines() -> None:
    assert len(list(STATIC.glob("*.js"))) >= 8  # the folder is where the check looks
    too_long = too_long_scripts()
    assert not too_long, f"page scripts over {MAX_LINES} lines: {too_long}"


def _run_time_nodes(source: str) -> list[ast.AST]:
    """Every node of ``source`` but those under ``if TYPE_CHECKING:`` (read by type checkers, never run)."""
    tree = ast.parse(source)
    blocks = [b for b in ast.walk(tree) if isinstance(b, ast.If) and ast.unparse(b.test) == "TYPE_CHECKING"]
    hints = {id(n) for block in blocks for stmt in block.body for n in ast.walk(stmt)}
    return [node for node in ast.walk(tree) if id(node) not in hints]


def test_only_the_explorers_import_ipywidgets() -> None:
    """The README's promise: five modules import ipywidgets when run (browser.live, their base, names its
    types for type checkers only)."""
    widget_modules = {f"{PACKAGE}.browser.explorers", f"{PACKAGE}.browser.lm_explorer", f"{PACKAGE}.browser.stepper",
                      f"{PACKAGE}.browser.model_explorer", f"{PACKAGE}.browser.vit_explorer"}
    for name, path in module_files().items():
        nodes = _run_time_nodes(path.read_text())
        imports = {alias.name.split(".")[0] for node in nodes if isinstance(node, ast.Import) for alias in node.names}
        imports |= {(node.module or "").split(".")[0] for node in nodes
                    if isinstance(node, ast.ImportFrom) and node.level == 0}
        uses_widgets = "ipywidgets" in imports or "IPython.widgets" in path.read_text()
        assert uses_widgets == (name in widget_modules), name


# ---------------------------------------------------------------- the checker itself


def test_find_cycle_finds_a_circle_and_only_a_circle() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None
    assert find_cycle({"a": {"b", "c"}, "b": {"d"}, "c": {"d"}, "d": set()}) is None  # a diamond is no circle
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"x": {"y"}, "y": {"z"}, "z": {"y"}}) == ["y", "z", "y"]
    assert find_cycle({"a": {"a"}}) == ["a", "a"]


def test_imports_inside_functions_and_relative_imports_are_edges() -> None:
    modules = ["pkg", "pkg.a", "pkg.b", "pkg.sub", "pkg.sub.c"]
    source = (
        "from . import b\n"
        "def later():\n"
        "    from .sub.c import thing\n"
        "import numpy\n"
    )
    assert imported_modules("pkg.a", source, modules) == {"pkg.b", "pkg.sub.c"}
    assert imported_modules("pkg.sub.c", "from ..a import f\nfrom .. import b\n", modules) == {"pkg.a", "pkg.b"}
    assert imported_modules("pkg.sub", "from .c import f\n", modules, is_package=True) == {"pkg.sub.c"}
    assert imported_modules("pkg.a", "import pkg.sub.c as c\n", modules) == {"pkg.sub.c"}


def test_a_real_circle_in_files_fails(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sub" / "__init__.py").write_text("")
    (package / "a.py").write_text("from .sub.c import f\n")
    (package / "sub" / "c.py").write_text("def f():\n    from ..a import g  # lazily, to dodge the circle\n")
    graph = import_graph(package, "pkg")
    assert graph["pkg.a"] == {"pkg.sub.c"} and graph["pkg.sub.c"] == {"pkg.a"}
    assert find_cycle(graph) == ["pkg.a", "pkg.sub.c", "pkg.a"]
    (package / "sub" / "c.py").write_text("def f():\n    pass\n")
    assert find_cycle(import_graph(package, "pkg")) is None


def test_a_module_of_501_lines_is_too_long(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "__init__.py").write_text("")
    (tmp_path / "ok.py").write_text("x = 1\n" * 500)
    (tmp_path / "sub" / "long.py").write_text("x = 1\n" * 501)
    assert too_long_modules(tmp_path, "pkg") == {"pkg.sub.long": 501}



def test_a_page_script_of_501_lines_is_too_long(tmp_path: Path) -> None:
    (tmp_path / "ok.js").write_text("x;\n" * 500)
    (tmp_path / "long.js").write_text("x;\n" * 501)
    (tmp_path / "long.css").write_text("x;\n" * 501)  # only the scripts
    assert too_long_scripts(tmp_path) == {"long.js": 501}


def test_over_400_lines_needs_a_reason_at_the_top(tmp_path: Path) -> None:
    body = "x = 1\n" * 400
    files = {"short": tmp_path / "short.py", "silent": tmp_path / "silent.py", "said": tmp_path / "said.py",
             "late": tmp_path / "late.py", "script": tmp_path / "script.js", "said_js": tmp_path / "said.js"}
    files["short"].write_text(body)
    files["silent"].write_text('"""A module."""\n' + body)
    files["said"].write_text('"""A module.\n\nLonger than 400\nlines: one idea, read whole."""\n' + body)
    files["late"].write_text('"""A module."""\n' + body + "# Longer than 400 lines: said too late\n")
    files["script"].write_text("// A script.\n" + "x;\n" * 400)
    files["said_js"].write_text("// A script.\n// Longer than 400 lines: one idea.\n" + "x;\n" * 400)
    assert long_files_without_a_reason(files) == {"silent": 401, "late": 402, "script": 401}
