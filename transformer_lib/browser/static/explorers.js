/* The explorers of the static book, live in the page (no kernel): every div.tc-live becomes one.
 *
 *   data-explorer="attention"   type a sentence, press Translate or Enter: the book's model
 *                               (book-model.js, loaded on first use) translates it, and the
 *                               heatmaps show any attention map behind the translation. With
 *                               state.replay, a slider picks a snapshot of the model's training
 *                               (translated again with bookModel.translate(text, {step})) beside
 *                               the training curve.
 *   data-explorer="positional"  positional-explorer.js, loaded next, on this file's page helpers.
 * The settings (and the kernel's first translation) come in a <script class="tc-live-state">
 * written by transformer_lib.browser.page. Figures mirror transformer_lib.figures.attention's
 * attention_figure and transformer_lib.figures.positions' positional_encoding_figure, described in
 * plotly's form; the attention maps are drawn on a canvas by heatmap-canvas.js (fast enough to redraw
 * at every Enter), the other figures with the book's copy of plotly.js. Their font, palette, axis style, colour scales and toolbar, and the
 * messages, are the page's theme (transformer_lib.browser.theme, read through bookText.theme()):
 * nothing of the book's look is copied here. Outside a page (Node, in the tests) the functions that
 * compute are window.tcExplorers.
 *
 * Longer than 400 lines: the page's helpers that every explorer registers on (start, run, register)
 * and the attention explorer they first served; positional-explorer.js and the others add to them.
 */
(function () {
  "use strict";

  // The book's plotly template (transformer_lib.figures.display.BOOK_TEMPLATE), toolbar (its
  // PLOTLY_CONFIG: no "Share chart...", which uploads to plotly's cloud) and colour scales, from the theme.
  const theme = () => window.bookText.theme(); // book-text.js: on every page with an explorer
  const axisStyle = () => theme().axis;
  const colorscale = (name) => theme().colorscales[name];
  const plotConfig = () => theme().config;
  const isNarrow = (width) => width < theme().limits.narrow_px; // a phone: one figure per row

  // A figure's text alternative, as transformer_lib.figures.display gives the book's other figures.
  function name(figure, layout) {
    const text = (layout.title && layout.title.text || "").replace(/<[^>]+>/g, " ").replace(/\s+/g, " ").trim();
    figure.setAttribute("role", "figure");
    figure.setAttribute("aria-label", `Plot: ${text}`);
  }

  function baseLayout(extra) {
    return Object.assign(JSON.parse(JSON.stringify(theme().layout)), extra); // a copy: figures change theirs
  }

  const escapeHtml = (s) => String(s).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;");
  const sentenceCase = (s) => s.charAt(0).toUpperCase() + s.slice(1);

  let counter = 0;
  function el(tag, attrs, children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "text") node.textContent = v;
      else node.setAttribute(k, v);
    }
    for (const child of children || []) node.appendChild(child);
    return node;
  }
  function labelled(text, control) {
    control.id = control.id || `tc-live-${++counter}`;
    return el("span", { class: "tc-field" }, [el("label", { for: control.id, text }), control]);
  }
  function select(options, value) {
    const node = el("select");
    setOptions(node, options, value);
    return node;
  }
  function setOptions(node, options, value) {
    node.textContent = "";
    for (const [label, v] of options) node.appendChild(el("option", { value: String(v), text: label }));
    node.value = String(value);
  }
  function message(box, text, level) {
    box.textContent = "";
    if (text) box.appendChild(el("div", { class: `tc-message tc-${level || "info"}`, text }));
  }
  // The start of every translating explorer's run: the typed text checked as the page checks it
  // (bookText.checkText; refused: `refused` runs, if given, its message shows, and false); accepted: the
  // button waits and the first run says the model is loading.
  function acceptText(text, messages, button, refused) {
    try {
      window.bookText.checkText(text);
    } catch (err) {
      if (refused) refused();
      message(messages, err.message, err.level);
      return false;
    }
    button.disabled = true;
    if (window.bookModel.loadMs === null) message(messages, window.bookText.fill("loading", {}), "info");
    return true;
  }
  // An input refused while figures of an earlier one stay on screen: they are marked as stale (dimmed,
  // and the "stale" message says so after the refusal's) until the next good input clears the mark.
  function markStale(box, figures, stale) {
    for (const figure of figures) figure.classList.toggle("tc-stale", stale);
    if (stale && figures.some((figure) => figure.childElementCount)) {
      box.appendChild(el("div", { class: "tc-message tc-info", text: window.bookText.fill("stale", {}) }));
    }
  }
  function plotlyReady() {
    return typeof window.Plotly !== "undefined";
  }

  // ============================================================== attention explorer

  const KINDS = [["encoder self-attention", "encoder_self"], ["decoder self-attention", "decoder_self"],
    ["cross-attention", "cross"]];
  const KIND_TITLES = { encoder_self: "encoder self-attention", decoder_self: "decoder self-attention",
    cross: "cross-attention (decoder \u2192 encoder)" };
  const AXIS_TITLES = { encoder_self: ["source token (key)", "source token (query)"],
    decoder_self: ["target token (key)", "target token (query)"], cross: ["source token (key)", "target token (query)"] };

  function tokensFor(result, kind) {
    const src = result.src_tokens;
    const tgt = result.decoder_tokens;
    return { encoder_self: [src, src], decoder_self: [tgt, tgt], cross: [tgt, src] }[kind];
  }

  function heatmap(z, queries, keys, xaxis, yaxis, name) {
    return {
      type: "heatmap", z, coloraxis: "coloraxis", xaxis, yaxis, name,
      text: queries.map((q, i) => keys.map((k, j) =>
        `query ${i} \u201c${escapeHtml(q)}\u201d \u2192 key ${j} \u201c${escapeHtml(k)}\u201d`)),
      hovertemplate: "%{text}<br>weight %{z:.3f}<extra></extra>",
    };
  }

  // Token axes are laid out here, not measured while drawing: the margins come from the longest token
  // (tokenMargins), sized generously so that every label stays whole at any width. (The same holds for
  // plotly, which draws these maps in the LM explorer: its automargin measures every tick label with a
  // forced layout each, and a margin that changes with the sentence makes it draw the figure twice.)
  function tokenAxis(tokens, extra) {
    return Object.assign({}, axisStyle(), {
      tickmode: "array", tickvals: tokens.map((_, i) => i), ticktext: tokens.map(escapeHtml),
      automargin: false, ticklabeloverflow: "allow",
      showgrid: false, zeroline: false, // under the heatmap's cells: drawn for nothing on every redraw
    }, extra);
  }

  // Room (px) for the tick labels of the longest token and the axis title beside them: CHAR_PX a
  // character (more than a character of the theme's sans-serif at its size), the x labels at 45 degrees.
  const CHAR_PX = 8;
  const LABEL_PAD_PX = 12; // from the y axis line to its tick labels' far side, and on to the axis title
  function tokenMargins(queries, keys, margin) {
    const longest = (tokens) => CHAR_PX * Math.max(1, ...tokens.map((t) => String(t).length));
    const size = theme().layout.font.size;
    return Object.assign({}, margin, {
      l: Math.max(margin.l, longest(queries) + 2 * size + 20),
      b: Math.max(margin.b, Math.ceil((longest(keys) + size) * Math.SQRT1_2) + 2 * size + 20),
    });
  }

  // The y axis's title ("query" left of the query tokens), written as an annotation placed beside the
  // tick labels: an axis title makes plotly measure every tick label of its axis (a forced layout each,
  // most of the time from Enter to the drawn maps, benchmarks/live_model.py) to move the title off
  // them. The labels are measured here instead, on a canvas (no layout). (The x axes keep their titles:
  // tests/test_reader.py takes a rotated annotation as a y axis's title only.)
  let ruler = null;
  function textWidth(tokens, font) {
    if (typeof document === "undefined") return CHAR_PX * Math.max(0, ...tokens.map((t) => String(t).length)); // Node
    ruler = ruler || document.createElement("canvas").getContext("2d");
    ruler.font = `${font.size}px ${font.family}`;
    return Math.max(0, ...tokens.map((t) => ruler.measureText(String(t)).width));
  }
  function yTitle(text, xDomain, yDomain, queries) {
    const font = theme().layout.font;
    return { text, xref: "paper", yref: "paper", showarrow: false, textangle: -90,
      font: { size: Math.round(1.2 * font.size) }, // plotly's axis title size: its bigFont of the layout's font
      x: xDomain[0], y: (yDomain[0] + yDomain[1]) / 2, xanchor: "right", yanchor: "middle",
      xshift: -(Math.ceil(textWidth(queries, font)) + LABEL_PAD_PX) };
  }

  // transformer_lib.figures.attention.attention_figure: one head, or every head in a grid.
  function attentionFigure(result, kind, layer, head, width) {
    const weights = result.attention[kind][layer];
    const [queries, keys] = tokensFor(result, kind);
    const nHeads = weights.length;
    const narrow = isNarrow(width);
    const title = `${KIND_TITLES[kind]}, layer ${layer + 1}`;
    const layout = baseLayout({
      // ticklabeloverflow "allow": the bar's labels 0 to 1 always fit, and plotly need not measure them
      coloraxis: { cmin: 0, cmax: 1, colorscale: colorscale("Blues"),
        colorbar: { title: { text: "weight" }, ticklabeloverflow: "allow" } },
    });
    const xTick = { tickangle: -45 };
    const yTick = { autorange: "reversed" };
    let data;
    // the margins first: a grid's height follows from them
    const margin = tokenMargins(queries, keys, narrow ? { l: 50, r: 10, t: 110, b: 50 } : layout.margin);
    if (head === "all") {
      const cols = narrow ? 1 : Math.min(nHeads, nHeads <= 4 ? 2 : 4);
      const rows = Math.ceil(nHeads / cols);
      // room between columns for the query tokens and "query" (as figures/attention.py's _column_gap)
      const hs = Math.min(0.25, Math.max(0.1, (8 * Math.max(1, ...queries.map((q) => String(q).length)) + 50) / 500));
      // Between rows, room for a panel's turned key labels, its "key" and the next panel's "head n" (px):
      // the static figure's fixed share of the height is too little for long tokens, which plotly's
      // automargin would have drawn over the next row.
      const size = theme().layout.font.size;
      const gap = Math.max(narrow ? 80 : 100, Math.ceil(Math.SQRT1_2 * (textWidth(keys, theme().layout.font) + size) +
        LABEL_PAD_PX + 2.4 * size + 1.2 * 16 + 16));
      const panel = narrow ? 210 : 232; // px: a panel's height
      const plotHeight = rows * panel + (rows - 1) * gap;
      const vs = gap / plotHeight;
      const w = (1 - hs * (cols - 1)) / cols;
      const h = panel / plotHeight;
      layout.height = plotHeight + margin.t + margin.b;
      data = [];
      layout.annotations = [];
      for (let i = 0; i < nHeads; i++) {
        const r = Math.floor(i / cols);
        const c = i % cols;
        const n = i === 0 ? "" : String(i + 1);
        const x0 = c * (w + hs);
        const y1 = 1 - r * (h + vs);
        // each panel's axes say which side's tokens they are, as one head's do (attention_figure's grid)
        layout[`xaxis${n}`] = tokenAxis(keys, Object.assign({ domain: [x0, x0 + w], anchor: `y${n}`,
          title: { text: AXIS_TITLES[kind][0] } }, xTick));
        layout[`yaxis${n}`] = tokenAxis(queries, Object.assign({ domain: [y1 - h, y1], anchor: `x${n}` }, yTick));
        layout.annotations.push(yTitle(AXIS_TITLES[kind][1], [x0, x0 + w], [y1 - h, y1], queries));
        data.push(heatmap(weights[i], queries, keys, `x${n}`, `y${n}`, `head ${i + 1}`));
        layout.annotations.push({ text: `head ${i + 1}`, x: x0 + w / 2, y: y1, xref: "paper", yref: "paper",
          xanchor: "center", yanchor: "bottom", showarrow: false, font: { size: 16 } });
      }
      layout.title = { text: narrow ? `${title},<br>all ${nHeads} heads` : `${title}, all ${nHeads} heads` };
    } else {
      data = [heatmap(weights[head], queries, keys, "x", "y", `head ${head + 1}`)];
      layout.xaxis = tokenAxis(keys, Object.assign({ title: { text: AXIS_TITLES[kind][0] } }, xTick));
      layout.yaxis = tokenAxis(queries, yTick);
      layout.annotations = [yTitle(AXIS_TITLES[kind][1], [0, 1], [0, 1], queries)];
      layout.title = { text: narrow ? `${title},<br>head ${head + 1}` : `${title}, head ${head + 1}` };
      layout.height = 480;
    }
    if (narrow) {
      layout.title.font = { size: 15 };
      Object.assign(layout.coloraxis.colorbar, { thickness: 12, len: Math.min(1, 420 / layout.height),
        y: 1, yanchor: "top" });
    }
    layout.margin = margin;
    return { data, layout };
  }

  function attentionExplorer(root, state) {
    const input = el("input", { type: "text", placeholder: "type a sentence, then Enter", autocomplete: "off",
      spellcheck: "false" });
    input.value = state.sentence || "";
    const button = el("button", { type: "submit", class: "tc-button", text: "Translate" });
    const form = el("form", { class: "tc-row tc-sentence" }, [labelled("Sentence", input), button]);
    const output = el("div", { class: "tc-output", "aria-live": "polite" });
    const messages = el("div", { class: "tc-messages", role: "status" });
    const kind = select(KINDS.map(([label, value]) => [label, value]), "cross");
    const layer = select([["layer 1", 0]], 0);
    const head = select([["all heads", "all"]], "all");
    const controls = el("div", { class: "tc-row tc-controls" },
      [labelled("Attention", kind), labelled("Layer", layer), labelled("Head", head)]);
    const figure = el("div", { class: "tc-figure" });
    const note = el("p", { class: "tc-note", text: "This explorer runs the book's trained model in your browser: " +
      "the model (about 1.1 MB) is downloaded the first time you press Translate." });
    const replay = state.replay ? replayControls(state.replay, () => run()) : null;
    // the replay: the curve, then its slider and the output line, which stay in view on a phone while the
    // reader scrolls down to the maps (explorers.css: .tc-replay-bar is sticky on a narrow screen)
    const top = replay ? [replay.curve, el("div", { class: "tc-replay-bar" }, [replay.row, replay.track, output])]
      : [output];
    root.appendChild(el("div", { class: "tc-live-explorer tc-attention" },
      [form, ...top, messages, controls, figure, note]));

    let result = null;
    let layerChosen = false;
    let busy = 0;

    function setResult(r) {
      result = r;
      const count = r.tokens.length + (r.ended ? 1 : 0); // as the kernel's explorer: output and <eos>
      const by = r.step === undefined ? "" : ` (step ${r.step})`; // the replay: the snapshot that translated it
      output.innerHTML = `<b>Model output${by}:</b> ${escapeHtml(r.text) || "(nothing)"} ` +
        `<span class="tc-muted">(${count} tokens)</span>`;
      messages.textContent = "";
      for (const n of r.notes || []) messages.appendChild(el("div", { class: "tc-message tc-warning", text: n }));
      const nHeads = r.attention.cross[0].length;
      setOptions(head, [["all heads", "all"], ...Array.from({ length: nHeads }, (_, h) => [`head ${h + 1}`, h])],
        head.value === "all" || Number(head.value) < nHeads ? head.value : "all");
      setLayers();
      controls.hidden = false;
    }

    function setLayers() {
      const n = result.attention[kind.value].length;
      const chosen = layerChosen ? Number(layer.value) : n - 1;
      setOptions(layer, Array.from({ length: n }, (_, i) => [`layer ${i + 1}`, i]), Math.min(chosen, n - 1));
    }

    function clear() {
      result = null;
      output.textContent = "";
      controls.hidden = true; // no result: nothing for these controls to act on
      window.tcHeatmaps.clear(figure);
    }

    /* The explorer's one redraw path: every control ends here (Translate and Enter, the attention,
     * layer and head menus, a resize, and any control added later, such as a training step or a
     * decoding step). draw(payload) shows `payload`, a translation as bookModel.translate returns it
     * ({tokens, text, notes, ended, src_tokens, decoder_tokens, attention}), and draws its maps;
     * draw() redraws the translation shown, for the menus' choices and the figure's width now.
     * The maps are attentionFigure's figure drawn on a canvas (heatmap-canvas.js: plotly's layout and
     * SVG on every redraw took most of the time from Enter to the drawn maps), synchronously, in the
     * same div each time. Returns a promise that resolves once they are drawn, when the explorer's div
     * also gets a `tc-drawn` event (detail: {payload}), which benchmarks/live_model.py times;
     * undefined when there is nothing to draw. */
    function draw(payload) {
      if (payload !== undefined) setResult(payload);
      if (!result) return undefined;
      const h = head.value === "all" ? "all" : Number(head.value);
      const width = figure.clientWidth || root.clientWidth;
      const fig = attentionFigure(result, kind.value, Number(layer.value), h, width);
      window.tcHeatmaps.draw(figure, fig, width);
      name(figure, fig.layout);
      const shown = result;
      return Promise.resolve().then(() => {
        root.dispatchEvent(new CustomEvent("tc-drawn", { detail: { payload: shown } }));
      });
    }

    async function run() {
      const text = input.value;
      if (!acceptText(text, messages, button, clear)) return;
      const ticket = ++busy;
      try {
        const step = replay ? replay.step() : undefined;
        const r = await window.bookModel.translate(text, replay ? { step } : undefined);
        if (ticket === busy) draw(replay ? Object.assign({}, r, { step }) : r);
      } catch (err) {
        if (ticket === busy) {
          clear();
          const known = err && err.name === "ReaderError";
          message(messages, known ? sentenceCase(err.message) :
            window.bookText.fill("failed", { error: err && err.message ? err.message : err }), known ? err.level : "error");
        }
      } finally {
        if (ticket === busy) button.disabled = false;
      }
    }

    form.addEventListener("submit", (event) => { event.preventDefault(); run(); });
    kind.addEventListener("change", () => { if (result) { setLayers(); draw(); } });
    layer.addEventListener("change", () => { layerChosen = true; draw(); });
    head.addEventListener("change", () => draw());
    window.addEventListener("resize", debounce(() => { draw(); if (replay) replay.draw(); }, 200));

    if (state.result) draw(replay ? Object.assign({}, state.result, { step: state.replay.step }) : state.result);
    else {
      clear();
      if (!input.value) message(messages, window.bookText.fill("empty", {}), "info");
    }
    if (replay) replay.draw();
    root.tcExplorer = { run, draw, input, button, kind, layer, head, figure, output, messages,
      slider: replay ? replay.slider : null, curve: replay ? replay.curve : null };
  }

  // The replay (AttentionExplorer(replay=True)): the training curve of
  // transformer_lib.figures.training.replay_curve_figure, computed by the kernel and carried in the state,
  // and under it a slider on the same training-step axis: its track spans the curve's x axis pixel for
  // pixel (align, after each draw), it stops only at the snapshots' steps (a tick under each), and the
  // arrow keys go from one snapshot to the next. The page moves the curve's step marker
  // (replay_step_marker: a dashed line and "step N").
  const THUMB_PX = 16; // the slider thumb's width (explorers.css), for the track to span the axis exactly
  function replayControls(settings, rerun) {
    const steps = settings.steps;
    const [first, last] = [steps[0], steps[steps.length - 1]];
    let current = settings.step;
    const slider = el("input", { type: "range", min: String(first), max: String(last), step: "1",
      value: String(current), id: `tc-live-${++counter}` });
    const shown = el("output", { class: "tc-readout", "aria-hidden": "true" });
    const row = el("div", { class: "tc-row tc-replay" }, [el("label", { for: slider.id, text: "Training step" }), shown]);
    const ticks = el("div", { class: "tc-replay-ticks", "aria-hidden": "true" },
      steps.map(() => el("span", { class: "tc-replay-tick" })));
    const track = el("div", { class: "tc-replay-track" }, [slider, ticks]);
    const curve = el("div", { class: "tc-figure tc-curve" });
    const step = () => current;
    function label() {
      const text = `step ${current} of ${last}`;
      shown.textContent = text;
      slider.setAttribute("aria-valuetext", text); // a screen reader says the step
    }
    function choose(to) { // a snapshot's step: the thumb there, and, if it is another, the model of that step
      slider.value = String(to);
      if (to === current) return;
      current = to;
      label();
      draw();
      rerun();
    }
    const nearest = (v) => steps.reduce((a, b) => (Math.abs(b - v) < Math.abs(a - v) ? b : a));
    function align() { // the track under the axis: a thumb centred on step s sits over s on the curve
      const axis = curve._fullLayout && curve._fullLayout.xaxis;
      if (!axis) return;
      const shift = curve.getBoundingClientRect().left - track.getBoundingClientRect().left;
      slider.style.marginLeft = `${shift + axis._offset - THUMB_PX / 2}px`;
      slider.style.width = `${axis._length + THUMB_PX}px`;
      steps.forEach((s, i) => { ticks.children[i].style.left = `${shift + axis._offset + axis.l2p(s)}px`; });
    }
    function draw() {
      if (!plotlyReady()) return;
      const layout = baseLayout(JSON.parse(JSON.stringify(settings.figure.layout)));
      // the theme's axis style, the figure's titles; the x axis exactly the slider's range
      layout.xaxis = Object.assign({}, axisStyle(), layout.xaxis, { range: [first, last], autorange: false });
      layout.yaxis = Object.assign({}, axisStyle(), layout.yaxis);
      for (const item of [...layout.shapes, ...layout.annotations]) {
        if ("x0" in item) { item.x0 = current; item.x1 = current; } else {
          // the label on the side of the line that has room (the axis ends at the last step)
          const side = 2 * current > first + last ? "right" : "left";
          Object.assign(item, { x: current, text: `step ${current}`, xanchor: side });
        }
      }
      if (isNarrow(curve.clientWidth || 0)) {
        layout.legend = { orientation: "h", x: 0, y: -0.3, xanchor: "left", yanchor: "top" };
        layout.margin = { l: 50, r: 10, t: 60, b: 50 };
        layout.height = 380;
      }
      // Fresh copies of the traces: given the same arrays again, Plotly.react skips its autorange and falls
      // back to the default range, which would put the curve and the marker off the axes.
      Promise.resolve(window.Plotly.react(curve, JSON.parse(JSON.stringify(settings.figure.data)), layout,
        plotConfig())).then(align);
      name(curve, layout);
    }
    slider.addEventListener("input", () => choose(nearest(Number(slider.value))));
    slider.addEventListener("keydown", (event) => { // one key, one snapshot
      const i = steps.indexOf(current);
      const to = { ArrowLeft: i - 1, ArrowDown: i - 1, PageDown: i - 1, ArrowRight: i + 1, ArrowUp: i + 1,
        PageUp: i + 1, Home: 0, End: steps.length - 1 }[event.key];
      if (to === undefined) return;
      event.preventDefault();
      choose(steps[Math.min(Math.max(to, 0), steps.length - 1)]);
    });
    label();
    return { row, track, curve, slider, step, draw };
  }

  function debounce(fn, ms) {
    let timer = null;
    let lastWidth = window.innerWidth;
    return () => {
      if (window.innerWidth === lastWidth) return; // a height change (mobile address bar) redraws nothing
      lastWidth = window.innerWidth;
      clearTimeout(timer);
      timer = setTimeout(fn, ms);
    };
  }

  // ============================================================== start

  // The explorer that makes each kind of div.tc-live live: the attention explorer here, every other
  // kind registered by its own script, loaded after this one (positional-explorer.js, stepper.js,
  // model-explorer.js, lm-explorer.js): the one place a page's explorers start.
  const makers = { attention: attentionExplorer };
  let started = false;

  function start(root) {
    if (root.tcExplorer) return;
    let state;
    try {
      state = JSON.parse(root.querySelector("script.tc-live-state").textContent);
    } catch (err) {
      root.textContent = "This explorer's settings could not be read.";
      return;
    }
    const fallback = root.querySelector(".tc-live-fallback");
    if (fallback) fallback.remove();
    const make = makers[root.dataset.explorer];
    if (make) make(root, state);
  }

  function startAll() {
    started = true;
    document.querySelectorAll("div.tc-live").forEach(start);
  }
  // A kind registered after the page started (a script run late) starts at once.
  function register(kind, make) {
    makers[kind] = make;
    if (started) document.querySelectorAll(`div.tc-live[data-explorer="${kind}"]`).forEach(start);
  }
  // the positional explorer's functions join these (positional-explorer.js)
  window.tcExplorers = { attentionFigure, baseLayout, plotConfig, axisStyle, colorscale, register };
  // the page helpers other explorers build with (positional-explorer.js, lm-explorer.js)
  window.tcExplorers.dom = { el, labelled, select, setOptions, message, acceptText, markStale, name, escapeHtml, sentenceCase, debounce,
    plotlyReady, isNarrow };
  if (typeof document === "undefined") return; // Node, in the tests: the functions above only
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", startAll);
  else startAll();
})();
