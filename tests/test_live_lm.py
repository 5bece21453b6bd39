"""Chapter 8's language model in the page (``static/book-lm.js``) against the library, in Node.

The page's model is the shipped ``book_lm`` as the build writes it (``browser.model.write_book_lm``),
run by ``book-lm.js`` on ``book-model.js``'s model core, in float64 on the float32 weights; the
library's reference is the same weights in float64 (chapter 8's precision):

* ``bookLM.next``'s ``probs`` equal ``language_model.next_word_probs`` (the distribution
  ``sample_sentences`` draws from) within 1e-5 over a grid of temperature x top-k x top-p, with the
  same kept tokens (ties and the token that crosses the top-p mass included), and its attention maps
  equal ``capture.capture_attention``'s;
* greedy continuations (temperature 0, and top-k 1) equal ``sample_sentences``';
* the page's seeded draws follow Python's probabilities: a chi-square test on thousands of draws;
* the page's messages for bad settings are the kernel explorer's (``browser.lm_explorer``), and its
  bar chart is ``figures.sampling.next_word_figure``'s.

Then, in chromium, offline, a minimal page holding the explorer's HTML as the kernel writes it: the
kernel's figures are drawn before any model is fetched; the model is fetched once, on first use;
the controls act (keyboard included); bad input gets the kernel's messages; no request leaves
127.0.0.1 (screenshots at 1366 and 390 px go to screenshots/live-lm-*.png).
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
from urllib.parse import urlparse

import numpy as np
import pytest
import torch

from transformer_lib.browser.lm_explorer import LanguageModelExplorer, read_lm_settings
from transformer_lib.browser.model import LM_STEM, file_names, write_book_lm
from transformer_lib.browser.page import LIVE_SCRIPTS, LM_SCRIPTS
from transformer_lib.browser.theme import MESSAGES, theme_json
from transformer_lib.capture import capture_attention
from transformer_lib.figures.sampling import next_word_figure
from transformer_lib.language_model import never_drawn, next_word_probs, sample_sentences
from transformer_lib.pretrained import book_lm

STATIC = resources.files("transformer_lib.browser") / "static"
SCRIPTS = (*LIVE_SCRIPTS, *LM_SCRIPTS)  # as chapter 8's page loads them
NODE = shutil.which("node") or shutil.which("nodejs")
TOLERANCE = 1e-5
PROMPTS = ("", "le petit", "nous ne", "les chiens de mon frère")

# Both scripts in one context without a document; `model` is book-lm.js's LanguageModel on the files.
HARNESS = """
const fs = require("fs"), vm = require("vm");
const [scripts, themePath, folder, weightsName, manifestName, snippetPath] = JSON.parse(process.argv[1]);
const context = { console, performance, URL, Math, JSON, Float32Array, Float64Array };
context.window = context;
vm.createContext(context);
for (const path of scripts) vm.runInContext(fs.readFileSync(path, "utf8"), context, { filename: path });
context.window.bookModel.setTheme(JSON.parse(fs.readFileSync(themePath, "utf8")));
const manifest = JSON.parse(fs.readFileSync(folder + "/" + manifestName, "utf8"));
const bytes = fs.readFileSync(folder + "/" + weightsName);
context.model = new context.window.bookLM.LanguageModel(manifest,
  bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
const out = vm.runInContext(fs.readFileSync(snippetPath, "utf8"), context);
process.stdout.write(JSON.stringify(out));
"""


@pytest.fixture(scope="module")
def lm():
    checkpoint = book_lm(dtype=torch.float64)
    return checkpoint.model.eval(), checkpoint.tgt_vocab


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("book-lm")
    write_book_lm(folder)
    (folder / "theme.json").write_text(theme_json())
    return folder


def run_lm(snippet: str, folder: Path) -> object:
    """The value of the JavaScript expression ``snippet``, with ``model`` the page's language model."""
    if NODE is None:
        raise RuntimeError("node: not found; the tests of the page's JavaScript run it in Node.js "
                           "(apt-get install nodejs)")
    (folder / "snippet.js").write_text(snippet)
    weights, manifest = file_names(LM_STEM)
    args = json.dumps([[str(STATIC / s) for s in SCRIPTS], str(folder / "theme.json"), str(folder), weights,
                       manifest, str(folder / "snippet.js")])
    result = subprocess.run([NODE, "-e", HARNESS, args], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout)


def _settings(temperature: float, top_k: int | None, top_p: float | None) -> dict:
    return {"temperature": temperature, "topK": top_k, "topP": top_p}


GRID = [_settings(t, k, p) for t in (0.0, 0.3, 1.0, 1.7) for k in (None, 1, 5, 40) for p in (None, 0.3, 0.9, 1.0)]


def test_next_token_probs_are_the_librarys_over_a_grid(lm, files: Path) -> None:
    model, vocab = lm
    got = run_lm(f"""(() => {{ const out = [];
      for (const prompt of {json.dumps(PROMPTS)}) for (const s of {json.dumps(GRID)}) {{
        const r = model.next(prompt, s); out.push({{probs: r.probs, kept: r.kept, tokens: r.tokens}}); }}
      return out; }})()""", files)
    assert len(got) == len(PROMPTS) * len(GRID)
    worst, kept_counts = 0.0, set()
    for i, (prompt, s) in enumerate((p, s) for p in PROMPTS for s in GRID):
        expected = next_word_probs(model, vocab, prompt, temperature=s["temperature"], top_k=s["topK"],
                                   top_p=s["topP"]).numpy()
        in_page = np.array(got[i]["probs"])
        assert in_page.shape == (len(vocab),)
        assert got[i]["tokens"] == ["<sos>", *prompt.split()]
        # the same tokens kept: the filters' boundaries (ties, the token that crosses top-p) agree
        assert np.array_equal(np.array(got[i]["kept"]), expected > 0), (prompt, s)
        assert in_page[list(never_drawn(vocab))].sum() == 0
        worst = max(worst, float(np.abs(in_page - expected).max()))
        kept_counts.add(int((expected > 0).sum()))
    assert worst <= TOLERANCE, f"the page's next-token probabilities differ by up to {worst:.2e}"
    assert 1 in kept_counts and max(kept_counts) == len(vocab) - len(never_drawn(vocab))  # the grid's extremes
    assert len(kept_counts) > 10  # and many filters in between


def test_filter_ties_and_the_crossing_token_follow_filter_logits(files: Path) -> None:
    """On hand-made logits with ties at the top-k boundary and at the top-p crossing: the page's kept
    set and probabilities are ``sampling.next_token_probs``'."""
    from transformer_lib.sampling import next_token_probs

    cases = [([2.0, 1.0, 1.0, 1.0, 0.0, -1.0], 2, None), ([2.0, 1.0, 1.0, 1.0, 0.0, -1.0], None, 0.5),
             ([1.0, 1.0, 1.0, 1.0], None, 0.25), ([1.0, 1.0, 1.0, 1.0], None, 0.26), ([3.0, 2.0, 1.0, 0.0], 3, 0.7),
             ([0.5, 0.5, 0.0, 0.0, -2.0], 3, 0.99)]
    got = run_lm(f"""{json.dumps(cases)}.map(([logits, k, p]) =>
      Array.from(window.bookLM.sampling.nextTokenProbs(logits, {{temperature: 0.7, topK: k, topP: p}}, [])))""", files)
    for (logits, k, p), in_page in zip(cases, got, strict=True):
        expected = next_token_probs(torch.tensor(logits, dtype=torch.float64), temperature=0.7, top_k=k,
                                    top_p=p).numpy()
        assert np.array_equal(np.array(in_page) > 0, expected > 0), (logits, k, p)
        assert np.abs(np.array(in_page) - expected).max() <= 1e-12, (logits, k, p)


def test_attention_maps_are_capture_attentions(lm, files: Path) -> None:
    model, vocab = lm
    prompts = [p for p in PROMPTS if p] + ["je ne vois pas ma grande table rouge sous les arbres"]
    got = run_lm(f"{json.dumps(prompts)}.map((p) => model.next(p, {{}}).attention)", files)
    for prompt, maps_in_page in zip(prompts, got, strict=True):
        ids = torch.tensor([[vocab.sos_id, *vocab.encode(prompt)]])
        maps = capture_attention(model, ids)
        reference = np.stack([layer[0].numpy() for layer in maps.decoder_self])  # (layers, heads, T, T)
        in_page = np.array(maps_in_page)
        assert in_page.shape == reference.shape, prompt
        # within 1e-6: the core rounds the scaled token embedding to float32, as the float32 model does
        assert np.abs(in_page - reference).max() <= 1e-6, prompt


def test_greedy_continuations_are_sample_sentences(lm, files: Path) -> None:
    model, vocab = lm
    settings = [{"temperature": 0}, {"temperature": 1, "topK": 1}]
    got = run_lm(f"""(() => {{ const out = [];
      for (const prompt of {json.dumps(PROMPTS)}) for (const s of {json.dumps(settings)})
        out.push(model.sample(prompt, Object.assign({{seed: 7}}, s)));
      return out; }})()""", files)
    i = 0
    for prompt in PROMPTS:
        for s in settings:
            [expected] = sample_sentences(model, vocab, 1, prompt=prompt, temperature=s["temperature"],
                                          top_k=s.get("topK"), generator=torch.Generator().manual_seed(0))
            assert got[i]["text"] == expected.text and got[i]["ended"] == expected.ended, (prompt, s)
            i += 1
    assert any(len(r["tokens"]) > 3 for r in got)


def _chi_square_p_value(counts: np.ndarray, probs: np.ndarray) -> tuple[float, int]:
    """Pearson's chi-square test of ``counts`` against ``probs``, the cells with an expected count
    under 5 pooled into one (the usual rule for the chi-square approximation); (p-value, degrees)."""
    n = counts.sum()
    expected = n * probs
    small = expected < 5
    observed = np.append(counts[~small], counts[small].sum())
    expected = np.append(expected[~small], expected[small].sum())
    if expected[-1] == 0:
        if observed[-1] > 0:  # a token of probability 0 was drawn: impossible under ``probs``
            return 0.0, len(observed) - 1
        observed, expected = observed[:-1], expected[:-1]
    statistic = float(((observed - expected) ** 2 / expected).sum())
    degrees = len(observed) - 1
    # P(chi2 with `degrees` >= statistic): the regularised upper incomplete gamma function
    p = float(torch.special.gammaincc(torch.tensor(degrees / 2, dtype=torch.float64),
                                      torch.tensor(statistic / 2, dtype=torch.float64)))
    return p, degrees


DRAWS = 4000
ALPHA = 0.001  # per setting; 4 settings: the whole test fails by chance with probability under 0.4 %


@pytest.mark.parametrize(("prompt", "settings"), [
    ("", _settings(1.0, None, None)), ("le petit", _settings(0.8, None, 0.9)),
    ("nous ne", _settings(1.5, 12, None)), ("les chiens de mon frère", _settings(1.0, 30, 0.95)),
])
def test_sampled_frequencies_follow_the_librarys_probabilities(lm, files: Path, prompt: str, settings: dict) -> None:
    """The first word of ``DRAWS`` continuations, seeds 0 to DRAWS - 1, counted by id: a chi-square test
    at significance ``ALPHA`` against ``next_word_probs``. The same seed draws the same text again."""
    model, vocab = lm
    got = run_lm(f"""(() => {{ const counts = new Array(model.vocab.length).fill(0);
      for (let seed = 0; seed < {DRAWS}; seed++) {{
        const r = model.sample({json.dumps(prompt)}, Object.assign({{seed, maxNew: 1}}, {json.dumps(settings)}));
        counts[r.ended ? model.ids.eos : r.ids[0]] += 1; }}
      const again = [5, 5].map((seed) => model.sample({json.dumps(prompt)}, {{seed}}).text);
      return {{counts, again}}; }})()""", files)
    counts = np.array(got["counts"])
    probs = next_word_probs(model, vocab, prompt, temperature=settings["temperature"], top_k=settings["topK"],
                            top_p=settings["topP"]).numpy()
    assert counts.sum() == DRAWS and counts[probs == 0].sum() == 0  # never a filtered or banned token
    p, degrees = _chi_square_p_value(counts, probs)
    assert degrees >= 3, "too few cells for the test to say anything"
    assert p > ALPHA, f"chi-square p = {p:.2e} with {degrees} degrees of freedom"
    assert got["again"][0] == got["again"][1]  # seeded: reproducible


def test_the_chi_square_test_can_fail(lm) -> None:
    """The test above rejects draws from a distribution off by a little: at temperature 0.9 instead of 0.8
    (the same kept tokens, their probabilities a little flatter)."""
    model, vocab = lm
    wrong = next_word_probs(model, vocab, "le petit", temperature=0.9).numpy()
    right = next_word_probs(model, vocab, "le petit", temperature=0.8).numpy()
    assert np.array_equal(wrong > 0, right > 0)
    counts = np.bincount(torch.multinomial(torch.tensor(wrong), DRAWS, replacement=True,
                                           generator=torch.Generator().manual_seed(0)).numpy(), minlength=len(wrong))
    assert _chi_square_p_value(counts, right)[0] < ALPHA
    counts = np.bincount(torch.multinomial(torch.tensor(right), DRAWS, replacement=True,
                                           generator=torch.Generator().manual_seed(0)).numpy(), minlength=len(right))
    assert _chi_square_p_value(counts, right)[0] > ALPHA


def test_the_page_refuses_bad_settings_in_words(files: Path) -> None:
    got = run_lm("""[{temperature: -1}, {temperature: NaN}, {topK: 0}, {topK: 2.5}, {topP: 0}, {topP: 1.5},
      {seed: -1}, {seed: 1.5}, {maxNew: 0}, {maxNew: 70}].map((o) => {
        try { model.sample("le chat", o); return null; } catch (e) { return [e.name, e.message]; } })""", files)
    assert all(g is not None and g[0] == "ReaderError" for g in got), got
    assert got[0][1].startswith("The temperature must be a number of at least 0")
    assert got[2][1].startswith("Top-k must be a whole number") and got[4][1].startswith("Top-p must be")
    assert got[6][1].startswith("The seed must be")
    assert got[9][1].startswith("maxNew must be a whole number from 1 to 62")
    long_prompt = run_lm("""(() => { try { model.next(Array(64).fill("le").join(" "), {}); return null; }
      catch (e) { return e.message; } })()""", files)
    assert long_prompt == "The prompt is 64 words long, but this model reads at most 63 after <sos>: shorten it."
    assert math.isfinite(run_lm('model.next(Array(63).fill("le").join(" "), {}).probs[5]', files))


# ---------------------------------------------------------------- the page's explorer, in chromium


def lm_test_page(folder: Path, explorer_html: str) -> Path:
    """A minimal page holding the language-model explorer's HTML (as the kernel writes it), with the
    scripts the book's build adds to chapter 8 and the model files it writes; returns ``folder``."""
    from tools.book_browser import minimal_page

    write_book_lm(folder / "_static" / "live")
    return minimal_page(folder, "language model explorer", explorer_html, (*LIVE_SCRIPTS, *LM_SCRIPTS))


# ---------------------------------------------------------------- the explorer: kernel and page agree


def test_the_page_draws_next_word_figure(lm, files: Path) -> None:
    """The page's bar chart from bookLM.next is the library's figure of the same distribution."""
    model, vocab = lm
    cases = [("le petit", _settings(0.8, None, 0.9)), ("", _settings(1.0, 5, None)),
             ("nous ne", _settings(0.0, None, None))]
    got = run_lm(f"""{json.dumps(cases)}.map(([p, s]) => {{ const r = model.next(p, s);
      r.settings = s; return window.tcLMExplorer.nextWordFigure(r, 1000); }})""", files)
    for (prompt, s), in_page in zip(cases, got, strict=True):
        kwargs = dict(temperature=s["temperature"], top_k=s["topK"], top_p=s["topP"])
        figure = next_word_figure(next_word_probs(model, vocab, prompt, temperature=s["temperature"]),
                                  next_word_probs(model, vocab, prompt, **kwargs), vocab.itos, prompt=prompt,
                                  **kwargs).to_plotly_json()
        assert in_page["layout"]["title"]["text"] == figure["layout"]["title"]["text"]
        for axis in ("xaxis", "yaxis"):
            for key, value in figure["layout"][axis].items():
                assert in_page["layout"][axis][key] == value, (axis, key)
        assert in_page["layout"]["barmode"] == figure["layout"]["barmode"]
        assert in_page["layout"]["height"] == figure["layout"]["height"]
        assert len(in_page["data"]) == len(figure["data"]) == 3
        for js, py in zip(in_page["data"], figure["data"], strict=True):
            for key in ("type", "x", "y", "name", "marker", "mode", "hovertemplate"):
                assert js.get(key) == py.get(key), (prompt, key, js.get(key), py.get(key))
    assert "&lt;sos&gt;" in got[0]["layout"]["title"]["text"]  # a token is text, not a tag


TYPED = [  # (temperature, top-k as typed, top-p, seed as typed)
    (1.0, "", 1.0, "0"), (0.0, "5", 0.9, "42"), (1.0, " 7 ", 0.05, " 4294967295 "), (-0.5, "", 1.0, "0"),
    (1.0, "0", 1.0, "0"), (1.0, "abc", 1.0, "0"), (1.0, "2.5", 1.0, "0"), (1.0, "-3", 1.0, "0"),
    (1.0, "", 0.0, "0"), (1.0, "", 1.5, "0"), (1.0, "", 1.0, ""), (1.0, "", 1.0, "-1"), (1.0, "", 1.0, "1e3"),
    (1.0, "", 1.0, "4294967296"), (1.0, "x" * 100, 1.0, "0"), (1.0, "", 1.0, "<b>1</b>"),
]


def test_the_page_reads_the_controls_as_the_kernel(files: Path) -> None:
    got = run_lm(f"""{json.dumps(TYPED)}.map(([t, k, p, s]) => {{
      try {{ return window.tcLMExplorer.readSettings(t, k, p, s); }} catch (e) {{ return e.message; }} }})""", files)
    refused = 0
    for typed, in_page in zip(TYPED, got, strict=True):
        try:
            s = read_lm_settings(*typed)
            expected: object = {"temperature": s.temperature, "topK": s.top_k, "topP": s.top_p, "seed": s.seed}
        except ValueError as err:
            expected = str(err).split(": ", 1)[1]  # what the kernel's explorer shows
            refused += 1
        assert in_page == expected, typed
    assert refused == len(TYPED) - 3


def test_the_kernel_explorer_shows_messages_never_a_traceback(lm) -> None:
    model, vocab = lm
    explorer = LanguageModelExplorer(model, vocab, prompt="Le petit", top_p=0.9)
    text = lambda widget: html.unescape(re.sub("<[^>]+>", "", widget.value))  # noqa: E731
    assert text(explorer.messages).startswith("Read as \u201cle petit\u201d")
    [drawn] = sample_sentences(model, vocab, 1, prompt="le petit", top_p=0.9,
                               generator=torch.Generator().manual_seed(0))
    assert f"le petit {drawn.text} (" in text(explorer.output_text)
    figure = explorer.bars.outputs[0]["data"]["application/vnd.plotly.v1+json"]
    assert figure["layout"]["title"]["text"].startswith("Next word after \u201c&lt;sos&gt; le petit\u201d")
    state = json.loads(re.search(r'class="tc-live-state">(.*?)</script>', explorer._repr_mimebundle_()["text/html"],
                                 re.S).group(1))
    assert state["result"]["tokens"] == ["<sos>", "le", "petit"] and len(state["result"]["probs"]) == len(vocab)
    assert np.abs(np.array(state["result"]["probs"]) - next_word_probs(model, vocab, "le petit", top_p=0.9).numpy()
                  ).max() < 1e-5
    for control, value, message in [(explorer.top_k, "abc", "Top-k must be"), (explorer.seed, "-1", "The seed must"),
                                     (explorer.prompt, " ".join(["le"] * 64), "The prompt is 64 words long")]:
        good = explorer.seed.value if control is not explorer.seed else "0"
        control.value = value
        assert text(explorer.messages).startswith(message), text(explorer.messages)
        assert explorer.bars.outputs and explorer.attention.outputs  # the last good figures stay, as in the page,
        assert text(explorer.messages).endswith(MESSAGES["stale"])  # said to be stale,
        assert explorer.output_text.value == ""  # and the last continuation goes
        control.value = "" if control is explorer.top_k else ("0" if control is explorer.seed else "nous")
        assert "must" not in text(explorer.messages) and good
    explorer.head.value = 1
    maps = explorer.attention.outputs[0]["data"]["application/vnd.plotly.v1+json"]
    assert "layer 2, head 2" in maps["layout"]["title"]["text"]


@pytest.fixture(scope="module")
def lm_url(lm, tmp_path_factory: pytest.TempPathFactory):
    from tools.book_browser import serve

    model, vocab = lm
    explorer = LanguageModelExplorer(model, vocab, prompt="le petit", top_p=0.9)
    with serve(lm_test_page(tmp_path_factory.mktemp("lm-page"), explorer._repr_mimebundle_()["text/html"])) as base:
        yield base + "index.html"


def _title(page, which: str) -> str:
    return page.evaluate(f"() => document.querySelector('.tc-lm .{which} .gtitle').textContent")


def test_the_page_agrees_with_python_in_chromium(lm, browser, lm_url: str) -> None:
    """What Node checked, once in the browser: the page's next-token probabilities and a greedy continuation."""
    from .test_live_model import Visit

    model, vocab = lm
    settings = [_settings(0.7, None, 0.8), _settings(1.3, 10, None), _settings(0.0, None, None)]
    visit = Visit(browser, lm_url)
    try:
        got = visit.page.evaluate("""async (settings) => { const out = [];
          for (const s of settings) out.push((await window.bookLM.next("les chiens de mon", s)).probs);
          out.push(await window.bookLM.sample("les chiens", {temperature: 0})); return out; }""", settings)
    finally:
        visit.close()
    assert not visit.problems, visit.problems
    for s, in_page in zip(settings, got, strict=False):
        expected = next_word_probs(model, vocab, "les chiens de mon", temperature=s["temperature"], top_k=s["topK"],
                                   top_p=s["topP"]).numpy()
        assert np.abs(np.array(in_page) - expected).max() <= TOLERANCE
    [greedy] = sample_sentences(model, vocab, 1, prompt="les chiens", temperature=0.0)
    assert got[-1]["text"] == greedy.text and got[-1]["ended"] == greedy.ended


SCREENSHOTS = Path(__file__).resolve().parent.parent / "screenshots"


@pytest.mark.parametrize("width", [1366, 390])
def test_the_explorer_is_live_offline_and_says_what_is_wrong(lm, browser, lm_url: str, width: int) -> None:
    from .test_live_model import Visit

    model, vocab = lm
    weights, manifest = file_names(LM_STEM)
    visit = Visit(browser, lm_url, width)
    page = visit.page
    explorer = page.locator('div.tc-live[data-explorer="lm"]')
    try:
        page.wait_for_function("() => document.querySelector('.tc-lm .tc-lm-maps .main-svg .hm')", timeout=30_000)
        kernel_title = _title(page, "tc-lm-bars")
        fetched_before = (visit.fetched(manifest), visit.fetched(weights))
        # the prompt, by keyboard: Enter draws the distribution and a continuation with the seed
        box = explorer.get_by_label("Prompt", exact=True)
        box.fill("Les chiens ne")
        box.press("Enter")
        page.wait_for_function("() => document.querySelector('.tc-lm .tc-output').textContent.includes('seed 0')",
                               timeout=30_000)
        first = explorer.locator(".tc-output").inner_text()
        notes = explorer.locator(".tc-messages").inner_text()
        # the temperature slider, by keyboard
        slider = explorer.get_by_role("slider", name="Temperature")
        slider.focus()
        slider.press("ArrowRight")
        page.wait_for_function("() => document.querySelector('.tc-lm .tc-lm-bars .gtitle').textContent"
                               ".includes('T = 1.05')", timeout=10_000)
        # the maps' head; the seed: the same seed draws the same text, the next seed its own
        explorer.get_by_label("Head", exact=True).select_option(label="head 3")
        page.wait_for_function("() => document.querySelector('.tc-lm .tc-lm-maps .gtitle').textContent"
                               ".includes('head 3')", timeout=10_000)
        explorer.get_by_role("button", name="Sample").click()
        page.wait_for_function("() => document.querySelector('.tc-lm .tc-output').textContent.includes('seed 0')",
                               timeout=10_000)
        again = explorer.locator(".tc-output").inner_text()
        explorer.get_by_role("button", name="Sample").click()
        page.wait_for_timeout(300)
        assert explorer.locator(".tc-output").inner_text() == again
        explorer.get_by_role("button", name="Next seed").click()
        page.wait_for_function("() => document.querySelector('.tc-lm .tc-output').textContent.includes('seed 1)')",
                               timeout=10_000)
        bars_before_error = _title(page, "tc-lm-bars")
        # bad input: the kernel's messages; the last good figures stay
        shown = {}
        for label, value in (("Top-k", "abc"), ("Seed", "-1"), ("Top-k", "0")):
            explorer.get_by_label(label, exact=True).fill(value)
            explorer.get_by_label(label, exact=True).press("Enter")
            page.wait_for_function("() => document.querySelector('.tc-lm .tc-messages .tc-error')", timeout=10_000)
            shown[(label, value)] = explorer.locator(".tc-messages").inner_text()
            explorer.get_by_label(label, exact=True).fill("" if label == "Top-k" else "0")
            explorer.get_by_label(label, exact=True).press("Enter")
            page.wait_for_function("() => !document.querySelector('.tc-lm .tc-messages .tc-error')", timeout=10_000)
        box.fill(" ".join(["le"] * 64))
        box.press("Enter")
        page.wait_for_function("() => document.querySelector('.tc-lm .tc-messages .tc-error')", timeout=10_000)
        too_long = explorer.locator(".tc-messages").inner_text()
        still = _title(page, "tc-lm-bars")
        continuation_after_refusal = explorer.locator(".tc-output").inner_text()
        stale = page.evaluate("() => [...document.querySelectorAll('.tc-lm .tc-figure.tc-stale')].length")
        box.fill("")
        box.press("Enter")
        page.wait_for_function("() => document.querySelector('.tc-lm .tc-messages .tc-info')", timeout=10_000)
        empty = explorer.locator(".tc-messages").inner_text()
        fetched_after = (visit.fetched(manifest), visit.fetched(weights))
        SCREENSHOTS.mkdir(exist_ok=True)
        box.fill("le petit chat")
        box.press("Enter")
        page.wait_for_function("() => document.querySelector('.tc-lm .tc-output').textContent"
                               ".includes('le petit chat')", timeout=10_000)
        page.wait_for_timeout(500)
        page.screenshot(path=str(SCREENSHOTS / f"live-lm-{width}.png"), full_page=True)
    finally:
        visit.close()
    assert not visit.problems, visit.problems
    assert kernel_title.startswith("Next word after \u201c<sos> le petit\u201d")  # the kernel's, before any fetch
    assert fetched_before == (0, 0), "the language model was fetched before the reader used the explorer"
    assert fetched_after == (1, 1)  # fetched once, on first use
    assert notes.startswith("Read as \u201cles chiens ne\u201d")
    assert first.startswith("Continuation: les chiens ne ") and again.startswith("Continuation: les chiens ne ")
    for (label, value), message in shown.items():
        try:
            read_lm_settings(1.05, value if label == "Top-k" else "", 0.9, value if label == "Seed" else "0")
        except ValueError as err:
            assert message.strip().splitlines() == [str(err).split(": ", 1)[1], MESSAGES["stale"]], (label, value)
        else:
            raise AssertionError(f"{label} {value!r}: the kernel accepts it")
    assert too_long.strip().splitlines() == [
        "The prompt is 64 words long, but this model reads at most 63 after <sos>: shorten it.", MESSAGES["stale"]]
    assert still == bars_before_error  # the last good figure stays while an error shows, marked stale,
    assert stale == 2 and continuation_after_refusal == ""  # and the last prompt's continuation goes
    assert empty.strip().startswith("No prompt: the bars are the model's bets")
    assert all(urlparse(u).hostname == "127.0.0.1" for u in visit.requests if urlparse(u).scheme.startswith("http"))


def test_the_lm_scripts_copy_nothing_of_the_theme() -> None:
    """As tests/test_live_js.py checks the other scripts: palette, toolbar, font and messages come from the theme."""
    from transformer_lib.browser.theme import MESSAGES
    from transformer_lib.figures.display import BOOK_TEMPLATE, MODEBAR_REMOVED, PALETTE

    for name in LM_SCRIPTS:
        text = (STATIC / name).read_text()
        copies = [c for c in PALETTE if c.lower() in text.lower()] + [b for b in MODEBAR_REMOVED if b in text]
        copies += [BOOK_TEMPLATE.layout.font.family] * (BOOK_TEMPLATE.layout.font.family in text)
        copies += [m for m in MESSAGES.values() if len(m) > 20 and m.split("{")[0][:20] in text]
        assert not copies, f"{name} copies {copies}: read them from the theme (transformer_lib.browser.theme)"


def test_the_lm_files_hold_its_weights_and_what_it_never_draws(lm, files: Path) -> None:
    from transformer_lib.browser.model import browser_model_files, read_weights

    model, vocab = lm
    manifest = json.loads((files / file_names(LM_STEM)[1]).read_text())
    assert manifest["model_class"] == "DecoderOnlyTransformer" and manifest["src_vocab"] is None
    assert manifest["tgt_vocab"] == list(vocab.itos) and manifest["never_drawn"] == list(never_drawn(vocab))
    shipped = book_lm().model.state_dict()  # float32, as written
    weights = read_weights(files, LM_STEM)
    assert set(weights) == set(shipped) and all(np.array_equal(weights[k], v.numpy()) for k, v in shipped.items())
    # the tied output matrix is stored once
    assert manifest["weights"]["tensors"]["lm_head.weight"]["offset"] == (
        manifest["weights"]["tensors"]["embed.token.embedding.weight"]["offset"])
    with pytest.raises(ValueError, match="src_vocab"):
        browser_model_files(model, vocab, vocab, LM_STEM)
    with pytest.raises(ValueError, match="stem"):
        file_names("../book-lm")


def test_next_seed_draws_again(lm) -> None:
    model, vocab = lm
    explorer = LanguageModelExplorer(model, vocab, prompt="nous", seed=41)
    first = explorer.output_text.value
    explorer.next_seed.click()
    assert explorer.seed.value == "42" and "seed 42" in explorer.output_text.value
    [drawn] = sample_sentences(model, vocab, 1, prompt="nous", generator=torch.Generator().manual_seed(42))
    assert f"<b>{html.escape(drawn.text)}</b>" in explorer.output_text.value and "seed 41" in first


def test_the_built_book_runs_the_lm_explorer_in_chapter_8_only(site: Path, browser) -> None:
    """Chapter 8 holds the explorer (re-execute the notebook if not) with book-lm.js and lm-explorer.js;
    no other page loads them; the model is fetched on first use and the distribution redrawn."""
    from tools.book_browser import html_pages, serve

    from .test_live_model import Visit

    chapter = site / "book" / "08_language_model.html"
    page_html = chapter.read_text()
    assert 'data-explorer="lm"' in page_html, "chapter 8: no language-model explorer (re-execute the notebook)"
    assert "live/book-lm.js" in page_html and "live/lm-explorer.js" in page_html
    others = [p.name for p in html_pages(site) if p != chapter and "live/book-lm.js" in p.read_text()]
    assert not others, f"pages that load the language model's scripts without its explorer: {others}"
    weights, manifest = file_names(LM_STEM)
    assert (site / "_static" / "live" / weights).is_file() and (site / "_static" / "live" / manifest).is_file()
    with serve(site) as base:
        visit = Visit(browser, f"{base}book/08_language_model.html")
        try:
            page = visit.page
            explorer = page.locator('div.tc-live[data-explorer="lm"]')
            explorer.locator(".tc-lm-bars .main-svg").first.wait_for(timeout=30_000)
            before = (visit.fetched(manifest), visit.fetched(weights))
            explorer.get_by_label("Prompt", exact=True).fill("nous ne")
            explorer.get_by_label("Prompt", exact=True).press("Enter")
            page.wait_for_function("() => document.querySelector('.tc-lm .tc-lm-bars .gtitle').textContent"
                                   ".includes('nous ne')", timeout=30_000)
            after = (visit.fetched(manifest), visit.fetched(weights))
        finally:
            visit.close()
    assert not visit.problems, visit.problems
    assert before == (0, 0) and after == (1, 1)


def test_the_page_notes_what_the_kernel_notes(lm, files: Path) -> None:
    """How the prompt was read (capitals, punctuation, unknown words, English): the same notes on both
    sides; an English prompt (most words unknown) is told first that this model writes French."""
    model, vocab = lm
    prompts = ["Le petit chat!", "le zèbre et le " + "x" * 50, "nous", "L'homme voit 3 chats.", "the small cats sleep",
               "le petit zèbre"]
    got = run_lm(f"{json.dumps(prompts)}.map((p) => [model.next(p, {{}}).notes, model.next(p, {{}}).text])", files)
    for prompt, (notes, text) in zip(prompts, got, strict=True):
        explorer = LanguageModelExplorer(model, vocab, prompt=prompt)
        assert explorer.payload["notes"] == notes and explorer.payload["text"] == text, prompt
    assert any(got[1][0]) and got[2][0] == []
    assert got[4][0][0] == MESSAGES["lm_writes_french"] and got[4][0][1].startswith("Not in the vocabulary")
    assert got[5][0] and MESSAGES["lm_writes_french"] not in got[5][0]  # 1 word of 3 unknown: not most
