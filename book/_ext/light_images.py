"""Sphinx extension: the site's PNG figures saved with a palette of 256 colours.

The figures that notebooks save as PNG (the Performance appendix's matplotlib plots) are written
by matplotlib as full-colour RGBA, about 75 kB each, although a line plot holds a few dozen
colours and their anti-aliased edges. After the build, each PNG under ``_images`` is saved again
with an adaptive palette of 256 colours (Pillow), which makes it about a third of the size, when
the picture stays the same to the eye: the mean difference per channel must stay under
``MAX_MEAN_ERROR`` (of 255) and no pixel may move by more than ``MAX_PIXEL_ERROR``; otherwise the
original is kept. The notebooks' stored outputs are not touched.
"""

from __future__ import annotations

import io
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.util import logging

logger = logging.getLogger(__name__)

MAX_MEAN_ERROR = 0.5
MAX_PIXEL_ERROR = 16


def palette_png(path: Path) -> tuple[int, int] | None:
    """Re-save ``path`` with 256 colours if that is smaller and looks the same; (before, after) bytes."""
    import numpy as np
    from PIL import Image

    before = path.stat().st_size
    with Image.open(path) as image:
        if image.mode not in ("RGB", "RGBA"):
            return None
        original = image.convert("RGBA")
    opaque = original.getextrema()[3][0] == 255
    # An opaque picture: the palette that covers its pixels best (Pillow's only exact-enough one for
    # anti-aliased lines); with transparency, the octree, the one Pillow offers for RGBA.
    reduced = (original.convert("RGB").quantize(colors=256, method=Image.Quantize.MAXCOVERAGE, dither=Image.Dither.NONE)
               if opaque else original.quantize(colors=256, method=Image.Quantize.FASTOCTREE, dither=Image.Dither.NONE))
    error = np.abs(np.asarray(reduced.convert("RGBA"), dtype=np.int16) - np.asarray(original, dtype=np.int16))
    if error.mean() > MAX_MEAN_ERROR or error.max() > MAX_PIXEL_ERROR:
        return None
    buffer = io.BytesIO()
    reduced.save(buffer, format="PNG", optimize=True)
    if buffer.tell() >= before:
        return None
    path.write_bytes(buffer.getvalue())
    return before, buffer.tell()


def lighten_images(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    for path in sorted((Path(app.outdir) / "_images").glob("*.png")):
        sizes = palette_png(path)
        if sizes is not None:
            logger.info(f"light_images: {path.name}: {sizes[0] // 1024} kB -> {sizes[1] // 1024} kB (256 colours)")


def setup(app: Sphinx) -> dict:
    app.connect("build-finished", lighten_images)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
