"""Table 3's stored runs, summarised and shown: the rows of ``table3.json`` and chapter 6's table.

``summarise`` turns the runs of ``benchmarks/table3.py`` into the file's rows (per variant and
budget: the spread of each measure over the seeds and of its paired difference to the base);
the registry's check (``transformer_lib.stored``) recomputes them from the runs. ``table3_html``
is the chapter's table: per variant and budget, the median exact match over the seeds and the
verdict of the book's one rule (``transformer_lib.verdict``) on exact match and perplexity.
"""

from __future__ import annotations

import html
import statistics
from collections.abc import Iterable

from ..verdict import MEASURES, MIN_SEEDS, Verdict
from .ablations import TABLE3_VARIANTS, _check_table3, table3_verdict

TABLE3_MEASURES = ("exact_match", "bleu", "perplexity")
# No fixed widths and short lines: the three columns fit a phone's 390 px, the text wrapping in its cell.
TABLE3_STYLE = ("<style>.tc-table3{border-collapse:collapse;font-size:0.85em;line-height:1.3;width:100%;"
                "table-layout:fixed}.tc-table3 td,.tc-table3 th{padding:0.2em 0.3em;border-top:1px solid #ccc;"
                "vertical-align:top;text-align:left;overflow-wrap:anywhere}.tc-table3 th:first-child{width:30%}"
                ".tc-table3 caption{text-align:left}.tc-table3 tbody th{font-weight:normal}"
                ".tc-table3 tr.tc-group th{font-weight:bold;padding-top:0.6em}</style>")


def spread(values: Iterable[float]) -> dict[str, float]:
    """The smallest, median and largest of ``values``, and their mean."""
    values = list(values)
    return {"min": min(values), "median": statistics.median(values), "max": max(values),
            "mean": statistics.fmean(values)}


def paired_effects(by_seed: dict[int, dict], base: dict[int, dict], measures: Iterable[str]) -> dict[str, dict]:
    """For each measure: the variant's values and its paired differences to ``base``, over the seeds
    both have (a seed the base lacks is left out, never compared with another seed)."""
    seeds = sorted(s for s in by_seed if s in base)
    if not seeds:
        return {}
    return {measure: {"values": spread(by_seed[s][measure] for s in seeds),
                      "effect": spread(by_seed[s][measure] - base[s][measure] for s in seeds),
                      "seeds": seeds}
            for measure in measures}


def summarise(runs: list[dict], budgets: Iterable[int], measures: Iterable[str] = TABLE3_MEASURES) -> dict[str, dict]:
    """Per variant and budget: the spread of each measure over the seeds, and of its paired difference
    to the base row's runs of the same seeds. A run measured at some budgets only counts at those."""
    rows: dict[str, dict] = {}
    measures = tuple(measures)
    for step in map(str, budgets):
        base = {r["seed"]: r["budgets"][step] for r in runs if r["variant"] == "base" and step in r["budgets"]}
        for name in TABLE3_VARIANTS:
            by_seed = {r["seed"]: r["budgets"][step] for r in runs if r["variant"] == name and step in r["budgets"]}
            effects = paired_effects(by_seed, base, measures)
            if effects:
                variant = TABLE3_VARIANTS[name]
                row = rows.setdefault(name, {"row": variant.row, "label": variant.label, "budgets": {}})
                row["parameters"] = next(r["parameters"] for r in runs if r["variant"] == name)
                row["budgets"][step] = effects
    return rows


def _short(v: Verdict) -> str:
    """The verdict in a table cell: the mean change, its interval and the rule's word; with fewer seeds
    than the rule needs, no word (the cell gives its number of seeds, the caption the rule)."""
    m = MEASURES[v.measure]
    if v.measure == "perplexity":  # as a percentage of the base's: the minimum is 2 % of it
        scale, unit, digits = 100 / (v.minimum / m.minimum), " %", 1
    else:
        scale, unit, digits = m.scale, "", m.digits
    interval = "" if v.low is None else f" [{scale * v.low:+.{digits}f}, {scale * v.high:+.{digits}f}]"
    word = f"<strong>{v.word}</strong>" if v.directed else f"<em>{v.word}</em>"
    return f"{scale * v.mean:+.{digits}f}{unit}{interval}" + (f": {word}" if v.seeds >= MIN_SEEDS else "")


# The paper's rows of Table 3, as group headings of the chapter's table.
TABLE3_GROUPS = {"base": "the base", "A": "A: heads, at a fixed cost", "B": "B: a smaller key size d_k",
                 "C": "C: depth and width", "D": "D: dropout and label smoothing", "E": "E: positions",
                 "-": "not in the paper"}


def _column_head(data: dict, budget: str) -> str:
    """A budget's heading: its steps, and its rows' numbers of seeds."""
    seeds = [len(row["budgets"][budget]["exact_match"]["seeds"]) for row in data["rows"].values()
             if budget in row["budgets"]]
    span = f"{min(seeds)}" if min(seeds) == max(seeds) else f"{min(seeds)} to {max(seeds)}"
    return f"<th scope='col'>{int(budget):,} steps<br><small>{span} seeds a row</small></th>"


def table3_html(data: dict) -> str:
    """Chapter 6's Table 3: a row per variant, grouped by the paper's rows (A to E, then the book's own);
    for each budget the median exact match over the seeds and its number of seeds, and the paired change
    in exact match (points) and in perplexity (% of the base's) with the rule's verdict where there are
    the seeds for one (the caption says so, once). Narrow enough for a phone: short lines per cell, no
    fixed widths."""
    budgets = [str(b) for b in _check_table3(data)["budgets"]]  # a bad table named as ``data``
    lines = [TABLE3_STYLE, "<table class='tc-table3'>",
             "<caption>Table 3 at the book's scale: median exact match over the seeds; change against the base "
             "(mean of the paired differences [95 % t interval]) in exact match (EM, points) and perplexity "
             f"(PPL, % of the base's); the rule's verdict (at least {MIN_SEEDS} seeds, interval excluding 0, "
             f"at least {100 * MEASURES['exact_match'].minimum:g} points or "
             f"{100 * MEASURES['perplexity'].minimum:g} %); a cell with fewer seeds gets no verdict</caption>",
             f"<thead><tr><th scope='col'>variant</th>{''.join(_column_head(data, b) for b in budgets)}</tr></thead>"
             "<tbody>"]
    group = None
    for name, row in data["rows"].items():
        if row["row"] != group:
            group = row["row"]
            lines.append(f"<tr class='tc-group'><th scope='rowgroup' colspan='{1 + len(budgets)}'>"
                         f"{html.escape(TABLE3_GROUPS.get(group, group))}</th></tr>")
        label = html.escape(TABLE3_VARIANTS[name].label.split(" (")[0].removeprefix("base: "))
        cells = []
        for b in budgets:
            stored = row["budgets"].get(b)
            if stored is None:
                cells.append("<td>not run</td>")
                continue
            seeds = len(stored["exact_match"]["seeds"])
            level = f"{100 * stored['exact_match']['values']['median']:.1f} % ({seeds} seeds)"
            if name == "base":
                cells.append(f"<td>{level}</td>")
                continue
            em, ppl = (table3_verdict(data, name, int(b), m) for m in ("exact_match", "perplexity"))
            cells.append(f"<td>{level}<br>EM {_short(em)}<br>PPL {_short(ppl)}</td>")
        lines.append(f"<tr><th scope='row'>{label}</th>{''.join(cells)}</tr>")
    lines.append("</tbody></table>")
    return "\n".join(lines)
