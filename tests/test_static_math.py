"""The book's formulas are typeset at build time (book/_ext/static_math.py, MathJax in Node.js).

The browser test checks the built pages (every formula typeset, no raw TeX, no MathJax loaded);
these check the renderer itself: what it makes of a formula, and that it refuses one it cannot read.
"""

from __future__ import annotations

import sys

import pytest

from tools.book_browser import ROOT

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


class _App:
    """What check_node and mark_page read of Sphinx's application."""

    def __init__(self) -> None:
        self.config = type("Config", (), {"static_math_with_node": True})()
        self.css_files: list[str] = []

    def add_css_file(self, name: str) -> None:
        self.css_files.append(name)


def test_without_node_the_formulas_are_left_to_the_browsers_mathjax(monkeypatch) -> None:
    body = {"body": '<p><span class="math notranslate nohighlight">\\(x^2\\)</span></p>'}
    with_node = _App()
    static_math.check_node(with_node)
    context = dict(body)
    static_math.mark_page(with_node, "page", "page.html", context, None)
    assert context.get("static_math") is True and with_node.css_files == [static_math.STYLESHEET]

    monkeypatch.setattr(static_math.shutil, "which", lambda name: None)
    without_node = _App()
    static_math.check_node(without_node)  # a message, not an error: the book still builds
    assert without_node.config.static_math_with_node is False
    context = dict(body)
    static_math.mark_page(without_node, "page", "page.html", context, None)
    assert "static_math" not in context and without_node.css_files == []
    with pytest.raises(static_math.ExtensionError, match="Node.js not found"):
        static_math.typeset([{"tex": "x", "display": False}])
