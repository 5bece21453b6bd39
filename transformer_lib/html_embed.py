"""Text and JSON placed inside a page's ``<script>`` elements, so that no string can break the page.

Inside ``<script>`` the HTML parser does not read JavaScript or JSON: it only watches for ``</script``,
which ends the element, and for ``<!--`` followed by ``<script``, after which it swallows everything up
to a later ``</script>``: the rest of the explorer, its fallback text and the page after it. A sentence
a reader types, or a token of a vocabulary, can hold either sequence. Every place of the library that
embeds JSON or text in a script goes through this module (``live_explorers``, ``figures.bertviz``;
plotly escapes its own JSON the same way).
"""

from __future__ import annotations

import json
import re

# How many decimals a page carries the numbers a figure or an explorer draws (attention weights,
# probabilities): a colour, a bar or a line's opacity shows no more, and Python's float64 repr writes 17
# digits (0.4321842533850858), which made the pages' data three times longer.
PAGE_DECIMALS = 4

# JSON allows these escapes inside strings, the only place the characters can occur in JSON.
# U+2028 and U+2029 end a line in JavaScript before ES2019.
_SWAPS = (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"), ("\u2029", "\\u2029"))


def json_for_script(value: object) -> str:
    """``value`` as compact JSON for a ``<script>`` element (``type="application/json"`` or JavaScript):
    every ``<``, ``>`` and ``&`` written as ``\\u003c``, ``\\u003e``, ``\\u0026``. ``JSON.parse`` reads back
    the same strings. NaN and infinities are refused (``ValueError``): they are not JSON."""
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except TypeError as error:
        raise TypeError(f"value: expected JSON values (dict, list, str, number, bool, None): {error}") from None
    except ValueError as error:
        raise ValueError(f"value: expected finite numbers: {error}") from None
    for char, escaped in _SWAPS:
        text = text.replace(char, escaped)
    return text


def script_safe(source: str) -> str:
    """JavaScript ``source`` that carries strings from elsewhere (bertviz's script, with the tokens in its
    JSON): each ``<`` that opens ``<!--``, ``<script`` or ``</script`` becomes ``\\u003c``. Such a ``<`` can
    only stand inside a string literal, a regular expression or a comment, where ``\\u003c`` means ``<``."""
    if not isinstance(source, str):
        raise TypeError(f"source: expected a str (JavaScript), got {type(source).__name__}")
    return re.sub(r"<(?=!--|/?script)", r"\\u003c", source, flags=re.IGNORECASE)
