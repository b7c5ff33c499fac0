#!/bin/bash
# Builds the experiment's binaries into .exp/bin from .exp/src (variants.py)
# and the objects of make build (ARCH=sm_80 and sm_90, STAGES=2).
set -eu
L="-L/usr/local/cuda/lib64 -Wl,-rpath,/usr/local/cuda/lib64 -lcublas -lcudart_static -ldl -lrt -lpthread -lstdc++ -lm"
NV="nvcc -O3 -lineinfo -std=c++17 -DSTAGES=2 -Ibuild"
o80=build/sm_80-2stages o90=build/sm_90-2stages
b() { # b NAME ARCH: .exp/src/NAME.cu as the piped file (pg_*) or wide file
    local n=$1 a=$2 o=.exp/obj/$1.o d=build/$2-2stages
    $NV -arch=$a -Xptxas -v -c .exp/src/$n.cu -o $o > .exp/obj/$n.ptxas 2>&1
    case $n in
    pg_*) cc -std=c11 -fopenmp -o .exp/bin/$n $o $d/main.o build/host/harness.o $d/wide_gemm.o $d/blocked_gemm.o $L ;;
    wide*) cc -std=c11 -fopenmp -o .exp/bin/$n $d/pipelined_gemm.o $d/main.o build/host/harness.o $o $d/blocked_gemm.o $L ;;
    esac
}
mkdir -p .exp/obj .exp/bin
b pg_seed sm_80 & b pg_seed_lct sm_80 & wait
nvcc -std=c++17 -O3 -arch=sm_80 -lineinfo -o .exp/bin/seed .seed/pipelined_gemm.cu 2>/dev/null &
nvcc -std=c++17 -O3 -arch=sm_80 -lineinfo -o .exp/bin/seed_rand .exp/src/seed_rand.cu 2>/dev/null &
wait
for w in .exp/src/wide*.cu; do n=$(basename $w .cu); b $n sm_90 &
  [ $(jobs -r | wc -l) -ge 2 ] && wait -n; done; wait
ls -la .exp/bin
