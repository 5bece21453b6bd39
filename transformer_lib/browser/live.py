"""What every explorer of JupyterLab shares: its two views, its messages, and callbacks that never raise.

An explorer (``explorers.AttentionExplorer``, ``explorers.PositionalEncodingExplorer``,
``stepper.DecodingStepper``, ``lm_explorer.LanguageModelExplorer``, ``model_explorer.ModelExplorer``,
``vit_explorer.DigitExplorer``)
is a :class:`LiveExplorer`: its ipywidgets in ``widget``, its messages in ``messages``, and
``page_html()``, its form in the static book (``page.live_explorer_html``). Jupyter shows whichever of
the two views the front end can (``_repr_mimebundle_``). Every callback runs through ``_safely``: a
reader never sees a traceback, only a message. This module imports no ipywidgets (the explorers
import it when one is made).
"""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..figures.display import figure_mimebundle
from ..validation import check_choice, check_instance
from .theme import MESSAGES

if TYPE_CHECKING:
    import ipywidgets as widgets
    import plotly.graph_objects as go

LEVELS = {"info": ("#1b4f72", "#eaf2f8"), "warning": ("#7d5a00", "#fff6db"), "error": ("#8a1c1c", "#fdecea")}


def show_in(output: widgets.Output, fig: go.Figure) -> None:
    """Replace what an Output widget shows by ``fig``. Setting ``outputs`` directly (rather than
    ``with output: show(fig)``) works from any callback, and in the saved widget state."""
    output.outputs = ({"output_type": "display_data", "data": figure_mimebundle(fig), "metadata": {}},)


def message(text: str, level: str = "info") -> str:
    """``text`` as a message box of the widget: ``level`` is "info", "warning" or "error"."""
    check_instance("text", text, str, "a str")
    fg, bg = LEVELS[check_choice("level", level, list(LEVELS))]
    return (f'<div class="tc-message tc-{level}" style="color:{fg};background:{bg};padding:4px 8px;'
            f'border-radius:4px;margin:2px 0">{html.escape(text)}</div>')


def stale_note(*figures: widgets.Output) -> str:
    """After a refused input: the note that the figures still shown are the last good input's (as the page's
    ``markStale``), or nothing when no figure is shown."""
    return message(MESSAGES["stale"], "info") if any(f.outputs for f in figures) else ""


def sentence_case(text: str) -> str:
    """An argument check's message as a reader's sentence: a capital, and a full stop at the end."""
    text = check_instance("text", text, str, "a str").strip()
    return text[:1].upper() + text[1:] + ("" if text.endswith((".", "!", "?", "…")) else ".")


class LiveExplorer:
    """The base of the explorers: a subclass sets ``widget`` and ``messages`` and defines ``page_html``."""

    widget: widgets.Widget  # the JupyterLab view
    messages: widgets.HTML  # where every message goes
    _updating = False  # True while the explorer itself changes its controls: their callbacks wait

    def page_html(self) -> str:
        """The static book's form of the explorer (``page.live_explorer_html``)."""
        raise NotImplementedError

    def _repr_mimebundle_(self, **kwargs: object) -> dict:
        # text/html: the in-page explorer of the static book (JupyterLab shows the widget view)
        return {**self.widget._repr_mimebundle_(**kwargs), "text/html": self.page_html()}

    def _refused(self) -> None:
        """What an explorer does after its message when a callback failed (nothing, unless it says)."""

    def _safely(self, action: Callable[[], None]) -> None:
        """Run a callback; turn any exception into a message in the widget."""
        if self._updating:
            return
        try:
            action()
        except ValueError as err:  # the argument checks of this library: already a sentence for a reader
            self.messages.value = message(sentence_case(str(err).split(": ", 1)[-1]), "error")
        except Exception as err:  # noqa: BLE001 -- a reader must never see a traceback
            self.messages.value = message(MESSAGES["failed"].format(error=f"{type(err).__name__}: {err}"), "error")
        else:
            return
        self._refused()
