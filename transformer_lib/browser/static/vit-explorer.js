/* Chapter 9's digits explorer, live in the page: every div.tc-live[data-explorer="vit"].
 *
 * The page's form of transformer_lib.browser.vit_explorer.DigitExplorer: the reader inks an 8 x 8 digit
 * (a cell cycles blank, half, full: vit_explorer.LEVELS) or starts from a held-out test digit, and sees
 * the chapter's Vision Transformer's answer and probabilities, the class token's attention over the 16
 * patches, and the linear layer's answer, side by side. Both models' weights are in the explorer's state
 * (vit_explorer.digit_state, rounded at html_embed.PAGE_DECIMALS): nothing is fetched. The Vision
 * Transformer computes what transformer_lib computes:
 *   patches         vision.image_patches: 2 x 2 squares, row by row, each flattened row by row
 *   tokens          VisionTransformer.project (nn.Linear), then ClassTokenClassifier.encode: the class
 *                   token first, the learned positions added
 *   encoder         book-model.js's Core.encodeRows, the one encoder of the page (the translator's too)
 *   answer          ClassTokenClassifier.head on the class token's row, then softmax
 * In float64 on the float32 weights (tests/test_live_vit.py compares it with Python's on the same weights).
 * Outside a page (Node, in the tests) the functions that compute are window.tcVitExplorer.
 */
(function () {
  "use strict";
  if (window.tcVitExplorer) return;
  const book = window.bookModel; // book-model.js: loaded first
  const explorers = window.tcExplorers;
  const SIZE = 8; // vision.DIGIT_SIZE
  const LEVEL_NAMES = ["blank", "half ink", "full ink"]; // of vit_explorer.LEVELS

  function softmax(logits) {
    const max = Math.max(...logits);
    const out = Array.from(logits, (v) => Math.exp(v - max));
    const sum = out.reduce((a, b) => a + b, 0);
    return out.map((v) => v / sum);
  }

  // vision.VisionTransformer on the Core of book-model.js: the weights come from the state, not a file.
  class VisionModel extends book.Core {
    constructor(model) {
      const floats = Float32Array.from(model.values);
      super({ config: model.config, weights: { file: "the explorer's state", floats: model.floats,
        tensors: model.tensors }, special_ids: {}, tokenization: { specials: [] } }, floats.buffer);
      this.patch = model.patch;
      this.nClasses = model.tensors["classifier.head.bias"].shape[0];
    }

    patches(pixels) { // vision.image_patches for one image: (64) -> 16 rows of 4 pixels
      const p = this.patch;
      const out = [];
      for (let r = 0; r < SIZE; r += p) {
        for (let c = 0; c < SIZE; c += p) {
          const row = new Float64Array(p * p);
          for (let i = 0; i < p; i++) for (let j = 0; j < p; j++) row[i * p + j] = pixels[(r + i) * SIZE + c + j];
          out.push(row);
        }
      }
      return out;
    }

    // VisionTransformer.forward: the probabilities over the classes, and per layer and head the class
    // token's row of attention weights (itself, then each patch)
    read(pixels) {
      const d = this.config.d_model;
      const position = this.t("classifier.position");
      const rows = [Float64Array.from(this.t("classifier.cls")),
        ...this.patches(pixels).map((x) => this.lin("project", x, d, x.length))];
      rows.forEach((row, t) => { for (let i = 0; i < d; i++) row[i] += position[t * d + i]; });
      const { memory, maps } = this.encodeRows("classifier.encoder", rows);
      const logits = this.lin("classifier.head", memory[0], this.nClasses, d);
      return { probs: softmax(logits), attention: maps.map((layer) => layer.map((head) => head[0])) };
    }
  }

  function linearProbs(linear, pixels) { // nn.Sequential(nn.Flatten(), nn.Linear(64, 10)), then softmax
    const weight = Float32Array.from(linear.weight);
    const bias = Float32Array.from(linear.bias);
    const logits = Array.from(bias, (b, o) => {
      let s = b;
      for (let i = 0; i < pixels.length; i++) s += weight[o * pixels.length + i] * pixels[i];
      return s;
    });
    return softmax(logits);
  }

  function nextLevel(levels, value) { // vit_explorer.next_level
    const above = levels.filter((level) => level > value + 1e-9);
    return above.length ? above[0] : levels[0];
  }

  const argmax = (values) => values.reduce((best, v, i) => (v > values[best] ? i : best), 0); // the first maximum
  const percent = (v, digits) => `${(100 * v).toFixed(digits)}%`;

  // The theme's Blues scale (figures.vision.patch_attention_figure's) at t in [0, 1], as [r, g, b].
  function blues(t) {
    const stops = explorers.colorscale("Blues").map(([at, color]) => [at, color.match(/\d+/g).map(Number)]);
    let k = 1;
    while (k < stops.length - 1 && stops[k][0] < t) k++;
    const [a, ca] = stops[k - 1];
    const [b, cb] = stops[k];
    const f = b > a ? Math.min(1, Math.max(0, (t - a) / (b - a))) : 0;
    return ca.map((v, i) => Math.round(v + f * (cb[i] - v)));
  }
  function inkOn([r, g, b]) { // black or white text, whichever contrasts more with the cell (WCAG's formula)
    const lin = (v) => { const s = v / 255; return s <= 0.03928 ? s / 12.92 : Math.pow((s + 0.055) / 1.055, 2.4); };
    const light = 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b);
    return (light + 0.05) / 0.05 >= 1.05 / (light + 0.05) ? "#000" : "#fff";
  }

  function vitExplorer(root, state) {
    const { el, labelled, select } = explorers.dom;
    const model = new VisionModel(state.model);
    const levels = state.levels;
    const pixels = Float64Array.from(state.image);
    const p = state.model.patch;
    const side = SIZE / p;

    const start = select([["blank grid", -1], ...state.menu.map((m, n) => [`test image ${m.index}: a ${m.label}`, n])],
      state.menu.findIndex((m) => m.pixels.every((v, i) => v === state.image[i])));
    const head = select([["heads averaged", "all"], ...Array.from({ length: state.model.config.n_heads },
      (_, h) => [`head ${h + 1}`, h])], "all");
    const controls = el("div", { class: "tc-row tc-controls" }, [labelled("Start from", start), labelled("Head", head)]);

    // the drawing: one tab stop, the arrow keys move inside it (a roving tabindex)
    const help = el("p", { class: "tc-note", id: `${start.id}-help`, text: "Click or tap a cell, or move with the " +
      "arrow keys and press Space or Enter: each press inks it blank, half, full, then blank again." });
    const grid = el("div", { class: "tc-digit-grid", role: "grid", "aria-label": "The digit, 8 by 8 cells",
      "aria-describedby": help.id });
    const cells = [];
    for (let r = 0; r < SIZE; r++) {
      const row = el("div", { role: "row", class: "tc-digit-row" });
      for (let c = 0; c < SIZE; c++) {
        const cell = el("div", { role: "gridcell", tabindex: "-1", class: "tc-digit-cell" });
        if (c % p === p - 1 && c < SIZE - 1) cell.classList.add("tc-patch-right");
        if (r % p === p - 1 && r < SIZE - 1) cell.classList.add("tc-patch-below");
        row.appendChild(cell);
        cells.push(cell);
      }
      grid.appendChild(row);
    }
    let focused = 0;
    cells[0].tabIndex = 0;
    const drawing = el("div", { class: "tc-digit-side" }, [el("p", { class: "tc-digit-title", text: "Your digit " +
      "(thick lines: the 2 \u00d7 2 patches)" }), grid, help]);

    const attentionTable = el("table", { class: "tc-attention-grid" });
    const scale = el("div", { class: "tc-scale", "aria-hidden": "true" });
    const attention = el("div", { class: "tc-digit-side" }, [attentionTable, scale]);
    const summary = el("p", { class: "tc-digit-answer", "aria-live": "polite" });
    const answers = el("table", { class: "tc-beams tc-digit-probs" });
    const note = el("p", { class: "tc-note", text: "Both models run in your browser, with the weights the chapter " +
      "trained (its first seed), rounded to four decimals; nothing is downloaded." });
    root.appendChild(el("div", { class: "tc-live-explorer tc-vit" }, [controls,
      el("div", { class: "tc-row tc-digit-views" }, [drawing, attention]), summary, answers, note]));

    let reading = null;
    function showCells() {
      cells.forEach((cell, n) => {
        const v = pixels[n];
        const grey = Math.round(255 * (1 - v));
        cell.style.background = `rgb(${grey},${grey},${grey})`;
        const named = levels.indexOf(v) >= 0 ? LEVEL_NAMES[levels.indexOf(v)] : `ink ${percent(v, 0)}`;
        cell.setAttribute("aria-label", `row ${Math.floor(n / SIZE) + 1}, column ${n % SIZE + 1}: ${named}`);
      });
    }
    function classRow() { // the last layer's class-token row: heads averaged, or one head
      const layer = reading.attention[reading.attention.length - 1];
      if (head.value !== "all") return layer[Number(head.value)];
      return layer[0].map((_, j) => layer.reduce((s, h) => s + h[j], 0) / layer.length);
    }
    function showAttention() {
      const row = classRow();
      const weights = row.slice(1);
      const top = Math.max(...weights) || 1; // the colour runs from 0 to the largest patch weight, as the figure
      attentionTable.textContent = "";
      attentionTable.appendChild(el("caption", { text: `The class token's attention over the 16 patches ` +
        `(${head.value === "all" ? "heads averaged" : `head ${Number(head.value) + 1}`}), per cent; ` +
        `on itself: ${percent(row[0], 0)}` }));
      for (let r = 0; r < side; r++) {
        const tr = el("tr");
        for (let c = 0; c < side; c++) {
          const w = weights[r * side + c];
          const color = blues(w / top);
          tr.appendChild(el("td", { text: percent(w, 0), title: `patch ${r * side + c + 1} (rows ${r * p + 1}-` +
            `${r * p + p}, columns ${c * p + 1}-${c * p + p}): ${percent(w, 1)}`,
          style: `background:rgb(${color.join(",")});color:${inkOn(color)}` }));
        }
        attentionTable.appendChild(tr);
      }
      const stops = [0, 0.25, 0.5, 0.75, 1].map((t) => `rgb(${blues(t).join(",")}) ${100 * t}%`).join(",");
      scale.textContent = "";
      scale.append(el("span", { class: "tc-scale-bar", style: `background:linear-gradient(to right,${stops})` }),
        el("span", { class: "tc-scale-ends", text: `0% \u2192 ${percent(top, 0)}` }));
    }
    function showAnswers() {
      const vit = reading.probs;
      const lin = reading.linear;
      const best = [argmax(vit), argmax(lin)];
      summary.textContent = "";
      summary.append("Vision Transformer: ", el("b", { text: String(best[0]) }), ` (${percent(vit[best[0]], 1)}); ` +
        "linear layer: ", el("b", { text: String(best[1]) }), ` (${percent(lin[best[1]], 1)})` +
        (best[0] === best[1] ? ": they agree." : ": they differ."));
      answers.textContent = "";
      answers.appendChild(el("caption", { text: "Probability of each digit" }));
      answers.appendChild(el("tr", {}, ["digit", "Vision Transformer", "linear layer"].map((t) =>
        el("th", { scope: "col", text: t }))));
      for (let k = 0; k < vit.length; k++) {
        const cell = (probs, answer) => {
          const td = el("td");
          const shown = el("span", { class: "tc-prob" }, [el("span", { class: "tc-prob-bar", "aria-hidden": "true",
            style: `width:${(4 * probs[k]).toFixed(2)}em` })]);
          shown.append(` ${percent(probs[k], 1)}`);
          td.append(shown, ...(answer ? [" ", el("b", { class: "tc-prob", text: "\u25c0 answer" })] : []));
          return td;
        };
        answers.appendChild(el("tr", {}, [el("th", { scope: "row", text: String(k) }), cell(vit, k === best[0]),
          cell(lin, k === best[1])]));
      }
    }
    function update() {
      const image = Array.from(pixels);
      const r = model.read(image);
      reading = { probs: r.probs, attention: r.attention, linear: linearProbs(state.linear, image) };
      root.dataset.reads = String(Number(root.dataset.reads || 0) + 1); // the tests wait on it
      showCells();
      showAttention();
      showAnswers();
    }
    function moveTo(n) {
      cells[focused].tabIndex = -1;
      focused = n;
      cells[n].tabIndex = 0;
      cells[n].focus();
    }
    function press(n) {
      pixels[n] = nextLevel(levels, pixels[n]);
      update();
    }
    grid.addEventListener("click", (event) => {
      const n = cells.indexOf(event.target);
      if (n < 0) return;
      moveTo(n);
      press(n);
    });
    grid.addEventListener("keydown", (event) => {
      const r = Math.floor(focused / SIZE);
      const c = focused % SIZE;
      const to = { ArrowUp: [r - 1, c], ArrowDown: [r + 1, c], ArrowLeft: [r, c - 1], ArrowRight: [r, c + 1],
        Home: [r, 0], End: [r, SIZE - 1] }[event.key];
      if (to) {
        event.preventDefault();
        moveTo(Math.min(SIZE - 1, Math.max(0, to[0])) * SIZE + Math.min(SIZE - 1, Math.max(0, to[1])));
      } else if (event.key === " " || event.key === "Enter") {
        event.preventDefault();
        press(focused);
      }
    });
    start.addEventListener("change", () => {
      const n = Number(start.value);
      pixels.set(n < 0 ? new Array(SIZE * SIZE).fill(0) : state.menu[n].pixels);
      update();
    });
    head.addEventListener("change", showAttention);
    update();
    root.tcExplorer = { grid, cells, start, head, pixels: () => Array.from(pixels), reading: () => reading, model };
  }

  window.tcVitExplorer = { VisionModel, linearProbs, nextLevel, softmax };
  explorers.register("vit", vitExplorer); // explorers.js starts it, as every explorer
})();
