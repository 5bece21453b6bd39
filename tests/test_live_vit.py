"""Chapter 9's digits explorer (browser/static/vit-explorer.js) in chromium, offline, against Python's
(browser.vit_explorer: read_digit, on the Vision Transformer and linear layer with the page's rounded weights).

* The page's probabilities (Vision Transformer and linear layer) and the class token's attention equal
  Python's within 1e-5, on the held-out test digits of the menu, on grids drawn with the keyboard and the
  mouse, and on random grids run through the page's model directly.
* The drawing is one tab stop, moved inside by the arrow keys; Space and Enter ink a cell; the phone's
  width has no sideways scrolling; axe finds nothing; no request leaves 127.0.0.1. Screenshots at 1366
  and 390 px (screenshots/live-vit-*.png).
* The kernel's explorer (DigitExplorer): the same readings, its callbacks never raise.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterator

import pytest
import torch
from torch import nn

from tools.book_browser import ROOT, minimal_page, serve
from transformer_lib.browser.page import live_explorer_html, page_scripts
from transformer_lib.browser.vit_explorer import LEVELS, DigitExplorer, digit_state, next_level, read_digit
from transformer_lib.class_token import fit_classifier
from transformer_lib.config import TransformerConfig
from transformer_lib.vision import VisionTransformer, load_digit_images

from .reader_checks import axe_violations
from .test_live_model import Visit

SCREENSHOTS = ROOT / "screenshots"
EXPLORER = 'div.tc-live[data-explorer="vit"]'
TOLERANCE = 1e-5


@pytest.fixture(scope="module")
def digits():
    return load_digit_images()


@pytest.fixture(scope="module")
def models(digits):
    """A Vision Transformer of chapter 9's shape and its linear baseline, briefly trained (any weights
    test the computation; trained ones give attention that is not uniform)."""
    torch.manual_seed(0)
    config = TransformerConfig(d_model=32, n_heads=2, n_encoder_layers=1, d_ff=64, dropout=0.0, norm_first=True,
                               max_len=16)
    vit = VisionTransformer(config, n_classes=10, patch=2)
    linear = nn.Sequential(nn.Flatten(), nn.Linear(64, 10))
    fit_classifier(vit, digits.train_images, digits.train_labels, steps=60, lr=3e-3)
    fit_classifier(linear, digits.train_images, digits.train_labels, steps=60, lr=1e-2)
    return vit, linear


@pytest.fixture(scope="module")
def state(models, digits):
    return digit_state(*models, digits)


def rounded_models(state: dict, vit: VisionTransformer, linear: nn.Module) -> tuple[VisionTransformer, nn.Module]:
    """Copies of the models holding the page's weights: the state's rounded numbers as float32 (the page's
    Float32Array), computed in float64 (the page's arithmetic)."""
    values = torch.tensor(state["model"]["values"], dtype=torch.float32).double()
    weights = {name: values[e["offset"]:e["offset"] + torch.Size(e["shape"]).numel()].reshape(e["shape"])
               for name, e in state["model"]["tensors"].items()}
    page_vit = copy.deepcopy(vit).double()
    page_vit.load_state_dict(weights)
    page_linear = copy.deepcopy(linear).double()
    page_linear.load_state_dict({name: torch.tensor(state["linear"][name.split(".")[1]], dtype=torch.float32)
                                 .double().reshape(p.shape) for name, p in linear.state_dict().items()})
    return page_vit, page_linear


@pytest.fixture(scope="module")
def python(state, models):
    page_vit, page_linear = rounded_models(state, *models)
    return lambda pixels: read_digit(page_vit, page_linear, torch.tensor(pixels, dtype=torch.float64).reshape(8, 8))


@pytest.fixture(scope="module")
def explorer_url(tmp_path_factory: pytest.TempPathFactory, state) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("vit-explorer")
    minimal_page(folder, "digits explorer", live_explorer_html("vit", **state), page_scripts(["vit"]))
    html = (folder / "index.html").read_text().replace(  # a phone's viewport, as the book's pages
        "<head>", '<head><meta name="viewport" content="width=device-width, initial-scale=1">')
    (folder / "index.html").write_text(html)
    with serve(folder) as base:
        yield base + "index.html"


def _page_reading(page) -> dict:
    return page.evaluate(f"() => {{ const e = document.querySelector('{EXPLORER}').tcExplorer;"
                         " return {pixels: e.pixels(), reading: e.reading()}; }")


def _assert_same(page_reading: dict, expected: dict) -> None:
    got = page_reading["reading"]
    for mine, python in (("probs", "vit"), ("linear", "linear"), ("attention", "attention")):
        difference = torch.tensor(got[mine], dtype=torch.float64) - torch.tensor(expected[python], dtype=torch.float64)
        assert difference.abs().max() <= TOLERANCE, (mine, difference.abs().max().item())


def test_the_page_reads_test_digits_and_drawn_ones_as_python(browser, explorer_url, state, python) -> None:
    visit = Visit(browser, explorer_url, width=1366)
    try:
        page = visit.page
        root = page.locator(EXPLORER)
        page.wait_for_function(f"() => document.querySelector('{EXPLORER}').dataset.reads")
        seen = _page_reading(page)  # before any change: the state's image, the first test image
        assert seen["pixels"] == state["image"] == min(state["menu"], key=lambda m: m["index"])["pixels"]
        _assert_same(seen, python(state["image"]))
        for n, item in enumerate(state["menu"]):  # every held-out digit of the menu
            root.get_by_label("Start from", exact=True).select_option(str(n))
            seen = _page_reading(page)
            assert seen["pixels"] == item["pixels"]
            _assert_same(seen, python(item["pixels"]))
            shown = root.locator(".tc-digit-answer").inner_text()
            assert f"Vision Transformer: {max(range(10), key=seen['reading']['probs'].__getitem__)}" in shown
        # drawn by keyboard: one tab stop into the grid, arrows inside it, Space and Enter ink
        root.get_by_label("Start from", exact=True).select_option("-1")
        root.get_by_label("Start from", exact=True).focus()
        page.keyboard.press("Tab")  # Head
        page.keyboard.press("Tab")  # the grid's one stop: its first cell
        assert page.evaluate("document.activeElement.getAttribute('aria-label')") == "row 1, column 1: blank"
        expected = [0.0] * 64
        for key, (r, c) in (("ArrowRight", (0, 1)), ("ArrowDown", (1, 1)), ("ArrowDown", (2, 1)),
                            ("End", (2, 7)), ("ArrowLeft", (2, 6))):
            page.keyboard.press(key)
            page.keyboard.press("Space" if c % 2 else "Enter")
            expected[8 * r + c] = next_level(expected[8 * r + c])
            page.keyboard.press("Space")
            expected[8 * r + c] = next_level(expected[8 * r + c])
            seen = _page_reading(page)
            assert seen["pixels"] == expected
            _assert_same(seen, python(expected))
        assert page.evaluate("document.activeElement.getAttribute('aria-label')") == "row 3, column 7: full ink"
        page.keyboard.press("Tab")  # out of the grid at once: the other cells are not tab stops
        assert page.evaluate("document.activeElement.getAttribute('role')") != "gridcell"
        # drawn by mouse, on a test digit: three presses take a cell round its levels
        root.get_by_label("Start from", exact=True).select_option("3")
        pixels = list(state["menu"][3]["pixels"])
        for n in (9, 27, 27, 36, 36, 36, 63):
            root.locator(".tc-digit-cell").nth(n).click()
            pixels[n] = next_level(pixels[n])
        seen = _page_reading(page)
        assert seen["pixels"] == pixels
        _assert_same(seen, python(pixels))
        root.get_by_label("Head", exact=True).select_option(label="head 2")  # one head's weights, as text
        head_row = python(pixels)["attention"][-1][1]
        cells = root.locator(".tc-attention-grid td").all_inner_texts()
        assert cells == [f"{100 * w:.0f}%" for w in head_row[1:]]
        # random grids of the three levels, through the page's model itself
        grids = torch.tensor(LEVELS)[torch.randint(len(LEVELS), (6, 64), generator=torch.Generator().manual_seed(1))]
        found = page.evaluate("(grids) => { const e = document.querySelector('div.tc-live[data-explorer=vit]')"
                              ".tcExplorer; const s = JSON.parse(document.querySelector('script.tc-live-state')"
                              ".textContent); return grids.map((g) => { const r = e.model.read(g); return {pixels: g,"
                              " reading: {probs: r.probs, attention: r.attention,"
                              " linear: window.tcVitExplorer.linearProbs(s.linear, g)}}; }); }", grids.tolist())
        for seen in found:
            _assert_same(seen, python(seen["pixels"]))
        SCREENSHOTS.mkdir(exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / "live-vit-1366.png"), full_page=True)
        violations = axe_violations(page)
    finally:
        visit.close()
    assert not visit.problems, visit.problems
    assert not violations, violations


def test_the_explorer_fits_a_phone_and_passes_axe(browser, explorer_url, state, python) -> None:
    visit = Visit(browser, explorer_url, width=390)
    try:
        page = visit.page
        root = page.locator(EXPLORER)
        page.wait_for_function(f"() => document.querySelector('{EXPLORER}').dataset.reads")
        root.locator(".tc-digit-cell").nth(20).click()
        seen = _page_reading(page)
        _assert_same(seen, python(seen["pixels"]))
        page.screenshot(path=str(SCREENSHOTS / "live-vit-390.png"), full_page=True)
        width = page.evaluate("document.documentElement.scrollWidth")
        violations = axe_violations(page)
        requests = [u for u in visit.requests if not u.startswith(("data:", "blob:"))]
    finally:
        visit.close()
    assert width <= 390, f"the page is {width} px wide on a 390 px phone"
    assert not visit.problems, visit.problems
    assert not violations, violations
    assert all(re.match(r"http://127\.0\.0\.1:\d+/", u) for u in requests)


def test_the_kernel_explorer_reads_as_read_digit_and_never_raises(models, digits) -> None:
    vit, linear = models
    explorer = DigitExplorer(vit, linear, digits)
    first = explorer.menu[explorer.start.value]
    assert first["index"] == 0 == min(m["index"] for m in explorer.menu)  # the chapter figure's digit
    assert explorer.reading == read_digit(vit, linear, torch.tensor(first["pixels"]).reshape(8, 8))
    explorer.start.value = 2 if explorer.start.value != 2 else 3
    image = torch.tensor(explorer.menu[explorer.start.value]["pixels"]).reshape(8, 8)
    assert torch.equal(explorer.image, image)
    explorer.cells[10].click()
    explorer.cells[10].click()
    image[1, 2] = next_level(next_level(float(image[1, 2])))
    assert torch.equal(explorer.image, image)
    assert explorer.reading == read_digit(vit, linear, image)
    best = max(range(10), key=explorer.reading["vit"].__getitem__)
    assert f"Vision Transformer: {best}</b>" in explorer.result.value
    explorer.head.value = 1
    assert "(head 2)" in explorer.result.value
    explorer.start.value = -1
    assert explorer.image.abs().sum() == 0 and explorer.messages.value == ""
    explorer._safely(lambda: explorer.press(99))  # a cell that is not there: a message, no traceback
    assert "tc-error" in explorer.messages.value
    state = json.loads(re.search(r'class="tc-live-state">(.*?)</script>', explorer.page_html()).group(1))
    assert state["image"] == [0.0] * 64 and state["linear"]["bias"] == [round(b, 4) for b in linear[1].bias.tolist()]


def test_next_level_cycles_and_read_digit_checks_its_image(models) -> None:
    assert [next_level(v) for v in (0.0, 0.3, 0.5, 0.9, 1.0)] == [0.5, 0.5, 1.0, 1.0, 0.0]
    vit, linear = models
    with pytest.raises(ValueError, match="image: expected ink in"):
        read_digit(vit, linear, torch.full((8, 8), 2.0))
    with pytest.raises(ValueError, match="image: expected an 8 x 8"):
        read_digit(vit, linear, torch.zeros(7, 8))
    with pytest.raises(TypeError, match="linear: expected"):
        read_digit(vit, nn.Linear(64, 10), torch.zeros(8, 8))
