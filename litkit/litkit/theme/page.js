/* page.js: copy buttons for the lesson page.  No framework, no network.
 *
 * Every literate chunk (<div class="nwchunk" data-chunk="NAME">) gets a
 * "Copy" button in its header.  It copies what `notangle -R'NAME'` prints:
 * every part of the chunk in page order, each use of another chunk
 * (<a class="nwuse" data-chunk="USED">) replaced by that chunk's text
 * indented to the column of the use, and a final newline.  As in noweb,
 * tabs become spaces first (stops of 8, counted from the start of each
 * source line, where a use reads <<name>>), and widths count UTF-8 bytes.
 * Every other code block (<pre>) gets a button that copies its text as
 * shown.
 *
 * A chunk that has parts on other pages woven from the same source (see
 * pages.lua) is read, all its parts, from the JSON list of chunk
 * HTML in <script id="lit-chunks">, instead of from this page.
 *
 * window.lessonPage.tangle(NAME) returns the text a chunk's button copies;
 * the page's tests compare it (and the clipboard) with notangle.
 *
 * A table with a phone layout (page.lua: table-wide with its
 * transposed copy, or table-cards) that does not fit its wrapper gets the
 * class "too-narrow" on the wrapper, which shows the phone layout; checked
 * again when the window's width changes.  Without JavaScript such a table
 * scrolls inside its wrapper.
 */
(() => {
  'use strict';

  const parts = {};   // chunk name -> [lines]; a line is [string | {use: NAME}]
  const encoder = new TextEncoder();

  // Column after text starting at col: tab stops of 8, UTF-8 bytes.
  function width(text, col) {
    for (let i = 0; i < text.length; i++)
      col = text[i] === '\t' ? (Math.floor(col / 8) + 1) * 8
        : col + encoder.encode(text[i]).length;
    return col;
  }

  // noweb's markup stage expands tabs in each source line, to stops of 8
  // counted in bytes from the line's start, where a chunk use still reads
  // <<name>>.  Returns the line with its tabs replaced by spaces.
  function expandTabs(line) {
    let col = 0;
    return line.map(item => {
      if (typeof item !== 'string') {
        col += encoder.encode('<<' + item.use + '>>').length;
        return item;
      }
      let out = '';
      for (let i = 0; i < item.length; i++) {
        const next = width(item[i], col);
        out += item[i] === '\t' ? ' '.repeat(next - col) : item[i];
        col = next;
      }
      return out;
    });
  }

  // The lines of a chunk's code, with uses as {use: NAME}.
  function readCode(pre) {
    const lines = [[]];
    (function walk(node) {
      for (let c = node.firstChild; c; c = c.nextSibling) {
        if (c.nodeType === 3) {
          c.nodeValue.split('\n').forEach((piece, k) => {
            if (k > 0) lines.push([]);
            if (piece) lines[lines.length - 1].push(piece);
          });
        } else if (c.nodeType !== 1 || c.classList.contains('copy-button')) {
          continue;
        } else if (c.classList.contains('nwuse')) {
          lines[lines.length - 1].push({use: c.getAttribute('data-chunk')});
        } else {
          walk(c);
        }
      }
    })(pre);
    if (lines.length && lines[lines.length - 1].length === 0) lines.pop();
    return lines;
  }

  // notangle's expansion of a chunk, without the final newline.
  function expand(name, indent, column, depth) {
    if (depth > 100)
      throw new Error('chunks nested deeper than 100 at ' + name);
    const lines = parts[name];
    if (!lines) throw new Error('chunk used but not on this page: ' + name);
    return lines.map((line, i) => {
      const lead = i && line.length ? ' '.repeat(indent) : '';
      let text = '';
      for (const item of line) {
        if (typeof item === 'string') {
          text += item;
        } else {
          const here = i ? width(lead + text, 0) : width(text, column);
          text += expand(item.use, here, here, depth + 1);
        }
      }
      return lead + text;
    }).join('\n');
  }

  // What notangle -R'name' prints, built from the page.
  const tangle = name => expand(name, 0, 0, 0) + '\n';

  let live;   // one polite live region announces "Copied"
  function announce(msg) {
    if (!live) {
      live = document.createElement('div');
      live.className = 'visually-hidden';
      live.setAttribute('aria-live', 'polite');
      document.body.appendChild(live);
    }
    live.textContent = '';
    setTimeout(() => { live.textContent = msg; }, 30);
  }

  function fallbackCopy(text) {
    const area = document.createElement('textarea');
    area.value = text;
    area.setAttribute('readonly', '');
    area.style.position = 'fixed';
    area.style.top = '-1000px';
    document.body.appendChild(area);
    area.select();
    let ok = false;
    try { ok = document.execCommand('copy'); } catch (e) { ok = false; }
    area.remove();
    return ok ? Promise.resolve() : Promise.reject(new Error('copy refused'));
  }

  function copyText(text) {
    if (navigator.clipboard && window.isSecureContext)
      return navigator.clipboard.writeText(text)
        .catch(() => fallbackCopy(text));
    return fallbackCopy(text);
  }

  function makeButton(label, what, getText) {
    const b = document.createElement('button');
    b.type = 'button';
    b.className = 'copy-button';
    b.textContent = label;
    b.title = 'Copy ' + what;
    b.setAttribute('aria-label', 'Copy ' + what);
    b.addEventListener('click', () => {
      const text = getText();
      b.setAttribute('data-copied', text);
      copyText(text).then(() => {
        b.textContent = 'Copied';
        announce('Copied ' + what);
      }, () => {
        b.textContent = 'Press Ctrl+C';
        announce('Could not copy; select the code and copy it by hand');
      });
      setTimeout(() => { b.textContent = label; }, 2000);
    });
    return b;
  }

  // The chunk elements of <script id="lit-chunks">, parsed apart from the
  // document.
  function offPage() {
    const data = document.getElementById('lit-chunks');
    return data ? JSON.parse(data.textContent).map(html => {
      const t = document.createElement('template');
      t.innerHTML = html;
      return t.content.firstElementChild;
    }).filter(Boolean) : [];
  }

  function setup() {
    const chunks = document.querySelectorAll('.nwchunk[data-chunk]');
    const count = {}, elsewhere = {};
    const read = (c, whole) => {
      const name = c.getAttribute('data-chunk');
      const pre = c.querySelector('pre');
      if (!pre || (!whole && elsewhere[name])) return;
      parts[name] = (parts[name] || []).concat(readCode(pre).map(expandTabs));
      count[name] = (count[name] || 0) + 1;
    };
    const off = offPage();
    off.forEach(c => { elsewhere[c.getAttribute('data-chunk')] = 1; });
    off.forEach(c => read(c, true));
    chunks.forEach(c => read(c, false));
    chunks.forEach(c => {
      const name = c.getAttribute('data-chunk');
      const head = c.querySelector('.nwhead');
      if (!head || !parts[name]) return;
      const what = '\u27e8' + name + '\u27e9' +
        (count[name] > 1 ? ' (all ' + count[name] + ' parts)' : '') +
        ', as notangle writes it';
      head.appendChild(makeButton('Copy', what, () => tangle(name)));
    });
    document.querySelectorAll('pre').forEach(pre => {
      if (pre.closest('.nwchunk')) return;
      const holder = pre.closest('div.sourceCode') || pre;
      const box = document.createElement('div');
      box.className = 'code-block';
      holder.parentNode.insertBefore(box, holder);
      box.append(holder, makeButton('Copy', 'this code',
        () => pre.textContent.replace(/\n?$/, '\n')));
    });
    fitTables();
    window.addEventListener('resize', fitTables);
  }

  function fitTables() {
    document.querySelectorAll('table.table-wide, table.table-cards')
      .forEach(t => {
        const wrap = t.parentNode;
        wrap.classList.remove('too-narrow');
        // Any overflow, a fraction of a pixel too (a "(stale)" mark's).
        if (wrap.scrollWidth > wrap.clientWidth)
          wrap.classList.add('too-narrow');
      });
  }

  window.lessonPage = {tangle};
  if (document.readyState === 'loading')
    document.addEventListener('DOMContentLoaded', setup);
  else
    setup();
})();
