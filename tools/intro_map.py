"""Write the map of the whole model on the book's first page (book/intro.md), between its markers.

    python tools/intro_map.py          # rewrites the map from the shipped model
    python tools/intro_map.py --check  # exits 1 if the page's map is not the library's (the tests' check)

The map is ``figures.architecture.architecture_svg`` of the book's model: each block links to the
section that builds it and ("live") to chapter 6's whole-model explorer.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

INTRO = Path(__file__).resolve().parent.parent / "book" / "intro.md"
BEGIN, END = "<!-- map of the model: tools/intro_map.py writes it -->", "<!-- end of the map -->"
LIVE = "06_encoder_decoder.html#the-model-opened-up"
TITLE = "The book's Transformer: each block links to the section that builds it, and to its live figure"


def map_html() -> str:
    from transformer_lib.figures.architecture import architecture_blocks, architecture_svg
    from transformer_lib.pretrained import book_model

    svg = architecture_svg(architecture_blocks(book_model().model), title=TITLE, live_link=LIVE)
    return f"{BEGIN}\n```{{raw}} html\n{svg}\n```\n{END}"


def current(text: str) -> str:
    if BEGIN not in text or END not in text:
        raise ValueError(f"{INTRO}: no map markers ({BEGIN} ... {END})")
    return text[text.index(BEGIN): text.index(END) + len(END)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only check that the page's map is up to date")
    args = parser.parse_args()
    text = INTRO.read_text()
    wanted = map_html()
    if args.check:
        if current(text) != wanted:
            print(f"{INTRO}: the map differs from the library's; run python tools/intro_map.py")
            return 1
        return 0
    INTRO.write_text(text.replace(current(text), wanted))
    return 0


if __name__ == "__main__":
    sys.exit(main())
