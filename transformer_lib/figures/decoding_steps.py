"""The decoding stepper's view of one step of a ``decoding_steps.SearchTrace`` (chapter 7).

* ``step_figures``: the top candidates of every live beam as bars (the token being chosen, the
  extensions kept and the ``<eos>`` that ends a hypothesis named beside their bars, the chosen one
  outlined too: nothing said by colour alone), and the cross-attention row of the query behind the
  choice, every layer and head over the source tokens;
* ``step_summary_html``: what the step read and chose, the beams kept and the hypotheses ended.

The page's stepper (``browser/static/stepper.js``) draws the same from ``window.bookModel.trace``.
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping

import plotly.graph_objects as go

from ..decoding_steps import SearchTrace
from ..html_embed import PAGE_DECIMALS
from ..validation import check_instance, check_int, check_number
from .display import BOOK_TEMPLATE

CHOSEN, KEPT, ENDS = "chosen", "kept", "ends"


def _step(trace: SearchTrace, step: int) -> dict:
    check_instance("trace", trace, SearchTrace, "a decoding_steps.SearchTrace")
    return trace.steps[check_int("step", step, minimum=1, maximum=len(trace.steps)) - 1]


def candidate_marks(trace: SearchTrace, step: int) -> list[list[str]]:
    """For each live beam of ``step`` (1-based) and each of its candidates: "chosen" (the best
    extension of all), "kept" (a beam of the next step), "ends" (an ``<eos>`` that finished a
    hypothesis here) or ""."""
    record = _step(trace, step)
    marks = []
    for j, beam in enumerate(record["beams"]):
        read = beam["prefix"][1:]
        # kept: a beam of the next step, or (cut at the limit) a hypothesis finished as it stands
        kept = {k["tokens"][-1] for k in record["kept"] if k["beam"] == j}
        kept |= {f["tokens"][-1] for f in record["finished"] if f["tokens"][:-1] == read and f["tokens"]}
        ends = any(f["tokens"] == read for f in record["finished"])
        row = []
        for token, _ in beam["candidates"]:
            if record["chosen"]["beam"] == j and record["chosen"]["token"] == token:
                row.append(CHOSEN)
            elif token in kept:
                row.append(KEPT)
            elif token == "<eos>" and ends:
                row.append(ENDS)
            else:
                row.append("")
        marks.append(row)
    return marks


def total_log_prob(beam: dict, probability: float) -> float:
    """What beam search ranks a candidate by: its beam's log-probability plus the candidate's own."""
    check_instance("beam", beam, Mapping, "a beam of a SearchTrace step (a dict with 'log_prob')")
    if "log_prob" not in beam:
        raise ValueError(f"beam: expected a beam of a SearchTrace step, with 'log_prob', got keys {list(beam)[:5]}")
    check_number("beam['log_prob']", beam["log_prob"], allow_inf=True)
    if not 0.0 <= check_number("probability", probability) <= 1.0:
        raise ValueError(f"probability: expected a probability in [0, 1], got {probability}")
    return beam["log_prob"] + (math.log(probability) if probability > 0 else -math.inf)


def _bar_text(beam: dict, probability: float, mark: str, scored: bool) -> str:
    # the label from the unrounded probability (0.125 rounded to 4 decimals would be a tie at 2); with
    # several beams, the total log p that decides which extensions are kept
    total = f" (log p {total_log_prob(beam, probability):.2f})" if scored and probability > 0 else ""
    return f"{probability:.2f}{total}" + (f" \u25c0 {mark}" if mark else "")


def beam_rule_html(trace: SearchTrace) -> str:
    """The kept/dropped rule of beam search, in one sentence (empty for greedy decoding)."""
    check_instance("trace", trace, SearchTrace, "a decoding_steps.SearchTrace")
    if trace.beam_size == 1:
        return ""
    return (f"<p class='tc-rule'>Beam search keeps a candidate by its total log p (in brackets: its beam's log p "
            f"plus its own), not by its bar: the {trace.beam_size} highest totals go on; one that ends with "
            f"&lt;eos&gt; leaves the search, and the ended ones are ranked by score = log p / ((5 + length) / 6)"
            f"<sup>\u03b1</sup>, \u03b1 = {trace.alpha:g}.</p>")


def step_figures(trace: SearchTrace, step: int) -> tuple[go.Figure, go.Figure]:
    """The candidates figure and the cross-attention figure of ``step`` (1-based)."""
    record = _step(trace, step)
    marks = candidate_marks(trace, step)
    many = len(record["beams"]) > 1
    bars = go.Figure()
    n_bars = 0
    for j, (beam, beam_marks) in enumerate(zip(record["beams"], marks, strict=True)):
        labels = [f"beam {j + 1}: {token}" if many else token for token, _ in beam["candidates"]]
        probs = [round(p, PAGE_DECIMALS) for _, p in beam["candidates"]]
        bars.add_trace(go.Bar(
            x=probs, y=labels, orientation="h", name=f"beam {j + 1}",
            text=[_bar_text(beam, p, m, trace.beam_size > 1)
                  for (_, p), m in zip(beam["candidates"], beam_marks, strict=True)],
            textposition="outside", cliponaxis=False,
            marker=dict(line=dict(color="black", width=[2.5 if m == CHOSEN else 0 for m in beam_marks])),
            hovertemplate="%{y}: p = %{x:.4f}<extra></extra>"))
        n_bars += len(labels)
    bars.update_layout(
        template=BOOK_TEMPLATE, title=dict(text=f"Step {record['step']}: the next token's top candidates"),
        xaxis=dict(title=dict(text="probability"), range=[0, 2.1 if trace.beam_size > 1 else 1.45],
                   tickvals=[0, 0.25, 0.5, 0.75, 1]),  # room for the labels beside the bars
        yaxis=dict(title=dict(text="candidate"), autorange="reversed", type="category"),
        height=140 + 24 * n_bars, showlegend=False)  # each label names its beam
    beam = record["beams"][record["chosen"]["beam"]]
    rows = [f"layer {layer + 1}, head {head + 1}"
            for layer, heads in enumerate(beam["cross"]) for head in range(len(heads))]
    z = [[round(w, PAGE_DECIMALS) for w in row] for heads in beam["cross"] for row in heads]
    cross = go.Figure(go.Heatmap(
        z=z, x=list(range(len(trace.src_tokens))), y=rows, coloraxis="coloraxis",
        hovertemplate="%{y}, source %{x}: weight %{z:.3f}<extra></extra>"))
    cross.update_layout(
        template=BOOK_TEMPLATE,
        title=dict(text=f"Cross-attention reading \u201c{html.escape(beam['prefix'][-1])}\u201d"),
        coloraxis=dict(cmin=0, cmax=1, colorscale="Blues", colorbar=dict(title=dict(text="weight"))),
        xaxis=dict(title=dict(text="source token (key)"), tickmode="array", tickangle=-45,
                   tickvals=list(range(len(trace.src_tokens))), ticktext=[html.escape(t) for t in trace.src_tokens]),
        yaxis=dict(title=dict(text="layer, head"), autorange="reversed"), height=140 + 26 * len(rows))
    return bars, cross


def _tokens(tokens: list[str]) -> str:
    return html.escape(" ".join(tokens)) or "(nothing)"


def step_summary_html(trace: SearchTrace, step: int) -> str:
    """What ``step`` read and chose, the beams it kept and the hypotheses it ended, as HTML."""
    record = _step(trace, step)
    chosen = record["chosen"]
    beam = record["beams"][chosen["beam"]]
    which = f"beam {chosen['beam'] + 1} " if len(record["beams"]) > 1 else ""
    parts = [f"<p><b>Step {record['step']} of {len(trace.steps)}</b>: {which}reading "
             f"\u201c{_tokens(beam['prefix'])}\u201d, the best next token is "
             f"\u201c{html.escape(chosen['token'])}\u201d (p = {chosen['probability']:.2f}).</p>"]
    parts.append(beam_rule_html(trace))
    if record["kept"]:
        # one numbering: each kept beam named by its bar of this step (its beam and token) beside its number
        # at the next step, where the beams are numbered again by their log p
        many = len(record["beams"]) > 1  # as the bars are labelled

        def bar(kept: dict) -> str:
            return (f"beam {kept['beam'] + 1}: " if many else "") + html.escape(kept["tokens"][-1])

        rows = "".join(f"<tr><td>{i + 1}</td><td>{bar(k)}</td>"
                       f"<td>{_tokens(k['tokens'])}</td><td>{k['log_prob']:.3f}</td></tr>"
                       for i, k in enumerate(record["kept"]))
        parts.append(f"<table class='tc-beams'><caption>Beams kept for the next step</caption><thead><tr>"
                     f"<th scope='col'>next step's beam</th><th scope='col'>its bar here</th>"
                     f"<th scope='col'>tokens</th><th scope='col'>log p</th></tr></thead><tbody>{rows}</tbody></table>")
    if record["finished"]:
        rows = "".join(f"<tr><td>{_tokens(f['tokens'])}</td><td>{f['log_prob']:.3f}</td><td>{f['score']:.3f}</td></tr>"
                       for f in record["finished"])
        parts.append(f"<table class='tc-beams'><caption>Hypotheses that ended at this step</caption><thead><tr>"
                     f"<th scope='col'>tokens</th><th scope='col'>log p</th><th scope='col'>score</th></tr></thead>"
                     f"<tbody>{rows}</tbody></table>")
    if record["step"] == len(trace.steps):
        how = "ended with &lt;eos&gt;" if trace.ended else f"cut at the length limit ({trace.max_len} tokens)"
        parts.append(f"<p><b>Result</b> ({how}): {_tokens(trace.tokens)}</p>")
    return "".join(parts)
