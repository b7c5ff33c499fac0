#!/bin/sh
# tangle.sh (litkit) [-L] SOURCE ROOT OUTPUT | --roots SOURCE ROOT... |
#                     --all SOURCE OUTDIR ROOT...
#
# Tangles root chunk ROOT of the noweb file SOURCE into OUTPUT like noweb's
# cpif, but atomically: OUTPUT is replaced only when the text differs (else
# it keeps its timestamp) and is never left half written. -L adds '#line N
# "SOURCE"' directives. Exit 1 when ROOT is no root of SOURCE or notangle
# complains (an undefined chunk's uses are named by line). --roots fails
# when SOURCE has a root not among the ROOTs (an unused chunk, most likely a
# misspelled name; its line is named). --all: --roots, then each ROOT into
# OUTDIR/ROOT (-L) and OUTDIR/clean/ROOT. noweb reads a copy of SOURCE
# without CRs or a byte-order mark, under a plain name, so any path works.
set -eu
NOTANGLE=${NOTANGLE:-notangle} NOROOTS=${NOROOTS:-noroots}
case $NOTANGLE in /*) ;; */*) NOTANGLE=$PWD/$NOTANGLE ;; esac
case $NOROOTS in /*) ;; */*) NOROOTS=$PWD/$NOROOTS ;; esac
mode=one line=
case ${1:-} in --roots|--all) mode=$1; shift ;; -L) line=-L; shift ;; esac
if [ $# -lt 2 ] || { [ $mode = one ] && [ $# -ne 3 ]; }; then
    echo "usage: tangle.sh [-L] SOURCE ROOT OUTPUT | --roots SOURCE ROOT..." \
         "| --all SOURCE OUTDIR ROOT..." >&2
    exit 2
fi
src=$1; shift
work= tmp=
trap 'rm -f "$tmp"; [ -z "$work" ] || rm -rf "$work"' EXIT
trap 'exit 130' INT TERM HUP
work=$(mktemp -d "${TMPDIR:-/tmp}/tangle.XXXXXX")
LC_ALL=C sed -e '1s/^\xEF\xBB\xBF//' -e 's/\r$//' "$src" > "$work/in.nw"
at() {   # at TEXT MESSAGE: "SOURCE:N: MESSAGE" for each line N holding TEXT
    grep -nF -e "$1" "$work/in.nw" | grep -vF "@$1" | cut -d: -f1 |
        while read -r n; do echo "  $src:$n: $2"; done >&2
}
explain() {   # explain HEADLINE: noweb's complaints in err, with hints
    echo "tangle.sh: $1" >&2
    S=$src awk '{ if (index($0, "in.nw:") == 1)
        $0 = ENVIRON["S"] substr($0, 6); print "  " $0 }' "$work/err" >&2
    ! grep -q 'unescaped << in documentation' "$work/err" ||
        echo "  (in prose, write << as @<< (x @<< 2, \`k@<<<g, b>>>(x)\`):" \
             "noweb reads << as the start of a chunk name)" >&2
    sed -n 's/^undefined chunk name: <<\(.*\)>>$/\1/p' "$work/err" |
    while IFS= read -r name; do
        at "<<$name>>" "uses <<$name>>, undefined"
        case $name in "<"*) echo "  (write a kernel launch as" \
            "kernel@<<<grid, block>>>: noweb reads << as a chunk use)" >&2 ;;
        esac
    done
    exit 1
}
(cd "$work" && "$NOROOTS" in.nw) > "$work/roots" 2> "$work/err" &&
    [ ! -s "$work/err" ] || explain "noroots failed on $src:"
tangle() {   # tangle ROOT OUTPUT [-L]
    grep -qxF "<<$1>>" "$work/roots" || {
        echo "tangle.sh: $src has no root chunk <<$1>> (noroots lists:" \
             "$(tr '\n' ' ' < "$work/roots"))" >&2; exit 1; }
    mkdir -p "$(dirname "$2")"
    tmp=$(mktemp "$(dirname "$2")/.tangle.XXXXXX")
    (cd "$work" && "$NOTANGLE" ${3:-} -R"$1" in.nw) > "$tmp" 2> "$work/err" &&
        [ ! -s "$work/err" ] || explain "notangle failed for <<$1>> in $src:"
    if [ -n "${3:-}" ]; then   # the directives name SOURCE, not the copy
        N=$(printf '%s' "$src" | sed 's/[\\"]/\\&/g') awk '/^#line / &&
            sub(/ "in\.nw"$/, "") { $0 = $0 " \"" ENVIRON["N"] "\"" } 1' \
            "$tmp" > "$work/l" && cat "$work/l" > "$tmp"
    fi
    if [ -f "$2" ] && cmp -s "$tmp" "$2"; then rm -f "$tmp"; tmp=; return; fi
    chmod 0644 "$tmp"
    mv -f "$tmp" "$2"; tmp=
}
if [ $mode = one ]; then tangle "$1" "$2" $line; exit; fi
[ $mode = --all ] && { out=$1; shift; }
printf '%s\n' "$@" | sed 's/.*/<<&>>/' > "$work/want"
if grep -vxF -f "$work/want" "$work/roots" > "$work/bad"; then
    echo "$src: chunk(s) defined but never used (a misspelled name?):" >&2
    while IFS= read -r r; do at "$r=" "$r="; done < "$work/bad"
    exit 1
fi
[ $mode = --roots ] || for root in "$@"; do
    tangle "$root" "$out/$root" -L
    tangle "$root" "$out/clean/$root"
done
