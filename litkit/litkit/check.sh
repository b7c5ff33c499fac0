#!/bin/bash
# check.sh JOBS GROUP...: lit.mk's make check runner. First, one make -jJOBS
# builds what the GROUPs (make targets) need; then the groups run, JOBS at a
# time, each in its own make. Each ends with one line: name, result,
# seconds. The commands' output goes to build/check/NAME.log (what the groups
# need: build/check/prerequisites.log); a failed group's log is printed at the
# end. The calling make's flags and command-line variables reach every make
# (its jobserver does not: JOBS says how many). CHECK_FIRST: a make target
# run before the groups, whatever follows (a warning, say), or empty.
# CHECK_NAME: the goal the lines name (default: check). LIT_QUICK=1 (make
# check): lit.mk's TEST leaves out the tests marked slow; a group's line
# counts them.
# Exit: 0 every group passed; 1 a group failed; 2 usage.
set -u
[ $# -ge 1 ] && [ "$1" -gt 0 ] 2>/dev/null ||
  { echo "usage: check.sh JOBS GROUP..." >&2; exit 2; }
jobs=$1; shift
groups=("$@")
log=build/check
mkdir -p "$log"
# Drop the caller's -j and jobserver, keep its flags and variables.
MAKEFLAGS=$(printf ' %s' "${MAKEFLAGS:-}" | sed -E \
  -e 's/ --jobserver-(auth|fds)=[^ ]*//g' -e 's/ -j[0-9]*( |$)/\1/g' \
  -e 's/^ ([a-zA-Z]*)j[0-9]*( |$)/ \1\2/')
export MAKEFLAGS
mk() { make --no-print-directory -s "$@"; }
name=${CHECK_NAME:-check}
line() { printf 'make %s: %-24s %-8s %4d s%s\n' "$name" "$1" "$2" "$3" \
  "${4:-}"; }
# The tests pytest skipped or left out (-m "not slow") in group $1's log
# (its summary lines, "... 2 skipped, 3 deselected in 9.1s"), as "  (2
# skipped: see build/check/G.log; 3 slow: make check-all)", or nothing.
skips() {
  local s d
  read -r s d < <(awk '/ in [0-9.]+s( \([0-9:]+\))?$/ {
      for (i = 2; i <= NF; i++) { if ($i ~ /^skipped/) s += $(i - 1)
                                  if ($i ~ /^deselected/) d += $(i - 1) } }
      END { print s + 0, d + 0 }' "$log/$1.log" 2>/dev/null)
  s=${s:-0} d=${d:-0}
  [ "$s$d" = 00 ] && return
  printf '  ('
  [ "$s" = 0 ] || printf '%s skipped: see %s' "$s" "$log/$1.log"
  [ "$s" = 0 ] || [ "$d" = 0 ] || printf '; '
  [ "$d" = 0 ] || printf '%s slow: make check-all' "$d"
  printf ')'
}
t0=$SECONDS
first=${CHECK_FIRST:-}
[ -z "$first" ] || mk $first
if [ ${#groups[@]} -eq 0 ]; then
  echo "make $name: no group to run"; exit 0
fi

# What the groups need, as make's database names it (every group a target).
need=$(mk -qp "${groups[@]}" 2>/dev/null | awk -v g=" ${groups[*]} " '
  /^# Not a target/ { skip = 1; next }
  /^[^#\t][^:=]*:([^=]|$)/ { t = $0; sub(/:.*/, "", t)
    if (!skip && index(g, " " t " ")) { sub(/^[^:]*:+/, ""); sub(/\|/, "")
      printf "%s ", $0 } skip = 0; next }
  { skip = 0 }')
s=$SECONDS
if mk -k -j"$jobs" $need >"$log/prerequisites.log" 2>&1; then r=built
else r=FAILED; fi
line "(what the groups need)" $r $((SECONDS - s))

# The groups, JOBS at a time (xargs -P); each line as its group ends.
one() {   # one GROUP: run it, print its line; its exit status in GROUP.rc
  local s=$SECONDS rc=0
  mk "$1" >"$log/$1.log" 2>&1 || rc=$?
  echo $rc >"$log/$1.rc"
  if [ $rc = 0 ]; then line "$1" passed $((SECONDS - s)) "$(skips "$1")"
  else line "$1" FAILED $((SECONDS - s)); fi
}
export -f one mk line skips; export log name
for g in "${groups[@]}"; do rm -f "$log/$g.rc"; done
printf '%s\0' "${groups[@]}" | xargs -0 -n 1 -P "$jobs" bash -c 'one "$1"' -
failed=() passed=()
for g in "${groups[@]}"; do
  if [ "$(cat "$log/$g.rc" 2>/dev/null)" = 0 ]; then passed+=("$g")
  else failed+=("$g"); fi
done

if [ ${#failed[@]} -eq 0 ]; then
  echo "make $name: all ${#passed[@]} passed in $((SECONDS - t0)) s:" \
       "${passed[*]}"
  exit 0
fi
for g in "${failed[@]}"; do
  echo
  echo "==== $g failed; the end of $log/$g.log:"
  tail -n 60 "$log/$g.log"
done
[ $r = built ] || { echo; echo "==== what the groups need did not all build;" \
  "the errors in $log/prerequisites.log:"
  grep -E -A3 'rror|\*\*\*|missing' "$log/prerequisites.log" | tail -n 40; }
echo
echo "make $name: FAILED: ${failed[*]} (passed: ${passed[*]:-none};" \
     "$((SECONDS - t0)) s; logs in $log/)"
exit 1
