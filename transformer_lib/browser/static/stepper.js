/* The decoding stepper of the static book: every div.tc-live[data-explorer="stepper"] becomes one.
 *
 * Type a sentence, choose a beam size (1: greedy, 2 to 4: beam search), then step through the
 * search with the previous / next buttons (or the arrow keys): each step shows the top candidates
 * of every live beam with their probabilities (the chosen token, the extensions kept and an <eos>
 * that ends a hypothesis named beside their bars, the chosen bar outlined), the beams kept, the hypotheses ended, and the
 * cross-attention row behind the choice. The trace is window.bookModel.trace (book-trace.js, on the
 * page's model core), computed once per sentence and beam size: a step only redraws (Plotly.react).
 * The figures and tables mirror transformer_lib.figures.decoding_steps; the settings and the
 * kernel's first trace come from transformer_lib.browser.stepper.DecodingStepper's HTML.
 */
(function () {
  "use strict";
  const CHOSEN = "chosen";
  const KEPT = "kept";
  const ENDS = "ends";

  const theme = () => window.bookModel.theme();
  const escapeHtml = (s) => String(s).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;");
  const tokensHtml = (tokens) => escapeHtml(tokens.join(" ")) || "(nothing)";
  const same = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);
  const rounded = (x) => { // to html_embed.PAGE_DECIMALS places, as the figures the kernel embeds
    const scale = 10 ** theme().limits.page_decimals;
    return Math.round(x * scale) / scale;
  };

  function baseLayout(extra) {
    return Object.assign(JSON.parse(JSON.stringify(theme().layout)), extra);
  }
  function axis(extra) {
    return Object.assign({}, theme().axis, extra);
  }

  // figures.decoding_steps.candidate_marks
  function candidateMarks(record) {
    return record.beams.map((beam, j) => {
      const read = beam.prefix.slice(1);
      const kept = new Set(record.kept.filter((k) => k.beam === j).map((k) => k.tokens[k.tokens.length - 1]));
      for (const f of record.finished) {
        if (f.tokens.length && same(f.tokens.slice(0, -1), read)) kept.add(f.tokens[f.tokens.length - 1]);
      }
      const ends = record.finished.some((f) => same(f.tokens, read));
      return beam.candidates.map(([token]) => {
        if (record.chosen.beam === j && record.chosen.token === token) return CHOSEN;
        if (kept.has(token)) return KEPT;
        if (token === "<eos>" && ends) return ENDS;
        return "";
      });
    });
  }

  function labelMargin(trace, narrow) { // px for the longest candidate label of any step, and the axis title
    let longest = 0;
    for (const record of trace.steps) {
      for (const beam of record.beams) for (const [token] of beam.candidates) longest = Math.max(longest, token.length);
    }
    return Math.min(260, 50 + 7.5 * (longest + (trace.beam_size > 1 ? (narrow ? 4 : 8) : 0)));
  }

  // figures.decoding_steps.total_log_prob and _bar_text: what beam search ranks a candidate by, its
  // beam's log p plus its own, beside its probability when there are several beams
  const totalLogProb = (beam, p) => beam.log_prob + (p > 0 ? Math.log(p) : -Infinity);
  function barText(beam, p, mark, scored, narrow) { // narrow: "(-1.23)", the summary says what it is
    const total = scored && p > 0 ? ` (${narrow ? "" : "log p "}${totalLogProb(beam, p).toFixed(2)})` : "";
    return p.toFixed(2) + total + (mark ? ` \u25c0 ${mark}` : "");
  }

  // figures.decoding_steps.beam_rule_html: the kept/dropped rule in one sentence (none for greedy)
  function beamRule(trace) {
    if (trace.beam_size === 1) return "";
    return "<p class='tc-rule'>Beam search keeps a candidate by its total log p (in brackets: its beam's log p " +
      `plus its own), not by its bar: the ${trace.beam_size} highest totals go on; one that ends with ` +
      "&lt;eos&gt; leaves the search, and the ended ones are ranked by score = log p / ((5 + length) / 6)" +
      `<sup>\u03b1</sup>, \u03b1 = ${trace.alpha}.</p>`;
  }

  // figures.decoding_steps.step_figures: the candidates and the cross-attention row of the choice
  function stepFigures(trace, step, width) {
    const record = trace.steps[step - 1];
    const marks = candidateMarks(record);
    const many = record.beams.length > 1;
    const narrow = window.tcExplorers.dom.isNarrow(width);
    let nBars = 0;
    const barData = record.beams.map((beam, j) => {
      const probs = beam.candidates.map(([, p]) => rounded(p));
      nBars += probs.length;
      return {
        type: "bar", orientation: "h", name: `beam ${j + 1}`, x: probs,
        y: beam.candidates.map(([token]) => (many ? `${narrow ? "b" : "beam "}${j + 1}: ${token}` : token)),
        text: beam.candidates.map(([, p], i) => barText(beam, p, marks[j][i], trace.beam_size > 1, narrow)),
        textposition: "outside", cliponaxis: false,
        // the chosen bar outlined (a shape, not a colour); no hatching: plotly's patterns cost a step 3x the time
        marker: { line: { color: "black", width: marks[j].map((m) => (m === CHOSEN ? 2.5 : 0)) } },
        hovertemplate: "%{y}: p = %{x:.4f}<extra></extra>",
      };
    });
    const title = `Step ${record.step}: the next token's top candidates`;
    const barLayout = baseLayout({
      title: { text: narrow ? `Step ${record.step}:<br>the next token's top candidates` : title },
      xaxis: axis({ title: { text: "probability" }, range: [0, trace.beam_size > 1 ? 2.1 : 1.45],
        tickvals: [0, 0.25, 0.5, 0.75, 1] }),
      yaxis: axis({ title: { text: "candidate" }, autorange: "reversed", type: "category", automargin: false }),
      height: 140 + 24 * nBars, showlegend: false, // each label names its beam
      // a margin fixed for the whole trace (room for its longest label), not plotly's automargin: a
      // step then redraws the bars without a second layout pass (stepping must be fast)
      margin: Object.assign({}, theme().layout.margin, { l: labelMargin(trace, narrow) }),
    });
    const beam = record.beams[record.chosen.beam];
    const rows = [];
    const z = [];
    beam.cross.forEach((heads, l) => heads.forEach((row, h) => {
      rows.push(`layer ${l + 1}, head ${h + 1}`);
      z.push(row.map((w) => rounded(w)));
    }));
    const src = trace.src_tokens;
    const crossData = [{ type: "heatmap", z, x: src.map((_, i) => i), y: rows, coloraxis: "coloraxis",
      hovertemplate: "%{y}, source %{x}: weight %{z:.3f}<extra></extra>" }];
    const crossLayout = baseLayout({
      title: { text: `Cross-attention reading \u201c${escapeHtml(beam.prefix[beam.prefix.length - 1])}\u201d` },
      coloraxis: { cmin: 0, cmax: 1, colorscale: theme().colorscales.Blues, colorbar: { title: { text: "weight" } } },
      xaxis: axis({ title: { text: "source token (key)" }, tickmode: "array", tickangle: -45,
        tickvals: src.map((_, i) => i), ticktext: src.map(escapeHtml) }),
      yaxis: axis({ title: { text: "layer, head" }, autorange: "reversed", automargin: false }),
      margin: Object.assign({}, theme().layout.margin, { l: 140 }), // "layer 2, head 4" and the axis title
      height: 140 + 26 * rows.length,
    });
    if (narrow) {
      for (const layout of [barLayout, crossLayout]) Object.assign(layout.margin, { r: 10, t: 80, b: 50 });
      barLayout.xaxis.range = [0, trace.beam_size > 1 ? 2.9 : 1.9]; // room for "0.95 (-1.23) ◀ chosen"
      barLayout.xaxis.tickvals = [0, 0.5, 1];
      crossLayout.coloraxis.colorbar.thickness = 12;
    }
    return { bars: { data: barData, layout: barLayout }, cross: { data: crossData, layout: crossLayout } };
  }

  // figures.decoding_steps.step_summary_html
  function stepSummary(trace, step) {
    const record = trace.steps[step - 1];
    const chosen = record.chosen;
    const beam = record.beams[chosen.beam];
    const which = record.beams.length > 1 ? `beam ${chosen.beam + 1} ` : "";
    const parts = [`<p><b>Step ${record.step} of ${trace.steps.length}</b>: ${which}reading ` +
      `\u201c${tokensHtml(beam.prefix)}\u201d, the best next token is \u201c${escapeHtml(chosen.token)}\u201d ` +
      `(p = ${chosen.probability.toFixed(2)}).</p>`];
    parts.push(beamRule(trace));
    if (record.kept.length) {
      parts.push("<table class='tc-beams'><caption>Beams kept for the next step</caption><thead><tr>" +
        "<th scope='col'>next step's beam</th><th scope='col'>its bar here</th><th scope='col'>tokens</th>" +
        "<th scope='col'>log p</th></tr></thead><tbody>" +
        record.kept.map((k, i) => `<tr><td>${i + 1}</td><td>${record.beams.length > 1 ? `beam ${k.beam + 1}: ` : ""}` +
          `${escapeHtml(k.tokens[k.tokens.length - 1])}</td>` +
          `<td>${tokensHtml(k.tokens)}</td><td>${k.log_prob.toFixed(3)}</td></tr>`).join("") + "</tbody></table>");
    }
    if (record.finished.length) {
      parts.push("<table class='tc-beams'><caption>Hypotheses that ended at this step</caption><thead><tr>" +
        "<th scope='col'>tokens</th><th scope='col'>log p</th><th scope='col'>score</th></tr></thead><tbody>" +
        record.finished.map((f) => `<tr><td>${tokensHtml(f.tokens)}</td><td>${f.log_prob.toFixed(3)}</td>` +
          `<td>${f.score.toFixed(3)}</td></tr>`).join("") + "</tbody></table>");
    }
    if (record.step === trace.steps.length) {
      const how = trace.ended ? "ended with &lt;eos&gt;" : `cut at the length limit (${trace.max_len} tokens)`;
      parts.push(`<p><b>Result</b> (${how}): ${tokensHtml(trace.tokens)}</p>`);
    }
    return parts.join("");
  }

  // ------------------------------------------------------------------ the control

  function stepper(root, state) {
    // the page's DOM helpers and figure naming, shared with the attention explorer (explorers.js, loaded first)
    const { el, labelled, acceptText, name: nameFigure } = window.tcExplorers.dom;
    function message(box, text, level) { // appended: a step may carry several notes
      box.appendChild(el("div", { class: `tc-message tc-${level || "info"}`, text }));
    }
    const bookModel = window.bookModel;
    const input = el("input", { type: "text", placeholder: "type a sentence, then Enter", autocomplete: "off",
      spellcheck: "false" });
    input.value = state.sentence || "";
    const button = el("button", { type: "submit", class: "tc-button", text: "Translate" });
    const form = el("form", { class: "tc-row tc-sentence" }, [labelled("Sentence", input), button]);
    const beam = el("select");
    for (let k = 1; k <= bookModel.maxBeam; k++) beam.appendChild(el("option", { value: String(k), text: k === 1 ? "1 (greedy)" : String(k) }));
    beam.value = String(state.beam || 1);
    const previous = el("button", { type: "button", class: "tc-button", text: "\u25c0 previous step" });
    const next = el("button", { type: "button", class: "tc-button", text: "next step \u25b6" });
    const position = el("output", { class: "tc-readout", "aria-live": "polite" });
    const controls = el("div", { class: "tc-row tc-controls" }, [labelled("Beam size", beam), previous, position, next]);
    const messages = el("div", { class: "tc-messages", role: "status" });
    const summary = el("div", { class: "tc-output tc-summary" });
    const bars = el("div", { class: "tc-figure" });
    const cross = el("div", { class: "tc-figure" });
    const note = el("p", { class: "tc-note", text: "This stepper runs the book's trained model in your browser " +
      "(downloaded once, the first time you change the sentence or the beam size). Left and right arrow keys step too." });
    root.appendChild(el("div", { class: "tc-live-explorer tc-stepper" },
      [form, controls, messages, bars, summary, cross, note])); // the chart right under its controls (a phone too)

    let trace = null;
    let step = 1;
    let busy = 0;

    function buttons() {
      previous.disabled = !trace || step <= 1;
      next.disabled = !trace || step >= trace.steps.length;
      position.textContent = trace ? `step ${step} of ${trace.steps.length}` : "";
    }

    function draw() {
      buttons();
      if (!trace) return;
      summary.innerHTML = stepSummary(trace, step);
      if (typeof window.Plotly === "undefined") return;
      const figs = stepFigures(trace, step, bars.clientWidth || root.clientWidth);
      window.Plotly.react(bars, figs.bars.data, figs.bars.layout, theme().config);
      window.Plotly.react(cross, figs.cross.data, figs.cross.layout, theme().config);
      nameFigure(bars, figs.bars.layout);
      nameFigure(cross, figs.cross.layout);
    }

    function show(t) {
      trace = t;
      step = 1;
      messages.textContent = "";
      for (const n of t.notes || []) message(messages, n, "warning");
      draw();
    }

    function clear() {
      trace = null;
      summary.textContent = "";
      if (typeof window.Plotly !== "undefined") { window.Plotly.purge(bars); window.Plotly.purge(cross); }
      bars.textContent = "";
      cross.textContent = "";
      buttons();
    }

    async function run() {
      const text = input.value;
      messages.textContent = "";
      if (!acceptText(text, messages, button, clear)) return;
      const ticket = ++busy;
      try {
        const t = await bookModel.trace(text, { beam: Number(beam.value) });
        if (ticket === busy) show(t);
      } catch (err) {
        if (ticket === busy) {
          clear();
          messages.textContent = "";
          const known = err && err.name === "ReaderError";
          const text = known ? err.message.charAt(0).toUpperCase() + err.message.slice(1)
            : bookModel.fill("failed", { error: err && err.message ? err.message : err });
          message(messages, text, known ? err.level : "error");
        }
      } finally {
        if (ticket === busy) button.disabled = false;
      }
    }

    function go(to) {
      if (!trace) return;
      step = Math.min(Math.max(to, 1), trace.steps.length);
      draw();
    }

    form.addEventListener("submit", (event) => { event.preventDefault(); run(); });
    beam.addEventListener("change", run);
    previous.addEventListener("click", () => go(step - 1));
    next.addEventListener("click", () => go(step + 1));
    root.addEventListener("keydown", (event) => { // arrows step, except where they edit or choose
      if (["INPUT", "SELECT", "TEXTAREA"].includes(event.target.tagName)) return;
      if (event.key === "ArrowLeft") { event.preventDefault(); go(step - 1); }
      if (event.key === "ArrowRight") { event.preventDefault(); go(step + 1); }
    });
    let lastWidth = window.innerWidth;
    window.addEventListener("resize", () => { // as explorers.js: a width change re-lays out the figures
      if (window.innerWidth === lastWidth) return;
      lastWidth = window.innerWidth;
      clearTimeout(root.tcResize);
      root.tcResize = setTimeout(draw, 200);
    });

    if (state.result) show(state.result);
    else {
      clear();
      if (!input.value) message(messages, bookModel.fill("empty", {}), "info");
    }
    root.tcExplorer = { run, go, input, button, beam, previous, next, bars, cross, summary, messages,
      get step() { return step; }, get trace() { return trace; } };
  }

  window.tcStepper = { candidateMarks, stepFigures, stepSummary, totalLogProb };
  window.tcExplorers.register("stepper", stepper); // explorers.js starts it, as every explorer
})();
