"""One front door for every explorer, read from the sources (nothing is imported or run).

* Python: every class of ``transformer_lib.browser`` that has a form in the static book (it calls
  ``live_explorer_html``) is a ``live.LiveExplorer`` and defines neither ``_safely`` nor
  ``_repr_mimebundle_`` again; no module of the package imports another's private name.
* JavaScript: ``explorers.js`` alone starts explorers (reads their saved state, waits for the
  document); every other kind of ``page.KINDS`` is registered, once, through its ``register`` hook.

The checkers take the sources as text, so the tests at the end plant each defect and see it found.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from transformer_lib.browser.page import KINDS

BROWSER = Path(__file__).resolve().parent.parent / "transformer_lib" / "browser"
BASE = "LiveExplorer"
SHARED = ("_safely", "_repr_mimebundle_")  # written once, in live.py
STARTER = "explorers.js"  # the one script that starts explorers; it makes the attention explorer itself
# what starting takes: reading an explorer's saved state, and waiting for the document
STARTING = ("script.tc-live-state", "DOMContentLoaded", "document.readyState")


def explorer_problems(modules: dict[str, str]) -> list[str]:
    """What breaks the one Python base, in ``modules`` (a module's name -> its source)."""
    problems = []
    for module, source in modules.items():
        tree = ast.parse(source)
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level > 0:
                private = [a.name for a in node.names if a.name.startswith("_")]
                if private:
                    problems.append(f"{module} imports private {private} from .{node.module or ''}")
            if not isinstance(node, ast.ClassDef):
                continue
            calls = {c.func.id for c in ast.walk(node) if isinstance(c, ast.Call) and isinstance(c.func, ast.Name)}
            if "live_explorer_html" not in calls:
                continue  # not an explorer with a form in the page (a helper class)
            if BASE not in {b.id for b in node.bases if isinstance(b, ast.Name)}:
                problems.append(f"{module}.{node.name} is not a {BASE}")
            again = [f.name for f in node.body if isinstance(f, ast.FunctionDef) and f.name in SHARED]
            if again:
                problems.append(f"{module}.{node.name} defines {again} again (live.{BASE} has them)")
    return problems


def script_problems(scripts: dict[str, str], kinds: tuple[str, ...] = KINDS) -> list[str]:
    """What breaks the one JavaScript registration, in ``scripts`` (a file name -> its text)."""
    problems = []
    for name, text in scripts.items():
        copied = [s for s in STARTING if s in text]
        if name != STARTER and copied:
            problems.append(f"{name} starts explorers itself ({copied}); register the kind instead")
    registered = [kind for text in scripts.values() for kind in re.findall(r"""\bregister\(\s*["'](\w+)["']""", text)]
    for kind in kinds:
        made_by_starter = kind == "attention" and re.search(rf"\b{kind}: \w+", scripts.get(STARTER, ""))
        count = registered.count(kind) + bool(made_by_starter)
        if count != 1:
            problems.append(f"the kind {kind!r} is started by {count} registrations, not 1")
    return problems


def _modules() -> dict[str, str]:
    return {path.stem: path.read_text() for path in sorted(BROWSER.glob("*.py"))}


def _scripts() -> dict[str, str]:
    return {path.name: path.read_text() for path in sorted((BROWSER / "static").glob("*.js"))}


def test_every_kernel_explorer_is_a_live_explorer() -> None:
    modules = _modules()
    explorers = [m for m, s in modules.items() if "live_explorer_html(" in s and m != "page"]
    assert {"explorers", "stepper", "lm_explorer", "model_explorer", "vit_explorer"} <= set(explorers)  # where it looks
    assert explorer_problems(modules) == []


def test_every_page_explorer_starts_through_one_registration() -> None:
    scripts = _scripts()
    assert {"stepper.js", "lm-explorer.js", "positional-explorer.js", "model-explorer.js"} <= set(scripts)
    assert script_problems(scripts) == []


# ---------------------------------------------------------------- the checkers find each planted defect


def test_a_copied_safely_or_a_missing_base_or_a_private_import_is_found() -> None:
    modules = _modules()
    copied = modules["stepper"].replace(
        "    def page_html(self) -> str:",
        "    def _safely(self, action):\n        action()\n\n    def page_html(self) -> str:", 1)
    assert copied != modules["stepper"]
    assert explorer_problems({**modules, "stepper": copied}) == [
        "stepper.DecodingStepper defines ['_safely'] again (live.LiveExplorer has them)"]
    no_base = modules["lm_explorer"].replace("class LanguageModelExplorer(LiveExplorer):",
                                             "class LanguageModelExplorer:")
    assert explorer_problems({**modules, "lm_explorer": no_base}) == [
        "lm_explorer.LanguageModelExplorer is not a LiveExplorer"]
    private = "from .live import message as _message, _refused_note\n" + modules["model_explorer"]
    assert explorer_problems({**modules, "model_explorer": private}) == [
        "model_explorer imports private ['_refused_note'] from .live"]


def test_a_script_that_starts_itself_or_a_kind_never_registered_is_found() -> None:
    scripts = _scripts()
    copy = ('  function start(root) { JSON.parse(root.querySelector("script.tc-live-state").textContent); }\n'
            '  document.addEventListener("DOMContentLoaded", () => start(document.body));\n')
    started_twice = scripts["stepper.js"] + copy
    problems = script_problems({**scripts, "stepper.js": started_twice})
    assert problems == ["stepper.js starts explorers itself (['script.tc-live-state', 'DOMContentLoaded']); "
                        "register the kind instead"]
    unregistered = scripts["lm-explorer.js"].replace('explorers.register("lm", lmExplorer);', "")
    assert script_problems({**scripts, "lm-explorer.js": unregistered}) == [
        "the kind 'lm' is started by 0 registrations, not 1"]
