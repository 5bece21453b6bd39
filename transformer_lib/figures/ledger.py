"""The appendix "The paper and this book": what restoring each of the paper's choices does to the
book's model, as measured by ``benchmarks/paper_ledger.py`` (its JSON, read by the page)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import plotly.graph_objects as go

from ..validation import check_choice, check_instance, check_iterable, check_names, check_token_list
from .display import BOOK_TEMPLATE, PALETTE

MEASURE_TITLES = {
    "exact_match": ("exact match", "percentage points", 100.0),
    "bleu": ("BLEU", "BLEU points", 1.0),
    "valid_loss": ("validation loss", "cross-entropy per token", 1.0),
    "perplexity": ("perplexity", "exp(cross-entropy per token)", 1.0),
}
LOWER_IS_BETTER = ("valid_loss", "perplexity")


def runs_by_seed(results: Mapping, key: str, measure: str, base: str) -> dict[int, float]:
    """The value of ``measure`` for row ``key`` in each seed's run (decoding rows: the base's runs)."""
    out = {}
    for run in results["runs"]:
        if run["variant"] == key:
            out[run["seed"]] = run[measure]
        elif run["variant"] == base and key in run and measure in run[key]:
            out[run["seed"]] = run[key][measure]  # a decoding row: measured on the book's own run
    return out


def ledger_effects_figure(results: Mapping, measure: str = "exact_match",
                          labels: Mapping[str, str] | None = None, apart: Iterable[str] = (),
                          title: str = "Restoring the paper's choices", against: str = "the book's recipe",
                          axis: str = "switch", base: str = "book") -> go.Figure:
    """One row per switch of ``results`` (``book/data/paper_ledger.json``): the change in ``measure``
    ("exact_match", "bleu" or "valid_loss") against the book's recipe from the same seed, its mean
    (a filled diamond with its value written beside it), each seed's own change (hollow circles)
    and the range between them (a bar). Rows that do not change the measure (decoding rows, for the
    loss) are left out. ``labels`` maps a row's key to the name shown. The rows named in ``apart``
    (effects so large they would squash the others into one point) are not drawn but written, with
    their mean change, under the title. ``title``, ``against`` (what the changes are measured
    against) and ``axis`` (what a row is) name the comparison: chapter 6 draws Table 3 with them.
    ``base``: the key of the row the changes are measured from (the ledger's ``"book"``)."""
    if not isinstance(results, Mapping) or not isinstance(results.get("rows"), Mapping) or "runs" not in results:
        raise (ValueError if isinstance(results, Mapping) else TypeError)(
            "results: expected the benchmark's JSON (a dict with 'rows' and 'runs'), "
                         f"got {type(results).__name__}")
    check_choice("measure", measure, list(MEASURE_TITLES))
    labels = check_names("labels", {} if labels is None else labels, "row key -> name shown")
    apart = check_token_list("apart", list(check_iterable("apart", apart, "a list of row keys")), item="row key")
    name, unit, scale = MEASURE_TITLES[measure]
    base_key = check_instance("base", base, str, "the key of the base row (str)")
    if base_key not in results["rows"]:
        raise ValueError(f"base: expected one of the rows {sorted(results['rows'])}, got {base_key!r}")
    base = runs_by_seed(results, base_key, measure, base_key)
    apart = [k for k in apart if k in results["rows"]]
    keys = [k for k in results["rows"] if k != base_key and k not in apart]
    rows, notes = [], []
    for key in keys:
        by_seed = runs_by_seed(results, key, measure, base_key)
        if not by_seed:  # a row that cannot change this measure (decoding does not change the loss)
            continue
        diffs = [(by_seed[s] - base[s]) * scale for s in sorted(by_seed)]
        rows.append((labels.get(key, key), diffs))
    for key in apart:
        by_seed = runs_by_seed(results, key, measure, base_key)
        if by_seed:
            mean = sum((by_seed[s] - base[s]) * scale for s in by_seed) / len(by_seed)
            notes.append(f"{labels.get(key, key)}: {mean:+.1f}")
    rows.sort(key=lambda r: sum(r[1]) / len(r[1]))
    names = [n for n, _ in rows]
    means = [sum(d) / len(d) for _, d in rows]
    fig = go.Figure()
    fig.add_trace(go.Scatter(  # the range over seeds, as an error bar around the mean
        x=[round(m, 4) for m in means], y=names, mode="markers+text", name="mean over seeds",
        marker=dict(symbol="diamond", size=12, color=PALETTE[0]),
        error_x=dict(type="data", symmetric=False, color=PALETTE[0], thickness=2,
                     array=[round(max(d) - m, 4) for (_, d), m in zip(rows, means, strict=True)],
                     arrayminus=[round(m - min(d), 4) for (_, d), m in zip(rows, means, strict=True)]),
        text=[f"{m:+.1f}" if scale != 1.0 or measure == "bleu" else f"{m:+.3f}" for m in means],
        textposition="top center",
        hovertemplate="%{y}: %{x:+.3f} (mean)<extra></extra>",
    ))
    fig.add_trace(go.Scatter(
        x=[round(v, 4) for _, d in rows for v in d], y=[n for n, d in rows for _ in d], mode="markers",
        name="one seed", marker=dict(symbol="circle-open", size=9, color=PALETTE[1], line=dict(width=2)),
        hovertemplate="%{y}: %{x:+.3f} (one seed)<extra></extra>",
    ))
    better = "left" if measure in LOWER_IS_BETTER else "right"
    return _paired_change_layout(
        fig, f"{title}:<br>change in {name}<br><sup>against {against}, same seed; {len(base)} seeds; "
             f"better to the {better}</sup>", notes, height=150 + 48 * len(rows), top=120, bottom=140,
        xaxis=dict(title=dict(text=f"change in {name}<br>({unit})"), zeroline=False),
        # room above the top row for its value's label
        yaxis=dict(title=dict(text=axis, standoff=10), automargin=True, range=[-0.5, len(rows) - 0.2]))


def _paired_change_layout(fig: go.Figure, heading: str, notes: list[str], *, height: int, top: int, bottom: int,
                          xaxis: dict, yaxis: dict) -> go.Figure:
    """The layout both figures of paired changes share: the zero line, a title in short lines (it must fit
    a phone's 390 px) followed by the rows drawn off the scale, and the legend under the axis title
    whatever the height; each note adds a line to the height and the top margin."""
    fig.add_vline(x=0, line=dict(color="#555", dash="dash"))
    fig.update_layout(
        template=BOOK_TEMPLATE, height=height + 22 * len(notes),
        title=dict(yref="container", y=1.0, yanchor="top", pad=dict(t=24),
                   text=heading + "".join(f"<br><sup>off the scale, not drawn: {note}</sup>" for note in notes)),
        xaxis=xaxis, yaxis=yaxis,
        legend=dict(yref="container", y=0.0, yanchor="bottom"),
        margin=dict(t=top + 22 * len(notes), b=bottom),
    )
    return fig


def verdict_figure(data: Mapping, measure: str = "exact_match", labels: Mapping[str, str] | None = None,
                   apart: Iterable[str] = ()) -> go.Figure:
    """Chapter 6's Table 3 as the book's one rule sees it (``pretrained.ablations.table3_verdict``): per
    variant and step budget, the mean paired change in ``measure`` against the base with its 95 % t
    interval (a bar; none with fewer than two seeds), each seed's change (hollow circles), and the
    rule's minimum size (the grey band: a change inside it is within the noise however sure).
    ``data``: ``load_table3()``; rows in ``apart`` (off the scale) are written under the title."""
    from ..pretrained.ablations import paired_differences, table3_verdict
    from ..verdict import MEASURES

    if not isinstance(data, Mapping) or "runs" not in data or "rows" not in data:
        raise TypeError(f"data: expected the JSON of benchmarks/table3.py (load_table3()), got {type(data).__name__}")
    check_choice("measure", measure, [m for m in MEASURE_TITLES if m in MEASURES and m != "valid_loss"])
    labels = check_names("labels", {} if labels is None else labels, "row key -> name shown")
    apart = check_token_list("apart", list(check_iterable("apart", apart, "a list of row keys")), item="row key")
    name, unit, scale = MEASURE_TITLES[measure]
    keys = [k for k in data["rows"] if k != "base" and k not in apart][::-1]  # the table's order, top down
    fig, notes = go.Figure(), []
    for i, budget in enumerate(data["budgets"]):
        shown_keys = [k for k in keys if str(budget) in data["rows"][k]["budgets"]]
        verdicts = [table3_verdict(data, k, budget, measure) for k in shown_keys]
        offset = -0.05 - 0.25 * i  # the budgets one under the other, under the variant's name
        y = [keys.index(k) + offset for k in shown_keys]
        means = [scale * v.mean for v in verdicts]
        fig.add_trace(go.Scatter(
            x=[round(m, 4) for m in means], y=y, mode="markers", name=f"{budget:,} steps: mean, 95 % interval",
            marker=dict(symbol="diamond", size=11, color=PALETTE[i]),
            error_x=dict(type="data", symmetric=False, color=PALETTE[i], thickness=2,
                         array=[round(scale * v.high - m, 4) if v.high is not None else 0
                                for v, m in zip(verdicts, means, strict=True)],
                         arrayminus=[round(m - scale * v.low, 4) if v.low is not None else 0
                                     for v, m in zip(verdicts, means, strict=True)]),
            customdata=[f"{v.word}, {v.seeds} seeds" for v in verdicts],
            hovertemplate="%{x:+.2f}: %{customdata}<extra></extra>"))
        seeds = [(keys.index(k) + offset, scale * d) for k in shown_keys
                 for d in paired_differences(data, k, budget, measure)]
        fig.add_trace(go.Scatter(
            x=[round(x, 4) for _, x in seeds], y=[y for y, _ in seeds], mode="markers",
            name=f"{budget:,} steps: one seed",
            marker=dict(symbol="circle-open", size=7, color=PALETTE[i], line=dict(width=1.5)),
            hovertemplate="%{x:+.2f} (one seed)<extra></extra>"))
        for k in apart:
            if str(budget) in data["rows"].get(k, {}).get("budgets", {}):
                mean = scale * table3_verdict(data, k, budget, measure).mean
                notes.append(f"{labels.get(k, k)} at {budget:,}: {mean:+.1f}")
    minimum = MEASURES[measure].minimum
    if not MEASURES[measure].relative:
        fig.add_vrect(x0=-scale * minimum, x1=scale * minimum, fillcolor="#999", opacity=0.2, line_width=0)
    better = "left" if measure in LOWER_IS_BETTER else "right"
    # Each variant's name on a line of its own above its two budgets' marks, from the plot's left edge:
    # names as tick labels beside the axis left a phone about 60 px for the data.
    for i, k in enumerate(keys):
        fig.add_annotation(x=0, xref="paper", xanchor="left", y=i + 0.5, yanchor="top", text=labels.get(k, k),
                           showarrow=False, align="left", font=dict(size=12))
    return _paired_change_layout(
        fig, f"Table 3 at the book's scale:<br>change in {name}<br><sup>against the base, same seed; better to "
             f"the {better};<br>grey: under the rule's minimum</sup>", notes,
        height=170 + 62 * len(keys), top=140, bottom=150,
        xaxis=dict(title=dict(text=f"change in {name}<br>({unit})"), zeroline=False),
        yaxis=dict(title=dict(text="variant of the base (named above its marks)"), showticklabels=False,
                   showgrid=False, range=[-0.45, len(keys) - 0.5]))
