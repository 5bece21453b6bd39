"""Sphinx extension: the theme's icon fonts cut down to the icons the book shows.

pydata-sphinx-theme draws its icons (menu, search, download, the GitHub button...) with
FontAwesome's web fonts: fa-solid-900.woff2 (153 kB) and fa-brands-400.woff2 (115 kB), about 2,000
glyphs of which the book uses about twenty. After the build, each font in the site is replaced by
a subset holding only the glyphs of the ``fa-*`` icon classes named in the site's pages and
scripts (the theme's scripts add a few icons at run time), which keeps every icon and weighs a
few kilobytes. The theme's files in the installed package are not touched.
"""

from __future__ import annotations

import re
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.util import logging

logger = logging.getLogger(__name__)

WEBFONTS = "_static/vendor/fontawesome/webfonts"
FONTS = ("fa-solid-900.woff2", "fa-brands-400.woff2", "fa-regular-400.woff2")
THEME_CSS = "_static/styles/pydata-sphinx-theme.css"
ICON_CLASS = re.compile(r"\bfa-[a-z0-9-]+")
# ".fa-bars:before,.fa-navicon:before{content:"\f0c9"}": class names and the code point they draw
ICON_RULE = re.compile(r'((?:\.fa-[a-z0-9-]+:(?::)?before,?)+)\{content:"\\([0-9a-f]+)"')


def icon_code_points(css: str) -> dict[str, int]:
    """Each ``fa-*`` icon class of the theme's CSS and the code point of its glyph."""
    points = {}
    for selectors, code in ICON_RULE.findall(css):
        for name in re.findall(r"\.(fa-[a-z0-9-]+):", selectors):
            points[name] = int(code, 16)
    return points


def used_icons(site: Path) -> set[str]:
    """Every ``fa-*`` class named in the site's pages and its own scripts."""
    names: set[str] = set()
    for path in [*site.rglob("*.html"), *(site / "_static").glob("*.js"), *(site / "_static" / "scripts").glob("*.js")]:
        if "_sources" not in path.parts:
            names |= set(ICON_CLASS.findall(path.read_text(encoding="utf-8", errors="ignore")))
    return names


def subset_icon_fonts(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    from fontTools import subset  # matplotlib's dependency; woff2 needs brotli (requirements.txt)

    site = Path(app.outdir)
    css = site / THEME_CSS
    if not css.is_file():
        return
    points = icon_code_points(css.read_text(encoding="utf-8"))
    wanted = sorted({points[name] for name in used_icons(site) if name in points})
    if not wanted:
        return
    for name in FONTS:
        font = site / WEBFONTS / name
        if not font.is_file():
            continue
        options = subset.Options()
        options.flavor = "woff2"
        options.layout_features = ["*"]
        options.notdef_outline = True
        loaded = subset.load_font(str(font), options)
        subsetter = subset.Subsetter(options)
        subsetter.populate(unicodes=wanted)
        subsetter.subset(loaded)
        before = font.stat().st_size
        subset.save_font(loaded, str(font), options)
        logger.info(f"icon_fonts: {name}: {before // 1024} kB -> {font.stat().st_size // 1024} kB "
                    f"({len(wanted)} icons)")


def setup(app: Sphinx) -> dict:
    app.connect("build-finished", subset_icon_fonts)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
