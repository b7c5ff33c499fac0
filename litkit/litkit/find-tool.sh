#!/bin/sh
# find-tool.sh (litkit) NAME: the path of CUDA tool NAME (cuobjdump,
# nvdisasm) from $CUDA_HOME/bin, PATH, or NVIDIA's Python packages in
# build/venv (litkit/setup.sh) or $PYTHON; else the bare NAME, for need.sh
# to name. Exit: 0 found, 1 not found, 2 usage.
set -u
[ $# -eq 1 ] || { echo "usage: find-tool.sh NAME" >&2; exit 2; }
name=$1
if [ -n "${CUDA_HOME:-}" ] && [ -x "$CUDA_HOME/bin/$name" ]; then
    echo "$CUDA_HOME/bin/$name"; exit 0
fi
if p=$(command -v "$name" 2>/dev/null) && [ -n "$p" ]; then
    echo "$p"; exit 0
fi
for py in build/venv/bin/python3 "${PYTHON:-/usr/bin/python3}" python3; do
    found=$("$py" -c 'import glob, os, site, sys, sysconfig
p = sysconfig.get_paths()
for d in {p["purelib"], p["platlib"], site.getusersitepackages()}:
    for c in sorted(glob.glob(glob.escape(d + "/nvidia/") + "cu*/bin/"
                              + glob.escape(sys.argv[1]))):
        if os.access(c, os.X_OK):
            print(c)
            sys.exit()' "$name" 2>/dev/null)
    [ -n "$found" ] && { echo "$found"; exit 0; }
done
echo "$name"
exit 1
