#!/bin/sh
# tools/lit/tangle.sh [-L] SOURCE ROOT OUTPUT | --roots SOURCE ROOT...
#
# Tangles root chunk ROOT of the noweb file SOURCE into OUTPUT as noweb's
# cpif does, but atomically: a temporary file beside OUTPUT replaces it only
# when the text differs (an unchanged tangle keeps its timestamp; a failed
# run leaves no half-written OUTPUT). -L adds '#line N "SOURCE"' directives.
# Fails (exit 1) when ROOT is no root of SOURCE or notangle complains (an
# undefined chunk: its uses' lines are named). --roots fails when SOURCE has
# a root not among the ROOTs: an unused chunk is a root, so an unexpected
# one is almost always a misspelled name whose code would never be tangled.
set -eu
NOTANGLE=${NOTANGLE:-notangle}
NOROOTS=${NOROOTS:-noroots}
if [ "${1:-}" = "--roots" ]; then
    src=$2; shift 2
    bad=$("$NOROOTS" "$src" | while IFS= read -r r; do
        name=${r#<<}; name=${name%>>}
        found=no
        for want in "$@"; do [ "$want" = "$name" ] && found=yes; done
        [ $found = yes ] || printf '%s\n' "$r"
    done)
    [ -z "$bad" ] && exit 0
    echo "$src: chunk(s) defined but never used (a misspelled name?):" >&2
    printf '%s\n' "$bad" | sed 's/^/  /' >&2
    exit 1
fi
line=
if [ "${1:-}" = "-L" ]; then line=-L; shift; fi
[ $# -eq 3 ] || {
    echo "usage: tangle.sh [-L] SOURCE ROOT OUTPUT | --roots SOURCE ROOT..." >&2
    exit 2; }
src=$1 root=$2 out=$3
if ! "$NOROOTS" "$src" | grep -qxF "<<$root>>"; then
    echo "tangle.sh: $src has no root chunk <<$root>> (noroots lists:" \
         "$("$NOROOTS" "$src" | tr '\n' ' '))" >&2
    exit 1
fi
dir=$(dirname "$out")
mkdir -p "$dir"
tmp= err=
trap 'rm -f "$tmp" "$err"' EXIT INT TERM HUP
tmp=$(mktemp "$dir/.tangle.XXXXXX")
err=$(mktemp "${TMPDIR:-/tmp}/tangle-err.XXXXXX")
rc=0
"$NOTANGLE" $line -R"$root" "$src" >"$tmp" 2>"$err" || rc=$?
if [ $rc -ne 0 ] || [ -s "$err" ]; then
    echo "tangle.sh: notangle failed for <<$root>> in $src:" >&2
    sed 's/^/  /' "$err" >&2
    sed -n 's/^undefined chunk name: <<\(.*\)>>$/\1/p' "$err" |
    while IFS= read -r name; do
        grep -nF "<<$name>>" "$src" | grep -vF "@<<$name>>" |
            sed "s|^\([0-9]*\):.*|  $src:\1: uses <<$name>>, undefined|" >&2
        case $name in
        "<"*) echo "  (write a kernel launch as kernel@<<<grid, block>>>:" \
                   "noweb reads << as a chunk reference)" >&2 ;;
        esac
    done
    exit 1
fi
if [ -f "$out" ] && cmp -s "$tmp" "$out"; then
    exit 0
fi
chmod 0644 "$tmp"
mv -f "$tmp" "$out"
