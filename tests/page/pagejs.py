"""JavaScript the page tests run inside Chromium (each returns JSON)."""

# Each script opens every <details> first: a reader opens the folds.

# Widest line (columns, tabs to stops of 8) and overflow of every visible
# code block in <main>.  A chunk use shows as its name, which is set in a
# proportional font, so its character count is an upper bound of its width
# in columns.
CODE_BLOCKS = r"""
for (const d of document.querySelectorAll('details')) d.open = true;
function columns(line) {
  let col = 0;
  for (const ch of line) col = ch === '\t' ? (Math.floor(col / 8) + 1) * 8 : col + 1;
  return col;
}
const out = [];
for (const pre of document.querySelectorAll('main pre')) {
  if (!pre.getClientRects().length) continue;
  const lines = pre.textContent.replace(/\n$/, '').split('\n');
  const chunk = pre.closest('.nwchunk');
  const r = pre.getBoundingClientRect();
  out.push({
    name: chunk ? chunk.getAttribute('data-chunk') : 'code block ' + (out.length + 1),
    id: chunk ? chunk.id : (pre.closest('[id]') || {}).id || '',
    widest: Math.max(0, ...lines.map(columns)),
    overflow: pre.scrollWidth - pre.clientWidth,
    left: r.left, right: r.right,
    overflowX: getComputedStyle(pre).overflowX,
  });
}
return out;
"""

# Page-level sideways scroll, and the widest element that sticks out.
PAGE_WIDTH = r"""
for (const d of document.querySelectorAll('details')) d.open = true;
const w = window.innerWidth;
const sw = Math.max(document.documentElement.scrollWidth, document.body.scrollWidth);
let culprit = '';
if (sw > w) {
  for (const el of document.body.querySelectorAll('*')) {
    const r = el.getBoundingClientRect();
    if (r.right > w + 1 && r.width) {
      culprit = el.tagName.toLowerCase() + '.' + String(el.className) + ': ' +
                (el.textContent || '').trim().slice(0, 50);
      break;
    }
  }
}
return {innerWidth: w, scrollWidth: sw, culprit: culprit};
"""

# For every table whose header row has a cell matching each pattern in
# arguments[0]: the header and body texts of those columns, and where they
# are shown on screen now (either in the table itself or in its transposed
# copy, whichever is displayed).
KEY_COLUMNS = r"""
for (const d of document.querySelectorAll('details')) d.open = true;
const patterns = arguments[0].map(p => new RegExp(p, 'i'));
const norm = s => s.replace(/\s+/g, ' ').trim();
function clipped(el) {
  // The first ancestor whose overflow would hide part of el, if any.
  const r = el.getBoundingClientRect();
  if (r.left < -0.5 || r.right > window.innerWidth + 0.5) return 'viewport';
  for (let a = el.parentElement; a && a !== document.body; a = a.parentElement) {
    const ox = getComputedStyle(a).overflowX;
    if (ox === 'visible') continue;
    const ar = a.getBoundingClientRect();
    if (r.left < ar.left - 0.5 || r.right > ar.right + 0.5)
      return a.tagName.toLowerCase() + '.' + a.className;
  }
  return '';
}
const found = [];
for (const table of document.querySelectorAll('table')) {
  if (table.classList.contains('table-narrow')) continue;
  const heads = [...table.querySelectorAll('thead tr:first-child > *')].map(c => norm(c.textContent));
  const cols = patterns.map(p => heads.findIndex(h => p.test(h)));
  if (cols.some(c => c < 0)) continue;
  const wanted = [];
  for (const c of cols) {
    wanted.push(heads[c]);
    for (const tr of table.querySelectorAll('tbody tr')) wanted.push(norm(tr.children[c].textContent));
  }
  const wrap = table.closest('.table-wrap, [data-table-wrap]') || table.parentElement;
  const shown = [...wrap.querySelectorAll('table')].filter(t => t.getClientRects().length);
  const cells = shown.flatMap(t => [...t.querySelectorAll('th, td')]);
  const problems = [];
  for (const text of wanted) {
    const cell = cells.find(c => norm(c.textContent) === text);
    if (!cell) { problems.push('not shown: ' + text); continue; }
    const clip = clipped(cell);
    if (clip) problems.push('cut off by ' + clip + ': ' + text);
  }
  found.push({
    headers: cols.map(c => heads[c]),
    shownAs: shown.map(t => t.className || 'table'),
    wrapScroll: wrap.scrollWidth - wrap.clientWidth,
    problems: problems,
  });
}
return found;
"""

# Captions (table and figure) that are cut off or stick out.
CAPTIONS = r"""
for (const d of document.querySelectorAll('details')) d.open = true;
const problems = [];
for (const cap of document.querySelectorAll('caption, figcaption')) {
  if (!cap.getClientRects().length) continue;
  const r = cap.getBoundingClientRect();
  const text = cap.textContent.replace(/\s+/g, ' ').trim().slice(0, 60);
  if (r.left < -0.5 || r.right > window.innerWidth + 0.5) {
    problems.push('outside the viewport: ' + text);
    continue;
  }
  for (let a = cap.parentElement; a && a !== document.body; a = a.parentElement) {
    if (getComputedStyle(a).overflowX === 'visible') continue;
    const ar = a.getBoundingClientRect();
    if (r.left < ar.left - 0.5 || r.right > ar.right + 0.5 || a.scrollWidth > a.clientWidth + 1) {
      problems.push('cut off by its scrolling ' + a.tagName.toLowerCase() + ': ' + text);
      break;
    }
  }
}
return problems;
"""

# Every plot on the page: whether it is inline SVG, how wide it is against
# its figure, and the rendered size of its smallest text (CSS px).
PLOTS = r"""
for (const d of document.querySelectorAll('details')) d.open = true;
const out = [];
for (const fig of document.querySelectorAll('main figure')) {
  const shown = [...fig.querySelectorAll('svg, img')].filter(e => e.getClientRects().length);
  const isPlot = fig.classList.contains('plot');
  for (const art of shown) {
    const info = {plot: fig.getAttribute('data-plot') || '', isPlot: isPlot,
                  tag: art.tagName.toLowerCase(), cls: art.getAttribute('class') || ''};
    const fr = fig.getBoundingClientRect(), ar = art.getBoundingClientRect();
    const mw = getComputedStyle(art).maxWidth;
    info.figureWidth = fr.width;
    info.width = ar.width;
    info.maxWidth = mw.endsWith('px') ? parseFloat(mw) : null;
    info.texts = [];
    if (info.tag === 'svg') {
      for (const t of art.querySelectorAll('text')) {
        if (!t.textContent.trim() || !t.getClientRects().length) continue;
        const m = t.getScreenCTM();
        const scale = Math.sqrt(Math.abs(m.a * m.d - m.b * m.c));
        info.texts.push({text: t.textContent.trim().slice(0, 40),
                         px: parseFloat(getComputedStyle(t).fontSize) * scale});
      }
    }
    out.push(info);
  }
}
return out;
"""

# The text that stands for a plot's numbers: the element its figure names
# in aria-describedby, else the text of its section up to the figure.
PLOT_TEXT = r"""
const fig = document.querySelector('figure.plot[data-plot="' + arguments[0] + '"]');
if (!fig) return null;
const id = fig.getAttribute('aria-describedby');
if (id && document.getElementById(id))
  return {via: 'aria-describedby #' + id, text: document.getElementById(id).textContent};
const parts = [];
for (let n = fig; n && n !== document.body; n = n.parentElement) {
  let s = n.previousElementSibling;
  while (s && !/^H[1-6]$/.test(s.tagName)) { parts.push(s.textContent); s = s.previousElementSibling; }
  if (s) break;
}
return {via: 'the text of its section', text: parts.join(' ')};
"""

# WCAG contrast of every visible piece of text, against the backgrounds
# behind it (composited from the root down).  SVG text uses its fill.
CONTRAST = r"""
function parse(c) {
  const m = /rgba?\(([^)]+)\)/.exec(c || '');
  if (!m) return null;
  const p = m[1].split(/[\s,\/]+/).filter(Boolean).map(Number);
  return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1];
}
function over(top, bottom) {
  const a = top[3];
  return [0, 1, 2].map(i => top[i] * a + bottom[i] * (1 - a)).concat([1]);
}
function background(el) {
  const chain = [];
  for (let e = el; e; e = e.parentElement) chain.unshift(e);
  let bg = [255, 255, 255, 1];
  for (const e of chain) {
    const c = parse(getComputedStyle(e).backgroundColor);
    if (c && c[3] > 0) bg = over(c, bg);
  }
  return bg;
}
function lum(c) {
  const f = v => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
  return 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]);
}
function ratio(a, b) {
  const la = lum(a), lb = lum(b);
  return (Math.max(la, lb) + 0.05) / (Math.min(la, lb) + 0.05);
}
function hex(c) { return '#' + c.slice(0, 3).map(v => Math.round(v).toString(16).padStart(2, '0')).join(''); }
function visible(el) {
  if (!el.getClientRects().length) return false;
  for (let e = el; e; e = e.parentElement) {
    const s = getComputedStyle(e);
    if (s.visibility === 'hidden' || s.opacity === '0') return false;
    if (e.classList && e.classList.contains('visually-hidden')) return false;
  }
  return true;
}
for (const d of document.querySelectorAll('details')) d.open = true;
const seen = new Map();
let checked = 0;
const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
for (let node = walker.nextNode(); node; node = walker.nextNode()) {
  if (!node.nodeValue.trim()) continue;
  const el = node.parentElement;
  if (!el || el.closest('script, style, math') || !visible(el)) continue;
  const inSvg = el.closest('svg');
  const s = getComputedStyle(el);
  let fg = parse(inSvg ? s.fill : s.color);
  if (!fg) continue;
  const bg = background(inSvg ? inSvg : el);
  fg = over(fg, bg);
  const size = parseFloat(s.fontSize) * (inSvg && el.getScreenCTM ? Math.sqrt(Math.abs(el.getScreenCTM().a * el.getScreenCTM().d)) : 1);
  const bold = parseInt(s.fontWeight, 10) >= 700;
  const large = size >= 24 || (size >= 18.66 && bold);
  const need = large ? 3 : 4.5;
  const r = ratio(fg, bg);
  checked++;
  if (r + 1e-6 < need) {
    const key = hex(fg) + ' on ' + hex(bg) + ' (' + el.tagName.toLowerCase() + '.' + String(el.getAttribute('class') || '') + ')';
    if (!seen.has(key)) seen.set(key, {ratio: r, need: need, sample: node.nodeValue.trim().slice(0, 40), count: 0});
    seen.get(key).count++;
  }
}
const body = parse(getComputedStyle(document.body).backgroundColor);
return {checked: checked, bodyLuminance: lum(body),
        failures: [...seen].map(([k, v]) => Object.assign({what: k}, v))};
"""

# What a print of the page would hide, cut off or mark (run under print media).
PRINT = r"""
const css = el => el ? getComputedStyle(el) : null;
const out = {};
out.tocShown = !!document.querySelector('nav#toc') && css(document.querySelector('nav#toc')).display !== 'none';
out.buttonsShown = [...document.querySelectorAll('.copy-button')].filter(b => css(b).display !== 'none').length;
out.codeCut = [];
for (const pre of document.querySelectorAll('main pre')) {
  if (!pre.getClientRects().length) continue;
  const s = css(pre);
  if (pre.scrollWidth > pre.clientWidth + 1 || !/pre-wrap|break-spaces/.test(s.whiteSpace))
    out.codeCut.push((pre.closest('.nwchunk') || {}).id || 'pre ' + s.whiteSpace);
}
out.folds = [];
for (const d of document.querySelectorAll('details')) {
  const sum = d.querySelector('summary');
  out.folds.push({summary: sum.textContent.trim(),
                  open: d.open,
                  mark: getComputedStyle(sum, '::after').content});
}
out.narrowTablesShown = [...document.querySelectorAll('table.table-narrow')].filter(t => t.getClientRects().length).length;
return out;
"""
