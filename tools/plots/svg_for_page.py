#!/usr/bin/env python3
"""svg-for-page: make a gnuplot SVG fit to sit inline in an HTML page.

  tools/plots/svg-for-page PREFIX IN.svg OUT.svg

- Every id becomes PREFIX-id (and every #id and url(#id) reference with it),
  so several plots, and the wide and narrow drawing of one plot, can share
  a page without clashing ids; an id gnuplot repeats gets a suffix -2, -3.
- Colours follow the page's colour scheme: black becomes currentColor (the
  page's text colour), the white background becomes transparent, any other
  white (an opaque key box) becomes var(--plot-bg, #ffffff), and every other
  colour #rrggbb becomes var(--plot-rrggbb, #rrggbb), so the stylesheet can
  give each data colour a dark-scheme twin.  Outside a page (no variables)
  the file looks as gnuplot drew it.
- gnuplot's "sans" becomes a CSS font list ending in sans-serif; its
  <title> and <desc> elements go (the page names the figure; gnuplot's
  are "Gnuplot" and "gnuplot_plot_1").

Writes OUT through a temporary file.  Python 3 standard library only.
"""

import os
import re
import sys
import tempfile
import xml.etree.ElementTree as ET

SVG = "http://www.w3.org/2000/svg"
XLINK = "http://www.w3.org/1999/xlink"
COLOUR_PROPS = ("fill", "stroke", "color", "flood-color", "stop-color")
NAMED = {"black": "#000000", "white": "#ffffff", "gray": "#bebebe",
         "grey": "#bebebe", "lightgrey": "#d3d3d3", "red": "#ff0000"}
FONTS = "system-ui, -apple-system, 'Segoe UI', Roboto, 'DejaVu Sans', sans-serif"


def hex_colour(value):
    """#rrggbb for a colour value, or None for none/currentColor/url()."""
    v = value.strip().lower()
    if v in NAMED:
        return NAMED[v]
    if re.fullmatch(r"#[0-9a-f]{6}", v):
        return v
    m = re.fullmatch(r"#([0-9a-f])([0-9a-f])([0-9a-f])", v)
    if m:
        return "#" + "".join(c * 2 for c in m.groups())
    m = re.fullmatch(r"rgb\(\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)\s*\)", v)
    if m:
        return "#%02x%02x%02x" % tuple(int(x) for x in m.groups())
    return None


def themed(prop, colour, is_background):
    """(attribute value or None, style declaration or None) for a colour."""
    if colour == "#000000":
        return ("inherit" if prop == "color" else "currentColor"), None
    if colour == "#ffffff":
        if is_background:
            return "none", None
        if prop == "color":
            return None, None
        return None, "%s: var(--plot-bg, #ffffff)" % prop
    return None, "%s: var(--plot-%s, %s)" % (prop, colour[1:], colour)


def restyle(root, prefix):
    """Rewrite ids, references, colours and fonts in place."""
    ids = {el.get("id") for el in root.iter() if el.get("id")}

    def ref(value):
        value = re.sub(r"url\(#([^)]+)\)",
                       lambda m: "url(#%s-%s)" % (prefix, m.group(1))
                       if m.group(1) in ids else m.group(0), value)
        if value.startswith("#") and value[1:] in ids:
            value = "#%s-%s" % (prefix, value[1:])
        return value

    first_rect = next(root.iter("{%s}rect" % SVG), None)
    taken = set()
    for el in root.iter():
        if el.get("id"):
            new = base = "%s-%s" % (prefix, el.get("id"))
            n = 1
            while new in taken:      # gnuplot repeats gnuplot_plot_N
                n += 1
                new = "%s-%d" % (base, n)
            taken.add(new)
            el.set("id", new)
        styles = []
        for name in list(el.keys()):
            value = el.get(name)
            if name in ("href", "{%s}href" % XLINK) or "url(#" in value:
                el.set(name, ref(value))
                value = el.get(name)
            if name in COLOUR_PROPS:
                colour = hex_colour(value)
                if colour is None:
                    continue
                is_bg = el is first_rect and name == "fill"
                attr, style = themed(name, colour, is_bg)
                if attr is None:
                    del el.attrib[name]
                else:
                    el.set(name, attr)
                if style:
                    styles.append(style)
            elif name == "font-family" and value.strip().strip("'\"") == "sans":
                el.set(name, FONTS)
        if styles:
            old = el.get("style", "").strip().rstrip(";")
            el.set("style", "; ".join(([old] if old else []) + styles))
    for parent in list(root.iter()):
        for el in list(parent):
            if el.tag in ("{%s}title" % SVG, "{%s}desc" % SVG):
                parent.remove(el)


def main(argv):
    if len(argv) != 4:
        print("usage: svg-for-page PREFIX IN.svg OUT.svg", file=sys.stderr)
        return 2
    prefix, src, out = argv[1:]
    if not re.fullmatch(r"[A-Za-z][\w-]*", prefix):
        print("svg-for-page: bad id prefix %r" % prefix, file=sys.stderr)
        return 2
    ET.register_namespace("", SVG)
    ET.register_namespace("xlink", XLINK)
    try:
        root = ET.parse(src).getroot()
    except (OSError, ET.ParseError) as err:
        print("svg-for-page: %s: %s" % (src, err), file=sys.stderr)
        return 1
    restyle(root, prefix)
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(out) or ".",
                               prefix=".tmp-")   # apart from another make's
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(ET.tostring(root, encoding="unicode") + "\n")
    os.chmod(tmp, 0o644)
    os.replace(tmp, out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
