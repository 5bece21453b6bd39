"""No sentence of the book claims an effect of a training choice without seeds behind it (tests/claim_scan.py).

A claim such as "no dropout: better" rests on the book's one rule (``transformer_lib.verdict``: five or more
paired seeds, an interval excluding zero, a minimum size; a bound number and an assert on the verdict), or
says it is one run. The scan is tested on planted notebooks:
a one-seed "better" fails, the same sentence saying "in this run", quoting the paper, or bound to a number
that an assert on a paired spread reads, passes.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tools.book_browser import ROOT

from . import claim_scan

NOTEBOOKS = sorted((ROOT / "book").glob("*.ipynb"))
PAGES = [*sorted((ROOT / "book").glob("*.md")), *(ROOT / page for page in claim_scan.PAGES)]

def _claims(path: Path) -> list[claim_scan.Claim]:
    return claim_scan.notebook_claims(path) if path.suffix == ".ipynb" else claim_scan.page_claims(path)


@pytest.mark.parametrize("path", NOTEBOOKS + PAGES, ids=lambda p: p.name)
def test_no_training_claim_without_seeds(path: Path) -> None:
    claims = _claims(path)
    assert not claims, f"{len(claims)} training claims with no seeds behind them:\n" + "\n".join(map(str, claims))


def _notebook(*cells: dict) -> dict:
    return {"cells": list(cells), "metadata": {}, "nbformat": 4, "nbformat_minor": 5}


def _code(source: str) -> dict:
    return {"cell_type": "code", "metadata": {}, "source": source, "outputs": [], "execution_count": 1}


def _markdown(source: str) -> dict:
    return {"cell_type": "markdown", "metadata": {}, "source": source, "id": "planted"}


ONE_SEED = _code("deep = train(layers=2, seed=0)\nshallow = train(layers=1, seed=0)\n"
                 "gap = shown(shallow.exact_match - deep.exact_match, '.1%')\nassert gap.value > 0.05")
PAIRED = _code("rows = json.loads(Path('data/table3.json').read_text())['rows']\n"
               "gap = shown(rows['N=1']['exact_match_effect'], '.1%')\n"
               "assert verdict(rows['N=1']['differences']).word == 'better'  # the one rule, on five seeds or more")
SPREAD_ONLY = _code("rows = json.loads(Path('data/table3.json').read_text())['rows']\n"
                    "gap = shown(rows['N=1']['exact_match_effect'], '.1%')\n"
                    "assert rows['N=1']['exact_match_effect_min'] > 0  # every seed agrees: no verdict")


def _found(markdown: str, code: dict = ONE_SEED) -> list[str]:
    return [c.sentence for c in claim_scan.notebook_claims(Path("x.ipynb"), _notebook(code, _markdown(markdown)))]


def test_a_planted_one_seed_better_fails() -> None:
    planted = "One layer instead of two is better: ahead by {eval}`gap` of exact match at this budget."
    assert _found(planted) == [planted]
    assert _found("No dropout helps the model.") == ["No dropout helps the model."]
    assert _found("Without the warm-up the model ends worse after the same number of steps.")
    # the one-seed cell's assert is no paired spread: binding the number is not enough
    assert _found("The shallower model is better by {eval}`gap`.")
    message = str(claim_scan.notebook_claims(Path("ch.ipynb"), _notebook(ONE_SEED, _markdown(planted)))[0])
    assert message.startswith("ch.ipynb cell 1 (id planted): a training claim") and "one run" in message


def test_one_run_said_quoted_or_backed_by_a_paired_spread_passes() -> None:
    assert _found("One layer instead of two: better in this run, at this budget.") == []
    assert _found("From one seed, no dropout is better here.") == []
    assert _found("More layers are the usual remedy; not measured on this page.") == []
    assert _found('> "This hurts perplexity, but improves accuracy" (section 5.4): label smoothing.') == []
    assert _found("Label smoothing helps beam search ([Müller et al., 2019](bibliography.md#muller2019when)).") == []
    assert _found("The paper reports that dropout helps, at 100,000 steps.") == []
    assert _found("One layer instead of two is better by {eval}`gap` of exact match.", PAIRED) == []
    assert _found("One layer instead of two is better by {eval}`other` of exact match.", PAIRED)  # not the asserted one


def test_a_spread_over_seeds_without_the_rule_backs_nothing() -> None:
    # three seeds agreeing on a sign is what a change with no effect does one time in four
    assert _found("One layer instead of two is better by {eval}`gap` of exact match.", SPREAD_ONLY)


def test_prose_that_names_no_training_choice_is_no_claim() -> None:
    assert _found("Beam search is exact no more often than greedy: never a worse sentence.") == []
    assert _found("Worse, rows of the table are reached only by long sentences in the steps.") == []
    assert _found("It moves every position k steps ahead.") == []
    assert _found("Call `train(layers=1)` for a better fit.") == []  # the choice is named only in code


def test_markup_and_code_are_no_prose() -> None:
    assert claim_scan.sentences("A `better_layers` name.\n\n```python\ndropout_is_better = True\n```\n") == [
        "A name."]
    assert claim_scan.sentences("Exact: {eval}`gap`. Then more.") == ["Exact: {eval}`gap`.", "Then more."]
    assert len(claim_scan.MARKUP) == 5  # prose_scan's code blocks, directives, inline code, link targets, tags


def test_a_page_has_no_cells_to_back_it(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("# Next\n\nDeeper models are better at this budget.\n\nOne seed says dropout helps.\n")
    assert [c.sentence for c in claim_scan.page_claims(page)] == ["Deeper models are better at this budget."]
