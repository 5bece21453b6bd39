"""The library code the chapters show reads like the formulas it implements: argument checks stay out
of the way (issue 55).

The excerpts are read from the chapters' stored outputs, as the reader sees them (``show_source``'s
Markdown; tests/test_source.py checks that they are the library's lines). A line of an excerpt's body
(its code, without the ``def`` line, the docstring, blank lines and comments) is a *check* when its
statement only checks: a ``raise``, a call of a ``check_*`` or ``_check_*`` function (kept or
assigned), or an ``if`` or ``for`` that holds nothing but checks.
"""

from __future__ import annotations

import ast
import json
import re
import textwrap
from pathlib import Path

BOOK = Path(__file__).resolve().parent.parent / "book"
HEADING = re.compile(r"^\[`(transformer_lib\.[\w.]+)`\]\(")
MAX_CHECK_SHARE = 0.10  # of all the shown excerpts' body lines
# The formulas the chapters exist to show: each at most one line of checks (a `_check_*` call).
FORMULAS = ("transformer_lib.attention.attention_weights", "transformer_lib.attention.masked_softmax",
            "transformer_lib.residual.layer_norm", "transformer_lib.models.Transformer.forward",
            "transformer_lib.models.DecoderOnlyTransformer.forward",
            "transformer_lib.multi_head_attention.MultiHeadAttention.merge_heads")


def shown_excerpts() -> list[tuple[str, str, str]]:
    """(notebook, the excerpt's dotted name, its code) for every ``show_source`` output of the book."""
    found = []
    for notebook in sorted(BOOK.glob("*.ipynb")):
        for cell in json.loads(notebook.read_text())["cells"]:
            for output in cell.get("outputs", []):
                text = "".join(output.get("data", {}).get("text/markdown", []))
                heading = HEADING.match(text)
                if heading and "```python\n" in text:
                    found.append((notebook.name, heading[1], text.split("```python\n", 1)[1].rsplit("```", 1)[0]))
    return found


def _is_check(statement: ast.stmt) -> bool:
    if isinstance(statement, ast.Raise):
        return True
    if isinstance(statement, (ast.Expr, ast.Assign)) and isinstance(statement.value, ast.Call):
        called = statement.value.func
        name = called.id if isinstance(called, ast.Name) else getattr(called, "attr", "")
        return name.startswith(("check_", "_check"))
    if isinstance(statement, (ast.If, ast.For)):
        return all(_is_check(s) for s in (*statement.body, *statement.orelse))
    return False


def _parsed(code: str) -> tuple[ast.Module, list[str]]:
    """The excerpt parsed; one cut before a method (``end="def src_mask"``) loses its last lines until it parses."""
    lines = textwrap.dedent(code).splitlines()
    while lines:
        try:
            return ast.parse("\n".join(lines)), lines
        except SyntaxError:
            lines.pop()
    raise AssertionError(f"an excerpt that does not parse: {code[:200]!r}")


def body_and_check_lines(code: str) -> tuple[int, int]:
    """How many body lines the excerpt has, and how many of them are checks."""
    tree, lines = _parsed(code)
    body, checks = set(), set()

    def walk(statements: list[ast.stmt]) -> None:
        for statement in statements:
            if isinstance(statement, (ast.FunctionDef, ast.ClassDef)):
                inner = statement.body
                if inner and isinstance(inner[0], ast.Expr) and isinstance(getattr(inner[0], "value", None),
                                                                            ast.Constant):
                    inner = inner[1:]  # the docstring
                walk(inner)
                continue
            spanned = set(range(statement.lineno, statement.end_lineno + 1))
            body.update(spanned)
            if _is_check(statement):
                checks.update(spanned)

    walk(tree.body)
    written = {n for n in body if lines[n - 1].strip() and not lines[n - 1].strip().startswith("#")}
    return len(written), len(checks & written)


def test_the_measure_counts_checks_and_nothing_else():
    code = '''def f(x, y):
    """Doc."""
    check_int("x", x)
    if y < 0:
        raise ValueError("y")
    for name in ("a", "b"):
        _check_name(name)
    # a comment
    z = x + y

    if z:
        z = -z
    return z
'''
    assert body_and_check_lines(code) == (9, 5)


def test_the_shown_formulas_carry_at_most_one_line_of_checks():
    measured = {name: body_and_check_lines(code) for _, name, code in shown_excerpts() if name in FORMULAS}
    assert set(measured) == set(FORMULAS), f"not shown any more: {set(FORMULAS) - set(measured)}"
    heavy = {name: checks for name, (_, checks) in measured.items() if checks > 1}
    assert not heavy, f"check lines in a shown formula (at most 1, a _check_* call): {heavy}"


def test_checks_are_at_most_a_tenth_of_the_shown_code():
    excerpts = shown_excerpts()
    assert len(excerpts) >= 50, len(excerpts)
    counted = [(name, *body_and_check_lines(code)) for _, name, code in excerpts]
    body, checks = sum(c[1] for c in counted), sum(c[2] for c in counted)
    worst = sorted(counted, key=lambda c: -c[2])[:5]
    assert checks <= MAX_CHECK_SHARE * body, (
        f"{checks} of {body} shown body lines are checks ({checks / body:.1%}, at most {MAX_CHECK_SHARE:.0%}); "
        f"the most: {worst}")
