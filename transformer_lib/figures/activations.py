"""The whole-model explorer's view of one token at one block (chapter 6).

``token_path`` orders the blocks of ``capture.capture_activations`` that one token passes through,
bottom to top as the whole-model figure draws them (``figures.architecture``); ``activation_panel``
draws that token's tensor at one block: a heat strip of its values with its norm, or, for the
scores and weights of an attention, the chosen head's row over the keys with the masked keys named
(not told by colour alone); the shape of the token's tensor and of the whole block are in the title.
The page's explorer (``browser/static/model-explorer.js``) draws the same from
``window.bookModel.activations``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from ..validation import check_choice, check_instance, check_int, check_token_list, shorten
from .display import BOOK_TEMPLATE, PALETTE

BAR_COLOR = PALETTE[0]
# The line between two heads on a heat strip: black on a wider white line, seen on every colour of the scale.
HEAD_LINES = (("white", 4), ("black", 1.5))

SIDES = ("source", "target")
# Each module's blocks, in the order the explorer steps through them (and their ranks in a layer).
STAGES = {"embed": ("token", "input"), "attn": ("q", "k", "v", "scores", "masked", "weights", "heads", "output"),
          "residual": ("sum", "norm"), "feed_forward": ("hidden", "output"), "generator": ("logits", "probabilities")}
MODULES = ("self_attn", "attn_residual", "self_residual", "cross_attn", "cross_residual", "feed_forward",
           "ff_residual", "final_norm")
STREAMS = {"source": ("src", "encoder"), "target": ("tgt", "decoder", "generator")}
_SIDE_TOKENS = {"source": "src_tokens", "target": "tgt_tokens"}  # each side's tokens, as arguments name them
ROWS = ("scores", "masked", "weights")  # per head, a row over the keys
STAGE_TITLES = {
    "token": "token embedding E[id]", "input": "E[id] × √d_model + positional encoding",
    "q": "query Q (every head)", "k": "key K (every head)", "v": "value V (every head)",
    "scores": "scores Q·K / √d_k", "masked": "scores after the mask", "weights": "weights: softmax of the scores",
    "heads": "each head's output (weights · V)", "output": "output", "sum": "residual sum x + sub-layer(x)",
    "norm": "LayerNorm output", "hidden": "hidden units max(0, x W₁ + b₁)", "logits": "logits over the vocabulary",
    "probabilities": "softmax: next-token probabilities", "final_norm": "final LayerNorm",
}


def stage_of(name: str) -> str:
    """The stage of block ``name`` (its last part, or "final_norm"): a key of ``STAGE_TITLES``."""
    check_block_name("name", name)
    return "final_norm" if name.endswith("final_norm") else name.rsplit(".", 1)[1]


def _rank(name: str) -> tuple:
    parts = name.split(".")
    stream = ("src", "encoder", "tgt", "decoder", "generator").index(parts[0])
    if parts[0] in ("src", "tgt", "generator"):
        stages = STAGES["embed" if parts[0] != "generator" else "generator"]
        return stream, 0, 0, stages.index(parts[1])
    if parts[1] == "final_norm":
        return stream, 10 ** 6, 0, 0
    module = parts[2]
    kind = "attn" if module.endswith("_attn") else "residual" if module.endswith("_residual") else "feed_forward"
    return stream, int(parts[1]), MODULES.index(module), STAGES[kind].index(parts[3])


def check_block_name(argument: str, name: object) -> str:
    """``name`` is a block name of ``capture.Activations`` ("encoder.0.self_attn.q", "src.token")."""
    check_instance(argument, name, str, "a block name of capture.Activations (a str)")
    parts = name.split(".")
    try:
        _rank(name)
        known = len(parts) == (2 if parts[0] in ("src", "tgt", "generator") or parts[1] == "final_norm" else 4)
    except (ValueError, IndexError):
        known = False
    if not known:
        raise ValueError(f"{argument}: expected a block name of capture.Activations, such as "
                         f"'encoder.0.self_attn.q', got {shorten(name)!r}")
    return name


def token_path(names: Sequence[str], side: str, argument: str = "names") -> list[str]:
    """The block names (of ``Activations.blocks``) a token of ``side`` ("source" or "target")
    passes through, bottom to top; a target token reads the cross-attention's keys and values
    (rows of the source), so they are not on its path. ``argument`` names ``names`` in an error."""
    for i, name in enumerate(check_token_list(argument, names, item="block name")):
        check_block_name(f"{argument}[{i}]", name)
    check_choice("side", side, list(SIDES))
    streams = STREAMS[side]
    path = [n for n in names if n.split(".")[0] in streams
            and not (".cross_attn." in n and n.endswith((".k", ".v")))]
    return sorted(path, key=_rank)


def group_of(name: str) -> str:
    """The box or row of the whole-model figure that draws block ``name`` (``architecture.block_groups``):
    ``"src"``, ``"tgt"``, ``"generator"``, or a layer's module (``"encoder.0.self_attn"``)."""
    parts = check_block_name("name", name).split(".")
    if parts[0] in ("src", "tgt", "generator"):
        return parts[0]
    return name if parts[1] == "final_norm" else ".".join(parts[:3])


def keys_of(name: str, src_tokens: Sequence[str], tgt_tokens: Sequence[str]) -> Sequence[str]:
    """The tokens an attention block's rows run over: the source for the encoder and cross-attention."""
    check_block_name("name", name)
    src_tokens, tgt_tokens = check_token_list("src_tokens", src_tokens), check_token_list("tgt_tokens", tgt_tokens)
    return src_tokens if name.startswith("encoder") or ".cross_attn." in name else tgt_tokens


def panel_title(name: str, side: str, token: str, position: int, shape: tuple, whole: tuple, extra: str) -> str:
    """The panel's title: the block, its stage, the token (its side named: a box of the other column
    follows a token of the other side), the shapes of the token's tensor and of the block's."""
    stage = STAGE_TITLES[stage_of(name)]
    check_choice("side", side, list(SIDES))
    check_token_list("token", [token])  # one token: a str
    check_int("position", position, minimum=0)
    for label, sizes in (("shape", shape), ("whole", whole)):
        check_instance(label, sizes, tuple, "a shape (a tuple of ints)")
        for i, size in enumerate(sizes):
            check_int(f"{label}[{i}]", size, minimum=0)
    check_instance("extra", extra, str, "a str (appended to the title)")
    return f"<b>{name}</b><br>{stage}<br>{side} token “{token}” (position {position}) · shape {shape} of {whole}{extra}"


def activation_panel(blocks: Mapping[str, object], src_tokens: Sequence[str], tgt_tokens: Sequence[str],
                     name: str, side: str, position: int, head: int = 0) -> go.Figure:
    """Token ``position`` of ``side`` at block ``name`` (a key of ``Activations.blocks``): a heat
    strip of its values with their norm, or, for scores and weights, head ``head``'s row over the keys."""
    check_instance("blocks", blocks, Mapping, "capture.Activations.blocks (a dict)")
    check_choice("side", side, list(SIDES))
    check_choice("name", name, token_path(list(blocks), side, argument="blocks"))
    src_tokens = check_token_list("src_tokens", src_tokens)
    tgt_tokens = check_token_list("tgt_tokens", tgt_tokens)
    tokens = src_tokens if side == "source" else tgt_tokens
    whole = np.asarray(blocks[name], dtype=float)
    if len(tokens) != len(whole):
        raise ValueError(f"{_SIDE_TOKENS[side]}: expected {len(whole)} tokens, one per row of block {name}, "
                         f"got {len(tokens)}")
    position = check_int("position", position, minimum=0, maximum=len(tokens) - 1)
    value = whole[position]
    layout = dict(template=BOOK_TEMPLATE, height=315, margin=dict(l=60, r=20, t=115, b=60))
    if stage_of(name) in ROWS:
        head = check_int("head", head, minimum=0, maximum=value.shape[0] - 1)
        row = value[head]
        keys = keys_of(name, src_tokens, tgt_tokens)
        if len(keys) != len(row):
            which = "src_tokens" if keys is src_tokens else "tgt_tokens"
            raise ValueError(f"{which}: expected {len(row)} tokens, one per key of block {name}, got {len(keys)}")
        masked = ~np.isfinite(row)
        shown = np.where(masked, 0.0, row)
        labels = [f"{j} {k}" for j, k in enumerate(keys)]
        fig = go.Figure(go.Bar(x=labels, y=shown, marker_color=BAR_COLOR, name="score",
                               text=["masked" if m else f"{v:.3f}" for m, v in zip(masked, shown, strict=True)],
                               textposition="outside", cliponaxis=False,
                               hovertemplate="key %{x}<br>%{text}<extra></extra>"))
        extra = f" · head {head + 1}" + (f" · {int(masked.sum())} keys masked (-∞)" if masked.any() else "")
        fig.update_layout(**layout, title=dict(text=panel_title(name, side, tokens[position], position,
                                                                 tuple(value.shape), tuple(whole.shape), extra)))
        fig.update_xaxes(title_text="key token", type="category")
        fig.update_yaxes(title_text="weight" if name.endswith("weights") else "score")
        return fig
    flat = value.reshape(-1)
    norm = float(np.linalg.norm(flat))
    limit = float(np.abs(flat).max()) or 1.0
    fig = go.Figure(go.Heatmap(z=[flat.tolist()], x=list(range(len(flat))), y=[""], colorscale="RdBu", zmid=0,
                               zmin=-limit, zmax=limit, colorbar=dict(title=dict(text="value"), thickness=12),
                               hovertemplate="feature %{x}<br>value %{z:.4f}<extra></extra>"))
    fig.update_layout(**layout, title=dict(text=panel_title(name, side, tokens[position], position, tuple(value.shape),
                                                             tuple(whole.shape), f" · norm {norm:.3f}")))
    if value.ndim == 2:  # (h, d_k): a line between two heads, each head named under its features
        heads, d_k = value.shape
        for h in range(1, heads):
            for color, width in HEAD_LINES:
                fig.add_vline(x=h * d_k - 0.5, line_color=color, line_width=width)
        fig.update_xaxes(title_text=f"feature: heads side by side, {d_k} each", tickmode="array",
                         tickvals=[h * d_k + (d_k - 1) / 2 for h in range(heads)],
                         ticktext=[f"h{h + 1}" for h in range(heads)])
    else:
        fig.update_xaxes(title_text="feature")
    fig.update_yaxes(showticklabels=False)
    return fig
