#!/bin/sh
# weave.sh (litkit) SOURCE.nw FACTS.json OUTPUT.html
#
# noweave with the nw2md.py back end (Markdown), then pandoc: once to split
# the document into its pages (pages.lua: the source's lit-pages metadata
# and page=NAME marks on headings; one page without them), then once per
# page with pages.lua, facts.lua (values from FACTS.json, by gather.py),
# divs.lua (lesson boxes) and page.lua, the template and stylesheet of
# SITE_DIR (default: theme/ beside this script), all embedded in each page;
# the template's $lit-source$ is SOURCE's file name and $lit-version$ the
# package's version (LIT_VERSION, else read from __init__.py).  The
# first page is OUTPUT.html; page NAME is NAME.html beside it.  The whole
# Markdown is kept as $WEAVE_MD (default OUTPUT.md).  WEAVE_PAGES="a b ..."
# (optional) is the list of pages the caller expects: another list in the
# source is an error.  Collision-free temporary names, then renames, so no
# step leaves a file make would keep.
# NOWEAVE, PANDOC name the tools; SITE_EXTRA_RESOURCES adds an image folder;
# LIT_SCHEMA names the facts schema in the message of an unknown fact.
# noweave and pandoc see only a copy of SOURCE (without CRs at line ends or a
# byte-order mark) and links under plain names, so any path works; messages
# name SOURCE's lines.
# Exit: 0; 1 a tool failed (an unknown fact, a bad page mark or a link to no
# id, named with its lines); 2 usage.
set -eu
if [ $# -ne 3 ]; then
  echo "usage: $0 SOURCE.nw FACTS.json OUTPUT.html" >&2; exit 2
fi
src=$1 facts=$2 out=$3
here=$(dirname "$0")
site=${SITE_DIR:-$here/theme}
version=${LIT_VERSION:-$(sed -n 's/^__version__ = "\(.*\)"$/\1/p' \
  "$here/__init__.py")}
NOWEAVE=${NOWEAVE:-noweave} PANDOC=${PANDOC:-pandoc}
for f in "$src" "$facts" "$site/template.html" "$site/style.css"; do
  [ -r "$f" ] || { echo "$0: cannot read $f" >&2; exit 1; }
done
abs() { case $1 in /*) printf '%s\n' "$1" ;; *) printf '%s/%s\n' "$PWD" "$1" ;;
        esac; }
md=$(abs "${WEAVE_MD:-${out%.html}.md}") out=$(abs "$out")
case $NOWEAVE in /*) ;; */*) NOWEAVE=$PWD/$NOWEAVE ;; esac
case $PANDOC in /*) ;; */*) PANDOC=$PWD/$PANDOC ;; esac
work= pids=
# On exit: stop the page weaves still running, then remove the temporaries
# (|| : : under set -e, a weave that already ended must not stop the trap).
trap '[ -z "$pids" ] || { kill $pids 2>/dev/null || :; wait || :; }
      [ -z "$work" ] || { while IFS= read -r t; do rm -f "$t"; done \
      < "$work/tmps"; rm -rf "$work"; }' EXIT
trap 'exit 130' INT TERM HUP
work=$(mktemp -d "${TMPDIR:-/tmp}/weave.XXXXXX")
: > "$work/tmps"
mkdir -p "$(dirname "$out")" "$(dirname "$md")"
# temp FILE: t, a new empty file beside FILE (.tmp-NAME.XXXXXX), removed on
# exit unless renamed; its mode as the umask makes a new file's.
mode=$(printf '%o' $((0666 & ~0$(umask))))
temp() {
  t=$(mktemp "$(dirname "$1")/.tmp-$(basename "$1").XXXXXX") || exit 1
  printf '%s\n' "$t" >> "$work/tmps"
  chmod "$mode" "$t"
}
temp "$md"; mdtmp=$t
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
# The back end runs with LIT_PYTHON (default /usr/bin/python3: Pygments).
py=${LIT_PYTHON:-$(command -v /usr/bin/python3 || command -v python3)}
printf '#!/bin/sh\nexec "%s" lit/nw2md.py "$@"\n' "$(abs "$py" |
  sed 's/[\\"$`]/\\&/g')" > "$work/nw2md"
chmod +x "$work/nw2md"
(cd "$work" && NW2MD_SOURCE=$src "$NOWEAVE" -n -t $defs -index \
  -backend ./nw2md in.nw) > "$mdtmp" 2> "$work/err" || rc=1
S=$src awk '{ if (index($0, "in.nw:") == 1)
  $0 = ENVIRON["S"] substr($0, 6); print }' "$work/err" >&2
! grep -q 'unescaped << in documentation' "$work/err" || { rc=1; echo \
  "  (in prose, write << as @<< (x @<< 2, \`k@<<<g, b>>>(x)\`))" >&2; }
[ "${rc:-0}" -eq 0 ] || exit 1
lines() {
  # The lines of in.nw holding any of the fixed strings given, as SOURCE:N.
  for pat in "$@"; do printf '%s\n' "$pat"; done > "$work/pats"
  grep -nF -f "$work/pats" "$work/in.nw" | sed "s|^\([0-9]*\):.*|  $src:\1|" >&2
}
failed() {
  # Report a failed pandoc run (its stderr in $work/err) and exit 1: an
  # unknown fact, a link to no id or a bad mark with its source lines.
  name=$(sed -n "s/.*unknown fact name '\([^']*\)'.*/\1/p" "$work/err" |
         head -n 1)
  if [ -n "$name" ]; then
    echo "weave.sh: unknown fact name '$name' (not in the facts schema," \
         "${LIT_SCHEMA:-none: set SCHEMA in the Makefile}: the Makefile's" \
         "SCHEMA; a row NAME<tab>PRODUCER<tab>FORMAT<tab>DESCRIPTION" \
         "there adds it):" >&2
    lines "[$name]{.fact}" "fact=\"$name\""
  elif grep -q '^pages\.lua: ' "$work/err"; then
    grep '^pages\.lua: ' "$work/err" | sed 's/^/weave.sh: /' >&2
    for id in $(sed -n "s/^pages\.lua: link to an id that is on no page: //p" \
                "$work/err" | tr -d "'," ); do
      lines "(${id})" "href=\"${id}\""
    done
    for p in $(sed -n "s/.*': page=\([^ ]*\) .*/\1/p" "$work/err"); do
      lines "page=$p"
    done
  else
    cat "$work/err" >&2
  fi
  exit 1
}
# Pass 1 (for a source that names lit-pages): the whole document as JSON,
# checked and split into pages.  Else one page, from the Markdown.
if grep -q 'lit-pages' "$work/in.nw"; then
  (cd "$work" && LIT_PAGES_OUT=pages "$PANDOC" "$mdtmp" -f markdown \
    -t json --preserve-tabs --lua-filter lit/pages.lua -M lit-pass=plan \
    -o doc.json) 2> "$work/err" || failed
  pages=$(cat "$work/pages") input=doc.json from=json
else
  pages=index input=$mdtmp from=markdown
fi
if [ -n "${WEAVE_PAGES:-}" ] && [ "$(echo $WEAVE_PAGES)" != "$(echo $pages)" ]
then
  echo "weave.sh: $src declares the pages '$(echo $pages)' (lit-pages);" \
       "the caller expects '$(echo $WEAVE_PAGES)' (WEAVE_PAGES)" >&2
  exit 1
fi
# Pass 2: the pages at once, each to a temporary beside its file.
file_of() { if [ "$1" = "$first" ]; then file=$out
            else file=$(dirname "$out")/$1.html; fi; }
first=${pages%%[!a-z0-9_-]*}
for name in $pages; do   # $work/{tmp,pid,err}.NAME: its temporary, job, log
  file_of "$name"
  temp "$file"
  printf '%s\n' "$t" > "$work/tmp.$name"
  (cd "$work" && exec "$PANDOC" "$input" -f $from -t html5 --standalone \
    --preserve-tabs --template site/template.html --css style.css \
    --self-contained --metadata-file facts.json --resource-path=site:src:extra \
    -M lit-page="$name" -M lit-first-file="$(basename "$out")" \
    -M lit-source="$(basename "$src")" -M lit-version="$version" \
    --lua-filter lit/pages.lua --lua-filter lit/facts.lua \
    --lua-filter lit/divs.lua --lua-filter lit/page.lua --mathml \
    --toc --toc-depth=2 -o "$t") 2> "$work/err.$name" &
  echo $! > "$work/pid.$name"
  pids="$pids $!"
done
: > "$work/warn"
for name in $pages; do
  wait "$(cat "$work/pid.$name")" ||
    { mv "$work/err.$name" "$work/err"; failed; }
  grep -v '^$' "$work/err.$name" >> "$work/warn" || true
done
pids=
awk '!seen[$0]++' "$work/warn" >&2
mv "$mdtmp" "$md"
for name in $pages; do
  file_of "$name"
  mv "$(cat "$work/tmp.$name")" "$file"
done
