#!/bin/sh
# tools/lit/weave.sh SOURCE.nw FACTS.json OUTPUT.html
#
# noweave with the nw2md.py back end (Markdown), then pandoc with facts.lua
# (values from FACTS.json, by gather.py) and divs.lua (lesson boxes), the
# template and stylesheet of SITE_DIR (default: site/ beside tools/), all
# embedded in one page; OUTPUT.md is kept. Temporary names, then renames.
# NOWEAVE, PANDOC name the tools; SITE_EXTRA_RESOURCES adds image folders.
# Exit: 0; 1 a tool failed (an unknown fact named with its lines); 2 usage.
set -eu
if [ $# -ne 3 ]; then
  echo "usage: $0 SOURCE.nw FACTS.json OUTPUT.html" >&2; exit 2
fi
src=$1 facts=$2 out=$3
here=$(dirname "$0")
site=${SITE_DIR:-$here/../../site}
NOWEAVE=${NOWEAVE:-noweave} PANDOC=${PANDOC:-pandoc}
for f in "$src" "$facts" "$site/template.html" "$site/style.css"; do
  [ -r "$f" ] || { echo "$0: cannot read $f" >&2; exit 1; }
done
md=${out%.html}.md extra=${SITE_EXTRA_RESOURCES:-}
# The identifier index comes from '@ %def' lines; a source without any gets
# noweb's heuristic C definition finder instead, with a note.
defs=
if ! grep -q '^@ %def ' "$src"; then
  defs="-autodefs c"
  echo "weave.sh: note: $src has no '@ %def' lines; indexing identifiers" \
       "with noweave -autodefs c" >&2
fi
err=
trap 'rm -f "$md.tmp" "$out.tmp" "$err"' EXIT
trap 'exit 130' INT TERM HUP
err=$(mktemp "${TMPDIR:-/tmp}/weave-err.XXXXXX")
# -t keeps tabs as tabs, -index runs finduses and noidx, -n drops the wrapper.
"$NOWEAVE" -n -t $defs -index -backend "$here/nw2md.py" "$src" > "$md.tmp"
if ! "$PANDOC" "$md.tmp" -f markdown -t html5 --standalone \
  --preserve-tabs --template "$site/template.html" --css style.css \
  --self-contained --metadata-file "$facts" \
  --resource-path="$site:$(dirname "$src")${extra:+:}$extra" \
  --lua-filter "$here/facts.lua" --lua-filter "$here/divs.lua" \
  --lua-filter "$here/page.lua" --mathml \
  --toc --toc-depth=2 -o "$out.tmp" 2>"$err"; then
  # Name the source line of an unknown fact, without Lua's traceback.
  name=$(sed -n "s/.*unknown fact name '\([^']*\)'.*/\1/p" "$err" | head -n 1)
  if [ -n "$name" ]; then
    echo "weave.sh: unknown fact name '$name' (not in the facts schema):" >&2
    grep -nF -e "[$name]{.fact}" -e "fact=\"$name\"" "$src" |
      sed "s|^\([0-9]*\):.*|  $src:\1|" >&2
  else
    cat "$err" >&2
  fi
  exit 1
fi
grep -v '^$' "$err" >&2 || true
mv "$md.tmp" "$md"
mv "$out.tmp" "$out"
