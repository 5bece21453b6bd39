"""Numbers in the prose, bound to the values the cells compute.

A chapter's markdown writes ``{eval}`name``` where it quotes a computed number, and a code cell before it
binds the name: ``name = shown(value, ".2f")``. The name's display (its ``repr``) is the value at the
precision the text shows, so the same sentence reads the same wherever it is rendered:

* in JupyterLab, jupyterlab-myst evaluates the expression in the kernel when the markdown cell is run,
  and shows the result stored in the cell's ``user_expressions`` metadata when it is not;
* in the book, which is built from the stored notebooks without a kernel, ``book/_ext/bound_prose.py``
  reads the same stored ``user_expressions``; ``tools/execute_notebooks.py`` fills them, asking the
  kernel at the markdown cell's place in the run, as JupyterLab's Run All does.

A retrained model changes the text with the outputs; ``tests/test_prose_numbers.py`` fails on a computed
number typed into the prose instead.
"""

from __future__ import annotations

import re

from .validation import check_instance, shorten

EVAL_ROLE = re.compile(r"\{eval\}`([^`]+)`")  # the inline expressions of a markdown cell


def _formats_a_number(spec: str) -> bool:
    """Whether ``spec`` formats a number: then a value it cannot format is of the wrong type."""
    try:
        format(0.5, spec)
    except ValueError:
        return False
    return True


class Shown:
    """A computed value and the text the prose shows for it (``format(value, spec)``)."""

    def __init__(self, value: object, spec: str = "") -> None:
        self.value = value
        check_instance("spec", spec, str, "a format spec (str)")
        try:
            self.text = format(value, spec)
        except (TypeError, ValueError) as error:  # named: format's own message names neither
            kind = TypeError if isinstance(error, TypeError) or _formats_a_number(spec) else ValueError
            raise kind(f"value: a {type(value).__name__} that spec {shorten(repr(spec))} cannot format "
                       f"({shorten(str(error), 80)})") from None

    def __repr__(self) -> str:  # what jupyterlab-myst and the book show: no quotes
        return self.text

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        return self.text if not spec else format(self.value, spec)


def shown(value: object, spec: str = "") -> Shown:
    """``value`` as the prose quotes it: ``shown(0.4912, ".2f")`` reads ``0.49``, ``shown(13)`` ``13``.

    >>> shown(0.4912, ".2f"), shown(0.0612, ".0%"), shown(7499.3, ",.0f")
    (0.49, 6%, 7,499)
    """
    return Shown(value, spec)


def expressions(markdown: str) -> list[str]:
    """The ``{eval}`` expressions of a markdown text, in order, each once."""
    return list(dict.fromkeys(m.strip() for m in EVAL_ROLE.findall(check_instance("markdown", markdown, str,
                                                                                    "markdown text (str)"))))
