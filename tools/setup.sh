#!/bin/sh
# tools/setup.sh [--if-root]: installs the Debian packages this module needs
# (as root; else prints the apt-get command, exit 1) and, when the toolkit
# lacks them, NVIDIA's cuobjdump and nvdisasm into build/venv (never the
# system Python). A second run does nothing; DAY74_NO_SETUP=1 (a GPU node
# without a registry) skips it. Exit: 0; 1 missing; 2 install failed.
# --if-root (what make runs) reports what it cannot install and exits 0.
set -eu
soft=0; [ "${1:-}" = "--if-root" ] && soft=1
fail() {   # fail CODE: exit CODE, or 0 after a note with --if-root
    [ $soft = 1 ] || exit "$1"
    echo "  (make goes on; each step that needs it stops, naming it)" >&2
    exit 0
}
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
    echo "Missing packages. Run this as root (or with sudo), then 'make'" \
         "again:" >&2
    echo "  apt-get update && apt-get install -y" \
         "--no-install-recommends$missing" >&2
    [ $soft = 1 ] || exit 1
    echo "  (make goes on; each step that needs one stops, naming it)" >&2
    missing=
fi
if [ -n "$missing" ]; then
    echo "setup.sh: installing Debian packages:$missing"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq || fail 2
    # --no-install-recommends: noweb recommends a whole TeX installation.
    apt-get install -y -qq --no-install-recommends $missing >/dev/null ||
        fail 2
fi
# cuobjdump: the toolkit's own first; otherwise the virtual environment.
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda} tools/compile/find-tool.sh \
    cuobjdump >/dev/null && exit 0
echo "setup.sh: the CUDA toolkit has no cuobjdump; installing $PIP into $VENV"
{ [ -x "$VENV/bin/pip" ] || "$PYTHON" -m venv "$VENV"; } &&
    "$VENV/bin/pip" install -q --disable-pip-version-check $PIP || {
    echo "setup.sh: could not install $PIP into $VENV: the SASS checks" \
         "(make sm80-check, compile-test) need cuobjdump and nvdisasm" >&2
    fail 2; } && echo "setup.sh: installed $PIP into $VENV"
