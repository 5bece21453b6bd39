"""bertviz's views, rewritten to load d3 and jQuery from the book instead of a CDN."""

from __future__ import annotations

import json
import re

import pytest
import torch

from transformer_lib.capture import AttentionMaps
from transformer_lib.figures.bertviz import BOOK_BUILD_ENV, bertviz_head_view, bertviz_model_view

from .toy_translation import toy_maps, toy_model


@pytest.fixture(scope="module")
def uneven_maps() -> AttentionMaps:
    return toy_maps(toy_model(n_decoder_layers=1))


@pytest.fixture(scope="module")
def even_maps() -> AttentionMaps:
    """bertviz needs as many decoder as encoder layers."""
    return toy_maps(toy_model(n_decoder_layers=2, seed=1))



def test_bertviz_refuses_unequal_depths_clearly(uneven_maps: AttentionMaps) -> None:
    with pytest.raises(ValueError, match="maps: bertviz needs as many encoder as decoder layers, got 2 encoder and 1"):
        bertviz_head_view(uneven_maps)


@pytest.mark.parametrize("view", [bertviz_head_view, bertviz_model_view])
def test_bertviz_book_form_loads_nothing_from_another_host(even_maps: AttentionMaps, view) -> None:
    page = view(even_maps, assets="book").data
    assert "cdnjs" not in page and "require.config" not in page and "require.min.js" not in page
    urls = [line for line in page.splitlines() if "://" in line]
    assert all(line.lstrip().startswith("*") for line in urls), urls  # only in bertviz's comments
    assert '"jquery/jquery.min.js"' in page and '"d3/d3.min.js"' in page and "data-content_root" in page
    # loaded on first use, by a button that says what it loads and how much (tests/test_browser.py presses it)
    assert "tc-bertviz-load" in page and re.search(r"loads d3 and jQuery, \d+ kB compressed, \d+ kB\)", page)
    assert json.dumps(even_maps.src_tokens[0])[1:-1] in page  # bertviz's own parameters are there
    root_id = page.split('id="bertviz-')[1].split('"')[0]
    assert page.count(f"bertviz-{root_id}") >= 2  # the div and the script agree on the (repeatable) id


def test_bertviz_inline_form_carries_d3_and_jquery(even_maps: AttentionMaps) -> None:
    page = bertviz_head_view(even_maps, assets="inline").data
    assert "d3js.org" in page and "jQuery v3.7.1" in page
    assert "https://cdnjs" not in page and "_static/vendor" not in page


def test_bertviz_assets_follow_the_book_build_variable(even_maps: AttentionMaps, monkeypatch) -> None:
    monkeypatch.setenv(BOOK_BUILD_ENV, "1")
    assert "data-content_root" in bertviz_head_view(even_maps).data
    monkeypatch.delenv(BOOK_BUILD_ENV)
    assert "d3js.org" in bertviz_head_view(even_maps).data
    with pytest.raises(ValueError, match="assets: expected one of"):
        bertviz_head_view(even_maps, assets="cdn")


def test_bertviz_writes_the_weights_at_four_decimals(even_maps: AttentionMaps) -> None:
    """The view's data are the captured weights rounded to 4 decimals (as the book's explorers write
    theirs), not Python's 17 digits: each number in the page is within 5e-5 of the weight it stands for."""
    from transformer_lib.html_embed import PAGE_DECIMALS

    html = bertviz_head_view(even_maps, assets="book").data
    params, _ = json.JSONDecoder().raw_decode(html, html.index("const params = ") + len("const params = "))
    shown = {entry["name"]: torch.tensor(entry["attn"], dtype=torch.float64) for entry in params["attention"]}
    assert "Encoder" in shown
    encoder = torch.stack([a[0].double() for a in even_maps.encoder_self])  # (layers, h, S, S) of row 0
    assert shown["Encoder"].shape == encoder.shape
    assert (shown["Encoder"] - encoder).abs().max() <= 0.5 * 10 ** -PAGE_DECIMALS + 1e-12
    numbers = re.findall(r"\d+\.\d+", json.dumps(params["attention"]))
    assert numbers and max(len(n.split(".")[1]) for n in numbers) <= PAGE_DECIMALS
