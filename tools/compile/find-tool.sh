#!/bin/sh
# tools/compile/find-tool.sh NAME: the path of CUDA tool NAME (cuobjdump,
# nvdisasm) from $CUDA_HOME/bin, PATH, or NVIDIA's Python packages in
# build/venv (tools/setup.sh) or $PYTHON; else the bare NAME, for need.sh
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
    command -v "$py" >/dev/null 2>&1 || continue
    dirs=$("$py" -c 'import site, sysconfig
p = sysconfig.get_paths()
for d in {p["purelib"], p["platlib"], site.getusersitepackages()}:
    print(d)' 2>/dev/null) || continue
    # One folder a line: a folder's name may hold spaces.
    found=$(printf '%s\n' "$dirs" | while IFS= read -r d; do
        for cand in "$d"/nvidia/cu*/bin/"$name"; do
            [ -x "$cand" ] && { echo "$cand"; break; }
        done
    done | head -n 1)
    [ -n "$found" ] && { echo "$found"; exit 0; }
done
echo "$name"
exit 1
