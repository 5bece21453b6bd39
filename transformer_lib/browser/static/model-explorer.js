/* The whole-model explorer of the static book: every div.tc-live[data-explorer="model"] becomes one.
 *
 * The whole-model figure (transformer_lib.figures.architecture.architecture_svg(..., explorer=True),
 * from the state the kernel's ModelExplorer writes) with every box a button: type a sentence (or
 * keep the explorer's), press Translate, pick a token (source or target), then click a box, or Tab
 * to it and press Enter; the arrow keys step to the previous (left, down) or next (right, up) block
 * on the token's path. Beside the figure, the panel draws that token's tensor at that block, as
 * transformer_lib.figures.activations.activation_panel draws it: a heat strip of its values with
 * their norm, or one head's score row over the keys with the masked keys named. The blocks are
 * window.bookModel.activations (book-activations.js), computed once per sentence; a click only
 * redraws the panel (Plotly.react). The paths and the stages' titles come from the state (Python's
 * token_path and STAGE_TITLES). Odd input gets the explorers' messages; the figure keeps its last
 * good sentence.
 */
(function () {
  "use strict";
  const explorers = window.tcExplorers; // explorers.js: loaded first
  const { baseLayout, plotConfig, axisStyle, colorscale } = explorers;
  const { el, labelled, select, setOptions, message, acceptText, markStale, name, escapeHtml, sentenceCase, plotlyReady, debounce,
    isNarrow } = explorers.dom;
  const ROWS = ["scores", "masked", "weights"]; // figures.activations.ROWS

  const stageOf = (block) => (block.endsWith("final_norm") ? "final_norm" : block.slice(block.lastIndexOf(".") + 1));
  function groupOf(block) { // figures.activations.group_of: the figure's box or row that draws it
    const parts = block.split(".");
    if (["src", "tgt", "generator"].includes(parts[0])) return parts[0];
    return parts[1] === "final_norm" ? block : parts.slice(0, 3).join(".");
  }
  const fmtShape = (shape) => `(${shape.join(", ")}${shape.length === 1 ? "," : ""})`; // Python's tuple
  function shapeOf(value) {
    const shape = [];
    for (let v = value; Array.isArray(v); v = v[0]) shape.push(v.length);
    return shape;
  }

  // figures.activations.activation_panel
  function activationPanel(result, stages, colors, block, side, position, head, width) {
    const tokens = side === "source" ? result.src_tokens : result.decoder_tokens;
    const whole = result.blocks[block];
    const value = whole[position];
    const narrow = isNarrow(width); // a phone: the title's last line broken at each " · "
    const wide = (text) => (narrow ? text.replace(/ \u00b7 /g, "<br>") : text);
    const title = (extra) => wide(`<b>${block}</b><br>${stages[stageOf(block)]}<br>${side} token \u201c${escapeHtml(tokens[position])}` +
      `\u201d (position ${position}) \u00b7 shape ${fmtShape(shapeOf(value))} of ${fmtShape(shapeOf(whole))}${extra}`);
    // on a phone, the title's lines from the panel's top down (plotly centres them in the margin, where
    // five lines met the plot), under its tool bar (34 px); a smaller font
    const titled = (text) => (narrow ? { text, y: 1 - 34 / 370, yref: "container", yanchor: "top", font: { size: 14 } } : { text });
    const layout = baseLayout({ height: narrow ? 370 : 315, margin: { l: 60, r: 20, t: narrow ? 140 : 115, b: 60 } });
    if (ROWS.includes(stageOf(block))) {
      const row = value[head];
      const keys = block.startsWith("encoder") || block.includes(".cross_attn.") ? result.src_tokens : result.decoder_tokens;
      const masked = row.map((v) => v === null || !Number.isFinite(v));
      const shown = row.map((v, j) => (masked[j] ? 0 : v));
      const count = masked.filter(Boolean).length;
      const extra = ` \u00b7 head ${head + 1}` + (count ? ` \u00b7 ${count} keys masked (-\u221e)` : "");
      return {
        data: [{ type: "bar", x: keys.map((k, j) => `${j} ${escapeHtml(k)}`), y: shown, marker: { color: colors.bar },
          name: "score", text: shown.map((v, j) => (masked[j] ? "masked" : v.toFixed(3))), textposition: "outside",
          cliponaxis: false, hovertemplate: "key %{x}<br>%{text}<extra></extra>" }],
        layout: Object.assign(layout, { title: titled(title(extra)),
          xaxis: Object.assign({}, axisStyle(), { title: { text: "key token" }, type: "category" }),
          yaxis: Object.assign({}, axisStyle(), { title: { text: block.endsWith("weights") ? "weight" : "score" } }) }),
      };
    }
    const perHead = Array.isArray(value[0]); // (h, d_k): the heads side by side, a line between two
    const flat = perHead ? value.flat() : value;
    const norm = Math.sqrt(flat.reduce((s, v) => s + v * v, 0));
    const limit = Math.max(...flat.map(Math.abs)) || 1;
    return {
      data: [{ type: "heatmap", z: [flat], x: flat.map((_, i) => i), y: [""], colorscale: colorscale("RdBu"),
        zmid: 0, zmin: -limit, zmax: limit, colorbar: { title: { text: "value" }, thickness: 12 },
        hovertemplate: "feature %{x}<br>value %{z:.4f}<extra></extra>" }],
      layout: Object.assign(layout, { title: titled(title(` \u00b7 norm ${norm.toFixed(3)}`)),
        xaxis: Object.assign({}, axisStyle(), perHead ? { // each head named under its features
          title: { text: `feature: heads side by side, ${value[0].length} each` }, tickmode: "array",
          tickvals: value.map((_, h) => h * value[0].length + (value[0].length - 1) / 2), ticktext: value.map((_, h) => `h${h + 1}`),
        } : { title: { text: "feature" } }),
        yaxis: Object.assign({}, axisStyle(), { showticklabels: false }),
        shapes: perHead ? headLines(value.length, value[0].length, colors.head_lines) : [] }),
    };
  }

  // figures.activations.HEAD_LINES: black on a wider white line between two heads, seen on any colour
  function headLines(heads, dK, style) {
    const lines = [];
    for (let h = 1; h < heads; h++) {
      for (const [color, width] of style) {
        lines.push({ type: "line", xref: "x", yref: "y domain", x0: h * dK - 0.5, x1: h * dK - 0.5, y0: 0, y1: 1,
          line: { color, width } });
      }
    }
    return lines;
  }

  // The figure's shapes for the sentence read: (batch, positions, ...) with each column's positions its
  // side's length, on the arrows and in the figure's text alternative (architecture_svg marks them).
  function setShapes(figure, srcLength, tgtLength) {
    const positions = { encoder: srcLength, decoder: tgtLength };
    const withLength = (text, length) => text.replace(/\((\d+), \d+/g, `($1, ${length}`);
    for (const shape of figure.querySelectorAll(".tc-shape")) {
      shape.textContent = withLength(shape.textContent, positions[shape.dataset.side]);
    }
    const desc = figure.querySelector("desc");
    if (desc) {
      const [encoder, decoder] = desc.textContent.split("The decoder,");
      desc.textContent = `${withLength(encoder, srcLength)}The decoder,${withLength(decoder, tgtLength)}`;
    }
  }

  // Plotly's first plot on a page costs a few hundred ms (its styles, fonts and the trace's code set up):
  // paid once, off the screen, before the reader's first click, with the panel's two kinds of trace.
  function warmPlotly() {
    if (!plotlyReady()) return undefined;
    const box = el("div", { "aria-hidden": "true", style: "position:absolute;left:-10000px;top:0;width:600px" });
    document.body.appendChild(box);
    return Promise.resolve(window.Plotly.newPlot(box, [{ type: "heatmap", z: [[0, 1]] }, { type: "bar", y: [1] }],
      { height: 200 }, plotConfig())).finally(() => { window.Plotly.purge(box); box.remove(); });
  }

  function modelExplorer(root, state) {
    const input = el("input", { type: "text", value: state.sentence || "", autocomplete: "off", spellcheck: "false",
      placeholder: "type a sentence, then Enter" });
    const button = el("button", { type: "submit", class: "tc-button", text: "Translate" });
    const form = el("form", { class: "tc-row tc-sentence" }, [labelled("Sentence", input), button]);
    const messages = el("div", { class: "tc-messages", "aria-live": "polite" });
    const output = el("div", { class: "tc-output" });
    const token = select([], "");
    const blockMenu = select([], "");
    const head = select(Array.from({ length: state.n_heads }, (_, h) => [String(h + 1), h]), 0);
    const headField = labelled("Head", head);
    const previous = el("button", { type: "button", class: "tc-button", text: "\u25c0 previous block" });
    const next = el("button", { type: "button", class: "tc-button", text: "next block \u25b6" });
    const controls = el("div", { class: "tc-row" }, [labelled("Token", token), labelled("Block", blockMenu), headField]);
    const steps = el("div", { class: "tc-row" }, [previous, next]);
    const following = el("p", { class: "tc-following", "aria-live": "polite" });
    const panel = el("div", { class: "tc-figure tc-panel" }, [el("p", { class: "tc-panel-prompt", text: state.prompt })]);
    const figure = el("div", { class: "tc-model-figure" });
    figure.innerHTML = state.svg; // the build's own SVG (architecture_svg), not the reader's text
    const highlight = el("style");
    const note = el("p", { class: "tc-note", text: "Arrow keys: the previous (\u2190 \u2193) or next (\u2192 \u2191) " +
      "block. The model (about 1.1 MB) is downloaded when the figure comes into view, so that a first click waits " +
      "for nothing but the sentence." });
    root.appendChild(el("div", { class: "tc-live-explorer tc-model" },
      [highlight, form, messages, output, controls, steps, following, panel, figure, note]));

    let result = null;
    let busy = 0;
    let plotted = false;
    const path = () => state.paths[token.value.split(":")[0]];
    let lastOf = {}; // each side's token chosen last: a box of the other column goes back to it

    function setResult(r) {
      result = r;
      markStale(messages, [panel], false);
      setShapes(figure, r.src_tokens.length, r.decoder_tokens.length);
      lastOf = {}; // a new sentence: its own tokens
      output.innerHTML = `<b>Model output:</b> ${escapeHtml(r.text) || "(nothing)"}`;
      messages.textContent = "";
      for (const n of r.notes || []) messages.appendChild(el("div", { class: "tc-message tc-warning", text: n }));
      const chosen = token.value;
      const options = [...r.src_tokens.map((t, i) => [`source ${i}: ${t}`, `source:${i}`]),
        ...r.decoder_tokens.map((t, i) => [`target ${i}: ${t}`, `target:${i}`])];
      setOptions(token, options, options.some(([, v]) => v === chosen) ? chosen : options[0][1]);
      setBlocks();
    }

    function setBlocks() {
      const chosen = blockMenu.value;
      const names = path();
      setOptions(blockMenu, names.map((b) => [`${b}: ${state.stages[stageOf(b)]}`, b]), names.includes(chosen) ? chosen : names[0]);
    }

    // The one redraw path: every control ends here. Resolves once plotly has drawn (event tc-drawn).
    function draw() {
      if (!result) return undefined;
      const block = blockMenu.value;
      const [side, position] = token.value.split(":");
      headField.style.display = ROWS.includes(stageOf(block)) ? "" : "none"; // CSS shows a [hidden] field
      const tokens = side === "source" ? result.src_tokens : result.decoder_tokens;
      lastOf[side] = Number(position);
      following.textContent = `Following ${side} token ${position} \u201c${tokens[Number(position)]}\u201d through the ` +
        `${side === "source" ? "encoder's" : "decoder's"} blocks (${side === "source" ? "left" : "right"} column)` +
        (switched ? `: the box chosen is in that column.` : ".");
      switched = false;
      const names = path();
      previous.disabled = names.indexOf(block) <= 0;
      next.disabled = names.indexOf(block) >= names.length - 1;
      const group = groupOf(block);
      highlight.textContent = `.tc-model .tc-block[data-block="${group}"] rect { stroke: ${state.colors.highlight}; stroke-width: 4; }`;
      if (!plotlyReady()) return undefined;
      const fig = activationPanel(result, state.stages, state.colors, block, side, Number(position), Number(head.value),
        panel.clientWidth || root.clientWidth);
      const plot = plotted ? window.Plotly.react : window.Plotly.newPlot;
      if (!plotted) panel.textContent = ""; // the prompt goes: the panel's first figure takes its place
      plotted = true;
      const drawn = plot(panel, fig.data, fig.layout, plotConfig());
      name(panel, fig.layout);
      const shown = `${block} ${token.value} ${head.value}`;
      return Promise.resolve(drawn).then(() => {
        panel.dataset.drawn = shown; // what the panel shows: block, token, head (the tests wait for it)
        root.dispatchEvent(new CustomEvent("tc-drawn", { detail: { block } }));
      });
    }

    function step(by) {
      const names = path();
      const i = Math.min(Math.max(names.indexOf(blockMenu.value) + by, 0), names.length - 1);
      blockMenu.value = names[i];
      return draw();
    }

    // A box of the figure: its first block on the token's path. A box of the other column follows a
    // token of the other side: the one followed last there, else the one at the same position (or its
    // last); the line above the panel says so.
    let switched = false;
    function choose(group) {
      const onPath = (names) => names.find((b) => groupOf(b) === group);
      let [side, position] = token.value.split(":");
      if (!onPath(state.paths[side])) {
        side = side === "source" ? "target" : "source";
        const tokens = side === "source" ? result.src_tokens : result.decoder_tokens;
        token.value = `${side}:${side in lastOf ? lastOf[side] : Math.min(Number(position), tokens.length - 1)}`;
        switched = true;
        setBlocks();
      }
      blockMenu.value = onPath(state.paths[side]);
      return draw();
    }

    async function run() {
      const text = input.value;
      if (!acceptText(text, messages, button)) { // refused: the panel keeps its last good sentence, marked stale
        markStale(messages, plotted ? [panel] : [], true);
        return;
      }
      const ticket = ++busy;
      try {
        const r = await window.bookModel.activations(text);
        if (ticket === busy) { setResult(r); await draw(); }
      } catch (err) {
        if (ticket === busy) {
          const known = err && err.name === "ReaderError";
          message(messages, known ? sentenceCase(err.message) :
            window.bookModel.fill("failed", { error: err && err.message ? err.message : err }), known ? err.level : "error");
          markStale(messages, plotted ? [panel] : [], true);
        }
      } finally {
        if (ticket === busy) button.disabled = false;
      }
    }

    async function pick(group) {
      if (!result) await run();
      if (result) await choose(group);
    }

    form.addEventListener("submit", (event) => { event.preventDefault(); run(); });
    token.addEventListener("change", () => { setBlocks(); draw(); });
    blockMenu.addEventListener("change", () => draw());
    head.addEventListener("change", () => draw());
    window.addEventListener("resize", debounce(() => draw(), 200));
    previous.addEventListener("click", () => step(-1));
    next.addEventListener("click", () => step(1));
    for (const box of figure.querySelectorAll(".tc-block")) {
      box.addEventListener("click", () => pick(box.dataset.block));
      box.addEventListener("keydown", (event) => {
        if (event.key === "Enter" || event.key === " ") { event.preventDefault(); pick(box.dataset.block); }
      });
    }
    root.addEventListener("keydown", (event) => {
      if (!result || event.target === input || event.target.tagName === "SELECT") return;
      const by = { ArrowRight: 1, ArrowUp: 1, ArrowLeft: -1, ArrowDown: -1 }[event.key];
      if (by) { event.preventDefault(); step(by); }
    });
    if (!input.value) message(messages, window.bookModel.fill("empty", {}), "info");
    // The model's download and a first pass (the script's first run is its slowest) start when the figure
    // comes into view, while the page is idle: the reader's first click (benchmarks/model_explorer.py's
    // cold click) then waits for the sentence and the panel only. Not on the page's first visit (its
    // weight budget, benchmarks/page_weight.py): the explorer is far down its chapter.
    if ("IntersectionObserver" in window) {
      const idle = window.requestIdleCallback || ((f) => setTimeout(f, 0));
      const observer = new IntersectionObserver((entries) => {
        if (!entries.some((entry) => entry.isIntersecting)) return;
        observer.disconnect();
        idle(() => window.bookModel.load().then((model) => {
          if (!result) model.activations(input.value || "the");
          return warmPlotly();
        }).catch(() => {})); // a failed download is tried again, and said, on the first click
      });
      observer.observe(figure);
    }
    root.tcExplorer = { run, draw, choose, step, input, button, token, block: blockMenu, head, panel, figure, messages };
  }

  explorers.register("model", modelExplorer);
})();
