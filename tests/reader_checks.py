"""The reader checks of tests/test_reader.py that look inside a drawn page (issue 25): JavaScript run
in the page by playwright, and the key presses of the keyboard walk. Each returns a list of problems,
in words, empty when the page passes."""

from __future__ import annotations

from tools.book_browser import ROOT

AXE = ROOT / "tests" / "vendor" / "axe-core" / "axe.min.js"
AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]  # WCAG 2.1 level AA, the book's target
MAX_TABS = 10  # Tab presses from the top of a page to any explorer or figure control

# The figures' text boxes (plotly's title, legend entries, axis titles, tick labels, annotations,
# and the text of the book's own SVG figures) from the drawn SVG. Pairs plotly lays out itself
# against each other (the labels of one axis, which it turns when crowded; the entries of one
# legend) are not compared with each other; every other pair must not overlap by more than 3 px
# (a font's box holds some space above and below its glyphs: boxes that meet by 3 px or less only
# touch). Nor may an axis's title or tick labels lie on another subplot's plot area.
OVERLAPS_JS = """() => {
  const visible = (e, root) => { for (let a = e; a && a !== root.parentElement; a = a.parentElement) {
    const s = getComputedStyle(a);
    if (s.display === 'none' || s.visibility === 'hidden' || Number(s.opacity) === 0) return false; } return true; };
  const group = (t) => { const g = t.closest('.xaxislayer-above, .yaxislayer-above, .cbaxis, .legend, .xtick, .ytick');
    return g ? (g.closest('.legend') || g.closest('.xaxislayer-above, .yaxislayer-above, .cbaxis') || g) : null; };
  const figures = [...document.querySelectorAll('.js-plotly-plot')].concat(
    [...document.querySelectorAll('.cell_output svg, .tc-figure svg')]
      .filter(s => !s.closest('.js-plotly-plot, mjx-container')));
  const found = [];
  for (const root of figures) {
    const texts = [...root.querySelectorAll('text')].filter(t => t.textContent.trim() && !t.closest('.hoverlayer')
      && visible(t, root))
      .map(t => ({t, r: t.getBoundingClientRect(), g: group(t), s: t.textContent.trim().slice(0, 40)}))
      .filter(b => b.r.width > 0 && b.r.height > 0);
    for (let i = 0; i < texts.length; i++) for (let j = i + 1; j < texts.length; j++) {
      const a = texts[i], b = texts[j];
      if (a.g && a.g === b.g) continue;
      if (a.t.contains(b.t) || b.t.contains(a.t)) continue;
      const w = Math.min(a.r.right, b.r.right) - Math.max(a.r.left, b.r.left);
      const h = Math.min(a.r.bottom, b.r.bottom) - Math.max(a.r.top, b.r.top);
      if (w > 3 && h > 3) found.push(`${root.id || root.tagName}: "${a.s}" overlaps "${b.s}" (${
        Math.round(w)}x${Math.round(h)} px at ${
        Math.round(Math.max(a.r.left, b.r.left) + scrollX)}, ${Math.round(Math.max(a.r.top, b.r.top) + scrollY)})`);
    }
    // an axis title or tick label drawn over another subplot's plot area (the "query" of a grid's
    // right-hand panels over the left-hand heatmap)
    const areas = [...root.querySelectorAll('.draglayer > g')].map(g => ({axes: (g.getAttribute('class') || '')
      .match(/^x(\\d*)y(\\d*)$/), drag: g.querySelector('.nsewdrag')})).filter(a => a.axes && a.drag)
      .map(a => ({x: 'x' + a.axes[1], y: 'y' + a.axes[2], r: a.drag.getBoundingClientRect()}));
    for (const b of texts) {
      const title = b.t.closest('[class*="title"]');
      const own = b.t.closest('.subplot');
      let axis = null;
      const named = title && (title.getAttribute('class') || '').match(/(?:^|\\s)(?:g-)?([xy]\\d*)title(?:\\s|$)/);
      if (named) axis = named[1];
      else if (own && b.t.closest('.xtick, .ytick')) {
        const id = [...own.classList].find(c => /^x\\d*y\\d*$/.test(c)) || '';
        const m = id.match(/^(x\\d*)(y\\d*)$/);
        if (m) axis = b.t.closest('.xtick') ? m[1] : m[2];
      }
      if (!axis) continue;
      for (const a of areas) {
        if (a.x === axis || a.y === axis) continue;
        const w = Math.min(a.r.right, b.r.right) - Math.max(a.r.left, b.r.left);
        const h = Math.min(a.r.bottom, b.r.bottom) - Math.max(a.r.top, b.r.top);
        if (w > 3 && h > 3) found.push(`${root.id}: ${axis}'s "${b.s}" drawn over the plot of ${a.x}${a.y} (${
          Math.round(w)}x${Math.round(h)} px)`);
      }
    }
  }
  return found;
}"""

# Every SVG and canvas figure inside the article's column, or inside a box that scrolls sideways,
# can be scrolled with the keyboard (tabindex) and shows a visible cue saying so (.tc-scroll-cue).
FIT_JS = """() => {
  const article = document.querySelector('.bd-article') || document.body;
  const column = article.getBoundingClientRect();
  const figures = [...article.querySelectorAll('.js-plotly-plot .main-svg, canvas, .cell_output svg, .tc-figure svg')]
    .filter(e => !e.closest('mjx-container') && e.getBoundingClientRect().width > 40);
  const found = [];
  for (const f of figures) {
    const r = f.getBoundingClientRect();
    if (r.left >= column.left - 1 && r.right <= column.right + 1) continue;
    let box = f.parentElement;
    while (box && box !== article && !/(auto|scroll)/.test(getComputedStyle(box).overflowX)) box = box.parentElement;
    const name = `${f.tagName.toLowerCase()} in ${(f.closest('[id]') || {}).id || '?'} (${
      Math.round(r.width)} px wide)`;
    if (!box || box === article) {
      found.push(`${name}: wider than the column and not in a box that scrolls`);
      continue;
    }
    const b = box.getBoundingClientRect();
    if (b.left < column.left - 1 || b.right > column.right + 1) {
      found.push(`${name}: its scrolling box is wider than the column`);
    }
    if (box.tabIndex < 0) found.push(`${name}: its scrolling box cannot be scrolled with the keyboard (no tabindex)`);
    const cue = box.parentElement.querySelector('.tc-scroll-cue');
    if (!cue || cue.getBoundingClientRect().height === 0) found.push(`${name}: scrolls without a visible cue`);
  }
  return found;
}"""

# The centre of every figure's title, scrolled into view: the topmost element there is the title.
TITLES_JS = """() => {
  const found = [];
  const titles = [...document.querySelectorAll('.js-plotly-plot .gtitle, .tc-figure .tc-figure-title')];
  for (const t of titles) {
    if (!t.textContent.trim()) continue;
    t.scrollIntoView({block: 'center', inline: 'nearest'});
    const r = t.getBoundingClientRect();
    if (r.width === 0) continue;
    // the centre of each line of the title (a wrapped title has one <tspan> per line)
    const lines = [...t.querySelectorAll('tspan.line')];
    const points = (lines.length ? lines : [t]).map(l => l.getBoundingClientRect())
      .map(b => [b.left + b.width / 2, b.top + b.height / 2]);
    for (const [x, y] of points) {
      if (x < 0 || y < 0 || x > innerWidth || y > innerHeight) continue;
      const hit = document.elementFromPoint(x, y);
      const root = t.closest('.js-plotly-plot') || t.closest('.tc-figure');
      // plotly's title layer lets the pointer through to the plot below it: what is hit there is the
      // figure's own drag layer or the title itself; anything else (the toolbar, a control) covers it
      const own = hit && (t.contains(hit) || hit === t || (root.contains(hit)
        && !hit.closest('.modebar, .updatemenu-container, .slider-container, .legend')));
      if (!own) found.push(`title "${t.textContent.trim().slice(0, 40)}" covered by ${hit ? hit.tagName.toLowerCase()
        + '.' + [...(hit.classList || [])].join('.') : 'nothing'} at (${Math.round(x)}, ${Math.round(y)})`);
    }
  }
  window.scrollTo(0, 0);
  return found;
}"""

# The keyboard's targets: each explorer (transformer_lib.browser.page), each row of a figure's
# keyboard controls (book/_static/plotly-config.js), each saved widget and bertviz's button.
CONTROLS_JS = """() => {
  const focusable = 'a[href], button, input, select, textarea, [tabindex]:not([tabindex="-1"])';
  const groups = [...document.querySelectorAll(
    '.tc-live, .tc-keys, .tc-bertviz-load, .jupyter-widgets.widget-interact')];
  let n = 0;
  return groups.map((g, i) => {
    g.setAttribute('data-tc-group', String(i));
    let controls = (g.matches(focusable) ? [g] : [...g.querySelectorAll(focusable)])
      .filter(c => !c.disabled && c.getClientRects().length);
    // an explorer is reached at its first control; from there its own controls follow one Tab apart
    if (g.matches('.tc-live, .widget-interact')) controls = controls.slice(0, 1);
    controls.forEach(c => c.setAttribute('data-tc-control', String(n++)));
    return {group: i, name: (g.getAttribute('aria-label') || g.className).slice(0, 60),
            controls: controls.map(c => Number(c.getAttribute('data-tc-control')))};
  }).filter(g => g.controls.length);
}"""

FOCUS_JS = """() => {
  const e = document.activeElement;
  if (!e || e === document.body) return {control: null, skip: null};
  const c = e.closest('[data-tc-control]');
  const href = e.tagName === 'A' ? (e.getAttribute('href') || '') : '';
  let skip = null;
  if (href.startsWith('#') && href.length > 1) {
    const target = document.getElementById(decodeURIComponent(href.slice(1)));
    const g = target && target.closest('[data-tc-group]');
    const inside = target && target.querySelector('[data-tc-group]');
    skip = g ? Number(g.getAttribute('data-tc-group')) : (inside ? Number(inside.getAttribute('data-tc-group')) : null);
  }
  return {control: c && c === e ? Number(c.getAttribute('data-tc-control')) : null, skip};
}"""

START_JS = """() => {
  window.scrollTo(0, 0);
  let s = document.getElementById('tc-test-start');
  if (!s) { s = document.createElement('span'); s.id = 'tc-test-start'; s.tabIndex = -1;
    document.body.insertBefore(s, document.body.firstChild); }
  s.focus();
}"""


# Highlighted code is thousands of elements (pygments' token spans: 5,543 in chapter 7) in a handful of
# styles, and axe ran twice as long with them as without (chapter 7: 7.0 s against 3.3 to 3.8; most of it
# in color-contrast, which reads each element's colours and what lies behind it). A token's span carries
# nothing but its class and its text, so what any rule finds on it is set by its style: colour, size,
# weight, opacity, shadow and the background behind it. So axe sees, in each code box, one span of each
# such kind and the rest of the box not at all: ``include`` holds the page and those spans, ``exclude`` the
# code boxes, and axe takes the deepest of the two. In each box, because a box may be hidden or scrolled
# as a whole, which axe then decides for all its spans alike; a box with text outside its spans (a shell
# command) is seen whole. tests/test_reader.py plants a token colour without contrast, and one span's.
AXE_JS = """async ([tags, code]) => {
  const behind = (e) => { for (let a = e; a; a = a.parentElement) { const s = getComputedStyle(a);
    if (s.backgroundColor !== 'rgba(0, 0, 0, 0)' || s.backgroundImage !== 'none') {
      return s.backgroundColor + s.backgroundImage; } }
    return ''; };
  const kinds = new Map();
  const ownText = (e) => [...e.childNodes].some(t => t.nodeType === Node.TEXT_NODE && t.textContent.trim());
  document.querySelectorAll(code).forEach((box, n) => {
    // a box with text outside the spans (a shell command) is seen whole: its <pre> brings its spans with it
    const whole = [...box.querySelectorAll('pre')].filter(ownText);
    whole.forEach((pre, m) => kinds.set(`${n} pre ${m}`, pre));
    for (const e of box.querySelectorAll('span')) {
      if (whole.some(pre => pre.contains(e))) continue;
      const s = getComputedStyle(e);
      const kind = [n, s.color, s.fontSize, s.fontWeight, s.opacity, s.textShadow, behind(e)].join('|');
      if (!kinds.has(kind) && e.textContent.trim()) kinds.set(kind, e);
    }
  });
  // label-content-name-mismatch (WCAG 2.5.3, label in name) is one of axe's experimental rules, which its
  // tags leave out: asked for by name
  const r = await axe.run({include: [document, ...kinds.values()], exclude: [[code]]}, {
    runOnly: {type: 'tag', values: tags}, resultTypes: ['violations'],
    rules: {'label-content-name-mismatch': {enabled: true}}});
  return r.violations.filter(v => v.impact === 'serious' || v.impact === 'critical')
    .map(v => `${v.id} (${v.impact}): ${v.nodes.length}x, e.g. ${v.nodes[0].target.join(' ')}`);
}"""
CODE_BOXES = ".highlight"  # pygments' highlighted code, the box and its token spans


def axe_violations(page) -> list[str]:
    """axe-core's serious and critical violations of WCAG 2.1 A and AA, the theme included (highlighted
    code through one span of each style: ``AXE_JS``)."""
    page.add_script_tag(path=str(AXE))
    return page.evaluate(AXE_JS, [AXE_TAGS, CODE_BOXES])


def figure_problems(page) -> list[str]:
    """Text over text inside a figure, a figure wider than its column that does not scroll with a
    cue, a figure title covered by another element."""
    return [*page.evaluate(OVERLAPS_JS), *page.evaluate(FIT_JS), *page.evaluate(TITLES_JS)]


def keyboard_problems(page) -> list[str]:
    """From the top of the page, each explorer (its first control) and every control of a figure is
    reached within ``MAX_TABS`` presses of Tab; a skip link on the way may be followed with Enter
    (which is not counted)."""
    groups = page.evaluate(CONTROLS_JS)
    found = []
    for group in groups:
        page.evaluate(START_JS)
        wanted, reached, followed = set(group["controls"]), set(), False
        for _ in range(MAX_TABS):
            page.keyboard.press("Tab")
            focus = page.evaluate(FOCUS_JS)
            if focus["skip"] == group["group"] and not followed:
                followed = True
                page.keyboard.press("Enter")
                focus = page.evaluate(FOCUS_JS)
            if focus["control"] in wanted:
                reached.add(focus["control"])
            if reached == wanted:
                break
        if reached != wanted:
            found.append(f"{len(wanted - reached)} of {len(wanted)} controls of {group['name']!r} not reached "
                         f"in {MAX_TABS} Tab presses")
    return found
