#!/bin/sh
# setup.sh (litkit) [--if-root] [--no-pip | --lit-only | --stale]: a
# module's set-up, run from its folder. Installs the Debian packages
# (litkit's own and the module's LIT_APT) as root, else prints the one
# command an administrator runs (exit 1); makes the virtual environment
# LIT_VENV (default build/venv; from $PYTHON, default /usr/bin/python3,
# with the system's site packages: Debian's pygments, matplotlib, pytest,
# selenium) and installs litkit into it from LIT_SRC (its pyproject.toml's
# folder; default: the folder above this script), offline, again whenever
# a file there differs from the last install (name, mode or bytes,
# whatever its date); then, unless the command LIT_PIP_UNLESS succeeds,
# the module's Python packages LIT_PIP from a registry into the venv (never
# the system Python; pip runs --isolated, so PIP_USER, PIP_TARGET and the
# like cannot send them elsewhere; where they come from, PIP_INDEX_URL,
# PIP_NO_INDEX, ..., is still taken). Writes the stamp LIT_STAMP (default
# build/.deps-ok) only when every step succeeded, so a later make tries
# again. Two at once take turns (flock).
# LIT_NO_SETUP=1 (a GPU node without a registry): the Debian packages and
# LIT_PIP are not checked; litkit is still installed (offline).
# Exit: 0 done; 1 packages missing (not root); 2 an install failed.
# --if-root: a failed LIT_PIP install is reported, and exits 0 (without the
# stamp); without it, root in a folder of another owner installs only the
# Debian packages. --no-pip: no LIT_PIP (and no stamp). --lit-only: the
# venv and litkit only. --stale: exit 0 when litkit is due, else 1.
set -eu
soft=0 pip=1 apt=1 ask=0
for a in "$@"; do
    case $a in --if-root) soft=1 ;; --no-pip) pip=0 ;;
    --lit-only) pip=0 apt=0 ;; --stale) ask=1 ;;
    *) echo "usage: setup.sh [--if-root] [--no-pip | --lit-only |" \
            "--stale]" >&2
       exit 2 ;;
    esac
done
here=$(cd "$(dirname "$0")" && pwd)
SRC=${LIT_SRC:-$(dirname "$here")}
VENV=${LIT_VENV:-build/venv}
STAMP=${LIT_STAMP:-build/.deps-ok}
PYTHON=${PYTHON:-/usr/bin/python3}
APT="noweb pandoc python3-venv python3-setuptools python3-wheel
     python3-pygments python3-pytest make
     ${LIT_APT:-}"
PIP=${LIT_PIP:-}
lit=$VENV/.litkit-installed
digest() {   # litkit's source: its files' names, modes and bytes
    tar -C "$SRC" -c --sort=name --mtime=@0 --owner=0 --group=0 \
        --exclude __pycache__ --exclude .pytest_cache --exclude ./build \
        --exclude '*.egg-info' . | sha256sum
}
stale() {   # stale: litkit's install is missing or of another source
    [ "$(digest)" != "$(cat "$lit" 2>/dev/null)" ]
}
[ $ask = 0 ] || { stale; exit; }
if [ -n "${LIT_NO_SETUP:-}" ]; then
    echo "setup.sh: LIT_NO_SETUP is set; not checking packages" >&2
    apt=0 pip=0
fi

missing=
[ $apt = 0 ] || for p in $APT; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
        grep -q 'install ok installed' || missing="$missing $p"
done
if [ -n "$missing" ] && [ "$(id -u)" != 0 ]; then
    echo "setup.sh: missing Debian packages:$missing" >&2
    echo "An administrator runs this once, as root (or with sudo); then" \
         "run make again:" >&2
    echo "  apt-get update && apt-get install -y" \
         "--no-install-recommends$missing" >&2
    exit 1
fi
if [ -n "$missing" ]; then
    echo "setup.sh: installing Debian packages:$missing" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq || exit 2
    # --no-install-recommends: noweb recommends a whole TeX installation.
    apt-get install -y -qq --no-install-recommends $missing >/dev/null ||
        exit 2
fi
# Root in another user's checkout (make setup where a student works): the
# Debian packages only; build/ is left to the owner, whose make makes it.
if [ $soft = 0 ] && [ "$(id -u)" = 0 ] && [ "$(stat -c %u .)" != 0 ]; then
    echo "setup.sh: the Debian packages are installed; $VENV is left to" \
         "this folder's owner: their make sets it up" >&2; exit 0
fi
due() {   # due: the venv or litkit's install is missing or stale
    ! grep -qs '^include-system-site-packages = true' "$VENV/pyvenv.cfg" ||
    stale
}
# One set-up at a time in this folder (a build on save beside a terminal's).
if due && command -v flock >/dev/null 2>&1; then
    mkdir -p "$(dirname "$VENV")"
    exec 9> "$VENV.lock"
    flock 9
fi
# The venv: made again when it lacks the system's site packages.
if ! grep -qs '^include-system-site-packages = true' "$VENV/pyvenv.cfg"
then
    # made beside it and renamed: an interrupted set-up leaves no half venv
    rm -rf "$VENV" "$STAMP" "$VENV.new"
    if ! "$PYTHON" -m venv --system-site-packages "$VENV.new" >&2; then
        rm -rf "$VENV.new"
        echo "setup.sh: $PYTHON -m venv failed (Debian: python3-venv)" >&2
        exit 2
    fi
    mv "$VENV.new" "$VENV"
fi
# litkit, from its source, when it differs from the last install:
# a wheel built from a copy (the source gets no build/ or egg-info) by
# $PYTHON's setuptools (a venv's own cannot build where its path holds a $),
# then installed, offline.
if stale; then
    t=$(mktemp -d "${TMPDIR:-/tmp}/litkit.XXXXXX")
    trap 'rm -rf "$t"' EXIT
    digest > "$t/stamp"
    cp -R "$SRC" "$t/src" && rm -rf "$t/src/build" "$t/src"/*.egg-info
    if ! (cd "$t/src" && "$PYTHON" -E -s -c 'import sys
import setuptools.build_meta as m
m.build_wheel(sys.argv[1])' "$t/dist" > "$t/log" 2>&1); then
        cat "$t/log" >&2
        echo "setup.sh: could not build litkit from $SRC with $PYTHON's" \
             "setuptools (Debian: python3-setuptools, python3-wheel; its" \
             "message above)" >&2
        exit 2
    fi
    if ! env -u PIP_CONFIG_FILE "$VENV/bin/python" -m pip install \
            --isolated --no-index --no-deps --force-reinstall -q \
            --disable-pip-version-check "$t/dist"/litkit-*.whl >&2; then
        echo "setup.sh: could not install litkit from $SRC into $VENV" \
             "(pip's message above)" >&2
        exit 2
    fi
    mv -f "$t/stamp" "$lit"
    echo "setup.sh: installed litkit from $SRC into $VENV" >&2
fi
[ $pip = 1 ] || exit 0
if [ -n "$PIP" ] && ! sh -c "${LIT_PIP_UNLESS:-false}" >/dev/null 2>&1; then
    echo "setup.sh: installing $PIP into $VENV" >&2
    # Where packages come from is the user's (as options: --isolated drops
    # every PIP_* variable and the user's pip.conf, env -u the one named by
    # PIP_CONFIG_FILE, which --isolated still reads; /etc/pip.conf stays).
    set --
    for v in INDEX_URL:--index-url EXTRA_INDEX_URL:--extra-index-url \
             FIND_LINKS:--find-links TRUSTED_HOST:--trusted-host \
             CERT:--cert PROXY:--proxy; do
        val=$(eval "printf %s \"\${PIP_${v%%:*}:-}\"")
        [ -z "$val" ] || set -- "$@" "${v#*:}" "$val"
    done
    case ${PIP_NO_INDEX:-} in ''|0|false|no|off) ;; *) set -- "$@" --no-index;;
    esac
    if ! env -u PIP_CONFIG_FILE "$VENV/bin/python" -m pip install \
            --isolated -q --disable-pip-version-check "$@" $PIP; then
        echo "setup.sh: could not install $PIP into $VENV (pip's message" \
             "above); make tries again next time" >&2
        [ $soft = 1 ] && exit 0
        exit 2
    fi
    echo "setup.sh: installed $PIP into $VENV" >&2
fi
touch "$STAMP"
