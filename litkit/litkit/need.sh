#!/bin/sh
# need.sh (litkit) COMMAND PACKAGE [apt|pip|cuda] | (COMMAND PACKAGE HOW)...:
# exit 0 when each COMMAND is on PATH (or an executable path); else name the
# package that gives it and the command that installs it, and exit 1.
set -eu
if [ $# -gt 3 ]; then
    rc=0; while [ $# -ge 3 ]; do "$0" "$1" "$2" "$3" || rc=1; shift 3; done
    exit $rc
fi
cmd=$1 pkg=$2 how=${3:-apt}
if command -v "$cmd" >/dev/null 2>&1 || [ -x "$cmd" ]; then exit 0; fi
echo "missing tool: $cmd" >&2
case $how in
pip) echo "  it comes from the Python package $pkg, which make setup" \
          "installs into build/venv: build/venv/bin/pip install $pkg" >&2 ;;
cuda) echo "  it comes with the CUDA toolkit ($pkg): Debian package" \
           "nvidia-cuda-toolkit (non-free):" >&2
   echo "    apt-get install --no-install-recommends nvidia-cuda-toolkit" >&2
   echo "  or cuda-toolkit from NVIDIA's CUDA apt repository: apt-get" \
        "install cuda-toolkit" >&2
   echo "  (installed elsewhere? give its path: make NVCC=/path/to/nvcc)" >&2 ;;
*) echo "  it comes from the Debian package $pkg: apt-get install" \
        "--no-install-recommends $pkg" >&2
   echo "  (or run 'make setup' as root to install everything this module" \
        "needs)" >&2 ;;
esac
exit 1
