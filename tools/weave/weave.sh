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
# -t keeps tabs as tabs, -index runs finduses and noidx, -n drops the wrapper.
"$NOWEAVE" -n -t $defs -index -backend "$here/nw2md" "$src" > "$md.tmp"
"$PANDOC" "$md.tmp" -f markdown -t html5 --standalone \
  --preserve-tabs --template "$site/template.html" --css style.css --self-contained \
  --resource-path="$site:$(dirname "$src")${SITE_EXTRA_RESOURCES:+:$SITE_EXTRA_RESOURCES}" \
  --metadata-file "$facts" \
  --lua-filter "$here/facts.lua" --lua-filter "$here/divs.lua" --mathml \
  --toc --toc-depth=2 -o "$out.tmp"
mv "$md.tmp" "$md"
mv "$out.tmp" "$out"
