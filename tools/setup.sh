#!/bin/sh
# tools/setup.sh [--if-root] [--no-pip]: installs the Debian packages this
# module needs
# (as root; else prints the one command an administrator runs, exit 1) and,
# when the toolkit lacks them, NVIDIA's cuobjdump and nvdisasm into
# build/venv (never the system Python; pip runs --isolated, so PIP_USER,
# PIP_TARGET and the like cannot send them elsewhere; where the packages come
# from, PIP_INDEX_URL, PIP_NO_INDEX, ..., is still taken). Writes the stamp
# build/.deps-ok only when every step succeeded, so a later make tries again.
# The Makefile runs it (--if-root) while it reads itself, before any goal.
# DAY74_NO_SETUP=1 (a GPU node without a registry) skips it.
# Exit: 0 done; 1 packages missing (not root); 2 an install failed.
# --if-root: a failed pip install is reported, and exits 0 (without the
# stamp): only the SASS checks need cuobjdump, and make check skips them.
# --no-pip: the Debian packages only (what goals that never run cuobjdump
# need; no stamp).
set -eu
soft=0 pip=1
for a in "$@"; do
    case $a in --if-root) soft=1 ;; --no-pip) pip=0 ;;
    *) echo "usage: tools/setup.sh [--if-root] [--no-pip]" >&2; exit 2 ;;
    esac
done
STAMP=build/.deps-ok
if [ -n "${DAY74_NO_SETUP:-}" ]; then
    echo "setup.sh: DAY74_NO_SETUP is set; not checking packages" >&2
    exit 0
fi
APT="noweb pandoc python3-matplotlib chromium chromium-driver python3-selenium
     python3-pygments python3-pytest python3-venv tidy libcmocka-dev
     pkg-config make gcc clang-format-14"
PIP="nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm"
PYTHON=${PYTHON:-/usr/bin/python3}
VENV=build/venv

missing=
for p in $APT; do
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
[ $pip = 1 ] || exit 0
# cuobjdump: the toolkit's own first; otherwise the virtual environment.
if ! CUDA_HOME=${CUDA_HOME:-/usr/local/cuda} tools/compile/find-tool.sh \
        cuobjdump >/dev/null; then
    echo "setup.sh: the CUDA toolkit has no cuobjdump; installing $PIP" \
         "into $VENV" >&2
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
    if ! { [ -x "$VENV/bin/pip" ] || "$PYTHON" -m venv "$VENV"; } ||
       ! env -u PIP_CONFIG_FILE "$VENV/bin/pip" install --isolated -q \
            --disable-pip-version-check \
            "$@" $PIP; then
        echo "setup.sh: could not install $PIP into $VENV (pip's message" \
             "above): the SASS checks (make sm80-check, compile-test) need" \
             "cuobjdump and nvdisasm; make tries again next time" >&2
        [ $soft = 1 ] && exit 0
        exit 2
    fi
    echo "setup.sh: installed $PIP into $VENV" >&2
fi
mkdir -p build && touch "$STAMP"
