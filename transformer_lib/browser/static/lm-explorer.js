/* Chapter 8's language-model explorer, live in the page: every div.tc-live[data-explorer="lm"].
 *
 * The page's form of transformer_lib.browser.lm_explorer.LanguageModelExplorer: a prompt, temperature,
 * top-k and top-p, a seed; the next word's distribution as transformer_lib.figures.sampling's
 * next_word_figure draws it, a continuation drawn with the seed, and the causal attention maps behind
 * the distribution (explorers.js's attentionFigure, as figures.attention.attention_figure). The model
 * is book-lm.js's (window.bookLM), fetched the first time the reader changes something; until then the
 * figures are the kernel's, from the explorer's saved state. The controls are read as
 * lm_explorer.read_lm_settings reads them, with the theme's messages (tests/test_live_lm.py compares).
 * Outside a page (Node, in the tests) the functions that compute are window.tcLMExplorer.
 */
(function () {
  "use strict";
  if (window.tcLMExplorer) return;
  const book = window.bookModel;
  const explorers = window.tcExplorers;
  const fill = (name, values) => book.fill(name, values);
  const WHOLE_NUMBER = /^[0-9]+$/;

  const sig = (v) => Number(v.toPrecision(4)); // the figure's four significant digits
  const g = (v) => String(Number(v.toPrecision(6))); // Python's f"{v:g}", for the settings in a title
  const setting = (v) => (v === null || v === undefined ? "off" : g(v));
  const label = (s) => String(s).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  const shorten = (s, limit) => (s.length <= (limit || 40) ? s : s.slice(0, (limit || 40) - 1) + "\u2026");

  // lm_explorer.read_lm_settings: the controls as sampling settings, or a ReaderError with the message
  function readSettings(temperature, topKText, topP, seedText) {
    const shown = (v) => (typeof v === "number" && !Number.isInteger(v) ? g(v) : v); // Python's f"{v:g}"
    const refuse = (name, values) => new book.ReaderError(fill(name, Object.fromEntries(
      Object.entries(values).map(([k, v]) => [k, shown(v)]))));
    if (typeof temperature !== "number" || !Number.isFinite(temperature) || temperature < 0) {
      throw refuse("lm_temperature", { value: temperature });
    }
    const k = String(topKText).trim();
    if (k && !(WHOLE_NUMBER.test(k) && Number(k) >= 1)) throw refuse("lm_top_k", { value: shorten(k) });
    if (typeof topP !== "number" || !(topP > 0 && topP <= 1)) throw refuse("lm_top_p", { value: topP });
    const seed = String(seedText).trim();
    if (!(WHOLE_NUMBER.test(seed) && Number(seed) <= window.bookLM.maxSeed)) {
      throw refuse("lm_seed", { value: shorten(seed), max: window.bookLM.maxSeed });
    }
    return { temperature, topK: k ? Number(k) : null, topP, seed: Number(seed) };
  }

  // figures.sampling.next_word_figure, from bookLM.next's result (or the kernel's, saved)
  function nextWordFigure(result, width) {
    const { probs, unfiltered, vocab, settings } = result;
    const order = [...unfiltered.keys()].sort((a, b) => unfiltered[b] - unfiltered[a]).slice(0, book.theme().limits.lm_shown); // stable
    const kept = order.map((i) => probs[i] > 0);
    const words = order.map((i) => label(vocab[i]));
    const colorway = book.theme().layout.colorway;
    const bars = (keep) => ({
      type: "bar", x: words, y: order.map((i, n) => (kept[n] === keep ? sig(unfiltered[i]) : null)),
      name: keep ? "kept by the filter" : "cut by the filter (hatched)",
      marker: { color: colorway[0], opacity: keep ? 1 : 0.45, pattern: { shape: keep ? "" : "/", solidity: 0.4 } },
      hovertemplate: "%{x}: %{y:.3f} at this temperature, " + (keep ? "kept" : "cut") + "<extra></extra>",
    });
    const nKept = probs.filter((p) => p > 0).length;
    const prompt = label(["<sos>", ...book.words(result.text)].join(" "));
    const title = `Next word after \u201c${prompt}\u201d<br>T = ${g(settings.temperature)}, top-k ` +
      `${setting(settings.topK)}, top-p ${setting(settings.topP)}: ${nKept} of ${vocab.length} tokens kept`;
    const axis = book.theme().axis;
    const layout = explorers.baseLayout({
      title: { text: title }, barmode: "overlay", height: 430,
      xaxis: Object.assign({}, axis, { title: { text: `next word (the ${order.length} most probable at this ` +
        "temperature)" }, tickangle: -45 }),
      yaxis: Object.assign({}, axis, { title: { text: "probability" }, rangemode: "tozero" }),
    });
    if (explorers.dom.isNarrow(width)) { // a phone: the axis title on two lines, the legend below it
      layout.margin = { l: 50, r: 10, t: 110, b: 50 };
      layout.title.font = { size: 15 };
      layout.height = 540;
      layout.xaxis.title.text = layout.xaxis.title.text.replace(" (", "<br>(");
      Object.assign(layout.xaxis, { tickangle: -90, dtick: 1, tickfont: { size: 11 } }); // every word, upright
      layout.legend = Object.assign({}, layout.legend, { y: -0.55 });
    }
    const data = [bars(true), bars(false), {
      type: "scatter", x: words, y: order.map((i) => sig(probs[i])), mode: "markers", name: "probability in the draw",
      marker: { symbol: "diamond", size: 10, color: colorway[1] },
      hovertemplate: "%{x}: drawn with probability %{y:.3f}<extra></extra>",
    }];
    return { data, layout };
  }

  // the causal maps in explorers.js's attentionFigure (figures.attention.attention_figure's "decoder_self")
  function attentionFigure(result, layer, head, width) {
    return explorers.attentionFigure({ src_tokens: [], decoder_tokens: result.tokens,
      attention: { decoder_self: result.attention } }, "decoder_self", layer, head, width);
  }

  function lmExplorer(root, state) {
    const { el, labelled, select, setOptions, message, markStale, name, sentenceCase, debounce, plotlyReady } =
      explorers.dom;
    const slider = (min, max, step, value) => el("input", { type: "range", min: String(min), max: String(max),
      step: String(step), value: String(value) });
    const withReadout = (text, input) => {
      const field = labelled(text, input);
      const readout = el("output", { for: input.id, class: "tc-readout" });
      const update = () => { readout.textContent = Number(input.value).toFixed(2); };
      input.addEventListener("input", update);
      update();
      field.appendChild(readout);
      return field;
    };
    const prompt = el("input", { type: "text", placeholder: "type French words, then Enter", autocomplete: "off",
      spellcheck: "false" });
    prompt.value = state.prompt || "";
    const temperature = slider(0, 2, 0.05, state.temperature);
    const topP = slider(0.05, 1, 0.05, state.top_p);
    const topK = el("input", { type: "text", inputmode: "numeric", placeholder: "empty: all", size: "6" });
    topK.value = state.top_k || "";
    const seed = el("input", { type: "text", inputmode: "numeric", size: "10" });
    seed.value = String(state.seed);
    const show = el("button", { type: "submit", class: "tc-button", text: "Show" });
    const sampleButton = el("button", { type: "button", class: "tc-button", text: "Sample" });
    const nextSeed = el("button", { type: "button", class: "tc-button", text: "Next seed" });
    const form = el("form", { class: "tc-lm-form" }, [
      el("div", { class: "tc-row tc-sentence" }, [labelled("Prompt", prompt), show]),
      el("div", { class: "tc-row tc-slider" }, [withReadout("Temperature", temperature)]),
      el("div", { class: "tc-row tc-slider" }, [withReadout("Top-p", topP)]),
      el("div", { class: "tc-row tc-controls" }, [labelled("Top-k", topK), labelled("Seed", seed), sampleButton, nextSeed]),
    ]);
    const messages = el("div", { class: "tc-messages", role: "status" });
    const output = el("div", { class: "tc-output", "aria-live": "polite" });
    const bars = el("div", { class: "tc-figure tc-lm-bars" });
    const layer = select([["layer 1", 0]], 0);
    const head = select([["all heads", "all"]], "all");
    const mapControls = el("div", { class: "tc-row tc-controls" }, [labelled("Layer", layer), labelled("Head", head)]);
    const maps = el("div", { class: "tc-figure tc-lm-maps" });
    const note = el("p", { class: "tc-note", text: "This explorer runs chapter 8's language model in your browser: " +
      "the model (about 0.5 MB) is downloaded the first time you change a setting. The page draws with a seeded " +
      "generator of its own: a seed gives the same continuation every time here, not the kernel's." });
    root.appendChild(el("div", { class: "tc-live-explorer tc-lm" },
      [form, messages, output, bars, mapControls, maps, note]));

    let result = null;
    let layerChosen = false;
    let busy = 0;
    const width = () => bars.clientWidth || root.clientWidth;

    function settings() {
      return readSettings(Number(temperature.value), topK.value, Number(topP.value), seed.value);
    }
    function fail(err) { // the continuation goes; the figures of the last prompt read stay, marked stale
      const known = err && err.name === "ReaderError";
      message(messages, known ? sentenceCase(err.message) :
        fill("failed", { error: err && err.message ? err.message : err }), known ? err.level : "error");
      output.textContent = "";
      markStale(messages, [bars, maps], true);
    }
    function drawBars() {
      if (!result || !plotlyReady()) return;
      const fig = nextWordFigure(result, width());
      window.Plotly.react(bars, fig.data, fig.layout, explorers.plotConfig());
      name(bars, fig.layout); // the text alternative reads <sos>, not its markup
      bars.setAttribute("aria-label", bars.getAttribute("aria-label").replace(/&lt;/g, "<").replace(/&gt;/g, ">")
        .replace(/&amp;/g, "&"));
    }
    let mapsDrawnFor = null; // the tokens of the maps drawn
    function drawMaps() {
      if (!result || !plotlyReady()) return;
      mapsDrawnFor = result.tokens.join(" ");
      const h = head.value === "all" ? "all" : Number(head.value);
      const fig = attentionFigure(result, Number(layer.value), h, maps.clientWidth || root.clientWidth);
      window.Plotly.react(maps, fig.data, fig.layout, explorers.plotConfig());
      name(maps, fig.layout);
    }
    function setResult(r) {
      result = r;
      messages.textContent = "";
      markStale(messages, [bars, maps], false);
      if (!book.words(r.text).length) messages.appendChild(el("div", { class: "tc-message tc-info", text: fill("lm_empty", {}) }));
      for (const n of r.notes || []) messages.appendChild(el("div", { class: "tc-message tc-warning", text: n }));
      const nLayers = r.attention.length;
      const nHeads = r.attention[0].length;
      setOptions(layer, Array.from({ length: nLayers }, (_, i) => [`layer ${i + 1}`, i]),
        layerChosen ? Math.min(Number(layer.value), nLayers - 1) : nLayers - 1);
      setOptions(head, [["all heads", "all"], ...Array.from({ length: nHeads }, (_, h) => [`head ${h + 1}`, h])],
        head.value === "all" || Number(head.value) < nHeads ? head.value : "all");
      drawBars();
      // temperature, top-k and top-p leave the attention as it was: redraw the maps for a new prompt only
      if (r.tokens.join(" ") !== mapsDrawnFor) drawMaps();
    }
    async function loading(task) {
      const ticket = ++busy;
      if (window.bookLM.loadMs === null) message(messages, fill("lm_loading", {}), "info");
      try {
        const value = await task();
        return ticket === busy ? value : null; // a later action supersedes this one
      } catch (err) {
        if (ticket === busy) fail(err);
        return null;
      }
    }
    function settingsOrFail() { // null when a control is wrong: its message shows, the last good figures stay
      try {
        return settings();
      } catch (err) {
        fail(err);
        return null;
      }
    }
    async function update() {
      const s = settingsOrFail();
      if (!s) return;
      const r = await loading(() => window.bookLM.next(prompt.value, s));
      if (r) {
        setResult(r);
        await sample();
      }
    }
    async function sample() {
      const s = settingsOrFail();
      if (!s) return;
      const r = await loading(() => window.bookLM.sample(prompt.value, s));
      if (!r) return;
      if (!result || result.text !== r.prompt) { // the prompt changed since the figures were drawn
        await update();
        return;
      }
      const ending = r.ended ? "then <eos>" : `cut at ${r.maxNew} words`;
      output.textContent = "";
      output.append(el("b", { text: "Continuation:" }), ` ${r.prompt} `, el("b", { text: r.text }), " ",
        el("span", { class: "tc-muted", text: `(${ending}; seed ${r.seed})` }));
    }

    form.addEventListener("submit", (event) => { event.preventDefault(); update(); });
    for (const control of [temperature, topP, topK]) control.addEventListener("change", update);
    seed.addEventListener("change", update); // as every setting (a wrong seed's message then goes)
    nextSeed.addEventListener("click", () => {
      const s = settingsOrFail();
      if (!s) return;
      seed.value = String((s.seed + 1) % (window.bookLM.maxSeed + 1));
      update();
    });
    sampleButton.addEventListener("click", sample);
    layer.addEventListener("change", () => { layerChosen = true; drawMaps(); });
    head.addEventListener("change", drawMaps);
    window.addEventListener("resize", debounce(() => { drawBars(); drawMaps(); }, 200));

    if (state.result) {
      setResult(state.result); // the kernel's: no model is fetched until the reader changes something
      output.textContent = "";
      output.append(el("span", { class: "tc-muted", text: "Press Sample to draw a continuation with the seed." }));
    } else {
      message(messages, fill("lm_empty", {}), "info");
    }
    root.tcExplorer = { update, sample, prompt, temperature, topP, topK, seed, show, sampleButton, nextSeed, layer, head,
      bars, maps, output, messages, result: () => result };
  }

  window.tcLMExplorer = { readSettings, nextWordFigure, attentionFigure };
  explorers.register("lm", lmExplorer); // explorers.js starts it, as every explorer
})();
