// page_checks.js (litkit): what page tests measure inside Chromium
// (pagecheck.Browser loads it once per page as window.C); each function
// returns plain data for Python to assert on.
window.C = (() => {
  const all = (sel, root) => [...(root || document).querySelectorAll(sel)];
  const shown = el => el.getClientRects().length > 0;
  const norm = s => s.replace(/\s+/g, ' ').trim();
  const css = (el, pseudo) => getComputedStyle(el, pseudo);
  const label = el => (el.closest('[data-chunk]') || {}).dataset?.chunk ||
    el.tagName.toLowerCase() + '.' + String(el.className) + ' ' +
    norm(el.textContent).slice(0, 40);
  const columns = line => [...line].reduce(   // tabs to stops of 8
    (col, ch) => ch === '\t' ? (Math.floor(col / 8) + 1) * 8 : col + 1, 0);
  // The viewport or scrolling box that hides part of el, or ''.
  function clippedBy(el) {
    const r = el.getBoundingClientRect();
    if (r.left < -0.5 || r.right > innerWidth + 0.5) return 'the viewport';
    for (let a = el.parentElement; a && a !== document.body;
         a = a.parentElement) {
      if (css(a).overflowX === 'visible') continue;
      const ar = a.getBoundingClientRect();
      if (r.left < ar.left - 0.5 || r.right > ar.right + 0.5 ||
          a.scrollWidth > a.clientWidth + 1)
        return a.tagName.toLowerCase() + '.' + a.className;
    }
    return '';
  }
  function rgba(c) {
    const m = /rgba?\(([^)]+)\)/.exec(c || '');
    const p = m && m[1].split(/[\s,\/]+/).filter(Boolean).map(Number);
    return p && [p[0], p[1], p[2], p.length > 3 ? p[3] : 1];
  }
  const over = (top, bottom) =>
    [0, 1, 2].map(i => top[i] * top[3] + bottom[i] * (1 - top[3])).concat([1]);
  function lum(c) {
    const f = v => (v /= 255) <= 0.03928 ? v / 12.92
      : Math.pow((v + 0.055) / 1.055, 2.4);
    return 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]);
  }
  function background(el) {   // composited from the root down
    const under = el.parentElement ? background(el.parentElement)
      : [255, 255, 255, 1];
    const c = rgba(css(el).backgroundColor);
    return c && c[3] > 0 ? over(c, under) : under;
  }
  const svgScale = (el, m = el.getScreenCTM()) =>
    Math.sqrt(Math.abs(m.a * m.d - m.b * m.c));
  const hex = c => '#' + c.slice(0, 3)
    .map(v => Math.round(v).toString(16).padStart(2, '0')).join('');

  // WCAG contrast of every visible text node, SVG text by its fill.
  function contrast() {
    const seen = new Map();
    let checked = 0;
    const walker = document.createTreeWalker(document.body,
                                             NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const el = node.parentElement;
      if (!node.nodeValue.trim() || !el ||
          el.closest('script, style, math, .visually-hidden') ||
          !shown(el) || css(el).visibility === 'hidden') continue;
      const svg = el.closest('svg'), s = css(el);
      const bg = background(svg || el), fg = rgba(svg ? s.fill : s.color);
      if (!fg) continue;
      const fgc = over(fg, bg);
      const size = parseFloat(s.fontSize) * (svg ? svgScale(el) : 1);
      const bold = parseInt(s.fontWeight, 10) >= 700;
      const need = size >= 24 || (size >= 18.66 && bold) ? 3 : 4.5;
      const [a, b] = [lum(fgc), lum(bg)];
      const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
      checked++;
      if (ratio + 1e-6 < need) {
        const key = `${hex(fgc)} on ${hex(bg)} ` +
          `(${el.tagName.toLowerCase()}.${el.getAttribute('class') || ''})`;
        if (!seen.has(key)) seen.set(key, `${ratio.toFixed(2)} < ${need}, ` +
                                     node.nodeValue.trim().slice(0, 30));
      }
    }
    return {checked,
            bodyLuminance: lum(rgba(css(document.body).backgroundColor)),
            failures: [...seen].map(([k, v]) => k + ': ' + v)};
  }

  // A table's cells, each shown whole (in it, its transposed copy or cards).
  function tableView(wrap) {
    const table = wrap.querySelector('table:not(.table-narrow)');
    const headers = all('thead th', table).map(c => norm(c.textContent));
    const cells = all('th, td', wrap).filter(shown);
    // As cards, the headers show as each value's label (td::before).
    const cards = table.classList.contains('table-cards') &&
      css(table).display === 'block';
    const problems = cards ? all('td', table)
      .filter(td => css(td, '::before').content.length < 4)
      .map(td => 'no label: ' + td.textContent) : [];
    const wanted = all(cards ? 'td' : 'th, td', table)
      .map(c => norm(c.textContent));
    for (const want of wanted.filter(Boolean)) {
      const cell = cells.find(c => norm(c.textContent) === want);
      const clip = cell && clippedBy(cell);
      if (!cell || clip)
        problems.push((clip ? 'cut off by ' + clip : 'not shown') + ': ' +
                      want);
    }
    return {id: wrap.id, headers, problems,
            scroll: wrap.scrollWidth - wrap.clientWidth,
            shownAs: all('table', wrap).filter(shown)
              .map(t => t.className || 'table')};
  }

  // Everything about the page at the current width and colour scheme;
  // the contrast of every text only if withContrast (a light pass).
  function view(withContrast = true) {
    const foldedByDefault = all('details').every(d => !d.open);
    all('details').forEach(d => { d.open = true; });
    // Code cut off: from 768 px any overflow; narrower, a block off screen
    // or overflowing without scrolling.
    // A block's own colour is the text's (--ink, as a bare pre has it):
    // no token class of the highlighters may tint a whole block.
    const bare = document.body.appendChild(document.createElement('pre'));
    const ink = css(bare).color;
    bare.remove();
    const code = all('main pre').filter(shown).map(pre => {
      const r = pre.getBoundingClientRect();
      const over = pre.scrollWidth - pre.clientWidth;
      const scrolls = /^(auto|scroll)$/.test(css(pre).overflowX);
      return {name: label(pre), over, tinted: css(pre).color !== ink,
              widest: Math.max(0, ...pre.textContent
                .replace(/\n$/, '').split('\n').map(columns)),
              cut: innerWidth >= 768 ? over > 0 : r.right > innerWidth + 0.5 ||
                r.left < -0.5 || (over > 0 && !scrolls)};
    });
    const sw = Math.max(document.documentElement.scrollWidth,
                        document.body.scrollWidth);
    const culprit = sw > innerWidth ? label(all('body *').find(
      el => el.getBoundingClientRect().right > innerWidth + 1) ||
      document.body) : '';
    const captions = all('caption, figcaption').filter(shown).filter(clippedBy)
      .map(c => clippedBy(c) + ': ' + norm(c.textContent).slice(0, 60));
    // A plot's problem: not one inline SVG of the column's width (or its
    // max-width), no text, or text under 11 px.
    const plots = all('main figure.plot').map(fig => {
      const arts = all('svg.plot-wide, svg.plot-narrow, img', fig)
        .filter(shown);
      const p = {plot: fig.dataset.plot, links: all('.plot-numbers a', fig)
        .filter(shown).map(a => a.getAttribute('href'))};
      if (arts.length !== 1 || arts[0].tagName !== 'svg')
        return {...p, problem: ['drawn as', arts.map(a => a.tagName)]};
      const art = arts[0], width = art.getBoundingClientRect().width;
      const mw = css(art).maxWidth, fw = fig.getBoundingClientRect().width;
      const want = Math.min(fw, /px$/.test(mw) && parseFloat(mw) || fw);
      const small = all('text', art)
        .filter(t => t.textContent.trim() && shown(t))
        .map(t => [t.textContent.trim().slice(0, 30),
                   parseFloat(css(t).fontSize) * svgScale(t)])
        .filter(([, px]) => px < 11);
      return {...p, problem: Math.abs(width - want) > 1 ||
        !all('text', art).length || small.length ?
        [art.getAttribute('class'), width, want, small.slice(0, 4)] : null};
    });
    return {width: innerWidth, scrollWidth: sw, culprit, code, captions, plots,
            foldedByDefault, contrast: withContrast ? contrast() : null,
            tables: all('.results-table').map(tableView)};
  }

  // Broken anchors, images without alt or not loaded, duplicate ids,
  // headings and chunks without a permalink to themselves.
  function links() {
    const bad = [];
    for (const a of all('a[href^="#"]')) {
      const id = decodeURIComponent(a.getAttribute('href').slice(1));
      if (!id || !document.getElementById(id)) bad.push('no target #' + id);
    }
    for (const img of document.images)
      if (!img.complete || !img.naturalWidth ||
          !(img.getAttribute('alt') || '').trim())
        bad.push('image not loaded or without alt: ' + img.src.slice(0, 60));
    for (const h of all('main h1, main h2, main h3, main h4'))
      if (!h.id || !h.querySelector(`a[href="#${CSS.escape(h.id)}"]`))
        bad.push('heading: ' + h.textContent);
    for (const c of all('.nwchunk'))
      if (!c.id || !c.querySelector(`.nwhead a[href="#${CSS.escape(c.id)}"]`))
        bad.push('chunk: ' + c.id);
    const ids = all('[id]').map(e => e.id);
    bad.push(...new Set(ids.filter((x, i) => ids.indexOf(x) !== i)
      .map(x => 'duplicate id ' + x)));
    return {bad, headings: all('main h1, main h2, main h3').length,
            remote: performance.getEntriesByType('resource').map(e => e.name)
              .filter(n => !/^(data|file|blob|about):/.test(n))};
  }

  // Every copy button clicked, with a stub clipboard: what each copied.
  function copies() {
    let copied = [];
    const fake = {writeText: async t => { copied.push(t); }};
    Object.defineProperty(Navigator.prototype, 'clipboard',
                          {get: () => fake, configurable: true});
    const chunks = {}, others = [];
    for (const c of all('.nwchunk')) {
      const entry = chunks[c.dataset.chunk] ??= {buttons: 0, copied: []};
      const button = c.querySelector('.nwhead .copy-button');
      copied = [];
      if (button) { entry.buttons++; button.click(); }
      entry.copied.push(...copied);
      entry.tangled = window.lessonPage.tangle(c.dataset.chunk);
    }
    for (const pre of all('main pre').filter(p => !p.closest('.nwchunk'))) {
      copied = [];
      pre.closest('.code-block')?.querySelector(':scope > .copy-button')
        ?.click();
      others.push({text: pre.textContent, copied});
    }
    return {chunks, others};
  }

  // What printing shows (run under print media).
  function print() {
    return {
      chrome: all('nav#toc, nav.lit-pages, .copy-button, table.table-narrow')
        .filter(shown)
        .map(label),
      codeCut: all('main pre').filter(shown).filter(pre =>
        pre.scrollWidth > pre.clientWidth + 1 ||
        !/pre-wrap|break-spaces/.test(css(pre).whiteSpace)).map(label),
      folds: all('details > summary')
        .map(s => [norm(s.textContent), css(s, '::after').content]),
    };
  }

  return {view, links, copies, print};
})();
