#!/bin/sh
# tools/check-time.sh [OUT]: time make check, then make check-all, in a clean
# clone of this checkout's HEAD (nothing built: what CI starts from), and
# write the transcript to OUT (default evidence/check-time.txt): a header
# (date, host, cores, commit, source hash, toolkit), each command's output
# and seconds. Run it on otherwise idle cores; the README points to it.
# Exit: 0, or the first failing command's status (the transcript is written
# either way, through a temporary name).
set -u
out=${1:-evidence/check-time.txt}
rev=$(git rev-parse --short HEAD) || exit 2
[ -z "$(git status --porcelain --untracked-files=no)" ] ||
  echo "check-time.sh: note: uncommitted changes are not in the clone" >&2
tmp=$out.$$.tmp
dir=$(mktemp -d "${TMPDIR:-/tmp}/check-time.XXXXXX") || exit 1
trap 'rm -rf "$dir" "$tmp"' EXIT
trap 'exit 130' INT TERM HUP
git clone -q . "$dir/clone" || exit 1
rc=0
{
  echo "# make check's time: a transcript (no GPU: nothing ran on a GPU)"
  echo "# date_utc: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "# host: $(nproc) cores, $(sed -n 's/^model name\t*: //p' \
    /proc/cpuinfo | head -n 1)"
  echo "# commit: $rev (a clean clone, nothing built: what CI starts from)"
  echo "# toolkit: $(nvcc --version 2>/dev/null | sed -n 's/.*release //p' |
    head -n 1) (compile-only; no GPU)"
  for goal in check check-all; do
    echo "# command: make $goal (in the clone; check-all after check)"
    s=$(date +%s)
    (cd "$dir/clone" && make $goal 2>&1); r=$?
    echo "# make $goal: exit $r, $(( $(date +%s) - s )) s"
    [ $rc -ne 0 ] || rc=$r
  done
  echo "# source sha256: $(cat "$dir/clone/build/source.sha256" 2>/dev/null)"
} > "$tmp" 2>&1
mv -f "$tmp" "$out"
echo "check-time.sh: wrote $out (exit $rc)"
exit $rc
