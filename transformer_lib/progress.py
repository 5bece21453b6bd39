"""How training shows its progress: a bar that a reader can read wherever the code runs.

In a live notebook (JupyterLab, Colab) the bar is tqdm's notebook widget (``tqdm.auto``): text on
stderr would sit on JupyterLab's pink error background. Elsewhere (a terminal, ``torchrun``) it is
tqdm's text bar. The book's stored outputs are computed by ``tools/execute_notebooks.py``, which
sets ``TRANSFORMER_BOOK_BUILD=1`` (:data:`BOOK_BUILD_ENV`): there the bar is one line of text, its
final state, printed when it closes. A widget would make the static page load the widgets' manager
and MathJax (about 0.7 MB gzip) to draw a bar that no longer moves.

tqdm is imported when a bar is made, not with this module.
"""

from __future__ import annotations

import io
import os
from typing import Any

from .validation import check_bool, check_instance, check_int

BOOK_BUILD_ENV = "TRANSFORMER_BOOK_BUILD"  # set by tools/execute_notebooks.py; bertviz reads it too


def book_build() -> bool:
    """Whether this code runs to compute the book's stored outputs (tools/execute_notebooks.py)."""
    return os.environ.get(BOOK_BUILD_ENV) == "1"


def progress_bar(total: int | None, enabled: bool, **options: Any) -> Any:
    """A tqdm bar of ``total`` steps (None: unknown), or a disabled one. In the book's build its
    updates go nowhere; :func:`close_bar` prints its final line."""
    if total is not None:
        check_int("total", total, minimum=0)
    check_bool("enabled", enabled)
    if book_build():
        from tqdm.std import tqdm

        return tqdm(total=total, disable=not enabled, file=io.StringIO(), **options)
    from tqdm.auto import tqdm

    return tqdm(total=total, disable=not enabled, **options)


def close_bar(bar: Any) -> None:
    """Close ``bar``; in the book's build, print its final state as one line of text (stdout)."""
    from tqdm.std import tqdm

    check_instance("bar", bar, tqdm, "a tqdm progress bar (progress_bar)")
    shown = not bar.disable  # close() disables the bar
    bar.close()
    if book_build() and shown:
        print(bar)
