# GFLOP/s against N for the two kernels and cuBLAS, from a pipelined_gemm CSV.
# gnuplot -e "in='RUN.csv'; out='OUT.svg'; gpu='NVIDIA H200'" gflops.gp
# The CSV's '#' provenance lines are comments to gnuplot; its header row
# names the columns used below.
set terminal svg size 720,420 dynamic font "sans,13" background "white"
set output out
set datafile separator ","
set key bottom right box opaque
set termoption noenhanced
set logscale x 2
set xtics ("512" 512, "1024" 1024, "2048" 2048, "4096" 4096)
set xrange [400:5200]
set yrange [0:*]
set grid ytics lc rgb "#dddddd"
set xlabel "matrix size N (N × N × N product)"
set ylabel "GFLOP/s (median of the timed launches)"
set title sprintf("FP32 GEMM on %s, -arch=sm_80 build", gpu)
set format y "%.0f"
set style data linespoints
plot in using (column("n")):(column("cublas_gflops")) lw 2 pt 9 ps 1.2 \
       lc rgb "#555555" title "cuBLAS SGEMM (FP32, no TF32)", \
     in using (column("n")):(column("piped_gflops")) lw 2 pt 7 ps 1.2 \
       lc rgb "#1b6ac9" title "matmulTilePiped (cp.async, 2 stages)", \
     in using (column("n")):(column("sync_gflops")) lw 2 pt 5 ps 1.2 \
       lc rgb "#d9541e" title "matmulTileSync (through registers)"
