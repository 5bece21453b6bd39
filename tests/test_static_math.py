"""The book's formulas are typeset at build time (book/_ext/static_math.py, MathJax in Node.js).

The browser test checks the built pages (every formula typeset, no raw TeX, no MathJax loaded);
these check the renderer itself: what it makes of a formula, and that it refuses one it cannot read.
"""

from __future__ import annotations

import sys

import pytest

from .book_browser import ROOT

sys.path.insert(0, str(ROOT / "book" / "_ext"))
import static_math  # noqa: E402 -- a Sphinx extension, imported from its folder


def test_a_formula_becomes_svg_with_mathml_and_shared_glyphs() -> None:
    rendered = static_math.typeset([{"tex": r"\operatorname{softmax}\left(\frac{QK^\top}{\sqrt{d_k}}\right)V",
                                     "display": True}, {"tex": r"T \times T", "display": False}])
    display, inline = rendered["math"]
    assert display.startswith('<mjx-container class="MathJax" jax="SVG" display="true"')
    assert 'tabindex="0"' in display and "tabindex" not in inline  # the keyboard can scroll a wide one
    assert "<svg" in inline and 'display="true"' not in inline
    # MathML beside the picture, for screen readers; the picture itself is hidden from them
    assert "<mjx-assistive-mml" in inline and "<mi>T</mi><mo>×</mo><mi>T</mi>" in inline
    assert 'aria-hidden="true"' in inline
    # each glyph is drawn once per page, in the hidden cache, and used by reference
    assert 'xlink:href="#MJX-TEX-I-1D447"' in inline and 'id="MJX-TEX-I-1D447"' in rendered["defs"]
    assert rendered["defs"].count('id="MJX-TEX-I-1D447"') == 1
    assert 'mjx-container[jax="SVG"]' in rendered["css"]


def test_ams_macros_are_there() -> None:
    rendered = static_math.typeset([{"tex": r"\begin{aligned} a &= b \\ \lVert x \rVert &\le 1 \end{aligned}",
                                     "display": True}])
    assert "merror" not in rendered["math"][0]


def test_an_unknown_macro_fails_the_build_naming_it() -> None:
    from sphinx.errors import ExtensionError

    with pytest.raises(ExtensionError, match=r"Undefined control sequence \\notamacro"):
        static_math.typeset([{"tex": r"\notamacro x", "display": False}])


def test_the_pattern_finds_what_sphinx_writes() -> None:
    page = ('<p><span class="math notranslate nohighlight">\\(a &lt; b\\)</span></p>\n'
            '<div class="math notranslate nohighlight">\n\\[\nx^2\n\\]</div>')
    found = [(m.group(2), m.group(4).strip()) for m in static_math.MATH.finditer(page)]
    assert found == [("span", "a &lt; b"), ("div", "x^2")]
