"""Hostile strings embedded in a page by the library (the explorers' JSON, bertviz's tokens, plotly's
figures) cannot end their <script> element early or swallow the page after it: checked in Chromium.

Before ``html_embed``, a sentence holding ``<!--<script>`` made the parser swallow the explorer's JSON,
its fallback and everything after it."""

from __future__ import annotations

import dataclasses
import json

import plotly.graph_objects as go
import pytest

from transformer_lib.browser.page import live_explorer_html
from transformer_lib.figures.bertviz import bertviz_head_view
from transformer_lib.figures.display import figure_mimebundle
from transformer_lib.html_embed import json_for_script, script_safe

from .toy_translation import toy_maps, toy_model

HOSTILE = [
    "<!--<script>",
    "</script><p id='injected'>injected</p>",
    "<script>window.injected = 1</script>",
    "<!-- </SCRIPT> -->",
    "a & b > c \u2028 \u2029 ]]>",
]


def test_json_for_script_round_trips_and_holds_no_angle_bracket():
    value = {"sentence": HOSTILE, "nested": [{"k<": ">"}]}
    text = json_for_script(value)
    assert "<" not in text and ">" not in text and "&" not in text
    assert json.loads(text) == value
    with pytest.raises(ValueError):
        json_for_script({"x": float("nan")})


def test_script_safe_leaves_code_alone_and_neutralises_the_openers():
    assert script_safe("if (a < b && c<d) { x = '<b>'; }") == "if (a < b && c<d) { x = '<b>'; }"
    assert "<" not in script_safe("'<!--<script></ScRiPt>'")


def _page() -> tuple[str, list[dict]]:
    """Each embedding followed by a marker paragraph; returns the page and the explorers' settings."""
    settings = [dict(sentence=text, result=None) for text in HOSTILE]
    parts = [f'{live_explorer_html("attention", **s)}<p id="after-explorer-{i}">after</p>'
             for i, s in enumerate(settings)]
    figure = go.Figure(go.Bar(x=HOSTILE, y=[1, 2, 3, 4, 5]), layout=dict(title=dict(text=HOSTILE[0])))
    parts.append(f'{figure_mimebundle(figure)["text/html"]}<p id="after-figure">after</p>')
    maps = toy_maps(toy_model(n_decoder_layers=2, seed=1), "the cat sat on the mat")
    n_src = len(maps.src_tokens[0])
    maps = dataclasses.replace(maps, src_tokens=[[HOSTILE[i % len(HOSTILE)] for i in range(n_src)]])
    parts.append(f'{bertviz_head_view(maps, assets="inline").data}<p id="after-bertviz">after</p>')
    page = ('<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>hostile</title></head><body>'
            + "".join(parts) + '<p id="end">end</p></body></html>')
    return page, settings


def test_hostile_strings_do_not_break_the_page_in_chromium(browser):
    page_html, settings = _page()
    page = browser.new_page()
    page.route("**/*", lambda route: route.abort())  # offline: nothing may be fetched
    page.set_content(page_html, wait_until="load")
    markers = [f"after-explorer-{i}" for i in range(len(HOSTILE))] + ["after-figure", "after-bertviz", "end"]
    present = page.evaluate("ids => ids.map(id => document.getElementById(id) !== null)", markers)
    assert dict(zip(markers, present, strict=True)) == dict.fromkeys(markers, True)
    states = page.evaluate(
        "() => [...document.querySelectorAll('.tc-live-state')].map(s => JSON.parse(s.textContent))")
    assert states == settings  # each explorer's JSON reads back exactly, hostile text included
    fallbacks = page.evaluate("() => document.querySelectorAll('.tc-live-fallback').length")
    assert fallbacks == len(HOSTILE)
    assert page.evaluate("() => document.getElementById('injected') === null && !window.injected")
    # bertviz drew its view with the hostile tokens as text
    drawn = page.evaluate("() => [...document.querySelectorAll('svg text')].map(t => t.textContent)")
    assert HOSTILE[0] in drawn and HOSTILE[1] in drawn
    page.close()

