"""Show the library's own source in the book, so that the text and the code cannot drift apart."""

from __future__ import annotations

import inspect
import textwrap
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from IPython.display import Markdown


def source_of(obj: object, start: str | None = None, end: str | None = None) -> str:
    """The source of a class, function or method as it is in ``transformer_lib``.

    ``start`` and ``end`` cut out a part: from the first line containing ``start`` to the
    first later line containing ``end`` (both included). Raises ValueError when a marker
    is not found, so a renamed line cannot leave the book showing the wrong code.
    """
    try:
        lines = textwrap.dedent(inspect.getsource(obj)).splitlines()
    except (TypeError, OSError) as error:
        raise TypeError(f"obj: expected a class, function or method defined in a file, got {obj!r}") from error
    first, last = 0, len(lines) - 1
    if start is not None:
        first = next((i for i, line in enumerate(lines) if start in line), None)
        if first is None:
            raise ValueError(f"start: no line of {getattr(obj, '__qualname__', obj)} contains {start!r}")
    if end is not None:
        last = next((i for i in range(first, len(lines)) if end in lines[i]), None)
        if last is None:
            raise ValueError(f"end: no line after {start!r} in {getattr(obj, '__qualname__', obj)} contains {end!r}")
    return textwrap.dedent("\n".join(lines[first : last + 1]))


def show_source(obj: object, start: str | None = None, end: str | None = None) -> Markdown:
    """Display :func:`source_of` as a highlighted Python block, headed by the file it comes from."""
    from IPython.display import Markdown  # only the notebooks need IPython

    module = inspect.getmodule(obj)
    where = module.__name__ if module is not None else ""
    name = getattr(obj, "__qualname__", "")
    code = source_of(obj, start, end)
    return Markdown(f"`{where}.{name}`\n\n```python\n{code}\n```")
