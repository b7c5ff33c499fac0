#!/bin/sh
# tools/lit/weave.sh SOURCE.nw FACTS.json OUTPUT.html
#
# noweave with the nw2md.py back end (Markdown), then pandoc with facts.lua
# (values from FACTS.json, by gather.py) and divs.lua (lesson boxes), the
# template and stylesheet of SITE_DIR (default: site/ beside tools/), all
# embedded in one page; the Markdown is kept as $WEAVE_MD (default OUTPUT.md).
# Temporary names (with the PID: two makes at once never share one), then
# renames, so no step leaves a file make would keep.
# NOWEAVE, PANDOC name the tools; SITE_EXTRA_RESOURCES adds an image folder.
# noweave and pandoc see only a copy of SOURCE (without CRs at line ends or a
# byte-order mark) and links under plain names, so any path works; messages
# name SOURCE's lines.
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
abs() { case $1 in /*) printf '%s\n' "$1" ;; *) printf '%s/%s\n' "$PWD" "$1" ;;
        esac; }
md=$(abs "${WEAVE_MD:-${out%.html}.md}") out=$(abs "$out")
case $NOWEAVE in /*) ;; */*) NOWEAVE=$PWD/$NOWEAVE ;; esac
case $PANDOC in /*) ;; */*) PANDOC=$PWD/$PANDOC ;; esac
work=
trap 'rm -f "$md.$$.tmp" "$out.$$.tmp"; [ -z "$work" ] || rm -rf "$work"' EXIT
trap 'exit 130' INT TERM HUP
work=$(mktemp -d "${TMPDIR:-/tmp}/weave.XXXXXX")
mkdir -p "$(dirname "$out")" "$(dirname "$md")"
LC_ALL=C sed -e '1s/^\xEF\xBB\xBF//' -e 's/\r$//' "$src" > "$work/in.nw"
for l in lit:"$here" site:"$site" facts.json:"$facts" \
         src:"$(dirname "$src")" extra:"${SITE_EXTRA_RESOURCES:-.}"; do
  ln -s "$(abs "${l#*:}")" "$work/${l%%:*}"
done
# The identifier index comes from '@ %def' lines; a source without any gets
# noweb's heuristic C definition finder instead, with a note.
defs=
if ! grep -q '^@ %def ' "$work/in.nw"; then
  defs="-autodefs c"
  echo "weave.sh: note: $src has no '@ %def' lines; indexing identifiers" \
       "with noweave -autodefs c" >&2
fi
# -t keeps tabs as tabs, -index runs finduses and noidx, -n drops the wrapper.
(cd "$work" && NW2MD_SOURCE=$src "$NOWEAVE" -n -t $defs -index \
  -backend lit/nw2md.py in.nw) > "$md.$$.tmp" 2> "$work/err" || rc=1
S=$src awk '{ if (index($0, "in.nw:") == 1)
  $0 = ENVIRON["S"] substr($0, 6); print }' "$work/err" >&2
! grep -q 'unescaped << in documentation' "$work/err" || { rc=1; echo \
  "  (in prose, write << as @<< (x @<< 2, \`k@<<<g, b>>>(x)\`))" >&2; }
[ "${rc:-0}" -eq 0 ] || exit 1
if ! (cd "$work" && "$PANDOC" "$md.$$.tmp" -f markdown -t html5 --standalone \
  --preserve-tabs --template site/template.html --css style.css \
  --self-contained --metadata-file facts.json --resource-path=site:src:extra \
  --lua-filter lit/facts.lua --lua-filter lit/divs.lua \
  --lua-filter lit/page.lua --mathml \
  --toc --toc-depth=2 -o "$out.$$.tmp") 2> "$work/err"; then
  # Name the source line of an unknown fact, without Lua's traceback.
  name=$(sed -n "s/.*unknown fact name '\([^']*\)'.*/\1/p" "$work/err" |
         head -n 1)
  if [ -n "$name" ]; then
    echo "weave.sh: unknown fact name '$name' (not in the facts schema):" >&2
    grep -nF -e "[$name]{.fact}" -e "fact=\"$name\"" "$work/in.nw" |
      sed "s|^\([0-9]*\):.*|  $src:\1|" >&2
  else
    cat "$work/err" >&2
  fi
  exit 1
fi
grep -v '^$' "$work/err" >&2 || true
mv "$md.$$.tmp" "$md"
mv "$out.$$.tmp" "$out"
