/* The attention explorer's maps drawn without plotly: window.tcHeatmaps.draw(div, figure) draws a figure
 * that explorers.js's attentionFigure describes in plotly's own form (heatmap traces on one colour axis,
 * subplots placed by their axes' domains, token axes with array ticks, the y axes reversed, the x
 * labels at -45 degrees, paper-positioned annotations, a title) as the cells on a <canvas> and every
 * text (the title, the tick labels, the axis titles, the annotations, the colour bar's ticks and its
 * title) in an <svg> laid over it. Why not plotly: on every redraw plotly lays out and draws its SVG
 * axes, its heatmap images and its colour bar again, about 45 of the ~55 ms from Enter to the drawn maps
 * (benchmarks/live_model.py); this draws the same maps in a few ms. Only what attentionFigure uses is
 * drawn, the same way at every width; the div keeps the figure it shows (div.data, div.layout, as
 * plotly's divs do) and where each cell is (div.tcCell), which tests/test_live_redraw.py reads back
 * with the canvas's pixels. A pointer over a cell shows its hover text, as plotly's did.
 * Loaded before explorers.js, which draws with it; the figures scale with their box on paper.
 */
(function () {
  "use strict";
  const SVG = "http://www.w3.org/2000/svg";
  const PAD = 6; // px between a panel's edge and its tick labels
  const CB = { xpad: 10, ypad: 10, thickness: 30, gap: 4 }; // plotly's colour bar defaults (its labels 4 px off)

  const unescape = (s) => String(s).replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, "\"")
    .replace(/&amp;/g, "&");
  const xml = (s) => String(s).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  const plain = (s) => unescape(String(s).replace(/<[^>]+>/g, "")); // a label's text, without plotly's markup
  const lines = (s) => String(s || "").split(/<br\s*\/?>/i).map(plain);

  // The colour of t in [0, 1] on a plotly colour scale ([[stop, "rgb(r,g,b)"], ...]): linear in RGB
  // between stops, rounded (the tests compute it the same way from the same theme).
  function colorAt(scale, t) {
    const v = Math.min(1, Math.max(0, Number.isFinite(t) ? t : 0));
    let i = 1;
    while (i < scale.length - 1 && scale[i][0] < v) i++;
    const [s0, c0] = scale[i - 1];
    const [s1, c1] = scale[i];
    const f = s1 > s0 ? (v - s0) / (s1 - s0) : 0;
    const a = c0.match(/[\d.]+/g).map(Number);
    const b = c1.match(/[\d.]+/g).map(Number);
    return [0, 1, 2].map((k) => Math.round(a[k] + f * (b[k] - a[k])));
  }

  let ruler = null;
  function width(text, size, family) {
    if (typeof document === "undefined") return 0.6 * size * String(text).length;
    ruler = ruler || document.createElement("canvas").getContext("2d");
    ruler.font = `${size}px ${family}`;
    return ruler.measureText(String(text)).width;
  }

  // Where everything goes, in CSS px of a figure `w` wide: the plot area (plotly's: inside the margins,
  // less the colour bar's room on the right), each trace's panel, and the colour bar.
  function geometry(fig, w) {
    const { layout, data } = fig;
    const font = layout.font;
    const cb = Object.assign({ len: 1, y: 0.5, yanchor: "middle", thickness: CB.thickness }, layout.coloraxis.colorbar);
    const labelW = Math.max(...["0.0", "0.8", "1"].map((t) => width(t, font.size, font.family)));
    const cbTitleW = width(cb.title.text, font.size, font.family);
    const cbRoom = CB.xpad + Math.max(cb.thickness + CB.gap + labelW, cbTitleW) + 2;
    const m = layout.margin;
    const area = { x0: m.l, x1: w - m.r - cbRoom, y0: m.t, y1: layout.height - m.b };
    const px = (x) => area.x0 + x * (area.x1 - area.x0);
    const py = (y) => area.y1 - y * (area.y1 - area.y0);
    const panels = data.map((trace) => {
      const xa = layout[`xaxis${trace.xaxis.slice(1)}`];
      const ya = layout[`yaxis${trace.yaxis.slice(1)}`];
      const [dx, dy] = [xa.domain || [0, 1], ya.domain || [0, 1]];
      return { trace, xa, ya, x0: px(dx[0]), x1: px(dx[1]), y0: py(dy[1]), y1: py(dy[0]),
        rows: trace.z.length, cols: trace.z[0].length };
    });
    const span = cb.len * (area.y1 - area.y0);
    const anchorY = py(cb.y);
    const top = { top: anchorY, bottom: anchorY - span, middle: anchorY - span / 2 }[cb.yanchor];
    const bar = { x0: area.x1 + CB.xpad, x1: area.x1 + CB.xpad + cb.thickness,
      y0: top + CB.ypad, y1: top + span - CB.ypad, title: cb.title.text };
    return { area, panels, bar, px, py, font };
  }

  // A cell's box (CSS px): row i (query), column j (key) of a panel; the y axes are reversed (row 0 on top).
  function cellBox(p, i, j) {
    const cw = (p.x1 - p.x0) / p.cols;
    const ch = (p.y1 - p.y0) / p.rows;
    const row = p.ya.autorange === "reversed" ? i : p.rows - 1 - i;
    return { x0: p.x0 + j * cw, x1: p.x0 + (j + 1) * cw, y0: p.y0 + row * ch, y1: p.y0 + (row + 1) * ch };
  }

  function paint(canvas, g, scale, cmin, cmax, w, h) {
    const ratio = window.devicePixelRatio || 1;
    const [cw, chh] = [Math.round(w * ratio), Math.round(h * ratio)];
    if (canvas.width !== cw || canvas.height !== chh) [canvas.width, canvas.height] = [cw, chh];
    const ctx = canvas.getContext("2d");
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.clearRect(0, 0, cw, chh);
    // device pixels, edges rounded: neighbouring cells meet without a seam
    const fill = (rgb, x0, y0, x1, y1) => {
      const [a, b, c, d] = [x0, y0, x1, y1].map((v) => Math.round(v * ratio));
      ctx.fillStyle = `rgb(${rgb[0]},${rgb[1]},${rgb[2]})`;
      ctx.fillRect(a, b, c - a, d - b);
    };
    for (const p of g.panels) {
      for (let i = 0; i < p.rows; i++) {
        for (let j = 0; j < p.cols; j++) {
          const box = cellBox(p, i, j);
          fill(colorAt(scale, (p.trace.z[i][j] - cmin) / (cmax - cmin)), box.x0, box.y0, box.x1, box.y1);
        }
      }
    }
    const { bar } = g; // the colour bar: one row of device pixels at a time, cmax at the top
    const [b0, b1] = [Math.round(bar.y0 * ratio), Math.round(bar.y1 * ratio)];
    for (let y = b0; y < b1; y++) {
      const rgb = colorAt(scale, 1 - (y + 0.5 - b0) / (b1 - b0));
      ctx.fillStyle = `rgb(${rgb[0]},${rgb[1]},${rgb[2]})`;
      ctx.fillRect(Math.round(bar.x0 * ratio), y, Math.round(bar.x1 * ratio) - Math.round(bar.x0 * ratio), 1);
    }
  }

  // An SVG <text> centred on (x, y), turned by `angle` degrees (plotly's textangle: -90 reads upwards).
  function text(content, x, y, size, attrs) {
    const a = attrs || {};
    const turn = a.angle ? ` transform="rotate(${a.angle} ${x.toFixed(1)} ${y.toFixed(1)})"` : "";
    return `<text x="${x.toFixed(1)}" y="${y.toFixed(1)}" font-size="${size}" text-anchor="${a.anchor || "middle"}" ` +
      `dominant-baseline="central"${a.cls ? ` class="${a.cls}"` : ""}${turn}>${xml(content)}</text>`;
  }

  // The text layer: each axis's tick labels in a group of their own (as plotly's .xaxislayer-above, which
  // tests/reader_checks.py compares with everything else but not with each other), then titles.
  function labels(fig, g, w) {
    const { layout } = fig;
    const { font } = g;
    const size = font.size;
    const parts = [];
    const titleFont = Object.assign({ size: Math.round(1.4 * size) }, layout.title.font);
    const titleLines = lines(layout.title.text);
    const lh = 1.3 * titleFont.size;
    const ty = layout.margin.t / 2 - (lh * (titleLines.length - 1)) / 2;
    parts.push(`<text class="tc-figure-title" x="${(w / 2).toFixed(1)}" y="${ty.toFixed(1)}" font-size="${titleFont.size}" ` +
      `text-anchor="middle" dominant-baseline="central">${titleLines.map((l, k) =>
        `<tspan class="line" x="${(w / 2).toFixed(1)}" dy="${k ? lh.toFixed(1) : 0}">${xml(l)}</tspan>`).join("")}</text>`);
    const axisSize = Math.round(1.2 * size);
    g.panels.forEach((p, n) => {
      const xs = [];
      const ys = [];
      let deepest = 0;
      // -45 degrees (the figure's tickangle), the label's end at its tick: it reads up towards its column;
      // upright (-90) where the columns are too narrow for turned labels to clear each other (a phone)
      const cw = (p.x1 - p.x0) / p.cols;
      const angle = Math.SQRT1_2 * cw < 1.2 * size ? -90 : p.xa.tickangle || 0;
      p.xa.ticktext.forEach((t, j) => {
        const box = cellBox(p, 0, j);
        const label = plain(t);
        const w = width(label, size, font.family);
        xs.push(text(label, (box.x0 + box.x1) / 2, p.y1 + PAD, size, { anchor: "end", angle }));
        deepest = Math.max(deepest, angle === -90 ? w : Math.SQRT1_2 * (w + size));
      });
      p.ya.ticktext.forEach((t, i) => {
        const box = cellBox(p, i, 0);
        ys.push(text(plain(t), p.x0 - PAD, (box.y0 + box.y1) / 2, size, { anchor: "end" }));
      });
      parts.push(`<g class="xaxislayer-above" data-axis="${p.trace.xaxis}" data-trace="${n}">${xs.join("")}</g>`);
      parts.push(`<g class="yaxislayer-above" data-axis="${p.trace.yaxis}" data-trace="${n}">${ys.join("")}</g>`);
      if (p.xa.title && p.xa.title.text) {
        parts.push(text(plain(p.xa.title.text), (p.x0 + p.x1) / 2, p.y1 + PAD + deepest + 4 + axisSize / 2, axisSize,
          { cls: `g-${p.trace.xaxis}title` }));
      }
    });
    for (const a of layout.annotations || []) { // paper coordinates, anchored as plotly anchors them
      const asize = (a.font && a.font.size) || size;
      const content = plain(a.text);
      const along = width(content, asize, font.family);
      const [bw, bh] = a.textangle === -90 ? [1.2 * asize, along] : [along, 1.2 * asize];
      const x = g.px(a.x) + (a.xshift || 0);
      const y = g.py(a.y) - (a.yshift || 0);
      const cx = { left: x + bw / 2, right: x - bw / 2 }[a.xanchor] ?? x;
      const cy = { top: y + bh / 2, bottom: y - bh / 2 }[a.yanchor] ?? y;
      parts.push(text(content, cx, cy, asize, { angle: a.textangle || 0, cls: "annotation" }));
    }
    const { bar } = g; // the colour bar's ticks (0, 0.2, ... 1; fewer on a short bar) and its title on top
    const cax = layout.coloraxis;
    const step = bar.y1 - bar.y0 >= 150 ? 0.2 : 0.5;
    const ticks = [];
    for (let v = cax.cmin; v <= cax.cmax + 1e-9; v += step * (cax.cmax - cax.cmin)) {
      const y = bar.y1 - ((v - cax.cmin) / (cax.cmax - cax.cmin)) * (bar.y1 - bar.y0);
      ticks.push(text(String(Math.round(v * 10) / 10), bar.x1 + CB.gap, y, size, { anchor: "start" }));
    }
    parts.push(`<g class="cbaxis">${ticks.join("")}</g>`);
    parts.push(text(plain(bar.title), bar.x0, bar.y0 - 8 - size / 2, size, { anchor: "start", cls: "cbtitle" }));
    return parts.join("");
  }

  // The hover text of the cell under the pointer (the trace's text and the weight, as its hovertemplate).
  function hover(div) {
    const tip = div.querySelector(".tc-tooltip");
    const show = (event) => {
      const g = div.tcGeometry;
      if (!g) return;
      const r = div.getBoundingClientRect();
      const k = div.tcWidth / r.width; // the figure may be scaled (on paper, or a narrower box)
      const [x, y] = [(event.clientX - r.left) * k, (event.clientY - r.top) * k];
      const p = g.panels.find((q) => x >= q.x0 && x < q.x1 && y >= q.y0 && y < q.y1);
      if (!p) { tip.hidden = true; return; }
      const j = Math.floor(((x - p.x0) / (p.x1 - p.x0)) * p.cols);
      let i = Math.floor(((y - p.y0) / (p.y1 - p.y0)) * p.rows);
      if (p.ya.autorange !== "reversed") i = p.rows - 1 - i;
      tip.textContent = `${p.trace.name}: ${plain(p.trace.text[i][j])}, weight ${p.trace.z[i][j].toFixed(3)}`;
      tip.hidden = false;
      tip.style.left = `${Math.min(x / k + 12, r.width - tip.offsetWidth - 4)}px`;
      tip.style.top = `${y / k + 12}px`;
    };
    div.addEventListener("pointermove", show);
    div.addEventListener("pointerdown", show); // a tap, on a phone
    div.addEventListener("pointerleave", () => { tip.hidden = true; });
  }

  // The maps in words, for a screen reader (the div's description): what the rows, columns and colours
  // are, then for each head the key that each query weighs most, with its weight.
  function describe(fig) {
    const cax = fig.layout.coloraxis;
    const heads = fig.data.map((trace) => {
      const xa = fig.layout[`xaxis${trace.xaxis.slice(1)}`];
      const ya = fig.layout[`yaxis${trace.yaxis.slice(1)}`];
      const rows = trace.z.map((row, i) => {
        const j = row.indexOf(Math.max(...row));
        return `${plain(ya.ticktext[i])} to ${plain(xa.ticktext[j])} ${row[j].toFixed(2)}`;
      });
      return `${trace.name}, the strongest weight of each query: ${rows.join("; ")}.`;
    });
    return `Heatmaps of attention weights, one per head: a row for each query token, a column for each key ` +
      `token; the colour scale ${plain(cax.colorbar.title.text)} runs from ${cax.cmin} (lightest) to ` +
      `${cax.cmax} (darkest). ${heads.join(" ")}`;
  }

  let described = 0;
  // Draws `fig` ({data, layout}, attentionFigure's) in `div`, reusing the canvas and svg of an earlier draw.
  function draw(div, fig, w) {
    if (!div.tcWidth) {
      div.textContent = "";
      div.classList.add("tc-heatmaps");
      for (const node of [document.createElement("canvas"), document.createElementNS(SVG, "svg")]) {
        node.setAttribute("aria-hidden", "true"); // the div is the figure, named with its description
        div.appendChild(node);
      }
      const words = document.createElement("p");
      words.className = "tc-sr-only";
      words.id = `tc-heatmaps-${++described}`;
      div.appendChild(words);
      div.setAttribute("aria-describedby", words.id);
      const tip = document.createElement("div");
      tip.className = "tc-tooltip";
      tip.hidden = true;
      div.appendChild(tip);
      hover(div);
    }
    const { layout } = fig;
    const h = layout.height;
    const g = geometry(fig, w);
    const cax = layout.coloraxis;
    paint(div.querySelector("canvas"), g, cax.colorscale, cax.cmin, cax.cmax, w, h);
    const svg = div.querySelector("svg");
    svg.setAttribute("viewBox", `0 0 ${w} ${h}`);
    svg.setAttribute("font-family", g.font.family);
    svg.setAttribute("fill", g.font.color);
    svg.innerHTML = labels(fig, g, w);
    div.querySelector(".tc-sr-only").textContent = describe(fig);
    div.style.aspectRatio = `${w} / ${h}`; // the canvas and text scale together when the box narrows (print)
    Object.assign(div, { data: fig.data, layout, tcGeometry: g, tcWidth: w,
      tcCell: (n, i, j) => cellBox(g.panels[n], i, j) });
  }

  function clear(div) {
    div.textContent = "";
    div.classList.remove("tc-heatmaps");
    div.style.aspectRatio = "";
    div.removeAttribute("aria-describedby");
    for (const key of ["data", "layout", "tcGeometry", "tcWidth", "tcCell"]) delete div[key];
  }

  window.tcHeatmaps = { draw, clear, colorAt };
})();
