"""Show the library's own source in the book, so that the text and the code cannot drift apart.

Each excerpt is headed by a link to its lines in the book's repository: at the branch
(``REVISION``) in a notebook, so that the stored outputs do not change with every commit; the
book's build (``book/_ext/source_links.py``) writes in the revision it was built from.
"""

from __future__ import annotations

import inspect
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from IPython.display import Markdown

# _config.yml's repository.url and branch (tests/test_reader.py checks that they are the same)
REPOSITORY = "https://github.com/transformer-computed/transformer-computed"
REVISION = "main"
_ROOT = Path(__file__).resolve().parent.parent  # the folder that holds transformer_lib/


def _excerpt(obj: object, start: str | None, end: str | None) -> tuple[list[str], int]:
    """The lines of ``obj`` between the markers, and the file's line number of the first one."""
    try:
        lines, first_line = inspect.getsourcelines(obj)
    except (TypeError, OSError) as error:
        raise TypeError(f"obj: expected a class, function or method defined in a file, got {obj!r}") from error
    lines = [line.rstrip("\n") for line in lines]
    first, last = 0, len(lines) - 1
    if start is not None:
        first = next((i for i, line in enumerate(lines) if start in line), None)
        if first is None:
            raise ValueError(f"start: no line of {getattr(obj, '__qualname__', obj)} contains {start!r}")
    if end is not None:
        last = next((i for i in range(first, len(lines)) if end in lines[i]), None)
        if last is None:
            raise ValueError(f"end: no line after {start!r} in {getattr(obj, '__qualname__', obj)} contains {end!r}")
    return lines[first: last + 1], max(first_line, 1) + first  # (a module's source starts at line 0)


def source_of(obj: object, start: str | None = None, end: str | None = None) -> str:
    """The source of a class, function or method as it is in ``transformer_lib``.

    ``start`` and ``end`` cut out a part: from the first line containing ``start`` to the
    first later line containing ``end`` (both included). Raises ValueError when a marker
    is not found, so a renamed line cannot leave the book showing the wrong code.
    """
    lines, _ = _excerpt(obj, start, end)
    return textwrap.dedent("\n".join(lines))


def source_url(obj: object, start: str | None = None, end: str | None = None, revision: str = REVISION) -> str | None:
    """The address of the excerpt's lines in the repository (``#L<first>-L<last>``), or None for
    code outside the library."""
    lines, first_line = _excerpt(obj, start, end)
    try:
        # unwrap, as getsourcelines does: a decorated function's wrapper lives in the decorator's file
        path = Path(inspect.getsourcefile(inspect.unwrap(obj)) or "").resolve().relative_to(_ROOT)
    except (TypeError, ValueError):
        return None
    if path.parts[0] != "transformer_lib":
        return None
    return f"{REPOSITORY}/blob/{revision}/{path.as_posix()}#L{first_line}-L{first_line + len(lines) - 1}"


def show_source(obj: object, start: str | None = None, end: str | None = None) -> Markdown:
    """Display :func:`source_of` as a highlighted Python block, headed by the file it comes from
    (a link to those lines in the repository)."""
    from IPython.display import Markdown  # only the notebooks need IPython

    module = inspect.getmodule(obj)
    where = module.__name__ if module is not None else ""
    name = getattr(obj, "__qualname__", "")
    code = source_of(obj, start, end)
    url = source_url(obj, start, end)
    heading = f"`{where}.{name}`" if url is None else f"[`{where}.{name}`]({url})"
    return Markdown(f"{heading}\n\n```python\n{code}\n```")
