/* The positional-encoding explorer of the static book, live in the page: window.tcExplorers' peTable,
 * sinusoidalSimilarity, ropeScores, ropeScoresFor, positionalFigure, positionalProblem and positionalNote.
 *
 *   data-explorer="positional"  sliders for d_model, the dimensions and the positions; the waves,
 *                               the table and both similarity matrices are computed here from the
 *                               formulas of section 3.5 and of RoPE.
 * Loaded after explorers.js, whose page helpers and theme it draws with and which starts it (the
 * explorer kind "positional", registered below). The figure mirrors transformer_lib.figures.positions'
 * positional_encoding_figure; the checks and messages, its checks (tests/test_live_js.py compares).
 */
(function () {
  "use strict";

  const explorers = window.tcExplorers; // explorers.js: loaded first
  const { baseLayout, plotConfig, axisStyle, colorscale } = explorers;
  const { el, labelled, message, markStale, name, debounce, plotlyReady, isNarrow } = explorers.dom;
  const theme = () => window.bookText.theme(); // book-text.js: on every page with an explorer

  function frequencies(d) { // omega_i = 1 / 10000^(2i / d)
    const w = [];
    for (let i = 0; i < d; i += 2) w.push(1 / Math.pow(10000, i / d));
    return w;
  }

  function peTable(d, first, last) { // rows: positions first..last; float32 as the library's table
    const w = frequencies(d);
    const rows = [];
    for (let p = first; p <= last; p++) {
      const row = new Array(d);
      for (let i = 0; i < d / 2; i++) {
        row[2 * i] = Math.fround(Math.sin(p * w[i]));
        row[2 * i + 1] = Math.fround(Math.cos(p * w[i]));
      }
      rows.push(row);
    }
    return rows;
  }

  // Both similarity matrices depend on m - n only: compute one value per offset, then fill.
  function byOffset(n, valueAt) {
    const values = new Map();
    const z = [];
    for (let m = 0; m < n; m++) {
      const row = new Array(n);
      for (let k = 0; k < n; k++) {
        const off = k - m;
        if (!values.has(off)) values.set(off, valueAt(off));
        row[k] = values.get(off);
      }
      z.push(row);
    }
    return z;
  }

  function sinusoidalSimilarity(d, n) { // PE(m) . PE(n) = sum_i sin sin + cos cos = sum_i cos((n - m) omega_i)
    const w = frequencies(d);
    return byOffset(n, (off) => w.reduce((s, wi) => s + Math.cos(off * wi), 0));
  }

  function normals(count, seed) { // a fixed random query and key: mulberry32 + Box-Muller
    const uniform = window.bookText.mulberry32(seed);
    const out = [];
    while (out.length < count) {
      const u = 1 - uniform();
      const v = uniform();
      const radius = Math.sqrt(-2 * Math.log(u));
      out.push(radius * Math.cos(2 * Math.PI * v), radius * Math.sin(2 * Math.PI * v));
    }
    return out.slice(0, count);
  }

  // RoPE: q rotated to position m, k to n; (R(m w) q) . (R(n w) k) = q . R((n - m) w) k, so per pair
  // (a, b) of q and (c, e) of k: (a c + b e) cos(theta) + (b c - a e) sin(theta), theta = (n - m) w_i.
  function ropeScores(d, n) {
    const r = normals(2 * d, 0);
    return ropeScoresFor(r.slice(0, d), r.slice(d), n);
  }
  function ropeScoresFor(q, k, n) { // the scores of one query q and key k (length d) over n positions
    const d = q.length;
    const w = frequencies(d);
    return byOffset(n, (off) => {
      let s = 0;
      for (let i = 0; i < d / 2; i++) {
        const [a, b, c, e] = [q[2 * i], q[2 * i + 1], k[2 * i], k[2 * i + 1]];
        const theta = off * w[i];
        s += (a * c + b * e) * Math.cos(theta) + (b * c - a * e) * Math.sin(theta);
      }
      return s / Math.sqrt(d);
    });
  }

  // transformer_lib.figures.positions.positional_encoding_figure, in a 2 x 2 grid (one column when narrow).
  function positionalFigure(d, dims, positions, width) {
    const [firstDim, lastDim] = dims;
    const [first, last] = positions;
    const n = last - first + 1;
    const xs = Array.from({ length: n }, (_, i) => first + i);
    const table = peTable(d, first, last);
    const narrow = isNarrow(width);
    const cells = narrow ? [[0, 0], [1, 0], [2, 0], [3, 0]] : [[0, 0], [0, 1], [1, 0], [1, 1]];
    const rows = narrow ? 4 : 2;
    const cols = narrow ? 1 : 2;
    const hs = narrow ? 0.12 : 0.2; // wide: room between the columns for a colour scale and the next y axis
    // gaps between rows (paper fraction); when narrow, the legend goes under the waves: a wider gap there
    const gaps = narrow ? [0.13, 0.075, 0.075] : [0.14];
    const w = (1 - hs * (cols - 1)) / cols;
    const h = (1 - gaps.reduce((a, b) => a + b, 0)) / rows;
    const top = (r) => 1 - r * h - gaps.slice(0, r).reduce((a, b) => a + b, 0);
    const titles = [`waves of dimensions ${firstDim}\u2013${lastDim}`, "PE table: position \u00d7 dimension",
      "sinusoidal: PE(m) \u00b7 PE(n)", "RoPE: q at m \u00b7 k at n / \u221ad"];
    const layout = baseLayout({
      height: narrow ? 1500 : 820,
      title: { text: narrow ? `Positional encodings,<br>d_model = ${d}` : `Positional encodings, d_model = ${d}` },
      // wide: the legend in rows under the figure, clear of the colour scales beside the panels
      legend: { font: { size: 11 }, orientation: "h", x: 0, y: -0.1, yanchor: "top" }, annotations: [],
      margin: Object.assign({}, theme().layout.margin, { b: 110 }),
    });
    if (narrow) {
      layout.margin = { l: 55, r: 45, t: 110, b: 50 }; // r: the colour scales
      layout.legend = { font: { size: 11 }, orientation: "h", x: 0, y: top(0) - h - 0.042, yanchor: "top" };
    }
    const axisTitles = [["position", "value"], ["dimension", "position"], ["position n", "position m"],
      ["position n", "position m"]];
    cells.forEach(([r, c], i) => {
      const n1 = i === 0 ? "" : String(i + 1);
      const x0 = c * (w + hs);
      const y1 = top(r);
      layout[`xaxis${n1}`] = Object.assign({}, axisStyle(), { domain: [x0, x0 + w], anchor: `y${n1}`,
        title: { text: axisTitles[i][0] } });
      layout[`yaxis${n1}`] = Object.assign({}, axisStyle(), { domain: [y1 - h, y1], anchor: `x${n1}` },
        { title: { text: axisTitles[i][1] } }, i > 0 ? { autorange: "reversed" } : {});
      layout.annotations.push({ text: titles[i], x: x0 + w / 2, y: y1, xref: "paper", yref: "paper",
        xanchor: "center", yanchor: "bottom", showarrow: false, font: { size: 16 } });
    });
    const data = [];
    for (let dim = firstDim; dim <= lastDim; dim++) {
      const pair = Math.floor(dim / 2);
      const wavelength = 2 * Math.PI * Math.pow(10000, (2 * pair) / d);
      const sin = dim % 2 === 0;
      const fn = sin ? "sin" : "cos";
      data.push({ type: "scatter", mode: "lines", x: xs, y: table.map((row) => row[dim]), name: `dim ${dim} (${fn})`,
        xaxis: "x", yaxis: "y", line: { dash: sin ? "solid" : "dot" },
        hovertemplate: `dim ${dim}: ${fn}(pos / 10000^(${2 * pair}/${d})), wavelength ${Number(wavelength.toPrecision(3))}` +
          "<br>position %{x}: %{y:.3f}<extra></extra>" });
    }
    // each heatmap's colour scale beside its panel, slim (figures.positions._colorbar), inside the figure
    const colorbar = (panel) => {
      const [r, c] = cells[panel];
      return { x: c * (w + hs) + w + 0.01, xanchor: "left", y: top(r) - h / 2, yanchor: "middle", len: h,
        thickness: 10, xpad: 4, tickfont: { size: 10 } };
    };
    const matrix = (z, x, y, hover, axes, extra) => Object.assign({ type: "heatmap", z, x, y,
      colorbar: colorbar(Number(axes[0].slice(1)) - 1), xaxis: axes[0], yaxis: axes[1],
      hovertemplate: hover + "<extra></extra>" }, extra);
    data.push(matrix(table, Array.from({ length: d }, (_, i) => i), xs, "position %{y}, dimension %{x}: %{z:.3f}",
      ["x2", "y2"], { colorscale: colorscale("RdBu"), zmid: 0 }));
    data.push(matrix(sinusoidalSimilarity(d, n), xs, xs, "m=%{y}, n=%{x}: %{z:.2f}", ["x3", "y3"],
      { colorscale: colorscale("Viridis") }));
    data.push(matrix(ropeScores(d, n), xs, xs, "m=%{y}, n=%{x}: %{z:.2f}", ["x4", "y4"], { colorscale: colorscale("Viridis") }));
    return { data, layout };
  }

  // The checks and messages of positional_encoding_figure, as the kernel's explorer shows them
  // (tests/test_live_js.py compares the two); null when the sliders' settings can be drawn.
  function positionalProblem(d, dims, positions) {
    const { max_positions: maxPositions, max_waves: maxWaves } = theme().limits;
    const [a, b] = dims;
    const [p, q] = positions;
    // positional_encoding_figure's checks and messages (tests/test_live_js.py compares them)
    if (!(a <= b)) return `The first dimension (${a}) is after the last (${b}): choose a first dimension no larger than the last.`;
    if (!(0 <= a && b <= d - 1)) return `Each dimension must lie between 0 and ${d - 1}, got ${a} to ${b}.`;
    if (b - a + 1 > maxWaves) {
      return `Dimensions ${a} to ${b} are ${b - a + 1} waves; at most ${maxWaves} fit in one plot: choose a shorter range.`;
    }
    if (!(p <= q)) return `The first position (${p}) is after the last (${q}): choose a first position no larger than the last.`;
    if (!(0 <= p && q <= maxPositions)) return `Each position must lie between 0 and ${maxPositions}, got ${p} to ${q}.`;
    return null;
  }

  // transformer_lib.figures.positions.positions_note: a word beside a figure its settings leave nearly empty
  function positionalNote(positions) {
    const [p, q] = positions;
    if (p !== q) return null;
    return `One position only (${p}): each wave is a single point and each matrix a single cell. ` +
      "Move the last position to see the waves.";
  }

  function positionalExplorer(root, state) {
    const slider = (min, max, step, value) => el("input", { type: "range", min: String(min), max: String(max),
      step: String(step), value: String(value) });
    const { max_positions: MAX_POSITIONS } = theme().limits;
    const dModel = slider(4, MAX_POSITIONS, 2, state.d_model);
    const dimFirst = slider(0, state.d_model - 1, 1, state.dims[0]);
    const dimLast = slider(0, state.d_model - 1, 1, state.dims[1]);
    const posFirst = slider(0, MAX_POSITIONS, 1, state.positions[0]);
    const posLast = slider(0, MAX_POSITIONS, 1, state.positions[1]);
    const line = (label, input) => {
      const field = labelled(label, input);
      const readout = el("output", { for: input.id, class: "tc-readout" });
      field.appendChild(readout);
      const update = () => { readout.textContent = input.value; };
      input.addEventListener("input", update);
      update();
      return el("div", { class: "tc-row tc-slider" }, [field]);
    };
    const messages = el("div", { class: "tc-messages", role: "status" });
    const figure = el("div", { class: "tc-figure" });
    const note = el("p", { class: "tc-note", text: "Computed in your browser from the formulas (no model " +
      "needed); the RoPE panel uses one fixed random query and key." });
    root.appendChild(el("div", { class: "tc-live-explorer tc-positional" }, [
      line("d_model", dModel), line("first dimension", dimFirst), line("last dimension", dimLast),
      line("first position", posFirst), line("last position", posLast), messages, figure, note]));

    const value = (input) => Number(input.value);
    let good = null; // the settings of the last good figure, which stays while an error shows
    function paint(settings) { // at the figure's width now: after a resize too, error or not
      const fig = positionalFigure(...settings, figure.clientWidth || root.clientWidth);
      window.Plotly.react(figure, fig.data, fig.layout, plotConfig());
      name(figure, fig.layout);
    }
    function draw() {
      if (!plotlyReady()) return;
      const problem = positionalProblem(value(dModel), [value(dimFirst), value(dimLast)],
        [value(posFirst), value(posLast)]);
      if (problem) { // the last good figure stays, marked stale
        message(messages, problem, "error");
        if (good) paint(good);
        markStale(messages, [figure], true);
        return;
      }
      message(messages, positionalNote([value(posFirst), value(posLast)]) || "", "info");
      markStale(messages, [figure], false);
      good = [value(dModel), [value(dimFirst), value(dimLast)], [value(posFirst), value(posLast)]];
      paint(good);
    }
    dModel.addEventListener("change", () => { // the dimension sliders stay inside the new d_model
      for (const input of [dimFirst, dimLast]) {
        input.max = String(value(dModel) - 1);
        input.value = String(Math.min(value(input), value(dModel) - 1));
        input.dispatchEvent(new Event("input"));
      }
      draw();
    });
    for (const input of [dimFirst, dimLast, posFirst, posLast]) input.addEventListener("change", draw);
    window.addEventListener("resize", debounce(draw, 200));
    draw();
    root.tcExplorer = { draw, dModel, dimFirst, dimLast, posFirst, posLast, figure, messages };
  }

  Object.assign(explorers, { peTable, sinusoidalSimilarity, ropeScores, ropeScoresFor, positionalFigure,
    positionalProblem, positionalNote });
  explorers.register("positional", positionalExplorer);
})();
