"""Chapter 8's figure of a language model's next word: what temperature, top-k and top-p do to it.

``next_word_figure`` draws, for the most probable next words at the chosen temperature, their
probability before the filter as bars, solid where top-k / top-p keep the word and hatched (and
named "cut" in the legend and on hover) where they cut it, and, as diamonds, the probability the
draw gives each word (the filtered distribution, ``sampling.next_token_probs``). The kernel's
explorer (``browser.lm_explorer``) shows it; the page's (``static/lm-explorer.js``) draws the same
figure from the same numbers (tests/test_live_lm.py compares the two).
"""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go
from torch import Tensor

from ..validation import check_number, check_positive_int, check_token_list
from .display import BOOK_TEMPLATE

SHOWN = 20  # bars: the most probable words at the temperature
CUT_PATTERN = "/"  # the hatching of a word the filter cuts


def _probabilities(name: str, values: object, size: int | None) -> list[float]:
    if isinstance(values, Tensor):
        values = values.tolist()
    if isinstance(values, str) or not isinstance(values, Sequence):
        raise TypeError(f"{name}: expected a list of probabilities, got {type(values).__name__}")
    out = [check_number(f"{name}[{i}]", v, minimum=0.0) for i, v in enumerate(values)]
    if size is not None and len(out) != size:
        raise ValueError(f"{name}: expected one probability per token of vocab ({size}), got {len(out)}")
    if not out or abs(sum(out) - 1.0) > 1e-6:
        raise ValueError(f"{name}: expected probabilities that add up to 1, got a sum of {sum(out):.6g}")
    return out


def _sig(value: float) -> float:
    return float(f"{value:.4g}")  # four significant digits, as the page's copy rounds them


def _escaped(text: str) -> str:
    """Text as plotly's labels read it: a token such as <eos> is not a tag (& < > only, as the page's copy)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _setting(value: float | None) -> str:
    return "off" if value is None else f"{value:g}"


def next_word_figure(unfiltered: Sequence[float] | Tensor, probs: Sequence[float] | Tensor, vocab: Sequence[str], *,
                     prompt: str = "", temperature: float = 1.0, top_k: int | None = None,
                     top_p: float | None = None, shown: int = SHOWN) -> go.Figure:
    """Bars for the ``shown`` words most probable at ``temperature`` (``unfiltered``: the next-token
    probabilities before top-k and top-p, over ``vocab`` in id order), solid where the filter keeps the
    word and hatched where it cuts it; diamonds for ``probs``, the distribution the draw uses.
    ``prompt``, ``temperature``, ``top_k`` and ``top_p`` only title it."""
    vocab = check_token_list("vocab", vocab)
    unfiltered = _probabilities("unfiltered", unfiltered, len(vocab))
    probs = _probabilities("probs", probs, len(vocab))
    check_positive_int("shown", shown)
    if not isinstance(prompt, str):
        raise TypeError(f"prompt: expected a str, got {type(prompt).__name__}")
    check_number("temperature", temperature, minimum=0.0)
    if top_k is not None:
        check_positive_int("top_k", top_k)
    if top_p is not None:
        check_number("top_p", top_p, positive=True)
    order = sorted(range(len(vocab)), key=lambda i: -unfiltered[i])[:shown]  # stable: ties by id
    kept = [probs[i] > 0 for i in order]
    words = [_escaped(vocab[i]) for i in order]
    colour = BOOK_TEMPLATE.layout.colorway[0]

    def bars(keep: bool) -> go.Bar:
        return go.Bar(
            x=words, y=[_sig(unfiltered[i]) if k == keep else None for i, k in zip(order, kept, strict=True)],
            name="kept by the filter" if keep else "cut by the filter (hatched)",
            marker=dict(color=colour, opacity=1.0 if keep else 0.45,
                        pattern=dict(shape="" if keep else CUT_PATTERN, solidity=0.4)),
            hovertemplate="%{x}: %{y:.3f} at this temperature, " + ("kept" if keep else "cut") + "<extra></extra>",
        )

    n_kept = sum(p > 0 for p in probs)
    title = (f"Next word after \u201c{_escaped(' '.join(['<sos>', *prompt.split()]))}\u201d<br>"
             f"T = {temperature:g}, top-k {_setting(top_k)}, top-p {_setting(top_p)}: "
             f"{n_kept} of {len(vocab)} tokens kept")
    fig = go.Figure([
        bars(True), bars(False),
        go.Scatter(x=words, y=[_sig(probs[i]) for i in order], mode="markers", name="probability in the draw",
                   marker=dict(symbol="diamond", size=10, color=BOOK_TEMPLATE.layout.colorway[1]),
                   hovertemplate="%{x}: drawn with probability %{y:.3f}<extra></extra>"),
    ])
    fig.update_layout(
        template=BOOK_TEMPLATE, title=dict(text=title), barmode="overlay", height=430,
        xaxis=dict(title=dict(text=f"next word (the {len(order)} most probable at this temperature)"),
                   tickangle=-45),
        yaxis=dict(title=dict(text="probability"), rangemode="tozero"),
    )
    return fig
