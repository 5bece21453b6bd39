"""The page's JavaScript (transformer_lib/browser/static) against the library, in Node.

* The theme: the scripts copy nothing of the book's look or words; they draw and speak with what
  ``browser.theme`` writes, and a changed theme changes the page.
* Chapter 3's explorer: its tables (``peTable``, ``sinusoidalSimilarity``, ``ropeScores``) equal
  ``positional_encoding.sinusoidal_table`` and ``figures.positions``' matrices.
* ``book-model.js``'s forward pass, post-norm and pre-norm, on small models exported as
  ``browser.model`` exports the book's: the same greedy tokens as ``decoding.translate`` and the
  same attention maps as ``capture.capture_translation``.
"""

from __future__ import annotations

import html
import json
import math
import re
import shutil
import subprocess
from importlib import resources
from pathlib import Path

import numpy as np
import pytest
import torch

from transformer_lib.browser.explorers import PositionalEncodingExplorer
from transformer_lib.browser.model import MANIFEST_FILE, WEIGHTS_FILE, browser_model_files
from transformer_lib.browser.page import LIVE_SCRIPTS
from transformer_lib.browser.theme import MESSAGES, theme, theme_json
from transformer_lib.capture import AttentionMaps, capture_translation
from transformer_lib.config import TransformerConfig
from transformer_lib.decoding import translate
from transformer_lib.figures.attention import ATTENTION_KINDS, attention_figure
from transformer_lib.figures.display import BOOK_TEMPLATE, MODEBAR_REMOVED, PALETTE
from transformer_lib.figures.positions import _table, positional_encoding_figure, positions_note, rope_scores
from transformer_lib.models import Transformer
from transformer_lib.positional_encoding import sinusoidal_table
from transformer_lib.tokenization import Vocab

STATIC = resources.files("transformer_lib.browser") / "static"
SCRIPTS = LIVE_SCRIPTS  # in the page's order
NODE = shutil.which("node") or shutil.which("nodejs")

# Both scripts in one context, as in a page without a document: window.bookModel, window.tcExplorers.
HARNESS = """
const fs = require("fs"), vm = require("vm");
const [scripts, themePath, snippetPath] = JSON.parse(process.argv[1]);
const context = { console, performance, URL, Math, JSON, Float32Array, Float64Array };
context.window = context;
vm.createContext(context);
for (const path of scripts) vm.runInContext(fs.readFileSync(path, "utf8"), context, { filename: path });
context.window.bookModel.setTheme(JSON.parse(fs.readFileSync(themePath, "utf8")));
context.fs = fs;
const out = vm.runInContext(fs.readFileSync(snippetPath, "utf8"), context);
process.stdout.write(JSON.stringify(out));
"""


def run_js(snippet: str, tmp_path: Path, theme_text: str | None = None) -> object:
    """The value of the JavaScript expression ``snippet``, evaluated after both scripts."""
    if NODE is None:
        raise RuntimeError("node: not found; the tests of the page's JavaScript run it in Node.js "
                           "(apt-get install nodejs)")
    (tmp_path / "theme.json").write_text(theme_text or theme_json())
    (tmp_path / "snippet.js").write_text(snippet)
    args = json.dumps([[str(STATIC / s) for s in SCRIPTS], str(tmp_path / "theme.json"), str(tmp_path / "snippet.js")])
    result = subprocess.run([NODE, "-e", HARNESS, args], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout)


# ---------------------------------------------------------------- one list of the page's scripts


def test_the_one_list_names_every_script_of_the_page_once() -> None:
    """browser.page's LIVE_SCRIPTS and LM_SCRIPTS, which the build, the PDF and the tests read, hold
    every script of static/ once: a new script cannot be left out of the pages."""
    from transformer_lib.browser.page import LM_SCRIPTS

    listed = [*LIVE_SCRIPTS, *LM_SCRIPTS]
    assert len(listed) == len(set(listed))
    assert set(listed) == {item.name for item in STATIC.iterdir() if item.name.endswith(".js")}


# ---------------------------------------------------------------- one theme, written by Python


def test_the_scripts_copy_nothing_of_the_theme() -> None:
    """Python's palette, toolbar list, font and messages appear in no script: the theme brings them."""
    for name in (*SCRIPTS, "explorers.css"):
        text = (STATIC / name).read_text()
        copies = [c for c in PALETTE if c.lower() in text.lower()]
        copies += [b for b in MODEBAR_REMOVED if b in text]
        copies += [BOOK_TEMPLATE.layout.font.family] * (BOOK_TEMPLATE.layout.font.family in text)
        copies += [m for m in MESSAGES.values() if len(m) > 20 and m.split("{")[0][:20] in text]
        assert not copies, f"{name} copies {copies}: read them from the theme (transformer_lib.browser.theme)"


def test_the_scripts_copy_no_number_of_the_library(tmp_path: Path) -> None:
    """The numbers the scripts share with Python come from the theme's ``limits`` (issue 55): each is read
    by a script, none is written again as a constant, one seeded generator serves every script, and a
    script follows the theme's value (here the width below which an explorer draws one figure a row)."""
    from transformer_lib.browser.page import LM_SCRIPTS

    texts = {name: (STATIC / name).read_text() for name in (*SCRIPTS, *LM_SCRIPTS)}
    every = "\n".join(texts.values())
    for key in theme()["limits"]:
        assert f"limits.{key}" in every or f"{key}:" in every, f"no script reads the theme's limits.{key}"
    copies = {name: re.findall(r"const (?:SHOWN|MAX_NEW_TOKENS|TOP_K|NARROW|MAX_POSITIONS|MAX_WAVES) = \d", text)
              + re.findall(r"\b1e4\b", text) for name, text in texts.items()}
    assert not any(copies.values()), f"numbers of the library written by hand: {copies}"
    assert [name for name, text in texts.items() if "function mulberry32" in text] == ["book-text.js"]
    snippet = """window.tcExplorers.attentionFigure({src_tokens: ["a", "b"], decoder_tokens: ["<sos>", "x"],
        attention: {cross: [[[[0.5, 0.5], [0.2, 0.8]]]]}}, "cross", 0, 0, 1000).layout.title.text"""
    wide = theme()
    narrow = {**wide, "limits": {**wide["limits"], "narrow_px": 1001}}
    assert "<br>" not in run_js(snippet, tmp_path)
    assert "<br>" in run_js(snippet, tmp_path, json.dumps(narrow))


def test_the_page_draws_with_the_theme_python_writes(tmp_path: Path) -> None:
    got = run_js("""({
      layout: window.tcExplorers.positionalFigure(16, [0, 3], [0, 9], 1000).layout,
      attention: window.tcExplorers.attentionFigure({src_tokens: ["a", "b"], decoder_tokens: ["<sos>", "x"],
        attention: {cross: [[[[0.5, 0.5], [0.2, 0.8]]]]}}, "cross", 0, 0, 1000).layout,
      config: window.tcExplorers.plotConfig(),
      empty: window.bookModel.fill("empty", {}),
      unknown: window.bookModel.fill("unknown", {unk: "<unk>", words: "w"}),
    })""", tmp_path)
    python = theme()
    for key, value in python["layout"].items():
        if key not in ("legend", "margin"):  # the explorers place these for their grid of panels
            assert got["layout"][key] == value, key
    # the theme's margins, the bottom and left grown for long tokens (explorers.js's tokenMargins)
    margin, base = got["attention"]["margin"], python["layout"]["margin"]
    assert (margin["t"], margin["r"]) == (base["t"], base["r"])
    assert margin["l"] >= base["l"] and margin["b"] >= base["b"]
    assert got["config"] == python["config"] and got["config"]["modeBarButtonsToRemove"] == MODEBAR_REMOVED
    for key in ("gridcolor", "zerolinecolor", "linecolor"):
        assert got["layout"]["xaxis"][key] == got["attention"]["yaxis"][key] == python["axis"][key]
    assert got["attention"]["coloraxis"]["colorscale"] == python["colorscales"]["Blues"]
    assert got["empty"] == MESSAGES["empty"]
    assert got["unknown"] == MESSAGES["unknown"].format(unk="<unk>", words="w")


@pytest.mark.parametrize("kind", ["encoder_self", "decoder_self", "cross"])
def test_the_pages_all_heads_grid_names_its_axes_as_the_library(tmp_path: Path, kind: str) -> None:
    """Each panel of the page's grid of heads says which side's tokens its axes hold, as
    figures.attention.attention_figure's grid does (issue 53: they said only "key" and "query")."""
    head = [[0.5, 0.5], [0.2, 0.8]]  # two heads of one layer, 2 queries by 2 keys
    result = {"src_tokens": ["a", "b"], "decoder_tokens": ["<sos>", "x"], "attention": {kind: [[head, head]]}}
    got = run_js(f"""(() => {{
      const layout = window.tcExplorers.attentionFigure({json.dumps(result)}, "{kind}", 0, "all", 1000).layout;
      return {{x: [layout.xaxis.title.text, layout.xaxis2.title.text],
               y: layout.annotations.filter((a) => !a.text.startsWith("head")).map((a) => a.text)}};
    }})()""", tmp_path)
    maps = AttentionMaps(src_tokens=[["a", "b"]], tgt_tokens=[["<sos>", "x"]],
                         **{k: [torch.tensor([[head, head]])] if k == kind else [] for k in ATTENTION_KINDS})
    python = attention_figure(maps, kind, 0, "all")
    assert got["x"] == [python.layout.xaxis.title.text, python.layout.xaxis2.title.text]
    assert got["y"] == [python.layout.yaxis.title.text, python.layout.yaxis2.title.text]
    assert "(key)" in got["x"][0] and "(query)" in got["y"][0]


def test_a_changed_theme_changes_the_page(tmp_path: Path) -> None:
    """What the page shows follows the JSON: nothing else in the scripts decides it."""
    changed = theme()
    changed["layout"]["colorway"] = ["#123456"]
    changed["layout"]["font"]["family"] = "serif"
    changed["config"]["modeBarButtonsToRemove"] = ["zoom2d"]
    changed["messages"]["empty"] = "Changed."
    got = run_js("""({layout: window.tcExplorers.positionalFigure(16, [0, 3], [0, 9], 1000).layout,
      config: window.tcExplorers.plotConfig(), empty: window.bookModel.fill("empty", {})})""",
                 tmp_path, json.dumps(changed))
    assert got["layout"]["colorway"] == ["#123456"] and got["layout"]["font"]["family"] == "serif"
    assert got["config"]["modeBarButtonsToRemove"] == ["zoom2d"] and got["empty"] == "Changed."


# ---------------------------------------------------------------- chapter 3's tables


@pytest.mark.parametrize(("d_model", "positions"), [(64, (0, 50)), (16, (7, 40)), (512, (0, 200))])
def test_pe_table_is_the_librarys(tmp_path: Path, d_model: int, positions: tuple[int, int]) -> None:
    first, last = positions
    in_page = np.array(run_js(f"window.tcExplorers.peTable({d_model}, {first}, {last})", tmp_path))
    library = sinusoidal_table(last + 1, d_model)[first:].numpy()  # float32, as the page rounds it
    assert in_page.shape == library.shape
    # both take the float64 sine and cosine of the same float64 angle and round them once to float32
    assert np.array_equal(in_page.astype(np.float32), in_page)  # float32 values, as the library's table
    assert np.array_equal(in_page, library), float(np.abs(in_page - library).max())


@pytest.mark.parametrize(("d_model", "positions"), [(64, (0, 50)), (16, (7, 40)), (512, (0, 200))])
def test_sinusoidal_similarity_is_the_figures(tmp_path: Path, d_model: int, positions: tuple[int, int]) -> None:
    first, last = positions
    n = last - first + 1
    in_page = np.array(run_js(f"window.tcExplorers.sinusoidalSimilarity({d_model}, {n})", tmp_path))
    table = _table(d_model, positions)
    figure = table @ table.T  # positional_encoding_figure's PE(m) . PE(n), from the float32 table
    exact = table.astype(np.float64) @ table.T.astype(np.float64)
    # the page sums cos((n - m) w) in float64; the figure's float32 entries are off by 6e-8 each, so
    # the two differ by at most d_model float32 rounding errors of a term of size 1
    tolerance = d_model * 2 * np.finfo(np.float32).eps
    assert in_page.shape == figure.shape
    assert np.abs(in_page - exact).max() <= tolerance, float(np.abs(in_page - exact).max())
    assert np.abs(in_page - figure).max() <= 2 * tolerance
    assert abs(in_page[0, 0] - d_model / 2) < 1e-12  # PE(m) . PE(m) = d_model / 2 exactly in float64


@pytest.mark.parametrize(("d_model", "positions"), [(64, (0, 50)), (16, (7, 40)), (128, (0, 120))])
def test_rope_scores_are_the_figures(tmp_path: Path, d_model: int, positions: tuple[int, int]) -> None:
    """The page's RoPE panel on the figure's query and key (its own are another fixed random pair)."""
    first, last = positions
    n = last - first + 1
    q, k = torch.randn(2, d_model, generator=torch.Generator().manual_seed(0))  # rope_scores' pair
    in_page = np.array(run_js(f"window.tcExplorers.ropeScoresFor({q.tolist()}, {k.tolist()}, {n})", tmp_path))
    figure = rope_scores(d_model, positions)
    scale = float(np.abs(figure).max())
    # the figure rotates in float32 (RotaryEmbedding's tables); the page in float64
    assert in_page.shape == figure.shape
    assert np.abs(in_page - figure).max() <= 1e-5 * max(scale, 1.0) * math.sqrt(d_model), (
        float(np.abs(in_page - figure).max()))
    own = np.array(run_js(f"window.tcExplorers.ropeScores({d_model}, {n})", tmp_path))
    assert np.allclose(np.diagonal(own, 3), own[0, 3])  # a function of n - m only, as the figure's


@pytest.mark.parametrize(("d_model", "dims", "positions"), [
    (64, (5, 3), (0, 50)), (64, (0, 20), (0, 50)), (16, (0, 15), (0, 50)), (64, (0, 7), (40, 10)),
    (64, (0, 7), (0, 50)), (512, (100, 115), (0, 512)),
])
def test_the_positional_explorer_refuses_what_the_figure_refuses(tmp_path: Path, d_model: int, dims: tuple[int, int],
                                                                  positions: tuple[int, int]) -> None:
    """The page's message is the kernel explorer's: the figure's ValueError, in sentence case."""
    in_page = run_js(f"window.tcExplorers.positionalProblem({d_model}, {list(dims)}, {list(positions)})", tmp_path)
    try:
        positional_encoding_figure(d_model, dims, positions)
        expected = None
    except ValueError as err:
        text = str(err).split(": ", 1)[-1]
        expected = text[:1].upper() + text[1:]  # as browser.explorers shows it
    assert in_page == expected


@pytest.mark.parametrize("positions", [(7, 7), (0, 0), (0, 50), (6, 7)])
def test_the_positional_explorer_says_what_the_kernel_says_of_one_position(tmp_path: Path,
                                                                          positions: tuple[int, int]) -> None:
    """At its extreme (one position) the figure is nearly empty: the page's note is the kernel explorer's."""
    in_page = run_js(f"window.tcExplorers.positionalNote({list(positions)})", tmp_path)
    assert in_page == positions_note(positions)
    assert (in_page is not None) == (positions[0] == positions[1])
    shown = PositionalEncodingExplorer(d_model=16, dims=(0, 3), positions=positions).messages.value
    assert (html.escape(in_page) in shown) if in_page else shown == ""


# ---------------------------------------------------------------- book-model.js, post-norm and pre-norm


def _small_model(norm_first: bool) -> tuple[Transformer, Vocab, Vocab]:
    # words of letters only: the page writes typed text as the training sentences are (no digits)
    src = Vocab([f"s{chr(97 + i)}" for i in range(20)])
    tgt = Vocab([f"t{chr(97 + i)}" for i in range(24)])
    config = TransformerConfig(src_vocab_size=len(src), tgt_vocab_size=len(tgt), d_model=32, n_heads=4,
                               n_encoder_layers=2, n_decoder_layers=2, d_ff=48, dropout=0.0, max_len=40,
                               norm_first=norm_first)
    torch.manual_seed(3)
    model = Transformer(config).eval()
    with torch.no_grad():  # LayerNorm's gain and bias away from 1 and 0, so that a misplaced norm shows
        for name, p in model.named_parameters():
            if "norm" in name:
                p.add_(0.3 * torch.randn_like(p))
    return model, src, tgt


@pytest.mark.parametrize("norm_first", [False, True], ids=["post-norm", "pre-norm"])
def test_book_model_js_runs_the_librarys_forward_pass(tmp_path: Path, norm_first: bool) -> None:
    model, src, tgt = _small_model(norm_first)
    for name, content in browser_model_files(model, src, tgt).items():
        (tmp_path / name).write_bytes(content)
    sentences = ["sa sb sc", "sd se sf sg sh", "si", "sj sk sa sa st ss"]
    got = run_js(f"""(() => {{
      const manifest = JSON.parse(fs.readFileSync({json.dumps(str(tmp_path / MANIFEST_FILE))}, "utf8"));
      const bytes = fs.readFileSync({json.dumps(str(tmp_path / WEIGHTS_FILE))});
      const buffer = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
      const model = new window.bookModel.Model(manifest, buffer);
      return {json.dumps(sentences)}.map((s) => model.translate(s));
    }})()""", tmp_path)
    assert ("encoder.final_norm.weight" in model.state_dict()) == norm_first  # the branch under test
    worst = 0.0
    for sentence, result in zip(sentences, got, strict=True):
        expected = translate(model, sentence, src, tgt)
        assert result["src_tokens"] == sentence.split() and result["unknown"] == [], sentence
        assert result["tokens"] == expected.tokens, sentence
        assert result["ended"] == expected.ended, sentence
        # the page's maps are capture_translation's: those of the decoder inputs <sos> + output that
        # produced a token (a translation cut at its limit never read its last token)
        maps = capture_translation(model, expected, src, tgt)
        for kind in ("encoder_self", "decoder_self", "cross"):
            reference = np.stack([layer[0].numpy() for layer in getattr(maps, kind)])  # (layers, heads, q, k)
            in_page = np.array(result["attention"][kind])
            assert in_page.shape == reference.shape, (sentence, kind)
            worst = max(worst, float(np.abs(in_page - reference).max()))
    assert worst <= 1e-5, f"attention differs from capture_translation by up to {worst:.2e}"
    assert any(len(r["tokens"]) > 1 for r in got)  # a decoder that ran several steps on its cache


def test_the_theme_json_is_safe_in_a_script_element() -> None:
    text = theme_json()
    assert "</" not in text and json.loads(text) == theme()
    assert re.fullmatch(r"[\x20-\x7e]*", text)  # ASCII: the page's encoding cannot garble it


# ---------------------------------------------------------------- book-trace.js and stepper.js


@pytest.mark.parametrize("norm_first", [False, True], ids=["post-norm", "pre-norm"])
def test_the_page_trace_and_stepper_views_are_the_librarys(tmp_path: Path, norm_first: bool) -> None:
    """bookModel.trace on a small model equals decoding_steps.trace_translation (beams 1 to 4), and
    the stepper's marks, bar labels and summary equal figures.decoding_steps' for the same trace."""
    from transformer_lib.decoding_steps import trace_translation
    from transformer_lib.figures.decoding_steps import candidate_marks, step_figures, step_summary_html

    model, src, tgt = _small_model(norm_first)
    for name, content in browser_model_files(model, src, tgt).items():
        (tmp_path / name).write_bytes(content)
    sentences = ["sa sb sc", "sd se sf sg sh", "si"]
    traces = {(s, k): trace_translation(model, s, src, tgt, beam_size=k) for s in sentences for k in (1, 2, 3, 4)}
    payloads = [t.payload() for t in traces.values()]
    (tmp_path / "traces.json").write_text(json.dumps(payloads))
    got = run_js(f"""(() => {{
      const manifest = JSON.parse(fs.readFileSync({json.dumps(str(tmp_path / MANIFEST_FILE))}, "utf8"));
      const bytes = fs.readFileSync({json.dumps(str(tmp_path / WEIGHTS_FILE))});
      const model = new window.bookModel.Model(manifest, bytes.buffer.slice(bytes.byteOffset,
        bytes.byteOffset + bytes.byteLength));
      const python = JSON.parse(fs.readFileSync({json.dumps(str(tmp_path / "traces.json"))}, "utf8"));
      return {{
        traces: {json.dumps(sentences)}.flatMap((s) => [1, 2, 3, 4].map((beam) => model.trace(s, {{beam}}))),
        views: python.map((t) => t.steps.map((record, i) => ({{
          marks: window.tcStepper.candidateMarks(record),
          summary: window.tcStepper.stepSummary(t, i + 1),
          text: window.tcStepper.stepFigures(t, i + 1, 1000).bars.data.flatMap((d) => d.text),
        }}))),
      }};
    }})()""", tmp_path)
    for (sentence, beam), trace, in_page, views in zip(traces, traces.values(), got["traces"], got["views"],
                                                       strict=True):
        expected = trace.payload()
        assert in_page["tokens"] == expected["tokens"] and in_page["ended"] == expected["ended"], (sentence, beam)
        assert len(in_page["steps"]) == len(expected["steps"]), (sentence, beam)
        for a, b in zip(expected["steps"], in_page["steps"], strict=True):
            assert a["chosen"]["token"] == b["chosen"]["token"] and a["chosen"]["beam"] == b["chosen"]["beam"]
            assert [k["tokens"] for k in a["kept"]] == [k["tokens"] for k in b["kept"]]
            assert [f["tokens"] for f in a["finished"]] == [f["tokens"] for f in b["finished"]]
            for x, y in zip(a["beams"], b["beams"], strict=True):
                assert x["prefix"] == y["prefix"] and [c[0] for c in x["candidates"]] == [c[0] for c in y["candidates"]]
                assert np.allclose([c[1] for c in x["candidates"]], [c[1] for c in y["candidates"]], atol=1e-5)
                assert np.allclose(x["cross"], y["cross"], atol=1e-5) and abs(x["log_prob"] - y["log_prob"]) < 1e-5
        for n, view in enumerate(views, start=1):
            assert view["marks"] == candidate_marks(trace, n), (sentence, beam, n)
            assert view["summary"] == step_summary_html(trace, n), (sentence, beam, n)
            assert view["text"] == [t for bar in step_figures(trace, n)[0].data for t in bar.text], (sentence, beam, n)
    assert any(len(t.steps[1]["beams"]) == 4 for t in traces.values() if len(t.steps) > 1 and t.beam_size == 4)
