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
(function () {
  'use strict';

  var parts = {};     // chunk name -> [lines]; a line is [string | {use: NAME}]
  var encoder = typeof TextEncoder === 'function' ? new TextEncoder() : null;

  function bytes(s) {
    return encoder ? encoder.encode(s).length : s.length;
  }

  function width(text, col) {
    // Column after text starting at col: tab stops of 8, UTF-8 bytes.
    for (var i = 0; i < text.length; i++) {
      var ch = text[i];
      if (ch === '\t') col = (Math.floor(col / 8) + 1) * 8;
      else col += bytes(ch);
    }
    return col;
  }

  function expandTabs(line) {
    // noweb's markup stage expands tabs in each source line, to stops of 8
    // counted in bytes from the line's start, where a chunk use still reads
    // <<name>>.  Returns the line with its tabs replaced by spaces.
    var col = 0;
    return line.map(function (item) {
      if (typeof item !== 'string') {
        col += bytes('<<' + item.use + '>>');
        return item;
      }
      var out = '';
      for (var i = 0; i < item.length; i++) {
        var next = width(item[i], col);
        out += item[i] === '\t' ? ' '.repeat(next - col) : item[i];
        col = next;
      }
      return out;
    });
  }

  function readCode(pre) {
    // The lines of a chunk's code, with uses as {use: NAME}.
    var lines = [[]];
    function text(s) {
      var pieces = s.split('\n');
      for (var k = 0; k < pieces.length; k++) {
        if (k > 0) lines.push([]);
        if (pieces[k]) lines[lines.length - 1].push(pieces[k]);
      }
    }
    (function walk(node) {
      for (var c = node.firstChild; c; c = c.nextSibling) {
        if (c.nodeType === 3) text(c.nodeValue);
        else if (c.nodeType === 1) {
          if (c.classList.contains('nwuse')) {
            lines[lines.length - 1].push({ use: c.getAttribute('data-chunk') });
          } else if (!c.classList.contains('copy-button')) {
            walk(c);
          }
        }
      }
    })(pre);
    if (lines.length && lines[lines.length - 1].length === 0) lines.pop();
    return lines;
  }

  function expand(name, indent, column, depth) {
    // notangle's expansion of a chunk, without the final newline.
    if (depth > 100)
      throw new Error('chunks nested deeper than 100 at ' + name);
    var lines = parts[name];
    if (!lines) throw new Error('chunk used but not on this page: ' + name);
    var out = [];
    for (var i = 0; i < lines.length; i++) {
      var line = lines[i];
      var lead = i && line.length ? ' '.repeat(indent) : '';
      var text = '';
      for (var k = 0; k < line.length; k++) {
        var item = line[k];
        if (typeof item === 'string') {
          text += item;
        } else {
          var here = i ? width(lead + text, 0) : width(text, column);
          text += expand(item.use, here, here, depth + 1);
        }
      }
      out.push(lead + text);
    }
    return out.join('\n');
  }

  function tangle(name) {
    // What notangle -R'name' prints, built from the page.
    return expand(name, 0, 0, 0) + '\n';
  }

  var live;   // one polite live region announces "Copied"

  function announce(msg) {
    if (!live) {
      live = document.createElement('div');
      live.className = 'visually-hidden';
      live.setAttribute('aria-live', 'polite');
      document.body.appendChild(live);
    }
    live.textContent = '';
    setTimeout(function () { live.textContent = msg; }, 30);
  }

  function fallbackCopy(text) {
    var area = document.createElement('textarea');
    area.value = text;
    area.setAttribute('readonly', '');
    area.style.position = 'fixed';
    area.style.top = '-1000px';
    document.body.appendChild(area);
    area.select();
    var ok = false;
    try { ok = document.execCommand('copy'); } catch (e) { ok = false; }
    document.body.removeChild(area);
    return ok ? Promise.resolve() : Promise.reject(new Error('copy refused'));
  }

  function copyText(text) {
    if (navigator.clipboard && window.isSecureContext) {
      return navigator.clipboard.writeText(text).catch(function () {
        return fallbackCopy(text);
      });
    }
    return fallbackCopy(text);
  }

  function makeButton(label, what, getText) {
    var b = document.createElement('button');
    b.type = 'button';
    b.className = 'copy-button';
    b.textContent = label;
    b.title = 'Copy ' + what;
    b.setAttribute('aria-label', 'Copy ' + what);
    b.addEventListener('click', function () {
      var text = getText();
      b.setAttribute('data-copied', text);
      copyText(text).then(function () {
        b.textContent = 'Copied';
        announce('Copied ' + what);
      }, function () {
        b.textContent = 'Press Ctrl+C';
        announce('Could not copy; select the code and copy it by hand');
      });
      setTimeout(function () { b.textContent = label; }, 2000);
    });
    return b;
  }

  function offPage() {
    // The chunk elements of <script id="lit-chunks">, parsed apart from
    // the document.
    var data = document.getElementById('lit-chunks');
    if (!data) return [];
    return JSON.parse(data.textContent).map(function (html) {
      var t = document.createElement('template');
      t.innerHTML = html;
      return t.content.firstElementChild;
    });
  }

  function setup() {
    var chunks = document.querySelectorAll('.nwchunk[data-chunk]');
    var count = {}, elsewhere = {};
    function read(c, whole) {
      var name = c.getAttribute('data-chunk');
      var pre = c.querySelector('pre');
      if (!pre || (!whole && elsewhere[name])) return;
      parts[name] = (parts[name] || []).concat(readCode(pre).map(expandTabs));
      count[name] = (count[name] || 0) + 1;
    }
    var off = offPage().filter(Boolean);
    off.forEach(function (c) { elsewhere[c.getAttribute('data-chunk')] = 1; });
    off.forEach(function (c) { read(c, true); });
    chunks.forEach(function (c) { read(c, false); });
    chunks.forEach(function (c) {
      var name = c.getAttribute('data-chunk');
      var head = c.querySelector('.nwhead');
      if (!head || !parts[name]) return;
      var what = '\u27e8' + name + '\u27e9' +
        (count[name] > 1 ? ' (all ' + count[name] + ' parts)' : '') +
        ', as notangle writes it';
      head.appendChild(makeButton('Copy', what,
                                  function () { return tangle(name); }));
    });
    document.querySelectorAll('pre').forEach(function (pre) {
      if (pre.closest('.nwchunk')) return;
      var holder = pre.closest('div.sourceCode') || pre;
      var box = document.createElement('div');
      box.className = 'code-block';
      holder.parentNode.insertBefore(box, holder);
      box.appendChild(holder);
      box.appendChild(makeButton('Copy', 'this code', function () {
        return pre.textContent.replace(/\n?$/, '\n');
      }));
    });
    fitTables();
    window.addEventListener('resize', fitTables);
  }

  function fitTables() {
    document.querySelectorAll('table.table-wide, table.table-cards')
      .forEach(function (t) {
        var wrap = t.parentNode;
        wrap.classList.remove('too-narrow');
        // Any overflow, a fraction of a pixel too (a "(stale)" mark's).
        if (wrap.scrollWidth > wrap.clientWidth)
          wrap.classList.add('too-narrow');
      });
  }

  window.lessonPage = { tangle: tangle, copyText: copyText };
  if (document.readyState === 'loading') {
    document.addEventListener('DOMContentLoaded', setup);
  } else {
    setup();
  }
})();
