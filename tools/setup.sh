#!/bin/sh
# tools/setup.sh [--if-root]
#
# Installs what this module needs beyond the CUDA toolkit: Debian packages
# through apt-get (as root), and cuobjdump with the nvdisasm it calls (which
# some toolkit installs lack) from NVIDIA's Python packages into the
# project's own virtual environment build/venv, never into the system
# Python. Installed packages are skipped, so a second run does nothing.
#
# Not root and Debian packages missing: prints the apt-get command, exits 1;
# with --if-root the same, but exit 0 silently when nothing is missing.
# DAY74_NO_SETUP=1 skips all of it (a machine with no package registry,
# such as a GPU node, where the tools are already there).
# Exit: 0 all present (or installed); 1 something missing; 2 install failed.
set -eu
if [ -n "${DAY74_NO_SETUP:-}" ]; then
    echo "setup.sh: DAY74_NO_SETUP is set; not checking packages" >&2
    exit 0
fi
APT="noweb pandoc gnuplot-nox chromium chromium-driver python3-selenium
     python3-pygments python3-pytest python3-venv tidy libcmocka-dev
     pkg-config make gcc"
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
    exit 1
fi
if [ -n "$missing" ]; then
    echo "setup.sh: installing Debian packages:$missing"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq || exit 2
    # --no-install-recommends: noweb recommends a whole TeX installation.
    apt-get install -y -qq --no-install-recommends $missing >/dev/null ||
        exit 2
fi
# cuobjdump: the toolkit's own first; otherwise the virtual environment.
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda} tools/compile/find-tool.sh \
    cuobjdump >/dev/null && exit 0
[ -x "$VENV/bin/pip" ] || "$PYTHON" -m venv "$VENV" || exit 2
echo "setup.sh: installing $PIP into $VENV"
"$VENV/bin/pip" install -q --disable-pip-version-check $PIP || exit 2
