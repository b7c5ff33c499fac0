"""nw2md: a noweave back end that writes Pandoc Markdown.

Use: noweave -n -t -index -backend 'python3 nw2md.py' lesson.nw > lesson.md

Reads noweb's pipeline on standard input. Documentation passes through as
Markdown (a $ or __ in it that is no math or emphasis escaped: prose()),
[[quoted code]] as inline code (chunk uses linked as in code).
Each code chunk becomes a raw HTML block: a header, its exact text
(escaped, highlighted by Pygments, Debian python3-pygments) with chunk uses
and identifiers linked, and noweb's cross references. A chunk list and the
identifier index end the page. An empty chunk is warned about at its line
in $NW2MD_SOURCE (else noweb's @file).
"""

import html
import itertools
import os
import re
import sys

from pygments.lexers import get_lexer_by_name
from pygments.token import STANDARD_TYPES

USAGE = "usage: nw2md [-noindex] [-delay] [-shortxref|-longxref] < pipeline"
# Options noweave may pass that change nothing here (without -index, noweave
# passes -noindex and the pipeline holds no index to show).
IGNORED = ("-noindex", "-delay", "-shortxref", "-longxref", "-localindex")


class PipelineError(Exception):
    """Malformed noweb pipeline input."""


def parse(lines):
    """[(keyword, argument)] of pipeline lines; PipelineError for a line
    not starting with '@' and for '@fatal' (an earlier stage failed)."""
    events = []
    for number, line in enumerate(lines, 1):
        line = line.rstrip("\n")
        if not line.startswith("@"):
            raise PipelineError(
                "line %d is not a pipeline line: %r" % (number, line[:60]))
        keyword, _, argument = line[1:].partition(" ")
        if keyword == "fatal":
            raise PipelineError("an earlier noweb stage failed: " + argument)
        events.append((keyword, argument))
    return events


def new_id(used, prefix, name):
    """A new HTML id "prefix-name", the name made readable and the id
    suffixed -2, -3, ... until it is not in the set used (which it joins)."""
    base = prefix + "-" + (re.sub(r"[^a-z0-9]+", "-", name.lower())
                           .strip("-")[:60].strip("-") or "x")
    candidate, n = base, 1
    while candidate in used:
        n += 1
        candidate = "%s-%d" % (base, n)
    used.add(candidate)
    return candidate


class Chunk:
    """One code chunk definition as read from the pipeline."""

    def __init__(self):
        self.label = self.name = None  # noweb's label, the chunk's name
        self.lines = [[]]         # each line: list of (kind, text, target)
        self.line = 0             # the source line of its <<name>>=
        self.notused = False
        self.prevdef = self.nextdef = None
        self.usedin = []          # labels of chunks that use this name
        self.defines = []         # identifiers defined here (@index defn)
        self.uses = []            # identifiers used here, from the local index


class Reader:
    """read_document's state: mode None, 'docs' or 'code'; docs: the text
    pieces of a docs chunk; quote: those of a [[quote]] in it; in_body:
    past the @defn line's newline; ref: the last '@xref ref'; ident: (name,
    ref) of an '@index use', waiting for its @text; entry: the current
    chunk-list or index entry. A method per keyword (at_KEYWORD(sub, rest,
    arg)); other keywords (@file, @header, @line ...) show nothing."""

    def __init__(self):
        self.parts, self.chunklist, self.index = [], [], []
        self.source, self.line = os.environ.get("NW2MD_SOURCE"), 1
        self.mode = self.quote = self.chunk = self.ref = self.ident = None
        self.entry, self.docs, self.in_body = None, [], False

    def at_begin(self, sub, rest, arg):
        self.mode = sub
        if sub not in ("docs", "code"):
            raise PipelineError("unknown chunk kind in '@begin %s'" % arg)
        self.docs, self.chunk, self.in_body = [], Chunk(), False

    def at_end(self, sub, rest, arg):
        chunk = self.chunk
        if self.mode == "docs":
            self.parts.append(("docs", self.docs))
        elif self.mode == "code":
            if chunk.name is None:
                raise PipelineError("code chunk without @defn")
            if chunk.lines and chunk.lines[-1] == []:
                chunk.lines.pop()   # the line after the last newline
            if not chunk.lines:
                print("nw2md: warning: %s:%d: chunk <<%s>> is empty (tidy "
                      "says: empty <code>)" % (self.source, chunk.line,
                                               chunk.name), file=sys.stderr)
            self.parts.append(("code", chunk))
        self.mode, self.chunk = None, None

    def at_text(self, sub, rest, arg):
        if self.mode == "docs":
            (self.quote if self.quote is not None else self.docs).append(arg)
        elif self.mode == "code":
            ident = self.ident is not None and arg == self.ident[0]
            self.chunk.lines[-1].append(("ident", arg, self.ident[1])
                                        if ident else ("text", arg, None))
        self.ident = None

    def at_nl(self, sub, rest, arg):
        if self.mode == "docs":
            quoted = self.quote is not None
            (self.quote if quoted else self.docs).append(
                " " if quoted else "\n")
        elif self.mode == "code":
            if self.in_body:
                self.chunk.lines.append([])
            elif self.chunk.name is not None:
                self.in_body = True

    def at_quote(self, sub, rest, arg):
        if self.mode == "docs":
            self.quote = []

    def at_endquote(self, sub, rest, arg):
        if self.quote is not None:
            self.docs.append(code_span("".join(self.quote)) if all(
                isinstance(q, str) for q in self.quote) else self.quote)
            self.quote = None

    def at_defn(self, sub, rest, arg):
        self.chunk.name, self.chunk.line = arg, self.line
        if self.chunk.label is None:
            self.chunk.label = "nw-chunk-%d" % len(self.parts)
        self.ref = None

    def at_use(self, sub, rest, arg):
        target, self.ref = self.ref, None
        if self.mode == "code":
            self.chunk.lines[-1].append(("use", arg, target))
        elif self.quote is not None:
            self.quote.append((arg, target))
        elif self.mode == "docs":
            self.docs.append("⟨%s⟩" % arg)

    def entries(self, keyword, sub, rest):
        """True when an @xref or @index line belongs to the chunk list or
        the identifier index (an entry's start, definitions or uses)."""
        if sub in ("chunkbegin", "entrybegin"):
            label, _, name = rest.partition(" ")
            self.entry = (label, name, [], [])
            (self.chunklist if keyword == "xref" else self.index).append(
                self.entry)
        elif self.entry is not None and sub in (
                "chunkdefn", "chunkuse", "entrydefn", "entryuse"):
            self.entry[2 if "defn" in sub else 3].append(rest)
        else:
            return False
        return True

    def at_xref(self, sub, rest, arg):
        chunk = self.chunk
        if self.entries("xref", sub, rest):
            return
        if sub == "label" and self.mode == "code" and chunk.name is None:
            chunk.label = rest
        elif sub == "ref":
            self.ref = rest
        elif sub in ("notused", "nextdef", "prevdef") and chunk:
            setattr(chunk, sub, rest or True)
        elif sub == "useitem" and chunk is not None:
            chunk.usedin.append(rest)

    def at_index(self, sub, rest, arg):
        if self.entries("index", sub, rest):
            return
        if sub == "use" and self.mode == "code":
            self.ident, self.ref = (rest, self.ref), None
        elif sub in ("defn", "useitem") and self.chunk is not None:
            (self.chunk.defines if sub == "defn" else
             self.chunk.uses).append(rest)


def read_document(events):
    """(parts, chunklist, index) of the pipeline events: parts [("docs",
    pieces: text, or a quote's list of text and (name, label) of uses) or
    ("code", Chunk)]; chunklist and index [(label, name, defining labels,
    using labels)] of chunks and identifiers."""
    r = Reader()
    for keyword, arg in events:
        sub, _, rest = arg.partition(" ")
        if (keyword, arg) in (("nl", ""), ("index", "nl")):
            r.line += 1        # the source's lines, each ended by one of these
        r.source = r.source or (arg if keyword == "file" else None)
        handle = getattr(r, "at_" + keyword, None)
        if handle:
            handle(sub, rest, arg)
    return r.parts, r.chunklist, r.index


def code_span(text):
    """Return a Pandoc inline code span that shows text exactly."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return fence + pad + text + pad + fence


def esc(text):
    """text HTML-escaped for content and attributes; backticks become &#96;
    so that a raw block never holds a code fence."""
    return html.escape(text, quote=True).replace("`", "&#96;")


def name_html(name):
    """A chunk name as HTML, its [[quoted]] parts as code, in ⟨⟩ (a quote
    ends, as in noweb, at the last ]] of a run: [[a[i]]] holds a[i])."""
    return "⟨%s⟩" % "".join("<code>%s</code>" % esc(p) if i % 2 else esc(p)
                             for i, p in enumerate(re.split(
                                 r"\[\[(.*?)\]\](?!\])", name)))


# Prose as pandoc reads it, left to right: an escape, a code span or fence
# (or unclosed backticks), display math, inline math (group 2: its text), an
# indented (code) line, a run of underscores. NOT_MATH: math text that
# starts with a shell variable ($HOME, ${X}, $dir/) or holds code or a $.
PROSE = re.compile(r"\\.|(?<!`)(`+)(?!`).*?(?<!`)\1(?!`)|`+|^~~~.*?^~~~|"
                   r"\$\$.*?\$\$|\$(?=\S)(.*?\S)\$(?!\d)|^(?: {4}|\t)[^\n]*|"
                   r"(?<=\w)_{2,}|_{2,}(?=\w)", re.S | re.M)
NOT_MATH = re.compile(r"[A-Z]{2}|\{|[A-Za-z_]\w+[/:]|.*`|.*(?<!\\)\$", re.S)


def prose(text):
    """Markdown prose with each $ that would open math that is NOT_MATH
    escaped (\\$), and each underscore of a run of two or more in a word
    (__shared__): they show as typed."""
    out, i = [], 0
    for m in iter(lambda: PROSE.search(text, i), None):
        if m.group(2) and NOT_MATH.match(m.group(2)):
            out.append(text[i:m.start()] + "\\$")
            i = m.start() + 1
        else:
            out.append(text[i:m.start()] + (m.group(0).replace("_", "\\_")
                       if m.group(0)[0] == "_" else m.group(0)))
            i = m.end()
    return "".join(out) + text[i:]


# Highlighting: Pygments, with its short CSS classes (k, kt, nf, c1, cp, mi..)
LANGUAGE = {"cu": "cuda", "cuh": "cuda", "c": "c", "h": "c", "cc": "cpp",
            "cpp": "cpp", "cxx": "cpp", "hpp": "cpp", "hh": "cpp"}
# Token classes left without a <span>: plain text, names, punctuation,
# operators and the placeholder that stands for a chunk use.
PLAIN = {"", "w", "n", "p", "o", "err"}


def classify(text, lang):
    """One highlight class per character of text (a whole chunk's code,
    each chunk use replaced by one NUL), as a list of str: Pygments' short
    CSS class of the token's type, "" for plain text."""
    classes = [""] * len(text)
    lexer = get_lexer_by_name(lang, stripnl=False, ensurenl=False)
    for start, token, value in lexer.get_tokens_unprocessed(text):
        while token not in STANDARD_TYPES:
            token = token.parent
        cls = STANDARD_TYPES[token]
        classes[start:start + len(value)] = [
            "" if cls in PLAIN else cls] * len(value)
    return classes


def highlight(text, classes):
    """HTML for text, each run of one class (one per character) in a
    <span> of that class, unless plain ("")."""
    out, start = [], 0
    for cls, run in itertools.groupby(classes):
        end = start + len(list(run))
        piece, start = esc(text[start:end]), end
        out.append(piece if not cls else
                   '<span class="%s">%s</span>' % (cls, piece))
    return "".join(out)


def raw_block(content):
    """Wrap HTML in a Pandoc raw block; esc() keeps backticks out of it."""
    return "```{=html}\n" + content + "\n```\n"


def html_list(cls, items):
    """A raw block holding <ul class=cls> of the <li> items."""
    return raw_block('<ul class="%s">\n%s\n</ul>' % (cls, "\n".join(items)))


class Weaver:
    """Turns the parsed document into Pandoc Markdown."""

    def __init__(self, parts, chunklist, index):
        self.parts, self.chunklist, self.index = parts, chunklist, index
        self.ids = set()
        self.anchor = {}          # noweb label -> our HTML id
        self.name_of = {}         # noweb label -> chunk name
        self.first_label = {}     # chunk name -> label of first definition
        self.ident_id = {}        # identifier -> HTML id of its index entry
        self.lang = {}
        chunks = [c for kind, c in parts if kind == "code"]
        for c in chunks:
            prefix = "nw" if c.name not in self.first_label else "nwc"
            self.first_label.setdefault(c.name, c.label)
            self.anchor[c.label] = new_id(self.ids, prefix, c.name)
            self.name_of[c.label] = c.name
        for label, name, _, _ in index:
            self.ident_id[name] = new_id(self.ids, "id", name)
        self.assign_languages(chunks)

    def assign_languages(self, chunks):
        """Give each chunk name a language from the root files that reach it."""
        graph = {}
        for c in chunks:
            graph.setdefault(c.name, []).extend(
                t for line in c.lines for k, t, _ in line if k == "use")
        used = {u for us in graph.values() for u in us}
        for root in [n for n in graph if n not in used]:
            lang = LANGUAGE.get(root.rsplit(".", 1)[-1].lower()
                                if "." in root else "", "text")
            stack = [root]
            while stack:
                n = stack.pop()
                if n not in self.lang and n in graph:
                    self.lang[n] = lang
                    stack.extend(graph[n])

    def link(self, label, text_html, cls="nwref"):
        """An <a> to the chunk definition with noweb label, or a span."""
        if label in self.anchor:
            return '<a class="%s" href="#%s">%s</a>' % (
                cls, self.anchor[label], text_html)
        return '<span class="%s nwundef">%s</span>' % (cls, text_html)

    def ref(self, label):
        """A link to the chunk with noweb label, showing its name."""
        return self.link(label, name_html(self.name_of.get(label, label)))

    def refs(self, labels):
        """Links to the chunks of labels, each once, comma-separated."""
        return ", ".join(map(self.ref, dict.fromkeys(labels)))

    def chunk_html(self, c):
        """The raw HTML block for one code chunk definition."""
        lang = self.lang.get(c.name, "text")
        own = self.anchor[c.label]
        first = self.first_label[c.name] == c.label
        out = ['<div class="nwchunk" id="%s" data-chunk="%s" data-lang="%s">'
               % (own, esc(c.name), lang)]
        out.append('<div class="nwhead"><a class="nwname" href="#%s">%s</a>'
                   '<span class="nweq">%s</span></div>'
                   % (own, name_html(c.name), "≡" if first else "+≡"))
        plain = "".join("".join(t if k != "use" else "\0" for k, t, _ in line)
                        + "\n" for line in c.lines)
        classes, pos, body = classify(plain, lang), 0, []
        for line in c.lines:
            for kind, text, target in line:
                n = 1 if kind == "use" else len(text)
                runs = (self.use_html(text, target) if kind == "use" else
                        highlight(text, classes[pos:pos + n]))
                pos += n
                if kind == "ident" and target in self.anchor \
                        and target != c.label:
                    runs = '<a class="nwident" href="#%s">%s</a>' % (
                        self.anchor[target], runs)
                body.append(runs)
            body.append("\n")
            pos += 1
        out.append('<pre class="nwcode lang-%s"><code>%s</code></pre>'
                   % (lang, "".join(body)))
        notes = []
        if c.prevdef:
            notes.append("Continues " + self.link(c.prevdef, "the part above"))
        if c.nextdef:
            notes.append(("continued " if notes else "Continued ") +
                         self.link(c.nextdef, "below"))
        if c.usedin:
            notes.append("Used in " + self.refs(c.usedin))
        elif c.notused and first:
            notes.append("Root chunk: <code>notangle -R'%s'</code>"
                         % esc(c.name))
        for word, names in (("Defines", c.defines), ("Uses", c.uses)):
            if names:
                notes.append(word + " " + ", ".join(
                    map(self.ident_link, dict.fromkeys(names))))
        if notes:
            out.append('<p class="nwxref">%s.</p>' % ". ".join(notes))
        out.append("</div>")
        return raw_block("\n".join(out))

    def use_html(self, name, target):
        """A chunk use inside code: a link to the used chunk's definition."""
        tip = self.anchor.get(target or self.first_label.get(name))
        if tip is None:
            print("nw2md: warning: chunk <<%s>> is used but never defined"
                  % name, file=sys.stderr)
        return '<a class="nwuse" data-chunk="%s"%s>%s</a>' % (
            esc(name), ' href="#%s"' % tip if tip else "", name_html(name))

    def quote_html(self, piece):
        """A piece of docs as Markdown: text, or quoted code with chunk
        uses as raw HTML, the uses linked as in code."""
        return piece if isinstance(piece, str) else "`<code>%s</code>`{=html}" \
            % "".join(esc(p) if isinstance(p, str) else self.use_html(*p)
                      for p in piece)

    def ident_link(self, name):
        """A link to an identifier's index entry, as HTML."""
        code = "<code>%s</code>" % esc(name)
        if name in self.ident_id:
            return '<a class="nwident" href="#%s">%s</a>' % (
                self.ident_id[name], code)
        return code

    def appendix(self):
        """Markdown for the chunk list and the identifier index."""
        out = []
        if self.chunklist:
            items = []
            for label, name, defs, uses in sorted(
                    self.chunklist, key=lambda e: e[1].lower()):
                if not defs:
                    continue
                where = [self.link(d, str(i + 1)) for i, d in enumerate(defs)]
                text = '<li>' + self.link(defs[0], name_html(name))
                if len(defs) > 1:
                    text += " (parts " + ", ".join(where) + ")"
                if uses:
                    text += " used in " + self.refs(uses)
                items.append(text + "</li>")
            out.append("## Code chunks {#nw-chunks}\n\n" +
                       html_list("nwchunks", items))
        if self.index:
            items = []
            for label, name, defs, uses in sorted(
                    self.index, key=lambda e: (e[1].lstrip("_").lower(), e[1])):
                refs = ["<strong>%s</strong>" % self.ref(d) for d in defs]
                refs += [self.ref(u) for u in dict.fromkeys(uses)
                         if u not in defs]
                items.append('<li id="%s"><code>%s</code>: %s</li>' % (
                    self.ident_id[name], esc(name), ", ".join(refs)))
            out.append("## Identifier index {#nw-index}\n\n"
                       "Each identifier links to the chunk that defines it "
                       "(bold) and to the chunks that use it.\n\n" +
                       html_list("nwindex", items))
        return "\n\n".join(out)

    def markdown(self):
        """The whole document as Pandoc Markdown."""
        out = []
        for kind, part in self.parts:
            if kind == "docs":
                out.append(prose("".join(map(self.quote_html, part))))
            else:
                out.append("\n" + self.chunk_html(part) + "\n")
        tail = self.appendix()
        return "".join(out).rstrip("\n") + "\n" + (
            "\n" + tail + "\n" if tail else "")


def main(argv):
    """Entry point: read the pipeline from stdin, write Markdown to stdout."""
    for arg in argv[1:]:
        if arg not in IGNORED:
            print("nw2md: unknown option %r\n%s" % (arg, USAGE),
                  file=sys.stderr)
            return 2
    try:
        stdin = open(sys.stdin.fileno(), encoding="utf-8", newline="\n")
        parts, chunklist, index = read_document(parse(stdin))
        text = Weaver(parts, chunklist, index).markdown()
    except (PipelineError, UnicodeDecodeError) as err:
        print("nw2md: error: %s" % err, file=sys.stderr)
        return 1
    sys.stdout.buffer.write(text.encode("utf-8"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
