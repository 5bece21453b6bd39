"""The map of the model on the book's first page is the library's figure of the shipped model
(tools/intro_map.py writes it), and each of its blocks links to a section and to the live figure."""

from __future__ import annotations

import importlib.util
import re

from tools.book_browser import ROOT
from transformer_lib.figures.architecture import SECTION_LINKS


def _tool():
    spec = importlib.util.spec_from_file_location("intro_map", ROOT / "tools" / "intro_map.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_intro_map_is_the_librarys_figure() -> None:
    tool = _tool()
    text = tool.INTRO.read_text()
    assert tool.current(text) == tool.map_html(), "run python tools/intro_map.py"
    links = re.findall(r'xlink:href="([^"]+)"', tool.current(text))
    boxes = tool.current(text).count('rx="6"')  # one rounded box per block
    assert links.count(tool.LIVE) == boxes == 7  # two embeddings, four layers, the output projection
    assert set(links) - {tool.LIVE} <= set(SECTION_LINKS.values())
    assert "sec-model-opened-up)=" in (ROOT / "book" / "06_encoder_decoder.ipynb").read_text()
