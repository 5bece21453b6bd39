/* Defaults for every plotly figure of the book, loaded right after plotly.js
 * (book/_ext/offline_assets.py):
 * - the same toolbar as transformer_lib.figures.display.PLOTLY_CONFIG, so that a figure stored
 *   before that config existed is also drawn without plotly's "Share chart..." button, which
 *   uploads the figure's data to plotly's cloud: nothing on these pages leaves their host;
 * - no toolbar on a touch screen or a phone, where it would sit on the figure's title;
 * - on a narrow screen (a phone), a grid of subplots is restacked into one column, each panel
 *   full width, instead of panels a few dozen pixels wide;
 * - plotly's dropdowns and sliders cannot be reached with the Tab key: each figure that has them
 *   gets labelled <select> controls above it that do the same, named by the menu's ``name`` or the
 *   slider's ``currentvalue.prefix`` (transformer_lib.figures set them). */
(function () {
  "use strict";
  if (!window.Plotly) return;
  const NARROW = 560; // px: below this width a grid's columns become rows
  // On a touch screen plotly shows its toolbar all the time, over the first line of the title; on a
  // phone there is no room beside the title for it. There, no toolbar: dragging zooms, a double tap
  // resets, as before.
  const touch = window.matchMedia && window.matchMedia("(hover: none), (pointer: coarse)").matches;
  window.Plotly.setPlotConfig({
    displayModeBar: touch || window.innerWidth < NARROW ? false : "hover",
    displaylogo: false, showSendToCloud: false, showEditInChartStudio: false, showLink: false,
    modeBarButtonsToRemove: ["sendChartToCloud", "sendDataToCloud", "editInChartStudio", "select2d", "lasso2d",
      "toggleSpikelines", "hoverClosestCartesian", "hoverCompareCartesian"],
  });

  const PANEL = 260; // px: the height of one panel when stacked
  const GAP = 105; // px between stacked panels: room for slanted tick labels, the axis title and the next title

  // plotly.py's HTML puts the figure in a wrapper of fixed height (the figure's height): a figure
  // made taller here, or a row of controls added, would spill out of it and be clipped.
  function fixedWrapper(gd) {
    const parent = gd && gd.parentElement;
    return parent && /px$/.test(parent.style.height) ? parent : null;
  }

  function setHeight(gd, px) {
    if (!gd || !gd.style) return;
    gd.style.height = px + "px";
    const wrapper = fixedWrapper(gd);
    if (wrapper) wrapper.style.height = "auto";
  }

  function suffix(key) { return key.replace(/^[xy]axis/, ""); }

  function stackGrid(gd, layout, data) {
    const pairs = Object.keys(layout).filter((k) => /^xaxis\d*$/.test(k) && layout[k].domain
      && layout["yaxis" + suffix(k)] && layout["yaxis" + suffix(k)].domain)
      .map((k) => ({ x: k, y: "yaxis" + suffix(k), xd: layout[k].domain, yd: layout["yaxis" + suffix(k)].domain }));
    const columns = new Set(pairs.map((p) => p.xd[0].toFixed(2)));
    if (pairs.length < 2 || columns.size < 2) return layout;
    const margin = Object.assign({ t: 90, b: 50 }, layout.margin || {});
    const oldPlot = (layout.height || 450) - margin.t - margin.b;
    pairs.sort((a, b) => (b.yd[1] - a.yd[1]) || (a.xd[0] - b.xd[0]));
    const plot = pairs.length * PANEL + (pairs.length - 1) * GAP;
    const out = Object.assign({}, layout, { height: plot + margin.t + margin.b });
    const annotations = (layout.annotations || []).map((a) => Object.assign({}, a));
    pairs.forEach((p, i) => {
      const top = 1 - (i * (PANEL + GAP)) / plot;
      const bottom = top - PANEL / plot;
      const title = annotations.find((a) => a.xref === "paper" && a.yref === "paper" && !a.moved
        && Math.abs(a.x - (p.xd[0] + p.xd[1]) / 2) < 0.02 && Math.abs(a.y - p.yd[1]) < 0.02);
      if (title) Object.assign(title, { x: 0.5, y: top, moved: true });
      out[p.x] = Object.assign({}, layout[p.x], { domain: [0, 1] });
      out[p.y] = Object.assign({}, layout[p.y], { domain: [bottom, top] });
      const tag = "x" + suffix(p.x);
      for (const trace of data) {
        if ((trace.xaxis || "x") === tag && trace.colorbar) {
          trace.colorbar = Object.assign({}, trace.colorbar, { orientation: "v", x: 1.02, xanchor: "left",
            y: (top + bottom) / 2, yanchor: "middle", len: PANEL / plot });
        }
      }
    });
    annotations.forEach((a) => {
      if (!a.moved && a.yref === "paper" && a.y > 1) a.y = 1 + ((a.y - 1) * oldPlot) / plot;
      delete a.moved;
    });
    out.annotations = annotations;
    out.updatemenus = (layout.updatemenus || []).map((m) =>
      Object.assign({}, m, m.y > 1 ? { y: 1 + ((m.y - 1) * oldPlot) / plot } : {}));
    if (layout.coloraxis && layout.coloraxis.colorbar) {
      out.coloraxis = Object.assign({}, layout.coloraxis, {
        colorbar: Object.assign({}, layout.coloraxis.colorbar, { len: Math.min(1, 2 * PANEL / plot), y: 1, yanchor: "top" }),
      });
    }
    setHeight(gd, out.height);
    return out;
  }

  // Plotly's dropdowns and sliders take no keyboard focus. Each gets a labelled <select> beside the
  // figure that does the same (plotly's method and arguments) and moves plotly's control along.
  function controlName(control, i, kind) {
    const prefix = control.currentvalue && control.currentvalue.prefix;
    return (control.name || (prefix || "").replace(/[=:]\s*$/, "") || `${kind} ${i + 1}`).trim();
  }

  function apply(gd, item) {
    const args = item.args || [];
    if (item.method === "update") return window.Plotly.update(gd, args[0] || {}, args[1] || {}, args[2]);
    if (item.method === "restyle") return window.Plotly.restyle(gd, args[0] || {}, args[1]);
    if (item.method === "relayout") return window.Plotly.relayout(gd, args[0] || {});
    return Promise.resolve();
  }

  function keyboardControls(gd) {
    const layout = gd.layout || {};
    const controls = [];
    (layout.updatemenus || []).forEach((m, i) => controls.push(
      { kind: "updatemenus", index: i, items: m.buttons || [], active: m.active || 0, name: controlName(m, i, "menu") }));
    (layout.sliders || []).forEach((s, i) => controls.push(
      { kind: "sliders", index: i, items: s.steps || [], active: s.active || 0, name: controlName(s, i, "slider") }));
    if (!controls.length || !gd.id || document.querySelector(`.tc-keys[data-for="${gd.id}"]`)) return;
    const row = document.createElement("div");
    row.className = "tc-keys";
    row.setAttribute("data-for", gd.id);
    row.id = `tc-keys-${gd.id}`; // the target of the skip link the build wrote (book/_ext/reader_view.py)
    for (const control of controls) {
      const label = document.createElement("label");
      const select = document.createElement("select");
      label.appendChild(document.createTextNode(`${control.name}: `));
      control.items.forEach((item, j) => {
        const option = document.createElement("option");
        option.value = String(j);
        option.textContent = String(item.label || j + 1).replace(/<[^>]+>/g, " ");
        option.selected = j === control.active;
        select.appendChild(option);
      });
      select.addEventListener("change", () => {
        const j = Number(select.value);
        apply(gd, control.items[j]).then(() =>
          window.Plotly.relayout(gd, { [`${control.kind}[${control.index}].active`]: j }));
      });
      label.appendChild(select);
      row.appendChild(label);
      control.select = select;
    }
    // Plotly's own menu or slider, used with the mouse, moves the <select> along (plotly records the
    // choice as the control's `active` through a relayout), so that both always show the same.
    const follow = () => {
      for (const control of controls) {
        const own = (gd.layout[control.kind] || [])[control.index];
        if (own && String(own.active || 0) !== control.select.value) control.select.value = String(own.active || 0);
      }
    };
    gd.on("plotly_relayout", follow);
    gd.on("plotly_buttonclicked", () => setTimeout(follow, 0));
    gd.on("plotly_sliderchange", () => setTimeout(follow, 0));
    const host = fixedWrapper(gd) || gd; // above the fixed-height wrapper, not inside it
    host.parentNode.insertBefore(row, host);
  }

  // A title wider than a phone is cut off at both ends (plotly does not wrap): break it into lines.
  function wrapTitle(text, width) {
    if (typeof text !== "string" || text.includes("<br>")) return text;
    const perLine = Math.max(16, Math.floor((width - 40) / 8.5)); // characters of the 17 px title font
    const lines = [];
    for (const word of text.split(" ")) {
      const last = lines.length - 1;
      if (last >= 0 && (lines[last] + " " + word).length <= perLine) lines[last] += " " + word;
      else lines.push(word);
    }
    return lines.join("<br>");
  }

  // On a phone the title goes to the top left, in lines, then the legend (in rows: beside or below
  // the plot it takes the plot's width or collides with the axis title and sliders), then the menus
  // placed above the plot. The top margin grows by what these need, and the figure by as much, so
  // that the plot area (and every menu placed relative to it) keeps its size.
  function legendRows(layout, data, width) {
    const names = data.filter((t) => ["scatter", "scattergl", "bar"].includes(t.type || "scatter")
      && t.showlegend !== false && t.visible !== false && t.name !== undefined).map((t) => String(t.name));
    if (layout.showlegend === false || (names.length < 2 && layout.showlegend !== true)) return 0;
    let rows = 1;
    let used = 0;
    for (const name of names) {
      const w = name.length * 7 + 45;
      if (used > 0 && used + w > width - 20) { rows += 1; used = 0; }
      used += w;
    }
    return rows;
  }

  function narrowLayout(layout, data, gd, width) {
    const out = Object.assign({}, layout);
    const title = typeof layout.title === "string" ? { text: layout.title } : Object.assign({}, layout.title || {});
    title.text = title.text ? wrapTitle(title.text, width) : "";
    const lines = title.text ? title.text.split("<br>").length : 0;
    const rows = legendRows(layout, data, width);
    if (!lines && !rows) return out;
    const margin = Object.assign({ t: 90, b: 50 }, layout.margin || {});
    const height = layout.height || 450;
    const plot = height - margin.t - margin.b;
    const menus = [...(layout.updatemenus || [])].filter((m) => (m.y === undefined ? 1 : m.y) > 1)
      .map((m) => (m.y - 1) * plot + (m.yanchor === "bottom" ? 34 : 0));
    const titleBlock = lines ? 24 + 22 * lines : 8;
    const top = Math.max(margin.t, titleBlock + 28 * rows + Math.max(0, ...menus) + 8);
    out.margin = Object.assign({}, margin, { t: top });
    out.height = height + top - margin.t;
    if (lines) {
      out.title = Object.assign(title, { x: 0, xanchor: "left", xref: "container", y: 1, yanchor: "top",
        yref: "container", pad: { t: 22, l: 8 } });
    }
    if (rows) {
      out.legend = Object.assign({}, layout.legend || {}, { orientation: "h", x: 0, xanchor: "left",
        xref: "container", y: 1 - (titleBlock + 4) / out.height, yanchor: "top", yref: "container" });
    }
    setHeight(gd, out.height);
    // menus and sliders that set the title ("title.text" in their arguments) set a wrapped one
    for (const control of [...(layout.updatemenus || []), ...(layout.sliders || [])]) {
      for (const item of control.buttons || control.steps || []) {
        for (const arg of item.args || []) {
          if (arg && typeof arg["title.text"] === "string") arg["title.text"] = wrapTitle(arg["title.text"], width);
        }
      }
    }
    return out;
  }

  const newPlot = window.Plotly.newPlot;
  window.Plotly.newPlot = function (gd, data, layout, config) {
    const node = typeof gd === "string" ? document.getElementById(gd) : gd;
    const drawn = () => { try { keyboardControls(node); } catch (err) { console.warn("plotly-config.js:", err); } };
    const width = (node && node.parentElement && node.parentElement.clientWidth) || window.innerWidth;
    if (width < NARROW && layout && Array.isArray(data)) {
      try {
        layout = stackGrid(node, narrowLayout(layout, data, node, width), data);
      } catch (err) {
        console.warn("plotly-config.js: could not restack a grid for a narrow screen", err);
      }
    }
    const plotted = newPlot.call(this, gd, data, layout, config);
    if (node && plotted && plotted.then) plotted.then(drawn);
    return plotted;
  };
})();
