// Typesets one page's formulas at build time with MathJax 3 in Node.js (book/_ext/static_math.py
// runs it), so that the reader's browser downloads no MathJax: each formula becomes an SVG whose
// glyphs come from one hidden <defs> per page, with MathML beside it for screen readers.
//
// stdin: JSON [{"tex": "...", "display": true|false}, ...]
// stdout: JSON {"math": [html, ...], "defs": html, "css": text, "errors": [message, ...]}
// Only the base and AMS TeX packages, as the client-side MathJax the book used (tex-chtml.js).
"use strict";
const path = require("path");

const ES5 = path.join(__dirname, "mathjax", "es5");  // the vendored subset of npm mathjax (tools/vendor_assets.sh)

let input = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => { input += chunk; });
process.stdin.on("end", () => {
  const formulas = JSON.parse(input);
  require(path.join(ES5, "node-main.js")).init({
    loader: {paths: {mathjax: ES5}, load: ["input/tex-base", "[tex]/ams", "output/svg", "a11y/assistive-mml"]},
    tex: {packages: ["base", "ams"]},
    svg: {fontCache: "global"},
    startup: {typeset: false},
  }).then((MathJax) => {
    const adaptor = MathJax.startup.adaptor;
    const errors = [];
    const math = formulas.map(({tex, display}) => {
      const node = MathJax.tex2svg(tex, {display});
      // A display equation wider than the column scrolls inside itself (book/_static/reader.css):
      // the keyboard must reach it to scroll it, as MathJax's menu makes every formula in a browser.
      if (display) adaptor.setAttribute(node, "tabindex", "0");
      const html = adaptor.outerHTML(node);
      const error = html.match(/data-mjx-error="([^"]*)"/) || html.match(/data-mml-node="merror"/);
      if (error) errors.push(`${tex.trim()}: ${error[1] || "TeX error"}`);
      return html;
    });
    const output = MathJax.startup.output;
    const defs = `<svg id="MJX-SVG-global-cache" style="display: none" aria-hidden="true">${
      adaptor.outerHTML(output.fontCache.getCache())}</svg>`;
    const css = adaptor.textContent(MathJax.svgStylesheet());
    process.stdout.write(JSON.stringify({math, defs, css, errors}));
  }).catch((err) => { console.error(err); process.exit(1); });
});
