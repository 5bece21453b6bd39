"""The whole encoder-decoder in one picture (the paper's Figure 1), generated from a ``Transformer``.

``architecture_blocks`` walks a model instance: it runs one forward pass with hooks on the
embeddings, every encoder and decoder layer and the output projection, and records the shape
of the tensor that goes into and out of each. ``architecture_svg`` draws those blocks as an SVG
(the encoder on the left, the decoder on the right, bottom to top as in the paper), with the
measured shapes on the arrows and each block a link to the book's section that builds it.
Because the picture is computed from the modules, a change to the model changes the picture.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from html import escape

import torch
from torch import nn

from ..decoder import DecoderLayer
from ..encoder import EncoderLayer
from ..models import Transformer
from ..validation import check_instance, check_positive_int

SCROLL_CUE = "The figure is wider than the screen: scroll it sideways (→) to see the decoder."
MIN_WIDTH = 620  # px: the narrowest the picture is drawn; below it, it scrolls

# Where the book builds each block (the static book's pages and section anchors).
SECTION_LINKS = {
    "embedding": "02_embeddings.html#one-hot-vectors-and-dense-vectors",
    "positions": "03_positional_encoding.html#the-sinusoids-of-section-3-5",
    "attention": "05_multi_head_attention.html#splitting-into-heads-and-concatenating-back",
    "masked attention": "04_attention.html#the-causal-mask",
    "cross-attention": "06_encoder_decoder.html#the-decoder-layer-and-cross-attention",
    "add & norm": "06_encoder_decoder.html#add-norm",
    "feed-forward": "06_encoder_decoder.html#the-position-wise-feed-forward-network",
    "encoder layer": "06_encoder_decoder.html#the-encoder-layer",
    "decoder layer": "06_encoder_decoder.html#the-decoder-layer-and-cross-attention",
    "output": "06_encoder_decoder.html#the-whole-model",
    "softmax": "07_training_inference.html#greedy-decoding-step-by-step",
}


@dataclass
class Block:
    """One box of the picture: a module of the model and the shapes measured around it."""

    side: str  # "encoder" or "decoder"
    name: str  # the module's attribute path in the model, e.g. "encoder.layers.0"
    title: str  # what the box says
    link: str
    shape_in: tuple[int, ...]
    shape_out: tuple[int, ...]
    rows: list[tuple[str, str]] = field(default_factory=list)  # (sub-layer, link) inside the box


def _rows(layer: nn.Module) -> list[tuple[str, str]]:
    """The sub-layers of one layer, bottom to top, read from its modules (pre- or post-norm)."""
    if isinstance(layer, EncoderLayer):
        parts = [("self-attention", "attention"), ("feed-forward", "feed-forward")]
    elif isinstance(layer, DecoderLayer):
        parts = [("masked self-attention", "masked attention"), ("cross-attention", "cross-attention"),
                 ("feed-forward", "feed-forward")]
    else:
        raise TypeError(f"layer: expected an EncoderLayer or DecoderLayer, got {type(layer).__name__}")
    rows, norm_link = [], SECTION_LINKS["add & norm"]
    for label, kind in parts:
        if layer.norm_first:
            rows += [("norm", norm_link), (label, SECTION_LINKS[kind]), ("add", norm_link)]
        else:
            rows += [(label, SECTION_LINKS[kind]), ("add & norm", norm_link)]
    return rows


def _shape(value: object) -> tuple[int, ...]:
    tensor = value[0] if isinstance(value, tuple) else value
    return tuple(tensor.shape)


@torch.no_grad()
def architecture_blocks(model: Transformer, src_len: int = 7, tgt_len: int = 8, batch: int = 1) -> list[Block]:
    """The model's blocks, bottom to top on each side, with the shapes of one forward pass
    on ``batch`` sentences of ``src_len`` source and ``tgt_len`` target tokens."""
    if not isinstance(model, Transformer):
        raise TypeError(f"model: expected a Transformer, got {type(model).__name__}")
    for name, value in (("src_len", src_len), ("tgt_len", tgt_len), ("batch", batch)):
        check_positive_int(name, value)
    config = model.config
    watched: list[tuple[str, str, str, str, nn.Module, list[tuple[str, str]]]] = [
        ("encoder", "src_embed", "input embedding × √d_model + positions", SECTION_LINKS["embedding"],
         model.src_embed, [("positional encoding", SECTION_LINKS["positions"])]),
        ("decoder", "tgt_embed", "output embedding × √d_model + positions", SECTION_LINKS["embedding"],
         model.tgt_embed, [("positional encoding", SECTION_LINKS["positions"])]),
    ]
    for side, stack, kind in (("encoder", model.encoder, "encoder layer"), ("decoder", model.decoder, "decoder layer")):
        for i, layer in enumerate(stack.layers):
            watched.append((side, f"{side}.layers.{i}", f"{kind} {i + 1} of {len(stack.layers)}",
                            SECTION_LINKS[kind], layer, _rows(layer)))
    watched.append(("decoder", "generator", "linear (pre-softmax projection)", SECTION_LINKS["output"],
                    model.generator, []))
    shapes: dict[str, tuple[tuple[int, ...], tuple[int, ...]]] = {}

    def record(name: str) -> object:
        def hook(_module: nn.Module, inputs: tuple, output: object) -> None:  # None: the output is kept
            shapes[name] = (_shape(inputs[0]), _shape(output))
        return hook

    handles = [module.register_forward_hook(record(name)) for _, name, _, _, module, _ in watched]
    was_training = model.training
    try:
        model.eval()
        device = next(model.parameters()).device
        src = torch.full((batch, src_len), 4 % config.src_vocab_size, dtype=torch.long, device=device)
        tgt = torch.full((batch, tgt_len), 4 % config.tgt_vocab_size, dtype=torch.long, device=device)
        model(src, tgt)
    finally:
        for handle in handles:
            handle.remove()
        model.train(was_training)
    return [Block(side, name, title, link, *shapes[name], rows) for side, name, title, link, _, rows in watched]


def _fmt(shape: tuple[int, ...]) -> str:
    return "(" + ", ".join(str(n) for n in shape) + ")"


def _explorer_title(block: Block, group: str) -> str:
    """A box's title in the explorer: first the name its menu gives the blocks (``encoder.0``, ``src``),
    then what it is (shortened where both would not fit the box)."""
    short = {"src_embed": "embedding + positions", "tgt_embed": "embedding + positions",
             "generator": "linear, pre-softmax"}
    return f"{group} · {short.get(block.name, block.title)}"


def _shape_of(side: str, explorer: bool) -> str:
    """The explorer's mark of a shape's label: the page's explorer sets the positions (its second number)
    to the length of the sentence it read, on the ``side``'s column (``static/model-explorer.js``)."""
    return f' class="tc-shape" data-side="{side}"' if explorer else ""


def _cue(cue: str, explorer: bool) -> str:
    """What to click; in the explorer, marked so that a printed page leaves it out (explorers.css)."""
    return f'<tspan class="tc-cue">; {escape(cue)}</tspan>' if explorer else f"; {cue}"


def _check_blocks(blocks: object) -> None:
    if isinstance(blocks, str) or not isinstance(blocks, Sequence):
        raise TypeError(f"blocks: expected a list of Block from architecture_blocks, got {type(blocks).__name__}")
    if not blocks or not all(isinstance(b, Block) for b in blocks):
        raise ValueError("blocks: expected a non-empty list of Block from architecture_blocks")


# The modules of a layer's sub-layers, as capture.capture_activations names their blocks.
SUBLAYER_MODULES = {
    "self-attention": ("self_attn", "attn_residual"), "masked self-attention": ("self_attn", "self_residual"),
    "cross-attention": ("cross_attn", "cross_residual"), "feed-forward": ("feed_forward", "ff_residual"),
}


def block_groups(block: Block) -> tuple[str, list[str]]:
    """The activation blocks a box and each of its rows show (``capture.Activations`` names, up to
    the last dot): the embedding box ``"src"`` or ``"tgt"``, the output box ``"generator"``, a
    layer's rows ``"encoder.0.self_attn"``, ``"encoder.0.attn_residual"`` and so on, bottom to top."""
    check_instance("block", block, Block, "a Block of architecture_blocks")
    if block.name in ("src_embed", "tgt_embed"):
        return block.name[:3], [block.name[:3]] * len(block.rows)  # the row: its positional encoding
    if block.name == "generator":
        return "generator", []
    layer = block.name.replace(".layers.", ".")
    labels = [label for label, _ in block.rows]
    groups = []
    for i, label in enumerate(labels):
        if label in SUBLAYER_MODULES:
            groups.append(f"{layer}.{SUBLAYER_MODULES[label][0]}")
            continue
        # pre-norm's "norm" belongs to the sub-layer above it; an "add" or "add & norm" to the one below
        near = labels[i + 1:] if label == "norm" else labels[i - 1::-1]
        owner = next(other for other in near if other in SUBLAYER_MODULES)
        groups.append(f"{layer}.{SUBLAYER_MODULES[owner][1]}")
    return layer, groups


def _box(explorer: bool, link: str, group: str, label: str, inner: str) -> str:
    """A box or row of the picture: a link to its section, or (the explorer) a button for its block."""
    if not explorer or not group:
        return f'<a xlink:href="{escape(link)}">{inner}</a>'
    return (f'<g class="tc-block" data-block="{escape(group)}" role="button" tabindex="0" '
            f'aria-label="{escape(label)}: show the chosen token\'s tensor here">{inner}</g>')


def architecture_svg(blocks: list[Block], title: str = "The Transformer, from the library's modules",
                     explorer: bool = False, live_link: str = "") -> str:
    """An SVG of ``blocks`` (from ``architecture_blocks``): two columns, bottom to top, shapes on
    the arrows, every box and sub-layer a link; the encoder's output feeds each cross-attention.
    ``explorer=True`` draws the whole-model explorer's figure (``browser.model_explorer``): each
    box and row a button carrying its blocks' name (``data-block``, :func:`block_groups`).
    ``live_link`` (the map on the book's first page): each box also links there, to the live figure."""
    check_instance("title", title, str, "a str")
    check_instance("explorer", explorer, bool, "a bool")
    check_instance("live_link", live_link, str, "a str (a page address, or empty)")
    _check_blocks(blocks)
    suffix = "-explorer" if explorer else ""
    cue = ("click a box (or Tab to it, then Enter) to see the chosen token's tensor there" if explorer
           else "click a box to read the section that builds it")
    width, column_w, row_h, gap, head = 760, 300, 18, 46, 60
    x_of = {"encoder": 40, "decoder": 420}
    heights = {id(b): 30 + row_h * len(b.rows) for b in blocks}
    column_h = {side: sum(heights[id(b)] + gap for b in blocks if b.side == side) for side in x_of}
    height = head + max(column_h.values()) + 70
    # Links as xlink:href: JupyterLab rewrites every relative <a href> of an output by assigning to
    # its .href, which an SVG link does not allow ("Cannot set property href of SVGAElement").
    # Full width in a column as wide as the picture, down to MIN_WIDTH (at 12 px * 620/760 the text
    # is still readable); narrower than that (a phone), it scrolls sideways in its own box, which says so.
    # The title is the page's text above the picture, where it wraps on a phone (inside the SVG, centred
    # on 760 px, half of it was off a phone's screen); the SVG's <title> names the picture.
    out = [f'<div class="tc-figure"><p class="tc-figure-title">{escape(title)}</p>'
           f'<p class="tc-scroll-cue">{escape(SCROLL_CUE)}</p>',
           f'<div class="tc-figure-scroll" role="region" tabindex="0" aria-label="{escape(title)} (scrolls sideways)">',
           '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" '
           f'width="100%" viewBox="0 0 {width} {height}" '
           f'style="display:block;min-width:{MIN_WIDTH}px;max-width:{width}px" role="group" '
           f'aria-labelledby="tc-architecture-title{suffix}" font-family="sans-serif" font-size="12">',
           f'<title id="tc-architecture-title{suffix}">{escape(title)}</title>'
           f'<desc>{escape(text_alternative(blocks))}</desc>',
           f'<defs><marker id="arrow{suffix}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="6" markerHeight="6" '
           'orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="#444"/></marker></defs>',
           f'<text x="{width / 2}" y="{height - 8}" text-anchor="middle" fill="#a33">red: the shape (batch, positions, '
           f'features) measured on each arrow{_cue(cue, explorer)}</text>']
    top_of_encoder = None
    cross_rows: list[float] = []
    for side, x in x_of.items():
        y = height - 50  # the input arrow starts here and the column grows upwards
        label = "source ids" if side == "encoder" else "target ids (shifted right)"
        out.append(f'<text x="{x + column_w / 2}" y="{y + 16}" text-anchor="middle">{label}</text>')
        for block in [b for b in blocks if b.side == side]:
            h = heights[id(block)]
            top = y - gap - h
            mid = x + column_w / 2
            out.append(f'<line x1="{mid}" y1="{y}" x2="{mid}" y2="{top + h}" stroke="#444" '
                       f'marker-end="url(#arrow{suffix})"/>')
            out.append(f'<text x="{mid + 6}" y="{y - gap / 2 + 4}" fill="#a33"{_shape_of(side, explorer)}>'
                       f'{_fmt(block.shape_in)}</text>')
            fill = "#eef4fb" if side == "encoder" else "#fbf1e8"
            box_group, row_groups = block_groups(block)
            title = _explorer_title(block, box_group) if explorer else block.title
            out.append(_box(explorer and "." not in box_group, block.link, box_group, title,
                            f'<rect x="{x}" y="{top}" width="{column_w}" height="{h}" rx="6" fill="{fill}" '
                            f'stroke="#345"/><text x="{mid}" y="{top + 19}" text-anchor="middle" '
                            f'font-weight="bold">{escape(title)}</text>'))
            if live_link:
                out.append(f'<a xlink:href="{escape(live_link)}" aria-label="{escape(block.title)}: live, with its '
                           f'numbers"><text x="{x + column_w - 6}" y="{top + 19}" text-anchor="end" fill="#1b4f72" '
                           'text-decoration="underline">live</text></a>')
            rows = list(zip(block.rows, row_groups or [""] * len(block.rows), strict=True))
            for i, ((row, link), group) in enumerate(reversed(rows)):  # the first sub-layer sits at the bottom
                ry = top + 26 + i * row_h
                out.append(_box(explorer, link, group, f"{block.title}, {row}",
                                f'<rect x="{x + 20}" y="{ry}" width="{column_w - 40}" height="{row_h - 3}" '
                                f'fill="white" stroke="#99a"/><text x="{mid}" y="{ry + 12}" '
                                f'text-anchor="middle">{escape(row)}</text>'))
                if row == "cross-attention":
                    cross_rows.append(ry + row_h / 2)
            y = top
            last = block
        out.append(f'<text x="{x + column_w / 2 + 6}" y="{y - 14}" fill="#a33"{_shape_of(side, explorer)}>'
                   f'{_fmt(last.shape_out)}</text>')
        if side == "encoder":
            top_of_encoder = y
            out.append(f'<line x1="{x + column_w / 2}" y1="{y}" x2="{x + column_w / 2}" y2="{y - 30}" stroke="#444"/>')
            out.append(f'<text x="{x + column_w / 2 - 6}" y="{y - 34}" text-anchor="end">memory</text>')
        else:
            out.append(f'<a xlink:href="{SECTION_LINKS["softmax"]}"><text x="{x + column_w / 2}" y="{y - 30}" '
                       f'text-anchor="middle" font-weight="bold">softmax → next-token probabilities</text></a>')
    ex = x_of["encoder"] + column_w / 2
    for ry in cross_rows:  # the memory goes to every decoder layer's cross-attention
        out.append(f'<path d="M{ex},{top_of_encoder - 30} L{ex + 170},{top_of_encoder - 30} L{ex + 170},{ry} '
                   f'L{x_of["decoder"] + 20},{ry}" fill="none" stroke="#2a7" marker-end="url(#arrow{suffix})"/>')
    out.append("</svg></div></div>")
    return "\n".join(out)


def text_alternative(blocks: list[Block]) -> str:
    """The picture in words, for a screen reader: each column bottom to top, with its shapes."""
    _check_blocks(blocks)
    sides = []
    for side in ("encoder", "decoder"):
        steps = [f"{b.title} {_fmt(b.shape_in)} to {_fmt(b.shape_out)}"
                 + (f" ({', '.join(row for row, _ in b.rows)})" if b.rows else "") for b in blocks if b.side == side]
        sides.append(f"The {side}, bottom to top: " + "; then ".join(steps) + ".")
    return " ".join(sides) + " The encoder's output (the memory) feeds every decoder layer's cross-attention."
