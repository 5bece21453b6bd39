/* Keyboard reach on every page (book/_ext/reader_view.py adds this script):
 * - skip links, first in the page's Tab order and shown when focused, to each explorer and to each
 *   figure's keyboard controls (book/_static/plotly-config.js), so that none is more than a few Tab
 *   presses from the top; Enter on one moves the focus to the first control there. The build writes
 *   them into the page (reader_view.skip_links, the same names): this script keeps them while they
 *   name the page's parts, and writes them again when a script adds one (bertviz's button);
 * - plotly's toolbar buttons (zoom, pan, save as PNG: seven per chart) are taken out of the Tab
 *   order: they sat between the reader and the controls, and they only act with a pointer. */
(function () {
  "use strict";
  const FOCUSABLE = 'a[href], button:not([disabled]), input:not([disabled]), select:not([disabled]), textarea, [tabindex]:not([tabindex="-1"])';
  const GROUPS = ".tc-live, .tc-keys, .tc-bertviz-load";
  // reader_view.EXPLORERS: the same names, so that the links the build wrote are kept (the build also
  // writes each explorer's name on it, data-skip-name, which tells chapter 7's replay from its explorer)
  const EXPLORERS = { attention: "the attention explorer", positional: "the positional-encoding explorer",
    lm: "the language-model explorer", stepper: "the decoding stepper", model: "the whole-model explorer",
    vit: "the digits explorer" };
  let nav = null;
  let known = "";

  function plain(text) {
    return String(text || "").replace(/<[^>]+>/g, " ").replace(/\s+/g, " ").trim();
  }

  function figureTitle(id) {
    const gd = document.getElementById(id);
    const title = gd && gd.layout && gd.layout.title;
    const text = plain(typeof title === "string" ? title : title && title.text);
    return text.length > 70 ? text.slice(0, 67) + "\u2026" : text;
  }

  function label(group) {
    if (group.classList.contains("tc-live")) {
      return "Skip to " + (group.getAttribute("data-skip-name")
        || EXPLORERS[group.getAttribute("data-explorer")] || "the explorer");
    }
    if (group.classList.contains("tc-keys")) {
      const title = figureTitle(group.getAttribute("data-for"));
      return "Skip to the controls of the figure" + (title ? ` \u201c${title}\u201d` : "");
    }
    return "Skip to the attention view's button";
  }

  function firstControl(group) {
    return group.matches(FOCUSABLE) ? group : group.querySelector(FOCUSABLE);
  }

  function build() {
    const groups = [...document.querySelectorAll(GROUPS)].filter((g) => firstControl(g));
    const key = groups.map((g) => label(g)).join("|");
    if (key === known) return;
    known = key;
    if (nav) nav.remove();
    nav = null;
    if (!groups.length) return;
    nav = document.createElement("nav");
    nav.className = "tc-skip";
    nav.setAttribute("aria-label", "Interactive parts of this page");
    groups.forEach((group, i) => {
      if (!group.id) group.id = `tc-interactive-${i + 1}`;
      const link = document.createElement("a");
      link.href = "#" + group.id;
      link.textContent = label(group);
      nav.appendChild(link);
    });
    document.body.insertBefore(nav, document.body.firstChild);
  }

  // A skip link, the build's or this script's: the focus to the first control of the part it names.
  document.addEventListener("click", (event) => {
    const link = event.target.closest && event.target.closest("nav.tc-skip a");
    const group = link && document.getElementById(link.hash.slice(1));
    const control = group && firstControl(group);
    if (!control) return;
    event.preventDefault();
    control.scrollIntoView({ block: "center" });
    control.focus({ preventScroll: true });
  });

  function untab() {
    for (const button of document.querySelectorAll('.modebar-btn:not([tabindex="-1"])')) button.setAttribute("tabindex", "-1");
  }

  let pending = false;
  function later() {
    if (pending) return;
    pending = true;
    setTimeout(() => { pending = false; untab(); build(); }, 150);
  }

  function start() {
    nav = document.querySelector("nav.tc-skip"); // the build's links, kept while they name the page's parts
    known = nav ? [...nav.querySelectorAll("a")].map((a) => a.textContent).join("|") : "";
    later();
    new MutationObserver(later).observe(document.body, { childList: true, subtree: true });
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
