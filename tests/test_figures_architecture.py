import pytest
import torch

from transformer_lib.config import TransformerConfig
from transformer_lib.figures.architecture import SECTION_LINKS, architecture_blocks, architecture_svg
from transformer_lib.models import Transformer


def _model(**overrides):
    torch.manual_seed(0)
    config = TransformerConfig.preset("small", src_vocab_size=30, tgt_vocab_size=40, dropout=0.0, **overrides)
    return Transformer(config)


def test_blocks_follow_the_model_and_measure_its_shapes():
    model = _model()
    c = model.config
    blocks = architecture_blocks(model, src_len=5, tgt_len=6, batch=2)
    encoder = [b for b in blocks if b.name.startswith("encoder.layers.")]
    decoder = [b for b in blocks if b.name.startswith("decoder.layers.")]
    assert len(encoder) == c.n_encoder_layers and len(decoder) == c.n_decoder_layers
    by_name = {b.name: b for b in blocks}
    assert by_name["src_embed"].shape_in == (2, 5) and by_name["src_embed"].shape_out == (2, 5, c.d_model)
    assert by_name["generator"].shape_out == (2, 6, 40)
    assert all(b.shape_in == b.shape_out == (2, 6, c.d_model) for b in decoder)
    # post-norm rows: sub-layer then "add & norm"; the decoder has a cross-attention
    assert [r for r, _ in decoder[0].rows] == ["masked self-attention", "add & norm", "cross-attention", "add & norm",
                                               "feed-forward", "add & norm"]
    assert model.training  # the mode is restored


def test_pre_norm_and_depth_change_the_picture():
    deep = architecture_blocks(_model(n_encoder_layers=3, norm_first=True))
    rows = [r for r, _ in deep[2].rows]  # the first encoder layer
    assert rows[:3] == ["norm", "self-attention", "add"]
    assert sum(b.name.startswith("encoder.layers.") for b in deep) == 3


def test_svg_has_title_shapes_and_links():
    svg = architecture_svg(architecture_blocks(_model(), src_len=5, tgt_len=6))
    assert svg.startswith('<div class="tc-figure">') and svg.endswith("</svg></div></div>")
    # a text alternative (its <title> and <desc>, the shapes in words) and, too wide for a phone,
    # a box that scrolls with the keyboard and a cue saying so
    assert 'role="group" aria-labelledby="tc-architecture-title"' in svg
    assert '<title id="tc-architecture-title">The Transformer' in svg
    assert '<p class="tc-figure-title">The Transformer' in svg  # above the picture: it wraps on a phone
    desc = svg.split("<desc>")[1].split("</desc>")[0]
    assert desc.startswith("The encoder, bottom to top: input embedding")
    assert "encoder layer 2 of 2 (1, 5, 128) to (1, 5, 128)" in desc
    assert 'class="tc-figure-scroll" role="region" tabindex="0"' in svg and "scroll it sideways" in svg
    assert "The Transformer" in svg and "(1, 6, 40)" in svg and "(1, 5)" in svg
    for link in (SECTION_LINKS["encoder layer"], SECTION_LINKS["cross-attention"], SECTION_LINKS["positions"]):
        assert f'href="{link}"' in svg
    assert svg.count('stroke="#2a7"') == _model().config.n_decoder_layers  # memory to each cross-attention


def test_bad_input():
    with pytest.raises(TypeError, match="model"):
        architecture_blocks(torch.nn.Linear(2, 2))
    with pytest.raises(ValueError, match="src_len"):
        architecture_blocks(_model(), src_len=0)
    with pytest.raises(ValueError, match="blocks"):
        architecture_svg([])


def test_every_link_names_a_heading_of_the_book():
    """The anchors are docutils ids of the chapters' headings: a renamed section breaks this test."""
    import json
    import re
    from pathlib import Path

    book = Path(__file__).resolve().parent.parent / "book"
    for link in SECTION_LINKS.values():
        page, anchor = link.split("#")
        cells = json.loads((book / page.replace(".html", ".ipynb")).read_text())["cells"]
        headings = [line.lstrip("#").strip() for cell in cells if cell["cell_type"] == "markdown"
                    for line in "".join(cell["source"]).splitlines() if line.startswith("#")]
        assert anchor in {re.sub(r"[^a-z0-9]+", "-", h.lower()).strip("-") for h in headings}, link
