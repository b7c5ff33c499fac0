# GFLOP/s against N: the lesson's pair, the register-blocked pair and
# cuBLAS, from gflops.values.tsv (tools/plots/plot.py writes it: a header
# line, then N and five rates in GFLOP/s, "?" where a kernel did not run).
# gnuplot -e "in='gflops.values.tsv'; out='OUT.svg'; gpu='NVIDIA H200';
#             narrow=0" tools/plots/gflops.gp
# narrow=1 draws the phone version: 360 units wide with 13-unit text, so on
# a 375 px phone the text is 12.4 px in the 343 px column; the wide version
# (720 units, 13-unit text) is shown from a 672 px viewport up.
if (!exists("narrow")) narrow = 0
if (narrow) {
    set terminal svg size 360,500 dynamic font "sans,13" background "white"
    set key below vertical Left reverse nobox maxrows 5 width -2 height 1.2
    set xlabel "matrix size N"
    set ylabel "TFLOP/s (median)"
    set title sprintf("FP32 GEMM, %s", gpu)
    set lmargin 8
    set rmargin 2
} else {
    set terminal svg size 720,440 dynamic font "sans,13" background "white"
    set key inside right bottom vertical Left reverse nobox width -4 \
        opaque samplen 3
    set xlabel "matrix size N (N × N × N product)"
    set ylabel "TFLOP/s (median of the timed launches)"
    set title sprintf("FP32 GEMM on %s, -arch=sm_80 build", gpu)
}
load "tools/plots/common.gp"
set datafile missing "?"
set logscale x 2
set xtics ("512" 512, "1024" 1024, "2048" 2048, "4096" 4096, "8192" 8192)
set xrange [400:10000]
set yrange [0:*]
set style data linespoints
array colour[5] = ["#555555", "#1b6ac9", "#7a4fb0", "#1d8a5a", "#d9541e"]
array point[5] = [9, 7, 5, 13, 11]
array label[5] = ["cuBLAS SGEMM (FP32, pedantic)", "matmulBlockedPiped", \
                  "matmulBlockedSync", "matmulTilePiped", "matmulTileSync"]
# columns 6 (cuBLAS) down to 2 (matmulTileSync)
plot for [i=1:5] in every ::1 using 1:(column(7 - i)/1000) lw 2 pt point[i] \
       ps 1.1 lc rgb colour[i] title label[i]
