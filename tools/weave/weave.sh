#!/bin/sh
# weave.sh: build one HTML page from a noweb source.
# usage: tools/weave/weave.sh SOURCE.nw FACTS.yaml OUTPUT.html
# Writes OUTPUT.md (the Pandoc Markdown from nw2md, kept for debugging) and
# OUTPUT, each through a temporary name renamed at the end.
# NOWEAVE and PANDOC name the tools; SITE_DIR holds template, CSS, figures;
# SITE_EXTRA_RESOURCES is a further ':'-separated folder list searched for
# images (generated plots live under build/).
set -eu
if [ $# -ne 3 ]; then
  echo "usage: $0 SOURCE.nw FACTS.yaml OUTPUT.html" >&2; exit 2
fi
src=$1 facts=$2 out=$3
here=$(dirname "$0")
site=${SITE_DIR:-$here/../../site}
NOWEAVE=${NOWEAVE:-noweave} PANDOC=${PANDOC:-pandoc}
for f in "$src" "$facts" "$site/template.html" "$site/style.css"; do
  [ -r "$f" ] || { echo "$0: cannot read $f" >&2; exit 1; }
done
md=${out%.html}.md
# The identifier index comes from '@ %def' lines; a source without any gets
# noweb's heuristic C definition finder instead, with a note.
defs=
if ! grep -q '^@ %def ' "$src"; then
  defs="-autodefs c"
  echo "weave.sh: note: $src has no '@ %def' lines; indexing identifiers with noweave -autodefs c" >&2
fi
# A failed or interrupted run leaves neither temporary file behind.
trap 'rm -f "$md.tmp" "$out.tmp"' EXIT
trap 'exit 130' INT TERM HUP
# -t keeps tabs as tabs, -index runs finduses and noidx, -n drops the wrapper.
"$NOWEAVE" -n -t $defs -index -backend "$here/nw2md" "$src" > "$md.tmp"
err=$(mktemp "${TMPDIR:-/tmp}/weave-err.XXXXXX")
trap 'rm -f "$md.tmp" "$out.tmp" "$err"' EXIT
if ! "$PANDOC" "$md.tmp" -f markdown -t html5 --standalone \
  --preserve-tabs --template "$site/template.html" --css style.css --self-contained \
  --resource-path="$site:$(dirname "$src")${SITE_EXTRA_RESOURCES:+:$SITE_EXTRA_RESOURCES}" \
  --metadata-file "$facts" \
  --lua-filter "$here/facts.lua" --lua-filter "$here/divs.lua" \
  --lua-filter "$here/page.lua" --mathml \
  --toc --toc-depth=2 -o "$out.tmp" 2>"$err"; then
  # Name the source line of an unknown fact placeholder, without Lua's traceback.
  name=$(sed -n "s/.*unknown fact name '\([^']*\)'.*/\1/p" "$err" | head -n 1)
  if [ -n "$name" ]; then
    echo "weave.sh: unknown fact name '$name' (not in tools/facts/schema.tsv):" >&2
    grep -nF "[$name]{.fact}" "$src" | sed "s|^\([0-9]*\):.*|  $src:\1|" >&2
  else
    cat "$err" >&2
  fi
  exit 1
fi
grep -v '^$' "$err" >&2 || true
mv "$md.tmp" "$md"
mv "$out.tmp" "$out"
